#!/bin/bash
# jobs_batch.sh - batch mode keeps verified modules loaded from one input
# to the next (one module cache per worker index):
#   - a batch over two copies of one capture and another capture writes
#     every format byte for byte as converting each input alone, with -j1,
#     -j2 and -j8;
#   - --stats-json shows the second copy reused modules, and every input's
#     module list (and the --stats report) is the one a lone run gives:
#     only the modules that input used, with its own counts;
#   - a batch whose first input is corrupt converts the others as alone.
. "$(dirname "$0")/lib.sh"

need_perf
cc=$(command -v cc || command -v gcc) || skip_all "no C compiler"

build_threads
"$cc" -O2 -g -fomit-frame-pointer -o "$T/deep" "$TESTDATA/src/deep.c" ||
	skip_all "cannot build deep"
record -e cpu-clock -F 2000 --call-graph dwarf -o "$T/threads.data" \
	-- "$T/threads" 800 >/dev/null || skip_all "perf record failed"
record -e cpu-clock -F 2000 --call-graph dwarf -o "$T/deep.data" \
	-- "$T/deep" 20000 >/dev/null || skip_all "perf record failed"

mkdir -p "$T/in"
cp "$T/threads.data" "$T/in/a.data"
cp "$T/deep.data" "$T/in/c.data"
cp "$T/threads.data" "$T/in/b.data"
inputs=("$T/in/a.data" "$T/in/c.data" "$T/in/b.data")

# compare_json BATCH LONE...: every input's entry equals its lone run's
# but for timing, output and samples_named_late (how many samples waited
# for the warmup thread: its pace, and nothing in a batch's later input,
# whose modules the earlier one loaded); prints the modules_reused counts.
compare_json() {
	python3 - "$@" <<'PY'
import json, sys
batch = json.load(open(sys.argv[1]))['inputs']
lone = [json.load(open(f))['inputs'][0] for f in sys.argv[2:]]
assert len(batch) == len(lone), (len(batch), len(lone))
reused = []
for b, l in zip(batch, lone):
    for d in (b, l):
        d.pop('timing', None)
        d.pop('output', None)
        d.pop('samples_named_late', None)
    reused.append(b.pop('modules_reused'))
    assert l.pop('modules_reused') == 0, l['input']
    for k in set(b) | set(l):
        assert b.get(k) == l.get(k), (b['input'], k, b.get(k), l.get(k))
    # only modules with a verified build-id from the capture come back
    ok = [m for m in b['modules']
          if m['status'] == 'ok' and not m['path'].startswith('[')]
    assert reused[-1] <= len(ok), (reused[-1], ok)
print(' '.join(map(str, reused)))
PY
}

# --- outputs and reports equal to lone conversions ---
for j in 1 2 8; do
	for i in "${inputs[@]}"; do
		n=$(basename "$i" .data)
		restack_clean convert -q -j$j --stats-json "$T/lone.$n.j$j.json" \
			"$i" -o "$T/lone.$n.j$j.folded"
		restack_clean convert -j$j --stats "$i" -o "$T/x.folded" \
			2>"$T/lone.$n.j$j.stats"
	done
	restack_clean convert -j$j --stats --stats-json "$T/batch.j$j.json" \
		--outdir "$T/out.j$j" "${inputs[@]}" 2>"$T/batch.j$j.err"
	is "$?" 0 "-j$j: batch exits 0"
	for n in a b c; do
		same_file "$T/lone.$n.j$j.folded" "$T/out.j$j/$n.folded" \
			"-j$j: batch output of $n equals its lone conversion"
	done
	grep -v '^restack: converted ' "$T/batch.j$j.err" >"$T/batch.j$j.stats"
	cat "$T/lone.a.j$j.stats" "$T/lone.c.j$j.stats" \
		"$T/lone.b.j$j.stats" >"$T/lone.j$j.stats"
	same_file "$T/lone.j$j.stats" "$T/batch.j$j.stats" \
		"-j$j: --stats of the batch equals the lone runs' (module lists)"
	if reused=$(compare_json "$T/batch.j$j.json" "$T/lone.a.j$j.json" \
		"$T/lone.c.j$j.json" "$T/lone.b.j$j.json" 2>&1); then
		ok "-j$j: --stats-json entries equal the lone runs' (reused: $reused)"
	else
		fail "-j$j: --stats-json entries equal the lone runs'" "$reused"
		reused="0 0 0"
	fi
	set -- $reused
	is "$1" 0 "-j$j: the first input reuses nothing"
	check "-j$j: the second copy reuses modules ($3)" test "$3" -gt 0
done

# --- every other format, -j2 (perf and sysprof output use one worker) ---
for f in script pprof speedscope firefox svg perf sysprof; do
	case $f in
	pprof) ext=pb.gz ;;
	speedscope) ext=speedscope.json ;;
	firefox) ext=json.gz ;;
	perf) ext=data ;;
	sysprof) ext=syscap ;;
	*) ext=$f ;;
	esac
	restack_clean convert -q -j2 --to $f --outdir "$T/fmt.$f" \
		"${inputs[@]}"
	is "$?" 0 "$f: batch exits 0"
	for i in "${inputs[@]}"; do
		n=$(basename "$i" .data)
		restack_clean convert -q -j2 --to $f "$i" -o "$T/lone.$n.$ext"
		same_file "$T/lone.$n.$ext" "$T/fmt.$f/$n.$ext" \
			"$f: batch output of $n equals its lone conversion"
	done
done

# --- corrupt first inputs do not spoil the others ---
# cut: fails reading the header; mid: zeros at 90% of its records (the
# reader sorts a round of records before handing out its first): it fails
# part way (usually with modules loaded, kept for the next inputs), and
# with -j2 while the workers still hold bytes of its reader.
head -c 40000 "$T/threads.data" >"$T/in/cut.data"
cp "$T/threads.data" "$T/in/mid.data"
python3 - "$T/in/mid.data" <<'PY' || skip_all "cannot patch a capture"
import struct, sys
with open(sys.argv[1], 'r+b') as f:
    off, size = struct.unpack_from('<QQ', f.read(0x38), 0x28)
    f.seek(off + size * 9 // 10)
    f.write(bytes(8192))
PY
for j in 1 2; do
	restack_clean convert -j$j --stats-json "$T/cut.j$j.json" \
		--outdir "$T/out.cut.j$j" "$T/in/mid.data" "$T/in/cut.data" \
		"$T/in/a.data" "$T/in/b.data" 2>"$T/cut.j$j.err"
	is "$?" 2 "-j$j: corrupt first inputs: the batch exits 2"
	check "-j$j: corrupt first inputs: both named as failed" \
		awk '/converted 2 of 4 inputs/ { s = 1 }
		     s && /^  .*mid\.data$/ { m = 1 } s && /^  .*cut\.data$/ { c = 1 }
		     END { exit !(s && m && c) }' "$T/cut.j$j.err"
	for n in a b; do
		same_file "$T/lone.$n.j$j.folded" "$T/out.cut.j$j/$n.folded" \
			"-j$j: corrupt first inputs: $n converted as alone"
	done
	check "-j$j: corrupt first inputs: the others list their modules as alone" \
		python3 - "$T" $j <<'PY'
import json, sys
T, j = sys.argv[1:]
d = json.load(open('%s/cut.j%s.json' % (T, j)))['inputs']
assert [i['status'] for i in d] == ['failed', 'failed', 'ok', 'ok'], d
for i, n in ((2, 'a'), (3, 'b')):
    lone = json.load(open('%s/lone.%s.j%s.json' % (T, n, j)))['inputs'][0]
    assert d[i]['modules'] == lone['modules'], n
# b reuses what a loaded.  (Whether a reuses modules of the failed input
# depends on how far that got: the reader orders a whole round of records
# before handing out the first, and a short capture may be one round.)
assert d[3]['modules_reused'] > 0, d[3]['modules_reused']
PY
done
done_testing
