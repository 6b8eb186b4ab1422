# fixtures.sh - restack info and dump on the committed captures in
# testdata/perf/ against the golden outputs in testdata/expected/; where
# perf runs, the record and sample counts are first checked against
# perf report -D and perf script, so the goldens stay tied to perf.
#
#   tests/cli/fixtures.sh [--regen]   (--regen rewrites testdata/expected/)
. "$(dirname "$0")/lib.sh"

regen=0
[ "${1:-}" = --regen ] && regen=1

# perf is the oracle when it can read perf.data here (recording rights
# are not needed for that).
perf_ok=0
perf_why="perf is not installed"
if command -v perf >/dev/null 2>&1; then
	perf_why="perf report -D does not work here"
	[ -n "$(perf_counts "$TESTDATA/perf/file-dwarf.data")" ] && perf_ok=1
fi

cd "$TESTDATA/perf" || exit 1
for f in *.data; do
	n=${f%.data}
	for what in info dump; do
		"$RESTACK" "$what" "$f" >"$T/$n.$what" 2>"$T/$n.err"
		rc=$?
		is "$rc" 0 "$n: restack $what exits 0"
		if [ $regen -eq 1 ]; then
			cp "$T/$n.$what" "$TESTDATA/expected/$n.$what"
			ok "$n: regenerated expected/$n.$what"
		elif [ -f "$TESTDATA/expected/$n.$what" ]; then
			same_file "$TESTDATA/expected/$n.$what" "$T/$n.$what" \
				"$n: restack $what equals expected/$n.$what"
		else
			fail "$n: expected/$n.$what exists"
		fi
	done
	# dump: one line per record, in time order (needs no perf)
	total=$(awk '/^records [0-9]+$/ { print $2 }' "$T/$n.info")
	check "$n: dump has $total lines, times non-decreasing" \
		dump_check "$f" "$total"
	if [ $perf_ok -eq 1 ]; then
		compare_with_perf "$f" "$n"
	else
		skip "$n: counts equal perf's" "$perf_why"
	fi
done

# Pipe-mode captures read the same from stdin and from a real pipe.
for f in pipe-g.data zpipe-bid.data; do
	n=${f%.data}
	sed '1d; /^size /d' "$T/$n.info" >"$T/want.info"
	"$RESTACK" info - <"$f" | sed '1d; /^size /d' >"$T/stdin.info"
	same_file "$T/want.info" "$T/stdin.info" "$n: info from stdin equals info of the file"
	cat "$f" | "$RESTACK" info - | sed '1d; /^size /d' >"$T/pipe.info"
	same_file "$T/want.info" "$T/pipe.info" "$n: info from a pipe equals info of the file"
	cat "$f" | "$RESTACK" dump - >"$T/pipe.dump"
	same_file "$T/$n.dump" "$T/pipe.dump" "$n: dump from a pipe equals dump of the file"
done

# The big-endian fixture decodes to the same events as its source.
sed '1,2d' "$T/file-dwarf.info" >"$T/le.info"
sed '1,2d' "$T/be-dwarf.info" >"$T/be.info"
same_file "$T/le.info" "$T/be.info" "be-dwarf: info equals file-dwarf's but for name and byte order"
same_file "$T/file-dwarf.dump" "$T/be-dwarf.dump" "be-dwarf: dump equals file-dwarf's"
check "be-dwarf: info says the byte order differs" \
	grep -q '^format .*other byte order' "$T/be-dwarf.info"

done_testing
