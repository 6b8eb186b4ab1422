# truncate.sh - every committed fixture cut at every record boundary and
# at a few places inside records, headers and feature sections.
#
# A file-mode capture says how long its data and features are, so any cut
# must fail: exit 2 and one line "restack: FILE+0xOFF: ..." whose offset
# lies inside the cut file.  A pipe-mode stream has no length: cut exactly
# at a record boundary it is indistinguishable from a complete stream and
# may read fine (exit 0) -- unless the cut leaves a compressed block
# holding part of a record -- but a cut inside a record must fail as
# above.  Nothing may crash (make check-asan runs this under ASan/UBSan).
. "$(dirname "$0")/../cli/lib.sh"

command -v python3 >/dev/null 2>&1 || skip_all "python3 is not installed"
CORRUPT=$TOP/tests/corrupt

# run_cut SRC LEN: cuts SRC to LEN bytes; sets rc and msg_ok (1 when stderr
# is one well-formed line naming an offset <= LEN).
run_cut() {
	local src=$1 len=$2 line off
	local name=$T/cut.data
	head -c "$len" "$src" >"$T/cut.data"
	if [ "$feed" = pipe ]; then
		name=-
		cat "$T/cut.data" | "$RESTACK" "$cmd" - >/dev/null 2>"$T/err"
		rc=${PIPESTATUS[1]}
	else
		"$RESTACK" "$cmd" "$T/cut.data" >/dev/null 2>"$T/err"
		rc=$?
	fi
	msg_ok=0
	[ "$(wc -l <"$T/err")" -eq 1 ] || return
	line=$(cat "$T/err")
	case $line in "restack: $name+0x"*": "?*) ;; *) return ;; esac
	off=${line#"restack: $name+0x"}
	off=$((16#${off%%:*}))
	[ "$off" -le "$len" ] && msg_ok=1
}

# cuts FIXTURE KIND LIST: runs each cut, collects failures; KIND is
# "fail" (must exit 2 with a good message) or "any" (exit 0, or 2 with a
# good message).
cuts() {
	local src=$1 kind=$2 n=0 bad=() len
	shift 2
	for len in "$@"; do
		[ "$len" -ge "$size" ] && continue
		n=$((n + 1))
		run_cut "$src" "$len"
		if [ $rc -eq 2 ] && [ $msg_ok -eq 1 ]; then
			continue
		fi
		if [ "$kind" = any ] && [ $rc -eq 0 ]; then
			continue
		fi
		bad+=("cut at $len: exit $rc: $(head -c 300 "$T/err")")
	done
	ncuts=$n
	bad_cuts=("${bad[@]}")
}

report() { # LABEL
	if [ ${#bad_cuts[@]} -eq 0 ]; then
		ok "$1 ($ncuts cuts)"
	else
		fail "$1 (${#bad_cuts[@]} of $ncuts cuts wrong)" "${bad_cuts[@]:0:10}"
	fi
}

feed=file
for f in file-dwarf be-dwarf z-dwarf tp-multi pipe-g zpipe-bid; do
	src=$TESTDATA/perf/$f.data
	o=$f
	[ "$f" = be-dwarf ] && o=file-dwarf   # same layout, swapped bytes
	unset data table
	eval "$(python3 "$CORRUPT/offsets.py" "$TESTDATA/perf/$o.data" |
		grep -E '^(recs|rec_sizes|size|data|table|feat_[0-9]+)=')"
	read -ra R <<<"$recs"
	read -ra S <<<"$rec_sizes"
	# dump exercises the formatting of every record before the cut
	for cmd in info dump; do
		boundary=() inside=()
		for i in "${!R[@]}"; do
			boundary+=("${R[$i]}")
			inside+=($((R[i] + 1)) $((R[i] + 7)))
			[ "${S[$i]}" -gt 9 ] && inside+=($((R[i] + 8 + (S[i] - 8) / 2)))
			inside+=($((R[i] + S[i] - 1)))
		done
		if [ -n "${data:-}" ]; then
			# file mode: header, attrs, feature table and sections too
			head_cuts=(0 1 7 8 15 16 17 40 71 72 103 104 $((data - 1)))
			feat_cuts=("$table" $((table + 8)))
			for v in $(compgen -v feat_); do
				feat_cuts+=("${!v}" $((${!v} + 3)))
			done
			cuts "$src" fail "${head_cuts[@]}"
			report "$f: $cmd fails on cuts in the header and attrs"
			cuts "$src" fail "${boundary[@]}"
			report "$f: $cmd fails on cuts at record boundaries"
			cuts "$src" fail "${inside[@]}"
			report "$f: $cmd fails on cuts inside records"
			cuts "$src" fail "${feat_cuts[@]}"
			report "$f: $cmd fails on cuts in the feature table and sections"
		else
			cuts "$src" fail 0 1 7 8 15
			report "$f: $cmd fails on cuts in the pipe header"
			cuts "$src" any 16 "${boundary[@]}"
			report "$f: $cmd reads a stream cut at a record boundary, or fails cleanly"
			cuts "$src" fail "${inside[@]}"
			report "$f: $cmd fails on cuts inside records"
			feed=pipe
			cuts "$src" any 16 "${boundary[@]}"
			report "$f: $cmd - on a pipe reads a stream cut at a record boundary, or fails cleanly"
			cuts "$src" fail "${inside[@]}"
			report "$f: $cmd - on a pipe fails on cuts inside records"
			feed=file
		fi
		# only the small pipe fixture runs dump on every cut
		[ "$cmd" = info ] && [ "$f" != file-dwarf ] && [ "$f" != pipe-g ] && break
	done
	for v in $(compgen -v feat_); do unset "$v"; done
done

done_testing
