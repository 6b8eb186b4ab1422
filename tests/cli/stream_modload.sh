#!/bin/bash
# stream_modload.sh - a sysprof stream's modules load on threads of their
# own (unwind/modload.h).  A module made slow (RESTACK_TEST_SLOW_LOAD, as
# a debuginfod download or a large DWARF file would be): the samples that
# need it wait while the stream's read-ahead queue has room, and then the
# output is the capture's own; when the queue fills, the producer is not
# kept waiting: the samples go on, each one counted, its frames in that
# module unnamed and its walk ending there as "[truncated: module
# loading]"; the samples after the load are the capture's again, and none
# is lost.
. "$(dirname "$0")/lib.sh"

need_perf
command -v python3 >/dev/null 2>&1 || skip_all "python3 is not installed"
producer=$TOP/tests/tools/sysprof_stream.py

home=$T/home
build_threads
d=$T/threads.data
record -e cpu-clock -F 2000 --call-graph dwarf -o "$d" \
	-- "$T/threads" 1000 >/dev/null || skip_all "perf record failed"
restack_clean convert --no-kernel "$d" -o "$T/direct.folded"
nsamples=$(awk '{ s += $NF } END { print s + 0 }' "$T/direct.folded")
check "the capture has samples ($nsamples)" test "$nsamples" -gt 50
check "... in the program's own code" grep -q 'worker' "$T/direct.folded"

# sum FILE [PATTERN]: the samples of folded FILE (whose lines match).
sum() {
	awk -v re="${2:-.}" '$0 ~ re { s += $NF } END { print s + 0 }' "$1"
}
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# --- a module that takes 1.5 s, a stream that fits the queue --------------
python3 "$producer" "$d" |
	RESTACK_TEST_SLOW_LOAD="$T/threads:1500" "$RESTACK" convert - \
		-o "$T/wait.folded" 2>"$T/wait.err"
is "$?" 0 "a stream whose program takes 1.5 s to load converts"
same_file "$T/direct.folded" "$T/wait.folded" \
	"... its samples waited: the stacks of the capture itself"
is "$(grep -c 'still loading' "$T/wait.err")" 0 "... without a warning"

# --- a module that takes 8 s, a stream over the queue ---------------------
# 80 MiB: more than the read-ahead queue (32 MiB) and the reorder window
# (8 MiB) hold while the samples wait.  One worker, then two (each with
# its own modules and loader).
load_ms=8000
awk '{ $NF = ""; print }' "$T/direct.folded" | sort -u >"$T/direct.stacks"
for j in 1 2; do
	start=$(now_ms)
	rm -f "$T/produced"
	{ python3 "$producer" --burst 64 --repeat $((80 << 20)) "$d" &&
		now_ms >"$T/produced"; } |
		RESTACK_TEST_SLOW_LOAD="$T/threads:$load_ms" "$RESTACK" \
			convert -j$j - -o "$T/slow.folded" 2>"$T/slow.err"
	is "$?" 0 "-j$j: an 80 MiB stream whose program takes 8 s to load converts"
	end=$(now_ms)
	produced=$(cat "$T/produced" 2>/dev/null || echo "$end")
	check "... the producer is done before the load ($((produced - start)) ms of $load_ms; restack $((end - start)) ms)" \
		test $((produced - start)) -lt "$load_ms"
	total=$(sum "$T/slow.folded")
	check "... every sample is written ($total, a multiple of $nsamples)" \
		test $((total % nsamples)) -eq 0 -a "$total" -gt $((nsamples * 3))
	marked=$(sum "$T/slow.folded" '\[truncated: module loading\]')
	missed=$(sed -n 's/.*warning: -: \([0-9]*\) samples went on while a module.*/\1/p' \
		"$T/slow.err")
	check "... samples went on while it loaded, counted in a warning ($missed)" \
		test "${missed:-0}" -gt 0
	check "... their walks end at it, marked ($marked)" test "$marked" -gt 0
	unnamed=$(sum "$T/slow.folded" \
		'\[truncated: module loading\]|;\[threads\]|;\[libwork\.so\]')
	is "$unnamed" "${missed:-0}" \
		"... the samples marked or with frames left unnamed are those counted"
	# Every other stack is one of the capture's, and after the load they
	# come back: at least a round's worth.
	grep -vE '\[truncated: module loading\]|;\[threads\]|;\[libwork\.so\]' \
		"$T/slow.folded" >"$T/slow.rest"
	awk '{ $NF = ""; print }' "$T/slow.rest" | sort -u >"$T/slow.stacks"
	extra=$(comm -13 "$T/direct.stacks" "$T/slow.stacks" | wc -l)
	is "$extra" 0 "... every other stack is one of the capture's"
	check "... and they are at least a round's worth ($((total - unnamed)) of $total)" \
		test $((total - unnamed)) -ge "$nsamples"
done

done_testing
