#!/bin/bash
# apk.sh - Android-style captures: a library mapped straight out of an APK
# (simpleperf names it ".../base.apk!/lib/arm64-v8a/libwork.so", Linux
# perf names the APK itself; file offsets count from the APK's start) with
# a 16-byte build-id that the capture stores zero-padded to 20 bytes.
#
# Made from testdata/arm64's threads-nopac capture: its libwork-nopac.so
# gets a 16-byte build-id note (the first 16 bytes of its own) and is
# stored uncompressed in an APK (zip -0); tests/tools/apk_capture.py
# renames its mappings and moves their offsets into the APK.  The
# library must then be found in the APK (under --symfs, by name or by
# offset), extracted under --symfs, or in a build-id directory by its 16
# bytes, and every stack must be the original capture's.
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || skip_all "python3 is needed"
command -v xz >/dev/null || skip_all "xz is needed to read the fixtures"
command -v zip >/dev/null || skip_all "zip is needed to make an APK"
tools=$TOP/tests/tools
A=$TESTDATA/arm64
arch=(--archive "$A/cache.tar.xz")
old=/tmp/restack-arm64/libwork-nopac.so
app=/data/app/com.example.work-1
entry=lib/arm64-v8a/libwork.so

xz -dc "$A/threads-nopac.data.xz" >"$T/orig.data"
mkdir -p "$T/x" "$T/apk/lib/arm64-v8a"
tar xJf "$A/cache.tar.xz" -C "$T/x" "${old#/}"
cp "$T/x${old}"/*/elf "$T/apk/$entry"
# a 16-byte build-id: the note's descsz 20 -> 16, its first 16 bytes kept
bid=$(python3 - "$T/apk/$entry" <<'PY'
import sys
p = sys.argv[1]
d = bytearray(open(p, 'rb').read())
i = d.index(b'\x04\0\0\0\x14\0\0\0\x03\0\0\0GNU\0')
d[i + 4] = 16
open(p, 'wb').write(d)
print(d[i + 16:i + 32].hex())
PY
)
echo 'manifest manifest manifest' >"$T/apk/AndroidManifest.xml"
(cd "$T/apk" && zip -q -9 base.apk AndroidManifest.xml &&
	zip -q -0 base.apk "$entry")
off=$(python3 - "$T/apk/base.apk" "$entry" <<'PY'
import struct, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
i = z.getinfo(sys.argv[2])
h = open(sys.argv[1], 'rb').read()[i.header_offset:i.header_offset + 30]
n, x = struct.unpack('<HH', h[26:30])
print(i.header_offset + 30 + n + x)
PY
)
python3 "$tools/apk_capture.py" "$T/orig.data" "$T/bang.data" "$old" \
	"$app/base.apk!/$entry" "$off" "$bid"
python3 "$tools/apk_capture.py" "$T/orig.data" "$T/bare.data" "$old" \
	"$app/base.apk" "$off" "$bid"
check "the capture stores the build-id padded to 20 bytes" \
	grep -q "^  ${bid}00000000 $app/base.apk!/$entry\$" \
	<("$RESTACK" info "$T/bang.data")

restack_clean convert "$T/orig.data" "${arch[@]}" -o "$T/orig.folded" \
	2>/dev/null
check "the original capture has libwork frames" \
	grep -q 'lib_work' "$T/orig.folded"

# convert NAME DATA ARGS...: folded stacks equal the original's, and the
# module was found where it should be
convert() {
	local name=$1 data=$2 where=$3
	shift 3
	if ! restack_clean convert "$data" "${arch[@]}" "$@" \
		-o "$T/$name.folded" 2>"$T/$name.err"; then
		fail "$name: convert" "$(cat "$T/$name.err")"
		return
	fi
	same_file "$T/orig.folded" "$T/$name.folded" \
		"$name: stacks equal the original capture's"
	restack_clean stats "$data" "${arch[@]}" "$@" >"$T/$name.stats" \
		2>/dev/null
	check "$name: the library is found ($where)" \
		grep -qE "^  ok .* ${bid}00000000 .*base\.apk.*\($where" \
		"$T/$name.stats"
}

mkdir -p "$T/root$app" "$T/ext$app/base.apk!/lib/arm64-v8a" "$T/cache"
cp "$T/apk/base.apk" "$T/root$app/base.apk"
cp "$T/apk/$entry" "$T/ext$app/base.apk!/$entry"
convert apk-by-name "$T/bang.data" "--symfs APK" --symfs "$T/root"
convert apk-by-offset "$T/bare.data" "--symfs APK" --symfs "$T/root"
convert extracted "$T/bang.data" "--symfs" --symfs "$T/ext"
mkdir -p "$T/cache/.build-id/${bid:0:2}"
cp "$T/apk/$entry" "$T/cache/.build-id/${bid:0:2}/${bid:2}"
convert buildid-dir "$T/bang.data" "build-id cache" \
	--buildid-dir "$T/cache"

# the APK's entry is compressed: it could not have been mapped
(cd "$T/apk" && rm base.apk && zip -q -9 base.apk AndroidManifest.xml "$entry")
cp "$T/apk/base.apk" "$T/root$app/base.apk"
restack_clean stats "$T/bang.data" "${arch[@]}" --symfs "$T/root" \
	>"$T/deflated.stats" 2>/dev/null
check "a compressed entry is not read" \
	grep -qE "^  missing .*base\.apk!/$entry" "$T/deflated.stats"

done_testing
