#!/bin/bash
# sysprof_stream.sh - restack between a profiler and its capture file: a
# sysprof stream of raw user stacks (type 18), written into a FIFO or a
# pipe at a profiler's pace by tests/tools/sysprof_stream.py from a
# perf.data capture, is read as it comes.  The output grows while the
# producer is held mid-stream; the finished output, read by
# libsysprof-capture (tests/tools/syscap_validate.c) and by restack, has
# the samples and stacks of converting the capture itself; standard input
# and output, folded output; a stream cut inside a frame ends with exit 2
# naming the offset and the capture before it written; a 1 GiB stream
# converts with a peak RSS of at most 100 MiB; a producer does not wait
# while restack is busy (up to 32 MiB read ahead); a pipe-mode perf.data
# is read from a FIFO too.
. "$(dirname "$0")/lib.sh"

need_perf
command -v python3 >/dev/null 2>&1 || skip_all "python3 is not installed"
[ -x /usr/bin/time ] || skip_all "/usr/bin/time is not installed"
validate=$BUILD/tests/syscap_validate
producer=$TOP/tests/tools/sysprof_stream.py

home=$T/home
build_threads
d=$T/threads.data
record -e cpu-clock -F 2000 --call-graph dwarf -o "$d" \
	-- "$T/threads" 1500 >/dev/null || skip_all "perf record failed"

# The capture itself (type 18 has no kernel part: --no-kernel).
restack_clean convert --no-kernel "$d" -o "$T/direct.folded"
restack_clean convert --no-kernel "$d" --to sysprof -o "$T/direct.syscap"
nsamples=$(awk '{ s += $NF } END { print s + 0 }' "$T/direct.folded")
check "the capture has samples ($nsamples)" test "$nsamples" -gt 50

# samples FILE.syscap: libsysprof-capture's SAMPLE lines, sorted (a
# frame older than what a pause let go comes late: out of time order).
samples() {
	"$validate" "$1" >"$T/val.tmp" && grep '^sample ' "$T/val.tmp" | sort
}

# --- a FIFO, the producer held after 60 frames ---------------------------
mkfifo "$T/fifo"
python3 "$producer" --hold 60 "$T/go" --ready "$T/held" "$d" >"$T/fifo" &
prod=$!
"$RESTACK" convert -q --to sysprof "$T/fifo" -o "$T/fifo.syscap" \
	2>"$T/fifo.err" &
conv=$!
for _ in $(seq 200); do
	[ -e "$T/held" ] && [ -s "$T/fifo.syscap" ] &&
		[ "$(stat -c %s "$T/fifo.syscap")" -gt 256 ] && break
	sleep 0.05
done
held_size=$(stat -c %s "$T/fifo.syscap" 2>/dev/null || echo 0)
check "the producer is held mid-stream" kill -0 $prod
check "the output has grown while the producer writes ($held_size bytes)" \
	test "$held_size" -gt 256
touch "$T/go"
wait $prod
wait $conv
is "$?" 0 "the FIFO's stream converts" 
final_size=$(stat -c %s "$T/fifo.syscap")
check "... and the output grew after the hold ($held_size -> $final_size)" \
	test "$final_size" -gt "$held_size"
restack_clean convert "$T/fifo.syscap" -o "$T/fifo.folded"
same_file "$T/direct.folded" "$T/fifo.folded" \
	"restack reads the stacks of the capture itself from the output"
if [ -x "$validate" ]; then
	samples "$T/direct.syscap" >"$T/direct.val"
	if samples "$T/fifo.syscap" >"$T/fifo.val"; then
		same_file "$T/direct.val" "$T/fifo.val" \
			"libsysprof-capture reads the capture's samples from the output, stack for stack"
	else
		fail "libsysprof-capture reads the output"
	fi
else
	skip "libsysprof-capture checks" "no $validate (libsysprof-4-dev)"
fi

# --- standard input and output ------------------------------------------
python3 "$producer" --pause-ms 1 "$d" |
	"$RESTACK" convert -q --to sysprof - -o - >"$T/stdout.syscap"
is "$?" 0 "standard input to standard output converts"
restack_clean convert "$T/stdout.syscap" -o "$T/stdout.folded"
same_file "$T/direct.folded" "$T/stdout.folded" \
	"... to the stacks of the capture itself"
if [ -x "$validate" ]; then
	samples "$T/stdout.syscap" >"$T/stdout.val"
	same_file "$T/direct.val" "$T/stdout.val" \
		"... for libsysprof-capture too"
fi
python3 "$producer" "$d" | "$RESTACK" convert -q - -o "$T/stdin.folded"
same_file "$T/direct.folded" "$T/stdin.folded" \
	"standard input to folded: the stacks of the capture itself"

python3 "$producer" "$d" >"$T/whole.stream"

# --- MAP and PROCESS frames timed after the samples --------------------------
# As sysprof writes its /proc scan: read first, but timed after every
# sample.  They are applied when read, as a file's are applied first.
python3 - "$T/whole.stream" >"$T/late-maps.stream" <<'PY'
import struct, sys
d = bytearray(open(sys.argv[1], 'rb').read())
off, last, maps = 256, 0, []
while off + 24 <= len(d):
    n, = struct.unpack_from('<H', d, off)
    t, = struct.unpack_from('<q', d, off + 8)
    last = max(last, t)
    if d[off + 16] in (3, 4):
        maps.append(off)
    off += n
for off in maps:
    struct.pack_into('<q', d, off + 8, last + 1000)
sys.stdout.buffer.write(d)
PY
cat "$T/late-maps.stream" |
	"$RESTACK" convert -q - -o "$T/late-maps.folded"
same_file "$T/direct.folded" "$T/late-maps.folded" \
	"MAP and PROCESS frames timed after the samples still name them"

# --- frames restack does not change pass through -------------------------
# The stream with METADATA, MARK, LOG, FILE_CHUNK and JITMAP frames put
# in after its header: each is in the output byte for byte.
python3 - "$T/whole.stream" "$T/extra.stream" <<'PY'
import struct, sys
d = open(sys.argv[1], 'rb').read()
def frame(kind, time, payload):
    n = (24 + len(payload) + 7) & ~7
    return (struct.pack('<HhiqB7x', n, -1, 4242, time, kind) + payload +
            b'\0' * (n - 24 - len(payload)))
t, = struct.unpack_from('<q', d, 256 + 8)
extra = [
    frame(11, t, b'org.test.key'.ljust(40, b'\0') + b'value\0'),
    frame(10, t, struct.pack('<q', 5) + b'group'.ljust(24, b'\0') +
          b'mark'.ljust(40, b'\0') + b'a mark\0'),
    frame(12, t, struct.pack('<HHI', 8, 0, 0) + b'Sampler'.ljust(32, b'\0') +
          b'Lost 0 samples\0'),
    frame(13, t, struct.pack('<I', 5 << 16 | 1) +
          b'/proc/test'.ljust(256, b'\0') + b'hello'),
    frame(7, t, struct.pack('<I', 1) + struct.pack('<Q', 0xE000000000000001) +
          b'jitted\0'),
]
open(sys.argv[2], 'wb').write(d[:256] + b''.join(extra) + d[256:])
open(sys.argv[2] + '.frames', 'w').write(
    ''.join(f.hex() + '\n' for f in extra))
PY
"$RESTACK" convert -q --to sysprof - -o "$T/extra.syscap" <"$T/extra.stream"
python3 - "$T/extra.syscap" >"$T/extra.out" <<'PY'
import struct, sys
d = open(sys.argv[1], 'rb').read()
off = 256
while off + 24 <= len(d):
    n, = struct.unpack_from('<H', d, off)
    print(d[off:off + n].hex())
    off += n
PY
missing=$(grep -cvxFf "$T/extra.out" "$T/extra.stream.frames")
is "$missing" 0 "METADATA, MARK, LOG, FILE_CHUNK and JITMAP frames pass through byte for byte"
if [ -x "$validate" ]; then
	check "... and libsysprof-capture reads the output" \
		"$validate" "$T/extra.syscap"
fi

# --- a frame later than the window ----------------------------------------
# 12 MiB of samples, then the first sample again with its own time: older
# than all that went out, it is delivered late and counted, not dropped.
python3 "$producer" --burst 64 --repeat $((12 << 20)) "$d" >"$T/late.stream"
python3 - "$T/whole.stream" >>"$T/late.stream" <<'PY'
import struct, sys
d = open(sys.argv[1], 'rb').read()
off = 256
while d[off + 16] != 18:
    off += struct.unpack_from('<H', d, off)[0]
sys.stdout.buffer.write(d[off:off + struct.unpack_from('<H', d, off)[0]])
PY
cat "$T/late.stream" |
	"$RESTACK" convert - -o "$T/late.folded" 2>"$T/late.err"
is "$?" 0 "a stream with a frame later than the window converts"
check "... the late frame is counted in a note" \
	grep -q "note: -: 1 frames came after newer ones had gone out" \
	"$T/late.err"
n=$(awk '{ s += $NF } END { print s + 0 }' "$T/late.folded")
check "... and delivered ($n samples, $nsamples per round and one)" \
	test $((n % nsamples)) -eq 1

# The input's own /proc/kallsyms and __symbols__ come through, once (the
# corpus capture's bundle names frames whose binaries are nowhere).
if [ -x "$validate" ]; then
	bundle=$TESTDATA/corpus/syscap/bundle.syscap
	cat "$bundle" | "$RESTACK" convert -q --to sysprof - -o "$T/bundle.syscap"
	for f in /proc/kallsyms __symbols__; do
		"$validate" "$bundle" "$f" >"$T/in.file"
		if "$validate" "$T/bundle.syscap" "$f" >"$T/out.file"; then
			same_file "$T/in.file" "$T/out.file" \
				"the input's $f comes through as it was"
		else
			fail "the input's $f comes through as it was"
		fi
	done
	is "$("$validate" "$T/bundle.syscap" | grep '^type file_chunk')" \
		"type file_chunk 4" "... and alone (4 FILE_CHUNK frames, as in)"
fi

# --- cut inside a frame ------------------------------------------------------
python3 "$producer" --cut "$d" |
	"$RESTACK" convert --to sysprof - -o "$T/cut.syscap" 2>"$T/cut.err"
is "$?" 2 "a stream cut inside a frame: exit 2"
check "... the error names the offset" \
	grep -qE '^restack: -\+0x[0-9a-f]+: ' "$T/cut.err"
off=$(sed -n 's/^restack: -+0x\([0-9a-f]*\): .*/\1/p' "$T/cut.err" | head -n 1)
whole=$(stat -c %s "$T/whole.stream")
check "... the frame it names is the last one (0x$off of $whole bytes)" \
	test $((0x${off:-0})) -gt $((whole - 65536)) -a $((0x${off:-0})) -lt "$whole"
if restack_clean convert "$T/cut.syscap" -o "$T/cut.folded"; then
	n=$(awk '{ s += $NF } END { print s + 0 }' "$T/cut.folded")
	check "... and what came before is written ($n of $nsamples samples)" \
		test "$n" -ge $((nsamples - 1))
else
	fail "... and what came before is a capture restack reads"
fi

# --- restack busy: the profiler is not kept waiting -----------------------
# restack's output is not read for 4 s (as if a module took that long to
# load): the 24 MiB stream is still taken in whole at once (read ahead,
# 32 MiB at most), so the producer ends long before restack does.
rm -f "$T/produced"
{ python3 "$producer" --burst 64 --repeat $((24 << 20)) "$d" &&
	touch "$T/produced"; } |
	"$RESTACK" convert -q --to sysprof - -o - |
	{ sleep 4; cat >"$T/busy.syscap"; } &
busy=$!
for _ in $(seq 60); do
	[ -e "$T/produced" ] && break
	sleep 0.05
done
check "the producer is done within 3 s while restack's output waits" \
	test -e "$T/produced"
wait $busy
n=$(restack_clean convert "$T/busy.syscap" -o - |
	awk '{ s += $NF } END { print s + 0 }')
check "... and every sample is written ($n, a multiple of $nsamples)" \
	test $((n % nsamples)) -eq 0 -a "$n" -gt 0

# --- a pipe-mode perf.data from a FIFO ---------------------------------------
# Its first bytes, read to tell the format, are read again (they were lost,
# and restack then waited to open the FIFO again).
if record -e cpu-clock -F 2000 --call-graph dwarf -o - \
	-- "$T/threads" 500 >"$T/pipe.data"; then
	restack_clean convert "$T/pipe.data" -o "$T/pipe.folded"
	mkfifo "$T/pd.fifo"
	cat "$T/pipe.data" >"$T/pd.fifo" &
	timeout 20 "$RESTACK" convert -q "$T/pd.fifo" -o "$T/pd-fifo.folded"
	is "$?" 0 "a pipe-mode perf.data from a FIFO converts"
	kill $! 2>/dev/null
	same_file "$T/pipe.folded" "$T/pd-fifo.folded" \
		"... as from the file"
else
	skip "a pipe-mode perf.data from a FIFO" "perf record -o - failed"
fi

# --- 1 GiB through a pipe ----------------------------------------------------
limit_kb=$((100 * 1024))
python3 "$producer" --burst 64 --repeat $((1 << 30)) "$d" |
	/usr/bin/time -f %M -o "$T/rss" "$RESTACK" convert -q - \
		-o "$T/big.folded" 2>"$T/big.err"
is "$?" 0 "a 1 GiB stream converts"
kb=$(tail -n 1 "$T/rss")
# a sanitizer's shadow memory and quarantine are not restack's
if ldd "$RESTACK" 2>/dev/null | grep -q 'lib[at]san'; then
	skip "... peak RSS $kb KiB" "a sanitizer build"
else
	check "... with a peak RSS of $kb KiB <= $limit_kb KiB" \
		test "$kb" -le $limit_kb
fi
big=$(awk '{ s += $NF } END { print s + 0 }' "$T/big.folded")
check "... every sample counted ($big, a multiple of $nsamples)" \
	test $((big % nsamples)) -eq 0 -a "$big" -gt $((nsamples * 100))

done_testing
