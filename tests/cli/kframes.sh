#!/bin/bash
# kframes.sh - which address names a kernel callchain entry.  The first
# entry is exact and the rest are return addresses, looked up one byte
# back (inside the call), except the entry after an interrupt or
# exception entry (asm_sysvec_*, asm_exc_*: the address the interrupt
# stopped at) and an entry whose byte before lies in a function's padding
# (a __pfx_ symbol: no call is ever there).  perf script looks every entry
# up as it is, so an interrupt taken at a function's first byte gave
# restack the padding's name where perf gave the function's (CI's
# unwind.sh comparison, kernel 6.12+).  The committed tp-multi.data's
# sched_switch stacks are named here with a kallsyms file written around
# one of their callchains, so each rule decides one frame's name.
. "$(dirname "$0")/lib.sh"

cap=$TESTDATA/perf/tp-multi.data
# The first sched_switch callchain with 8 kernel entries, leaf first.
read -r -a e < <("$RESTACK" dump "$cap" |
	awk -F'callchain=' '/ event="sched:sched_switch" / && NF > 1 {
	     split($2, a, /[ ,]/); n = 0; k = ""
	     for (i = 2; a[i] ~ /^0xffffffff8/; i++) { k = k " " a[i]; n++ }
	     if (a[1] == "0xffffffffffffff80" && n == 8) { print k; exit } }')
is "${#e[@]}" 8 "the premise: a sched_switch callchain with 8 kernel entries"
[ "${#e[@]}" = 8 ] || done_testing

# sym ADDR DELTA NAME: a kallsyms line for NAME at ADDR + DELTA.
sym() {
	printf '%016x T %s\n' $(($1 + $2)) "$3"
}
{
	sym "${e[0]}" -16 kf_leaf
	sym "${e[1]}" -32 kf_caller
	sym "${e[2]}" -16 asm_sysvec_kf_tick
	# after the interrupt entry: exact, although the byte before is
	# another function's
	sym "${e[3]}" -64 kf_before_hit
	sym "${e[3]}" 0 kf_irq_hit
	# a return address at a function's first byte (the caller's call was
	# its last instruction): still the caller
	sym "${e[4]}" -48 kf_noreturn_caller
	sym "${e[4]}" 0 kf_after_noreturn
	# the byte before is padding: exact
	sym "${e[5]}" -16 __pfx_kf_pfx_hit
	sym "${e[5]}" 0 kf_pfx_hit
	sym "${e[6]}" -8 kf_outer
	sym "${e[7]}" -16 kf_entry
} | sort >"$T/kallsyms"

"$RESTACK" convert -q --event sched:sched_switch --kallsyms "$T/kallsyms" \
	--stitch=off "$cap" -o "$T/k.folded"
want="kf_entry;kf_outer;kf_pfx_hit;kf_noreturn_caller;kf_irq_hit;asm_sysvec_kf_tick;kf_caller;kf_leaf"
check "the frames are named by the rule each entry falls under" \
	grep -q ";$want [0-9]*\$" "$T/k.folded"
check "no frame is named after padding or the byte before an exact entry" \
	bash -c "! grep -qE '__pfx_|kf_before_hit|kf_after_noreturn' '$T/k.folded'"

done_testing
