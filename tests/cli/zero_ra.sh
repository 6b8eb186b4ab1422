#!/bin/bash
# zero_ra.sh - a return address read as 0 ends a walk as the thread's
# root only in the thread's first function; anywhere else it is a word
# read where no return address was, and the stack ends
# "[truncated: bad return address]", never a silent, complete-looking
# root.  A capture of deep.c (recursion at random depths, every stack
# whole in a 64 KiB copy) is rewritten by tests/tools/zero_word.py with
# one return address zeroed in every sample's copy, three ways: into
# main (from rec), into rec (the recursion) and into libc (from main).
# Each sample must come out as its stack in the untouched capture, cut
# just below the frame the zeroed address returned into, marked.
. "$(dirname "$0")/lib.sh"

need_perf
cc=$(command -v cc || command -v gcc) || skip_all "no C compiler"
"$cc" -O2 -g -fomit-frame-pointer -o "$T/deep" "$TESTDATA/src/deep.c" ||
	skip_all "cannot build deep"
record -e cpu-clock -F 4000 --call-graph dwarf,65528 -o "$T/deep.data" \
	-- "$T/deep" 5000 >/dev/null || skip_all "perf record failed"
restack_clean convert --stitch=off --to script "$T/deep.data" \
	-o "$T/deep.script" || fail "restack converts the capture"
restack_clean stats --stitch=off "$T/deep.data" >"$T/deep.stats"
n=$(awk '$1 == "samples" { print $2 }' "$T/deep.stats")
r=$(awk '$1 == "reached" && $2 == "root" { print $3 }' "$T/deep.stats")
# perf copies no stack now and then (seen once in ten loaded runs)
nc=$(awk '$1 == "stack" && $2 == "not" && $3 == "copied" { print $4 }' \
	"$T/deep.stats")
check "untouched: every stack whole but those perf copied none of ($r of $n samples reach the root, ${nc:-0} without a stack)" \
	test "${n:-0}" -gt 100 -a "$((r + ${nc:-0}))" = "$n" -a "${nc:-0}" -le 3

# the return address (script: a caller frame's address) most samples
# have into function $1 from function $2
ra_into() {
	awk -v to="$1" -v from="$2" '
	!/^\t/ { prev = ""; next }
	{ if (prev == from && $2 == to && $NF != "sample") n[$1]++
	  prev = $2 }
	END { for (a in n) if (n[a] > best) { best = n[a]; ra = a }
	      print ra }' "$T/deep.script"
}

for into in "main rec" "rec rec" "__libc_start_call_main main"; do
	set -- $into
	ra=$(ra_into "$1" "$2")
	if [ -z "$ra" ]; then
		fail "a return address into $1 from $2"
		continue
	fi
	python3 "$TOP/tests/tools/zero_word.py" "$T/deep.data" \
		"$T/z.data" "$ra" 2>"$T/z.err" ||
		{ fail "zero_word.py" "$(cat "$T/z.err")"; continue; }
	restack_clean convert --to script "$T/z.data" -o "$T/z.script" ||
		{ fail "restack converts the rewritten capture"; continue; }
	restack_clean stats "$T/z.data" >"$T/z.stats"
	check "$1 <- $2 ($ra zeroed): each stack is the untouched one cut below $1, marked" \
		python3 - "$T/deep.script" "$T/z.script" "$ra" "$T/z.stats" <<'PY'
import sys


def samples(path):
    out, cur = {}, None
    for line in open(path):
        if not line.strip():
            continue
        if not line.startswith("\t"):
            cur = out.setdefault(line.split(":")[0] + line.split()[2], [])
            continue
        f = line.split()
        cur.append((f[0], f[1]))
    return out


full, cut, ra = samples(sys.argv[1]), samples(sys.argv[2]), sys.argv[3]
marker = ("[truncated:", "bad")
assert full.keys() == cut.keys(), "the samples differ"
hit = rooted = 0
for key, frames in full.items():
    if frames[-1][1] == "[truncated:":
        # not whole untouched (perf copied no stack): nothing to zero
        assert cut[key] == frames, (key, frames[-3:], cut[key][-3:])
        continue
    # return addresses are the caller frames' (the leaf is the sampled
    # ip, which can be the instruction after a call: not zeroed)
    addrs = [a for a, _ in frames[1:]]
    want = frames
    if ra in addrs:
        want = frames[:1 + addrs.index(ra)]
        hit += 1
    else:
        rooted += 1
    got = cut[key]
    if ra in addrs:
        assert got[-1][1] == "[truncated:" and got[:-1] == want, \
            (key, want[-3:], got[-4:])
    else:
        assert got == want, (key, want[-3:], got[-3:])
stats = {}
for line in open(sys.argv[4]):
    f = line.split()
    if f[:2] == ["reached", "root"]:
        stats["root"] = int(f[2])
    if f[:3] == ["bad", "return", "address"]:
        stats["bad"] = int(f[3])
print("%d samples cut and marked, %d untouched; stats %s" % (hit, rooted, stats))
assert hit > 50
assert stats.get("root") == rooted and stats.get("bad") == hit, stats
PY
done
done_testing
