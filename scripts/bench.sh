#!/bin/bash
# bench.sh - `make bench`: restack against perf script on the same captures,
# in the same run, on this machine.
#
#   scripts/bench.sh [WORKDIR]     (default: bench-out/ in the repository)
#
# Records (or reuses, when WORKDIR already holds them) four captures with
# `perf record -e cpu-clock --call-graph dwarf`:
#   threads  testdata/src/threads.c + libwork.c, -O2 -fomit-frame-pointer,
#            two threads and a shared library
#   python3  /usr/bin/python3 testdata/src/work.py
#   xz       xz -6 compressing generated text (a real Debian program)
#   sqlite3  the sqlite3 shell building and sorting a 600000-row table:
#            stacks deeper than the 8 KiB copy, so restack stitches
# and times, on each, warm cache, best of 3:
#   restack convert -o x.folded                       (folded stacks)
#   perf script | tests/tools/collapse.pl > x.folded  (the same output)
#   perf script > /dev/null, perf script --no-inline > /dev/null
# Prints wall time, peak RSS and the ratios perf/restack.  Timings are
# measured, never asserted: nothing here fails because of a number.
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
restack=$top/restack
work=${1:-$top/bench-out}
mkdir -p "$work/home"
export LC_ALL=C

if ! command -v perf >/dev/null; then
	echo "bench: perf is not installed" >&2
	exit 1
fi
if [ ! -x /usr/bin/time ]; then
	echo "bench: /usr/bin/time is needed (apt-get install time)" >&2
	exit 1
fi
cc=$(command -v cc || command -v gcc)

perf_clean() {
	env -i PATH=/usr/bin:/bin HOME="$work/home" perf "$@"
}

record() { # record NAME COMMAND...
	local name=$1
	shift
	[ -s "$work/$name.data" ] && return 0
	echo "bench: recording $name ..." >&2
	(cd "$work" && perf_clean record -q -e cpu-clock -F 4000 \
		--call-graph dwarf -o "$name.data" -- "$@" >/dev/null 2>&1) || {
		echo "bench: perf record failed for $name" >&2
		rm -f "$work/$name.data"
		return 1
	}
}

"$cc" -O2 -g -fomit-frame-pointer -fPIC -shared -o "$work/libwork.so" \
	"$top/testdata/src/libwork.c" -lm &&
	"$cc" -O2 -g -fomit-frame-pointer -o "$work/threads" \
		"$top/testdata/src/threads.c" -L"$work" -lwork \
		-Wl,-rpath,"$work" -lpthread || exit 1
if [ ! -s "$work/text.txt" ]; then
	head -c 8000000 /dev/urandom | base64 >"$work/text.txt"
fi

captures=()
record threads "$work/threads" 100000 && captures+=(threads)
if [ -x /usr/bin/python3 ]; then
	record python3 /usr/bin/python3 "$top/testdata/src/work.py" 40 &&
		captures+=(python3)
fi
if command -v xz >/dev/null; then
	record xz sh -c "xz -6 -T1 -c '$work/text.txt' >/dev/null" &&
		captures+=(xz)
fi
if command -v sqlite3 >/dev/null; then
	cat >"$work/work.sql" <<'SQL'
CREATE TABLE t(a INTEGER, b TEXT, c REAL);
WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM n LIMIT 600000)
INSERT INTO t SELECT x, printf('%08x-%d', (x*2654435761) % 4294967296, x % 97), x * 0.5 FROM n;
CREATE INDEX ti ON t(b);
SELECT count(*), sum(length(b)) FROM (SELECT b FROM t ORDER BY c DESC, b);
SELECT substr(b, 1, 3), count(*) FROM t GROUP BY 1 ORDER BY 2 DESC LIMIT 3;
SQL
	record sqlite3 sh -c "sqlite3 :memory: < '$work/work.sql'" &&
		captures+=(sqlite3)
fi

# best3 CMD: runs CMD (a shell string) three times; prints "SECONDS KB"
# of the fastest run (KB: its peak RSS, the largest of a pipeline's).
best3() {
	local i best="" t
	for i in 1 2 3; do
		/usr/bin/time -o "$work/time.out" -f "%e %M" \
			bash -c "$1" >/dev/null 2>/dev/null
		t=$(tail -n 1 "$work/time.out")
		if [ -z "$best" ] || awk -v a="$t" -v b="$best" \
			'BEGIN { split(a, x, " "); split(b, y, " "); exit !(x[1] < y[1]) }'; then
			best=$t
		fi
	done
	echo "$best"
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1fx", a / b; else print "-" }'; }

printf '\n%-8s %7s %6s | %-14s | %-14s | %-22s | %-20s | %-20s\n' capture samples MB \
	"restack (MB)" "--no-inline" "perf script|collapse" "perf script" \
	"perf --no-inline"
for c in "${captures[@]}"; do
	d=$work/$c.data
	n=$("$restack" info "$d" | awk '/^samples / { print $2; exit }')
	mb=$(du -m "$d" | cut -f1)
	cat "$d" >/dev/null   # warm cache for everyone
	r=$(best3 "env -i PATH=/usr/bin:/bin HOME='$work/home' '$restack' convert '$d' -o '$work/$c.folded'")
	rn=$(best3 "env -i PATH=/usr/bin:/bin HOME='$work/home' '$restack' convert --no-inline '$d' -o '$work/$c.ni.folded'")
	p=$(best3 "env -i PATH=/usr/bin:/bin HOME='$work/home' perf script -i '$d' | perl '$top/tests/tools/collapse.pl' > '$work/$c.perf.folded'")
	s=$(best3 "env -i PATH=/usr/bin:/bin HOME='$work/home' perf script -i '$d'")
	q=$(best3 "env -i PATH=/usr/bin:/bin HOME='$work/home' perf script --no-inline -i '$d'")
	set -- $r $rn $p $s $q
	# perf's inline runs against restack's, --no-inline against --no-inline
	printf '%-8s %7s %6s | %5.2f (%5d)  | %5.2f (%5d)  | %5.2f %-6s (%5d)     | %5.2f %-6s (%5d)   | %5.2f %-6s (%5d)\n' \
		"$c" "$n" "$mb" "$1" $(($2 / 1024)) "$3" $(($4 / 1024)) \
		"$5" "$(ratio "$5" "$1")" $(($6 / 1024)) \
		"$7" "$(ratio "$7" "$1")" $(($8 / 1024)) \
		"$9" "$(ratio "$9" "$3")" $((${10} / 1024))
done
cat <<EOF

Times are seconds (best of 3, warm cache); (N) is peak RSS in MiB; NNx is
perf's time divided by restack's (perf --no-inline by restack --no-inline,
the others by restack with inline frames).  restack and the perf pipeline write the
same folded stacks wherever perf completes them (restack also completes
the stacks the 8 KiB copy cut short).  Captures and outputs are in $work
(remove it to record afresh).
EOF
