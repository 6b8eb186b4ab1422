/*
 * a2l_internal.h - addr2line's function table of one compile unit, shared
 * by a2l.c, which builds it from libdw, and a2l_index.c, which keeps the
 * tables of a whole file on disk between runs.
 *
 * Ownership: a struct a2l_cu owns its three arrays (a2l_cu_free());
 * function names belong to whatever the table was made from (libdw's
 * file, or the index's mapping) and live as long as it.
 */
#ifndef RESTACK_UNWIND_A2L_INTERNAL_H
#define RESTACK_UNWIND_A2L_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct a2l_func {
	uint64_t low, high;       /* lowest and highest address of ranges */
	uint64_t high_mark;       /* highest high of it and all before it */
	uint32_t first_range, nr_ranges;
	int32_t parent;           /* enclosing function, -1 for none */
	uint32_t idx;             /* DIE order: the later DIE wins a tie */
	const char *name;
	bool is_linkage;
	bool inlined;             /* DW_TAG_inlined_subroutine */
};

struct a2l_cu {
	struct a2l_func *f;
	size_t nr, alloc;
	uint64_t *ranges;         /* pairs: low, high */
	size_t nr_ranges, alloc_ranges;
	uint32_t *order;          /* f with ranges, by (low, high, idx) */
	size_t nr_order;
	int lang;
};

void a2l_cu_free(struct a2l_cu *cu);

#endif
