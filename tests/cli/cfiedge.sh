#!/bin/bash
# cfiedge.sh - CFI that is right but unusual (testdata/src/cfiedge.S): a
# return address kept in a register (vfork's), a CFA kept in %rbx under a
# leaf whose CFI never names %rbx, a register popped by an epilogue whose
# save rule stays, a system call ending its FDE, and a constructor the
# dynamic linker's entry code (no CFI) runs.  Every walk must reach the
# root by CFI alone; perf script's figure is printed beside restack's.
. "$(dirname "$0")/lib.sh"

need_perf
cc=$(command -v cc || command -v gcc) || skip_all "no C compiler"
src=$TESTDATA/src

"$cc" -O2 -g -fomit-frame-pointer -shared -fPIC -o "$T/libcfiedge.so" \
	"$src/cfiedge_lib.c" &&
	"$cc" -O2 -g -fomit-frame-pointer -o "$T/cfiedge" "$src/cfiedge.c" \
		"$src/cfiedge.S" -L"$T" -lcfiedge -Wl,-rpath,'$ORIGIN' ||
	skip_all "cannot build cfiedge"

record -e cpu-clock -F 4000 --call-graph dwarf -o "$T/cfiedge.data" \
	-- "$T/cfiedge" 20 >/dev/null || skip_all "perf record failed"

restack_clean convert --annotate --max-scan 0 --no-fp "$T/cfiedge.data" \
	-o "$T/cfiedge.folded"
perf_clean script -i "$T/cfiedge.data" >"$T/perf.script" 2>/dev/null
python3 "$TOP/tests/tools/collapse.py" "$T/perf.script" >"$T/perf.folded"

# Each case: the leaf part selecting its samples | the stack from main.
main='^cfiedge;_start;([^;]*;)*main;'
kernel='[^;]*_\[k\]'     # a kernel frame; perf's have no _[k]
for c in 'ra_in_reg|ra_in_reg' 'rbx_cfa;spin_leaf|rbx_cfa;spin_leaf' \
	'popped_epilogue|fp_caller;popped_epilogue' \
	"syscall_end;$kernel|syscall_loop;syscall_end;$kernel"; do
	sel=${c%%|*} stack=${c#*|}
	read -r good total < <(share "$T/cfiedge.folded" ";$sel" "$main$stack")
	read -r pgood ptotal < <(share "$T/perf.folded" ";${sel%"$kernel"}" \
		";main;${stack%"$kernel"}")
	echo "# perf script reaches main in $pgood of $ptotal samples in ${sel%%;*}"
	check "samples in ${sel%%;*} reach main by CFI ($good of $total)" \
		test "$total" -ge 20 -a "$good" -eq "$total"
done

read -r good total < <(share "$T/cfiedge.folded" ';cfiedge_lib_spin' \
	'^cfiedge;_dl_start_user;_dl_init;([^;]*;)*cfiedge_lib_spin')
check "a constructor's samples end at the dynamic linker's entry code ($good of $total)" \
	test "$total" -ge 20 -a "$good" -eq "$total"

# (A copy can end early where a page of the stack is not in memory yet, as
# in the dynamic linker's _dl_get_origin: those walks end "stack not
# copied".)
check "no walk through the test's frames is truncated" \
	awk '/ra_in_reg|rbx_cfa|popped_epilogue|syscall_end|cfiedge_lib/ &&
	     /\[truncated/ { bad = 1 } END { exit bad }' "$T/cfiedge.folded"

done_testing
