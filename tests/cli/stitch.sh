#!/bin/bash
# stitch.sh - stacks cut short by the 8 KiB stack copy are completed from
# the thread's root cache: deep recursion (testdata/src/deep.c) recorded
# with the default window must come out as it does with a 64 KiB window;
# the self-check must be honest; memory stays within its budget.
. "$(dirname "$0")/lib.sh"

need_perf
command -v python3 >/dev/null || skip_all "python3 is needed"
cc=$(command -v cc || command -v gcc) || skip_all "no C compiler"
home=$T/home

"$cc" -O2 -g -fomit-frame-pointer -o "$T/deep" "$TESTDATA/src/deep.c" ||
	skip_all "cannot build deep.c"
# Enough samples that the depth shares of two recordings differ by
# sampling noise well under the 0.06 the comparison below allows (about
# 2500 spinning samples at 8 KiB, 1700 at 64 KiB, which costs 200 MB).
record -e cpu-clock -F 4000 --call-graph dwarf -o "$T/deep8.data" \
	-- "$T/deep" 90000 >/dev/null || skip_all "perf record failed"
record -e cpu-clock -F 4000 --call-graph dwarf,65528 -o "$T/deep64.data" \
	-- "$T/deep" 60000 >/dev/null || skip_all "perf record failed"

# depths FOLDED: "leaf N" (samples spinning at recursion depth N) and
# "all N" (samples at depth N) lines, plus "main" (samples under main) and
# "total".
depths() {
	awk '{
		n = gsub(/;rec/, ";rec"); c = $NF; total += c
		if ($0 ~ /;main;/) main += c
		if ($0 ~ /;spin /) leaf[n] += c
		all[n] += c
	} END {
		for (d in leaf) print "leaf", d, leaf[d]
		for (d in all) print "all", d, all[d]
		print "main", main + 0; print "total", total + 0
	}' "$1" | sort -k1,1 -k2n
}

restack_clean convert "$T/deep8.data" -o "$T/deep8.folded"
restack_clean convert "$T/deep64.data" -o "$T/deep64.folded"
depths "$T/deep8.folded" >"$T/d8"
depths "$T/deep64.folded" >"$T/d64"

# Without stitching most deep samples are cut (the premise of the test).
restack_clean convert --stitch=off "$T/deep8.data" -o "$T/off.folded"
cut=$(awk '/truncated: window exhausted/ { s += $NF } END { print s + 0 }' \
	"$T/off.folded")
total=$(awk '$1 == "total" { print $2 }' "$T/d8")
check "without stitching, most samples are cut by the window ($cut of $total)" \
	test "$cut" -gt $((total / 3))

# With it, 99.5% reach main, and spinning samples sit at 40, 150 or 300.
check "99.5% of samples reach main with stitching" awk '
	$1 == "main" { m = $2 } $1 == "total" { t = $2 }
	END { printf "# %d of %d\n", m, t; exit !(t > 0 && m >= 0.995 * t) }' "$T/d8"
check "every spinning sample is at depth 40, 150 or 300" awk '
	$1 == "leaf" { n += $3; if ($2 == 40 || $2 == 150 || $2 == 300) ok += $3 }
	END { printf "# %d of %d\n", ok, n; exit !(n > 0 && ok >= 0.995 * n) }' "$T/d8"
check "the three depths have the same shares as with a 64 KiB window" \
	python3 - "$T/d8" "$T/d64" <<'EOF'
import sys
def shares(p):
    d = {}
    for l in open(p):
        k, n, c = (l.split() + [''])[:3]
        if k == 'leaf':
            d[int(n)] = int(c)
    t = sum(d.values())
    return {k: v / t for k, v in d.items()}
a, b = shares(sys.argv[1]), shares(sys.argv[2])
for d in (40, 150, 300):
    print('# depth %d: %.3f (8 KiB) %.3f (64 KiB)' % (d, a.get(d, 0), b.get(d, 0)))
    if b.get(d, 0) < 0.2 or abs(a.get(d, 0) - b.get(d, 0)) > 0.06:
        sys.exit(1)
EOF

# The self-check: complete stacks cut in half and stitched again.
restack_clean stats --validate-stitch "$T/deep8.data" >"$T/v.txt"
# check_share FILE WHAT: the percentage "N WHAT (P%)" of the stitch check
check_share() {
	sed -n "s/.*stitch check.* $2 (\([0-9.]*\)%).*/\1/p" "$1"
}
exact=$(check_share "$T/v.txt" exact)
wrong=$(check_share "$T/v.txt" wrong)
check "--validate-stitch reports >= 99% exact stitches ($exact%)" \
	awk -v e="$exact" 'BEGIN { exit !(e >= 99) }'
restack_clean stats --validate-stitch --stitch-max-nodes 20 "$T/deep8.data" \
	>"$T/vbad.txt"
check "--validate-stitch finds no wrong stitch ($wrong%)" \
	awk -v e="$wrong" 'BEGIN { exit !(e != "" && e == 0) }'
bad=$(check_share "$T/vbad.txt" exact)
check "a starved root cache makes the self-check drop ($bad%)" \
	awk -v e="$bad" 'BEGIN { exit !(e < 50) }'
check "stitched frames are marked as such in script output" \
	bash -c "env -i PATH=/usr/bin:/bin HOME='$home' '$RESTACK' convert \
		'$T/deep8.data' --to script -o - | grep -q ' stitched$'"
# Script output (both passes resolve every sample, in order) and folded
# output (the second pass only retries what the first could not complete)
# give the same stacks.
restack_clean convert "$T/deep8.data" --to script -o "$T/deep8.script"
python3 "$TOP/tests/tools/collapse.py" "$T/deep8.script" >"$T/deep8.sf"
same_file "$T/deep8.sf" "$T/deep8.folded" \
	"script and folded output agree on every stitched stack"
# The second pass reads only the records it needs where the first could
# say where they are (perfdata_visit_only()); with compressed records
# (perf record -z) it cannot, and walks the file: the same either way.
if record -z -e cpu-clock -F 4000 --call-graph dwarf -o "$T/deepz.data" \
	-- "$T/deep" 30000 >/dev/null 2>&1; then
	restack_clean convert "$T/deepz.data" --to script -o "$T/deepz.script"
	python3 "$TOP/tests/tools/collapse.py" "$T/deepz.script" >"$T/deepz.sf"
	restack_clean convert "$T/deepz.data" -o "$T/deepz.folded"
	same_file "$T/deepz.sf" "$T/deepz.folded" \
		"compressed capture: script and folded output agree too"
fi
# Single pass (a pipe): samples before the deep stacks are first seen
# may stay cut, the rest is stitched.
restack_clean convert - -o "$T/pipe.folded" <"$T/deep8.data"
check "reading from a pipe (one pass) still stitches" \
	bash -c "grep -q ';main;rec' '$T/pipe.folded' && \
		 [ \$(awk '/truncated/ { s += \$NF } END { print s + 0 }' \
		      '$T/pipe.folded') -lt $cut ]"

# Memory: many threads, one budget.
"$cc" -O2 -g -fomit-frame-pointer -o "$T/many" \
	"$TESTDATA/src/manythreads.c" -lpthread || skip_all "no manythreads"
record -e cpu-clock -F 4000 --call-graph dwarf -o "$T/many.data" \
	-- "$T/many" 256 >/dev/null || skip_all "perf record failed"
restack_clean stats --stitch-memory 1 "$T/many.data" >"$T/m1.txt"
frames=$(awk '/root cache/ { print $5 }' "$T/m1.txt")
check "root caches stay within --stitch-memory 1 ($frames frames)" \
	test "$frames" -le $((1048576 / 96))
rss_of() {
	/usr/bin/time -f %M -o "$T/rss" env -i PATH=/usr/bin:/bin \
		HOME="$home" "$RESTACK" stats "$@" >/dev/null 2>&1
	cat "$T/rss"
}
if [ -x /usr/bin/time ]; then
	small=$(rss_of --stitch-memory 1 "$T/many.data")
	big=$(rss_of "$T/many.data")
	check "peak RSS with 256 threads is flat ($small KB at 1 MiB, $big KB at 64 MiB)" \
		test $((big - small)) -lt 16384
else
	skip "peak RSS with many threads" "/usr/bin/time is not installed"
fi
done_testing
