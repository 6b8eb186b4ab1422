# record.sh - restack info/dump on captures perf records here, in each
# mode perf writes (file, pipe, -z, --buildid-mmap, several events and a
# tracepoint, -g and --call-graph dwarf, system-wide), checked against
# perf report -D and perf script as oracles.  Skips when perf cannot record.
. "$(dirname "$0")/lib.sh"

need_perf
build_prog

# info_from_stdin FILE LABEL: `restack info - < FILE` equals `restack info
# FILE` apart from the file name and, for pipe input, the size line.
info_from_stdin() {
	local f=$1 label=$2
	"$RESTACK" info "$f" | sed '1d; /^size /d' >"$T/info-file.txt"
	if "$RESTACK" info - <"$f" >"$T/info-stdin.raw"; then
		sed '1d; /^size /d' "$T/info-stdin.raw" >"$T/info-stdin.txt"
		same_file "$T/info-file.txt" "$T/info-stdin.txt" \
			"$label: restack info - < file equals restack info file"
	else
		fail "$label: restack info - < file succeeds"
	fi
	if cat "$f" | "$RESTACK" info - >"$T/info-pipe.raw" 2>"$T/info-pipe.err"; then
		sed '1d; /^size /d' "$T/info-pipe.raw" >"$T/info-pipe.txt"
		same_file "$T/info-file.txt" "$T/info-pipe.txt" \
			"$label: restack info - from a pipe equals restack info file"
	elif grep -q 'pipe mode' "$T/info-pipe.err" &&
	     ! "$RESTACK" info "$f" | grep -q 'pipe mode'; then
		ok "$label: a file-mode capture on a pipe is refused with a hint"
	else
		fail "$label: restack info - from a pipe" "$(cat "$T/info-pipe.err")"
	fi
}

# capture NAME PERF-RECORD-ARGS...: records $T/NAME.data (file mode) and
# compares; pipe-mode captures use capture_pipe.
capture() {
	local name=$1
	shift
	record -o "$name.data" "$@" >/dev/null
	case $? in
	0) ;;
	77) skip "$name" "perf cannot record this: $(head -n 1 "$T/record.err")"; return 1 ;;
	*) fail "$name: perf record $*"; return 1 ;;
	esac
	compare_with_perf "$T/$name.data" "$name"
}

capture_pipe() {
	local name=$1
	shift
	record -o - "$@" >"$T/$name.data"
	case $? in
	0) ;;
	77) skip "$name" "perf cannot record this: $(head -n 1 "$T/record.err")"; return 1 ;;
	*) fail "$name: perf record -o - $*"; return 1 ;;
	esac
	compare_with_perf "$T/$name.data" "$name"
}

# build-ids restack lists (from the feature or MMAP2) against perf's.
buildids_match() {
	local f=$1 label=$2
	"$RESTACK" info "$f" | awk '/^build-ids/ { b = 1; next } b && /^  / { print $1, $2 }' |
		sort >"$T/rb.txt"
	perf_clean buildid-list -i "$f" 2>/dev/null | awk 'NF == 2' | sort >"$T/pb.txt"
	# Without a build_id feature perf takes the kernel's from this machine.
	if ! "$RESTACK" info "$f" | grep -q '^features.* build_id'; then
		grep -v ' \[kernel.kallsyms\]$' "$T/pb.txt" >"$T/pb2.txt"
		mv "$T/pb2.txt" "$T/pb.txt"
	fi
	if [ ! -s "$T/pb.txt" ]; then
		skip "$label: build-ids equal perf buildid-list's" "perf lists none"
		return
	fi
	# perf lists only DSOs with hits; restack lists every build-id it saw.
	if comm -23 "$T/pb.txt" "$T/rb.txt" | grep -q .; then
		fail "$label: every build-id perf buildid-list prints is in restack info" \
			"$(comm -23 "$T/pb.txt" "$T/rb.txt")"
	else
		ok "$label: every build-id perf buildid-list prints is in restack info"
	fi
}

W="-e cpu-clock -F 2000"

if capture file-dwarf $W --call-graph dwarf,2048 -- ./prog 600; then
	info_from_stdin "$T/file-dwarf.data" file-dwarf
	buildids_match "$T/file-dwarf.data" file-dwarf
	"$RESTACK" info "$T/file-dwarf.data" >"$T/i.txt"
	check "file-dwarf: info names the workload's build-id" \
		grep -q " $T/prog\$" "$T/i.txt"
	check "file-dwarf: info shows the dwarf sample_type" \
		grep -q 'sample_type=IP|TID|TIME|ADDR|CALLCHAIN|PERIOD|REGS_USER|STACK_USER|DATA_SRC regs_user=0xff0fff stack_user=2048' "$T/i.txt"
fi
capture file-g $W -g -- ./prog 600
if capture_pipe pipe-g $W -g -- ./prog 600; then
	info_from_stdin "$T/pipe-g.data" pipe-g
fi
if capture_pipe pipe-dwarf $W --call-graph dwarf,1024 -- ./prog 600; then
	info_from_stdin "$T/pipe-dwarf.data" pipe-dwarf
fi

# A real pipe: perf writes, restack reads as it goes; tee keeps a copy
# for the oracle.
(cd "$T" && perf_clean record -q $W -g -o - -- ./prog 600 2>/dev/null |
	tee "$T/live.data" | "$RESTACK" info - >"$T/live.info")
if [ -s "$T/live.data" ]; then
	"$RESTACK" info "$T/live.data" | sed '1d; /^size /d' >"$T/live-file.info"
	sed 1d "$T/live.info" >"$T/live-stdin.info"
	same_file "$T/live-file.info" "$T/live-stdin.info" \
		"live pipe: restack info reading perf's pipe equals reading its copy"
	compare_with_perf "$T/live.data" "live pipe"
else
	fail "live pipe: perf record -o - | restack info -"
fi

if capture file-z -z $W --call-graph dwarf,1024 -- ./prog 600; then
	check "file-z: info reports zstd compression" \
		grep -q '^compression *zstd' <("$RESTACK" info "$T/file-z.data")
	check "file-z: the capture holds COMPRESSED records" \
		grep -q '^  COMPRESSED [1-9]' <("$RESTACK" info "$T/file-z.data")
fi
if capture_pipe pipe-z -z $W -g -- ./prog 600; then
	info_from_stdin "$T/pipe-z.data" pipe-z
fi
if capture file-bid --buildid-mmap $W -g -- ./prog 600; then
	buildids_match "$T/file-bid.data" file-bid
	check "file-bid: the workload's build-id comes from MMAP2" \
		grep -q " $T/prog (mmap2)\$" <("$RESTACK" info "$T/file-bid.data")
fi
capture multi-sw -e cpu-clock -e task-clock -e page-faults -F 2000 -g -- ./prog 600
if capture file-tp -e cpu-clock -e sched:sched_switch -F 2000 -g -- ./prog 600; then
	check "file-tp: info lists the tracing_data feature" \
		grep -q '^features.* tracing_data' <("$RESTACK" info "$T/file-tp.data")
fi
capture_pipe pipe-tp -e cpu-clock -e sched:sched_switch -F 2000 --call-graph dwarf,512 -- ./prog 600
capture shell -e cpu-clock -F 2000 -g -- sh -c 'ls -R /usr/share/doc | wc -l'
capture system-wide -a -e cpu-clock -F 1000 -g -- sleep 0.3

# A pipe-mode capture kept in a file: its kernel is named from the
# metadata its records bring (hostname, release), in the ordered outputs'
# first pass too (it named none: every kernel frame [unknown]), as the
# same bytes on standard input are.
if capture_pipe pipe-kernel -e cpu-clock -F 4000 --call-graph dwarf -- \
	dd if=/dev/zero of=/dev/null bs=4k count=100000; then
	for fmt in script folded; do
		"$RESTACK" convert -q --to $fmt "$T/pipe-kernel.data" \
			-o "$T/pk-file.$fmt"
		"$RESTACK" convert -q --to $fmt - -o "$T/pk-stdin.$fmt" \
			<"$T/pipe-kernel.data"
		same_file "$T/pk-stdin.$fmt" "$T/pk-file.$fmt" \
			"pipe-kernel: --to $fmt of the file equals standard input's"
	done
	if grep -q 'kernel$' "$T/pk-file.script"; then
		check "pipe-kernel: its kernel frames are named" \
			bash -c '! grep -q "^.* \[unknown\] (\[kernel" "$1"' - \
			"$T/pk-file.script"
	fi
fi

done_testing
