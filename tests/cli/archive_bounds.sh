#!/bin/bash
# archive_bounds.sh - --archive extracts only what restack can use, within
# limits: the build-id layout of the capture's build-ids, each entry at
# most --archive-max-file (default 1024 MiB), the archive's entries
# together at most --archive-max-total (default 4096 MiB).  A small
# .tar.zst that expands to a 4 GiB entry, inside or outside the layout,
# dense or sparse, ends in <= 5 s with exit 2 and a one-line error, with
# peak RSS <= 100 MiB and nothing left in $TMPDIR; junk within the limits
# is skipped and the conversion is the one the build-id cache gives.
#
# The capture is testdata/perf/file-dwarf.data (its program, build-id
# cce7..., is testdata/bin/prog; nothing is recorded here).
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || skip_all "python3 is needed"
command -v zstd >/dev/null || skip_all "zstd is needed"
command -v tar >/dev/null || skip_all "tar is needed"
[ -x /usr/bin/time ] || skip_all "/usr/bin/time is needed for the peak RSS"
[ -e /tmp/restack-testdata/prog ] && skip_all "/tmp/restack-testdata/prog exists here"

data=$TESTDATA/perf/file-dwarf.data
bid=cce7cbd43334a59d2e449e840d5d799e01a2c68c
dir=tmp/restack-testdata/prog/$bid

# The build-id cache perf would have made: the reference output.
mkdir -p "$T/cache/.build-id/cc" "$T/cache/$dir"
cp "$TESTDATA/bin/prog" "$T/cache/$dir/elf"
ln -s "../../$dir" "$T/cache/.build-id/cc/${bid:2}"
env -i PATH=/usr/bin:/bin HOME="$T/home" "$RESTACK" convert --offline \
	--buildid-dir "$T/cache" "$data" -o "$T/ref.folded" 2>/dev/null
check "reference: prog unwound from the build-id cache" \
	grep -q '^prog;.*main' "$T/ref.folded"

# Archives: Python's tarfile streamed through zstd (no 4 GiB on disk).
python3 - "$T" "$TESTDATA/bin/prog" "$bid" <<'PY'
import io, subprocess, sys, tarfile
t, prog, bid = sys.argv[1:4]
d = f"tmp/restack-testdata/prog/{bid}"
other = "ab" * 20
class Zeros(io.RawIOBase):
    """n zero bytes, read lazily."""
    def __init__(self, n): self.left = n; self.buf = bytes(1 << 20)
    def readable(self): return True
    def readinto(self, b):
        n = min(len(b), self.left, len(self.buf))
        b[:n] = self.buf[:n]; self.left -= n
        return n
def f(tf, name, data):
    i = tarfile.TarInfo(name); i.size = len(data); i.mode = 0o755
    tf.addfile(i, io.BytesIO(data))
def z(tf, name, n):
    i = tarfile.TarInfo(name); i.size = n
    tf.addfile(i, io.BufferedReader(Zeros(n), 1 << 20))
def l(tf, name, target):
    i = tarfile.TarInfo(name); i.type = tarfile.SYMTYPE; i.linkname = target
    tf.addfile(i)
def layout(tf):
    l(tf, f".build-id/{bid[:2]}/{bid[2:]}", f"../../{d}")
    f(tf, f"{d}/elf", open(prog, "rb").read())
    f(tf, f"{d}/probes", b"")
def mk(name, add):
    z = subprocess.Popen(["zstd", "-q", "-3", "-o", f"{t}/{name}.tar.zst"],
                         stdin=subprocess.PIPE)
    with tarfile.open(fileobj=z.stdin, mode="w|",
                      format=tarfile.GNU_FORMAT) as tf:
        add(tf)
    z.stdin.close()
    if z.wait():
        sys.exit(f"zstd {name}")
# within the limits: junk outside the layout and another build-id's files
mk("junk", lambda tf: (z(tf, "home/u/junk.img", 64 << 20),
                       z(tf, f"usr/lib/libother.so/{other}/elf", 64 << 20),
                       l(tf, f".build-id/ab/{other[2:]}",
                         f"../../usr/lib/libother.so/{other}"),
                       layout(tf)))
# a 4 GiB entry outside the layout, then the layout
mk("outside", lambda tf: (z(tf, "home/u/disk.img", 4 << 30), layout(tf)))
# a 4 GiB debug file of the capture's program
mk("inside", lambda tf: (layout(tf), z(tf, f"{d}/debug", 4 << 30)))
# 2 MiB of zeros as the program's debug file (for a 1 MiB limit); also
# a zero-filled file restack uses, to show no zeros are written
mk("twomib", lambda tf: (layout(tf), z(tf, f"{d}/debug", 2 << 20)))
PY
# A sparse 4 GiB elf (GNU tar -S): 10 KiB in the archive.
mkdir -p "$T/sp/$dir"
truncate -s 4G "$T/sp/$dir/elf"
printf 'data' | dd of="$T/sp/$dir/elf" bs=1 seek=$((1 << 30)) conv=notrunc 2>/dev/null
tar -C "$T/sp" -S -cf - tmp | zstd -q -19 -o "$T/sparse.tar.zst"
rm -rf "$T/sp"
ls -l "$T"/*.tar.zst | awk '{ print "# " $5 " " $9 }'

# arch NAME [OPTION...]: convert with the archive NAME.tar.zst; sets rc,
# took (ms), rss (KiB) and left (files left in its $TMPDIR).
arch() {
	local name=$1 start
	shift
	rm -rf "$T/tmp.$name"
	mkdir -p "$T/tmp.$name"
	start=$(date +%s%N)
	env -i PATH=/usr/bin:/bin HOME="$T/home" TMPDIR="$T/tmp.$name" \
		timeout 120 /usr/bin/time -f 'rss %M' -o "$T/$name.time" \
		"$RESTACK" convert --offline --archive "$T/$name.tar.zst" \
		"$@" "$data" -o "$T/$name.folded" 2>"$T/$name.err"
	rc=$?
	took=$((($(date +%s%N) - start) / 1000000))
	rss=$(awk '/^rss/ { print $2 }' "$T/$name.time")
	left=$(ls -A "$T/tmp.$name" | wc -l)
}

# bounded NAME: the run's time, memory and leftovers.
bounded() {
	check "$1: done in <= 5 s ($took ms)" test "$took" -le 5000
	check "$1: peak RSS <= 100 MiB (${rss:-?} KiB)" test "${rss:-999999}" -le 102400
	is "$left" 0 "$1: nothing left in \$TMPDIR"
}

arch junk
is "$rc" 0 "junk within the limits: exit 0"
same_file "$T/ref.folded" "$T/junk.folded" "junk within the limits: output as with the build-id cache"
bounded junk

for a in outside inside sparse; do
	arch $a
	is "$rc" 2 "$a 4 GiB entry: exit 2"
	check "$a: one line naming the archive and the limit" \
		bash -c "[ \$(wc -l <'$T/$a.err') = 1 ] && grep -q '^restack: $T/$a.tar.zst: entry .*(--archive-max-' '$T/$a.err'"
	check "$a: no output file" test ! -e "$T/$a.folded"
	bounded $a
done
check "outside: over the total" grep -q "holds more than 4096 MiB (--archive-max-total)" "$T/outside.err"
check "inside: over the file limit" grep -q "entry '$dir/debug' is 4096.0 MiB, over the 1024 MiB limit (--archive-max-file)" "$T/inside.err"
check "sparse: over the file limit" grep -q "entry '$dir/elf' is 4096.0 MiB, over the 1024 MiB limit" "$T/sparse.err"

arch twomib --archive-max-file 1
is "$rc" 2 "--archive-max-file 1, a 2 MiB debug file: exit 2"
arch twomib --archive-max-total 1
is "$rc" 2 "--archive-max-total 1, 2 MiB in the archive: exit 2"
arch twomib
is "$rc" 0 "a 2 MiB debug file within the default limits: exit 0"
arch junk --archive-max-total 100
is "$rc" 2 "--archive-max-total counts skipped entries too"

done_testing
