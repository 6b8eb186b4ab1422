#!/bin/bash
# cxxinline.sh - inline chains of a C++ program (testdata/src/cxxsort.cc,
# g++ -O2 -g: std::sort with a lambda, std::map, a thread) named as perf
# script names them, sample by sample.  perf asks one addr2line process
# per file about each address once, in time order, and bfd's answers
# depend on what it was asked before (a function whose DWARF name is not a
# linkage name is named by the symbol table on its first lookup, then
# taken as named, renamed to a symbol starting where it does):
# unwind/a2lstate.c replays that in output order, whatever -j.
. "$(dirname "$0")/lib.sh"

need_perf
command -v python3 >/dev/null || skip_all "python3 is needed to compare"
cxx=$(command -v g++ || command -v c++) || skip_all "no C++ compiler"
"$cxx" -O2 -g -pthread -o "$T/cxxsort" "$TESTDATA/src/cxxsort.cc" ||
	skip_all "cannot build cxxsort"
tools=$TOP/tests/tools

record -e cpu-clock -F 2000 --call-graph dwarf -o "$T/cxx.data" \
	-- "$T/cxxsort" 2 >/dev/null || skip_all "perf record failed"
perf_clean script -i "$T/cxx.data" >"$T/cxx.perf" 2>/dev/null
perf_clean script --no-inline -i "$T/cxx.data" >"$T/cxx.noinl.perf" \
	2>/dev/null

# The workload has what the names depend on: the out-of-line
# std::__introsort_loop, named by its symbol, beside DWARF-named inline
# frames of the same templates.
check "perf names frames by symbol and by DWARF name" \
	sh -c 'grep -q "std::__introsort_loop<.*(/" "$1" &&
	       grep -q " __unguarded_partition<.*(inlined)" "$1"' sh \
	"$T/cxx.perf"

# compare NAME PERF RESTACK MIN: restack's script output against perf's,
# sample by sample; the counts go to the log.  PLT entries' names
# ("@plt") are not what this test is about.
compare() {
	local out rc
	out=$(python3 "$tools/compare_stacks.py" --strip-plt "$2" "$3" "$4")
	rc=$?
	echo "# $1: ${out##*$'\n'}"
	check "$1" test $rc -eq 0
}

for j in 1 2; do
	restack_clean convert -j$j "$T/cxx.data" --to script \
		-o "$T/cxx.j$j.rs" 2>"$T/cxx.err" ||
		fail "convert -j$j" "$(cat "$T/cxx.err")"
	compare "-j$j: inline chains equal perf script's (>= 99.9%)" \
		"$T/cxx.perf" "$T/cxx.j$j.rs" 99.9
done
same_file "$T/cxx.j1.rs" "$T/cxx.j2.rs" "-j1 and -j2 give the same names"
restack_clean convert -j2 "$T/cxx.data" -o "$T/cxx.j2.folded" 2>/dev/null
restack_clean convert -j1 "$T/cxx.data" -o "$T/cxx.j1.folded" 2>/dev/null
same_file "$T/cxx.j1.folded" "$T/cxx.j2.folded" \
	"folded: -j1 and -j2 give the same output"

restack_clean convert --no-inline "$T/cxx.data" --to script \
	-o "$T/cxx.noinl.rs" 2>/dev/null
compare "--no-inline: stacks equal perf script --no-inline's (100%)" \
	"$T/cxx.noinl.perf" "$T/cxx.noinl.rs" 100

done_testing
