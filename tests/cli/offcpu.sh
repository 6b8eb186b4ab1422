#!/bin/bash
# offcpu.sh - off-CPU and wall-clock profiles (--profile offcpu|wall,
# docs/offcpu.md) of testdata/src/offcpu.c recorded here with the
# README's line: each blocking function's off-CPU total within 5% of the
# time its thread measured around it, its stacks reaching the thread's
# root; each thread's wall-clock total within 2% of its measured
# lifetime; go tool pprof reads the same totals; -j1, -j2 and pipe input
# give the same bytes; a capture without switches is refused.
. "$(dirname "$0")/lib.sh"

grep -q '^#define HAVE_TRACEEVENT' "$TOP/config.h" 2>/dev/null ||
	skip_all "restack was built without libtraceevent"

# usage, before anything is recorded
"$RESTACK" convert --profile idle "$TESTDATA/perf/file-dwarf.data" \
	-o "$T/x.folded" 2>"$T/usage.err"
is "$?" 64 "--profile idle: usage error"
"$RESTACK" convert --profile offcpu "$TESTDATA/perf/file-dwarf.data" \
	-o "$T/x.data" 2>"$T/usage2.err"
is "$?" 64 "--profile offcpu to perf.data: usage error"
"$RESTACK" convert --profile offcpu "$TESTDATA/perf/file-dwarf.data" \
	-o "$T/x.folded" 2>"$T/nosw.err"
is "$?" 2 "a capture without sched_switch samples: exit 2"
check "... saying what to record" \
	grep -q 'no sched:sched_switch samples, which --profile offcpu needs: record with perf record -e cpu-clock -e sched:sched_switch --switch-events --call-graph dwarf' "$T/nosw.err"
check "... in one line" test "$(wc -l <"$T/nosw.err")" -eq 1

for f in folded pprof script; do
	"$RESTACK" convert -q --to $f "$TESTDATA/perf/tp-multi.data" -o "$T/d.$f"
	"$RESTACK" convert -q --to $f --profile cpu \
		"$TESTDATA/perf/tp-multi.data" -o "$T/c.$f"
	same_file "$T/d.$f" "$T/c.$f" "--profile cpu: $f as without it"
done

# The fixture (sched_switch and cpu-clock samples, no switch records):
# the intervals as tests/tools/offcpu_pair.awk pairs the dumped records.
fx=$TESTDATA/perf/tp-multi.data
"$RESTACK" convert -q --profile offcpu "$fx" -o "$T/fx.folded"
is "$?" 0 "fixture: --profile offcpu converts"
want=$("$RESTACK" dump "$fx" | awk -f "$TOP/tests/tools/offcpu_pair.awk")
got=$("$RESTACK" convert -q --profile offcpu --to script "$fx" -o - |
	awk '$6 == "offcpu:" { t += $5; n++ } END { printf "%.0f %d\n", t, n }')
is "$got" "$want" "fixture: off-CPU total and intervals as paired from the dump"
"$RESTACK" convert -q --profile wall "$fx" -o "$T/fxw.folded"
clock=$("$RESTACK" dump "$fx" | awk '$3 == "SAMPLE" && /event="cpu-clock"/ {
	for (i = 4; i <= NF; i++) if ($i ~ /^period=/) t += substr($i, 8) }
	END { printf "%.0f\n", t }')
got=$(awk '{ t += $NF } END { printf "%.0f\n", t }' "$T/fxw.folded")
is "$got" "$(( ${want% *} + clock ))" "fixture: wall = off-CPU + cpu-clock periods"
"$RESTACK" convert --profile offcpu "$fx" -o "$T/fx2.folded" 2>"$T/fx.err"
check "fixture: a note that switch records would end intervals sooner" \
	grep -q 'no switch records (perf record --switch-events)' "$T/fx.err"

# A capture whose sampling perf throttled (testdata/README.md): a warning
# that on-CPU time is missing; its fixed periods (-c, no PERIOD in the
# samples) weigh as perf script shows them.
th=$TESTDATA/perf/throttled.data
"$RESTACK" convert --profile wall "$th" -o "$T/th.folded" 2>"$T/th.err"
is "$?" 0 "throttled: --profile wall converts"
check "throttled: a warning with the number of THROTTLE records" \
	grep -q 'perf throttled sampling 24 times' "$T/th.err"
is "$("$RESTACK" convert -q --to script "$th" -o - |
	awk '$5 == "cpu-clock:" { n++; if ($4 != "100000") bad++ }
	     END { print n + 0, bad + 0 }')" "98 0" \
	"fixed periods: every cpu-clock sample weighs the attribute's 100000 ns"
is "$(awk '{ t += $NF } END { printf "%.0f", t }' "$T/th.folded")" \
	"$(( $("$RESTACK" convert -q --profile offcpu --to script "$th" -o - |
		awk '$6 == "offcpu:" { t += $5 } END { printf "%.0f", t }') + \
	     98 * 100000 ))" "fixed periods: wall = off-CPU + 98 periods"

need_perf
cc=$(command -v cc || command -v gcc) || skip_all "no C compiler"
record -e sched:sched_switch -o "$T/probe.data" -- true >/dev/null 2>&1 ||
	skip_all "perf cannot record tracepoints here: $(grep -v '^Error:' "$T/record.err" | head -n 1)"
"$cc" -O2 -g -fomit-frame-pointer -o "$T/offcpu" "$TESTDATA/src/offcpu.c" \
	-lpthread || skip_all "cannot build offcpu"

# The README's line.
line="-e cpu-clock -e sched:sched_switch --switch-events --call-graph dwarf"
# A capture that lost records (perf's ring full: a busy machine) misses
# intervals, one whose sampling perf throttled (interrupts too slow on a
# busy machine) misses on-CPU time: recorded again (with a larger ring,
# -m), three times at most.
ring=
for try in 1 2 3 4; do
	[ $try = 4 ] && skip_all "perf lost records in 3 recordings (a busy machine)"
	# shellcheck disable=SC2086
	record $line $ring -o "$T/off.data" -- "$T/offcpu" "$T/threads.txt" \
		>/dev/null || skip_all "perf record failed"
	lost=$("$RESTACK" info "$T/off.data" |
		awk '$1 == "lost" { n += $2 + $4 } $1 == "THROTTLE" { n += $2 }
		     END { print n + 0 }')
	[ "$lost" = 0 ] && break
	echo "# try $try: the capture lost $lost records and samples, or perf throttled sampling"
	ring="-m 16M"
done

restack_clean convert --profile offcpu --stats "$T/off.data" \
	-o "$T/off.folded" 2>"$T/off.err"
is "$?" 0 "--profile offcpu converts"
restack_clean convert --profile wall --tid "$T/off.data" \
	-o "$T/wall.folded" 2>/dev/null
is "$?" 0 "--profile wall converts"

# within PCT NAME GOT WANT: |GOT - WANT| <= PCT% of WANT
within() {
	awk -v p="$1" -v g="$3" -v w="$4" \
		'BEGIN { d = g - w; if (d < 0) d = -d; exit !(w > 0 && d * 100 <= p * w) }'
}

# blocking FUNC THREAD: the off-CPU time of stacks through FUNC against
# the time THREAD measured around its calls.
blocking() {
	local fn=$1 name=$2 got want
	want=$(awk -v n="$name" '$1 == "tid" && $2 == n { print $5 }' "$T/threads.txt")
	got=$(awk -v f=";$fn;" 'index($0, f) { t += $NF } END { printf "%.0f\n", t }' "$T/off.folded")
	check "$fn: off-CPU $got ns within 5% of the $want ns $name waited" \
		within 5 "$name" "$got" "$want"
	check "$fn: every stack reaches the thread's root" \
		awk -v f=";$fn;" 'index($0, f) { n++; if ($0 !~ /^offcpu;clone3;start_thread;/ || /\[truncated/) bad++ }
			END { exit !(n > 0 && !bad) }' "$T/off.folded"
}
blocking sleep_20ms sleeper
blocking read_pipe reader
blocking take_lock locker
check "the reasons are named: sleeping in nanosleep" \
	grep -q ';sleep_20ms;.*;\[off-cpu: S sleeping\] ' "$T/off.folded"

# Each thread's wall-clock total against its measured lifetime.
while read -r _ name tid life _; do
	got=$(awk -v t="/$tid" '{ split($0, a, ";") }
		substr(a[1], length(a[1]) - length(t) + 1) == t { s += $NF }
		END { printf "%.0f\n", s }' "$T/wall.folded")
	check "wall: $name ($tid) $got ns within 2% of its $life ns lifetime" \
		within 2 "$name" "$got" "$life"
done <"$T/threads.txt"
check "convert --stats: the off-CPU table, per thread" \
	grep -qE '^ +[0-9]+ offcpu +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9]+ +0 +0$' "$T/off.err"
restack_clean stats --profile wall "$T/off.data" >"$T/stats.txt" 2>/dev/null
check "stats --profile wall: the table, a line per thread" \
	test "$(grep -cE '^ +[0-9]+ offcpu +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9]+ +0 +0$' "$T/stats.txt")" -eq 7

# the same in every -j, and from a pipe
restack_clean convert -j2 --profile wall --tid "$T/off.data" \
	-o "$T/wall2.folded" 2>/dev/null
same_file "$T/wall.folded" "$T/wall2.folded" "wall: -j2 gives the same bytes"
restack_clean stats -j2 --profile wall --stats-json - "$T/off.data" \
	>"$T/stats.json" 2>/dev/null
check "wall: -j2 unwinds on two workers (their samples in --stats-json)" \
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
d = d["inputs"][0] if "inputs" in d else d
w = d["worker_samples"]
sys.exit(not (d["workers"] == 2 and len(w) == 2 and min(w) > 0))' "$T/stats.json"
restack_clean convert --profile wall --tid - -o "$T/wall3.folded" \
	<"$T/off.data" 2>/dev/null
same_file "$T/wall.folded" "$T/wall3.folded" \
	"wall: the same sums from standard input (records paired as read)"
for f in pprof svg script speedscope firefox; do
	restack_clean convert -j1 --profile wall --to $f "$T/off.data" \
		-o "$T/w1.$f" 2>/dev/null
	restack_clean convert -j2 --profile wall --to $f "$T/off.data" \
		-o "$T/w2.$f" 2>/dev/null
	same_file "$T/w1.$f" "$T/w2.$f" "wall $f: -j1 and -j2 give the same bytes"
done
check "svg: the title says which profile" \
	grep -q 'Wall-clock Flame Graph' "$T/w1.svg"
restack_clean convert --profile offcpu "$T/off.data" \
	-o "$T/off.speedscope.json" 2>/dev/null
check "speedscope: the off-CPU weights are nanoseconds" \
	grep -q '"unit":"nanoseconds"' "$T/off.speedscope.json"
check "firefox: no CPU deltas (the weights hold off-CPU time too)" \
	test "$(gzip -dc "$T/w1.firefox" | grep -c threadCPUDelta)" -eq 0

ring=
for try in 1 2 3; do
	# shellcheck disable=SC2086
	(cd "$T" && perf_clean record -q $line $ring -o - -- "$T/offcpu" \
		"$T/pthreads.txt" 2>"$T/precord.err" >"$T/pipe.data") ||
		fail "pipe-mode recording" "$(cat "$T/precord.err")"
	lost=$("$RESTACK" info "$T/pipe.data" | awk '$1 == "lost" { print $2 + $4 }')
	[ "$lost" = 0 ] && break
	echo "# pipe try $try: the capture lost $lost records and samples"
	ring="-m 16M"
done
restack_clean convert --profile offcpu - -o "$T/p1.folded" <"$T/pipe.data" 2>/dev/null
restack_clean convert -j2 --profile offcpu - -o "$T/p2.folded" <"$T/pipe.data" 2>/dev/null
same_file "$T/p1.folded" "$T/p2.folded" "pipe input: -j1 and -j2 give the same bytes"
want=$(awk '$1 == "tid" && $2 == "sleeper" { print $5 }' "$T/pthreads.txt")
got=$(awk '/;sleep_20ms;/ { t += $NF } END { printf "%.0f\n", t }' "$T/p1.folded")
check "pipe input: sleep_20ms $got ns within 5% of $want ns" within 5 sleeper "$got" "$want"

# A thread still waiting when recording stops (perf stops when the shell
# exits, its background sleep sleeps on): counted to the capture's end,
# marked.
# shellcheck disable=SC2086
if record $line -o "$T/end.data" -- /bin/sh -c 'sleep 0.5 & sleep 0.05' >/dev/null; then
	restack_clean convert --profile offcpu --stats "$T/end.data" \
		-o "$T/end.folded" 2>"$T/end.err"
	check "a thread waiting at the end: its interval is marked" \
		grep -q '^sleep;.*;\[off-cpu: S sleeping, at capture end\] [0-9]' "$T/end.folded"
	check "... and counted in stats' 'at end' column" \
		grep -qE '^ +[0-9]+ sleep +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9]+ +0 +1$' "$T/end.err"
else
	fail "recording sh -c 'sleep 0.5 & sleep 0.05'"
fi

# go tool pprof reads the same totals: the off_cpu and wall columns.
if command -v go >/dev/null 2>&1 && go version >/dev/null 2>&1; then
	mkdir -p "$T/gohome"
	env HOME="$T/gohome" GOCACHE="$T/gohome/cache" GOPATH="$T/gohome/go" \
		GOTOOLCHAIN=local PPROF_TMPDIR="$T/gohome/pprof" \
		go tool pprof -symbolize=none -raw "$T/w1.pprof" >"$T/raw.txt" 2>"$T/raw.err"
	check "go tool pprof -raw: sample types cpu, off_cpu, wall in nanoseconds" \
		grep -q '^samples/count cpu/nanoseconds off_cpu/nanoseconds wall/nanoseconds\[dflt\]' "$T/raw.txt"
	sums=$(awk '/^Samples:/ { s = 1; next } /^Locations/ { s = 0 }
		s && $4 ~ /:$/ { c += $2; o += $3; w += $4 }
		END { printf "%.0f %.0f %.0f\n", c, o, w }' "$T/raw.txt")
	wall=$(awk '{ t += $NF } END { printf "%.0f\n", t }' "$T/wall.folded")
	off=$(awk '/\[off-cpu: / { t += $NF } END { printf "%.0f\n", t }' "$T/wall.folded")
	read -r c o w <<<"$sums"
	is "$o" "$off" "go tool pprof: off_cpu total = the folded off-CPU total"
	is "$w" "$wall" "go tool pprof: wall total = the folded wall total"
	is "$((c + o))" "$w" "go tool pprof: cpu + off_cpu = wall"
else
	skip "go tool pprof checks" "go is not installed (golang-go)"
fi

done_testing
