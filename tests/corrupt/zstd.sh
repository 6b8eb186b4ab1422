# zstd.sh - hostile COMPRESSED records (tests/tools/mkzbomb.py): a zstd
# bomb whose HEADER_COMPRESSED feature claims a 4 GiB mmap_len, one of
# records of size 0, and COMPRESSED records nested in compressed data.
# Each must end with exit 2 and one line naming the COMPRESSED record's
# offset, read from a file or a pipe, with `info` and `convert`, within
# 5 seconds, in at most 100 MiB, leaving nothing in $TMPDIR.  Before
# decompression went a record at a time, the bombs ran for minutes
# (each 1 MiB step copied all that was inflated so far) towards 2 GiB,
# and the nested file decompressed 4096^3 records.
. "$(dirname "$0")/../cli/lib.sh"

command -v python3 >/dev/null 2>&1 || skip_all "python3 is not installed"
MK="python3 $TOP/tests/tools/mkzbomb.py"
TIMEV=
[ -x /usr/bin/time ] && TIMEV=/usr/bin/time
# sanitizers' shadow memory counts in RSS
case $BUILD in *asan* | *tsan*) MAXRSS_KB=0 ;; *) MAXRSS_KB=102400 ;; esac

$MK bomb "$T/rec.data" 0x08 2047 || fail "mkzbomb.py bomb"
$MK bomb "$T/zero.data" 0 2047 || fail "mkzbomb.py bomb zeros"
$MK nested "$T/nested.data" 3 4096 || fail "mkzbomb.py nested"
$MK nested "$T/nested2.data" 2 2 || fail "mkzbomb.py nested"

# hostile NAME FRAGMENT: info and convert, from the file and from a pipe
hostile() {
	local name=$1 frag=$2 f=$T/$1.data how where rc line t0 t1 rss
	for how in info-file info-pipe convert-file convert-pipe; do
		rm -rf "$T/tmp" "$T/out"
		mkdir -p "$T/tmp" "$T/out"
		where=$f
		case $how in *pipe) where=- ;; esac
		set -- "$RESTACK" "${how%-*}" "$where"
		[ "${how%-*}" = convert ] && set -- "$@" -o "$T/out/x.folded"
		[ -n "$TIMEV" ] && set -- "$TIMEV" -f '%M' -o "$T/rss" "$@"
		t0=$(date +%s%N)
		TMPDIR=$T/tmp timeout 10 "$@" <"$f" >"$T/stdout" 2>"$T/err"
		rc=$?
		t1=$(date +%s%N)
		line=$(head -n 1 "$T/err")
		if [ $rc -eq 2 ] && [ "$(wc -l <"$T/err")" -eq 1 ] &&
		   [ "${line#"restack: $where+0x38: "}" != "$line" ] &&
		   [ "${line#*"$frag"}" != "$line" ]; then
			ok "$name $how: exit 2 at the COMPRESSED record: $frag"
		else
			fail "$name $how: exit 2 at the COMPRESSED record: $frag" \
				"exit $rc" "$(head -n 3 "$T/err")"
		fi
		check "$name $how: within 5 s ($(((t1 - t0) / 1000000)) ms)" \
			test $(((t1 - t0) / 1000000)) -le 5000
		if [ -n "$TIMEV" ] && [ "$MAXRSS_KB" -gt 0 ]; then
			rss=$(tail -n 1 "$T/rss")
			check "$name $how: peak RSS $rss KiB <= 100 MiB" \
				test "$rss" -le "$MAXRSS_KB"
		fi
		is "$(ls -A "$T/tmp" "$T/out" | grep -v ':$' | grep -c .)" 0 \
			"$name $how: nothing left in TMPDIR or the output dir"
	done
}

hostile rec "compressed record decompresses to more than 67108864 bytes"
hostile zero "record of size 0 inside compressed data"
hostile nested "COMPRESSED record inside compressed data"
hostile nested2 "COMPRESSED record inside compressed data"

# one level is no nesting: the records read
$MK nested "$T/flat.data" 1 4096 || fail "mkzbomb.py nested"
check "a COMPRESSED record of 4096 FINISHED_ROUNDs reads" \
	"$RESTACK" info "$T/flat.data"
"$RESTACK" info "$T/flat.data" >"$T/info" 2>&1
check "... all 4096 of them" grep -q '^  FINISHED_ROUND 4096$' "$T/info"

done_testing
