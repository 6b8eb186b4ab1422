#!/bin/bash
# jit.sh - node's JIT code (testdata/src/jitwork.js), recorded with the
# default 8 KiB stack copy: samples in JIT code carry JS function names
# (from /tmp/perf-PID.map with --perf-basic-prof, from jit-PID.dump with
# --perf-prof), and stacks continue through the JIT frames to the process
# root (V8 keeps frame pointers; jitdump unwinding info is used as CFI).
# perf script's share of rooted stacks on the same capture is printed
# beside restack's.
. "$(dirname "$0")/lib.sh"

need_perf
command -v node >/dev/null || skip_all "node is not installed"
command -v python3 >/dev/null || skip_all "python3 is needed"
home=$T/home
mkdir -p "$T/maps"

# node writes /tmp/perf-PID.map; move new ones into $T/maps.
# collect_maps DATA: moves the perf maps of DATA's processes out of /tmp
# (only theirs: other tests may be running node at the same time).
collect_maps() {
	local pid
	for pid in $("$RESTACK" dump "$1" |
		     sed -n 's/.* COMM pid=\([0-9]*\) .*/\1/p' | sort -u); do
		[ -e "/tmp/perf-$pid.map" ] && mv "/tmp/perf-$pid.map" "$T/maps/"
	done
	return 0
}

# A thread root: the outermost frame of a complete stack (ld.so runs the
# initializers from _dl_start_user).
root_re='^(_start|_dl_start_user|__libc_start_main|start_thread|clone3?|__clone3?|__GI___clone3?)(_\[[a-z]+\])?$'

# rooted FOLDED: "rooted total" over user stacks, a stack being rooted when
# its outermost frame is a thread root.
rooted() {
	awk -v re="$root_re" '{
		split($0, f, ";"); n = $NF; total += n
		if (f[2] ~ re)
			r += n
	} END { print r + 0, total + 0 }' "$1"
}

# unrooted FOLDED: the most frequent outermost two frames of the stacks that
# do not reach a root, as "# count frames" lines for the test's log.
unrooted() {
	awk -v re="$root_re" '{
		s = $0; sub(/ [0-9]+$/, "", s); split(s, f, ";")
		if (f[2] !~ re)
			c[substr(f[2] ";" f[3], 1, 120)] += $NF
	} END { for (k in c) printf "# %5d %s\n", c[k], k }' "$1" |
		sort -k2,2nr | head -n 8
}

cp "$TESTDATA/src/jitwork.js" "$T/"

# --- --perf-basic-prof: perf-PID.map -------------------------------------
record -e cpu-clock -F 2000 --call-graph dwarf -o "$T/basic.data" \
	-- node --perf-basic-prof jitwork.js 4 >/dev/null ||
	skip_all "perf record of node failed"
perf_clean script --no-inline -i "$T/basic.data" >"$T/basic.perf" 2>/dev/null
collect_maps "$T/basic.data"
python3 "$TOP/tests/tools/collapse.py" "$T/basic.perf" >"$T/basic.perf.folded"
read -r p_root p_total < <(rooted "$T/basic.perf.folded")

restack_clean convert --annotate --jit-dir "$T/maps" "$T/basic.data" \
	-o "$T/basic.folded"
read -r r_root r_total < <(rooted "$T/basic.folded")
echo "# --perf-basic-prof: restack reaches the root in $r_root of $r_total" \
     "samples; perf script in $p_root of $p_total; the others:"
unrooted "$T/basic.folded"
# The few that do not: node's start-up deeper than the 8 KiB copy and seen
# once (no root cache can know their outer frames), samples taken while
# node exec'd; 1-6 of 8100 samples from run to run on the machines we use.
check "basic-prof: >= 99% of samples reach the root" \
	test "$r_total" -gt 1000 -a $((r_root * 100)) -ge $((r_total * 99))
check "basic-prof: samples in JIT code are named after JS functions" \
	awk '/;JS:[*~^]?fib [^;]*_\[j\]/ { n += $NF } END { exit !(n > 100) }' \
	"$T/basic.folded"
check "basic-prof: stacks through JIT code continue below it to the root" awk '
	/;JS:/ { n += $NF
		e = index($0, ";Builtins_JSEntry"); j = index($0, ";JS:")
		if ($0 ~ /^node;_start;/ && e > 0 && e < j) ok += $NF }
	END { printf "# %d of %d\n", ok, n; exit !(n > 100 && ok * 100 >= n * 99) }' \
	"$T/basic.folded"
# Without the map the code is unnamed, and the stacks are still complete.
restack_clean convert --annotate "$T/basic.data" -o "$T/nomap.folded"
read -r n_root n_total < <(rooted "$T/nomap.folded")
check "basic-prof: without the map no JS names appear" \
	awk '/JS:/ { exit 1 }' "$T/nomap.folded"
check "basic-prof: without the map stacks still reach the root" \
	test $((n_root * 100)) -ge $((n_total * 99))

# --- --perf-prof: jitdump with unwinding info -----------------------------
if record -k mono -e cpu-clock -F 2000 --call-graph dwarf -o "$T/dump.data" \
	-- node --perf-prof --interpreted-frames-native-stack jitwork.js 4 \
	>/dev/null; then
	collect_maps "$T/dump.data"
	dump=$(ls "$T"/jit-*.dump 2>/dev/null | head -n 1)
	if [ -z "$dump" ]; then
		skip "perf-prof" "node wrote no jitdump"
	else
		# The jitdump is found at its recorded path ($T).
		restack_clean convert --annotate "$T/dump.data" -o "$T/dump.folded"
		restack_clean stats "$T/dump.data" >"$T/dump.stats"
		read -r r_root r_total < <(rooted "$T/dump.folded")
		echo "# --perf-prof: restack reaches the root in $r_root of" \
		     "$r_total samples; the others:"
		unrooted "$T/dump.folded"
		check "perf-prof: >= 99% of samples reach the root" \
			test "$r_total" -gt 1000 -a \
			$((r_root * 100)) -ge $((r_total * 99))
		check "perf-prof: JIT code named from the jitdump" \
			awk '/;JS:[*~^]?fib [^;]*_\[j\]/ { n += $NF }
			     END { exit !(n > 100) }' "$T/dump.folded"
		check "perf-prof: jitdump unwinding info used as CFI" \
			awk '$1 == "jit" && $2 > 0 { ok = 1 } END { exit !ok }' \
			"$T/dump.stats"
	fi
else
	skip "perf-prof" "perf record -k mono failed"
fi

done_testing
