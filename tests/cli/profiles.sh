#!/bin/bash
# profiles.sh - profiles as inputs of `restack convert`: folded stacks and
# pprof read back to the stacks they were written from.  On captures
# recorded here (threads: a library; prog: kernel frames; inline: inline
# chains; deep: truncated and stitched stacks):
#   capture -> folded -> folded, and --annotate, give the same bytes;
#   capture -> folded --annotate -> svg equals capture -> svg (but the
#     subtitle's event name, which folded stacks do not carry);
#   capture -> pprof -> folded equals capture -> folded, by samples, by
#     period, with --tid; and so does the pprof as `go tool pprof -proto`
#     rewrites it (Go's encoder: other ids, order, string table);
#   --sample-type picks the values; decimal weights are scaled;
#   a Chrome trace of a known nesting gives its self and inclusive times.
. "$(dirname "$0")/lib.sh"

need_perf
cc=$(command -v cc || command -v gcc) || skip_all "no C compiler"
build_threads
"$cc" -O2 -g -o "$T/inline" "$TESTDATA/src/inline.c" ||
	skip_all "cannot build inline"
"$cc" -O2 -g -fomit-frame-pointer -o "$T/deep" "$TESTDATA/src/deep.c" ||
	skip_all "cannot build deep"
have_go=
if command -v go >/dev/null 2>&1 && go version >/dev/null 2>&1; then
	have_go=1
else
	skip "go tool pprof -proto checks" "go is not installed (golang-go)"
fi

gopprof() {
	mkdir -p "$T/gohome"
	env HOME="$T/gohome" GOCACHE="$T/gohome/cache" GOPATH="$T/gohome/go" \
		GOTOOLCHAIN=local PPROF_TMPDIR="$T/gohome/pprof" \
		go tool pprof -symbolize=none "$@"
}

# conv IN OUT [OPTIONS...]: restack convert, stderr kept in $T/err.
conv() {
	local in=$1 out=$2
	shift 2
	restack_clean convert -q "$@" "$in" -o "$out" 2>"$T/err"
}

# roundtrip NAME [CONVERT OPTIONS...]: the checks above on $T/NAME.data.
roundtrip() {
	local n=$1 d=$T/$1.data
	shift
	conv "$d" "$T/$n.folded" "$@" && conv "$d" "$T/$n.ann.folded" --annotate "$@" &&
		conv "$d" "$T/$n.svg" "$@" && conv "$d" "$T/$n.pb.gz" "$@" &&
		conv "$d" "$T/$n.period.folded" --weight period "$@" &&
		conv "$d" "$T/$n.tid.folded" --tid "$@" ||
		{ fail "$n: convert the capture" "$(cat "$T/err")"; return; }
	check "$n: the folded stacks are not empty" test -s "$T/$n.folded"

	conv "$T/$n.folded" "$T/$n.f2.folded" &&
		same_file "$T/$n.folded" "$T/$n.f2.folded" "$n: folded -> folded is the same" ||
		fail "$n: convert folded" "$(cat "$T/err")"
	conv "$T/$n.ann.folded" "$T/$n.ann2.folded" --annotate &&
		same_file "$T/$n.ann.folded" "$T/$n.ann2.folded" "$n: folded --annotate -> folded --annotate is the same" ||
		fail "$n: convert annotated folded" "$(cat "$T/err")"
	conv "$T/$n.ann.folded" "$T/$n.f.svg" || fail "$n: folded -> svg" "$(cat "$T/err")"
	same_file <(grep -v 'id="subtitle"' "$T/$n.svg") \
		<(grep -v 'id="subtitle"' "$T/$n.f.svg") \
		"$n: capture -> folded -> svg equals capture -> svg"

	conv "$T/$n.pb.gz" "$T/$n.p.folded" &&
		same_file "$T/$n.folded" "$T/$n.p.folded" "$n: capture -> pprof -> folded equals capture -> folded" ||
		fail "$n: pprof -> folded" "$(cat "$T/err")"
	conv "$T/$n.pb.gz" "$T/$n.p.period.folded" --weight period &&
		same_file "$T/$n.period.folded" "$T/$n.p.period.folded" "$n: ... by period" ||
		fail "$n: pprof -> folded by period" "$(cat "$T/err")"
	conv "$T/$n.pb.gz" "$T/$n.p.tid.folded" --tid &&
		same_file "$T/$n.tid.folded" "$T/$n.p.tid.folded" "$n: ... with --tid" ||
		fail "$n: pprof -> folded --tid" "$(cat "$T/err")"
	conv "$T/$n.pb.gz" "$T/$n.p.cpu.folded" --sample-type cpu &&
		same_file "$T/$n.period.folded" "$T/$n.p.cpu.folded" "$n: --sample-type cpu weighs by period" ||
		fail "$n: pprof --sample-type cpu" "$(cat "$T/err")"
	if [ -n "$have_go" ]; then
		if gopprof -proto "$T/$n.pb.gz" >"$T/$n.go.pb.gz" 2>"$T/go.err"; then
			conv "$T/$n.go.pb.gz" "$T/$n.go.folded" --from pprof &&
				same_file "$T/$n.folded" "$T/$n.go.folded" "$n: as go tool pprof -proto writes it, the same stacks" ||
				fail "$n: go's pprof -> folded" "$(cat "$T/err")"
		else
			fail "$n: go tool pprof -proto" "$(cat "$T/go.err")"
		fi
	fi
}

if record -e cpu-clock -F 2000 --call-graph dwarf -o "$T/threads.data" \
	-- "$T/threads" 1000 >/dev/null; then
	roundtrip threads
else
	fail "threads: perf record"
fi
# prog sleeps: kernel frames, when perf may record them
build_prog
if record -e cpu-clock -F 4000 --call-graph dwarf -o "$T/prog.data" \
	-- "$T/prog" 300 >/dev/null; then
	roundtrip prog
	if grep -q '_\[k\] [0-9]*$' "$T/prog.ann.folded"; then
		check "prog: kernel frames read back as kernel frames" \
			grep -q '_\[k\] [0-9]*$' "$T/prog.ann2.folded"
	else
		skip "prog: kernel frames" "none recorded"
	fi
else
	fail "prog: perf record"
fi
if record -e cpu-clock -F 4000 --call-graph dwarf -o "$T/inline.data" \
	-- "$T/inline" 20000 >/dev/null; then
	roundtrip inline
	check "inline: inline frames read back as such" \
		grep -q '_\[i\]' "$T/inline.ann2.folded"
else
	fail "inline: perf record"
fi
if record -e cpu-clock -F 2000 --call-graph dwarf,2048 -o "$T/deep.data" \
	-- "$T/deep" 10000 >/dev/null; then
	# (--no-inline: perf's names make libc's __libc_start_main_impl an
	# inlined call that heads its frame, so annotated folded stacks
	# cannot say that its frame was stitched)
	roundtrip deep --no-inline
	check "deep: stitched frames read back as such" \
		grep -q '_\[s\]' "$T/deep.ann2.folded"
	mv "$T/deep.data" "$T/deepoff.data"
	roundtrip deepoff --stitch=off
	check "deep --stitch=off: truncated stacks keep their marker" \
		grep -q '^deep;\[truncated: window exhausted\];' "$T/deepoff.p.folded"
else
	fail "deep: perf record"
fi

# A Chrome trace written by a program that instruments its own functions
# (testdata/src/tracework.c: known nesting and times, B/E and X events,
# two threads): self and inclusive times per thread within 1%.
if "$cc" -O2 -o "$T/tracework" "$TESTDATA/src/tracework.c" -lpthread &&
	"$T/tracework" "$T/trace.json"; then
	conv "$T/trace.json" "$T/trace.folded" || fail "trace -> folded" "$(cat "$T/err")"
	# times FUNCTION THREAD: "self inclusive" in ms
	times() {
		awk -v fn="$1" -v th="$2" '{
			n = split($1, f, ";"); if (f[1] != th) next
			if (f[n] == fn) self += $2
			for (i = 2; i <= n; i++) if (f[i] == fn) { incl += $2; break }
		} END { printf "%.3f %.3f\n", self / 1e6, incl / 1e6 }' "$T/trace.folded"
	}
	# near GOT WANT: within 1%
	near() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; exit !(d <= b / 100 && -d <= b / 100) }'; }
	for th in worker_1 worker_2; do
		for want in "outer 90 240" "inner_a 90 120" "inner_b 60 60"; do
			set -- $want
			got=$(times "$1" "$th")
			if near "${got% *}" "$2" && near "${got#* }" "$3"; then
				ok "trace: $th $1 self $2 ms, inclusive $3 ms (got $got)"
			else
				fail "trace: $th $1 self $2 ms, inclusive $3 ms" "got $got"
			fi
		done
	done
	conv "$T/trace.json" "$T/trace.pb.gz" && conv "$T/trace.pb.gz" "$T/trace.p.folded" &&
		same_file "$T/trace.folded" "$T/trace.p.folded" "trace -> pprof -> folded equals trace -> folded" ||
		fail "trace -> pprof" "$(cat "$T/err")"
	check "trace -> pprof: wall time in nanoseconds" grep -q nanoseconds <(gzip -dc "$T/trace.pb.gz")
	for o in svg speedscope.json firefox.json; do
		check "trace -> $o" conv "$T/trace.json" "$T/trace.$o"
	done
else
	fail "tracework: build and run"
fi

# Decimal weights, comments, blank lines, CRLF; told apart by contents.
printf '# a comment\nmain;a;b 1.5\r\n\nmain;a 0.25\nmain;c 2\n' >"$T/dec.txt"
conv "$T/dec.txt" "$T/dec.folded" && 
	is "$(cat "$T/dec.folded")" "$(printf 'main;a 25\nmain;a;b 150\nmain;c 200')" \
		"decimal weights are scaled to integers" ||
	fail "decimal weights" "$(cat "$T/err")"
restack_clean convert "$T/dec.txt" -o "$T/dec.folded" 2>"$T/err"
check "... with a note saying by how much" grep -q 'multiplied by 100' "$T/err"
# a profile on standard input, named by --from (a stream is not sniffed)
P=$TESTDATA/corpus/profile
for f in z-dwarf-annotate.folded file-dwarf.pb.gz tracework.json; do
	case $f in *.folded) k=folded ;; *.json) k=chrome ;; *) k=pprof ;; esac
	"$RESTACK" convert -q "$P/$f" -o "$T/stdin-file.folded" &&
		"$RESTACK" convert -q --from $k - -o "$T/stdin.folded" <"$P/$f"
	is "$?" 0 "$f on standard input with --from $k converts"
	check "... as the file does" cmp -s "$T/stdin-file.folded" \
		"$T/stdin.folded"
done
done_testing
