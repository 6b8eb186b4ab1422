# fifo.sh - FIFOs where restack looks for a capture's files: under
# --symfs, in a build-id cache (the binary, its debug file, the kernel's
# kallsyms), as --kallsyms, and as perf maps and jitdumps in --jit-dir,
# also a perf map that is a link to /dev/stdin while stdin is a FIFO with a
# writer, and the DWARF cache's files.  open() blocked on a FIFO without a
# writer, read() on one whose writer stays: each of these hung.  Only regular files are opened; the
# conversion ends within 5 s as if the file were absent, and a module
# whose only candidate was a FIFO is reported "not a regular file".
. "$(dirname "$0")/lib.sh"

IN=$TESTDATA/perf/file-dwarf.data
PROG=/tmp/restack-testdata/prog         # the capture's recorded path
PROG_BID=cce7cbd43334a59d2e449e840d5d799e01a2c68c
KERNEL_BID=e4f18d9dc1d0e6fc2b17e93e885a647b3c0a6fc1
pids=$("$RESTACK" dump "$IN" | sed -n 's/.* pid=\([0-9]*\) .*/\1/p' | sort -u)
[ -n "$pids" ] || fail "the fixture's pids"

bid_dir() { # CACHE BID: a build-id cache's directory for BID
	echo "$1/.build-id/${2:0:2}/${2:2}"
}

mkdir -p "$T/symfs${PROG%/*}" "$(bid_dir "$T/cache" $PROG_BID)" \
	"$(bid_dir "$T/kcache" $KERNEL_BID)" "$T/jit" "$T/jitlink" "$T/out"
mkfifo "$T/symfs$PROG" "$(bid_dir "$T/cache" $PROG_BID)/elf" \
	"$(bid_dir "$T/cache" $PROG_BID)/debug" \
	"$(bid_dir "$T/kcache" $KERNEL_BID)/kallsyms" "$T/kallsyms.fifo" \
	"$T/stdin.fifo"
for pid in $pids; do
	mkfifo "$T/jit/perf-$pid.map" "$T/jit/jit-$pid.dump"
	ln -s /dev/stdin "$T/jitlink/perf-$pid.map"
done

# converts NAME OPTIONS...: converts $IN with OPTIONS (stdin: a FIFO whose
# writer stays until restack is done), which must end with exit 0 within
# 5 s
converts() {
	local name=$1 rc t0 t1 ms writer
	shift
	t0=$(date +%s%N)
	sleep 30 >"$T/stdin.fifo" &
	writer=$!
	timeout 10 env -i PATH=/usr/bin:/bin HOME="$T/home" \
		"$RESTACK" convert "$@" "$IN" -o "$T/out/$name.folded" \
		2>"$T/$name.err" <"$T/stdin.fifo"
	rc=$?
	t1=$(date +%s%N)
	kill $writer 2>/dev/null
	wait $writer 2>/dev/null
	ms=$(((t1 - t0) / 1000000))
	if [ "$rc" -eq 0 ] && [ $ms -le 5000 ]; then
		ok "$name: converts in $ms ms"
	else
		fail "$name: converts in $ms ms" "exit $rc" \
			"$(head -n 5 "$T/$name.err")"
	fi
}

# reported NAME: the module was reported not found as not a regular file
# (unless the recorded path holds the binary here)
reported() {
	[ -e "$PROG" ] && {
		skip "$1: reported" "$PROG exists here"
		return
	}
	check "$1: prog reported 'not a regular file'" grep -q \
		"module $PROG (build-id $PROG_BID) not found: not a regular file" \
		"$T/$1.err"
}

converts symfs --symfs "$T/symfs"
reported symfs
converts bidcache --buildid-dir "$T/cache"
reported bidcache
converts kallsyms-cache --buildid-dir "$T/kcache"
converts kallsyms-option --kallsyms "$T/kallsyms.fifo"
converts jit-dir --jit-dir "$T/jit"
converts jit-stdin --jit-dir "$T/jitlink"
same_file "$T/out/jit-dir.folded" "$T/out/jit-stdin.folded" \
	"the FIFOs and the pipe are as if absent: the same output"

# the DWARF cache's files (addr2line tables, the kernel symbol index)
# replaced by FIFOs of their names: read as absent, and stored again
mkdir -p "$(dirname "$(bid_dir "$T/real" $PROG_BID)")" "$T/dc"
ln -s "$TESTDATA/bin/prog" "$(bid_dir "$T/real" $PROG_BID)"
cp "$TESTDATA/fuzz/kallsyms" "$T/kallsyms"
touch -d '1 hour ago' "$T/kallsyms"   # (a file this new is not indexed)
converts dwcache-fill --buildid-dir "$T/real" --kallsyms "$T/kallsyms" \
	--dwarf-cache "$T/dc"
cached=$(ls "$T/dc" | wc -l)
check "the DWARF cache was filled ($cached files)" test "$cached" -ge 2
for f in "$T"/dc/*; do
	rm "$f" && mkfifo "$f"
done
converts dwcache-fifos --buildid-dir "$T/real" --kallsyms "$T/kallsyms" \
	--dwarf-cache "$T/dc"
same_file "$T/out/dwcache-fill.folded" "$T/out/dwcache-fifos.folded" \
	"FIFOs in the DWARF cache are as if absent: the same output"

done_testing
