#!/bin/bash
# run.sh - restack's test runner (`make check` calls it with BUILD and
# RESTACK set).
#
#   tests/run.sh [-v] [PATTERN...]
#
# Runs, in this order, every
#   $BUILD/tests/test_*             unit test programs (tests/unit/test_*.c)
#   tests/cli/*.sh                  end-to-end scripts (except lib.sh)
#   tests/corrupt/*.sh              corrupt-input scripts
#   $BUILD/tests/replay_fuzz_NAME   over testdata/corpus/NAME/ (fuzz replay)
# whose name contains one of the PATTERNs (all when none is given).
# Adding a test means adding a file there: nothing to register.
#
# Protocol: a test prints one line per check, "ok - NAME", "not ok - NAME"
# (diagnostics follow on lines starting with '#') or "skip - NAME (why)".
# A test that exits non-zero without a "not ok" line counts as one
# failure; exit 77 skips the whole test.  -v prints every test's output.
# The last line is "N passed, N failed[, N skipped]"; the exit status is 1
# when anything failed.
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
export TOP=$top
export BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$top/$BUILD ;; esac
export RESTACK=${RESTACK:-$BUILD/restack}
case $RESTACK in /*) ;; *) RESTACK=$top/$RESTACK ;; esac
# Tests get a clean, predictable locale and no perf config of the caller.
export LC_ALL=C
export TEST_TIMEOUT=${TEST_TIMEOUT:-600}

verbose=0
if [ "${1:-}" = -v ]; then
	verbose=1
	shift
fi
patterns=("$@")

out=$(mktemp -d "${TMPDIR:-/tmp}/restack-run.XXXXXX")
trap 'rm -rf "$out"' EXIT
# restack keeps decompressed DWARF under $XDG_CACHE_HOME (dwcache.h):
# tests write there, never to the caller's cache.
export XDG_CACHE_HOME=$out/cache

passed=0 failed=0 skipped=0
failures=()

selected() {
	local p
	[ ${#patterns[@]} -eq 0 ] && return 0
	for p in "${patterns[@]}"; do
		case $1 in *"$p"*) return 0 ;; esac
	done
	return 1
}

# run_one NAME CMD...: runs a test, counts its lines, prints one status line.
run_one() {
	local name=$1 log err rc ok nok sk status detail
	shift
	selected "$name" || return 0
	log=$out/$(echo "$name" | tr '/' '_').log
	err=$log.err
	(cd "$top" && timeout "$TEST_TIMEOUT" "$@") >"$log" 2>"$err" </dev/null
	rc=$?
	ok=$(grep -c '^ok - ' "$log")
	nok=$(grep -c '^not ok - ' "$log")
	sk=$(grep -c '^skip - ' "$log")
	if [ $rc -eq 77 ]; then
		status=SKIP
		detail=$(grep -m1 '^skip - ' "$log" | sed 's/^skip - //')
		[ -n "$detail" ] || detail="exit 77"
		skipped=$((skipped + 1))
		# checks it passed before deciding to skip still count
		passed=$((passed + ok))
	else
		passed=$((passed + ok))
		skipped=$((skipped + sk))
		failed=$((failed + nok))
		if [ $rc -ne 0 ] && [ "$nok" -eq 0 ]; then
			failed=$((failed + 1))
			nok=1
		fi
		if [ "$nok" -gt 0 ]; then
			status=FAIL
			failures+=("$name")
			[ $rc -eq 124 ] && detail="timed out after ${TEST_TIMEOUT}s" ||
				detail="exit $rc"
			detail="$ok ok, $nok not ok ($detail)"
		else
			status=PASS
			detail="$ok ok"
		fi
		[ "$sk" -gt 0 ] && detail="$detail, $sk skipped"
	fi
	printf '%-4s  %-36s %s\n' "$status" "$name" "$detail"
	if [ "$status" = FAIL ]; then
		{
			echo "--- $name ($detail)"
			# the failed checks with their diagnostics
			awk '/^not ok - /{p=1; print; next}
			     /^#/{if (p) print; next}
			     {p=0}' "$log"
			if [ -s "$err" ]; then
				echo "# stderr (last 30 lines):"
				tail -n 30 "$err" | sed 's/^/#   /'
			fi
		} >"$log.failed"
		cat "$log.failed" >>"$out/failures"
	fi
	if [ $verbose -eq 1 ]; then
		sed 's/^/      /' "$log"
		sed 's/^/      stderr: /' "$err"
	elif [ "$status" = FAIL ]; then
		# right under the status line too: a log cut to the lines around
		# a FAIL still shows why
		sed 's/^/      /' "$log.failed"
	fi
}

for t in "$BUILD"/tests/test_*; do
	[ -x "$t" ] || continue
	run_one "unit/$(basename "$t")" "$t"
done
for t in "$top"/tests/cli/*.sh "$top"/tests/corrupt/*.sh; do
	[ -f "$t" ] || continue
	case $(basename "$t") in lib.sh) continue ;; esac
	run_one "$(basename "$(dirname "$t")")/$(basename "$t")" bash "$t"
done
for t in "$BUILD"/tests/replay_fuzz_*; do
	[ -x "$t" ] || continue
	n=${t##*/replay_fuzz_}
	if [ -d "$top/testdata/corpus/$n" ]; then
		run_one "fuzz/replay_$n" "$t" "$top/testdata/corpus/$n"
	fi
done

if [ -s "$out/failures" ]; then
	echo
	echo "Failures:"
	cat "$out/failures"
	echo
fi
if [ $skipped -gt 0 ]; then
	echo "$passed passed, $failed failed, $skipped skipped"
else
	echo "$passed passed, $failed failed"
fi
[ $failed -eq 0 ]
