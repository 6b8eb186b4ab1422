#!/bin/bash
# symbolize.sh - restack names frames as perf script does: perf asks
# binutils addr2line for inline chains, so restack's chains (a2l.c) must
# be addr2line's, address for address, on real Debian libraries (with and
# without separate debuginfo, from libdw and from the function tables a
# first run stored) and on binaries built here.
. "$(dirname "$0")/lib.sh"

command -v addr2line >/dev/null || skip_all "binutils addr2line is needed"
command -v readelf >/dev/null || skip_all "binutils readelf is needed"
command -v python3 >/dev/null || skip_all "python3 is needed"
cmp=$TOP/tests/tools/a2l_compare.py
cc=$(command -v cc || command -v gcc) || skip_all "no C compiler"

libc=$(ldd /bin/true | awk '/libc.so/ { print $3 }')
bid=$(readelf -n "$libc" | awk '/Build ID/ { print $3 }')
dbg=/usr/lib/debug/.build-id/${bid:0:2}/${bid:2}.debug
if [ -f "$dbg" ]; then
	check "libc with its debuginfo: chains equal addr2line's" \
		python3 "$cmp" "$RESTACK" "$libc" "$dbg" 3000
	# that run stored addr2line's function tables (unwind/a2l_index.c):
	# the next one names from them, other addresses
	check "libc's function tables stored" \
		test -s "$XDG_CACHE_HOME/restack/dwarf/$bid-$(stat -L -c %s "$dbg").a2l"
	check "libc from the stored tables: chains equal addr2line's" \
		python3 "$cmp" "$RESTACK" "$libc" "$dbg" 3000 11
else
	skip "libc with its debuginfo" "libc6-dbg is not installed"
fi
# addr2line on a file without .symtab uses .dynsym; so does restack.
cp "$libc" "$T/libc-copy.so"
check "libc without debuginfo: names equal addr2line's" \
	python3 "$cmp" "$RESTACK" "$T/libc-copy.so" - 2000
py=$(readlink -f /usr/bin/python3 2>/dev/null)
if [ -n "$py" ] && [ -f "$py" ]; then
	check "python3 (dynsym only): names equal addr2line's" \
		python3 "$cmp" "$RESTACK" "$py" - 2000
fi
"$cc" -O2 -g -o "$T/inline" "$TESTDATA/src/inline.c"
check "inline.c -O2 -g: chains equal addr2line's" \
	python3 "$cmp" "$RESTACK" "$T/inline" - 1000
"$cc" -O2 -g -fPIC -shared -o "$T/libwork.so" "$TESTDATA/src/libwork.c" -lm
"$cc" -O2 -g -o "$T/threads" "$TESTDATA/src/threads.c" -L"$T" -lwork \
	-Wl,-rpath,"$T" -lpthread
check "threads.c -O2 -g: chains equal addr2line's" \
	python3 "$cmp" "$RESTACK" "$T/threads" - 500
"$cc" -O2 -o "$T/nodebug" "$TESTDATA/src/inline.c"
check "a binary with .symtab and no DWARF: names equal addr2line's" \
	python3 "$cmp" "$RESTACK" "$T/nodebug" - 500
strip "$T/nodebug"
check "a stripped binary: names equal addr2line's" \
	python3 "$cmp" "$RESTACK" "$T/nodebug" - 500

# A relative path names the same file (it used to be taken for a mapping
# without a file: "cannot load").
a=$(nm "$T/inline" | awk '$3 == "main" { print $1 }')
"$RESTACK" symbolize "$T/inline" "$a" >"$T/abs.out" 2>&1
(cd "$T" && "$RESTACK" symbolize inline "$a") >"$T/rel.out" 2>&1
same_file "$T/abs.out" "$T/rel.out" "a relative path: as the absolute one"
(cd "$T" && "$RESTACK" symbolize ./inline "$a") >"$T/rel.out" 2>&1
same_file "$T/abs.out" "$T/rel.out" "a ./relative path: as the absolute one"

# Usage and errors.
"$RESTACK" symbolize "$T/does-not-exist" 1000 2>/dev/null
is "$?" 2 "an unreadable file exits 2"
"$RESTACK" symbolize "$T/inline" zz 2>/dev/null
is "$?" 64 "a bad address is a usage error"
done_testing
