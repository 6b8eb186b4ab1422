#!/bin/bash
# speedscope.sh - `restack convert --to speedscope` imported by speedscope
# itself (npm package speedscope, its page in headless Chromium): after
# the import, speedscope's own export of the model it built is captured
# (tests/tools/speedscope_fold.js reads it) and its stacks and totals
# must equal the folded output's; one profile per thread; same bytes on
# every run.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/tools/npm.sh"

need_perf
CHROMIUM=$(command -v chromium || command -v chromium-browser) ||
	skip_all "chromium is not installed (scripts/deps.sh test)"
need_npm speedscope@1
cc=$(command -v cc || command -v gcc) || skip_all "no C compiler"

release=$NPM_DIR/node_modules/speedscope/dist/release
js=$(ls "$release"/speedscope-*.js 2>/dev/null | head -n 1)
css=$(ls "$release"/speedscope-*.css 2>/dev/null | head -n 1)
[ -n "$js" ] || skip_all "speedscope package without dist/release"

build_threads
"$cc" -O2 -g -fomit-frame-pointer -o "$T/deep" "$TESTDATA/src/deep.c" ||
	skip_all "cannot build deep"

# The page: speedscope's bundle, loading the profile named in the URL
# (#localProfilePath, as speedscope's CLI does), then saving it (Ctrl-S)
# with the download caught and written into the DOM as base64.
cat >"$T/page.html" <<HTML
<!DOCTYPE html>
<html><head><meta charset="UTF-8"><title>speedscope</title>
<link rel="stylesheet" href="file://$css">
<script>
URL.createObjectURL = function (blob) {
	blob.text().then(function (t) {
		var pre = document.createElement('pre');
		pre.id = 'exported';
		pre.textContent = btoa(unescape(encodeURIComponent(t)));
		document.body.appendChild(pre);
	});
	return 'data:,';
};
HTMLAnchorElement.prototype.click = function () {};
var polls = 0, timer = setInterval(function () {
	if (/ - speedscope\$/.test(document.title)) {
		clearInterval(timer);
		window.dispatchEvent(new KeyboardEvent('keydown', { key: 's', ctrlKey: true }));
	} else if (++polls > 400) {
		clearInterval(timer);
		document.body.appendChild(document.createElement('pre')).id = 'timeout';
	}
}, 50);
</script></head>
<body><script src="file://$js"></script></body></html>
HTML

merged() {
	awk '{ n = $NF; $NF = ""; sub(/ $/, ""); s[$0] += n }
	     END { for (k in s) print k, s[k] }' "$1" | sort
}

# imported NAME JSON: speedscope's stacks of JSON as folded lines in
# $T/NAME.ss (merged); the summary in $T/NAME.ss.err.
imported() {
	local name=$1 json=$2
	printf 'speedscope.loadFileFromBase64("%s.speedscope.json", "%s");\n' \
		"$name" "$(base64 -w0 "$json")" >"$T/$name.js"
	timeout 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu \
		--no-first-run --user-data-dir="$T/chrome" \
		--virtual-time-budget=30000 --dump-dom \
		"file://$T/page.html#localProfilePath=$T/$name.js" \
		>"$T/$name.dom" 2>>"$T/chrome.err"
	sed -n 's/.*<pre id="exported">\([^<]*\)<.*/\1/p' "$T/$name.dom" >"$T/$name.b64"
	[ -s "$T/$name.b64" ] || { echo "speedscope did not import or export"; return 1; }
	NODE_PATH=$NPM_DIR/node_modules node "$TOP/tests/tools/speedscope_fold.js" \
		"$T/$name.b64" >"$T/$name.ss.raw" 2>"$T/$name.ss.err" || {
		cat "$T/$name.ss.err"
		return 1
	}
	merged "$T/$name.ss.raw" >"$T/$name.ss"
}

# compare NAME DATA OPTIONS...
compare() {
	local name=$1 data=$T/$2.data
	shift 2
	if ! restack_clean convert "$@" "$data" -o "$T/$name.speedscope.json" 2>"$T/err"; then
		fail "$name: convert to speedscope" "$(cat "$T/err")"
		return
	fi
	restack_clean convert "$@" "$data" -o "$T/$name.folded" 2>/dev/null
	restack_clean convert "$@" --tid "$data" -o "$T/$name.tid.folded" 2>/dev/null
	restack_clean convert "$@" --to speedscope "$data" -o - >"$T/$name.again" 2>/dev/null
	same_file "$T/$name.speedscope.json" "$T/$name.again" \
		"$name: the same bytes again (--to speedscope to standard output)"
	if ! out=$(imported "$name" "$T/$name.speedscope.json"); then
		fail "$name: speedscope imports the profile" "$out" "$(tail -n 5 "$T/chrome.err")"
		return
	fi
	echo "# $name: speedscope: $(cat "$T/$name.ss.err")"
	merged "$T/$name.folded" >"$T/$name.f"
	same_file "$T/$name.ss" "$T/$name.f" \
		"$name: speedscope's stacks and totals equal folded ($(wc -l <"$T/$name.f") stacks, total $(awk '{ t += $NF } END { print t }' "$T/$name.f"))"
	threads=$(sed 's/;.*//' "$T/$name.tid.folded" | sort -u | wc -l)
	check "$name: one profile per thread ($threads)" \
		grep -q "^profiles $threads " "$T/$name.ss.err"
}

if record -e cpu-clock -F 2000 --call-graph dwarf -o "$T/threads.data" \
	-- "$T/threads" 1500 >/dev/null; then
	compare threads threads
	compare threads-period threads --weight period
	check "threads-period: periods in nanoseconds" \
		grep -q 'units nanoseconds ' "$T/threads-period.ss.err"
else
	fail "threads: perf record"
fi

if record -e cpu-clock -F 2000 --call-graph dwarf,2048 -o "$T/deep.data" \
	-- "$T/deep" 15000 >/dev/null; then
	compare deep-off deep --stitch=off
	check "deep-off: truncated stacks keep their marker" \
		grep -q '^deep;\[truncated: window exhausted\];' "$T/deep-off.ss"
	compare deep deep
else
	fail "deep: perf record"
fi
done_testing
