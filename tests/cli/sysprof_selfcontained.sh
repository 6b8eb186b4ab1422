#!/bin/bash
# sysprof_selfcontained.sh - a sysprof capture restack writes names its
# frames on another machine: perf.data -> sysprof -> folded, converted
# without the binaries (deleted), without a build-id cache (another
# HOME), --offline, equals perf.data -> folded, kernel frames included.
# The kernel symbols given to the first conversion are renamed ("k_"
# prefix), so the names that come back can only come from the capture's
# /proc/kallsyms chunk, not from this machine's /proc/kallsyms, which
# restack would otherwise read for a capture of this host and kernel.
# libsysprof-capture reads both embedded files, the __symbols__ file
# names every user address as sysprof 3.46's symbol map looks it up, and
# libsysprof-4 names the frames as restack does.
. "$(dirname "$0")/lib.sh"

need_perf
cc=$(command -v cc || command -v gcc) || skip_all "no C compiler"
validate=$BUILD/tests/syscap_validate
awk '$1 != "0000000000000000" { ok = 1; exit } END { exit !ok }' \
	/proc/kallsyms 2>/dev/null ||
	skip_all "/proc/kallsyms shows no addresses here"

# No -g: no line tables, so no inline frames (__symbols__ names one
# function per address; see docs/formats.md).
mkdir -p "$T/bin" "$T/other" "$T/tmp"
"$cc" -O2 -fomit-frame-pointer -fPIC -shared -o "$T/bin/libwork.so" \
	"$TESTDATA/src/libwork.c" -lm || skip_all "cannot build libwork.so"
"$cc" -O2 -fomit-frame-pointer -o "$T/bin/readzero" \
	"$TESTDATA/src/readzero.c" -L"$T/bin" -lwork -Wl,-rpath,"$T/bin" ||
	skip_all "cannot build readzero"

d=$T/sc.data
if ! record -e cpu-clock -F 2000 --call-graph dwarf -o "$d" -- \
	"$T/bin/readzero" 150 >/dev/null; then
	fail "perf record"
	done_testing
fi
sed 's/^\([0-9a-f]* . \)/\1k_/' /proc/kallsyms >"$T/ksyms"

restack_clean convert "$d" --kallsyms "$T/ksyms" -o "$T/direct.folded"
restack_clean convert "$d" --kallsyms "$T/ksyms" --to script -o "$T/s.script"
# user frames restack cannot name either
unknown=$(awk '/^\t/ && $NF != "kernel" && $2 == "[unknown]"' "$T/s.script" |
	wc -l)
if ! restack_clean convert "$d" --kallsyms "$T/ksyms" -o "$T/out.syscap" \
	2>"$T/conv.err"; then
	fail "convert to .syscap" "$(cat "$T/conv.err")"
	done_testing
fi
check "the capture has kernel frames (named k_*)" \
	grep -q ';k_ksys_read' "$T/direct.folded"
check "the capture has user frames of the binaries (spin, lib_work)" \
	bash -c "grep -q ';spin' '$T/direct.folded' &&
		 grep -q ';lib_work' '$T/direct.folded'"

# Another machine: no binaries, no build-id cache, no debuginfod.
rm -rf "$T/bin"
if env -i PATH=/usr/bin:/bin HOME="$T/other" TMPDIR="$T/tmp" \
	"$RESTACK" convert --offline "$T/out.syscap" -o "$T/rt.folded" \
	2>"$T/rt.err"; then
	sort "$T/direct.folded" >"$T/direct.sorted"
	sort "$T/rt.folded" >"$T/rt.sorted"
	same_file "$T/direct.sorted" "$T/rt.sorted" \
		"perf.data -> sysprof -> folded on another machine equals perf.data -> folded"
	is "$(ls -A "$T/tmp")" "" "the kernel symbols' temporary copy is removed"
else
	fail "sysprof -> folded" "$(cat "$T/rt.err")"
fi
env -i PATH=/usr/bin:/bin HOME="$T/other" "$RESTACK" convert --offline \
	--kallsyms /dev/null "$T/out.syscap" -o "$T/kopt.folded" 2>/dev/null
check "--kallsyms still wins over the capture's symbols" \
	bash -c "! grep -q ';k_ksys_read' '$T/kopt.folded'"

if [ -x "$validate" ]; then
	check "libsysprof-capture reads every frame" "$validate" "$T/out.syscap"
	"$validate" "$T/out.syscap" /proc/kallsyms >"$T/emb.ksyms"
	check "libsysprof-capture finds /proc/kallsyms: lines of the kernel symbols given" \
		bash -c "test -s '$T/emb.ksyms' &&
			 ! grep -vxFf '$T/ksyms' '$T/emb.ksyms'"
	check "... with the kernel frames' symbols" \
		grep -q ' k_ksys_read$' "$T/emb.ksyms"
	"$validate" "$T/out.syscap" __symbols__ >"$T/emb.syms"
	"$validate" "$T/out.syscap" >"$T/val.txt"
	# sysprof 3.46's lookup (sysprof-symbol-map.c): bsearch by (pid,
	# begin) for begin <= addr <= end; records up to an all-zero one.
	python3 - "$T/emb.syms" "$T/val.txt" >"$T/lookup.txt" <<'PY'
import bisect, struct, sys
blob = open(sys.argv[1], 'rb').read()
recs = []
for off in range(0, len(blob) - 31, 32):
    b, e, pid, name, tag, _ = struct.unpack_from('<QQIIII', blob, off)
    if not (b or e or pid or name):
        break
    recs.append(((pid, b), e, blob[name:blob.index(b'\0', name)].decode()))
keys = [r[0] for r in recs]
assert keys == sorted(keys), 'records not sorted by (pid, begin)'
named = unnamed = 0
for line in open(sys.argv[2]):
    f = line.split()
    if f[0] != 'sample' or 'U' not in f:
        continue
    pid = int(f[1])
    for a in f[f.index('U') + 1:]:
        a = int(a, 16)
        i = bisect.bisect_right(keys, (pid, a)) - 1
        if i >= 0 and keys[i][0] == pid and a <= recs[i][1]:
            named += 1
        else:
            unnamed += 1
print(named, unnamed, len(recs))
PY
	read -r named unnamed nrec <"$T/lookup.txt"
	check "sysprof's lookup names user addresses from __symbols__ ($named named, $unnamed not, $nrec records; restack names all but $unknown)" \
		test "${named:-0}" -gt 100 -a "${unnamed:-1}" -le "$unknown"
else
	skip "libsysprof-capture checks" "no $validate (libsysprof-4-dev)"
fi

# sysprof 3.46 itself (libsysprof-4's capture symbol resolver) names the
# frames from __symbols__, kernel ones included, as restack does: sample
# for sample, each address with the function restack's script shows last
# for it (the one its inline frames were inlined into); an address
# outside every symbol is "[unknown]" in restack's script, "?" here.
names=$BUILD/tests/syscap_names
if [ -x "$names" ]; then
	"$names" "$T/out.syscap" | cut -d' ' -f2- | sort >"$T/sysprof.names"
	awk '
	function flush() { if (last != "") s = name (s == "" ? "" : " " s) }
	function out() { flush(); if (s != "") print s; s = ""; last = "" }
	/^[^\t]/ && NF { out(); next }
	/^\t/ && $NF != "marker" {
		if ($1 != last) flush()
		# an address neither can name: "?" in syscap_names
		last = $1; name = ($2 == "[unknown]" ? "?" : $2); next
	}
	END { out() }' "$T/s.script" | sort >"$T/restack.names"
	check "samples to compare ($(wc -l <"$T/restack.names"))" \
		test "$(wc -l <"$T/restack.names")" -gt 50
	same_file "$T/restack.names" "$T/sysprof.names" \
		"sysprof 3.46 names every frame as restack does, sample for sample"
else
	skip "sysprof 3.46 names" "no $names (libsysprof-4-dev)"
fi
done_testing
