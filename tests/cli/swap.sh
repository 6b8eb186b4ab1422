# swap.sh - byte-swapped perf.data: tests/tools/perfswap.py rewrites
# little-endian captures as big-endian ones; perf 6.1 reads a swapped
# file-mode file exactly like the original (report -D counts, the whole
# perf script output), and restack info and dump of the swapped file
# must equal those of the original but for the byte-order line.
#
# perf 6.1 cannot read swapped pipe-mode streams (it does not swap the
# feat_id of HEADER_FEATURE records: "wrong feature ID"), so pipe mode is
# compared restack to restack only.  perfswap.py recompresses -z data, so
# for those the compressed sizes, the data size and the record offsets
# differ and are left out of the comparison.
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null 2>&1 || skip_all "python3 is not installed"
SWAP="python3 $TOP/tests/tools/perfswap.py"

# norm_info / norm_dump: what must not change when bytes are swapped
# (with compressed records: nor when the data is recompressed).
norm_info() {
	if [ "$z" = 1 ]; then
		sed '1,2d; /^size /d; /^data section /d; /^decompressed /d'
	else
		sed '1,2d'
	fi
}
norm_dump() {
	if [ "$z" = 1 ]; then
		grep -v ' COMPRESSED2\? ' | cut -d' ' -f2-
	else
		cat
	fi
}

# same_decoding ORIG SWAPPED LABEL
same_decoding() {
	z=0
	"$RESTACK" info "$1" | grep -q '^  COMPRESSED2\? ' && z=1
	"$RESTACK" info "$1" | norm_info >"$T/a.info"
	"$RESTACK" info "$2" | norm_info >"$T/b.info"
	same_file "$T/a.info" "$T/b.info" "$3: restack info of the swapped file equals the original's"
	check "$3: restack info says the swapped file is in the other byte order" \
		grep -q '^format .*other byte order' <("$RESTACK" info "$2")
	"$RESTACK" dump "$1" | norm_dump >"$T/a.dump"
	"$RESTACK" dump "$2" | norm_dump >"$T/b.dump"
	same_file "$T/a.dump" "$T/b.dump" "$3: restack dump of the swapped file equals the original's"
	"$RESTACK" dump --file-order "$1" | norm_dump >"$T/a.dump"
	"$RESTACK" dump --file-order "$2" | norm_dump >"$T/b.dump"
	same_file "$T/a.dump" "$T/b.dump" "$3: restack dump --file-order equal too"
	# unwound from the swapped stack copies, the same stacks, kernel
	# frames included
	"$RESTACK" convert -q --offline --to script "$1" \
		-o "$T/a.script" 2>/dev/null
	"$RESTACK" convert -q --offline --to script "$2" \
		-o "$T/b.script" 2>/dev/null
	same_file "$T/a.script" "$T/b.script" "$3: restack's stacks of the swapped file equal the original's"
}

# perf_reads_swapped ORIG SWAPPED LABEL
perf_reads_swapped() {
	perf_counts "$1" >"$T/a.pc"
	perf_counts "$2" >"$T/b.pc"
	if [ ! -s "$T/a.pc" ]; then
		fail "$3: perf report -D reads the original"
		return
	fi
	same_file "$T/a.pc" "$T/b.pc" "$3: perf report -D counts the swapped file like the original"
	perf_clean script -i "$1" >"$T/a.script" 2>/dev/null
	perf_clean script -i "$2" >"$T/b.script" 2>/dev/null
	if [ -s "$T/a.script" ] && cmp -s "$T/a.script" "$T/b.script"; then
		ok "$3: perf script prints the swapped file exactly like the original"
	else
		fail "$3: perf script prints the swapped file exactly like the original" \
			"$(diff "$T/a.script" "$T/b.script" | head -n 20)"
	fi
}

# The committed fixtures (no perf needed).
cd "$TESTDATA/perf" || exit 1
if $SWAP file-dwarf.data "$T/be.data"; then
	same_file be-dwarf.data "$T/be.data" "fixture: perfswap.py reproduces be-dwarf.data"
else
	fail "fixture: perfswap.py converts file-dwarf.data"
fi
for f in file-dwarf pipe-g tp-multi z-dwarf zpipe-bid; do
	if $SWAP "$f.data" "$T/$f.be.data"; then
		same_decoding "$f.data" "$T/$f.be.data" "fixture $f"
	else
		fail "fixture $f: perfswap.py converts it"
	fi
done
cd "$T" || exit 1

# Fresh captures, with perf as the oracle.
if ! command -v perf >/dev/null 2>&1; then
	skip "fresh captures" "perf is not installed"
	done_testing
fi
need_perf
build_prog
perf_reads_swapped "$TESTDATA/perf/file-dwarf.data" "$TESTDATA/perf/be-dwarf.data" "fixture be-dwarf"
perf_reads_swapped "$TESTDATA/perf/z-dwarf.data" "$T/z-dwarf.be.data" "fixture z-dwarf"

swap_capture() { # NAME MODE ARGS...
	local name=$1 mode=$2 rc
	shift 2
	if [ "$mode" = pipe ]; then
		record -o - "$@" >"$T/$name.data"
	else
		record -o "$name.data" "$@" >/dev/null
	fi
	rc=$?
	if [ $rc -eq 77 ]; then
		skip "$name" "perf cannot record this: $(head -n 1 "$T/record.err")"
		return
	elif [ $rc -ne 0 ]; then
		fail "$name: perf record $*"
		return
	fi
	if ! $SWAP "$T/$name.data" "$T/$name.be.data" 2>"$T/swap.err"; then
		fail "$name: perfswap.py converts it" "$(cat "$T/swap.err")"
		return
	fi
	same_decoding "$T/$name.data" "$T/$name.be.data" "$name"
	[ "$mode" = file ] && perf_reads_swapped "$T/$name.data" "$T/$name.be.data" "$name"
}

W="-e cpu-clock -F 2000"
swap_capture dwarf file $W --call-graph dwarf,2048 -- ./prog 600
swap_capture tp file -e cpu-clock -e sched:sched_switch -F 2000 -g -- ./prog 600
swap_capture bid file --buildid-mmap $W -g -- ./prog 600
swap_capture multi file -e cpu-clock -e task-clock -e page-faults -F 2000 --call-graph dwarf,512 -- ./prog 600
swap_capture system file -a -e cpu-clock -F 1000 -g -- sleep 0.2
swap_capture file-z file -z $W --call-graph dwarf,1024 -- ./prog 600
swap_capture pipe-dwarf pipe $W --call-graph dwarf,1024 -- ./prog 600
swap_capture pipe-z pipe -z $W -g -- ./prog 600
swap_capture pipe-tp pipe -e cpu-clock -e sched:sched_switch -F 2000 -g -- ./prog 600

done_testing
