#!/bin/bash
# sysprof_real.sh - sysprof input from sysprof-cli 3.46 itself: a capture
# recorded here (tests/tools/sysprof-record.sh: private PID namespace,
# private system bus, polkitd and sysprofd) and the committed fixture
# testdata/sysprof/prog-346.syscap convert to folded stacks whose counts
# add up to the SAMPLE frames libsysprof-capture finds, and the workload
# is there under its own name.
. "$(dirname "$0")/lib.sh"

validate=$BUILD/tests/syscap_validate
fixture=$TESTDATA/sysprof/prog-346.syscap

# sample_frames CAPTURE: SAMPLE frames, as libsysprof-capture counts them
# (by restack's own reader when the validator is not built).
sample_frames() {
	if [ -x "$validate" ]; then
		"$validate" "$1" | awk '$1 == "type" && $2 == "sample" { print $3 }'
	else
		"$RESTACK" stats "$1" | awk '/^  samples/ { print $2 }'
	fi
}

folded_total() {
	awk '{ s += $NF } END { print s + 0 }' "$1"
}

# totals NAME CAPTURE WORKLOAD: the folded counts add up to the capture's
# samples, most of them in WORKLOAD.
totals() {
	local name=$1 cap=$2 comm=$3 want got mine
	if ! "$RESTACK" convert -q "$cap" -o "$T/$name.folded" 2>"$T/$name.err"; then
		fail "$name: convert to folded" "$(cat "$T/$name.err")"
		return
	fi
	want=$(sample_frames "$cap")
	got=$(folded_total "$T/$name.folded")
	check "$name: sysprof has samples ($want)" test "${want:-0}" -gt 50
	is "$got" "$want" "$name: folded counts add up to sysprof's SAMPLE frames"
	mine=$(awk -v c="$comm" '$1 ~ "^" c ";" { s += $NF } END { print s + 0 }' \
		"$T/$name.folded")
	# (Outside the recording's PID namespace, this machine's other work
	# is sampled too, as pid 0.)
	check "$name: $comm has its samples ($mine of $got)" \
		test "$mine" -ge 50
}

totals fixture "$fixture" prog
is "$(sample_frames "$fixture")" 129 "fixture: 129 SAMPLE frames, as recorded"

# A new recording, where this machine allows it.
if [ "$(id -u)" != 0 ] || ! command -v sysprof-cli >/dev/null; then
	skip "recording" "needs root and sysprof-cli"
else
	cp "$TESTDATA/bin/prog" "$T/prog"
	"$TOP/tests/tools/sysprof-record.sh" "$T/rec.syscap" "$T/prog" 4000 \
		>"$T/rec.log" 2>&1
	case $? in
	0) totals recording "$T/rec.syscap" prog ;;
	77) skip "recording" "$(tail -n 1 "$T/rec.log")" ;;
	*) fail "recording" "$(tail -n 5 "$T/rec.log")" ;;
	esac
fi

done_testing
