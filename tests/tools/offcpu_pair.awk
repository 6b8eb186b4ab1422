# offcpu_pair.awk - the pairing docs/offcpu.md describes, over `restack dump`
# lines, written apart from cmd/profile.c to check it: prints the off-CPU
# total in nanoseconds and the number of intervals.  (dump shows no
# thread for SWITCH records: captures without them only.)
function val(k,   i) {
	for (i = 4; i <= NF; i++)
		if (index($i, k "=") == 1)
			return substr($i, length(k) + 2)
	return ""
}
function close_at(tid, t) {
	if (tid in open) {
		total += t > open[tid] ? t - open[tid] : 0
		n++
		delete open[tid]
	}
}
$3 == "SAMPLE" || $3 == "EXIT" || $3 == "SWITCH" || $3 == "SWITCH_CPU_WIDE" {
	split($2, tt, ".")
	t = tt[1] * 1e9 + tt[2]
	last = t > last ? t : last
	tid = val("tid")
	if ($3 == "EXIT") { close_at(tid, t); next }
	if ($3 != "SAMPLE") { if ($0 !~ /out/) close_at(tid, t); next }
	ev = val("event")
	end = t
	if (ev == "\"cpu-clock\"" && (tid in open) && t - open[tid] > val("period") + 0)
		end = t - val("period")
	close_at(tid, end)
	if (ev != "\"sched:sched_switch\"")
		next
	nx = val("next_pid")
	if (nx != tid)
		close_at(nx, t)
	open[tid] = t
}
END { for (tid in open) close_at(tid, last); printf "%.0f %d\n", total, n }
