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

#include <stdbool.h>
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

/*
 * What addr2line's answer depends on besides the address.  bfd
 * (_bfd_dwarf2_find_nearest_line()) names the function it finds at an
 * address by the symbol table when its DWARF name is not a linkage name,
 * and remembers that it did: from then on it takes the function as named,
 * renamed to that symbol when the symbol starts where the function's first
 * address range does, also as a caller in inline chains.  perf keeps one
 * addr2line process per file for the whole run, so what it prints for an
 * address depends on what it asked before (unwind/a2lstate.h replays it).
 * a2l_lookup()'s names are those of a function's first lookup.
 */
struct a2l_deps {
	/* per name: the function's identity in its module (its first
	 * range's start, its DIE's order in its unit) when stateful */
	uint64_t low[A2L_CHAIN_MAX];
	uint32_t idx[A2L_CHAIN_MAX];
	const char *dwarf[A2L_CHAIN_MAX];  /* its DWARF name */
	bool stateful[A2L_CHAIN_MAX];      /* not a linkage name */
	bool renames;   /* names[0] came from a symbol starting where its
			 * function's first range does */
};

/* a2l_lookup() that also fills *deps. */
unsigned a2l_lookup_deps(struct module *m, uint64_t addr, const char **names,
			 struct a2l_deps *deps);

/*
 * Whether m's first lookup would wait for another thread to decompress
 * its DWARF (dwimage_building()); once it would not, it never does.
 * After symtab_load(m).
 */
bool a2l_would_wait(struct module *m);

/* Opens m's addr2line state, which the first lookup does, ahead
 * (unwind/modload.h); after symtab_load(m). */
void a2l_prepare(struct module *m);

void a2l_free(struct a2l *a);

#endif
