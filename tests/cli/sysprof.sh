#!/bin/bash
# sysprof.sh - sysprof capture output (`--to sysprof`): Debian's
# libsysprof-capture (tests/tools/syscap_validate.c) reads every frame of
# restack's output and finds the samples and stacks restack resolved, and
# perf.data -> sysprof -> folded equals perf.data -> folded; sysprof ->
# perf.data reads in stock perf; other byte order and eu-stacktrace's
# type-18 frames.
. "$(dirname "$0")/lib.sh"

need_perf
cc=$(command -v cc || command -v gcc) || skip_all "no C compiler"
validate=$BUILD/tests/syscap_validate

home=$T/home
build_threads

# expected SCRIPT: the SAMPLE lines syscap_validate should print, from
# restack's --no-inline script output: kernel frames after K, user frames
# after U, times in microseconds.
expected() {
	awk '
	function out() { if (hdr != "") print hdr (k != "" ? " K" k : "") (u != "" ? " U" u : "") }
	/^[^\t]/ && NF {
		out()
		# comm pid/tid [cpu] time: period event: (no [cpu] column
		# when the capture recorded none, as perf script prints it)
		for (i = 2; i <= NF; i++) if ($i ~ /^[0-9]+\/[0-9]+$/) break
		split($i, p, "/"); t = $(NF - 2); sub(/:$/, "", t)
		hdr = "sample " p[1] " " p[2] " " t; k = ""; u = ""; next
	}
	/^\t/ {
		if ($NF == "marker") next
		if ($NF == "kernel") k = k " " $1; else u = u " " $1
		next
	}
	END { out() }' "$1"
}

# found VALIDATE-OUTPUT: its SAMPLE lines with times in microseconds.
found() {
	awk '$1 == "sample" {
		t = $4; $4 = substr(t, 1, length(t) - 9) "." substr(t, length(t) - 8, 6)
		print }' "$1"
}

d=$T/threads.data
if ! record -e cpu-clock -F 2000 --call-graph dwarf -o "$d" \
	-- "$T/threads" 1500 >/dev/null; then
	fail "threads: perf record"
	done_testing
fi

if restack_clean convert "$d" -o "$T/out.syscap" 2>"$T/conv.err"; then
	ok "convert to .syscap"
else
	fail "convert to .syscap" "$(cat "$T/conv.err")"
	done_testing
fi
check "the output starts with sysprof's magic and version 1" \
	grep -q '^5e97cafd01' <(head -c 5 "$T/out.syscap" | od -An -tx1 | tr -d ' \n')

if [ -x "$validate" ]; then
	if "$validate" "$T/out.syscap" >"$T/val.txt" 2>"$T/val.err"; then
		ok "libsysprof-capture reads every frame ($(grep '^frames' "$T/val.txt"))"
	else
		fail "libsysprof-capture reads every frame" "$(cat "$T/val.err")" \
			"$(grep -v '^sample' "$T/val.txt")"
	fi
	restack_clean convert "$d" --no-inline --to script -o "$T/orig.script"
	expected "$T/orig.script" >"$T/want.txt"
	found "$T/val.txt" >"$T/got.txt"
	check "samples to compare ($(wc -l <"$T/want.txt"))" \
		test "$(wc -l <"$T/want.txt")" -gt 100
	same_file "$T/want.txt" "$T/got.txt" \
		"libsysprof-capture finds restack's samples and stacks, in order"
	check "PROCESS, FORK, EXIT and MAP frames are there" \
		bash -c "grep -q '^type process' '$T/val.txt' &&
			 grep -q '^type fork' '$T/val.txt' &&
			 grep -q '^type exit' '$T/val.txt' &&
			 grep -q '^type map' '$T/val.txt'"
	check "MAP frames carry @build-id (libsysprof-capture 3.46 read them)" \
		grep -qa "libwork.so.@[0-9a-f]\{40\}" "$T/out.syscap"
	restack_clean convert "$d" --sysprof-version 3.46 -o "$T/v346.syscap"
	check "--sysprof-version 3.46: frames libsysprof-capture reads" \
		"$validate" "$T/v346.syscap"
	check "--sysprof-version 3.46: no build-id after MAP names" \
		bash -c "! grep -qa '@[0-9a-f]\{40\}' '$T/v346.syscap'"
	restack_clean convert "$d" --sysprof-version 46 -o "$T/v46.syscap"
	same_file "$T/out.syscap" "$T/v46.syscap" \
		"--sysprof-version 46 writes what the default writes"
else
	skip "libsysprof-capture checks" "no $validate (libsysprof-4-dev)"
fi

# Round trip: the capture's samples come back from the sysprof file's
# callchains with the same names (markers of stacks that stopped early
# say "callchain end" there, so they are left out of the comparison).
unmark() {
	sed 's/;\[truncated: [^]]*\]//' "$1" |
		awk '{ n = $NF; $NF = ""; sub(/ $/, ""); s[$0] += n }
		     END { for (k in s) print k, s[k] }' | sort
}
restack_clean convert "$d" -o "$T/direct.folded"
if restack_clean convert "$T/out.syscap" -o "$T/rt.folded" 2>"$T/rt.err"; then
	same_file <(unmark "$T/direct.folded") <(unmark "$T/rt.folded") \
		"perf.data -> sysprof -> folded equals perf.data -> folded"
	check "the round trip keeps inline frames (leaf;mix)" \
		bash -c "grep -q ';mix ' '$T/rt.folded'"
else
	fail "sysprof -> folded" "$(cat "$T/rt.err")"
fi
restack_clean convert "$d" --no-inline -o "$T/direct-ni.folded"
restack_clean convert "$T/out.syscap" --no-inline -o "$T/rt-ni.folded"
same_file <(unmark "$T/direct-ni.folded") <(unmark "$T/rt-ni.folded") \
	"the same with --no-inline"

# sysprof -> perf.data: stock perf script shows, sample for sample, the
# stacks restack shows for the sysprof capture (names only: no inline
# frames in a callchain), and perf report reads it without warnings.
if restack_clean convert "$T/out.syscap" -o "$T/fromsys.data" 2>"$T/fs.err"; then
	restack_clean convert "$T/out.syscap" --no-inline --to script \
		-o "$T/sys.script"
	perf_clean script -i "$T/fromsys.data" >"$T/fromsys.perf" 2>"$T/fs.err"
	python3 "$TOP/tests/tools/collapse.py" --per-sample "$T/sys.script" |
		sed 's/;\[truncated: [^]]*\]//' | sort >"$T/sys.want"
	python3 "$TOP/tests/tools/collapse.py" --per-sample "$T/fromsys.perf" |
		sort >"$T/sys.got"
	check "sysprof -> perf.data: samples to compare ($(wc -l <"$T/sys.want"))" \
		test "$(wc -l <"$T/sys.want")" -gt 100
	same_file "$T/sys.want" "$T/sys.got" \
		"sysprof -> perf.data: perf script shows restack's stacks, sample for sample"
	perf_clean report -i "$T/fromsys.data" --stdio >/dev/null 2>"$T/fs.err"
	is "$(cat "$T/fs.err")" "" "sysprof -> perf.data: perf report prints no warnings"
else
	fail "sysprof -> perf.data" "$(cat "$T/fs.err")"
fi

# The same capture in the other byte order (as a big-endian sysprof
# writes it) reads the same.
python3 "$TOP/tests/tools/syscap_swap.py" "$T/out.syscap" "$T/be.syscap"
restack_clean convert "$T/be.syscap" -o "$T/be.folded"
same_file "$T/rt.folded" "$T/be.folded" "a big-endian capture reads the same"

# eu-stacktrace's raw user stacks (type 18), made from the perf capture's
# DWARF samples: unwound like them (no kernel part: type 18 has none).
python3 "$TOP/tests/tools/mkstack18.py" "$d" "$T/s18.syscap"
restack_clean convert "$d" --no-kernel -o "$T/nokernel.folded"
if restack_clean convert "$T/s18.syscap" -o "$T/s18.folded" 2>"$T/s18.err"; then
	same_file "$T/nokernel.folded" "$T/s18.folded" \
		"type-18 user stacks unwind to the perf capture's stacks"
else
	fail "type-18 capture converts" "$(cat "$T/s18.err")"
fi

# JITMAP names: in the hand-made corpus capture, a JITMAP written after
# (in time) the sample using its key still names it.
restack_clean convert "$TESTDATA/corpus/syscap/mixed-types.syscap" \
	-o "$T/mixed.folded"
check "a JITMAP key is named after the JITMAP's entry (JS:*fib)" \
	grep -q ';JS:\*fib 1$' "$T/mixed.folded"

# node's JIT code named from its perf map: JITMAP frames on the way out,
# the same names on the way back.
if command -v node >/dev/null; then
	cp "$TESTDATA/src/jitwork.js" "$T/"
	ls /tmp/perf-*.map >"$T/maps.before" 2>/dev/null
	if record -e cpu-clock -F 1000 --call-graph dwarf -o "$T/node.data" \
		-- node --perf-basic-prof jitwork.js 2 >/dev/null; then
		mkdir -p "$T/maps"
		for m in /tmp/perf-*.map; do
			[ -e "$m" ] || continue
			grep -qxF "$m" "$T/maps.before" || mv "$m" "$T/maps/"
		done
		# Sample for sample: restack's time-ordered view of the capture
		# (script output, as the sysprof writer sees the samples) and of
		# its sysprof copy, both folded per sample by collapse.py.
		restack_clean convert --jit-dir "$T/maps" "$T/node.data" \
			--to script -o "$T/node.script"
		restack_clean convert --jit-dir "$T/maps" "$T/node.data" \
			-o "$T/node.syscap"
		restack_clean convert "$T/node.syscap" --to script \
			-o "$T/node-rt.script"
		for f in node node-rt; do
			python3 "$TOP/tests/tools/collapse.py" --per-sample \
				"$T/$f.script" | sed 's/;\[truncated: [^]]*\]//' |
				sort >"$T/$f.ps"
		done
		check "node: JS functions named in the capture" \
			grep -q 'JS:[*~^]\?fib' "$T/node.ps"
		same_file "$T/node.ps" "$T/node-rt.ps" \
			"node: perf.data -> sysprof (JITMAP) -> script shows the same stacks, sample for sample"
		if [ -x "$validate" ]; then
			"$validate" "$T/node.syscap" >"$T/node.val"
			check "node: libsysprof-capture reads the JITMAP frames and keys" \
				grep -q ' jit:JS:' "$T/node.val"
		fi
	else
		skip "node" "perf record of node failed"
	fi
else
	skip "node" "node is not installed"
fi

# Pipe-mode perf input names its host in records read before the first
# frame; the METADATA frames still carry it.
(cd "$T" && perf_clean record -q -e cpu-clock:u -F 1000 --call-graph dwarf \
	-o - -- "$T/threads" 300 2>/dev/null) >"$T/pipe.data"
restack_clean convert - --to sysprof -o "$T/pipe.syscap" <"$T/pipe.data"
check "pipe-mode perf input: METADATA names the OS release" \
	grep -qa "uname.release" "$T/pipe.syscap"

restack_clean convert "$d" --to sysprof -o - >"$T/stdout.syscap"
check "-o - --to sysprof writes the same frames (times in the header aside)" \
	cmp -s <(tail -c +257 "$T/out.syscap") <(tail -c +257 "$T/stdout.syscap")
restack_clean convert "$d" -o "$T/again.syscap"
same_file "$T/out.syscap" "$T/again.syscap" "sysprof output is deterministic"
restack_clean convert "$d" --sysprof-version 3.0 -o "$T/x.syscap" 2>/dev/null
is "$?" 64 "an unknown --sysprof-version is a usage error"

done_testing
