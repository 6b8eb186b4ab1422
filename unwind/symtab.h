/*
 * symtab.h - a module's function symbols, chosen the way perf and
 * addr2line choose them, so restack names frames as `perf script` does.
 *
 * Two views of the same ELF symbol tables:
 *  - perf's view (tools/perf/util/symbol-elf.c, dso__load_sym): FUNC,
 *    IFUNC and OBJECT symbols and NOTYPE labels in text/data sections, from
 *    the file that has .symtab (the executable, else its debuginfo) plus
 *    the executable's .dynsym and synthesized "name@plt" entries; zero
 *    sizes extended to the next symbol; aliases at one address reduced to
 *    the one perf prefers.
 *  - addr2line's view (binutils 2.40 _bfd_elf_find_function): the nearest
 *    preceding code symbol in the same section of the file perf reads
 *    symbols from, used where DWARF names no function (or no linkage name).
 */
#ifndef RESTACK_UNWIND_SYMTAB_H
#define RESTACK_UNWIND_SYMTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct module;

struct symtab_sym {
	uint64_t start, end;    /* ELF virtual addresses, [start, end) */
	const char *name;
	uint8_t bind, type;
	uint8_t kflags;         /* symtab.c's own: a kallsyms line's facts */
	uint32_t node;          /* symtab.c's own: its node in the tree of
				 * an ELF module's table (symtree.h) */
};

/*
 * The length of sym's name.  Kernel symbols (symtab_load_kallsyms()) keep
 * their names in the kallsyms text, where a name ends at a tab or newline
 * and not at a NUL: copy them with this length.
 */
size_t symtab_name_len(const struct symtab_sym *sym);

struct symtab;

/*
 * Builds the symbol tables of a loaded module (once), and sets
 * m->syms_elf to the file they come from (addr2line's file).  Returns NULL when
 * out of memory; an empty table when the module has no symbols.  Owned by
 * the module (module.c frees it).
 */
struct symtab *symtab_load(struct module *m);
void symtab_free(struct symtab *t);

/*
 * The kernel's symbols from a kallsyms file (/proc/kallsyms or a copy),
 * as perf loads them; NULL when the file cannot be read.  The caller owns
 * it (symtab_free).  ksyms.c keeps the result on disk between runs.
 */
struct symtab *symtab_load_kallsyms(const char *path);

/* The table, sorted by start (one symbol per start); *nr entries,
 * borrowed: valid until symtab_free(t). */
const struct symtab_sym *symtab_syms(const struct symtab *t, size_t *nr);

/*
 * Whether a symbol [start, end) holds addr as perf decides it: a symbol
 * of size 0 holds its own address.
 */
static inline bool symtab_range_has(uint64_t start, uint64_t end,
				    uint64_t addr)
{
	return addr >= start &&
	       (addr < end || (addr == start && end == start));
}

/*
 * perf's symbol for ELF address addr, or NULL.  Where an ELF module's
 * symbols overlap (a zero-size symbol extended over synthesized "@plt"
 * entries), the one perf's tree walk finds first (symtree.h).
 */
const struct symtab_sym *symtab_lookup(const struct symtab *t, uint64_t addr);

/* addr2line's fallback function name for addr, or NULL; *value (when
 * value is not NULL) is the symbol's address. */
const char *symtab_bfd_function(const struct symtab *t, uint64_t addr,
				uint64_t *value);

/* Number of symbols in perf's view (for statistics and tests). */
size_t symtab_count(const struct symtab *t);

#endif
