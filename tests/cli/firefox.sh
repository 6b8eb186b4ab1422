#!/bin/bash
# firefox.sh - `restack convert --to firefox` loaded by the Firefox
# Profiler's own code, headless: npm @firefox-devtools/profiler-cli (the
# profiler's unserialize, upgrade and call-tree code in a daemon).  Its
# load must succeed, and for every thread its top-down call tree (the
# profiler merges by function; tests/tools/firefox_fold.js turns the tree
# into folded lines) must equal the folded --tid output's lines of that
# thread, names and counts (samples, and periods with --weight period).
# The profiler's tree stops at depth 200: for deeper recursion its own
# merge-function transform takes the recursive function out of the tree,
# and out of the folded lines.  The profile's own tables give the frames'
# categories: read back as folded --annotate's suffixes (_[k] Kernel,
# _[s] Stitched, _[j] JIT) they must equal folded --annotate (both with
# --no-inline, whose _[i] would hide the category), and a "[truncated:
# REASON]" frame must be in the Truncated category; inline frames must
# follow their caller at its address.  Same bytes on every run, for -j1
# and -j2, and plain JSON for .firefox.json.
# Captures: the repository's fixture (with testdata/bin/prog through a
# build-id cache), its sysprof capture, threads in a shared library, inline frames, deep
# recursion cut by a 2 KiB stack copy (stitched; truncated with
# --stitch=off), node's JIT code, a wall-clock profile (--profile wall).
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/tools/npm.sh"

need_npm @firefox-devtools/profiler-cli@0
CLI=$NPM_DIR/node_modules/@firefox-devtools/profiler-cli/dist/profiler-cli.js
[ -f "$CLI" ] || skip_all "profiler-cli package without dist/profiler-cli.js"
node "$CLI" --version >/dev/null 2>&1 ||
	skip_all "profiler-cli does not run on node $(node --version)"
FOLD=$TOP/tests/tools/firefox_fold.js
export PROFILER_CLI_SESSION_DIR=$T/pq
pq() { timeout 120 node "$CLI" "$@"; }
# the sessions' daemons end with the test
trap 'pq stop --all >/dev/null 2>&1; [ -n "${RESTACK_KEEP_TMP:-}" ] || rm -rf "$T"' EXIT

merged() {
	awk '{ n = $NF; $NF = ""; sub(/ $/, ""); s[$0] += n }
	     END { for (k in s) print k, s[k] }' "$1" | sort
}

total() {
	awk '{ t += $NF } END { print t + 0 }' "$1"
}

# by_tid FOLDED: --tid lines with the first frame 'comm-pid/tid' as
# 'pid/tid' (the profiler's thread name is one comm; folded's is the
# sample's).
by_tid() {
	sed -E 's/^[^;]*-(-?[0-9]+\/-?[0-9]+)([; ])/\1\2/' "$1"
}

# pq_load NAME FILE: loads FILE in a session named NAME-TRY, printed.  The
# daemon has 0.5 s to start, which a busy machine can miss: then it goes
# on starting and loading, and is waited for (60 s); if it never answers,
# it is stopped and another one tried, three times.
pq_load() {
	local name=$1 file=$2 try pid i
	for try in 1 2 3; do
		if pq load "$file" --session "$name-$try" >"$T/$name.load" 2>&1; then
			echo "$name-$try"
			return 0
		fi
		grep -q 'did not become ready' "$T/$name.load" || return 1
		for i in $(seq 60); do
			sleep 1
			if pq status --session "$name-$try" 2>/dev/null |
				grep -q 'Selected thread'; then
				echo "$name-$try"
				return 0
			fi
		done
		pid=$(sed -n 's/.*still be running as pid \([0-9]*\).*/\1/p' "$T/$name.load")
		[ -n "$pid" ] && kill "$pid" 2>/dev/null
	done
	return 1
}

# markers NAME MARKER: how many markers named MARKER the profiler found in
# NAME's threads.
markers() {
	awk -F '\t' -v m="$2" '$1 == m { n += $2 } END { print n + 0 }' "$T/$1.markers"
}

# stream_markers JSON: the numbers of 'Thread start' and 'Thread end'
# markers in a Firefox profile (plain JSON).
stream_markers() {
	node -e '
		const d = JSON.parse(require("fs").readFileSync(process.argv[1]));
		const s = d.shared.stringArray, n = {};
		for (const t of d.threads)
			for (const i of t.markers.name)
				n[s[i]] = (n[s[i]] || 0) + 1;
		console.log((n["Thread start"] || 0) + " " + (n["Thread end"] || 0));' "$1"
}

# unmerge NAME FOLDED: FOLDED without frames named NAME.
unmerge() {
	awk -v f="$1" '{
		n = $NF; $NF = ""; sub(/ $/, ""); k = split($0, a, ";"); s = a[1]
		for (i = 2; i <= k; i++) if (a[i] != f) s = s ";" a[i]
		print s, n }' "$2"
}

# compare NAME DATA OPTIONS...: DATA (a path) to NAME.json.gz and folded,
# loaded and compared as the header says; with MERGE=FUNCTION set, the
# trees without FUNCTION.
compare() {
	local name=$1 data=$2 n=0 h pid tid merge="" sess
	shift 2
	if ! restack_clean convert "$@" "$data" -o "$T/$name.json.gz" 2>"$T/err"; then
		fail "$name: convert to firefox" "$(cat "$T/err")"
		return
	fi
	restack_clean convert --tid "$@" "$data" -o "$T/$name.folded" 2>/dev/null
	restack_clean convert --tid --annotate --no-inline "$@" "$data" \
		-o "$T/$name.ann.folded" 2>/dev/null
	restack_clean convert --no-inline "$@" "$data" \
		-o "$T/$name.noinl.json.gz" 2>/dev/null
	restack_clean convert --to firefox -j 1 "$@" "$data" -o - \
		>"$T/$name.j1" 2>/dev/null
	restack_clean convert --to firefox -j 2 "$@" "$data" -o - \
		>"$T/$name.j2" 2>/dev/null
	same_file "$T/$name.json.gz" "$T/$name.j1" \
		"$name: the same bytes again (-j 1, to standard output)"
	same_file "$T/$name.json.gz" "$T/$name.j2" "$name: the same bytes with -j 2"
	restack_clean convert "$@" "$data" -o "$T/$name.firefox.json" 2>/dev/null
	check "$name: .firefox.json is the same profile uncompressed" \
		cmp "$T/$name.firefox.json" <(gzip -dc "$T/$name.json.gz")

	# the profiler's view, thread by thread
	if ! sess=$(pq_load "$name" "$T/$name.json.gz"); then
		fail "$name: the profiler loads the profile" "$(tail -n 5 "$T/$name.load")"
		return
	fi
	ok "$name: the profiler loads the profile"
	pq thread list --json --limit 100000 --session "$sess" >"$T/$name.threads"
	node -e '
		const d = JSON.parse(require("fs").readFileSync(process.argv[1]));
		for (const t of d.threads) console.log(t.threadHandle, t.pid, t.tid);
		if (d.hiddenByLimit) process.exit(1);' "$T/$name.threads" \
		>"$T/$name.handles" || fail "$name: thread list" "$(head -c 300 "$T/$name.threads")"
	: >"$T/$name.tree"
	if [ -n "${MERGE:-}" ]; then
		while read -r h pid tid; do
			pq thread functions --json --limit 0 --search "$MERGE" \
				--thread "$h" --session "$sess"
		done <"$T/$name.handles" >"$T/$name.funcs"
		merge=$(node -e '
			const t = require("fs").readFileSync(process.argv[1], "utf8");
			const h = new Set();
			for (const m of t.matchAll(/"functionHandle": "(f-[0-9]+)",\s*"functionIndex": [0-9]+,\s*"name": "([^"]*)"/g))
				if (m[2] === process.argv[2]) h.add(m[1]);
			console.log([...h].join(","));' "$T/$name.funcs" "$MERGE")
		[ -n "$merge" ] || fail "$name: no function $MERGE to merge"
		merge="--merge $merge"
	fi
	: >"$T/$name.markers"
	while read -r h pid tid; do
		n=$((n + 1))
		pq thread markers --json --thread "$h" --session "$sess" \
			>"$T/$name.$h.markers" 2>&1 &&
		node -e '
			const d = JSON.parse(require("fs").readFileSync(process.argv[1]));
			for (const t of d.byType) console.log(`${t.markerName}\t${t.count}`);' \
			"$T/$name.$h.markers" >>"$T/$name.markers" ||
			fail "$name: markers of $h" "$(head -c 400 "$T/$name.$h.markers")"
		# shellcheck disable=SC2086
		pq thread samples-top-down --json --include-idle --max-lines 10000000 \
			$merge --thread "$h" --session "$sess" >"$T/$name.$h.json" 2>&1 &&
		node "$FOLD" tree "$T/$name.$h.json" "$pid/$tid" >>"$T/$name.tree" \
			2>"$T/$name.fold.err" || {
			fail "$name: top-down tree of $h" "$(cat "$T/$name.fold.err")" \
				"$(head -c 400 "$T/$name.$h.json")"
			return
		}
	done <"$T/$name.handles"
	# CPU time: the clock's periods (threadCPUDelta; the profiler skips
	# each thread's first sample)
	if [ "${CPU:-}" = 1 ]; then
		node -e '
			const d = JSON.parse(require("fs").readFileSync(process.argv[1]));
			let ms = 0;
			for (const t of d.threads) ms += t.cpuMs;
			console.log(ms.toFixed(3));' "$T/$name.threads" >"$T/$name.cpu"
		# shellcheck disable=SC2086
		restack_clean convert --weight period "$@" "$data" \
			-o "$T/$name.period.folded" 2>/dev/null
		check "$name: the profiler's CPU time is the periods' ($(cat "$T/$name.cpu") ms, $n threads)" \
			awk -v cpu="$(cat "$T/$name.cpu")" -v n="$n" '
			{ t += $NF } END {
				# short by at most the first samples of the threads
				d = t / 1e6 - cpu
				printf "# periods %.3f ms, profiler %.3f ms\n", t / 1e6, cpu
				exit !(cpu > 0 && d >= 0 && d <= n * 5) }' "$T/$name.period.folded"
	fi
	pq stop "$sess" >/dev/null 2>&1
	merged "$T/$name.tree" >"$T/$name.t"
	by_tid "$T/$name.folded" >"$T/$name.f.raw"
	[ -n "${MERGE:-}" ] && unmerge "$MERGE" "$T/$name.f.raw" >"$T/$name.f.m" &&
		mv "$T/$name.f.m" "$T/$name.f.raw"
	merged "$T/$name.f.raw" >"$T/$name.f"
	same_file "$T/$name.t" "$T/$name.f" \
		"$name: the profiler's call trees of $n threads equal folded ($(wc -l <"$T/$name.f") stacks, total $(total "$T/$name.f")${MERGE:+, $MERGE merged})"

	# the profile's categories, read back as annotations
	if ! node "$FOLD" profile "$T/$name.json.gz" >/dev/null \
		2>"$T/$name.prof.err"; then
		fail "$name: the profile's tables" "$(cat "$T/$name.prof.err")"
		return
	fi
	echo "$name: $(cat "$T/$name.prof.err")" >"$T/$name.log"
	echo "# $(cat "$T/$name.log")"
	if ! node "$FOLD" profile "$T/$name.noinl.json.gz" >"$T/$name.prof" \
		2>"$T/$name.prof.err"; then
		fail "$name: the profile's tables (--no-inline)" "$(cat "$T/$name.prof.err")"
		return
	fi
	merged "$T/$name.prof" >"$T/$name.p"
	by_tid "$T/$name.ann.folded" |
		sed -E 's/_\[(fp|scan|stub)\]//g' >"$T/$name.a.raw"
	merged "$T/$name.a.raw" >"$T/$name.a"
	same_file "$T/$name.p" "$T/$name.a" \
		"$name: frame categories equal folded --annotate (--no-inline)"
}

# --- the repository's fixture, through a build-id cache -----------------
data=$TESTDATA/perf/file-dwarf.data
bid=cce7cbd43334a59d2e449e840d5d799e01a2c68c
dir=tmp/restack-testdata/prog/$bid
mkdir -p "$T/cache/.build-id/cc" "$T/cache/$dir"
cp "$TESTDATA/bin/prog" "$T/cache/$dir/elf"
ln -s "../../$dir" "$T/cache/.build-id/cc/${bid:2}"
compare fixture "$data" --offline --buildid-dir "$T/cache"
check "fixture: prog's lib has its build-id as codeId and breakpadId" \
	grep -q "\"codeId\":\"$bid\"" "$T/fixture.firefox.json"
check "fixture: breakpadId is the build-id as a GUID plus age 0" \
	grep -q '"breakpadId":"D4CBE7CC34339DA52E449E840D5D799E0"' \
	"$T/fixture.firefox.json"
check "fixture: kernel frames are in the Kernel category" \
	grep -q '\[kernel\]_\[k\]' "$T/fixture.p"
compare fixture-period "$data" --offline --buildid-dir "$T/cache" \
	--weight period
# a sysprof capture (its module is not found: names from the mappings)
compare sysprof "$TESTDATA/sysprof/prog-346.syscap" --offline

# --- captures recorded here ---------------------------------------------
need_perf
cc=$(command -v cc || command -v gcc) || skip_all "no C compiler"
build_threads
"$cc" -O2 -g -o "$T/inline" "$TESTDATA/src/inline.c" ||
	skip_all "cannot build inline"
"$cc" -O2 -g -fomit-frame-pointer -o "$T/deep" "$TESTDATA/src/deep.c" ||
	skip_all "cannot build deep"

if record -e cpu-clock -F 2000 --call-graph dwarf -o "$T/threads.data" \
	-- "$T/threads" 1500 4 >/dev/null; then
	CPU=1 compare threads "$T/threads.data"
	check "threads: one profile thread per capture thread" test \
		"$(wc -l <"$T/threads.handles")" = \
		"$(sed 's/;.*//' "$T/threads.folded" | sort -u | wc -l)"
	check "threads: libwork.so is a lib" grep -q '"name":"libwork.so"' \
		<(gzip -dc "$T/threads.json.gz")
	"$RESTACK" dump "$T/threads.data" >"$T/threads.dump"
	is "$(markers threads 'Thread start')" \
		"$(grep -c ' FORK pid=' "$T/threads.dump")" \
		"threads: a 'Thread start' marker per FORK record"
	is "$(markers threads 'Thread end')" \
		"$(grep -c ' EXIT pid=' "$T/threads.dump")" \
		"threads: a 'Thread end' marker per EXIT record"
	# a stream's markers come from the same reading as its samples
	restack_clean convert --to firefox - -o "$T/threads.stream.json" \
		<"$T/threads.data" 2>/dev/null
	is "$(stream_markers "$T/threads.stream.json")" \
		"$(grep -c ' FORK pid=' "$T/threads.dump") $(grep -c ' EXIT pid=' "$T/threads.dump")" \
		"threads: read as a stream, the same 'Thread start' and 'Thread end' markers"
	compare threads-period "$T/threads.data" --weight period
else
	fail "threads: perf record"
fi

# A wall-clock profile (docs/offcpu.md): the weights are nanoseconds on
# and off CPU, the profiler's trees hold the same totals.
if grep -q '^#define HAVE_TRACEEVENT' "$TOP/config.h" 2>/dev/null &&
	"$cc" -O2 -g -fomit-frame-pointer -o "$T/offcpu" \
		"$TESTDATA/src/offcpu.c" -lpthread &&
	record -e cpu-clock -e sched:sched_switch --switch-events \
		--call-graph dwarf -o "$T/offcpu.data" -- "$T/offcpu" \
		"$T/offcpu.txt" >/dev/null; then
	compare wall "$T/offcpu.data" --profile wall
else
	skip "wall: off-CPU profile" "no libtraceevent, or cannot record sched_switch"
fi

if record -e cpu-clock -F 4000 --call-graph dwarf -o "$T/inline.data" \
	-- "$T/inline" 30000 >/dev/null; then
	compare inline "$T/inline.data"
	check "inline: inlined calls are frames of their own (inlineDepth)" \
		grep -q '^inline: .* inlined [1-9]' "$T/inline.log"
	check "inline: the profiler's tree has the inlined calls" \
		grep -q ';main;outer;churn;mix3' "$T/inline.t"
else
	fail "inline: perf record"
fi

# Deep recursion cut by a 2 KiB stack copy: stitched and truncated stacks.
if record -e cpu-clock -F 2000 --call-graph dwarf,2048 -o "$T/deep.data" \
	-- "$T/deep" 15000 >/dev/null; then
	MERGE=rec compare deep "$T/deep.data"
	check "deep: stitched frames are in the Stitched category" \
		grep -q ';rec_\[s\];' "$T/deep.p"
	MERGE=rec compare deep-off "$T/deep.data" --stitch=off
	check "deep-off: truncated stacks start with their marker" \
		grep -q '^[0-9]*/[0-9]*;\[truncated: window exhausted\];rec;' \
		"$T/deep-off.p"
	check "deep-off: the profiler shows 'Truncated stacks' markers" \
		test "$(markers deep-off 'Truncated stacks')" -gt 0
	is "$(gzip -dc "$T/deep-off.json.gz" | grep -o '"type":"TruncatedStacks","reason":"[^"]*","samples":[0-9]*' |
		awk -F: '{ n += $NF } END { print n + 0 }')" \
		"$(awk '/^[^;]*;\[truncated: / { n += $NF } END { print n + 0 }' "$T/deep-off.folded")" \
		"deep-off: the markers count the truncated samples"
else
	fail "deep: perf record"
fi

# node's JIT code, named from /tmp/perf-PID.map (moved into $T/maps).
if command -v node >/dev/null && cp "$TESTDATA/src/jitwork.js" "$T/" &&
	record -e cpu-clock -F 2000 --call-graph dwarf -o "$T/jit.data" \
	-- node --perf-basic-prof jitwork.js 2 >/dev/null; then
	mkdir -p "$T/maps"
	for pid in $("$RESTACK" dump "$T/jit.data" |
		     sed -n 's/.* COMM pid=\([0-9]*\) .*/\1/p' | sort -u); do
		[ -e "/tmp/perf-$pid.map" ] && mv "/tmp/perf-$pid.map" "$T/maps/"
	done
	compare jit "$T/jit.data" --jit-dir "$T/maps"
	check "jit: JIT frames are in the JIT category" \
		grep -q ';JS:[^;]*_\[j\]' "$T/jit.p"
else
	skip "jit" "node --perf-basic-prof could not be recorded"
fi
done_testing
