#!/bin/bash
# sysprof_memory.sh - the sysprof reader's memory does not grow with the
# capture: a valid 114 MiB capture of 3 million 40-byte SAMPLE frames
# (tests/tools/syscap_big.py: two CPUs' buffers in turns, so not in time
# order, one thread each) converts and reports with a peak RSS of at most
# 100 MiB, with -j1, -j2 (a reader each) and the default -j, every sample
# counted, and nothing left in TMPDIR.  (Indexing and sorting every frame
# took 265 MB here, 490 MB with -j2; the reorder window takes 17 and 32.)
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null 2>&1 || skip_all "python3 is not installed"
[ -x /usr/bin/time ] || skip_all "/usr/bin/time is not installed"

n=3000000
limit_kb=$((100 * 1024))
cap=$T/big.syscap
python3 "$TOP/tests/tools/syscap_big.py" "$cap" $n ||
	skip_all "cannot write the capture"
mkdir -p "$T/tmp"

# peak NAME ARGS...: restack ARGS succeeds within the limit.
peak() {
	local name=$1 kb
	shift
	if ! TMPDIR=$T/tmp /usr/bin/time -f %M -o "$T/rss" "$RESTACK" "$@" \
		>"$T/out" 2>"$T/err"; then
		fail "$name: restack $*" "$(tail -n 3 "$T/err")"
		return
	fi
	kb=$(tail -n 1 "$T/rss")
	check "$name: peak RSS $kb KiB <= $limit_kb KiB" \
		test "$kb" -le "$limit_kb"
}

total() {
	awk '{ s += $NF } END { print s + 0 }' "$1"
}

peak "convert -j1" convert -q -j1 "$cap" -o "$T/j1.folded"
is "$(total "$T/j1.folded")" $n "convert -j1: every sample counted"
peak "convert" convert -q "$cap" -o "$T/j.folded"
same_file "$T/j1.folded" "$T/j.folded" "convert: the same as -j1"
peak "convert -j2" convert -q -j2 "$cap" -o "$T/j2.folded"
same_file "$T/j1.folded" "$T/j2.folded" "convert -j2: the same as -j1"
peak "stats" stats "$cap"
is "$(awk '/^  samples/ { print $2 }' "$T/out")" $n "stats: every sample"
is "$(ls -A "$T/tmp")" "" "nothing left in TMPDIR"

done_testing
