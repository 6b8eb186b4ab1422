#!/bin/bash
# plt.sh - samples in PLT entries are named as perf script names them.
# perf 6.1 synthesizes "name@plt" symbols after extending the zero-size
# _init (in .init, right before .plt) up to the next symbol, over the
# whole .plt, and names an address by the first symbol holding it on its
# way down its red-black tree: some entries are "_init", the others
# "name@plt", depending on the tree's shape (unwind/symtree.h).
#
# testdata/src/plt.c calls a dozen libc functions through their PLT
# entries in a hot loop; perf script names the first entry "_init" and
# the others "name@plt".
. "$(dirname "$0")/lib.sh"

need_perf
command -v python3 >/dev/null || skip_all "python3 is needed to compare"
cc=$(command -v cc || command -v gcc) || skip_all "no C compiler"
tools=$TOP/tests/tools

"$cc" -O1 -g -fno-builtin -o "$T/plt" "$TESTDATA/src/plt.c" ||
	skip_all "cannot build plt.c"
record -e cpu-clock -F 10000 --call-graph dwarf,1024 -o "$T/plt.data" \
	-- "$T/plt" >/dev/null || skip_all "perf record failed"
perf_clean script -i "$T/plt.data" >"$T/plt.perf" 2>/dev/null
if ! restack_clean convert "$T/plt.data" --to script -o "$T/plt.script" \
	2>"$T/err"; then
	fail "restack convert --to script" "$(cat "$T/err")"
	done_testing
fi

# the program's leaves named "_init" or "...@plt" by perf (the real _init
# runs once, at start)
awk -v f="($T/plt)" '
	/^[^ \t]/ { leaf = 1; next }
	leaf && NF { leaf = 0; n = $2; sub(/\+0x[0-9a-f]+$/, "", n)
		     if (index($0, f) && (n == "_init" || n ~ /@plt$/))
			print n }
	!NF { leaf = 0 }' "$T/plt.perf" | sort | uniq -c >"$T/plt.names"
sed 's/^/# perf: /' "$T/plt.names"
# (how many of the dozen a run hits depends on the host's pace: 9 on a
# quiet machine, 4, 3 and 2 under load in three rehearsals)
check "samples landed in several PLT entries" \
	test "$(grep -c '@plt$' "$T/plt.names")" -ge 2
if grep -q ' _init$' "$T/plt.names"; then
	ok "perf names a PLT entry _init"
else
	skip "perf names a PLT entry _init" "not with this toolchain's PLT order"
fi
check "leaf names equal perf script's in every sample" \
	python3 "$tools/compare_names.py" --depth 1 "$T/plt.perf" \
	"$T/plt.script" 100
check "frame names equal perf script's (>= 99.9%)" \
	python3 "$tools/compare_names.py" "$T/plt.perf" "$T/plt.script" 99.9
done_testing
