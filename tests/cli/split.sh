#!/bin/bash
# split.sh - convert --split thread|process --outdir DIR: one output per
# thread or process, in every format, named COMM-PID-TID.EXT or
# COMM-PID.EXT (COMM the name at the last sample); each output is
# byte-identical to the conversion filtered to that thread
# (--pid=PID --tid=TID) or process (--pid=PID), with the other filters
# given too; together they hold every sample once.  Several inputs go to
# DIR/NAME/.  Capture: two processes of three threads (threads.c, once
# as "busy"), recorded at test time; the expected names come from
# `restack dump` (sample pids and tids, COMM and FORK records).
. "$(dirname "$0")/lib.sh"

need_perf
record_two_procs 1000 6000 4000
D=$T/mp.data

# "pid tid comm" per thread with samples, comm at its last sample
sample_names "$D" | awk '{ k = $3 " " $1
		if (!(k in last)) order[++n] = k
		last[k] = $4 }
	END { for (i = 1; i <= n; i++) print order[i], last[order[i]] }' \
	>"$T/threads.txt"
awk '{ print $3 "-" $1 "-" $2 }' "$T/threads.txt" | sort >"$T/want.thread"
nthreads=$(wc -l <"$T/want.thread")
[ "$nthreads" -ge 4 ] || skip_all "only $nthreads threads with samples"
echo "# threads: $(tr '\n' ' ' <"$T/want.thread")"

for fmt in folded script pprof svg speedscope firefox perf sysprof; do
	rm -rf "$T/out"
	"$RESTACK" convert -q --split thread --to $fmt --outdir "$T/out" "$D"
	is "$?" 0 "--split thread --to $fmt: exit 0"
	ls "$T/out" | sed 's/\..*//' | sort >"$T/got"
	same_file "$T/want.thread" "$T/got" \
		"--split thread --to $fmt: one output per thread, named COMM-PID-TID"
	bad=
	while read -r pid tid comm; do
		f=$(ls "$T/out/$comm-$pid-$tid".*)
		"$RESTACK" convert -q --to $fmt --pid="$pid" --tid="$tid" "$D" \
			-o "$T/one.$fmt"
		cmp -s "$f" "$T/one.$fmt" || bad="$bad $comm-$pid-$tid"
	done <"$T/threads.txt"
	is "$bad" "" "--split thread --to $fmt: each output is the --pid= --tid= conversion's"
done

# the processes: the name at the last sample of any of their threads
"$RESTACK" convert -q --split process --outdir "$T/proc" "$D"
awk '{ c[$1] = $3 } END { for (p in c) print c[p] "-" p }' "$T/threads.txt" |
	sort >"$T/want.proc"
ls "$T/proc" | sed 's/\.folded$//' | sort >"$T/got"
same_file "$T/want.proc" "$T/got" "--split process: one output per process, named COMM-PID"
bad=
for f in "$T"/proc/*.folded; do
	pid=${f%.folded}
	pid=${pid##*-}
	"$RESTACK" convert -q --pid="$pid" "$D" -o "$T/one.folded"
	cmp -s "$f" "$T/one.folded" || bad="$bad $f"
done
is "$bad" "" "--split process: each output is the --pid= conversion's"
"$RESTACK" convert -q "$D" -o "$T/all.folded"
cat "$T"/proc/*.folded | awk '{ n = $NF; $NF = ""; s[$0] += n }
	END { for (k in s) print k s[k] }' | sort >"$T/sum.folded"
same_file "$T/all.folded" "$T/sum.folded" \
	"--split process: the outputs add up to the unfiltered output"

# with a filter: only what it keeps, each as filtered
"$RESTACK" convert -q --split thread --comms busy --time 0%-50% \
	--to script --outdir "$T/filt" "$D"
grep ' busy$' "$T/threads.txt" | awk '{ print $3 "-" $1 "-" $2 }' |
	sort >"$T/want.busy"
ls "$T/filt" | sed 's/\.script$//' | sort >"$T/got"
# a thread of busy without samples in the first half has no output
check "--split thread --comms busy --time 0%-50%: some outputs" test -s "$T/got"
check "--split thread --comms busy: outputs of busy's threads only" \
	awk 'NR == FNR { w[$0]; next } !($0 in w) { exit 1 }' \
	"$T/want.busy" "$T/got"
bad=
for f in "$T"/filt/*.script; do
	b=${f##*/}
	b=${b%.script}
	tid=${b##*-}
	pid=${b%-*}
	pid=${pid##*-}
	"$RESTACK" convert -q --comms busy --time 0%-50% --pid="$pid" \
		--tid="$tid" "$D" -o "$T/one.script"
	cmp -s "$f" "$T/one.script" || bad="$bad $b"
done
is "$bad" "" "--split thread with --comms and --time: each output filtered so"

# several inputs: DIR/NAME/
cp "$D" "$T/second.data"
"$RESTACK" convert -q --split process --outdir "$T/many" "$D" \
	"$T/second.data"
check "several inputs: DIR/NAME/ each" \
	diff <(ls "$T/many/mp") <(ls "$T/many/second")
check "several inputs: the same outputs as one input" \
	diff -r "$T/proc" "$T/many/mp"

"$RESTACK" convert --split thread -o "$T/x.folded" "$D" 2>/dev/null
is "$?" 64 "--split without --outdir: usage error"
"$RESTACK" convert --split cpu --outdir "$T/x" "$D" 2>/dev/null
is "$?" 64 "--split cpu: usage error"

done_testing
