#!/bin/bash
# syscap.sh - damaged sysprof captures: each patch or cut must give exit 2,
# one line "restack: FILE+0xOFF: MESSAGE" naming the right byte, and no
# output file.  Sources: testdata/corpus/syscap/prog-le.syscap (written by
# restack) and the real 3.46 fixture testdata/sysprof/prog-346.syscap.
. "$(dirname "$0")/../cli/lib.sh"

command -v python3 >/dev/null 2>&1 || skip_all "python3 is not installed"
le=$TESTDATA/corpus/syscap/prog-le.syscap
real=$TESTDATA/sysprof/prog-346.syscap

# first_frame FILE TYPE: offset of the first frame of TYPE.
first_frame() {
	python3 - "$1" "$2" <<'EOF'
import struct, sys
d = open(sys.argv[1], 'rb').read()
off = 256
while off + 24 <= len(d):
    if d[off + 16] == int(sys.argv[2]):
        print(off)
        break
    off += struct.unpack_from('<H', d, off)[0]
EOF
}

# patch SRC OUT OFF HEX: OUT is SRC with the bytes HEX written at OFF.
patch() {
	cp "$1" "$2"
	printf "$(sed 's/../\\x&/g' <<<"$4")" |
		dd of="$2" bs=1 seek="$3" conv=notrunc status=none
}

# expect NAME FILE OFF FRAGMENT: converting FILE fails as described.
expect() {
	local name=$1 file=$2 off=$3 frag=$4 rc line
	rm -f "$T/out.folded"
	"$RESTACK" convert "$file" -o "$T/out.folded" 2>"$T/err" >/dev/null
	rc=$?
	line=$(cat "$T/err")
	if [ $rc -ne 2 ]; then
		fail "$name: exit 2" "got $rc: $line"
	elif [ "$(wc -l <"$T/err")" -ne 1 ]; then
		fail "$name: one line" "$line"
	elif [[ $line != "restack: $file+0x$(printf %x "$off"): "*"$frag"* ]]; then
		fail "$name: message" "got:  $line" \
			"want: restack: $file+0x$(printf %x "$off"): ...$frag..."
	elif [ -e "$T/out.folded" ]; then
		fail "$name: no output file"
	else
		ok "$name: $line"
	fi
}

f=$T/bad.syscap
patch "$le" "$f" 4 02
expect "version 2" "$f" 4 "version 2"

patch "$le" "$f" 256 1900
expect "frame length not a multiple of 8" "$f" 256 "not a multiple of 8"

patch "$le" "$f" 256 1000
expect "frame length below 24" "$f" 256 "not a multiple of 8"

patch "$le" "$f" 256 f8ff
expect "frame past the end" "$f" 256 "runs past the end"

s=$(first_frame "$le" 2)
patch "$le" "$f" $((s + 24)) ff00
expect "SAMPLE with too many addresses" "$f" "$s" "addresses"

m=$(first_frame "$le" 3)
len=$(python3 -c "import struct,sys; d=open(sys.argv[1],'rb').read(); print(struct.unpack_from('<H', d, $m)[0])" "$le")
patch "$le" "$f" $((m + len - 1)) 41
expect "MAP name not NUL-terminated" "$f" "$m" "NUL-terminated"

p=$(first_frame "$real" 4)
len=$(python3 -c "import struct,sys; d=open(sys.argv[1],'rb').read(); print(struct.unpack_from('<H', d, $p)[0])" "$real")
patch "$real" "$f" $((p + len - 1)) 41
expect "real capture: PROCESS not NUL-terminated" "$f" "$p" "NUL-terminated"

head -c 300 "$le" >"$f"
expect "cut inside the first frame" "$f" 256 "runs past the end"
head -c 270 "$le" >"$f"
expect "cut inside a frame header" "$f" 256 "inside a frame header"
head -c 100 "$le" >"$f"
expect "cut inside the file header" "$f" 0 "100 bytes"
size=$(stat -c %s "$real")
head -c $((size - 5)) "$real" >"$f"
"$RESTACK" convert "$f" -o "$T/x.folded" 2>"$T/err"
is "$?:$(wc -l <"$T/err"):$([ -e "$T/x.folded" ] && echo file)" "2:1:" \
	"real capture cut short: exit 2, one line, no output ($(cat "$T/err"))"

# A type-18 frame claiming more stack than it holds.
s=$(first_frame "$TESTDATA/corpus/syscap/prog-stack18.syscap" 18)
patch "$TESTDATA/corpus/syscap/prog-stack18.syscap" "$f" $((s + 24)) ffffffff00000000
expect "user-stack frame with too many stack bytes" "$f" "$s" "stack bytes"

done_testing
