#!/bin/bash
# unwind.sh - restack's offline unwinding against perf script on captures
# recorded here: the stacks must be the same, sample for sample, wherever
# perf reaches the thread's root (tests/tools/compare_stacks.py), and the
# folded output must be what stackcollapse-perf.pl makes of perf script.
#
# Workloads (testdata/src): threads.c + libwork.c (-O2
# -fomit-frame-pointer, threads and a shared library), inline.c (nested
# inline functions), work.py (python3).
. "$(dirname "$0")/lib.sh"

need_perf
command -v python3 >/dev/null || skip_all "python3 is needed to compare"
cc=$(command -v cc || command -v gcc) || skip_all "no C compiler"

tools=$TOP/tests/tools
home=$T/home

# Builds the C workloads into $T.
build_threads
"$cc" -O2 -g -o "$T/inline" "$TESTDATA/src/inline.c" ||
	skip_all "cannot build inline"

# oracle NAME: compares $T/NAME.data as perf script and restack see it.
oracle() {
	local name=$1 data=$T/$1.data
	perf_clean script -i "$data" >"$T/$name.perf" 2>/dev/null
	if ! restack_clean convert "$data" --to script -o "$T/$name.rs" \
		2>"$T/$name.err"; then
		fail "$name: restack convert --to script" "$(cat "$T/$name.err")"
		return
	fi
	check "$name: stacks equal perf script's where perf reaches the root" \
		python3 "$tools/compare_stacks.py" "$T/$name.perf" "$T/$name.rs" 99.9
	# The folded writer agrees with folding restack's own script output.
	restack_clean convert "$data" -o "$T/$name.folded" 2>/dev/null
	python3 "$tools/collapse.py" "$T/$name.rs" >"$T/$name.rs.folded"
	same_file "$T/$name.rs.folded" "$T/$name.folded" \
		"$name: folded output equals collapse of script output"
	# Every sample counted once, in exactly one end reason.
	restack_clean stats "$data" >"$T/$name.stats" 2>&1
	check "$name: stats end reasons add up to the samples" \
		awk '/^  samples/ { n = $2 } /^end reasons/ { e = 1; next }
		     /^frames by origin/ { e = 0 }
		     e { sum += $(NF - 1) }
		     END { if (n == 0 || sum != n) { print sum " != " n; exit 1 } }' \
		"$T/$name.stats"
}

if record -e cpu-clock -F 2000 --call-graph dwarf -o "$T/threads.data" \
	-- "$T/threads" 2000 >/dev/null; then
	oracle threads
	# The library and both threads were unwound to start_thread/clone3.
	check "threads: folded stacks pass through libwork.so and the threads" \
		grep -q 'clone3;start_thread;worker;mid;.*leaf;lib_work ' \
		"$T/threads.folded"
	out=$(restack_clean stats "$T/threads.data")
	root=$(awk '/^  reached root/ { gsub(/[(%)]/, "", $4); print $4 }' <<<"$out")
	check "threads: at least 99% of samples reach the root ($root%)" \
		awk -v r="$root" 'BEGIN { exit !(r >= 99) }'
else
	fail "threads: perf record"
fi

if record -e cpu-clock -F 4000 --call-graph dwarf -o "$T/inline.data" \
	-- "$T/inline" 60000 >/dev/null; then
	oracle inline
	check "inline: inline frames appear (outer;churn;mix3;step)" \
		grep -q 'main;outer;churn;mix3' "$T/inline.folded"
	restack_clean convert "$T/inline.data" --no-inline -o "$T/noinl.folded"
	check "inline: --no-inline drops them" \
		bash -c "! grep -q 'churn' '$T/noinl.folded'"
else
	fail "inline: perf record"
fi

if [ -x /usr/bin/python3 ]; then
	if record -e cpu-clock -F 2000 --call-graph dwarf -o "$T/py.data" \
		-- /usr/bin/python3 "$TESTDATA/src/work.py" 2 >/dev/null; then
		oracle py
	else
		fail "py: perf record"
	fi
else
	skip "py: oracle" "no /usr/bin/python3"
fi

# Options of the folded writer.
d=$T/threads.data
if [ -f "$d" ]; then
	restack_clean convert "$d" --tid -o "$T/tid.folded"
	check "--tid prefixes comm-pid/tid" \
		grep -qE '^threads-[0-9]+/[0-9]+;' "$T/tid.folded"
	restack_clean convert "$d" --pid -o "$T/pid.folded"
	check "--pid prefixes comm-pid" grep -qE '^threads-[0-9]+;' "$T/pid.folded"
	restack_clean convert "$d" --weight period -o "$T/period.folded"
	a=$(awk '{ s += $NF } END { print s }' "$T/threads.folded")
	b=$(awk '{ s += $NF } END { print s }' "$T/period.folded")
	check "--weight period sums periods (cpu-clock: 1e9/F ns each)" \
		test "$b" -gt "$a"
	restack_clean convert "$d" --no-kernel -o "$T/nok.folded"
	check "--no-kernel leaves no kernel frames" \
		bash -c "! grep -qE 'entry_SYSCALL|asm_sysvec|\\[kernel\\]' '$T/nok.folded'"
	restack_clean convert "$d" --kallsyms /dev/null -o "$T/nokallsyms.folded" 2>/dev/null
	if grep -q 'do_syscall_64\|asm_sysvec' "$T/threads.folded"; then
		check "without kernel symbols, kernel frames are [kernel]" \
			grep -q '\[kernel\]' "$T/nokallsyms.folded"
	fi
	restack_clean convert "$d" -o "$T/again.folded"
	same_file "$T/threads.folded" "$T/again.folded" "output is deterministic"
	restack_clean convert "$d" -o - >"$T/stdout.folded"
	same_file "$T/threads.folded" "$T/stdout.folded" "-o - writes the same"
	restack_clean convert "$d" --to nonsense -o "$T/x" 2>/dev/null
	is "$?" 64 "an unknown --to is a usage error (64)"
	check "a failed conversion leaves no output file" test ! -e "$T/x"
fi

done_testing
