#!/bin/bash
# pprof.sh - `restack convert --to pprof` on a capture recorded here,
# decoded by two independent readers: npm pprof-format (through
# tests/tools/pprof_fold.js) and the reference tool, Go's `go tool pprof
# -symbolize=none -traces` (golang-go; its report made folded by
# tests/tools/pprof_traces.py, so a location without its mapping, which
# pprof names <unknown>, shows).  Their stacks and totals, for both sample
# values, must equal the folded output's (samples and --weight period),
# and the output must be the same bytes on every run.  Each reader's
# checks are skipped when it is missing.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/tools/npm.sh"

need_perf
cc=$(command -v cc || command -v gcc) || skip_all "no C compiler"
# need_npm skips (77) or fails the whole test: here only its checks.
(need_npm pprof-format@2) >"$T/npm.out" 2>&1
case $? in
0) have_npm=1 ;;
77)
	have_npm=
	skip "pprof-format checks" "$(sed 's/^skip - //' "$T/npm.out")"
	;;
*)
	have_npm=
	cat "$T/npm.out"
	lib_failed=1
	;;
esac
have_go=
if command -v go >/dev/null 2>&1 && go version >/dev/null 2>&1; then
	have_go=1
else
	skip "go tool pprof checks" "go is not installed (golang-go)"
fi
[ -n "$have_npm$have_go" ] || skip_all "neither pprof-format nor go"

# go tool pprof with its state under $T (a private HOME, build cache and
# GOPATH; no toolchain downloads).
gopprof() {
	mkdir -p "$T/gohome"
	env HOME="$T/gohome" GOCACHE="$T/gohome/cache" GOPATH="$T/gohome/go" \
		GOTOOLCHAIN=local PPROF_TMPDIR="$T/gohome/pprof" \
		go tool pprof -symbolize=none -traces "$@"
}

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

# compare_npm NAME: $T/NAME.pb.gz decoded by pprof-format equals the
# folded outputs $T/NAME.f0 (samples) and $T/NAME.f1 (periods).
compare_npm() {
	local name=$1 v
	for v in 0 1; do
		if ! NODE_PATH=$NPM_DIR/node_modules node "$TOP/tests/tools/pprof_fold.js" \
			"$T/$name.pb.gz" $v >"$T/$name.pp$v" 2>"$T/$name.pp$v.err"; then
			fail "$name: pprof-format decodes the profile" \
				"$(cat "$T/$name.pp$v.err")"
			return
		fi
	done
	echo "# $name: $(cat "$T/$name.pp0.err")"
	merged "$T/$name.pp0" >"$T/$name.p0"
	merged "$T/$name.pp1" >"$T/$name.p1"
	same_file "$T/$name.p0" "$T/$name.f0" \
		"$name: pprof stacks and sample counts equal folded ($(wc -l <"$T/$name.f0") stacks, $(total "$T/$name.f0") samples)"
	same_file "$T/$name.p1" "$T/$name.f1" \
		"$name: pprof periods equal folded --weight period (total $(total "$T/$name.f1"))"
}

# compare_go NAME: the same through go tool pprof -traces, values 0
# (samples) and 1 (periods, in nanoseconds).
compare_go() {
	local name=$1 v opts
	for v in 0 1; do
		opts=-sample_index=$v
		[ $v = 1 ] && opts="$opts -unit=ns"
		# shellcheck disable=SC2086
		if ! gopprof $opts "$T/$name.pb.gz" >"$T/$name.go$v.txt" \
			2>"$T/$name.go$v.err"; then
			fail "$name: go tool pprof -traces reads the profile" \
				"$(tail -n 10 "$T/$name.go$v.err")"
			return
		fi
		if ! python3 "$TOP/tests/tools/pprof_traces.py" \
			<"$T/$name.go$v.txt" >"$T/$name.gf$v" \
			2>"$T/$name.gf$v.err"; then
			fail "$name: go tool pprof -traces output parses" \
				"$(cat "$T/$name.gf$v.err")" \
				"$(head -n 20 "$T/$name.go$v.txt")"
			return
		fi
	done
	echo "# $name: go tool pprof: $(cat "$T/$name.gf0.err")"
	merged "$T/$name.gf0" >"$T/$name.g0"
	merged "$T/$name.gf1" >"$T/$name.g1"
	same_file "$T/$name.g0" "$T/$name.f0" \
		"$name: go tool pprof -traces stacks and sample counts = folded"
	same_file "$T/$name.g1" "$T/$name.f1" \
		"$name: go tool pprof -traces periods = folded --weight period"
}

# decoded NAME: the merged stacks a reader decoded from $T/NAME.pb.gz.
decoded() {
	if [ -n "$have_npm" ]; then
		echo "$T/$1.p0"
	else
		echo "$T/$1.g0"
	fi
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
	merged "$T/$name.folded" >"$T/$name.f0"
	merged "$T/$name.period.folded" >"$T/$name.f1"
	[ -n "$have_npm" ] && compare_npm "$name"
	[ -n "$have_go" ] && compare_go "$name"
	restack_clean convert "$@" --to pprof "$data" -o - >"$T/$name.again" 2>/dev/null
	same_file "$T/$name.pb.gz" "$T/$name.again" \
		"$name: the same bytes again (--to pprof to standard output)"
}

# A fixture whose binary is missing: its frame is a location without lines,
# which pprof names by its mapping's file ([prog]; <unknown> without one).
cp "$TESTDATA/perf/z-dwarf.data" "$T/nobin.data"
compare nobin nobin
check "nobin: the frame without a symbol is named by its mapping" \
	grep -q '^prog;\[truncated: module not found\];\[prog\] ' "$T/nobin.f0"

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
		grep -q 'main;outer;churn;mix3' "$(decoded inline)"
else
	fail "inline: perf record"
fi

# Deep recursion cut by a 2 KiB stack copy: truncated and stitched stacks.
if record -e cpu-clock -F 2000 --call-graph dwarf,2048 -o "$T/deep.data" \
	-- "$T/deep" 15000 >/dev/null; then
	compare deep deep
	check "deep: stitched stacks reach main" \
		grep -q '^deep;_start;__libc_start_main' "$(decoded deep)"
	compare deep-off deep --stitch=off
	check "deep: truncated stacks keep their marker" \
		grep -q '^deep;\[truncated: window exhausted\];rec;' "$(decoded deep-off)"
else
	fail "deep: perf record"
fi
done_testing
