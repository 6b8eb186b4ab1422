#!/bin/bash
# svg.sh - `restack convert --to svg` rendered by headless Chromium: the
# screenshot has a drawing, the DOM holds exactly the frames of the
# folded call tree (names, weights), frames are coloured by kind, and the
# embedded script zooms and searches (driven by a script appended to a
# copy of the file).  Checks in tests/tools/flame_check.py.
. "$(dirname "$0")/lib.sh"

need_perf
CHROMIUM=$(command -v chromium || command -v chromium-browser) ||
	skip_all "chromium is not installed (scripts/deps.sh test)"
cc=$(command -v cc || command -v gcc) || skip_all "no C compiler"
check_py="python3 $TOP/tests/tools/flame_check.py"

build_threads
"$cc" -O2 -g -fomit-frame-pointer -o "$T/deep" "$TESTDATA/src/deep.c" ||
	skip_all "cannot build deep"

# chrome ARGS... URL: headless Chromium with its profile in $T.
chrome() {
	timeout 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu \
		--hide-scrollbars --no-first-run --user-data-dir="$T/chrome" \
		"$@" 2>>"$T/chrome.err"
}

# flame NAME: checks $T/NAME.data's flame graph.
flame() {
	local name=$1 svg=$T/$1.svg out
	if ! restack_clean convert "$T/$name.data" -o "$svg" 2>"$T/err"; then
		fail "$name: convert to svg" "$(cat "$T/err")"
		return
	fi
	restack_clean convert "$T/$name.data" -o "$T/$name.folded" 2>/dev/null
	restack_clean convert --annotate "$T/$name.data" -o "$T/$name.ann.folded" 2>/dev/null
	restack_clean convert --to svg "$T/$name.data" -o - >"$T/$name.again" 2>/dev/null
	same_file "$svg" "$T/$name.again" "$name: the same bytes again (--to svg to standard output)"

	chrome --window-size=1200,$(sed -n 's/.*<svg [^>]* height="\([0-9]*\)".*/\1/p' "$svg") \
		--screenshot="$T/$name.png" "file://$svg" >/dev/null
	out=$($check_py png "$T/$name.png")
	check "$name: the screenshot has a drawing ($out)" \
		awk -v p="${out#pixels }" -v c="${out##* }" \
			'BEGIN { exit !(p + 0 >= 10 && c + 0 >= 20) }'

	chrome --dump-dom "file://$svg" >"$T/$name.dom"
	check "$name: frames in the DOM are the folded call tree's ($($check_py frames "$T/$name.folded" "$T/$name.dom" | tail -n 1))" \
		$check_py frames "$T/$name.folded" "$T/$name.dom"
	check "$name: frames coloured by kind ($($check_py kinds "$T/$name.ann.folded" "$T/$name.dom" | tail -n 1))" \
		$check_py kinds "$T/$name.ann.folded" "$T/$name.dom"
}

# interact NAME FRAME REGEX: zoom into the first FRAME and search REGEX
# in the browser; the results are written into the DOM.
interact() {
	local name=$1 frame=$2 re=$3 want got
	sed "s|</svg>|<script><![CDATA[(function () {\
var z = fg.frames.filter(function (f) { return f.name === '$frame'; })[0];\
var out = document.documentElement.appendChild(document.createElementNS('http://www.w3.org/2000/svg', 'text'));\
out.id = 'testout';\
z.g.dispatchEvent(new MouseEvent('click', { bubbles: true }));\
var full = +z.r.getAttribute('width'), hidden = 0, wide = 0;\
fg.frames.forEach(function (f) { if (f.g.style.display === 'none') hidden++; else if (f.d < z.d \&\& +f.r.getAttribute('width') === full) wide++; });\
var share = fg.search('$re');\
fg.frames.filter(function (f) { return f.d === 0; })[0].g.dispatchEvent(new MouseEvent('click', { bubbles: true }));\
out.textContent = 'RESULT ' + full + ' ' + hidden + ' ' + wide + ' ' + z.d + ' ' + share.toFixed(4) + ' ' + fg.frames.filter(function (f) { return f.g.style.display === 'none'; }).length;\
})();]]></script></svg>|" "$T/$name.svg" >"$T/$name.test.svg"
	chrome --dump-dom "file://$T/$name.test.svg" >"$T/$name.test.dom"
	got=$(grep -o 'RESULT [^<]*' "$T/$name.test.dom" | tail -n 1)
	read -r _ full hidden wide depth share after <<<"$got"
	is "$full" 1180 "$name: a click on $frame zooms it to the whole width"
	is "$wide" "$depth" "$name: its $depth callers span the width"
	check "$name: frames outside it are hidden ($hidden)" test "${hidden:-0}" -gt 0
	is "$after" 0 "$name: a click on the bottom frame shows every frame again"
	want=$($check_py share "$T/$name.folded" "$re")
	check "$name: search '$re' matches $share% (folded: $want%)" \
		awk -v a="$share" -v b="$want" 'BEGIN { d = a - b; exit !(d < 0.001 && d > -0.001) }'
}

if record -e cpu-clock -F 2000 --call-graph dwarf -o "$T/threads.data" \
	-- "$T/threads" 1500 >/dev/null; then
	flame threads
	check "threads: frame labels drawn (worker, start_thread, lib_work)" \
		grep -q '>worker</text>.*>lib_work</text>' <(tr -d '\n' <"$T/threads.dom")
	check "threads: heading and legend" \
		grep -q 'Flame Graph</text>.*cpu-clock: [0-9]* samples.*>stitched</text>' \
		<(tr -d '\n' <"$T/threads.dom")
	interact threads worker 'lib_work'
else
	fail "threads: perf record"
fi

# Deep recursion cut by a 2 KiB stack copy: stitched frames.
if record -e cpu-clock -F 2000 --call-graph dwarf,2048 -o "$T/deep.data" \
	-- "$T/deep" 15000 >/dev/null; then
	flame deep
	check "deep: stitched frames drawn in their own colour" \
		grep -q 'stitched [0-9]' "$T/deep.dom"
	interact deep main 'spin'
else
	fail "deep: perf record"
fi
done_testing
