#!/bin/bash
# perfout.sh - perf.data output (`--to perf`): stock perf script and perf
# report (no unwinding options) read restack's output of a DWARF capture
# and show, sample for sample, the stacks restack shows for the original
# (with --no-inline: a callchain cannot carry inline frames, perf names
# each address by its ELF symbol only); file and pipe output, pipe input;
# perf.data -> perf.data -> folded equals perf.data -> folded.
. "$(dirname "$0")/lib.sh"

need_perf
command -v python3 >/dev/null || skip_all "python3 is needed to compare"
cc=$(command -v cc || command -v gcc) || skip_all "no C compiler"

tools=$TOP/tests/tools
home=$T/home
build_threads

# Markers restack adds for stacks that stop early have no callchain form.
unmark() {
	sed 's/;\[truncated: [^]]*\]//'
}

# per_sample SCRIPT-TEXT: "tid time<TAB>stack" per sample, sorted.
per_sample() {
	python3 "$tools/collapse.py" --per-sample "$1" | unmark | sort
}

# report_folded DATA: perf report's stacks per command, as folded lines.
report_folded() {
	perf_clean report -i "$1" --stdio --no-children --sort comm \
		-g folded,0,caller,count 2>"$T/report.err" | awk '
		/^#/ || NF == 0 { next }
		/^ +[0-9.]+% / { comm = $2; next }
		/^[0-9]+ / { n = $1; sub(/^[0-9]+ /, ""); print comm ";" $0, n }' |
		sort
}

# folded_sum FILE: folded lines without markers, equal stacks summed.
folded_sum() {
	unmark <"$1" | awk '{ n = $NF; $NF = ""; sub(/ $/, ""); s[$0] += n }
		END { for (k in s) print k, s[k] }' | sort
}

# same_stacks DATA OUT LABEL: perf script and perf report on OUT show the
# stacks restack --no-inline shows for DATA.
same_stacks() {
	local data=$1 out=$2 label=$3
	restack_clean convert "$data" --no-inline --to script -o "$T/orig.script"
	restack_clean convert "$data" --no-inline -o "$T/orig.folded"
	per_sample "$T/orig.script" >"$T/want.txt"
	perf_clean script -i "$out" >"$T/out.perf" 2>"$T/script.err"
	per_sample "$T/out.perf" >"$T/got.txt"
	check "$label: samples to compare ($(wc -l <"$T/want.txt"))" \
		test "$(wc -l <"$T/want.txt")" -gt 100
	same_file "$T/want.txt" "$T/got.txt" \
		"$label: perf script shows restack's stacks, sample for sample"
	is "$(cat "$T/script.err")" "" "$label: perf script prints no warnings"
	report_folded "$out" >"$T/report.folded"
	folded_sum "$T/orig.folded" >"$T/orig.sum"
	same_file "$T/orig.sum" "$T/report.folded" \
		"$label: perf report --stdio shows restack's stacks and counts"
	is "$(cat "$T/report.err")" "" "$label: perf report prints no warnings"
}

d=$T/threads.data
if record -e cpu-clock -F 2000 --call-graph dwarf -o "$d" \
	-- "$T/threads" 1500 >/dev/null; then
	if restack_clean convert "$d" -o "$T/out.data" 2>"$T/conv.err"; then
		ok "convert to .data"
		same_stacks "$d" "$T/out.data" "file"
		in=$(stat -c %s "$d")
		out=$(stat -c %s "$T/out.data")
		check "output is at least 10x smaller ($in -> $out bytes)" \
			test $((in / out)) -ge 10
		compare_with_perf "$T/out.data" "file output"
		"$RESTACK" info "$T/out.data" | grep 'sample_type=' >"$T/st.txt"
		check "the attr has CALLCHAIN and neither REGS_USER nor STACK_USER" \
			awk '/CALLCHAIN/ && !/REGS_USER|STACK_USER/ { ok = 1 }
			     END { exit !ok }' "$T/st.txt"
		perf_clean buildid-list -i "$T/out.data" >"$T/bids.txt" 2>&1
		check "perf buildid-list lists the modules the stacks use" \
			grep -q 'libwork.so' "$T/bids.txt"
		# Stitched frames are in the callchains as well.
		restack_clean convert "$d" --no-inline -o "$T/a.folded"
		restack_clean convert "$T/out.data" --no-inline -o "$T/b.folded"
		folded_sum "$T/a.folded" >"$T/a.sum"
		folded_sum "$T/b.folded" >"$T/b.sum"
		same_file "$T/a.sum" "$T/b.sum" \
			"perf.data -> perf.data -> folded equals perf.data -> folded"
		restack_clean convert "$T/out.data" -o "$T/c.data"
		restack_clean convert "$T/c.data" --no-inline -o "$T/c.folded"
		folded_sum "$T/c.folded" >"$T/c.sum"
		same_file "$T/a.sum" "$T/c.sum" "converting the output again keeps it"
	else
		fail "convert to .data" "$(cat "$T/conv.err")"
	fi
	# Pipe output.
	if restack_clean convert "$d" --to perf -o - >"$T/pipe.data" 2>"$T/conv.err"; then
		ok "convert to perf, pipe mode"
		check "the output is pipe mode" \
			grep -q 'pipe mode' <("$RESTACK" info "$T/pipe.data")
		same_stacks "$d" "$T/pipe.data" "pipe"
		restack_clean convert "$d" --to perf -o - |
			perf_clean script -i - >"$T/stream.perf" 2>/dev/null
		per_sample "$T/stream.perf" >"$T/stream.txt"
		same_file "$T/want.txt" "$T/stream.txt" \
			"pipe: perf script reading restack through a pipe"
	else
		fail "convert to perf, pipe mode" "$(cat "$T/conv.err")"
	fi
else
	fail "threads: perf record"
fi

# Pipe-mode input (user mode only: restack does not always name kernel
# frames of pipe input, perf does).
(cd "$T" && perf_clean record -q -e cpu-clock:u -F 2000 --call-graph dwarf \
	-o - -- "$T/threads" 1500 2>/dev/null) >"$T/in-pipe.data"
if [ -s "$T/in-pipe.data" ]; then
	if restack_clean convert - -o "$T/frompipe.data" <"$T/in-pipe.data" \
		2>"$T/conv.err"; then
		ok "pipe-mode input to file output"
		same_stacks "$T/in-pipe.data" "$T/frompipe.data" "pipe input"
	else
		fail "pipe-mode input to file output" "$(cat "$T/conv.err")"
	fi
else
	fail "perf record -o -"
fi

# Nothing partial on a failure.
restack_clean convert /dev/null -o "$T/bad.data" 2>/dev/null
is "$?" 2 "an unreadable input exits 2"
check "and leaves no output file" test ! -e "$T/bad.data"

done_testing
