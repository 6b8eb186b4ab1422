#!/bin/bash
# tracepoint.sh - tracepoint events through libtraceevent: `restack dump`
# decodes every tracepoint sample of captures recorded here (file and
# pipe mode) from the capture's tracing data, with the same text and
# field values as perf script (tests/tools/trace_compare.py); events the
# capture does not name are named from it; `convert --event
# sched:sched_switch` builds an off-CPU profile from the switch samples'
# stacks.
. "$(dirname "$0")/lib.sh"

grep -q '^#define HAVE_TRACEEVENT' "$TOP/config.h" 2>/dev/null ||
	skip_all "restack was built without libtraceevent"

# A capture without the event_desc feature (as from a perf that did not
# write it): the tracepoint event is named from the tracing data.
python3 "$TOP/tests/tools/drop_feature.py" "$TESTDATA/perf/tp-multi.data" \
	"$T/nodesc.data" 12
check "no event_desc: the tracepoint event is named from the tracing data" \
	grep -q '^  1 sched:sched_switch type=2 ' <("$RESTACK" info "$T/nodesc.data")
want=$("$RESTACK" info "$TESTDATA/perf/tp-multi.data" |
	awk '/^samples/ { s = 1 } s && $1 == "sched:sched_switch" { print $2; exit }')
"$RESTACK" convert -q --event sched:sched_switch "$T/nodesc.data" -o "$T/nodesc.folded"
is "$(awk '{ t += $NF } END { print t + 0 }' "$T/nodesc.folded")" "$want" \
	"no event_desc: --event sched:sched_switch finds its $want samples"

need_perf
cc=$(command -v cc || command -v gcc) || skip_all "no C compiler"
record -e sched:sched_switch -o "$T/probe.data" -- true >/dev/null 2>&1 ||
	skip_all "perf cannot record tracepoints here: $(grep -v '^Error:' "$T/record.err" | head -n 1)"

build_threads

# A shell that sleeps and runs programs: switches, wakeups, forks and
# execs (sched_process_exec has a __data_loc string).
events="-e sched:sched_switch -e sched:sched_wakeup -e sched:sched_process_fork -e sched:sched_process_exec -e sched:sched_process_exit"
work='for i in 1 2 3 4 5 6; do sleep 0.01; /bin/true; done'

# decoded NAME: compares restack dump and perf script on $T/NAME.data.
decoded() {
	local name=$1 out
	if ! restack_clean dump "$T/$name.data" >"$T/$name.dump" 2>"$T/$name.err"; then
		fail "$name: restack dump" "$(cat "$T/$name.err")"
		return
	fi
	perf_clean script -i "$T/$name.data" -F tid,time,event,trace --ns -G \
		>"$T/$name.perf" 2>/dev/null
	out=$(python3 "$TOP/tests/tools/trace_compare.py" "$T/$name.dump" "$T/$name.perf")
	check "$name: restack dump decodes every tracepoint record as perf script does ($out)" \
		python3 "$TOP/tests/tools/trace_compare.py" "$T/$name.dump" "$T/$name.perf"
	check "$name: no warning from dump" test ! -s "$T/$name.err"
}

# shellcheck disable=SC2086
if record $events --call-graph dwarf,4096 -o "$T/sh.data" -- /bin/sh -c "$work" >/dev/null; then
	decoded sh
	check "sh: every kind of event decoded" \
		awk '/ tp=sched:sched_switch /{a=1} / tp=sched:sched_wakeup /{b=1}
		     / tp=sched:sched_process_exec .*filename="\/bin\/(true|sleep)"/{c=1}
		     / tp=sched:sched_process_fork /{d=1}
		     END { exit !(a && b && c && d) }' "$T/sh.dump"
else
	fail "sh: perf record"
fi

# Pipe mode: the tracing data comes as a TRACING_DATA record.
# shellcheck disable=SC2086
if (cd "$T" && perf_clean record -q $events -o - -- /bin/sh -c "$work" \
	>"$T/pipe.data" 2>"$T/record.err"); then
	decoded pipe
else
	fail "pipe: perf record -o -" "$(head -n 5 "$T/record.err")"
fi

# Off-CPU: the stacks where threads were switched out, and the on-CPU
# profile of the same capture.
if record -e sched:sched_switch -e cpu-clock -F 2000 --call-graph dwarf \
	-o "$T/threads.data" -- "$T/threads" 800 >/dev/null; then
	decoded threads
	switches=$(grep -c ' tp=sched:sched_switch ' "$T/threads.dump")
	if restack_clean convert --event sched:sched_switch "$T/threads.data" \
		-o "$T/off.folded" 2>"$T/err"; then
		total=$(awk '{ t += $NF } END { print t + 0 }' "$T/off.folded")
		is "$total" "$switches" "threads: off-CPU profile counts every switch ($switches)"
		check "threads: off-CPU stacks run from main into the scheduler" \
			grep -q '^threads;_start;.*;main;.*;__schedule ' "$T/off.folded"
	else
		fail "threads: convert --event sched:sched_switch" "$(cat "$T/err")"
	fi
	restack_clean convert --event cpu-clock "$T/threads.data" -o "$T/on.folded" 2>/dev/null
	check "threads: --event cpu-clock gives the on-CPU profile (lib_work)" \
		grep -q ';lib_work ' "$T/on.folded"
	restack_clean convert --event sched:sched_switch --to pprof \
		"$T/threads.data" -o "$T/off.pb.gz" 2>/dev/null
	check "threads: the off-CPU pprof names its values after the event" \
		grep -q 'sched:sched_switch' <(gzip -dc "$T/off.pb.gz" | strings)
else
	fail "threads: perf record"
fi
done_testing
