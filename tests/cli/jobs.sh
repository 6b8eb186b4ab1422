#!/bin/bash
# jobs.sh - worker threads, batch conversion and the CI options:
#   - output bytes identical for -j1, -j2 and -j8 (folded, script, stats,
#     pprof, svg, speedscope, firefox), also on the committed captures
#     (two events, sysprof, pipe mode saved in a file),
#     from a file and from a pipe, on a threaded workload and on a deep one
#     that needs stitching (root caches are per thread, workers per thread);
#   - --outdir over several captures with one corrupt one: the others are
#     converted exactly as one by one, the summary names the bad one and
#     only it makes the exit status non-zero;
#   - --stats-json is valid JSON whose counts add up, and --min-coverage
#     turns a low coverage into exit status 1 with the output written;
#   - the progress line shows on a terminal only, pass by pass.
. "$(dirname "$0")/lib.sh"

need_perf
cc=$(command -v cc || command -v gcc) || skip_all "no C compiler"
home=$T/home

build_threads
"$cc" -O2 -g -fomit-frame-pointer -o "$T/deep" "$TESTDATA/src/deep.c" ||
	skip_all "cannot build deep"
"$cc" -O2 -g -o "$T/many" "$TESTDATA/src/manythreads.c" -lpthread ||
	skip_all "cannot build manythreads"

# (64 MiB read first: samples of the main thread before the others start)
record -e cpu-clock -F 2000 --call-graph dwarf -o "$T/threads.data" \
	-- "$T/threads" 1500 64 >/dev/null || skip_all "perf record failed"
record -e cpu-clock -F 2000 --call-graph dwarf -o "$T/deep.data" \
	-- "$T/deep" 30000 >/dev/null || skip_all "perf record failed"
record -e cpu-clock -F 2000 --call-graph dwarf -o "$T/many.data" \
	-- "$T/many" 32 >/dev/null || skip_all "perf record failed"

# --- the same bytes whatever the number of workers ---
for c in threads deep many; do
	for j in 1 2 8; do
		restack_clean convert -j$j "$T/$c.data" -o "$T/$c.j$j.folded"
		restack_clean convert -j$j --tid --to script "$T/$c.data" \
			-o "$T/$c.j$j.script"
		restack_clean stats -j$j "$T/$c.data" >"$T/$c.j$j.stats"
	done
	for j in 2 8; do
		same_file "$T/$c.j1.folded" "$T/$c.j$j.folded" \
			"$c: folded output of -j$j equals -j1"
		same_file "$T/$c.j1.script" "$T/$c.j$j.script" \
			"$c: script output (time order) of -j$j equals -j1"
		same_file "$T/$c.j1.stats" "$T/$c.j$j.stats" \
			"$c: statistics of -j$j equal -j1"
	done
	restack_clean convert -j2 - -o "$T/$c.pipe.folded" <"$T/$c.data"
	restack_clean convert -j1 - -o "$T/$c.pipe1.folded" <"$T/$c.data"
	same_file "$T/$c.pipe1.folded" "$T/$c.pipe.folded" \
		"$c: from a pipe, -j2 equals -j1"
done
restack_clean convert -q -j2 - -o "$T/pipe.folded" \
	--stats-json "$T/pipe.json" <"$T/threads.data"
check "from a pipe: worker_samples has each worker's samples, adding up" \
	python3 -c '
import json, sys
i = json.load(open(sys.argv[1]))["inputs"][0]
print(i["worker_samples"], i["samples"])
n = i["worker_samples"]
assert len(n) == 2 and sum(n) == i["samples"] and min(n) > 0' "$T/pipe.json"

# --- threads are given to workers in time order, whatever the file order ---
# thread_first.py moves the newest thread's samples to the front of the
# file, then the main thread's (one round, the same records in time order):
# read in file order, the main thread would come between the two busy ones
# and both would go to one worker.  Each worker's samples (--stats-json
# worker_samples) must be those of the threads given out round robin in
# time order, as `restack dump` lists the samples.
python3 "$TOP/tests/tools/thread_first.py" "$T/threads.data" \
	"$T/threads.first.data"
for j in 1 2; do
	restack_clean convert -q -j$j "$T/threads.first.data" \
		-o "$T/threads.first.j$j.folded" \
		--stats-json "$T/threads.first.j$j.json"
done
same_file "$T/threads.j1.folded" "$T/threads.first.j1.folded" \
	"threads, newest thread first in the file: the same folded output"
same_file "$T/threads.j1.folded" "$T/threads.first.j2.folded" \
	"threads, newest thread first in the file: -j2 equals -j1"
restack_clean dump "$T/threads.first.data" >"$T/threads.first.dump"
check "threads, newest thread first in the file: -j2 gives threads out in time order, the busy ones to different workers" \
	python3 - "$T/threads.first.dump" "$T/threads.first.j2.json" <<'PY'
import json, sys

samples = []        # (file offset, tid) in time order
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) > 2 and f[2] == "SAMPLE":
        tid = next(x for x in f if x.startswith("tid="))
        samples.append((int(f[0], 16), tid))


def split(tids):
    given, n = {}, [0, 0]
    for t in tids:
        n[given.setdefault(t, len(given) % 2)] += 1
    return n, list(given)


want, by_time = split(t for _, t in samples)
read, by_file = split(t for _, t in sorted(samples))
got = json.load(open(sys.argv[2]))["inputs"][0]["worker_samples"]
print("threads by first sample in time %s, in the file %s" % (by_time, by_file))
print("samples per worker: %s; in time order %s; in file order %s"
      % (got, want, read))
assert len(by_time) >= 3, "fewer than three threads with samples"
assert read != want, "file order would split alike: the test proves nothing"
assert got == want
# the two busy threads (the most samples) go to different workers
busy = sorted(by_time, key=lambda t: -sum(1 for _, x in samples if x == t))
assert by_time.index(busy[0]) % 2 != by_time.index(busy[1]) % 2, busy
PY

# every other output format too
for c in threads deep many; do
	for f in pprof svg speedscope firefox perf sysprof; do
		for j in 1 2 8; do
			restack_clean convert -q -j$j --to $f "$T/$c.data" \
				-o "$T/$c.j$j.$f"
		done
		same_file "$T/$c.j1.$f" "$T/$c.j2.$f" \
			"$c: $f output of -j2 equals -j1"
		same_file "$T/$c.j1.$f" "$T/$c.j8.$f" \
			"$c: $f output of -j8 equals -j1"
	done
done
# perf.data and sysprof output are written from the merge of all the
# workers' samples: both workers resolve
for f in perf sysprof; do
	restack_clean convert -q -j2 --to $f "$T/threads.data" \
		-o "$T/threads.w.$f" --stats-json "$T/threads.w.$f.json"
	check "threads: --to $f -j2 resolves on two workers" \
		python3 -c '
import json, sys
n = json.load(open(sys.argv[1]))["inputs"][0]["worker_samples"]
print(n)
assert len(n) == 2 and min(n) > 0' "$T/threads.w.$f.json"
done
# the committed captures: two events (each chosen with --event), a
# sysprof capture, and pipe-mode streams saved in files (read by one
# thread, resolved by the pool)
for f in tp-multi.data pipe-g.data zpipe-bid.data ../sysprof/prog-346.syscap; do
	for ev in "" cpu-clock sched:sched_switch; do
		[ -n "$ev" ] && [ "$f" != tp-multi.data ] && continue
		for j in 1 2 8; do
			restack_clean convert -q -j$j ${ev:+--event $ev} --tid \
				--to script "$TESTDATA/perf/$f" -o "$T/fx.j$j.txt"
			restack_clean stats -q -j$j ${ev:+--event $ev} \
				"$TESTDATA/perf/$f" >"$T/fx.j$j.stats" 2>&1
			for o in perf sysprof; do
				restack_clean convert -q -j$j ${ev:+--event $ev} \
					--to $o "$TESTDATA/perf/$f" \
					-o "$T/fx.j$j.$o"
			done
		done
		[ "$ev" = sched:sched_switch ] && cp "$T/fx.j1.stats" "$T/sched.stats"
		for j in 2 8; do
			same_file "$T/fx.j1.txt" "$T/fx.j$j.txt" \
				"${f##*/}${ev:+ --event $ev}: -j$j equals -j1"
			same_file "$T/fx.j1.stats" "$T/fx.j$j.stats" \
				"${f##*/}${ev:+ --event $ev}: -j$j statistics equal -j1's"
			for o in perf sysprof; do
				same_file "$T/fx.j1.$o" "$T/fx.j$j.$o" \
					"${f##*/}${ev:+ --event $ev}: --to $o -j$j equals -j1"
			done
		done
	done
done
check "tp-multi: --event picks samples of the second event" \
	grep -q 'samples .*event sched:sched_switch' "$T/sched.stats"

check "the workloads are not trivial: many threads, stitched stacks" \
	grep -q 'stitched  *[1-9]' "$T/deep.j1.stats"
threads=$(grep -c . "$T/many.j1.folded")
check "many: samples of many threads ($threads stacks)" test "$threads" -ge 8

# --- batch: one bad input among good ones ---
mkdir -p "$T/in" "$T/out"
cp "$T/threads.data" "$T/deep.data" "$T/many.data" "$T/in/"
head -c 30000 "$T/threads.data" >"$T/in/cut.data"
restack_clean convert -j2 --outdir "$T/out" "$T/in/deep.data" \
	"$T/in/cut.data" "$T/in/many.data" "$T/in/threads.data" \
	--stats-json "$T/batch.json" 2>"$T/batch.err"
rc=$?
is "$rc" 2 "batch with a corrupt input exits 2"
for c in threads deep many; do
	same_file "$T/$c.j1.folded" "$T/out/$c.folded" \
		"batch: $c converted as on its own"
done
check "batch: no output for the corrupt input" test ! -e "$T/out/cut.folded"
for f in perf sysprof; do
	restack_clean convert -q -j2 --to $f "$T/in/cut.data" \
		-o "$T/cut.$f" 2>"$T/cut.$f.err"
	is "$?" 2 "--to $f -j2 of a cut capture exits 2"
	check "--to $f -j2 of a cut capture: one error, naming the offset" \
		eval 'test "$(wc -l <"$T/cut.$f.err")" -eq 1 &&
		      grep -qE "cut\.data\+0x[0-9a-f]+:" "$T/cut.$f.err"'
done
check "batch: the corrupt input's error names it and its offset" \
	grep -qE "cut\.data(\+0x[0-9a-f]+)?:" "$T/batch.err"
check "batch: the summary counts 3 of 4 and names the failed input" \
	awk '/converted 3 of 4 inputs/ { s = 1 } s && /^  .*cut\.data$/ { f = 1 }
	     END { exit !(s && f) }' "$T/batch.err"
check "batch: no temporary files left" \
	test "$(ls "$T/out" | grep -c tmp)" = 0
restack_clean convert -j2 --outdir "$T/out2" "$T/in/deep.data" \
	"$T/in/many.data" 2>/dev/null
is "$?" 0 "batch of good inputs exits 0"
check "batch: --outdir is created" test -s "$T/out2/many.folded"

# --- --stats-json: valid, and its numbers add up ---
check "--stats-json: valid JSON whose counts add up" python3 - "$T" <<'PY'
import json, sys
T = sys.argv[1]
d = json.load(open(T + '/batch.json'))
assert d['inputs_total'] == 4 and d['converted'] == 3 and d['failed'] == 1, d
by = {i['input'].rsplit('/', 1)[1]: i for i in d['inputs']}
assert by['cut.data']['status'] == 'failed' and by['cut.data']['output'] is None
for name in ('threads', 'deep', 'many'):
    i = by[name + '.data']
    assert i['status'] == 'ok', i
    assert sum(i['end_reasons'].values()) == i['samples'], i['end_reasons']
    assert i['end_reasons']['root'] == i['reached_root']
    assert abs(i['coverage_pct'] - 100.0 * i['reached_root'] / i['samples']) < 0.01
    total = sum(int(l.rsplit(' ', 1)[1]) for l in open('%s/out/%s.folded' % (T, name)))
    assert total == i['samples'], (total, i['samples'])
    assert len(i['worker_samples']) == i['workers'] == 2, i['worker_samples']
    assert sum(i['worker_samples']) == i['samples'], i['worker_samples']
    assert sum(m['samples'] for m in i['modules']) <= i['samples']
    assert any(m['path'].endswith('/libwork.so') and m['cfi'] and m['symbols']
               for m in by['threads.data']['modules'])
    assert i['timing']['wall_s'] >= 0 and i['timing']['peak_rss_kb'] > 0
PY

# --- --min-coverage: a gate on the share of samples reaching the root ---
restack_clean convert --max-frames 8 --min-coverage 90 "$T/deep.data" \
	-o "$T/gate.folded" 2>"$T/gate.err"
is "$?" 1 "--min-coverage 90 with 8 frames at most: exit 1"
check "the gated output is still written" test -s "$T/gate.folded"
check "the gate says why" grep -q 'below --min-coverage 90' "$T/gate.err"
restack_clean convert --min-coverage 90 "$T/deep.data" -o "$T/nogate.folded"
is "$?" 0 "--min-coverage 90 on complete stacks: exit 0"
restack_clean stats --max-frames 8 --min-coverage 90 --stats-json - \
	"$T/deep.data" >"$T/gate.json" 2>/dev/null
is "$?" 1 "stats --min-coverage: exit 1 too"
check "stats --stats-json - writes only JSON on stdout" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["below_gate"] == 1 and d["inputs"][0]["status"] == "coverage-below-gate"
' "$T/gate.json"
restack_clean convert -q --max-frames 8 --min-coverage 90 "$T/deep.data" \
	-o "$T/q.folded" 2>"$T/q.err"
is "$(wc -c <"$T/q.err")" 0 "-q: nothing on stderr"

# --- the progress line: only when stderr is a terminal (script(1) gives
# the run one); script output takes two passes, both shown, with -j2 too
# (whose worker 0 is not given every sample), and the line is cleared ---
if command -v script >/dev/null; then
	on_tty() { # on_tty OUT ARGS...: restack's terminal output in OUT
		local out=$1
		shift
		script -qec "env -i PATH=/usr/bin:/bin HOME='$home' \
			'$RESTACK' $*" /dev/null </dev/null >"$out" 2>&1
	}
	# over 4096 records: a line every 4096 (and at a pass's start)
	record -e cpu-clock -F 4000 --call-graph dwarf,1024 \
		-o "$T/prog.data" -- "$T/threads" 30000 >/dev/null ||
		skip_all "perf record failed"
	n=$(restack_clean stats "$T/prog.data" | awk '/^  samples/ { print $2 }')
	for j in 1 2; do
		on_tty "$T/tty$j.txt" convert -j$j --to script \
			"'$T/prog.data'" -o /dev/null
		check "-j$j on a terminal ($n samples): progress, second pass, cleared" \
			python3 -c '
import re, sys
t = open(sys.argv[1], "rb").read().decode("latin-1")
lines = [l for l in re.split(r"[\r\n]+", t) if l.startswith("restack:")]
print("#", lines)
first = [l for l in lines if re.search(r"prog\.data: +[0-9]+%$", l)]
second = [l for l in lines if re.search(r"prog\.data: second pass +[0-9]+%", l)]
assert first and second and t.rstrip("\r\n").endswith("\r\x1b[K"), t
' "$T/tty$j.txt"
	done
	on_tty "$T/ttyq.txt" convert -q --to script "'$T/prog.data'" -o /dev/null
	check "-q on a terminal: no progress line" \
		bash -c "! grep -aq 'restack:' '$T/ttyq.txt'"
	restack_clean convert --to script "$T/prog.data" -o /dev/null \
		2>"$T/notty.err"
	is "$(wc -c <"$T/notty.err")" 0 "no terminal: no progress line"
else
	skip "the progress line" "script(1) is not installed"
fi
# --- the default number of workers on two cores (cmd/run_auto.c) ---
# Two workers when the file is large (256 MiB of records of an unknown type
# added: pad_data.py) and its first samples show two busy threads; one for
# the same samples in a small file, and for one busy thread.
workers() { # workers DATA: the workers a default conversion used
	restack_clean convert -q "$1" -o "$1.folded" --stats-json "$1.json"
	python3 -c 'import json, sys
print(len(json.load(open(sys.argv[1]))["inputs"][0]["worker_samples"]))' \
		"$1.json"
}
if [ "$(nproc)" != 2 ]; then
	skip "default workers" "the rule is for two cores, this machine has $(nproc)"
elif record -e cpu-clock -F 4000 --call-graph dwarf,1024 \
	-o "$T/busy2.data" -- "$T/threads" 60000 >/dev/null &&
	record -e cpu-clock -F 4000 --call-graph dwarf,1024 \
		-o "$T/busy1.data" -- "$T/deep" 60000 >/dev/null &&
	python3 "$TOP/tests/tools/pad_data.py" "$T/busy2.data" \
		"$T/busy2.big.data" 256 &&
	python3 "$TOP/tests/tools/pad_data.py" "$T/busy1.data" \
		"$T/busy1.big.data" 256; then
	is "$(workers "$T/busy2.big.data")" 2 \
		"default: two workers for a large file of two busy threads"
	is "$(workers "$T/busy2.data")" 1 \
		"default: one worker for the same samples in a small file"
	same_file "$T/busy2.data.folded" "$T/busy2.big.data.folded" \
		"default: the large file's output is the small file's"
	is "$(workers "$T/busy1.big.data")" 1 \
		"default: one worker for a large file of one busy thread"
else
	fail "default workers: perf record or pad_data.py"
fi
done_testing
