#!/bin/bash
# golang.sh - Go programs (testdata/src/gowork.go: goroutines recursing
# to varied depths, one allocating, one creating goroutines) built with
# Debian's go, recorded with perf record --call-graph dwarf:
#  - stripped (strip of the symbols build: the same text; and
#    go build -ldflags="-s -w", also with -buildmode=pie, where the table
#    is .data.rel.ro.gopclntab): frames named from .gopclntab as
#    `go tool addr2line` names them on the symbols build, >= 99% of user
#    frames named, >= 95% of samples at a Go root (runtime.goexit,
#    runtime.mstart, runtime.rt0_go), every sample counted as rooted
#    ending at one;
#  - with symbols: a stack that went through a function that switched
#    stacks (systemstack, mcall, morestack, ...) ends
#    "[truncated: stack switch]" at that function, never at a false root
#    or with a stale caller above it.
. "$(dirname "$0")/lib.sh"

command -v go >/dev/null 2>&1 || skip_all "go is not installed (golang-go)"
command -v strip >/dev/null 2>&1 || skip_all "strip is not installed"
need_perf

gobuild() {
	env -i PATH=/usr/bin:/bin HOME="$T/home" GOCACHE="$T/gocache" \
		GOPATH="$T/gopath" GO111MODULE=off go "$@"
}

cp "$TESTDATA/src/gowork.go" "$T/"
(cd "$T" && gobuild build -o gowork gowork.go) >"$T/go.err" 2>&1 ||
	skip_all "go build fails: $(head -n 1 "$T/go.err")"
(cd "$T" && gobuild build -ldflags="-s -w" -o gowork-sw gowork.go) \
	>>"$T/go.err" 2>&1 || skip_all "go build -s -w fails"
(cd "$T" && gobuild build -buildmode=pie -ldflags="-s -w" -o gowork-pie \
	gowork.go) >>"$T/go.err" 2>&1 || skip_all "go build -buildmode=pie fails"
strip -o "$T/gowork-st" "$T/gowork" || skip_all "strip fails"
for b in gowork-st gowork-sw gowork-pie; do
	if readelf -S "$T/$b" | grep -qE '\.symtab|\.debug_'; then
		fail "$b has no symbol table and no DWARF"
	fi
done

for b in gowork gowork-st gowork-sw gowork-pie; do
	record -e cpu-clock --call-graph dwarf -o "$T/$b.data" \
		-- "$T/$b" 1000
	case $? in
	0) ;;
	77) skip_all "perf cannot record here" ;;
	*) fail "perf records $b"; done_testing ;;
	esac
	restack_clean convert "$T/$b.data" --to script -o "$T/$b.script" &&
	restack_clean convert "$T/$b.data" -o "$T/$b.folded" &&
	restack_clean stats "$T/$b.data" >"$T/$b.stats" ||
		fail "restack converts $b's capture"
done

# The addresses each user frame of a script output is named at (the
# sampled pc, a return address - 1), with the name restack gave.
frames() {
	python3 - "$1" "($T/$2)" <<'PY'
import sys
mod = sys.argv[2]
for line in open(sys.argv[1]):
    if not line.startswith("\t"):
        continue
    f = line.split()
    if f[-1] == "kernel" or f[-2] != mod:
        continue
    a = int(f[0], 16) - (f[-1] != "sample")
    print("0x%x %s" % (a, " ".join(f[1:-2])))
PY
}

# named SCRIPT BIN: "named total" user frames of BIN.
named() {
	frames "$1" "$2" | awk '{ n++; if ($2 !~ /^\[/) g++ }
				END { print g + 0, n + 0 }'
}

# Go roots and stack switches in a folded file: "rooted total bad",
# bad counting samples without a marker whose outermost frame is not a
# Go root (or the dynamic linker's, in a position-independent build, or
# runtime.clone, where a new thread starts: its stack is still empty).
roots() {
	awk '{
		c = $NF; sub(/ [0-9]+$/, ""); n = split($0, f, ";")
		t += c
		r = f[2]; sub(/\.abi0$/, "", r)
		if (r == "runtime.goexit" || r == "runtime.mstart" ||
		    r == "runtime.rt0_go" ||
		    r == "runtime.clone" ||  # a new thread, before mstart
		    r == "_start" || r == "_dl_start_user")   # ld.so (pie)
			g += c
		else if (r !~ /^\[truncated: /)
			bad += c
	} END { print g + 0, t + 0, bad + 0 }' "$1"
}

pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b ? 100 * a / b : 0 }'; }
at_least() { awk -v a="$1" -v b="$2" -v p="$3" 'BEGIN { exit !(b && a >= p * b / 100) }'; }

for b in gowork-st gowork-sw gowork-pie; do
	read -r g n <<<"$(named "$T/$b.script" "$b")"
	if at_least "$g" "$n" 99; then
		ok "$b: $g of $n user frames named ($(pct "$g" "$n")%)"
	else
		fail "$b: >= 99% of user frames named: $g of $n" \
			"$(frames "$T/$b.script" "$b" | awk '$2 ~ /^\[/' | sort | uniq -c | sort -rn | head -n 5)"
	fi
	read -r g n bad <<<"$(roots "$T/$b.folded")"
	if at_least "$g" "$n" 95; then
		ok "$b: $g of $n samples reach the root ($(pct "$g" "$n")%)"
	else
		fail "$b: >= 95% of samples reach the root: $g of $n" \
			"$(grep -A 14 '^end reasons' "$T/$b.stats")"
	fi
	rooted=$(awk '$1 == "reached" && $2 == "root" { print $3 }' "$T/$b.stats")
	is "$rooted" "$g" "$b: the samples counted as rooted are those at a Go root"
	is "$bad" 0 "$b: no sample ends at another frame without a marker"
done

# Names equal go tool addr2line's on the symbols build (same text).
frames "$T/gowork-st.script" gowork-st | sort -u >"$T/st.frames"
cut -d' ' -f1 "$T/st.frames" |
	gobuild tool addr2line "$T/gowork" >"$T/a2l.out" 2>"$T/a2l.err" ||
	fail "go tool addr2line runs" "$(head -n 3 "$T/a2l.err")"
awk 'NR % 2 == 1' "$T/a2l.out" | paste -d' ' <(cut -d' ' -f1 "$T/st.frames") - |
	sort >"$T/a2l.frames"
n=$(wc -l <"$T/st.frames")
if [ "$n" -gt 50 ]; then
	same_file "$T/a2l.frames" "$T/st.frames" \
		"stripped: the names of $n distinct addresses equal go tool addr2line's"
else
	fail "stripped: over 50 distinct addresses to compare ($n)"
fi

# The same capture with the strip twin at the recorded path: the walk by
# the function table's SP deltas gives every sample the return addresses
# the walk by the symbols build's CFI (.debug_frame) gave.
user_pcs() {
	awk '!/^\t/ { if (NF) print s; s = ""; next }
	     $NF != "kernel" { s = s " " $1 } END { print s }' "$1"
}
mv "$T/gowork" "$T/gowork.sym" && cp "$T/gowork-st" "$T/gowork" &&
	restack_clean convert "$T/gowork.data" --to script \
		-o "$T/swapped.script" || fail "restack converts with the twin"
mv "$T/gowork.sym" "$T/gowork"
user_pcs "$T/gowork.script" >"$T/cfi.pcs"
user_pcs "$T/swapped.script" >"$T/gopcln.pcs"
same_file "$T/cfi.pcs" "$T/gopcln.pcs" \
	"stripped twin: every sample's user stack equals the CFI walk's ($(wc -l <"$T/cfi.pcs") samples)"

# Without section headers the table is found by its header: the same
# names for the same addresses.
python3 - "$T/gowork-st" "$T/gowork-nosh" <<'PY'
import sys
d = bytearray(open(sys.argv[1], "rb").read())
d[0x28:0x30] = bytes(8)     # e_shoff
d[0x3c:0x40] = bytes(4)     # e_shnum, e_shstrndx
open(sys.argv[2], "wb").write(d)
PY
restack_clean symbolize "$T/gowork-nosh" $(cut -d' ' -f1 "$T/st.frames") |
	awk -F'\t' '{ printf "0x%s %s\n", $1, $2 }' | sort >"$T/nosh.frames"
same_file "$T/a2l.frames" "$T/nosh.frames" \
	"no section headers: the names equal go tool addr2line's"

# With symbols: stack switches are marked, nothing above them.
sw='runtime\.(systemstack|mcall|morestack|asmcgocall|nanotime1|sigtramp|cgoSigtramp)(\.abi0)?$|^time\.now$'
awk -v sw="$sw" '{
	sub(/ [0-9]+$/, ""); n = split($0, f, ";")
	for (i = 2; i <= n; i++)
		if (f[i] ~ sw) {
			if (i != 3 || f[2] != "[truncated: stack switch]")
				print
			break
		}
}' "$T/gowork.folded" >"$T/stale.txt"
check "symbols: no frame above a stack switch, every switch marked" \
	test ! -s "$T/stale.txt"
nsw=$(awk '/\[truncated: stack switch\]/ { n += $NF } END { print n + 0 }' \
	"$T/gowork.folded")
read -r g n bad <<<"$(roots "$T/gowork.folded")"
check "symbols: stacks end [truncated: stack switch] ($nsw of $n samples)" \
	test "$nsw" -gt 0
is "$bad" 0 "symbols: no sample ends at a frame that is neither a Go root nor marked"
rooted=$(awk '$1 == "reached" && $2 == "root" { print $3 }' "$T/gowork.stats")
is "$rooted" "$g" "symbols: the samples counted as rooted are those at a Go root"
# ("stack not copied", a sample perf copied no stack for, is another)
ends=$(end_reasons "$T/gowork.stats" |
	awk '$2 == "stack" && $3 == "switch" { print $1 }')
is "${ends:-0}" "$nsw" "symbols: stats counts the stack switches"
restack_clean convert "$T/gowork.data" -o "$T/gowork2.folded" \
	--stats-json "$T/gowork.json" &&
	check "symbols: --stats-json counts the stack switches" \
		grep -q "\"stack_switch\":$nsw[,}]" "$T/gowork.json"

done_testing
