#!/bin/bash
# sysprof_stream.sh - sysprof streams: raw user stacks (type 18), written
# into a FIFO or a pipe at a profiler's pace by
# tests/tools/sysprof_stream.py from a perf.data capture, are read as
# they come and have the stacks of converting the capture itself; a
# stream cut inside a frame ends with exit 2 naming the offset; a 1 GiB
# stream converts with a peak RSS of at most 100 MiB.
. "$(dirname "$0")/lib.sh"

need_perf
command -v python3 >/dev/null 2>&1 || skip_all "python3 is not installed"
[ -x /usr/bin/time ] || skip_all "/usr/bin/time is not installed"
producer=$TOP/tests/tools/sysprof_stream.py

home=$T/home
build_threads
d=$T/threads.data
record -e cpu-clock -F 2000 --call-graph dwarf -o "$d" \
	-- "$T/threads" 1500 >/dev/null || skip_all "perf record failed"

# The capture itself (type 18 has no kernel part: --no-kernel).
restack_clean convert --no-kernel "$d" -o "$T/direct.folded"
nsamples=$(awk '{ s += $NF } END { print s + 0 }' "$T/direct.folded")
check "the capture has samples ($nsamples)" test "$nsamples" -gt 50

# --- a FIFO and standard input ------------------------------------------
mkfifo "$T/fifo"
python3 "$producer" --pause-ms 1 "$d" >"$T/fifo" &
restack_clean convert "$T/fifo" -o "$T/fifo.folded"
wait
same_file "$T/direct.folded" "$T/fifo.folded" \
	"a FIFO: the stacks of the capture itself"
python3 "$producer" "$d" | "$RESTACK" convert -q - -o "$T/stdin.folded"
same_file "$T/direct.folded" "$T/stdin.folded" \
	"standard input: the stacks of the capture itself"

# --- cut inside a frame ------------------------------------------------------
python3 "$producer" --cut "$d" |
	"$RESTACK" convert - -o "$T/cut.folded" 2>"$T/cut.err"
is "$?" 2 "a stream cut inside a frame: exit 2"
check "... the error names the offset" \
	grep -qE '^restack: -\+0x[0-9a-f]+: ' "$T/cut.err"
off=$(sed -n 's/^restack: -+0x\([0-9a-f]*\): .*/\1/p' "$T/cut.err" | head -n 1)
python3 "$producer" "$d" >"$T/whole.stream"
whole=$(stat -c %s "$T/whole.stream")
check "... the frame it names is the last one (0x$off of $whole bytes)" \
	test $((0x${off:-0})) -gt $((whole - 65536)) -a $((0x${off:-0})) -lt "$whole"

# --- 1 GiB through a pipe ----------------------------------------------------
limit_kb=$((100 * 1024))
python3 "$producer" --burst 64 --repeat $((1 << 30)) "$d" |
	/usr/bin/time -f %M -o "$T/rss" "$RESTACK" convert -q - \
		-o "$T/big.folded" 2>"$T/big.err"
is "$?" 0 "a 1 GiB stream converts"
kb=$(tail -n 1 "$T/rss")
check "... with a peak RSS of $kb KiB <= $limit_kb KiB" test "$kb" -le $limit_kb
big=$(awk '{ s += $NF } END { print s + 0 }' "$T/big.folded")
check "... every sample counted ($big, a multiple of $nsamples)" \
	test $((big % nsamples)) -eq 0 -a "$big" -gt $((nsamples * 100))

done_testing
