# lib.sh - helpers for tests/cli/*.sh and tests/corrupt/*.sh; source it:
#
#   . "$(dirname "$0")/../cli/lib.sh"
#
# It provides
#   $TOP $RESTACK $TESTDATA    repository, restack binary, testdata/
#   $T                         a private temporary directory, removed at exit
#   ok NAME | fail NAME [DIAG...] | skip NAME REASON | skip_all REASON
#   check NAME CMD...          ok when CMD succeeds, else fail with its output
#   is GOT WANT NAME           ok when the two strings are equal
#   same_file A B NAME         ok when the files are equal, else a diff
#   need_perf                  skip_all (exit 77) unless perf can record here
#   record ARGS...             perf record -q ARGS in $T with a clean
#                              environment (env -i, HOME=$T/home);
#                              returns 77 when perf_event_open is refused
#   build_prog                 compiles testdata/src/prog.c to $T/prog
#   build_threads              threads.c + libwork.c to $T/threads, libwork.so
#   restack_clean ARGS...      restack under env -i, HOME=$T/home
#   done_testing               exits 1 if any check failed, else 0
# and prints the protocol tests/run.sh reads (see run.sh).
set -u

: "${TOP:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
: "${BUILD:=$TOP/build}"
: "${RESTACK:=$BUILD/restack}"
TESTDATA=$TOP/testdata
export TOP BUILD RESTACK TESTDATA LC_ALL=C

T=$(mktemp -d "${TMPDIR:-/tmp}/restack-test.XXXXXX")
mkdir -p "$T/home"
# the DWARF cache of restack run outside restack_clean (dwcache.h)
export XDG_CACHE_HOME=$T/cache
trap '[ -n "${RESTACK_KEEP_TMP:-}" ] || rm -rf "$T"' EXIT

lib_failed=0

ok() { echo "ok - $*"; }

fail() {
	local name=$1
	shift
	echo "not ok - $name"
	lib_failed=1
	local l
	for l in "$@"; do
		printf '%s\n' "$l" | sed 's/^/# /'
	done
}

skip() { echo "skip - $1 (${2:-no reason given})"; }

skip_all() {
	echo "skip - $(basename "$0") ($*)"
	exit 77
}

# check NAME CMD...: ok when CMD succeeds.  On failure the diagnostics
# show CMD, its output and, when its last argument is a file (grep -q
# PATTERN FILE), that file's last lines.
check() {
	local name=$1 o last
	shift
	if o=$("$@" 2>&1); then
		ok "$name"
	else
		last=${!#}
		fail "$name" "command: $*" "$(printf '%s\n' "$o" | tail -n 20)" \
			"$([ -f "$last" ] && { echo "$last ends with:"; tail -n 10 "$last" | cut -c1-200; })"
	fi
}

is() {
	if [ "$1" = "$2" ]; then
		ok "$3"
	else
		fail "$3" "got:  $1" "want: $2"
	fi
}

same_file() {
	# copies, so that a <(...) read by cmp is still there for diff
	local a=$T/.same_file.1 b=$T/.same_file.2

	if ! cat "$1" >"$a" 2>/dev/null || ! cat "$2" >"$b" 2>/dev/null; then
		fail "$3" "cannot read $1 or $2"
	elif cmp -s "$a" "$b"; then
		ok "$3"
	else
		fail "$3" "$(diff -u --label "$1" --label "$2" "$a" "$b" |
			     head -n 40)"
	fi
	rm -f "$a" "$b"
}

done_testing() {
	exit $lib_failed
}

# Runs perf (the one on the caller's PATH) with the clean environment
# fixtures and tests are recorded in.
PERF=$(command -v perf 2>/dev/null || echo perf)
perf_clean() {
	env -i PATH=/usr/bin:/bin HOME="$T/home" "$PERF" "$@"
}

record() {
	local rc
	(cd "$T" && perf_clean record -q "$@") 2>"$T/record.err"
	rc=$?
	if [ $rc -ne 0 ] && grep -qiE 'perf_event_open|permission|not supported|Access to performance monitoring' "$T/record.err"; then
		return 77
	fi
	[ $rc -ne 0 ] && sed 's/^/# perf: /' "$T/record.err" | head -n 10
	return $rc
}

need_perf() {
	command -v perf >/dev/null 2>&1 || skip_all "perf is not installed"
	perf version >/dev/null 2>&1 || skip_all "perf does not run (no perf for this kernel?)"
	record -e cpu-clock -o "$T/probe.data" -- true >/dev/null 2>&1
	case $? in
	0) rm -f "$T/probe.data" ;;
	77) skip_all "perf cannot record here: $(grep -v '^Error:' "$T/record.err" | head -n 1)" ;;
	*) skip_all "perf record fails: $(grep -v '^Error:' "$T/record.err" | head -n 1)" ;;
	esac
}

# Runs restack with the clean environment the tests record in (HOME=$T/home:
# the build-id cache perf record filled).
restack_clean() {
	env -i PATH=/usr/bin:/bin HOME="$T/home" "$RESTACK" "$@"
}

# Builds testdata/src/threads.c + libwork.c (-O2 -fomit-frame-pointer: only
# CFI unwinds them) to $T/threads and $T/libwork.so.
build_threads() {
	local cc
	cc=$(command -v cc || command -v gcc) || skip_all "no C compiler"
	"$cc" -O2 -g -fomit-frame-pointer -fPIC -shared -o "$T/libwork.so" \
		"$TESTDATA/src/libwork.c" -lm || skip_all "cannot build libwork.so"
	"$cc" -O2 -g -fomit-frame-pointer -o "$T/threads" \
		"$TESTDATA/src/threads.c" -L"$T" -lwork -Wl,-rpath,"$T" \
		-lpthread || skip_all "cannot build threads"
}

# record_two_procs FREQ MS1 MS2: threads.c (build_threads) and a copy of
# it named busy, running at once for MS1 and MS2 ms, recorded at FREQ Hz
# into $T/mp.data (two processes of three threads); skips the script
# when perf cannot record.
record_two_procs() {
	build_threads
	cp "$T/threads" "$T/busy"
	record -e cpu-clock -F "$1" --call-graph dwarf,4096 \
		-o "$T/mp.data" -- sh -c "./threads $2 & ./busy $3 & wait" \
		>/dev/null || skip_all "perf record failed"
}

# sample_names CAPTURE: a line per sample, in `restack dump`'s order:
# "tid time pid comm", time as perf script prints it, comm the thread's
# at that sample from COMM and FORK records (":TID" when none named it).
sample_names() {
	"$RESTACK" dump "$1" | awk '
	function f(k,  i) { for (i = 3; i <= NF; i++) if (index($i, k "=") == 1)
		return substr($i, length(k) + 2); return "" }
	$3 == "COMM" { c = f("comm"); gsub(/"/, "", c); name[f("tid")] = c }
	$3 == "FORK" { t = f("tid"); p = f("ptid")
		if (p in name) name[t] = name[p]; else delete name[t] }
	$3 == "SAMPLE" { t = f("tid")
		print t, substr($2, 1, length($2) - 3), f("pid"),
		      (t in name) ? name[t] : ":" t }'
}

build_prog() {
	local cc
	cc=$(command -v cc || command -v gcc || command -v clang) ||
		skip_all "no C compiler to build the workload"
	"$cc" -O2 -g -o "$T/prog" "$TESTDATA/src/prog.c" ||
		skip_all "cannot compile testdata/src/prog.c"
}

# --- comparing restack with perf ------------------------------------

# share FOLDED SELECT GOOD: "good total": the sample counts of the folded
# stacks matching the regular expression SELECT, and of those also
# matching GOOD.
share() {
	awk -v sel="$2" -v good="$3" '
		$0 ~ sel { n += $NF; if ($0 ~ good) g += $NF }
		END { print g + 0, n + 0 }' "$1"
}

# end_reasons STATS: "COUNT REASON" for each end reason in the output of
# `restack stats` saved in STATS.
end_reasons() {
	awk '/^end reasons/ { e = 1; next } /^frames by origin/ { e = 0 }
	     e { n = $(NF - 1); $NF = ""; $(NF - 1) = ""; sub(/^ +/, "")
		 sub(/ +$/, ""); print n, $0 }' "$1"
}

# restack_counts FILE: "TOTAL n", "R TYPE n" per record type and
# "S EVENT n" per event with samples, from `restack info FILE`, sorted.
# Reads FILE on standard input when it is '-'.
restack_counts() {
	"$RESTACK" info "$1" | awk '
		/^records [0-9]+$/ { sec = "R"; print "TOTAL", $2; next }
		/^samples [0-9]+$/ { sec = "S"; next }
		/^$/ { sec = "" }
		sec != "" && /^  [^ ]+ [0-9]+$/ {
			if (sec == "R" || $2 != 0) print sec, $1, $2
		}' | sort
}

# perf_counts FILE: the same from `perf report -D`'s "Aggregated stats"
# (records by type, then "EVENT stats:" blocks of samples per event).
perf_counts() {
	perf_clean report -D -i "$1" 2>/dev/null | awk '
		/^Aggregated stats:/ { agg = 1; next }
		!agg { next }
		/^ *TOTAL events:/ { print "TOTAL", $3; next }
		/ stats:$/ { ev = $0; sub(/^ */, "", ev); sub(/ stats:$/, "", ev); next }
		/^ *[A-Z_0-9]+ events: / {
			if (ev == "") print "R", $1, $3
			else if ($1 == "SAMPLE" && $3 != 0) print "S", ev, $3
		}' | sort
}

# perf_script_counts FILE: "S EVENT n" per event from `perf script`.
perf_script_counts() {
	perf_clean script -F event,time --hide-call-graph -i "$1" 2>/dev/null |
		awk 'NF { e = $NF; sub(/:$/, "", e); n[e]++ }
		     END { for (e in n) print "S", e, n[e] }' | sort
}

# dump_order_ok FILE: succeeds when `restack dump FILE` prints one line per
# record (as many as `restack info` counts) with non-decreasing times;
# otherwise prints why.
dump_check() {
	local file=$1 want=$2 lines
	"$RESTACK" dump "$file" >"$T/dump.out" || { echo "restack dump failed"; return 1; }
	lines=$(wc -l <"$T/dump.out")
	if [ "$lines" -ne "$want" ]; then
		echo "restack dump printed $lines lines for $want records"
		return 1
	fi
	awk '$2 != "-" {
		split($2, t, ".")
		if (seen && (t[1] + 0 < s || (t[1] + 0 == s && t[2] + 0 < ns))) {
			print "line " NR ": time " $2 " goes back from " s "." ns
			bad = 1; exit
		}
		s = t[1] + 0; ns = t[2] + 0; seen = 1
	} END { exit bad }' "$T/dump.out"
}

# compare_with_perf FILE LABEL: restack info's record and sample counts,
# perf report -D's aggregated stats and perf script's samples agree; dump
# prints every record in time order.
compare_with_perf() {
	local f=$1 label=$2 total
	restack_counts "$f" >"$T/rc.txt"
	perf_counts "$f" >"$T/pc.txt"
	if [ ! -s "$T/pc.txt" ]; then
		fail "$label: perf report -D prints aggregated stats"
		return
	fi
	same_file "$T/pc.txt" "$T/rc.txt" \
		"$label: record counts and samples per event equal perf report -D"
	perf_script_counts "$f" >"$T/ps.txt"
	grep '^S ' "$T/rc.txt" >"$T/rs.txt"
	same_file "$T/ps.txt" "$T/rs.txt" \
		"$label: samples per event equal perf script's"
	total=$(awk '$1 == "TOTAL" { print $2 }' "$T/rc.txt")
	check "$label: restack dump prints $total records in time order" \
		dump_check "$f" "$total"
}
