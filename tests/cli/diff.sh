#!/bin/bash
# diff.sh - `restack diff BASE NEW`.  testdata/src/diffwork.c recorded
# twice, the second time with work_b doing twice the work (its self
# share goes from 1/2 to 2/3: +16.7 points):
#   the JSON report names work_b first, its self and inclusive share
#   grown as perf report's self shares say (+-1 point; about +16.7 by
#   design), work_a second, shrunk as perf report says;
#   --fail-above below that exits 1 (and says so), above it exits 0;
#   go tool pprof -diff_base -normalize on the two pprof conversions
#   agrees (work_b's flat% within 1 point of the report's change), and
#   restack's own pprof diff (BASE negated) reads in go tool pprof as
#   work_b's weight in NEW less its weight in BASE;
#   the differential folded output is "stack base new" for every stack
#   of either; the flame graph is red for work_b, blue for work_a.
# And stacks lost to truncation (deep.c with and without stitching) are
# reported under "coverage", not as changes, and fail no gate.
. "$(dirname "$0")/lib.sh"

need_perf
cc=$(command -v cc || command -v gcc) || skip_all "no C compiler"
"$cc" -O2 -g -o "$T/diffwork" "$TESTDATA/src/diffwork.c" ||
	skip_all "cannot build diffwork"
"$cc" -O2 -g -fomit-frame-pointer -o "$T/deep" "$TESTDATA/src/deep.c" ||
	skip_all "cannot build deep"

record -e cpu-clock -F 4000 --call-graph dwarf -o "$T/base.data" \
	-- "$T/diffwork" 4000 >/dev/null || skip_all "perf record failed"
record -e cpu-clock -F 4000 --call-graph dwarf -o "$T/new.data" \
	-- "$T/diffwork" 4000 double >/dev/null || skip_all "perf record failed"

# field JSON NAME KEY: the number KEY of function NAME in a report.
field() {
	python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
for f in r["functions"]:
    if f["name"] == sys.argv[2]:
        print("%.3f" % f[sys.argv[3]])' "$@"
}
# within A B TOL: |A - B| <= TOL
within() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; exit !(d <= t && -d <= t) }'; }

restack_clean diff -q "$T/base.data" "$T/new.data" -o "$T/d.json" 2>"$T/err"
is "$?" 0 "diff writes the JSON report (no gate: exit 0)"
first=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["functions"][0]["name"])' "$T/d.json")
is "$first" work_b "the report names work_b first"
second=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["functions"][1]["name"])' "$T/d.json")
is "$second" work_a "... and work_a second"
# pshare DATA FUNC: perf report's self share (%) of FUNC (or a clone of
# it, FUNC.constprop.0) in DATA, the oracle: equal loops need not take
# equal time, and a slow start adds samples outside both.
pshare() {
	perf_clean report -i "$1" --stdio --no-children -g none --sort symbol \
		2>/dev/null | awk -v f="$2" '$3 == f || index($3, f ".") == 1 {
			sub(/%/, "", $1); s += $1 } END { printf "%.3f\n", s }'
}
pb=$(awk -v a="$(pshare "$T/new.data" work_b)" \
	-v b="$(pshare "$T/base.data" work_b)" 'BEGIN { print a - b }')
pa=$(awk -v a="$(pshare "$T/new.data" work_a)" \
	-v b="$(pshare "$T/base.data" work_a)" 'BEGIN { print a - b }')
self=$(field "$T/d.json" work_b self_delta_pp)
incl=$(field "$T/d.json" work_b inclusive_delta_pp)
check "work_b's self share grew by perf report's $pb +-1 points ($self; by design about 16.7)" \
	within "$self" "$pb" 1
check "work_b's inclusive share grew by as much ($incl)" within "$incl" "$pb" 1
check "work_a's self share shrank by perf report's $pa +-1 points" \
	within "$(field "$T/d.json" work_a self_delta_pp)" "$pa" 1
check "... and the workload did what it was built for (+$pb points, 16.7 +-5)" \
	within "$pb" 16.667 5

restack_clean diff -q --fail-above 10 "$T/base.data" "$T/new.data" -o "$T/g.json" 2>"$T/err"
is "$?" 1 "--fail-above 10: exit 1"
restack_clean diff --fail-above 10 "$T/base.data" "$T/new.data" -o "$T/g.json" 2>"$T/err"
check "... naming work_b on stderr" grep -q "work_b grew by" "$T/err"
check "... and in the report's failed list" grep -q '"failed": \["work_b"\]' "$T/g.json"
restack_clean diff -q --fail-above 25 "$T/base.data" "$T/new.data" -o "$T/g.json" 2>"$T/err"
is "$?" 0 "--fail-above 25: exit 0"

# go tool pprof as the oracle
if command -v go >/dev/null 2>&1 && go version >/dev/null 2>&1; then
	gopprof() {
		mkdir -p "$T/gohome"
		env HOME="$T/gohome" GOCACHE="$T/gohome/cache" \
			GOPATH="$T/gohome/go" GOTOOLCHAIN=local \
			PPROF_TMPDIR="$T/gohome/pprof" \
			go tool pprof -symbolize=none -top "$@" 2>/dev/null
	}
	restack_clean convert -q "$T/base.data" -o "$T/base.pb.gz"
	restack_clean convert -q "$T/new.data" -o "$T/new.pb.gz"
	flatpct=$(gopprof -normalize -sample_index=samples \
		-diff_base "$T/base.pb.gz" "$T/new.pb.gz" |
		awk '$NF == "work_b" { sub(/%/, "", $2); print $2 }')
	check "go tool pprof -diff_base -normalize agrees: work_b $flatpct% vs $self" \
		within "${flatpct:-0}" "$self" 1
	restack_clean diff -q "$T/base.data" "$T/new.data" -o "$T/d.pb.gz"
	flat=$(gopprof -sample_index=samples "$T/d.pb.gz" |
		awk '$NF == "work_b" { print $1 }')
	want=$(python3 -c '
import json, sys
for f in json.load(open(sys.argv[1]))["functions"]:
    if f["name"] == "work_b":
        print(f["weights"]["self"][1] - f["weights"]["self"][0])' "$T/d.json")
	is "$flat" "$want" "restack's pprof diff in go tool pprof: work_b's NEW less BASE"
else
	skip "go tool pprof checks" "go is not installed (golang-go)"
fi

restack_clean convert -q "$T/base.data" -o "$T/base.folded"
restack_clean convert -q "$T/new.data" -o "$T/new.folded"
restack_clean diff -q "$T/base.folded" "$T/new.folded" -o "$T/d.folded" 2>"$T/err"
# A line is "stack base new"; a stack may hold blanks (a sample taken
# while the program was exec'd: "[truncated: module not found]").
# dcol N: "stack count" of d.folded's lines whose column N (1: base, 2:
# new) is above 0.
dcol() {
	awk -v c="$1" '{ v = c == 1 ? $(NF - 1) : $NF; s = $0
		sub(/ [^ ]+ [^ ]+$/, "", s); if (v > 0) print s, v }' "$T/d.folded"
}
awk '{ sub(/ [^ ]+ [^ ]+$/, ""); print }' "$T/d.folded" >"$T/d.stacks"
cat "$T/base.folded" "$T/new.folded" | awk '{ sub(/ [^ ]+$/, ""); print }' |
	sort -u >"$T/both.stacks"
same_file "$T/d.stacks" "$T/both.stacks" \
	"differential folded: every stack of either, sorted"
dcol 2 >"$T/d.new"
same_file "$T/d.new" "$T/new.folded" "... its last column is NEW"
dcol 1 >"$T/d.base"
same_file "$T/d.base" "$T/base.folded" "... the one before BASE"
restack_clean diff -q "$T/base.folded" "$T/new.folded" -o "$T/d.svg" 2>"$T/err"
check "differential svg: work_b red" \
	grep -q '<title>work_b.*fill="rgb(255,' <(tr -d '\n' <"$T/d.svg" | sed 's|</g>|&\n|g')
check "differential svg: work_a blue" \
	grep -q '<title>work_a.*fill="rgb([0-9]*,[0-9]*,255)' <(tr -d '\n' <"$T/d.svg" | sed 's|</g>|&\n|g')

# Stacks lost to truncation are not a regression.
if record -e cpu-clock -F 2000 --call-graph dwarf,2048 -o "$T/deep.data" \
	-- "$T/deep" 8000 >/dev/null; then
	restack_clean convert -q "$T/deep.data" -o "$T/whole.folded"
	restack_clean convert -q --stitch=off "$T/deep.data" -o "$T/cut.folded"
	restack_clean diff -q --fail-above 1 "$T/cut.folded" "$T/whole.folded" -o "$T/c.json" 2>"$T/err"
	is "$?" 0 "more truncation in BASE fails no gate"
	check "main is reported under coverage" python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert "main" in [f["name"] for f in r["coverage"]]
assert "main" not in [f["name"] for f in r["functions"]]' "$T/c.json"
else
	fail "deep: perf record"
fi

"$RESTACK" diff "$T/base.folded" -o "$T/x.json" 2>/dev/null
is "$?" 64 "one input: usage error"
"$RESTACK" diff "$T/base.folded" "$T/new.folded" -o "$T/x.data" 2>/dev/null
is "$?" 64 "perf.data output: usage error"
done_testing
