#!/bin/bash
# pprof.sh - `restack convert --to pprof` on a capture recorded here,
# decoded by an independent decoder (npm pprof-format, through
# tests/tools/pprof_fold.js): its stacks and totals, for both sample
# values, must equal the folded output's (samples and --weight period),
# and the output must be the same bytes on every run.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/tools/npm.sh"

need_perf
need_npm pprof-format@2
cc=$(command -v cc || command -v gcc) || skip_all "no C compiler"

build_threads
"$cc" -O2 -g -o "$T/inline" "$TESTDATA/src/inline.c" ||
	skip_all "cannot build inline"
"$cc" -O2 -g -fomit-frame-pointer -o "$T/deep" "$TESTDATA/src/deep.c" ||
	skip_all "cannot build deep"

# merged FILE: folded lines with equal stacks summed, sorted.
merged() {
	awk '{ n = $NF; $NF = ""; sub(/ $/, ""); s[$0] += n }
	     END { for (k in s) print k, s[k] }' "$1" | sort
}

total() {
	awk '{ t += $NF } END { print t + 0 }' "$1"
}

# compare NAME DATA EXTRA-OPTIONS...: pprof of $T/DATA.data against
# folded.
compare() {
	local name=$1 data=$T/$2.data
	shift 2
	if ! restack_clean convert "$@" "$data" -o "$T/$name.pb.gz" 2>"$T/err"; then
		fail "$name: convert to pprof" "$(cat "$T/err")"
		return
	fi
	restack_clean convert "$@" "$data" -o "$T/$name.folded" 2>/dev/null
	restack_clean convert "$@" --weight period "$data" \
		-o "$T/$name.period.folded" 2>/dev/null
	for v in 0 1; do
		if ! NODE_PATH=$NPM_DIR/node_modules node "$TOP/tests/tools/pprof_fold.js" \
			"$T/$name.pb.gz" $v >"$T/$name.pp$v" 2>"$T/$name.pp$v.err"; then
			fail "$name: pprof-format decodes the profile" \
				"$(cat "$T/$name.pp$v.err")"
			return
		fi
	done
	echo "# $name: $(cat "$T/$name.pp0.err")"
	merged "$T/$name.folded" >"$T/$name.f0"
	merged "$T/$name.period.folded" >"$T/$name.f1"
	merged "$T/$name.pp0" >"$T/$name.p0"
	merged "$T/$name.pp1" >"$T/$name.p1"
	same_file "$T/$name.p0" "$T/$name.f0" \
		"$name: pprof stacks and sample counts equal folded ($(wc -l <"$T/$name.f0") stacks, $(total "$T/$name.f0") samples)"
	same_file "$T/$name.p1" "$T/$name.f1" \
		"$name: pprof periods equal folded --weight period (total $(total "$T/$name.f1"))"
	restack_clean convert "$@" --to pprof "$data" -o - >"$T/$name.again" 2>/dev/null
	same_file "$T/$name.pb.gz" "$T/$name.again" \
		"$name: the same bytes again (--to pprof to standard output)"
}

if record -e cpu-clock -F 2000 --call-graph dwarf -o "$T/threads.data" \
	-- "$T/threads" 1500 >/dev/null; then
	compare threads threads
	check "threads: mappings carry build-ids and libwork.so" \
		grep -q 'libwork.so' <(gzip -dc "$T/threads.pb.gz" | strings)
	compare threads-k threads --no-kernel --no-inline
else
	fail "threads: perf record"
fi

if record -e cpu-clock -F 4000 --call-graph dwarf -o "$T/inline.data" \
	-- "$T/inline" 30000 >/dev/null; then
	compare inline inline
	check "inline: inlined calls are lines of one location" \
		grep -q 'main;outer;churn;mix3' "$T/inline.p0"
else
	fail "inline: perf record"
fi

# Deep recursion cut by a 2 KiB stack copy: truncated and stitched stacks.
if record -e cpu-clock -F 2000 --call-graph dwarf,2048 -o "$T/deep.data" \
	-- "$T/deep" 15000 >/dev/null; then
	compare deep deep
	check "deep: stitched stacks reach main" \
		grep -q '^deep;_start;__libc_start_main' "$T/deep.p0"
	compare deep-off deep --stitch=off
	check "deep: truncated stacks keep their marker" \
		grep -q '^deep;\[truncated: window exhausted\];rec;' "$T/deep-off.p0"
else
	fail "deep: perf record"
fi
done_testing
