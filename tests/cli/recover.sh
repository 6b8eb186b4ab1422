#!/bin/bash
# recover.sh - frames where no CFI covers the code: the PLT rule for stubs
# the linker left without CFI, and the bounded stack scan through a
# hand-written frame that has neither CFI nor a frame pointer
# (testdata/src/nocfi.c and nocfi.S).  perf script's figure is printed
# beside restack's.
. "$(dirname "$0")/lib.sh"

need_perf
cc=$(command -v cc || command -v gcc) || skip_all "no C compiler"
command -v readelf >/dev/null || skip_all "readelf is needed"
home=$T/home

"$cc" -O2 -g -fomit-frame-pointer -fno-builtin \
	-Wl,--no-ld-generated-unwind-info -o "$T/nocfi" \
	"$TESTDATA/src/nocfi.c" "$TESTDATA/src/nocfi.S" ||
	skip_all "cannot build nocfi"

# The premise: no FDE covers .plt or nocfi_frame.
plt=$(readelf -SW "$T/nocfi" | awk '$2 == ".plt" { print $4 }')
frame=$(nm "$T/nocfi" | awk '$3 == "nocfi_frame" { print $1 }')
check "the binary has no CFI for .plt and nocfi_frame" \
	awk -v a="$plt" -v b="$frame" '
	function hex(s,  i, v, c) {
		v = 0; s = tolower(s); sub(/^0x/, "", s)
		for (i = 1; i <= length(s); i++) {
			c = index("0123456789abcdef", substr(s, i, 1)) - 1
			v = v * 16 + c
		}
		return v
	}
	BEGIN { pa = hex(a); pb = hex(b); if (!pa || !pb) exit 1 }
	/ FDE / { split($NF, r, /[=.]+/); lo = hex(r[2]); hi = hex(r[3])
		  if ((pa >= lo && pa < hi) || (pb >= lo && pb < hi)) bad = 1 }
	END { exit bad }' <(readelf --debug-dump=frames "$T/nocfi")

record -e cpu-clock -F 4000 --call-graph dwarf -o "$T/nocfi.data" \
	-- "$T/nocfi" 1000 >/dev/null || skip_all "perf record failed"

restack_clean convert --annotate "$T/nocfi.data" -o "$T/all.folded"
restack_clean convert --annotate --max-scan 0 "$T/nocfi.data" \
	-o "$T/noscan.folded"
perf_clean script -i "$T/nocfi.data" >"$T/perf.script" 2>/dev/null
python3 "$TOP/tests/tools/collapse.py" "$T/perf.script" >"$T/perf.folded"

# The scan: main found above the decoys, the stack complete.
read -r good total < <(share "$T/all.folded" ';nocfi_frame;spin_leaf' \
	'^nocfi;_start;__libc_start_main_impl_\[i\];__libc_start_call_main;main_\[scan\];nocfi_frame;spin_leaf')
check "samples under nocfi_frame reach main by a scan ($good of $total)" \
	test "$total" -gt 100 -a $((good * 1000)) -ge $((total * 995))
read -r good total < <(share "$T/noscan.folded" ';nocfi_frame;spin_leaf' \
	'^nocfi;\[truncated: no CFI\];nocfi_frame;spin_leaf')
check "with --max-scan 0 they end marked 'no CFI' ($good of $total)" \
	test "$total" -gt 100 -a "$good" -eq "$total"
read -r good total < <(share "$T/perf.folded" ';nocfi_frame;spin_leaf' \
	';main;nocfi_frame;spin_leaf')
echo "# perf script reaches main in $good of $total samples under nocfi_frame"
check "no decoy address became a frame" \
	awk '/nocfi_frame;nocfi_frame|spin_leaf;nocfi_frame/ { bad = 1 }
	     END { exit bad }' "$T/all.folded"

# The PLT rule: samples in labs@plt continue in plt_loop to the root,
# without a scan (--max-scan 0) and without frame pointers.  The entry is
# named as perf names it: "_init" when perf's symbol tree finds the
# zero-size _init, extended over .plt, first (unwind/symtree.h).
restack_clean convert --annotate --max-scan 0 --no-fp "$T/nocfi.data" \
	-o "$T/stub.folded"
entry=$(objdump -d -j .plt "$T/nocfi" |
	awk '/<labs@plt>:$/ { print $1; exit }')
name=$("$RESTACK" symbolize "$T/nocfi" "${entry:-0}" | cut -f2)
echo "# labs's PLT entry at ${entry:-?} is named '$name'"
read -r good total < <(share "$T/stub.folded" ";$name\$|;$name [0-9]" \
	"^nocfi;_start;.*;main;plt_loop_\\[stub\\];$name")
# (those that do not are marked: perf now and then copies no stack, seen
# once in a rehearsal, and such a sample ends "[truncated: no CFI]" there)
read -r marked _ < <(share "$T/stub.folded" \
	"\\[truncated: [^]]*\\];$name\$|\\[truncated: [^]]*\\];$name [0-9]" '')
check "samples in a PLT entry without CFI reach the root ($good of $total, $marked marked)" \
	test "$total" -gt 50 -a $((good + marked)) -eq "$total" -a \
	"$marked" -le 3

# The statistics name both recoveries.
restack_clean stats "$T/nocfi.data" >"$T/stats"
check "stats count scanned and stub frames" \
	awk '$1 == "scan" && $2 > 0 { s = 1 } $1 == "stub" && $2 > 0 { p = 1 }
	     END { exit !(s && p) }' "$T/stats"

done_testing
