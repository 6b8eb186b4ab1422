#!/bin/bash
# make-fixtures.sh - re-record the perf.data fixtures in testdata/perf/ and
# print the lines for testdata/README.md.  Needs root (or a permissive
# perf_event_paranoid), perf, gcc and python3.  Run from the repository top:
#
#   testdata/make-fixtures.sh            # record into testdata/perf/
#   make && tests/cli/fixtures.sh --regen   # then refresh testdata/expected/
#
# Everything runs in the fixed directory /tmp/restack-testdata under
# `env -i PATH=/usr/bin:/bin HOME=/tmp/restack-testdata/home`, so the only
# paths and environment strings that land in the files (MMAP2 names,
# cmdline, the environment copied in user stacks) are those.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
work=/tmp/restack-testdata
rm -rf "$work"
mkdir -p "$work/home"
trap 'rm -rf "$work"' EXIT

gcc -O2 -g -o "$work/prog" "$top/testdata/src/prog.c"
cp "$work/prog" "$top/testdata/bin/prog"

rec() { # rec OUT PERF-RECORD-ARGS...  (OUT '-' style: args include -o)
	(cd "$work" && env -i PATH=/usr/bin:/bin HOME="$work/home" \
		perf record -q "$@")
}
pver=$(perf version | sed 's/^perf version //')
kver=$(uname -r)
arch=$(uname -m)
line() { # line FILE COMMAND
	printf -- '- `%s`: `%s` (perf %s, kernel %s, %s)\n' "$1" "$2" \
		"$pver" "$kver" "$arch"
}

cd "$work"
rec -e cpu-clock -F 1000 --call-graph dwarf,1024 -o file-dwarf.data -- ./prog 600
line file-dwarf.data "perf record -e cpu-clock -F 1000 --call-graph dwarf,1024 -o file-dwarf.data -- ./prog 600"
rec -e cpu-clock -F 1000 -g -o - -- ./prog 600 > pipe-g.data
line pipe-g.data "perf record -e cpu-clock -F 1000 -g -o - -- ./prog 600 > pipe-g.data"
rec -z -e cpu-clock -F 1000 --call-graph dwarf,1024 -o z-dwarf.data -- ./prog 600
line z-dwarf.data "perf record -z -e cpu-clock -F 1000 --call-graph dwarf,1024 -o z-dwarf.data -- ./prog 600"
rec -z -e cpu-clock -F 1000 --buildid-mmap -o - -- ./prog 600 > zpipe-bid.data
line zpipe-bid.data "perf record -z -e cpu-clock -F 1000 --buildid-mmap -o - -- ./prog 600 > zpipe-bid.data"
rec -e cpu-clock -e sched:sched_switch -F 1000 -g -o tp-multi.data -- ./prog 600
line tp-multi.data "perf record -e cpu-clock -e sched:sched_switch -F 1000 -g -o tp-multi.data -- ./prog 600"
python3 "$top/tests/tools/perfswap.py" file-dwarf.data be-dwarf.data
line be-dwarf.data "python3 tests/tools/perfswap.py file-dwarf.data be-dwarf.data (big-endian copy of file-dwarf.data)"

chmod 644 ./*.data
cp ./*.data "$top/testdata/perf/"
ls -l "$top/testdata/perf/"
