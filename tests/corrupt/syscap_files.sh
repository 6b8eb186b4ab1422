#!/bin/bash
# syscap_files.sh - the files a sysprof capture embeds (FILE_CHUNK
# /proc/kallsyms and __symbols__), read to name frames when the binaries
# and the kernel are elsewhere.  testdata/corpus/syscap/bundle.syscap is
# prog-le.syscap (whose /tmp/w6/prog is absent) with both files and a
# sample with kernel frames, made by tests/tools/syscap_addfiles.py: its
# frames are named from them.  Damaged files are ignored (the frames are
# named as without them), never a crash, a hang or an error.
. "$(dirname "$0")/../cli/lib.sh"

command -v python3 >/dev/null 2>&1 || skip_all "python3 is not installed"
le=$TESTDATA/corpus/syscap/prog-le.syscap
bundle=$TESTDATA/corpus/syscap/bundle.syscap
add=$TOP/tests/tools/syscap_addfiles.py
sample="--sample 10062 10383429702209 K ffffffff81000150 ffffffff81000260
	U 55d39622f226 55d39622f0a9 55d39622f141"

# syms OUT [RECORDS...]: a __symbols__ file, sysprof 3.46's layout, of
# records BEGIN:END:NAME (hex addresses) for pid 10062; "noend" leaves out
# the closing record, "badname" points a record past the file's end.
syms() {
	python3 - "$@" <<'PY'
import struct, sys
out, args = sys.argv[1], sys.argv[2:]
recs = [a.split(':') for a in args if ':' in a]
strs = b'\0' * 32
offs = []
for b, e, n in recs:
    offs.append(len(strs))
    strs += n.encode() + b'\0'
base = 32 * len(recs)
blob = b''.join(struct.pack('<QQIIII', int(b, 16), int(e, 16), 10062,
                            base + o if 'badname' not in args else 1 << 20,
                            0, 0)
                for (b, e, _), o in zip(recs, offs))
if 'noend' in args:
    blob += b'\x01' * 32
else:
    blob += strs
open(out, 'wb').write(blob)
PY
}

# conv NAME FILE: converts FILE to $T/NAME.folded; exit 0 and no message
# but the missing module's.
conv() {
	"$RESTACK" convert "$2" -o "$T/$1.folded" 2>"$T/$1.err"
	local rc=$?
	if [ $rc -ne 0 ] || grep -v 'module\|modules:' "$T/$1.err" | grep -q .; then
		fail "$1: exit 0" "got $rc: $(cat "$T/$1.err")"
		return 1
	fi
}

if conv bundle "$bundle"; then
	check "bundle: user frames named from __symbols__ (main;fib;work)" \
		grep -q ';_start;.*;main;fib;work 3$' \
		"$T/bundle.folded"
	check "bundle: kernel frames named from /proc/kallsyms" \
		grep -q '^prog;_start;main;work;kfunc_caller;kfunc_leaf 1$' \
		"$T/bundle.folded"
fi
is "$("$RESTACK" stats "$bundle" 2>/dev/null | grep '^kernel symbols')" \
	"kernel symbols     the capture's /proc/kallsyms" \
	"stats names the kernel symbols the capture's, not a temporary file"
"$RESTACK" convert "$bundle" --kallsyms /dev/null --to script \
	-o "$T/kopt.script" 2>/dev/null
check "--kallsyms FILE wins over the embedded kernel symbols" \
	bash -c "! grep -q kfunc '$T/kopt.script'"

printf 'ffffffff81000000 T _text\nffffffff81000100 T kfunc_leaf\n' >"$T/k"
printf 'garbage\n\n  \nffffffff81000200 t\nffffffff81000300 T x' >"$T/kbad"

# file without its closing record: ignored
syms "$T/s1" 55d39622f0a9:55d39622f0a9:main noend
python3 "$add" "$le" "$T/noend.syscap" $sample __symbols__="$T/s1"
conv noend "$T/noend.syscap" &&
	check "__symbols__ without its closing record is ignored" \
		bash -c "! grep -q ';main' '$T/noend.folded' &&
			 grep -q '\[prog\]' '$T/noend.folded'"

# names past the end of the file: those records are ignored
syms "$T/s2" 55d39622f0a9:55d39622f0a9:main badname
python3 "$add" "$le" "$T/badname.syscap" $sample __symbols__="$T/s2"
conv badname "$T/badname.syscap" &&
	check "__symbols__ records naming no string are ignored" \
		bash -c "! grep -q ';main' '$T/badname.folded'"

# reversed and all-covering ranges
syms "$T/s3" 55d39622f141:55d39622f0a9:rev 0:ffffffffffffffff:all \
	55d39622f0a9:55d39622f0a9:main
python3 "$add" "$le" "$T/ranges.syscap" $sample __symbols__="$T/s3"
conv ranges "$T/ranges.syscap" &&
	check "reversed or whole-space ranges are ignored, the others read" \
		bash -c "grep -q ';main' '$T/ranges.folded' &&
			 ! grep -q ';rev\|;all' '$T/ranges.folded'"

# a file never finished (no last chunk): ignored
python3 "$add" "$le" "$T/unfinished.syscap" $sample /proc/kallsyms="$T/k"
python3 - "$T/unfinished.syscap" <<'PY'
import sys
p = sys.argv[1]
d = open(p, 'rb').read()
open(p, 'wb').write(d[:-288])   # drop the empty last chunk (284 -> 288)
PY
conv unfinished "$T/unfinished.syscap" &&
	check "a file without its last chunk is ignored" \
		bash -c "! grep -q kfunc '$T/unfinished.folded'"

# a chunk claiming more data than its frame holds: the file is ignored
python3 "$add" "$le" "$T/biglen.syscap" $sample /proc/kallsyms="$T/k"
python3 - "$T/biglen.syscap" <<'PY'
import struct, sys
p = sys.argv[1]
d = bytearray(open(p, 'rb').read())
off = 256
while off < len(d):
    n = struct.unpack_from('<H', d, off)[0]
    if d[off + 16] == 13:
        struct.pack_into('<I', d, off + 24, 0xffff0000)
        break
    off += n
open(p, 'wb').write(d)
PY
conv biglen "$T/biglen.syscap" &&
	check "a chunk longer than its frame makes the file ignored" \
		bash -c "! grep -q kfunc '$T/biglen.folded'"

# kallsyms text that is not kallsyms: read as far as it goes
python3 "$add" "$le" "$T/kbad.syscap" $sample /proc/kallsyms="$T/kbad"
conv kbad "$T/kbad.syscap" && ok "kallsyms text with bad lines converts"

# a FILE_CHUNK frame too short for its header is skipped
python3 - "$le" "$T/short.syscap" <<'PY'
import struct, sys
d = open(sys.argv[1], 'rb').read()
d += struct.pack('<HhiqBBHI', 32, -1, -1, 0, 13, 0, 0, 0) + b'\0' * 8
open(sys.argv[2], 'wb').write(d)
PY
conv short "$T/short.syscap" && ok "a FILE_CHUNK frame shorter than 284 bytes is skipped"

done_testing
