#!/bin/bash
# writeerr.sh - every command checks its writes to standard output and
# the last flush (restack's stdout on /dev/full): exit 2 with a message,
# never 0 with the output lost.
. "$(dirname "$0")/lib.sh"

[ -c /dev/full ] || skip_all "no /dev/full"
in=$TESTDATA/perf/file-dwarf.data
prog=$TESTDATA/bin/prog

# full NAME ARGS...: restack ARGS with stdout on /dev/full exits 2 and
# says it could not write.
full() {
	local name=$1 rc
	shift
	"$RESTACK" "$@" >/dev/full 2>"$T/err"
	rc=$?
	if [ "$rc" = 2 ] && grep -q 'cannot write' "$T/err"; then
		ok "$name: exit 2 on a full standard output"
	else
		fail "$name: exit 2 on a full standard output" "exit $rc" \
			"$(tail -n 3 "$T/err")"
	fi
}

full "stats" stats --offline "$in"
full "stats --stats-json -" stats --offline --stats-json - "$in"
full "info" info "$in"
full "dump" dump "$in"
full "symbolize" symbolize "$prog" 1139
full "convert -o - (folded)" convert --offline "$in" -o -
full "convert -o - (script)" convert --offline --to script "$in" -o -
full "convert -o - (perf)" convert --offline --to perf "$in" -o -
full "convert --stats-json -" convert --offline --stats-json - "$in" \
	-o "$T/x.folded"
full "--help" --help
full "--version" --version
full "convert --help" convert --help
full "stats --help" stats --help

# a standard output that works still exits 0
"$RESTACK" stats --offline "$in" >"$T/stats.txt" 2>/dev/null
is "$?" 0 "stats to a file: exit 0"
check "stats to a file: output written" test -s "$T/stats.txt"

done_testing
