#!/bin/bash
# stackcopy.sh - samples whose stack the kernel did not copy.  perf copies
# the user stack without faulting, so a sample taken while the page at sp
# is not in memory (testdata/src/stackfault.c: a sample in the fault that
# brings a freshly probed stack page in) carries registers and no stack
# bytes.  Such a walk must end "stack not copied", never "bad stack" (the
# CFI was right; the bytes were missing), keep the sampled function, and
# be counted against the copies' sizes as the file holds them
# (tests/tools/stack_copies.py reads them independently of restack).
. "$(dirname "$0")/lib.sh"

need_perf
command -v python3 >/dev/null || skip_all "python3 is needed"
cc=$(command -v cc || command -v gcc) || skip_all "no C compiler"
"$cc" -O2 -g -fomit-frame-pointer -fstack-clash-protection \
	-o "$T/stackfault" "$TESTDATA/src/stackfault.c" ||
	skip_all "cannot build stackfault"
record -e cpu-clock -F 4000 --call-graph dwarf -o "$T/sf.data" \
	-- "$T/stackfault" 1500 || skip_all "perf record failed"

read -r _ full _ short _ empty < <(python3 "$TOP/tests/tools/stack_copies.py" \
	"$T/sf.data")
perf_clean script -F ip -i "$T/sf.data" 2>/dev/null |
	awk 'BEGIN { RS = "" } { u = 0
	     for (i = 1; i <= NF; i++) if ($i !~ /^ffffffff/) u++
	     if (!u) n++ } END { print n + 0 }' >"$T/perf.nouser"
echo "# copies: $full full, $short short, $empty empty;" \
     "perf script shows no user frame for $(cat "$T/perf.nouser") samples"
check "the premise: many samples have an empty stack copy ($empty)" \
	test "$empty" -ge 50

restack_clean stats --stitch=off "$T/sf.data" >"$T/sf.stats"
end_reasons "$T/sf.stats" >"$T/sf.ends"
# A sample taken inside execve, after the switch to the new program's
# memory, carries the old program's registers and no stack (its sp is not
# mapped any more): its pc is in no module of the new process, and
# "module not found" is the truthful end.  One such end came in a CI run
# (1 of 1137 empty copies) and in none of 6 recordings here; this is its
# likely cause, and at most 3 are allowed.
check "walks end only at the root, the window's end, the missing copy or (inside execve) an unknown pc" \
	awk '$2 != "root" &&
	     $0 !~ /^[0-9]+ (window exhausted|stack not copied)$/ &&
	     !($0 ~ / module not found$/ && $1 <= 3) {
	     bad = 1 } END { exit bad }' "$T/sf.ends"
nc=$(awk '/ stack not copied$/ { print $1 }' "$T/sf.ends")
nm=$(awk '/ module not found$/ { print $1 }' "$T/sf.ends")
check "every empty copy ends 'stack not copied' (${nc:-0} of $empty + $short short; ${nm:-0} in execve)" \
	test $((${nc:-0} + ${nm:-0})) -ge "$empty" -a "${nc:-0}" -le $((empty + short))

# The folded stacks: one marker per such sample, right above the sampled
# function, which the registers alone name.
restack_clean convert "$T/sf.data" -o "$T/sf.folded"
read -r named total < <(share "$T/sf.folded" \
	'^stackfault;\[truncated: stack not copied\];' \
	'^stackfault;\[truncated: stack not copied\];[a-z_]')
check "the folded stacks mark them ($total) and name the sampled function ($named)" \
	test "$total" -eq "${nc:-0}" -a "$named" -eq "$total"
check "no stack says 'bad stack'" \
	bash -c '! grep -q "truncated: bad stack" "$1"' - "$T/sf.folded"

done_testing
