#!/bin/bash
# filters.sh - --pid=, --tids, --comms and --time keep the same samples in
# every output, and those samples come out as without the filter.
# Capture: two processes of three threads each (threads.c, once as
# "busy"), recorded at test time; one sample of the second process comes
# before its exec, named "sh".  The samples a filter must keep are worked
# out from `restack dump` (sample times, pids and tids; names from COMM
# and FORK records), and for --time in percent from `perf script --time`
# (the same ranges must give the same samples; also on the capture
# without its first and last sample times, and converted to sysprof).
# For each filter:
#   script: the unfiltered script output's samples of that set, byte for
#     byte (-j1 and -j2);
#   folded: those samples folded (tests/tools/collapse.py);
#   pprof (go tool pprof -traces), speedscope and Firefox (read back by
#     tests/tools/profile_fold.py): the same folded stacks; svg: the
#     frames of their call tree (tests/tools/flame_check.py);
#   perf and sysprof: the output read back (`restack dump`, convert)
#     holds that set of samples, and the perf output every other record
#     of the unfiltered one (-j2: the same bytes as -j1);
#   stats: that many samples, the rest counted as filtered out.
# Bad values are usage errors (64), and bare --pid followed by a number
# says how to write the filter.
. "$(dirname "$0")/lib.sh"

need_perf
record_two_procs 2000 8000 6000
D=$T/mp.data

# the capture's samples: "tid time pid comm" (time as script prints it)
sample_names "$D" >"$T/samples"
nr=$(wc -l <"$T/samples")
[ "$nr" -ge 200 ] || skip_all "only $nr samples recorded"
pids=$(awk '$4 == "busy" || $4 == "threads" { print $3 }' "$T/samples" |
	sort -un)
bpid=$(awk '$4 == "busy" { print $3; exit }' "$T/samples")
tids=$(awk '$1 != $3 { print $1 }' "$T/samples" | sort -un | head -n 2 |
	paste -sd,)
[ -n "$bpid" ] && [ "$(echo "$pids" | wc -l)" -ge 2 ] &&
	[ -n "${tids#*,}" ] || skip_all "the capture lacks two processes' threads"
# times of the 200th and 600th samples, in full
t1=$("$RESTACK" dump "$D" | awk '$3 == "SAMPLE" && ++n == 200 { print $2 }')
t2=$("$RESTACK" dump "$D" | awk '$3 == "SAMPLE" && ++n == 600 { print $2 }')
echo "# $nr samples; processes $(echo $pids); tids $tids; busy $bpid; $t1 .. $t2"

# blocks FILE: one line per script sample, "tid time<TAB>the block" with
# its lines joined by \1.
blocks() {
	awk 'BEGIN { RS = ""; FS = "\n" }
	{ split($1, h, " "); split(h[2], pt, "/"); tm = h[3]; sub(/:$/, "", tm)
	  b = $1; for (i = 2; i <= NF; i++) b = b "\001" $i
	  print pt[2] " " tm "\t" b }' "$1"
}
# unblock: blocks back to script text
unblock() {
	cut -f 2- | awk '{ gsub(/\001/, "\n"); print; print "" }'
}

"$RESTACK" convert -q -j1 "$D" -o "$T/all.script"
blocks "$T/all.script" >"$T/all.blocks"
is "$(wc -l <"$T/all.blocks")" "$nr" "unfiltered: every sample in script"
"$RESTACK" convert -q "$D" -o "$T/all.data"
"$RESTACK" dump "$T/all.data" | awk '$3 != "SAMPLE" { $1 = ""; print }' \
	>"$T/all.other"

gopprof() {
	mkdir -p "$T/gohome"
	env HOME="$T/gohome" GOCACHE="$T/gohome/cache" GOPATH="$T/gohome/go" \
		GOTOOLCHAIN=local PPROF_TMPDIR="$T/gohome/pprof" \
		go tool pprof -symbolize=none -traces "$@"
}
fold() { python3 "$TOP/tests/tools/profile_fold.py" "$@"; }
merged() {
	awk '{ n = $NF; $NF = ""; sub(/ $/, ""); s[$0] += n }
	     END { for (k in s) print k, s[k] }' "$1" | sort
}
nocomm() { sed 's/^[^;]*;//' "$1" | merged /dev/stdin; }
# dump_keys FILE: "tid time" of the samples restack dump shows in FILE
dump_keys() {
	"$RESTACK" dump "$1" | awk '$3 == "SAMPLE" {
		for (i = 4; i <= NF; i++) if ($i ~ /^tid=/) t = substr($i, 5)
		print t, substr($2, 1, length($2) - 3) }' | sort
}

# case NAME WANT ARGS...: WANT holds the "tid time" keys to keep.
case_() {
	local name=$1 want=$2 n w
	shift 2
	sort "$want" >"$T/$name.want"
	n=$(wc -l <"$T/$name.want")
	[ "$n" -gt 0 ] && [ "$n" -lt "$nr" ] ||
		fail "$name: keeps some samples, not all ($n of $nr)"
	awk -F'\t' 'NR == FNR { k[$0]; next } $1 in k' "$T/$name.want" \
		"$T/all.blocks" >"$T/$name.blocks"
	unblock <"$T/$name.blocks" >"$T/$name.expect"
	python3 "$TOP/tests/tools/collapse.py" "$T/$name.expect" \
		>"$T/$name.efold"
	for j in 1 2; do
		"$RESTACK" convert -q -j$j "$@" "$D" -o "$T/$name.$j.script"
		same_file "$T/$name.expect" "$T/$name.$j.script" \
			"$name: script (-j$j) is the unfiltered output's $n samples"
	done
	"$RESTACK" convert -q "$@" "$D" -o "$T/$name.folded"
	same_file "$T/$name.efold" "$T/$name.folded" \
		"$name: folded is those samples folded"
	"$RESTACK" convert -q "$@" "$D" -o "$T/$name.svg"
	check "$name: svg draws their call tree" python3 \
		"$TOP/tests/tools/flame_check.py" frames "$T/$name.efold" \
		"$T/$name.svg"
	"$RESTACK" convert -q "$@" "$D" -o "$T/$name.speedscope.json"
	fold speedscope "$T/$name.speedscope.json" >"$T/$name.ss"
	nocomm "$T/$name.efold" >"$T/$name.efold.nc"
	nocomm "$T/$name.ss" >"$T/$name.ss.nc"
	same_file "$T/$name.efold.nc" "$T/$name.ss.nc" \
		"$name: speedscope's stacks are theirs"
	"$RESTACK" convert -q "$@" "$D" -o "$T/$name.json.gz"
	fold firefox "$T/$name.json.gz" >"$T/$name.ff"
	nocomm "$T/$name.ff" >"$T/$name.ff.nc"
	same_file "$T/$name.efold.nc" "$T/$name.ff.nc" \
		"$name: Firefox profile's stacks are theirs"
	if [ -n "$have_go" ]; then
		"$RESTACK" convert -q "$@" "$D" -o "$T/$name.pb.gz"
		gopprof "$T/$name.pb.gz" 2>/dev/null |
			python3 "$TOP/tests/tools/pprof_traces.py" \
			>"$T/$name.pp" 2>/dev/null
		same_file "$T/$name.efold" "$T/$name.pp" \
			"$name: pprof's stacks are theirs (go tool pprof)"
	fi
	"$RESTACK" convert -q "$@" "$D" -o "$T/$name.data"
	dump_keys "$T/$name.data" >"$T/$name.dkeys"
	same_file "$T/$name.want" "$T/$name.dkeys" \
		"$name: perf output holds those samples"
	"$RESTACK" dump "$T/$name.data" | awk '$3 != "SAMPLE" { $1 = ""; print }' \
		>"$T/$name.other"
	same_file "$T/all.other" "$T/$name.other" \
		"$name: perf output keeps every other record"
	"$RESTACK" convert -q -j2 "$@" "$D" -o "$T/$name.j2.data"
	same_file "$T/$name.data" "$T/$name.j2.data" \
		"$name: perf output of -j2 is -j1's"
	"$RESTACK" convert -q -j2 "$@" "$D" -o "$T/$name.j2.syscap"
	"$RESTACK" convert -q "$@" "$D" -o "$T/$name.syscap"
	same_file "$T/$name.syscap" "$T/$name.j2.syscap" \
		"$name: sysprof output of -j2 is -j1's"
	"$RESTACK" convert -q "$T/$name.syscap" -o "$T/$name.sc.script"
	blocks "$T/$name.sc.script" | cut -f 1 | sort >"$T/$name.skeys"
	same_file "$T/$name.want" "$T/$name.skeys" \
		"$name: sysprof output holds those samples (read back)"
	"$RESTACK" stats "$@" "$D" >"$T/$name.stats" 2>&1
	w=$(awk '$1 == "samples" { print $2 }' "$T/$name.stats")
	is "$w" "$n" "$name: stats counts those samples"
	w=$(awk '$1 == "filtered" { print $3 }' "$T/$name.stats")
	is "$w" "$((nr - n))" "$name: stats counts the others as filtered out"
	w=$("$RESTACK" stats -q --stats-json - "$@" "$D" | python3 -c '
import json, sys
i = json.load(sys.stdin)["inputs"][0]
print(i["samples"], i["filtered_samples"])')
	is "$w" "$n $((nr - n))" "$name: --stats-json: samples, filtered_samples"
}

have_go=
command -v go >/dev/null 2>&1 && have_go=1
[ -n "$have_go" ] || skip "pprof checks" "go is not installed (golang-go)"

# from restack dump
awk -v p="$bpid" '$3 == p { print $1, $2 }' "$T/samples" >"$T/k.pid"
case_ pid "$T/k.pid" --pid="$bpid"
awk -v l=",$tids," 'index(l, "," $1 ",") { print $1, $2 }' "$T/samples" \
	>"$T/k.tid"
case_ tids "$T/k.tid" --tids "$tids"
awk '$4 == "busy" { print $1, $2 }' "$T/samples" >"$T/k.comm"
case_ comms "$T/k.comm" --comms busy
# times in ns: the sample times are the range's ends, both kept
ns() { echo "$1" | awk '{ split($1, a, "."); printf "%d%09d\n", a[1], a[2] }'; }
"$RESTACK" dump "$D" | awk -v a="$(ns "$t1")" -v b="$(ns "$t2")" '
	$3 == "SAMPLE" { split($2, x, "."); t = sprintf("%d%09d", x[1], x[2])
		if (length(t) == length(a) && t >= a && t <= b) {
			for (i = 4; i <= NF; i++) if ($i ~ /^tid=/) id = substr($i, 5)
			print id, substr($2, 1, length($2) - 3) } }' >"$T/k.time"
case_ time "$T/k.time" --time "$t1,$t2"
# Firefox output's thread starts and ends and its markers lie in the
# range too (they came from the whole capture: a thread forked before it
# started before it)
"$RESTACK" convert -q --time "$t1,$t2" "$D" -o "$T/range.firefox.json"
check "--time: Firefox output's threads and markers are in the range" \
	python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))
lo, hi = float(sys.argv[2]) * 1e3, float(sys.argv[3]) * 1e3
t0 = p["meta"]["startTime"]
bad = []
for th in p["threads"]:
    times = [th["registerTime"], th["unregisterTime"]]
    m = th["markers"]
    times += [t for t in m["startTime"] + m["endTime"] if t is not None]
    bad += [t for t in times if not lo - 1e-6 <= t0 + t <= hi + 1e-6]
sys.exit(1 if bad else 0)' "$T/range.firefox.json" "$t1" "$t2"

# perf script --time's samples, for the same ranges
perf_keys() {
	perf_clean script -i "$D" -F tid,time "$@" 2>/dev/null |
		awk 'NF { t = $2; sub(/:$/, "", t); print $1, t }'
}
for r in "$t1,$t2" ",$t1" "$t2," "10%/2" "0%-25%,50%-75%" "25%" \
	"10%/1,10%/3,10%/10"; do
	perf_keys --time "$r" | sort >"$T/pk"
	"$RESTACK" convert -q --time "$r" "$D" -o "$T/pk.script"
	blocks "$T/pk.script" | cut -f 1 | sort >"$T/rk"
	same_file "$T/pk" "$T/rk" "--time '$r': perf script's $(wc -l <"$T/pk") samples"
done
# without HEADER_SAMPLE_TIME (feature 21), and from a sysprof capture,
# percentages are of the span the samples themselves give: the same here
python3 "$TOP/tests/tools/drop_feature.py" "$D" "$T/nost.data" 21
"$RESTACK" convert -q "$D" -o "$T/all.syscap"
for r in "10%/2" "0%-25%,50%-75%"; do
	perf_keys --time "$r" | sort >"$T/pk"
	for in in nost.data all.syscap; do
		"$RESTACK" convert -q --time "$r" "$T/$in" -o "$T/pk.script"
		blocks "$T/pk.script" | cut -f 1 | sort >"$T/rk"
		same_file "$T/pk" "$T/rk" \
			"--time '$r' on $in: perf script's $(wc -l <"$T/pk") samples"
	done
done
perf_keys --pid "$bpid" --comms busy --time 0%-50% >"$T/k.both"
case_ pid_time "$T/k.both" --pid="$bpid" --comm busy --time 0%-50%

# usage
"$RESTACK" convert --pid 123 "$D" -o "$T/x.folded" 2>"$T/bare.err"
is "$?" 64 "bare --pid before a number: usage error"
check "... which says how to write the filter" grep -q -- "--pid=123" "$T/bare.err"
"$RESTACK" convert --pid "$D" -o "$T/x.folded"
check "bare --pid still names frames comm-pid" \
	grep -q "^busy-$bpid;" "$T/x.folded"
for bad in "--time=1" "--time=2,1" "--time=50%/3" "--time=1.0000000001,2" \
	"--pid=x" "--tids=" "--comms=,"; do
	"$RESTACK" convert "$bad" "$D" -o "$T/x.folded" 2>/dev/null
	is "$?" 64 "$bad: usage error"
done

done_testing
