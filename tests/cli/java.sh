#!/bin/bash
# java.sh - OpenJDK's JIT code (testdata/src/JitWork.java), its perf map
# written at exit (-XX:+DumpPerfMapAtExit), recorded with --call-graph
# dwarf.  Compiled Java code has no unwinding information: without
# -XX:+PreserveFramePointer stacks stop there as "no CFI" (not "module not
# found"), counted in the module table's /tmp/perf-PID.map row, and
# restack says how to fix it; with the flag >= 95% reach the root.  JIT
# frames are named by the module perf names them by, /tmp/perf-PID.map,
# also when the map was found elsewhere (--jit-dir).
. "$(dirname "$0")/lib.sh"

need_perf
command -v java >/dev/null && command -v javac >/dev/null ||
	skip_all "java or javac is not installed (default-jdk-headless)"
command -v python3 >/dev/null || skip_all "python3 is needed"
mkdir -p "$T/maps" "$T/classes"
javac -d "$T/classes" "$TESTDATA/src/JitWork.java" ||
	skip_all "javac failed"

# record NAME FLAG: JitWork for 4 s under perf, its map moved to $T/maps
# after perf script read it from /tmp (NAME.perf).
record_java() {
	local pid
	record -e cpu-clock -F 999 --call-graph dwarf -o "$T/$1.data" \
		-- java -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit \
		"$2" -cp "$T/classes" JitWork 4000 >/dev/null ||
		skip_all "perf record of java failed"
	perf_clean script -i "$T/$1.data" >"$T/$1.perf" 2>/dev/null
	for pid in $("$RESTACK" dump "$T/$1.data" |
		     sed -n 's/.* COMM pid=\([0-9]*\) .*/\1/p' | sort -u); do
		[ -e "/tmp/perf-$pid.map" ] && mv "/tmp/perf-$pid.map" "$T/maps/"
	done
	ls "$T"/maps/perf-*.map >/dev/null 2>&1 ||
		skip_all "java wrote no perf map"
	restack_clean stats --jit-dir "$T/maps" "$T/$1.data" \
		>"$T/$1.stats" 2>"$T/$1.err"
	restack_clean convert --jit-dir "$T/maps" "$T/$1.data" \
		-o "$T/$1.script" 2>>"$T/$1.err"
}

# share STATS REASON: "COUNT TOTAL" of samples that ended for REASON.
share() {
	local total
	total=$(awk '$1 == "samples" { print $2; exit }' "$1")
	echo "$(end_reasons "$1" | awk -v r="$2" '
		{ n = $1; $1 = ""; sub(/^ /, "") } $0 == r { c = n }
		END { print c + 0 }') $total"
}

# leaf_modules PERF SCRIPT: per sample, the leaf's address and module in
# perf script's and restack's outputs (the same samples, in the same
# order); prints "SAME JIT TOTAL": samples whose leaves agree, of those
# whose leaf perf names in /tmp/perf-PID.map, and the JIT leaves restack
# names "[jit]" or "//anon" (must be 0).
leaf_modules() {
	python3 - "$1" "$2" <<'PY'
import re, sys

def leaves(path):
    out, first = [], False
    for line in open(path, errors="replace"):
        if not line.strip():
            first = False
            continue
        if not line.startswith(("\t", " ")):
            first = True
            continue
        if not first:
            continue
        m = re.match(r"\s*([0-9a-f]+) .*\(([^()]*)\)(?: [a-z-]+)?\s*$", line)
        if m and not m.group(1).startswith("ffffffff"):
            out.append((int(m.group(1), 16), m.group(2)))
            first = False
    return out

perf, ours = leaves(sys.argv[1]), leaves(sys.argv[2])
jit = [p for p in perf if p[1].startswith("/tmp/perf-")]
seen = set(ours)
same = sum(1 for p in jit if p in seen)
bad = sum(1 for o in ours if o[1] in ("[jit]", "//anon"))
print(same, len(jit), bad)
PY
}

# --- without -XX:+PreserveFramePointer ------------------------------------
record_java nofp -XX:-PreserveFramePointer
read -r nocfi total < <(share "$T/nofp.stats" "no CFI")
read -r nomod _ < <(share "$T/nofp.stats" "module not found")
echo "# without the flag: $nocfi of $total samples stop in JIT code (no CFI)"
check "no flag: stacks stop in JIT code as 'no CFI' (>= 50%)" \
	test "$total" -gt 1000 -a $((nocfi * 2)) -ge "$total"
is "$nomod" 0 "no flag: no stack ends 'module not found'"
check "no flag: the module table lists the JIT region by its perf map" \
	awk -v n="$nocfi" '$1 == "no-file" && $NF ~ /^\/tmp\/perf-[0-9]+\.map$/ &&
		$2 > n / 2 && $4 == n { ok = 1 } END { exit !ok }' "$T/nofp.stats"
check "no flag: no //anon row" awk '$NF == "//anon" { exit 1 }' \
	"$T/nofp.stats"
check "no flag: the note on stderr names -XX:+PreserveFramePointer" \
	grep -q 'note: .*stop in JIT code without unwinding information; run Java with -XX:+PreserveFramePointer' \
	"$T/nofp.err"
check "no flag: script marks the stop '[truncated: no CFI]'" \
	grep -q '\[truncated: no CFI\]' "$T/nofp.script"
read -r same jit bad < <(leaf_modules "$T/nofp.perf" "$T/nofp.script")
echo "# JIT leaves named as perf script names them: $same of $jit"
check "no flag: JIT leaves' modules equal perf script's (/tmp/perf-PID.map)" \
	test "$jit" -gt 1000 -a "$same" -eq "$jit"
is "$bad" 0 "no flag: no JIT frame named [jit] or //anon"

# --- with -XX:+PreserveFramePointer ---------------------------------------
record_java fp -XX:+PreserveFramePointer
read -r root total < <(share "$T/fp.stats" "root")
p_root=$(python3 "$TOP/tests/tools/collapse.py" "$T/fp.perf" | awk '
	{ split($0, f, ";"); t += $NF
	  if (f[2] ~ /^(clone3|_start)$/) r += $NF } END { print r + 0 }')
echo "# with the flag: restack reaches the root in $root of $total samples," \
     "perf script in $p_root"
check "flag: >= 95% of samples reach the root" \
	test "$total" -gt 1000 -a $((root * 100)) -ge $((total * 95))
check "flag: no note on stderr" \
	sh -c '! grep -q PreserveFramePointer "$1"' sh "$T/fp.err"
read -r same jit bad < <(leaf_modules "$T/fp.perf" "$T/fp.script")
check "flag: JIT leaves' modules equal perf script's" \
	test "$jit" -gt 500 -a "$same" -eq "$jit"

done_testing
