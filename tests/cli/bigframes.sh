#!/bin/bash
# bigframes.sh - a real Debian program whose stack frames outgrow perf's
# default 8 KiB stack copy: the sqlite3 shell (main's frame alone is over
# 5 KiB) loading a multi-line INSERT and running sorts and an index build.
# With the default window perf script ends nearly every sample in a bogus
# frame after a few frames; restack must bring >= 99% of samples to the
# root by stitching.  Exactly: a 64 KiB recording cropped to an 8 KiB copy
# (tests/tools/crop_stack.py) must stitch to perf's unwinding of the full
# copy, sample by sample.  Statistically: the real 8 KiB recording's
# profile must match recordings of the same workload with a 64 KiB window
# as closely as those match each other (tests/tools/compare_dist.py).
. "$(dirname "$0")/lib.sh"

need_perf
command -v sqlite3 >/dev/null || skip_all "sqlite3 is not installed"
command -v python3 >/dev/null || skip_all "python3 is needed"
home=$T/home
tools=$TOP/tests/tools

# The workload: a 3000-row INSERT spread over 3000 lines (the shell checks
# the growing statement for completeness after every line, in shallow
# frames), then 600000 generated rows, an index and sorts in deep ones.
{
	echo "CREATE TABLE t(a INTEGER, b TEXT, c REAL);"
	echo "INSERT INTO t VALUES"
	awk 'BEGIN { for (i = 1; i <= 3000; i++)
		printf "(%d, \047%08x-%d\047, %d.5)%s\n", i,
			(i * 2654435761) % 4294967296, i % 97, i,
			i < 3000 ? "," : ";" }'
	for r in 1 2; do cat <<'SQL'
WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM n LIMIT 300000)
INSERT INTO t SELECT x, printf('%08x-%d', (x*2654435761) % 4294967296, x % 97), x * 0.5 FROM n;
CREATE INDEX IF NOT EXISTS ti ON t(b);
SELECT count(*), sum(length(b)) FROM (SELECT b FROM t ORDER BY c DESC, b);
SELECT substr(b, 1, 3), count(*) FROM t GROUP BY 1 ORDER BY 2 DESC LIMIT 3;
SQL
	done
} >"$T/work.sql"

# The 8 KiB capture samples at 4 kHz so that the few samples taken while
# the shell's stack is shallow (the outer frames' callers are seen in no
# other) are never missing; the 64 KiB ones at 1 kHz to stay small.
rec() {
	record -e cpu-clock "$@" -- sqlite3 :memory: <"$T/work.sql" >/dev/null
}
rec -F 4000 --call-graph dwarf -o "$T/w8.data" ||
	skip_all "perf record failed"
rec -F 1000 --call-graph dwarf,65528 -o "$T/a64.data" ||
	skip_all "perf record failed"
rec -F 1000 --call-graph dwarf,65528 -o "$T/b64.data" ||
	skip_all "perf record failed"

for f in w8 a64 b64; do
	restack_clean convert "$T/$f.data" -o "$T/$f.folded"
done
restack_clean convert --stitch=off "$T/w8.data" -o "$T/off.folded"
perf_clean script --no-inline -i "$T/w8.data" >"$T/w8.perf" 2>/dev/null
python3 "$tools/collapse.py" "$T/w8.perf" >"$T/w8.perf.folded"

# rooted FOLDED: "rooted total"; sqlite3 is single-threaded, so a complete
# stack passes through glibc's call of main.
rooted() {
	awk '{ n = $NF; t += n; if ($0 ~ /;__libc_start_call_main;/) r += n }
	     END { print r + 0, t + 0 }' "$1"
}
read -r p_root p_total < <(rooted "$T/w8.perf.folded")
read -r o_root o_total < <(rooted "$T/off.folded")
read -r r_root r_total < <(rooted "$T/w8.folded")
echo "# 8 KiB window: perf script reaches main's caller in $p_root of" \
     "$p_total samples; restack in $r_root of $r_total ($o_root unstitched)"
# Where CFI exists the unwinder itself never gives up early: without
# stitching every walk ends at the root, at the end of the copy, or where
# the kernel could not copy the stack (a sample in a fault on a stack page
# not yet in memory: tests/cli/stackcopy.sh).  A sample taken inside
# execve carries the old image's user registers, whose code has no mapping
# in the new one: "module not found" is right there, and only there.
restack_clean stats --stitch=off "$T/w8.data" >"$T/off.stats"
end_reasons "$T/off.stats" >"$T/off.ends"
check "unstitched walks end at the root, the end of the copy or where it has no bytes" awk '
	$2 != "root" && $0 !~ /^[0-9]+ (window exhausted|stack not copied|module not found)$/ {
	bad = 1 } END { exit bad }' "$T/off.ends"
check "walks that found no module were sampled in execve" awk '
	/\[truncated: module not found\]/ && !/execve/ { bad = 1 }
	END { exit bad }' "$T/off.folded"
check "the premise: the window cuts most stacks ($o_root of $o_total complete)" \
	test "$o_total" -gt 2000 -a $((o_root * 2)) -lt "$o_total"
check ">= 99% of samples reach the root with stitching" \
	test "$r_total" -gt 2000 -a $((r_root * 100)) -ge $((r_total * 99))
check "the stitched profile matches a 64 KiB recording within noise" \
	python3 "$tools/compare_dist.py" "$T/w8.folded" "$T/a64.folded" \
	"$T/b64.folded"
check "the unstitched profile does not (the comparison can fail)" \
	bash -c '! "$@"' - python3 "$tools/compare_dist.py" "$T/off.folded" "$T/a64.folded" \
	"$T/b64.folded"

# The same samples with less stack: the 64 KiB recording cropped to perf's
# default copy of 8192 bytes is what an 8 KiB recording of them would have
# held.  Stitched, restack's stacks must be what perf unwinds from the whole
# 64 KiB copy; sqlite3 is stripped, so "complete" means "passes through
# glibc's call of main".
python3 "$tools/crop_stack.py" "$T/a64.data" "$T/c8.data" 8192
perf_clean script -i "$T/a64.data" >"$T/a64.perf" 2>/dev/null
restack_clean convert "$T/c8.data" --to script -o "$T/c8.script"
restack_clean convert --stitch=off "$T/c8.data" --to script \
	-o "$T/c8off.script"
check "cropped to 8 KiB and stitched: perf's 64 KiB stacks, sample by sample" \
	python3 "$tools/compare_stacks.py" --root __libc_start_call_main \
	"$T/a64.perf" "$T/c8.script" 99
check "cropped and not stitched: not (the comparison can fail)" \
	bash -c '! "$@"' - python3 "$tools/compare_stacks.py" \
	--root __libc_start_call_main "$T/a64.perf" "$T/c8off.script" 99

done_testing
