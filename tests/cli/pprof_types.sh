#!/bin/bash
# pprof_types.sh - pprof output of pprof inputs keeps every sample type.
# testdata/src/goheap.go (allocations of known sizes from three call
# paths, some kept, some freed) writes two heap profiles of different
# counts (four types: alloc_objects, alloc_space, inuse_objects,
# inuse_space); then, against `go tool pprof` as the oracle:
#   restack merge a b equals Go's merge (go tool pprof -proto a b) stack
#   by stack for each of the four types, with the same type names and
#   units, period type, period and time, and byte-identical whatever the
#   inputs' order; freed allocations (inuse 0, alloc not) are kept;
#   restack convert a equals a, and convert of Go's difference (-diff_base:
#   negative values; keep's 2 x (37 - 100) KiB) equals it, for each type;
#   an allocs profile's default_sample_type (alloc_space) survives, a heap
#   profile's absence of one too;
#   inputs of other types are an error naming the file and both lists
#   (exit 2, no output); --sample-type alloc_space gives samples and
#   alloc_space only, as before.
. "$(dirname "$0")/lib.sh"

command -v go >/dev/null 2>&1 && go version >/dev/null 2>&1 ||
	skip_all "go is not installed (golang-go)"

gobuild() {
	env -i PATH=/usr/bin:/bin HOME="$T/home" GOCACHE="$T/gocache" \
		GOPATH="$T/gopath" GO111MODULE=off GOTOOLCHAIN=local go "$@"
}
# go tool pprof with its state under $T (no toolchain downloads).
gopprof() {
	mkdir -p "$T/gohome"
	env HOME="$T/gohome" GOCACHE="$T/gohome/cache" GOPATH="$T/gohome/go" \
		GOTOOLCHAIN=local PPROF_TMPDIR="$T/gohome/pprof" \
		go tool pprof -symbolize=none "$@"
}

cp "$TESTDATA/src/goheap.go" "$T/"
(cd "$T" && gobuild build -o goheap goheap.go) >"$T/go.err" 2>&1 ||
	skip_all "go build fails: $(head -n 1 "$T/go.err")"
"$T/goheap" "$T/a.pb.gz" 100 && "$T/goheap" "$T/b.pb.gz" 37 &&
	"$T/goheap" "$T/allocs.pb.gz" 50 allocs ||
	skip_all "goheap does not write its profiles"
gopprof -proto "$T/a.pb.gz" "$T/b.pb.gz" >"$T/go.pb.gz" 2>"$T/go.err" ||
	skip_all "go tool pprof -proto does not merge: $(head -n 1 "$T/go.err")"
gopprof -proto -diff_base="$T/a.pb.gz" "$T/b.pb.gz" >"$T/godiff.pb.gz" \
	2>"$T/go.err" || skip_all "go tool pprof -diff_base fails"

rs() { restack_clean "$@" 2>"$T/err" || { fail "restack $*" "$(cat "$T/err")"; return 1; }; }

# types FILE: the sample types line of -raw ("alloc_objects/count ...",
# "[dflt]" after the default).
types() { gopprof -raw "$1" 2>/dev/null | sed -n '/^Samples:/{n;p;q}'; }
# header FILE: -raw's lines before the samples (period type, period,
# time, duration).
header() { gopprof -raw "$1" 2>/dev/null | sed '/^Samples:/,$d'; }
# stacks FILE TYPE: its stacks and their TYPE values, summed by stack.
stacks() {
	local unit=
	case $2 in *_space) unit=-unit=B ;; esac
	gopprof -traces -sample_index="$2" $unit "$1" 2>"$T/traces.err" |
		python3 "$TOP/tests/tools/pprof_traces.py" --stacks 2>/dev/null
}
# same_stacks NAME WANT GOT: every type's stacks equal.
same_stacks() {
	local t
	for t in alloc_objects alloc_space inuse_objects inuse_space; do
		stacks "$2" $t >"$T/want.$t"
		stacks "$3" $t >"$T/got.$t"
		if [ -s "$T/want.$t" ]; then
			same_file "$T/want.$t" "$T/got.$t" "$1: $t by stack"
		else
			fail "$1: $t by stack" "go tool pprof: $(cat "$T/traces.err")"
		fi
	done
}

four="alloc_objects/count alloc_space/bytes inuse_objects/count inuse_space/bytes"
is "$(types "$T/go.pb.gz")" "$four" "Go's merge: four types, no default"

rs merge "$T/a.pb.gz" "$T/b.pb.gz" -o "$T/m.pb.gz"
is "$(types "$T/m.pb.gz")" "$four" "merge: the four types and units, no default"
check "Go's merge has a period type" grep -q "^PeriodType: space bytes" \
	<(header "$T/go.pb.gz")
is "$(header "$T/m.pb.gz")" "$(header "$T/go.pb.gz")" \
	"merge: period type, period and time as Go's merge has them"
same_stacks "merge = go tool pprof -proto a b" "$T/go.pb.gz" "$T/m.pb.gz"
check "merge keeps churn's freed blocks (alloc_space, inuse 0)" \
	grep -q "main.churn 1683456$" "$T/got.alloc_space"
rs merge "$T/b.pb.gz" "$T/a.pb.gz" -o "$T/m2.pb.gz"
same_file "$T/m.pb.gz" "$T/m2.pb.gz" "merge: the inputs' order changes no byte"

rs convert "$T/a.pb.gz" -o "$T/c.pb.gz"
is "$(types "$T/c.pb.gz")" "$four" "convert: the four types and units"
is "$(header "$T/c.pb.gz")" "$(header "$T/a.pb.gz")" \
	"convert: period type, period and time kept"
same_stacks "convert a = a" "$T/a.pb.gz" "$T/c.pb.gz"
rs convert "$T/godiff.pb.gz" -o "$T/cd.pb.gz"
same_stacks "convert of Go's -diff_base (negative values)" \
	"$T/godiff.pb.gz" "$T/cd.pb.gz"
check "... whose keep stack is negative" \
	grep -q "main.keep -129024$" "$T/got.alloc_space"

rs convert "$T/allocs.pb.gz" -o "$T/ca.pb.gz"
is "$(types "$T/ca.pb.gz")" "$(types "$T/allocs.pb.gz")" \
	"convert: an allocs profile's default_sample_type survives"
is "$(types "$T/ca.pb.gz")" \
	"alloc_objects/count alloc_space/bytes[dflt] inuse_objects/count inuse_space/bytes" \
	"... alloc_space"
rs merge "$T/allocs.pb.gz" "$T/a.pb.gz" -o "$T/ma.pb.gz"
is "$(types "$T/ma.pb.gz")" "$(types "$T/ca.pb.gz")" \
	"merge: the first input's default"

# another profile's types: a folded profile's pprof conversion
printf 'goheap;main.main;main.keep 3\n' >"$T/x.folded"
rs convert "$T/x.folded" -o "$T/x.pb.gz"
restack_clean merge "$T/a.pb.gz" "$T/x.pb.gz" -o "$T/bad.pb.gz" 2>"$T/err"
is "$?" 2 "merge of other sample types: exit 2"
check "... naming the file, its types and the first's, and --sample-type" \
	grep -q "x.pb.gz: sample types samples/count, weight/count, not .*a.pb.gz's ${four// /, }: pick one with --sample-type" "$T/err"
check "... and writing nothing" test ! -e "$T/bad.pb.gz"

rs merge --sample-type alloc_space "$T/a.pb.gz" "$T/b.pb.gz" -o "$T/s.pb.gz"
is "$(types "$T/s.pb.gz")" "samples/count[dflt] alloc_space/bytes" \
	"--sample-type alloc_space: samples and alloc_space, as before"
rs convert --sample-type alloc_space "$T/a.pb.gz" -o "$T/cs.pb.gz"
is "$(types "$T/cs.pb.gz")" "samples/count[dflt] alloc_space/bytes" \
	"... convert too"
rs merge "$T/a.pb.gz" "$T/x.folded" -o "$T/mix.pb.gz"
is "$(types "$T/mix.pb.gz")" "samples/count[dflt] inuse_space/bytes" \
	"pprof and folded inputs: samples and the chosen type, as before"

done_testing
