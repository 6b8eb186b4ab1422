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
# least 99% of all samples reach their root.  A capture whose
# architecture restack has no tables for is refused, and a file of
# another architecture is never used for a module.
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
clock - --pac
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

# prog without CFI (the PT_GNU_EH_FRAME header and the .eh_frame names
# gone, in a build-id directory searched before the archive): the x29
# chain, with x30 for the sampled leaf, gives the CFI's stacks
mkdir -p "$T/x" "$T/nocfi"
tar xJf "$A/cache.tar.xz" -C "$T/x" tmp/restack-arm64/prog
python3 - "$T"/x/tmp/restack-arm64/prog/*/elf "$T/nocfi" <<'PY'
import os, struct, sys
src, out = sys.argv[1:]
bid = os.path.basename(os.path.dirname(src))
d = bytearray(open(src, 'rb').read())
phoff, = struct.unpack_from('<Q', d, 0x20)
phentsize, phnum = struct.unpack_from('<HH', d, 0x36)
for i in range(phnum):
    if struct.unpack_from('<I', d, phoff + i * phentsize)[0] == 0x6474e550:
        struct.pack_into('<I', d, phoff + i * phentsize, 0)   # PT_NULL
for name in (b'.eh_frame_hdr\0', b'.eh_frame\0', b'.debug_frame\0'):
    i = d.find(name)
    if i >= 0:
        d[i + 1] = ord('X')
os.makedirs('%s/.build-id/%s' % (out, bid[:2]))
open('%s/.build-id/%s/%s' % (out, bid[:2], bid[2:]), 'wb').write(d)
PY
# shellcheck disable=SC2086
restack_clean convert "$T/prog.data" --buildid-dir "$T/nocfi" $arch \
	--to script -o "$T/nocfi.script" 2>/dev/null
check "prog without CFI: frame-pointer steps" \
	grep -q ' main (/tmp/restack-arm64/prog) fp$' "$T/nocfi.script"
check "prog without CFI: the x29 chain gives the CFI's stacks" \
	python3 "$tools/compare_stacks.py" --root main "$T/prog.script" \
	"$T/nocfi.script" 100

# the vdso (no CFI in arm64's) from the capture's build-id cache: its
# caller in x30, glibc's clock_gettime, then the x29 chain
# shellcheck disable=SC2086
restack_clean convert "$T/clock.data" $arch -o "$T/clock.folded" 2>/dev/null
set -- $(awk '/;__kernel_clock_gettime [0-9]+$/ { n += $NF
	if ($0 ~ /^clock;_start;__libc_start_main;[^;]*;main;tick;clock_gettime;__kernel_clock_gettime [0-9]+$/) g += $NF }
	END { print g + 0, n + 0 }' "$T/clock.folded")
check "[vdso] samples ($1 of $2) reach _start through clock_gettime" \
	test "$2" -ge 50 -a "$1" -eq "$2"

# frames are named as the guest's perf names them, kernel ones included
check "kernel frames named from the archive's kallsyms" \
	grep -q ' el0t_64_sync (\[kernel.kallsyms\]) kernel$' "$T/threads.script"
check "PLT entries named name@plt, not by mapping symbols" \
	grep -q ' labs@plt (/tmp/restack-arm64/plt) sample$' "$T/plt.script"
check "restack info shows the arch" \
	grep -qx 'arch            aarch64' <("$RESTACK" info "$T/prog.data")

# another architecture's file at the recorded path (this machine's
# /usr/bin/python3.11) is never used for the capture's module, even
# unverified, when the capture has no build-ids
if [ -e /usr/bin/python3.11 ] && [ "$(uname -m)" != aarch64 ]; then
	python3 "$tools/drop_feature.py" "$T/python3.data" "$T/nobid.data" 2
	restack_clean stats "$T/nobid.data" >"$T/host.stats" 2>/dev/null
	if grep -E '^  (ok|unverified) .*/usr/bin/python3.11 ' "$T/host.stats" \
		>"$T/host.bad"; then
		fail "this machine's python3.11 is not used for the arm64 one" \
			"$(cat "$T/host.bad")"
	else
		ok "this machine's python3.11 is not used for the arm64 one"
	fi
	check "the module is reported as a mismatch of architecture" \
		grep -qE '^  mismatch .* /usr/bin/python3.11 \(only files with another build-id or architecture\)' \
		"$T/host.stats"
else
	skip "this machine's python3.11 is not used" "no x86 python3.11 here"
fi

# a capture of an architecture without tables: refused, not unwound
python3 - "$T/prog.data" "$T/riscv.data" <<'PY'
import sys
d = open(sys.argv[1], 'rb').read()
i = d.rfind(b'aarch64\0')
open(sys.argv[2], 'wb').write(d[:i] + b'riscv64\0' + d[i + 8:])
PY
restack_clean convert "$T/riscv.data" -o "$T/riscv.folded" 2>"$T/riscv.err"
is "$?" 2 "a riscv64 capture: exit 2"
check "a riscv64 capture: the error names the architecture" \
	grep -q "riscv.data: recorded on riscv64, whose registers restack cannot unwind" \
	"$T/riscv.err"

done_testing
