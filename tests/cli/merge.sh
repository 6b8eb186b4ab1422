#!/bin/bash
# merge.sh - `restack merge`: many captures or profiles summed into one.
# Three captures of prog recorded here, converted one by one in a batch
# (--outdir); then merging the folded conversions, the pprof conversions
# (read back as folded stacks, by samples and by period) and the
# captures themselves (-j1 and -j2) must all equal the batch's folded
# stacks summed by stack; the order of the inputs does not change a
# byte; a merged flame graph is the summed stacks' one; 60 inputs take
# the memory of one.  And the fleet
# recipe of docs/profiles.md, with GNU parallel -j2, gives the same.
. "$(dirname "$0")/lib.sh"

need_perf
build_prog
cc=$(command -v cc || command -v gcc)
"$cc" -O2 -g -fomit-frame-pointer -o "$T/deep" "$TESTDATA/src/deep.c" ||
	skip_all "cannot build deep"

# summed FILE...: folded lines with equal stacks summed, sorted.
summed() {
	awk '{ n = $NF; $NF = ""; sub(/ $/, ""); s[$0] += n }
	     END { for (k in s) print k, s[k] }' "$@" | sort
}

caps=()
for i in 1 2 3; do
	record -e cpu-clock -F 2000 --call-graph dwarf -o "$T/c$i.data" \
		-- "$T/prog" $((100 * i)) >/dev/null || skip_all "perf record failed"
	caps+=("$T/c$i.data")
done

rs() { restack_clean "$@" 2>"$T/err" || { fail "restack $*" "$(cat "$T/err")"; return 1; }; }

rs convert -q --outdir "$T/f" "${caps[@]}"
rs convert -q --weight period --outdir "$T/fp" "${caps[@]}"
rs convert -q --to pprof --outdir "$T/p" "${caps[@]}"
summed "$T"/f/*.folded >"$T/sum.folded"
summed "$T"/fp/*.folded >"$T/sum.period.folded"
check "the captures have stacks" test -s "$T/sum.folded"

rs merge "$T"/f/*.folded -o "$T/m.folded" &&
	same_file "$T/sum.folded" "$T/m.folded" "merged folded conversions = their sum"
rs merge "$T"/p/*.pb.gz -o "$T/m.pb.gz" &&
	rs convert -q "$T/m.pb.gz" -o "$T/m.p.folded" &&
	same_file "$T/sum.folded" "$T/m.p.folded" "merged pprof conversions = their sum (samples)"
rs convert -q --weight period "$T/m.pb.gz" -o "$T/m.pp.folded" &&
	same_file "$T/sum.period.folded" "$T/m.pp.folded" "... (periods)"
check "merged pprof keeps the sample types and units" \
	grep -q nanoseconds <(gzip -dc "$T/m.pb.gz")
rs merge -q -j1 "${caps[@]}" -o "$T/mc.folded" &&
	same_file "$T/sum.folded" "$T/mc.folded" "merged captures = the sum of their conversions"
rs merge -q -j2 "${caps[@]}" -o "$T/mc2.folded" &&
	same_file "$T/sum.folded" "$T/mc2.folded" "... with -j2"
rs merge -q "${caps[@]}" -o "$T/mc.pb.gz" &&
	rs convert -q "$T/mc.pb.gz" -o "$T/mc.p.folded" &&
	same_file "$T/sum.folded" "$T/mc.p.folded" "captures merged to pprof = the sum"

rs merge "$T/p/c3.pb.gz" "$T/p/c1.pb.gz" "$T/p/c2.pb.gz" -o "$T/r.pb.gz" &&
	same_file "$T/m.pb.gz" "$T/r.pb.gz" "pprof: the inputs' order changes nothing"
rs merge "$T/f/c2.folded" "$T/f/c3.folded" "$T/f/c1.folded" -o "$T/r.folded" &&
	same_file "$T/m.folded" "$T/r.folded" "folded: the inputs' order changes nothing"
rs merge "$T"/f/*.folded -o "$T/m.svg" && rs convert "$T/sum.folded" -o "$T/sum.svg" &&
	same_file "$T/sum.svg" "$T/m.svg" "merged svg = the summed stacks' svg"

"$RESTACK" merge "$T/f/c1.folded" -o "$T/x.data" 2>"$T/err"
is "$?" 64 "merge to perf.data: usage error"

# Memory does not grow with the inputs: 60 copies of a profile of deep
# stacks merged take no more than 1 (peak RSS within 4 MiB; keeping what
# the writers key by the earlier inputs' symbol locations took 15 MiB
# more for folded output).
# (Not under sanitizers: their quarantine holds freed memory.)
if grep -qaE '__(asan|tsan)_init' "$RESTACK"; then
	skip "merge memory" "a sanitizer build"
elif [ -x /usr/bin/time ] &&
	record -e cpu-clock -F 2000 --call-graph dwarf,2048 -o "$T/deep.data" \
		-- "$T/deep" 8000 >/dev/null; then
	rs convert -q "$T/deep.data" -o "$T/deep.pb.gz"
	mkdir -p "$T/copies"
	for i in $(seq 1 60); do cp "$T/deep.pb.gz" "$T/copies/d$i.pb.gz"; done
	for to in folded pprof; do
		/usr/bin/time -f %M -o "$T/rss1" "$RESTACK" merge -q --to $to \
			"$T/copies/d1.pb.gz" -o "$T/one.$to"
		/usr/bin/time -f %M -o "$T/rssn" "$RESTACK" merge -q --to $to \
			"$T"/copies/*.pb.gz -o "$T/all.$to"
		check "merge to $to: 60 inputs in the memory of 1 ($(cat "$T/rss1") KB, $(cat "$T/rssn") KB)" \
			test "$(cat "$T/rssn")" -le $(($(cat "$T/rss1") + 4096))
	done
else
	skip "merge memory" "no /usr/bin/time (time) or perf record failed"
fi

# The fleet recipe (docs/profiles.md): every capture converted where it
# is, by parallel jobs, then the profiles merged.
if command -v parallel >/dev/null 2>&1; then
	mkdir -p "$T/fleet/captures"
	cp "${caps[@]}" "$T/fleet/captures/"
	(
		cd "$T/fleet" &&
		ls captures/*.data | env -i PATH=/usr/bin:/bin HOME="$T/home" \
			parallel -j2 "$RESTACK" convert -q -j1 --to pprof \
			--outdir profiles {} &&
		env -i PATH=/usr/bin:/bin HOME="$T/home" \
			"$RESTACK" merge profiles/*.pb.gz -o fleet.pb.gz
	) >"$T/err" 2>&1 || fail "the parallel recipe runs" "$(cat "$T/err")"
	check "parallel -j2 made one profile a capture" \
		test "$(ls "$T/fleet/profiles" | wc -l)" = 3
	rs convert -q "$T/fleet/fleet.pb.gz" -o "$T/fleet.folded" &&
		same_file "$T/sum.folded" "$T/fleet.folded" "the parallel recipe's profile = the sum"
else
	skip "the GNU parallel recipe" "parallel is not installed (scripts/deps.sh test)"
fi
done_testing
