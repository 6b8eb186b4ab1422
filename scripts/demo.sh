#!/bin/bash
# demo.sh - `make demo`: record a small threaded workload with
# `perf record --call-graph dwarf`, convert it with restack (folded,
# script, pprof, speedscope, Firefox Profiler, and last an interactive SVG
# flame graph), and say where the results are.  Uses a committed capture when perf cannot record here.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/demo-out
mkdir -p "$out/home"
cc=$(command -v cc || command -v gcc)

"$cc" -O2 -g -fomit-frame-pointer -fPIC -shared -o "$out/libwork.so" \
	"$top/testdata/src/libwork.c" -lm &&
	"$cc" -O2 -g -fomit-frame-pointer -o "$out/threads" \
		"$top/testdata/src/threads.c" -L"$out" -lwork \
		-Wl,-rpath,"$out" -lpthread || exit 1

data=$out/perf.data
if (cd "$out" && env -i PATH=/usr/bin:/bin HOME="$out/home" \
	perf record -q -e cpu-clock -F 2000 --call-graph dwarf -o "$data" \
	-- "$out/threads" 4000 >/dev/null 2>"$out/record.err"); then
	echo "demo: recorded $data with perf record --call-graph dwarf"
else
	echo "demo: perf cannot record here ($(head -n 1 "$out/record.err"));"
	echo "demo: using the committed capture testdata/perf/file-dwarf.data"
	cp "$top/testdata/perf/file-dwarf.data" "$data"
fi

export HOME=$out/home   # the build-id cache perf record filled
"$top/restack" info "$data" >"$out/info.txt" || exit 2
"$top/restack" convert "$data" -o "$out/stacks.folded" --stats \
	2>"$out/stats.txt" || exit 2
"$top/restack" convert "$data" -o "$out/stacks.script" || exit 2
"$top/restack" convert "$data" -o "$out/profile.pb.gz" || exit 2
"$top/restack" convert "$data" -o "$out/profile.speedscope.json" || exit 2
"$top/restack" convert "$data" -o "$out/profile.json.gz" || exit 2
"$top/restack" convert "$data" -o "$out/flamegraph.svg" \
	--title "restack demo: threads + libwork.so" || exit 2
sed -n '1,20p' "$out/stats.txt"
echo
echo "demo: heaviest stacks:"
sort -t' ' -k2 -n -r "$out/stacks.folded" | head -n 5 | cut -c1-160
echo
echo "demo: results in $out/:"
echo "  info.txt        restack info (header, events, record counts)"
echo "  stacks.folded   folded stacks (flamegraph.pl, inferno, speedscope)"
echo "  stacks.script   the stacks in perf script's text shape"
echo "  stats.txt       unwinding statistics"
echo "  profile.pb.gz   pprof (go tool pprof -http=: profile.pb.gz)"
echo "  profile.speedscope.json   for https://www.speedscope.app"
echo "  profile.json.gz for https://profiler.firefox.com (Load a profile from file)"
echo
echo "demo: flame graph (open it in a browser: hover, click to zoom, Ctrl-F):"
echo "  $out/flamegraph.svg"
