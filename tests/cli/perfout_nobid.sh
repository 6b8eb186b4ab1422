# perfout_nobid.sh - `--to perf` on captures without any build-id: the
# BUILD_ID feature is written empty.  Writing it copied from the empty
# buffer's NULL (UBSan: memcpy from NULL, make check-asan aborted).  The
# fixtures without build-ids have some in the output only if their binary
# is found here, so pipe-g.data is also converted without its kernel
# records (attrs and features only: no module, no build-id wherever it
# runs).
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null 2>&1 || skip_all "python3 is not installed"

# NAME: pipe-g.data's records perf writes (types >= 64), not BUILD_ID (67)
python3 - "$TESTDATA/perf/pipe-g.data" "$T/nosamples.data" <<'PY' ||
import struct, sys
d = open(sys.argv[1], "rb").read()
out, pos = bytearray(d[:16]), 16
while pos + 8 <= len(d):
    t, _, size = struct.unpack_from("<IHH", d, pos)
    if size < 8:
        sys.exit("bad record at %d" % pos)
    if t >= 64 and t != 67:
        out += d[pos:pos + size]
    pos += size
open(sys.argv[2], "wb").write(out)
PY
	fail "pipe-g.data without its kernel records"

for f in "$T/nosamples.data" "$TESTDATA/perf/pipe-g.data" \
	"$TESTDATA/perf/z-dwarf.data"; do
	n=$(basename "$f" .data)
	rm -f "$T/out.data"
	check "$n: converts to perf.data" \
		"$RESTACK" convert --to perf "$f" -o "$T/out.data"
	"$RESTACK" info "$T/out.data" >"$T/info" 2>&1
	check "$n: the output reads back, with a BUILD_ID feature" \
		grep -q '^features .*build_id' "$T/info"
	[ "$n" = nosamples ] &&
		check "$n: ... of no build-ids" grep -q '^build-ids 0$' "$T/info"
	check "$n: converts to perf.data, pipe mode" sh -c \
		'"$1" convert --to perf "$2" -o - >"$3"' _ \
		"$RESTACK" "$f" "$T/pipe.data"
done

# a pipe without attrs has no events: no perf.data can hold it
printf 'PERFILE2\020\0\0\0\0\0\0\0\104\0\0\0\0\0\010\0' >"$T/round.data"
"$RESTACK" convert --to perf "$T/round.data" -o "$T/round.out" 2>"$T/err"
is "$? $(grep -c 'no attrs' "$T/err") $(ls "$T" | grep -c '^round.out')" \
	"2 1 0" "a pipe without attrs: exit 2, 'no attrs', no output"

done_testing
