#!/bin/bash
# profile.sh - damaged profile inputs (folded stacks, pprof): one line
# naming the file and the byte offset (in the file, or in a pprof's
# uncompressed message), exit 2, no output left behind; a profile asked
# to become a capture (perf, sysprof output) and bad --from are usage
# errors (exit 64).  The pprof inputs are testdata/corpus/profile's.
. "$(dirname "$0")/../cli/lib.sh"

C=$TESTDATA/corpus/profile

# bad NAME WANT_RC PATTERN IN [OPTIONS...]: convert IN to folded stacks.
bad() {
	local name=$1 want=$2 pat=$3 in=$4 rc
	shift 4
	"$RESTACK" convert "$@" "$in" -o "$T/out.folded" 2>"$T/err"
	rc=$?
	if [ $rc -ne "$want" ]; then
		fail "$name: exit $want" "got $rc" "$(cat "$T/err")"
	elif [ "$want" = 2 ] && [ "$(wc -l <"$T/err")" != 1 ]; then
		fail "$name: one line" "$(cat "$T/err")"
	elif ! grep -qE "$pat" "$T/err"; then
		fail "$name: message" "want: $pat" "$(cat "$T/err")"
	elif [ -e "$T/out.folded" ]; then
		fail "$name: no output left"
	else
		ok "$name"
	fi
	rm -f "$T/out.folded"
}

printf 'main;a 1\nmain;b x\n' >"$T/noweight.folded"
bad "folded line without a weight" 2 \
	"noweight.folded\+0x9: folded line without a weight" "$T/noweight.folded"
printf 'main;a 99999999999999999999\n' >"$T/big.folded"
bad "folded weight over 2^64" 2 "big.folded\+0x0: .*over 2\^64" "$T/big.folded"
printf 'main;a 1\n\0\0 2\n' >"$T/nul.folded"
bad "NUL in a folded line" 2 "nul.folded\+0x9: " "$T/nul.folded"

head -c 300 "$C/file-dwarf.pb.gz" >"$T/cut.pb.gz"
bad "gzip cut short" 2 "cut.pb.gz\+0x[0-9a-f]+: gzip data ends early" "$T/cut.pb.gz"
head -c 1000 "$C/deep-truncated.pb" >"$T/cut.pb"
bad "protobuf message cut short" 2 \
	"cut.pb\+0x3a8: protobuf field 2 runs past its message" "$T/cut.pb"
# the first location id in a sample changed to one no location has
python3 - "$C/deep-truncated.pb" "$T/noloc.pb" <<'PY'
import sys
b = bytearray(open(sys.argv[1], 'rb').read())
i = b.index(b'\x12')       # the first sample
j = b.index(b'\x0a', i + 2) # its packed location ids
b[j + 2] = 0x7f
open(sys.argv[2], 'wb').write(bytes(b))
PY
bad "sample naming no location" 2 "noloc.pb\+0x[0-9a-f]+: no location 127" "$T/noloc.pb"
printf '\x0a\x04\x08\x01\x10\x02\x2a\x04\x08\x01\x10\x09\x32\x00' >"$T/strings.pb"
bad "string index out of the table" 2 "strings.pb\+0xa: string index 9 beyond" "$T/strings.pb" --from pprof
bad "a sample type it does not have" 2 "no sample type 'nope'" \
	"$C/file-dwarf.pb.gz" --sample-type nope
printf '{"traceEvents": [\n{"name": "a", "ph": "X", "ts": 1}]}' >"$T/nodur.json"
bad "trace: X event without dur" 2 "nodur.json\+0x12: duration event without dur" "$T/nodur.json"
printf '[{"name": "a", "ph": "B", "ts": x}]' >"$T/nan.json"
bad "trace: ts not a number" 2 "nan.json\+0x20: JSON: a number expected" "$T/nan.json"
printf '[{"name": "a\\u12' >"$T/cut.json"
bad "trace: string cut short" 2 "cut.json\+0x[0-9a-f]+: JSON: " "$T/cut.json"
printf '{"traceEvents": {}}' >"$T/noarr.json"
bad "trace: traceEvents not an array" 2 "noarr.json\+0x[0-9a-f]+: JSON: " "$T/noarr.json"
python3 -c 'print("[" * 100)' >"$T/deep.json"
bad "trace: nested over 64 deep" 2 "deep.json\+0x[0-9a-f]+: JSON: nested over 64 deep" "$T/deep.json"
bad "folded read as pprof" 2 "dec.*: " "$C/decimal.folded" --from pprof

"$RESTACK" convert "$C/file-dwarf.pb.gz" -o "$T/out.data" 2>"$T/err"
is "$?" 64 "perf output from a profile: usage error"
"$RESTACK" convert "$C/file-dwarf.pb.gz" -o "$T/out.syscap" 2>"$T/err"
is "$?" 64 "sysprof output from a profile: usage error"
check "... saying why" grep -q "is a profile: perf and sysprof output need a capture" "$T/err"
# what only a capture has: intervals, threads over time, samples' times
for opt in "--profile offcpu" "--profile wall" "--pids 1" "--tids 1" \
	"--comms a" "--time 1,2"; do
	# shellcheck disable=SC2086
	"$RESTACK" convert $opt "$C/decimal.folded" -o "$T/out.folded" \
		2>"$T/err"
	is "$?" 64 "$opt with a profile: usage error"
	check "... saying why" grep -q "is a profile: .*need.* a capture" \
		"$T/err"
done
"$RESTACK" convert --split thread --outdir "$T/split" \
	"$C/file-dwarf.pb.gz" 2>"$T/err"
is "$?" 64 "--split with a profile: usage error"
"$RESTACK" convert --from json "$C/file-dwarf.pb.gz" -o "$T/out.folded" 2>"$T/err"
is "$?" 64 "--from json: usage error"
done_testing
