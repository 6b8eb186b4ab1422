/*
 * a2l.h - what `addr2line -f -i` (binutils 2.40) answers for an address,
 * reproduced with libdw, because perf script names inline frames by it.
 *
 * Per compile unit we list every subprogram, inlined_subroutine and
 * entry_point DIE with its address ranges (bfd's function table); an
 * address belongs to the function with the smallest range holding it,
 * the later DIE winning a tie; the inline chain follows the enclosing
 * function DIEs.  Where DWARF has no function, or only a name that is not
 * a linkage name, addr2line takes the symbol table's nearest function.
 */
#ifndef RESTACK_UNWIND_A2L_H
#define RESTACK_UNWIND_A2L_H

#include <stdint.h>

struct module;
struct a2l;

#define A2L_CHAIN_MAX 64

/*
 * Names for ELF address addr of module m, innermost first, into names
 * (at most A2L_CHAIN_MAX).  Returns their count; 0 when addr2line would
 * answer "??:0" (nothing found), which perf treats as "no inline data".
 * Uses the file m->syms_elf (call symtab_load() first).
 */
unsigned a2l_lookup(struct module *m, uint64_t addr, const char **names);

void a2l_free(struct a2l *a);

#endif
