#!/bin/bash
# rust.sh - Rust programs are named as perf script names them: perf 6.1
# demangles Rust v0 ("_R...") and legacy ("_ZN...17h<hash>E", the hash
# dropped) names with libiberty, so does restack, in every output and in
# `restack symbolize`.
#
# testdata/src/rustwork.rs (a hash map, sorts of integers and strings
# through generic code, a trait method on a thread) is built twice with
# the installed rustc, with -C symbol-mangling-version=v0 and with the
# default, legacy (rustc 1.95 takes "=legacy" only with -Z
# unstable-options; Rust's own std is v0 in both), recorded with
# --call-graph dwarf and compared with perf script frame by frame
# (tests/tools/compare_names.py).
. "$(dirname "$0")/lib.sh"

need_perf
command -v python3 >/dev/null || skip_all "python3 is needed to compare"
command -v readelf >/dev/null || skip_all "binutils readelf is needed"
# rustup installs rustc outside /usr/bin: take the one on the PATH
rustc=$(command -v rustc) || skip_all "rustc is not installed"
tools=$TOP/tests/tools

# v0: "_RNv...", the whole name; legacy: "_ZN" then <len><ident>s then
# the 17-character hash element "17h<16 hex digits>", then "E"
mangled='(^|[^A-Za-z0-9_])_R[0-9]*[NICMXY][A-Za-z0-9_]{6,}|_ZN[0-9A-Za-z_$.]*17h[0-9a-f]{16}E'

for mangling in v0 legacy; do
	prog=$T/rust_$mangling
	flags= own='_ZN8rustwork[0-9A-Za-z_]*17h[0-9a-f]{16}E'
	[ $mangling = v0 ] && flags="-C symbol-mangling-version=v0" \
		own='_R[0-9A-Za-z_]*8rustwork'
	# shellcheck disable=SC2086
	if ! "$rustc" -O -g $flags -o "$prog" "$TESTDATA/src/rustwork.rs" \
		2>"$T/rustc.err"; then
		skip "$mangling" "rustc cannot build rustwork.rs: $(head -n 1 "$T/rustc.err")"
		continue
	fi
	# the checks below can fail: the program's own names are mangled so
	if ! readelf -sW "$prog" | grep -qE "$own"; then
		skip "$mangling" "rustc $flags gave rustwork.rs no $mangling names"
		continue
	fi
	data=$T/$mangling.data
	record -e cpu-clock --call-graph dwarf -o "$data" -- "$prog" >/dev/null
	case $? in
	0) ;;
	77) skip_all "perf cannot record here" ;;
	*) fail "$mangling: perf record"; continue ;;
	esac
	perf_clean script -i "$data" >"$T/$mangling.perf" 2>/dev/null
	check "$mangling: perf script names the program's frames" \
		grep -q '^[[:space:]]*[0-9a-f]* rustwork::main' "$T/$mangling.perf"
	if ! restack_clean convert "$data" --to script -o "$T/$mangling.script" \
		2>"$T/$mangling.err"; then
		fail "$mangling: restack convert --to script" "$(cat "$T/$mangling.err")"
		continue
	fi
	check "$mangling: frame names equal perf script's (>= 99.9%)" \
		python3 "$tools/compare_names.py" "$T/$mangling.perf" \
		"$T/$mangling.script" 99.9
	check "$mangling: restack symbolize names the program's addresses as perf does" \
		python3 "$tools/compare_names.py" --symbolize "$RESTACK" "$prog" \
		"$T/$mangling.perf"
	for ext in script folded pb.gz speedscope.json svg; do
		out=$T/$mangling.$ext
		[ -f "$out" ] || restack_clean convert "$data" -o "$out" 2>/dev/null
		if [ ! -s "$out" ]; then
			fail "$mangling: restack writes $ext"
			continue
		fi
		if [ "$ext" = pb.gz ]; then
			gzip -dc "$out"
		else
			cat "$out"
		fi | grep -aoE "$mangled" >"$T/left" || true
		check "$mangling: no mangled Rust name left in the $ext output" \
			test ! -s "$T/left"
		[ -s "$T/left" ] && sed 's/^/# /' "$T/left" | sort -u | head -n 5
	done
done
done_testing
