#!/bin/bash
# script.sh - the header line of each sample in script output has perf
# script's thread, CPU and time: no CPU column when the event recorded
# none (perf record without -a or --sample-cpu), "[NNN]" when it did
# (tp-multi: sched:sched_switch always has the CPU, its cpu-clock not).
. "$(dirname "$0")/lib.sh"

command -v perf >/dev/null || skip_all "perf is needed to compare"

# headers FILE EVENT: "tid cpu time" per sample header of EVENT ("-" for
# no CPU column); restack's thread field is pid/tid, perf's tid.
headers() {
	awk -v want="$2:" '/^[^ \t#]/ {
		cpu = "-"; tid = ""; tm = ""; ev = ""
		for (i = 2; i <= NF; i++) {
			if (tm != "") {
				if ($i ~ /:$/) { ev = $i; break }
			} else if (tid == "" && $i ~ /^[0-9]+(\/[0-9]+)?$/) {
				tid = $i; sub(/.*\//, "", tid)
			} else if ($i ~ /^\[-?[0-9]+\]$/) {
				cpu = $i
			} else if ($i ~ /^[0-9]+\.[0-9]+:$/) {
				tm = $i
			}
		}
		if (ev == want)
			print tid, cpu, tm
	}' "$1"
}

# compare NAME DATA EVENT
compare() {
	local name=$1 data=$TESTDATA/perf/$2.data event=$3
	perf_clean script -i "$data" >"$T/$name.perf" 2>/dev/null
	if ! "$RESTACK" convert -q --event "$event" "$data" --to script \
		-o "$T/$name.script" 2>"$T/err"; then
		fail "$name: restack convert --to script" "$(cat "$T/err")"
		return
	fi
	headers "$T/$name.perf" "$event" >"$T/$name.perf.h"
	headers "$T/$name.script" "$event" >"$T/$name.script.h"
	check "$name: perf script prints samples" test -s "$T/$name.perf.h"
	same_file "$T/$name.perf.h" "$T/$name.script.h" \
		"$name: thread, CPU column and time of every sample as perf script's"
}

compare file-dwarf file-dwarf cpu-clock
compare tp-cpu-clock tp-multi cpu-clock
compare tp-sched-switch tp-multi sched:sched_switch
check "file-dwarf has no CPU column" \
	bash -c '! grep -q "\[" "$1"' - "$T/file-dwarf.perf.h"
check "tp-multi's sched_switch has one" \
	grep -q '\[000\]' "$T/tp-sched-switch.perf.h"
done_testing
