#!/bin/bash
# arm64.sh - real arm64 captures unwound here as arm64's own perf did.
#
# testdata/arm64/ holds captures perf 6.1 recorded with --call-graph dwarf
# on arm64 Debian under qemu-system-aarch64 -cpu max (pointer
# authentication on), the guest's perf script output for each, and a
# perf-archive-shaped tarball of the build-id cache they need (made by
# tests/tools/arm64_fixtures.sh).  Where the guest's perf reached the
# root, restack's stacks must be the same; where it did not, restack must
# have perf's frames and may go further (perf stops at return addresses
# signed with PAC: compare_prefix.py --pac for the programs built with
# -mbranch-protection=standard); no frame may have a signed address; at
# least 99% of all samples reach their root.
. "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || skip_all "python3 is needed to compare"
command -v xz >/dev/null || skip_all "xz is needed to read the fixtures"
tools=$TOP/tests/tools
A=$TESTDATA/arm64
arch="--archive $A/cache.tar.xz"

# name  compare_stacks arguments ("-": perf never reaches the root)
#       compare_prefix arguments
fixtures="prog - --pac
prog-nopac . .
threads - --pac
threads-nopac --root=worker --root=worker
deep - --pac
plt - --pac
xz --root=__libc_start_main --root=__libc_start_main
python3 . ."

total=0
rooted=0
while read -r f stacks prefix; do
	xz -dc "$A/$f.data.xz" >"$T/$f.data"
	xz -dc "$A/$f.perf.xz" >"$T/$f.perf"
	# shellcheck disable=SC2086
	if ! restack_clean convert "$T/$f.data" $arch --to script \
		-o "$T/$f.script" 2>"$T/$f.err"; then
		fail "$f: restack convert" "$(cat "$T/$f.err")"
		continue
	fi
	if [ "$stacks" != - ]; then
		[ "$stacks" = . ] && stacks=
		# shellcheck disable=SC2086
		check "$f: stacks equal the guest's perf script where it reached the root" \
			python3 "$tools/compare_stacks.py" ${stacks/=/ } \
			"$T/$f.perf" "$T/$f.script" 99.9
	fi
	[ "$prefix" = . ] && prefix=
	# shellcheck disable=SC2086
	check "$f: perf's frames where it did not, no PAC-signed address" \
		python3 "$tools/compare_prefix.py" ${prefix/=/ } \
		"$T/$f.perf" "$T/$f.script"
	# shellcheck disable=SC2086
	restack_clean stats "$T/$f.data" $arch >"$T/$f.stats" 2>/dev/null
	set -- $(awk '/^  samples / { n = $2 } /^  reached root / { r = $3 }
		      END { print n + 0, r + 0 }' "$T/$f.stats")
	total=$((total + $1))
	rooted=$((rooted + $2))
done <<<"$fixtures"
check "99% of the samples reach the root ($rooted of $total)" \
	test $((rooted * 100)) -ge $((total * 99))

# frames are named as the guest's perf names them, kernel ones included
check "kernel frames named from the archive's kallsyms" \
	grep -q ' el0t_64_sync (\[kernel.kallsyms\]) kernel$' "$T/threads.script"
check "PLT entries named name@plt, not by mapping symbols" \
	grep -q ' labs@plt (/tmp/restack-arm64/plt) sample$' "$T/plt.script"
check "restack info shows the arch" \
	grep -qx 'arch            aarch64' <("$RESTACK" info "$T/prog.data")

done_testing
