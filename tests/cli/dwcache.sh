#!/bin/bash
# dwcache.sh - the decompressed-DWARF cache (unwind/dwcache.c) on a program
# built here with compressed debug sections:
#   - the first run stores the image and addr2line's function tables
#     (unwind/a2l_index.c), later runs map them; inline chains equal
#     addr2line's either way, and conversions are byte-identical with the
#     cache, without it and at -j1/-j2; the tables alone name inline
#     frames; cut or damaged tables are not used;
#   - a stored file that is cut or whose trailer does not match is not
#     used (and is replaced); a cache that cannot be written changes
#     nothing but the count of failed stores;
#   - the default directory ($XDG_CACHE_HOME, else ~/.cache), and
#     --no-dwarf-cache, which writes nothing;
#   - kernel symbol indexes (unwind/ksyms.c) in the same directory: stored
#     by the first conversion that names kernel frames from perf's copy of
#     kallsyms, read by the next, the same names either way.
. "$(dirname "$0")/lib.sh"

cc=$(command -v cc || command -v gcc) || skip_all "no C compiler"
command -v readelf >/dev/null || skip_all "binutils readelf is needed"
command -v addr2line >/dev/null || skip_all "binutils addr2line is needed"
command -v python3 >/dev/null || skip_all "python3 is needed"

python3 "$TOP/tests/tools/bigdwarf.py" 600 >"$T/big.c"
# and a unit no sample reaches
echo 'long unused_fn(long x) { return x * 7 + 1; }' >"$T/unused.c"
"$cc" -O1 -g -gz=zlib -o "$T/big" "$T/big.c" "$T/unused.c" ||
	skip_all "cannot build with compressed debug sections (-gz=zlib)"
readelf -SW "$T/big" | grep -E ' \.debug_info .* C ' >/dev/null ||
	skip_all "the compiler did not compress .debug_info"

bid=$(readelf -n "$T/big" | awk '/Build ID/ { print $3 }')
[ -n "$bid" ] || skip_all "the compiler gave the program no build-id"

# inode, change time and size of the image of big stored in directory $1
stored() {
	local f
	f=$(ls "$1/$bid"-*.dwimg 2>/dev/null)
	[ "$(echo "$f" | grep -c .)" = 1 ] || { echo "none"; return; }
	stat -c '%i %Z %s' "$f"
}

# counts FILE: "READ WRITTEN FAILED" of --stats-json FILE's dwarf_cache
counts() {
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))["dwarf_cache"]
print(d["read"], d["written"], d["write_failed"])' "$1"
}

# --- symbolize: stored by the first run, read by the second ---
xdg=$T/xdg
cmp=$TOP/tests/tools/a2l_compare.py
check "first run (stores): inline chains equal addr2line's" \
	env XDG_CACHE_HOME="$xdg" python3 "$cmp" "$RESTACK" "$T/big" - 1500
first=$(stored "$xdg/restack/dwarf")
[ "$first" != none ] && ok "one image stored under \$XDG_CACHE_HOME" ||
	fail "one image stored under \$XDG_CACHE_HOME" "$(ls -laR "$xdg" 2>&1)"
check "second run (reads): inline chains equal addr2line's" \
	env XDG_CACHE_HOME="$xdg" python3 "$cmp" "$RESTACK" "$T/big" - 1500 7
is "$(stored "$xdg/restack/dwarf")" "$first" "the second run did not rewrite it"

# --- conversions of a capture ---
need_perf
record -e cpu-clock -F 2000 --call-graph dwarf -o "$T/big.data" \
	-- "$T/big" 60000 >/dev/null || skip_all "perf record failed"
# the counts below take the first run to store everything: perf's copy of
# kallsyms, written as the recording ended, is indexed only 2 s later
sleep 2

restack_clean convert --no-dwarf-cache "$T/big.data" -o "$T/none.folded"
[ ! -e "$T/home/.cache" ] && ok "--no-dwarf-cache writes nothing" ||
	fail "--no-dwarf-cache writes nothing" "$(ls -laR "$T/home/.cache")"
grep -E '^big;.*;fn[0-9]+;in[0-9]+ [0-9]+$' "$T/none.folded" >/dev/null &&
	ok "the capture has inlined frames" ||
	fail "the capture has inlined frames" "$(head -n 5 "$T/none.folded")"

dc=$T/dc
restack_clean convert -j1 --dwarf-cache "$dc" --stats-json "$T/w.json" \
	"$T/big.data" -o "$T/w.folded"
w=$(counts "$T/w.json")
case $w in "0 "[1-9]*" 0") ok "first conversion stores the image" ;;
*) fail "first conversion stores the image" "read, written, failed: $w" ;; esac
same_file "$T/none.folded" "$T/w.folded" "storing changes no output byte"
for j in 1 2; do
	restack_clean convert -j$j --dwarf-cache "$dc" \
		--stats-json "$T/r$j.json" "$T/big.data" -o "$T/r$j.folded"
	r=$(counts "$T/r$j.json")
	case $r in [1-9]*" 0 0") ok "-j$j reads the stored files" ;;
	*) fail "-j$j reads the stored files" "read, written, failed: $r" ;; esac
	same_file "$T/none.folded" "$T/r$j.folded" \
		"-j$j from the stored files: the same bytes"
done

# --- addr2line's function tables (unwind/a2l_index.c) ---
ix=$(ls "$dc/$bid"-*.a2l 2>/dev/null)
check "the first conversion stored big's function tables" test -s "$ix"
# units: 72 bytes after the 144-byte header and the 16-byte intervals;
# the last field says whether the unit's table is stored
check "... those of the units it looked addresses up in, not the others" \
	python3 -c '
import struct, sys
b = open(sys.argv[1], "rb").read()
nr_ivl, nr_units = struct.unpack_from("<QQ", b, 88)
units = [struct.unpack_from("<6Qq2Q", b, 144 + 16 * nr_ivl + 72 * i)
         for i in range(nr_units)]
built = sorted((u[8], u[1]) for u in units)    # (stored, functions)
print("version", struct.unpack_from("<I", b, 8)[0], "units", built)
# big.c (600 functions and their inlined helpers) stored, unused.c not
assert built[0] == (0, 0) and built[-1][0] == 1 and built[-1][1] >= 1200' \
	"$ix"
# without the image: the tables alone name the inline frames
mv "$dc/$bid"-*.dwimg "$T/img.saved"
restack_clean convert --dwarf-cache "$dc" --stats-json "$T/ix1.json" \
	"$T/big.data" -o "$T/ix1.folded"
is "$(counts "$T/ix1.json" | cut -d' ' -f2-)" "0 0" \
	"the tables alone: no image built or stored"
same_file "$T/none.folded" "$T/ix1.folded" "the tables alone: the same bytes"
mv "$T/img.saved" "$(echo "$ix" | sed 's/\.a2l$/.dwimg/')"
# cut_file FILE WHAT WRITTEN: FILE cut in half is not used; the next
# conversion writes WRITTEN files (FILE again among them), fails none,
# and gives the same bytes.
cut_file() {
	local f=$1 what=$2 written=$3 size
	size=$(stat -c %s "$f")
	truncate -s $((size / 2)) "$f"
	restack_clean convert --dwarf-cache "$dc" --stats-json "$T/cut.json" \
		"$T/big.data" -o "$T/cut.folded"
	is "$(counts "$T/cut.json" | cut -d' ' -f2-)" "$written 0" \
		"$what: not read, stored again"
	same_file "$T/none.folded" "$T/cut.folded" "$what: the same bytes"
	is "$(stat -c %s "$f")" "$size" "$what: the stored file is whole again"
}
cut_file "$ix" "a cut index" 1
# units whose functions lie outside the file: libdw's tables instead
python3 - "$ix" <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], 'rb').read())
nr_ivl, nr_units = struct.unpack_from('<QQ', b, 88)
for i in range(nr_units):
    struct.pack_into('<Q', b, 144 + 16 * nr_ivl + 72 * i, 1 << 40)
open(sys.argv[1], 'wb').write(b)
PY
restack_clean convert --dwarf-cache "$dc" "$T/big.data" -o "$T/ix3.folded"
same_file "$T/none.folded" "$T/ix3.folded" \
	"an index with damaged units: libdw's tables, the same bytes"
rm -f "$ix"

# the default directory: ~/.cache/restack/dwarf (HOME=$T/home)
restack_clean convert "$T/big.data" -o "$T/def.folded"
[ "$(stored "$T/home/.cache/restack/dwarf")" != none ] &&
	ok "default directory ~/.cache/restack/dwarf" ||
	fail "default directory ~/.cache/restack/dwarf" "$(ls -laR "$T/home")"
same_file "$T/none.folded" "$T/def.folded" "default cache: the same bytes"

# --- damaged files are not used ---
f=$(ls "$dc/$bid"-*.dwimg)
size=$(stat -c %s "$f")
# the last byte, of the tail's hash, flipped (writing 0xff changed
# nothing when it already was: 1 build in 256)
last=$(od -An -tu1 -j $((size - 1)) -N1 "$f" | tr -d ' ')
printf "\\$(printf %03o $((last ^ 255)))" |
	dd of="$f" bs=1 seek=$((size - 1)) conv=notrunc 2>/dev/null
# (big's function tables are removed first, or nothing would read the
# image: the tables and the image are stored again)
rm -f "$dc/$bid"-*.a2l
restack_clean convert --dwarf-cache "$dc" --stats-json "$T/bad1.json" \
	"$T/big.data" -o "$T/bad1.folded"
is "$(counts "$T/bad1.json" | cut -d' ' -f2-)" "2 0" \
	"a changed trailer: not read, stored again"
same_file "$T/none.folded" "$T/bad1.folded" "a changed trailer: the same bytes"
rm -f "$dc/$bid"-*.a2l   # (as above: else nothing reads the image)
cut_file "$f" "a cut file" 2

# --- a cache that cannot be written ---
: >"$T/afile"
restack_clean convert --dwarf-cache "$T/afile/sub" \
	--stats-json "$T/ro.json" "$T/big.data" -o "$T/ro.folded"
is "$?" 0 "an unwritable cache: exit status 0"
ro=$(counts "$T/ro.json")
case $ro in
"0 0 "[1-9]*) ok "an unwritable cache: failed stores counted" ;;
*) fail "an unwritable cache: failed stores counted" \
	"read, written, failed: $ro" ;;
esac
same_file "$T/none.folded" "$T/ro.folded" "an unwritable cache: the same bytes"

# --- kernel symbols ---
record -e cpu-clock -F 2000 --call-graph dwarf -o "$T/k.data" \
	-- dd if=/dev/zero of=/dev/null bs=64k count=40000 ||
	fail "perf record of dd"
restack_clean convert --no-dwarf-cache "$T/k.data" -o "$T/k-none.folded"
restack_clean stats "$T/k.data" >"$T/k.stats" 2>&1
check "dd's capture names kernel frames from perf's copy of kallsyms" \
	grep -q "^kernel symbols  *$T/home/.debug/.*/kallsyms$" "$T/k.stats"
# perf wrote its copy of kallsyms as the recording ended: files changed
# in the last 2 s are not indexed (ksyms.h; tests/unit/test_ksyms.c)
sleep 2
kc=$T/kc
restack_clean convert --dwarf-cache "$kc" --stats-json "$T/k1.json" \
	"$T/k.data" -o "$T/k1.folded"
check "the first conversion stores a kernel symbol index" \
	bash -c "ls '$kc'/kallsyms-*.ksyms"
restack_clean convert --dwarf-cache "$kc" --stats-json "$T/k2.json" \
	"$T/k.data" -o "$T/k2.folded"
k1=$(counts "$T/k1.json")
k2=$(counts "$T/k2.json")
case "$k1/$k2" in
"0 "[1-9]*" 0/"[1-9]*" 0 0") ok "stored by the first, read by the second" ;;
*) fail "stored by the first, read by the second" \
	"read, written, failed: $k1, then $k2" ;;
esac
same_file "$T/k-none.folded" "$T/k1.folded" "storing the index: the same bytes"
same_file "$T/k-none.folded" "$T/k2.folded" "from the index: the same bytes"
check "kernel frames are named" grep -q 'entry_SYSCALL_64' "$T/k2.folded"

done_testing
