/*
 * gopclntab.h - Go's function table (.gopclntab, the runtime's pcHeader
 * and what follows it): function names, entry points and per-pc stack
 * pointer deltas, which a Go executable keeps when it has no symbols, no
 * DWARF and no .eh_frame (go build -ldflags="-s -w", strip).
 *
 * Layouts read: Go 1.16-1.17 (magic 0xfffffffa), 1.18-1.19 (0xfffffff0)
 * and 1.20 onwards (0xfffffff1), little-endian.  Every offset read from
 * the table is checked against the table's size: a damaged table is
 * refused when parsed, or answers "unknown" for the functions it
 * damages.
 *
 * A parsed table owns a copy of its bytes; the names it returns live as
 * long as the table.  A module's table (gopclntab_load()) is owned by the
 * module (module.c frees it).
 */
#ifndef RESTACK_UNWIND_GOPCLNTAB_H
#define RESTACK_UNWIND_GOPCLNTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct module;
struct gopclntab;

#define GOPCLNTAB_MAGIC_116 0xfffffffau  /* Go 1.16, 1.17 */
#define GOPCLNTAB_MAGIC_118 0xfffffff0u  /* Go 1.18, 1.19 */
#define GOPCLNTAB_MAGIC_120 0xfffffff1u  /* Go 1.20 onwards */

/* What a stack walk needs to know about a function. */
enum gopclntab_kind {
	GOPCLNTAB_NORMAL,
	GOPCLNTAB_ROOT,     /* a goroutine's or thread's first function:
			     * runtime.goexit, runtime.mstart, runtime.rt0_go */
	GOPCLNTAB_SWITCH,   /* changes stacks before calling on: systemstack,
			     * mcall, morestack, asmcgocall, the vdso callers
			     * (nanotime1, time.now), or runs on the signal
			     * stack (sigtramp): its callers are on another
			     * stack */
};

struct gopclntab_func {
	uint64_t start, end;   /* [start, end) in the module's addresses */
	const char *name;      /* NULL when the table's entry is damaged */
	uint32_t index;
	uint32_t pcsp;         /* offset of the SP-delta table, 0: none */
};

/*
 * Parses a table of size bytes at data (copied), whose functions'
 * addresses are relative to the header's text start (text, when the
 * header gives none).  Returns NULL and sets *why (static text) when the
 * bytes are not a table of a known layout or out of memory.
 */
struct gopclntab *gopclntab_parse(const void *data, size_t size,
				  uint64_t text, const char **why);
void gopclntab_free(struct gopclntab *t);

/* Number of functions. */
uint32_t gopclntab_count(const struct gopclntab *t);

/* Function i (< gopclntab_count()); false when its entry is damaged. */
bool gopclntab_func(const struct gopclntab *t, uint32_t i,
		    struct gopclntab_func *f);

/* The function holding module address addr; false when none does. */
bool gopclntab_find(const struct gopclntab *t, uint64_t addr,
		    struct gopclntab_func *f);

/*
 * The stack pointer delta of f at addr (f holds it): how many bytes the
 * function has pushed below its return address there.  False when the
 * function has no table or the table is damaged or does not cover addr.
 */
bool gopclntab_spdelta(const struct gopclntab *t,
		       const struct gopclntab_func *f, uint64_t addr,
		       int32_t *delta);

/* What a function named name does to a stack walk (ABI suffixes such as
 * ".abi0" ignored, as the ELF symbol table spells assembly functions). */
enum gopclntab_kind gopclntab_kind_of(const char *name);

/*
 * The table of a loaded module: its .gopclntab section, else a validated
 * header found by its magic in the file's non-executable segments.  Read
 * once; NULL when there is none (not a Go program) or out of memory.
 */
struct gopclntab *gopclntab_load(struct module *m);

/*
 * The kind of the function holding address rel of module m, for a module
 * with a table; GOPCLNTAB_NORMAL otherwise.
 */
enum gopclntab_kind gopclntab_kind_at(struct module *m, uint64_t rel);

#endif
