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
#   large    the threaded program again, about 250000 samples (dwarf,2048:
#            600 MB), recorded afresh each time and deleted afterwards;
#            also converted --to firefox (-j1, -j2: size, time, peak RSS,
#            against perf script's time on it)
# and times, on each, warm cache, best of 10 (5 for the large one):
#   restack convert -j1 / -j2 / -j1 --no-inline -o x.folded
#   restack convert -j1 with an empty DWARF cache (a first run: it inflates
#   the debug info and stores it, each run in a new directory, removed
#   after the timings; the other runs read the default one, dwcache.h)
#   perf script | tests/tools/collapse.pl > x.folded  (the same output)
#   perf script > /dev/null, perf script --no-inline > /dev/null
#   hotspot-perfparser --input x.data --output /dev/null (when installed)
# and, in a table of their own, the outputs that carry every record over:
#   restack convert --to perf / --to sysprof, -j1 and -j2, against perf
#   script in the same rounds (and -j2's output compared with -j1's)
# and then, each capture's pages dropped from the page cache and read back
# (as a file read from disk is cached), restack -j1, -j2 and perf script
# again (see evict below); and, on the large capture, two -j1 conversions
# at once against one: how much two threads can do on this machine now,
# the ceiling for -j2.
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
cc=$(command -v cc || command -v gcc)
if [ -z "$cc" ] || ! "$cc" -O2 -o "$work/benchtime" "$top/scripts/benchtime.c"; then
	echo "bench: cannot build scripts/benchtime.c (no C compiler?)" >&2
	exit 1
fi

perf_clean() {
	env -i PATH=/usr/bin:/bin HOME="$work/home" perf "$@"
}

record() { # record NAME COMMAND...  ($CALL_GRAPH: the --call-graph value)
	local name=$1
	shift
	# BENCH_SMALL=0: the large capture only
	[ "$name" = large ] || [ "${BENCH_SMALL:-1}" != 0 ] || return 1
	[ -s "$work/$name.data" ] && return 0
	echo "bench: recording $name ..." >&2
	(cd "$work" && perf_clean record -q -e cpu-clock -F 4000 \
		--call-graph "${CALL_GRAPH:-dwarf}" -o "$name.data" -- "$@" \
		>/dev/null 2>&1) || {
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

# once CMD: runs CMD (a shell string) once; prints "SECONDS KB" (KB: its
# peak RSS, the largest of a pipeline's), from scripts/benchtime.c: the
# clock is read right around the shell's fork and wait.
once() {
	"$work/benchtime" "$1"
}

# best N CMD...: N rounds, each running every CMD once, in turn, so that
# the host's slow and fast spells (this VM has them) fall on every tool
# alike; sets BEST[i] to "SECONDS KB" of CMD i's fastest successful run,
# less the fastest start-up of the shell alone (`bash -c :`, once per
# round, timed like the others), as hyperfine subtracts its shell's
# start-up.  START gets that start-up time.
best() {
	local n=$1 i k k1 t
	shift
	BEST=()
	START=
	for i in $(seq "$n"); do
		t=$(once :)
		if [ -z "$START" ] || awk -v a="${t% *}" -v b="$START" \
			'BEGIN { exit !(a < b) }'; then
			START=${t% *}
		fi
		for k in $(seq 0 $(($# - 1))); do
			k1=$((k + 1))
			t=$(once "${!k1}") || continue
			if [ -z "${BEST[k]:-}" ] || awk -v a="$t" -v b="${BEST[k]}" \
				'BEGIN { split(a, x, " "); split(b, y, " "); exit !(x[1] < y[1]) }'; then
				BEST[k]=$t
			fi
		done
	done
	for k in "${!BEST[@]}"; do
		BEST[k]=$(awk -v a="${BEST[k]}" -v s="$START" \
			'BEGIN { split(a, x, " "); printf "%.4f %s", x[1] - s, x[2] }')
	done
}

# fmt3 SECONDS: with three decimals ("-" stays "-")
fmt3() { awk -v a="$1" 'BEGIN { if (a == "-") print a; else printf "%.3f", a }'; }

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a != "-" && b != "-" && b > 0) printf "%.1fx", a / b; else print "-" }'; }

pp=/usr/lib/x86_64-linux-gnu/libexec/hotspot-perfparser
[ -x "$pp" ] || pp=$(command -v hotspot-perfparser || true)
if [ -z "$pp" ]; then
	echo "bench: hotspot's perfparser is not installed (apt-get install" \
	     "hotspot): its column stays empty" >&2
fi

clean() { echo "env -i PATH=/usr/bin:/bin HOME='$work/home' $*"; }

# row NAME RUNS: times everything on $work/NAME.data and prints a row.
row() {
	local c=$1 runs=$2 d=$work/$1.data n mb r0 r1 r2 rn p s q f
	n=$("$restack" info "$d" | awk '/^samples / { print $2; exit }')
	mb=$(du -m "$d" | cut -f1)
	cat "$d" >/dev/null   # warm cache for everyone
	best "$runs" \
		"$(clean "'$restack' convert -j1 --dwarf-cache '$work/dwfirst.'\$\$ '$d' -o '$work/$c.folded'")" \
		"$(clean "'$restack' convert -j1 '$d' -o '$work/$c.folded'")" \
		"$(clean "'$restack' convert -j2 '$d' -o '$work/$c.j2.folded'")" \
		"$(clean "'$restack' convert -j1 --no-inline '$d' -o '$work/$c.ni.folded'")" \
		"$(clean "perf script -i '$d'") | perl '$top/tests/tools/collapse.pl' > '$work/$c.perf.folded'" \
		"$(clean "perf script -i '$d'")" \
		"$(clean "perf script --no-inline -i '$d'")" \
		${pp:+"$(clean "'$pp' --input '$d' --output /dev/null")"}
	rm -rf "$work"/dwfirst.*
	r0=${BEST[0]} r1=${BEST[1]} r2=${BEST[2]} rn=${BEST[3]} p=${BEST[4]}
	s=${BEST[5]} q=${BEST[6]} f=${BEST[7]:-- 0}
	PERF_SCRIPT_S=${s% *}
	cmp -s "$work/$c.folded" "$work/$c.j2.folded" ||
		echo "bench: $c: -j2 output differs from -j1!" >&2
	set -- $r1 $r2 $rn $p $s $q $f
	printf '%-8s %7s %6s | %6.3f %-6s %6.3f (%4d) | %6.3f %-5s (%4d) | %6.3f (%4d) | %6.3f %-6s (%4d) | %6.3f %-6s (%4d) | %6.3f %-6s %-6s | %6s %-6s (%4d)\n' \
		"$c" "$n" "$mb" "${r0% *}" "$(ratio "$9" "${r0% *}")" "$1" $(($2 / 1024)) \
		"$3" "$(ratio "$1" "$3")" $(($4 / 1024)) \
		"$5" $(($6 / 1024)) \
		"$9" "$(ratio "$9" "$1")" $((${10} / 1024)) \
		"$7" "$(ratio "$7" "$1")" $(($8 / 1024)) \
		"${11}" "$(ratio "${11}" "$1")" "$(ratio "${11}" "$5")" \
		"$(fmt3 "${13}")" "$(ratio "${13}" "$1")" $((${14} / 1024))
}

# The page cache decides how much of a conversion is mapping the file:
# the kernel maps a cached folio in one step, and perf record's writes
# leave a capture in folios of 4-128 KiB (/proc/kpageflags on a fresh
# capture; captures cached for hours were found mostly in single pages),
# while a file read from disk comes back in folios of up to 2 MiB, which
# restack's 2 MiB-aligned windows map with one entry each.  The second
# table times restack and perf script again with every capture read back
# from disk.
# evict FILE: drops FILE's pages from the page cache and reads it back.
evict() {
	sync "$1" 2>/dev/null
	dd if="$1" iflag=nocache count=0 status=none
	cat "$1" >/dev/null
}

# row_reread NAME RUNS: restack -j1, -j2 and perf script on NAME read back
# from disk; appends a line to REREAD.
REREAD=()
row_reread() {
	local c=$1 runs=$2 d=$work/$1.data
	evict "$d"
	best "$runs" \
		"$(clean "'$restack' convert -j1 '$d' -o '$work/$c.folded'")" \
		"$(clean "'$restack' convert -j2 '$d' -o '$work/$c.j2.folded'")" \
		"$(clean "perf script -i '$d'")"
	set -- ${BEST[0]} ${BEST[1]} ${BEST[2]}
	REREAD+=("$(printf '%-8s | %6.3f (%4d) | %6.3f %-5s (%4d) | %6.3f %-6s (%4d)' \
		"$c" "$1" $(($2 / 1024)) "$3" "$(ratio "$1" "$3")" $(($4 / 1024)) \
		"$5" "$(ratio "$5" "$1")" $(($6 / 1024)))")
}

# row_writers NAME RUNS: --to perf and --to sysprof, -j1 and -j2, and
# perf script, on NAME; appends a line to WRITERS.
WRITERS=()
row_writers() {
	local c=$1 runs=$2 d=$work/$1.data o t
	best "$runs" \
		"$(clean "'$restack' convert -j1 --to perf '$d' -o '$work/$c.j1.perf'")" \
		"$(clean "'$restack' convert -j2 --to perf '$d' -o '$work/$c.j2.perf'")" \
		"$(clean "'$restack' convert -j1 --to sysprof '$d' -o '$work/$c.j1.syscap'")" \
		"$(clean "'$restack' convert -j2 --to sysprof '$d' -o '$work/$c.j2.syscap'")" \
		"$(clean "perf script -i '$d'")"
	for o in perf syscap; do
		cmp -s "$work/$c.j1.$o" "$work/$c.j2.$o" ||
			echo "bench: $c: --to $o -j2 output differs from -j1!" >&2
		rm -f "$work/$c.j1.$o" "$work/$c.j2.$o"
	done
	set -- ${BEST[0]} ${BEST[1]} ${BEST[2]} ${BEST[3]} ${BEST[4]}
	t=${9}
	WRITERS+=("$(printf '%-8s | %6.3f %-6s (%4d) | %6.3f %-5s (%4d) | %6.3f %-6s (%4d) | %6.3f %-5s (%4d) | %6.3f (%4d)' \
		"$c" "$1" "$(ratio "$t" "$1")" $(($2 / 1024)) \
		"$3" "$(ratio "$1" "$3")" $(($4 / 1024)) \
		"$5" "$(ratio "$t" "$5")" $(($6 / 1024)) \
		"$7" "$(ratio "$5" "$7")" $(($8 / 1024)) \
		"$t" $((${10} / 1024)))")
}

print_writers() {
	local l
	printf '\nperf.data and sysprof output (ratio: perf script over -j1):\n%-8s | %-20s | %-19s | %-20s | %-19s | %-13s\n' \
		capture "--to perf -j1" "-j2 (speed-up)" "--to sysprof -j1" \
		"-j2 (speed-up)" "perf script"
	for l in "${WRITERS[@]}"; do
		echo "$l"
	done
}

print_reread() {
	local l
	printf '\nread back from disk:\n%-8s | %-13s | %-19s | %-21s\n' \
		capture "restack -j1" "-j2 (speed-up)" "perf script"
	for l in "${REREAD[@]}"; do
		echo "$l"
	done
}

printf '\n%-8s %7s %6s | %-27s | %-19s | %-13s | %-21s | %-21s | %-21s | %-19s\n' \
	capture samples MB "1st run (ratio), restack -j1" "-j2 (speed-up)" "--no-inline" \
	"perf script" "perf script|collapse" "perf --no-inline" "perfparser"
for c in "${captures[@]}"; do
	row "$c" 10
	row_reread "$c" 10
	row_writers "$c" 10
done

# The large capture: the threaded program for about 250000 samples,
# recorded afresh and deleted afterwards unless BENCH_KEEP is set.  Its
# stacks are shallow, so a 2 KiB copy holds them: 600 MB instead of 2 GB,
# which this machine's page cache keeps (a 2 GB file is read from disk on
# every run, by every tool alike, and the disk is what gets measured).
if [ "${BENCH_LARGE:-1}" != 0 ]; then
	if [ ! -s "$work/large.data" ]; then
		echo "bench: recording the large capture (about 60 s) ..." >&2
		CALL_GRAPH=dwarf,2048 record large "$work/threads" 1500000 ||
			exit 1
	fi
	row large 5
	# Firefox Profiler output of the same capture (perf script's time
	# from the row above)
	best 5 "$(clean "'$restack' convert -j1 '$work/large.data' -o '$work/large.json.gz'")" \
		"$(clean "'$restack' convert -j2 '$work/large.data' -o '$work/large.j2.json.gz'")"
	set -- ${BEST[0]} ${BEST[1]}
	cmp -s "$work/large.json.gz" "$work/large.j2.json.gz" ||
		echo "bench: large: -j2 Firefox output differs from -j1!" >&2
	# the workers restack takes here when -j does not say (run_auto.c)
	DEFAULT_J=$("$restack" convert -q "$work/large.data" \
		-o "$work/large.d.folded" --stats-json "$work/large.d.json" &&
		python3 -c 'import json, sys
print(len(json.load(open(sys.argv[1]))["inputs"][0]["worker_samples"]))' \
		"$work/large.d.json")
	FIREFOX_LINE=$(printf 'large --to firefox: %d samples, %.1f MiB (.json.gz); perf script %.3f s; restack -j1 %.3f s (%d MiB): %s, -j2 %.3f s (%d MiB): %s; restack takes -j%s here by default' \
		"$("$restack" info "$work/large.data" | awk '/^samples / { print $2; exit }')" \
		"$(du -k "$work/large.json.gz" | awk '{ print $1 / 1024 }')" \
		"$PERF_SCRIPT_S" "$1" $(($2 / 1024)) \
		"$(ratio "$PERF_SCRIPT_S" "$1")" "$3" $(($4 / 1024)) \
		"$(ratio "$PERF_SCRIPT_S" "$3")" "${DEFAULT_J:-?}")
	echo
	echo "$FIREFOX_LINE"
	row_reread large 5
	row_writers large 5
	# The ceiling for -j2 here: two independent -j1 conversions at once
	# against one.  On this kind of VM two busy vCPUs often deliver well
	# under twice the work of one, which no threading can beat.
	best 5 "$(clean "'$restack' convert -j1 '$work/large.data' -o /dev/null")" \
		"$(clean "'$restack' convert -j1 '$work/large.data' -o /dev/null") & $(clean "'$restack' convert -j1 '$work/large.data' -o /dev/null"); wait"
	one=${BEST[0]} two=${BEST[1]}
	echo
	echo "two -j1 conversions of the large capture at once: $(fmt3 "${two% *}") s, one" \
	     "alone: $(fmt3 "${one% *}") s: this machine ran $(awk -v a="${one% *}" \
	     -v b="${two% *}" 'BEGIN { printf "%.2f", 2 * a / b }')x the work" \
	     "of one conversion on two threads (the ceiling for -j2 now)"
	[ -n "${BENCH_KEEP:-}" ] || rm -f "$work/large.data" "$work"/large*.folded \
		"$work"/large*.json.gz "$work/large.d.json"
fi
rm -rf "$work"/dwfirst.*
print_reread
print_writers
cat <<EOF

Times are seconds (best of 10, best of 5 on the large capture, the tools
taking turns; warm cache; "1st run": with an empty DWARF cache, as on a
machine restack has not run on before, with perf script's time over it;
each less the best start-up time of the shell that runs it, as hyperfine
subtracts its shell's:
$START s in the last measurements); (N) is peak RSS in MiB; NNx is the other tool's time divided by
restack -j1's (for -j2: -j1's time divided by -j2's; perf --no-inline also
against restack --no-inline, second ratio).  restack and the perf pipeline
write the same folded stacks wherever perf completes them (restack also
completes the stacks the 8 KiB copy cut short), and -j2 writes the same
bytes as -j1.  The first table times the captures as the page cache held
them: as perf record's writes left them when this run recorded them
(folios of 4-128 KiB); the second after reading them back from disk
(folios of up to 2 MiB, mapped in fewer steps).  Captures and outputs are
in $work
(remove it to record afresh; BENCH_LARGE=0 skips the large capture,
BENCH_SMALL=0 the others).
EOF
