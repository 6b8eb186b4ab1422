#!/bin/bash
# signals.sh - SIGINT, SIGTERM and SIGHUP during a conversion remove what
# restack created (the temporary output, the --archive extraction
# directory, even while it is being filled) and restack dies by the
# signal (status 128+N); with -j2, a signal that reaches a worker thread
# too.  A signal ignored by restack's parent stays ignored.
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || skip_all "python3 is needed"
env --default-signal true 2>/dev/null || skip_all "env --default-signal"
# A pipe-mode capture on standard input: no build-id list is known when
# the archive is extracted, so every build-id's files are taken (of a
# file's list, only its build-ids' would be, and fast).
in=$TESTDATA/perf/pipe-g.data
mkdir "$T/tmp" "$T/out"
export TMPDIR=$T/tmp

# an archive of N empty files in perf's build-id layout (PATH/BUILD-ID/elf)
# in 100 directories, extracted for seconds
big_archive() {
	python3 - "$1" "$2" <<'PY'
import io, sys, tarfile
with tarfile.open(sys.argv[1], 'w:gz') as t:
    for i in range(int(sys.argv[2])):
        e = tarfile.TarInfo('d%02d/%040x/elf' % (i % 100, i))
        t.addfile(e, io.BytesIO(b''))
PY
}
big_archive "$T/big.tar.gz" 60000

# wait_for GLOB: until a file matches GLOB (10 s at most); 0 when one did
wait_for() {
	local i
	for ((i = 0; i < 2000; i++)); do
		compgen -G "$1" >/dev/null && return 0
		sleep 0.005
	done
	return 1
}

# debris NAME: nothing restack made is left in $TMPDIR or the output's dir
debris() {
	local left
	left=$(ls -A "$T/tmp" "$T/out" | grep -v ':$' | grep . | head -n 5)
	is "$left" "" "$1: nothing left behind"
	rm -rf "${T:?}"/tmp/* "${T:?}"/out/*
}

# --- during the archive's extraction --------------------------------------
for sig in TERM INT HUP; do
	for j in 1 2; do
		name="SIG$sig during extraction, -j$j"
		env --default-signal "$RESTACK" convert -j$j --offline \
			--archive "$T/big.tar.gz" - -o "$T/out/out.folded" \
			<"$in" 2>"$T/err" &
		pid=$!
		if wait_for "$T/tmp/restack-archive.*/d*"; then
			tmps=$(compgen -G "$T/out/out.folded.tmp.*" | wc -l)
			kill -s "$sig" $pid
			wait $pid
			is "$?" $((128 + $(kill -l "$sig"))) "$name: died by the signal"
			is "$tmps" 1 "$name: the temporary output existed"
			debris "$name"
		else
			kill $pid
			wait $pid
			fail "$name: the extraction started" "$(cat "$T/err")"
		fi
	done
done

# --- a signal ignored by the parent stays ignored --------------------------
# (bash starts background commands with SIGINT ignored)
"$RESTACK" convert --offline --archive "$T/big.tar.gz" - \
	-o "$T/out/out.folded" <"$in" 2>"$T/err" &
pid=$!
wait_for "$T/tmp/restack-archive.*/d*" && kill -s INT $pid
wait $pid
is "$?" 0 "ignored SIGINT: the conversion went on"
check "ignored SIGINT: the output was written" test -s "$T/out/out.folded"
rm -f "$T/out/out.folded"
debris "ignored SIGINT"

# --- a worker thread takes the signal -------------------------------------
# restack reads a pipe-mode capture from a FIFO that is fed part of it and
# kept open: the main thread waits for input, the workers for samples, and
# kill(2) of a worker's thread id delivers the signal to that thread.
if (need_perf) >/dev/null 2>&1; then
	build_threads
	record -e cpu-clock -F 4000 --call-graph dwarf -o - -- "$T/threads" \
		30000 >"$T/big.pipe" 2>/dev/null
fi
if [ -s "$T/big.pipe" ]; then
	for sig in TERM INT HUP; do
		name="SIG$sig to a worker thread, -j2"
		mkfifo "$T/feed"
		exec 3<>"$T/feed"
		head -c 8000000 "$T/big.pipe" >&3 &
		feeder=$!
		env --default-signal "$RESTACK" convert -j2 --offline \
			--archive "$T/big.tar.gz" - -o "$T/out/out.folded" \
			<"$T/feed" 2>"$T/err" &
		pid=$!
		worker=
		for ((i = 0; i < 2000; i++)); do
			for t in $(ls /proc/$pid/task 2>/dev/null); do
				[ "$t" != $pid ] && worker=$t
			done
			[ -n "$worker" ] && break
			sleep 0.01
		done
		left=$(compgen -G "$T/tmp/restack-archive.*" | wc -l)
		left=$left$(compgen -G "$T/out/out.folded.tmp.*" | wc -l)
		# (a thread that ended meanwhile: the process takes it)
		kill -s "$sig" "${worker:-$pid}" 2>/dev/null ||
			kill -s "$sig" $pid
		wait $pid
		is "$?" $((128 + $(kill -l "$sig"))) "$name: died by the signal"
		is "$left" 11 "$name: the extraction and the temporary existed"
		debris "$name"
		exec 3>&-
		# the feeder holds the FIFO open both ways (3<>): with what
		# restack did not read before it died, it would block for good
		kill $feeder 2>/dev/null
		wait $feeder
		rm -f "$T/feed"
	done
else
	skip "signal to a worker thread" "perf cannot record here"
fi

done_testing
