/*
 * a2l.c - binutils 2.40 addr2line's function lookup, over libdw.
 *
 * Follows bfd/dwarf2.c: scan_unit_for_symbols (which DIEs are functions,
 * their names and enclosing function), build_lookup_funcinfo_table and
 * lookup_address_in_function_table (which function an address belongs
 * to), _bfd_dwarf2_find_nearest_line (the symbol-table fallback) and
 * _bfd_dwarf2_find_inliner_info (the chain of callers).
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/a2l.h"

#include "common/base.h"
#include "common/hashmap.h"
#include "common/mem.h"
#include "common/msort.h"
#include "unwind/dwimage.h"
#include "unwind/module.h"
#include "unwind/symtab.h"

#define A2L_MAX_DEPTH 128

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

struct a2l {
	Dwarf *dw;
	struct hashmap cus;       /* CU DIE offset -> struct a2l_cu */
};

void a2l_free(struct a2l *a)
{
	size_t pos = 0;
	void *v;

	if (!a)
		return;
	while (hashmap_iter(&a->cus, &pos, NULL, &v)) {
		struct a2l_cu *cu = v;

		free(cu->f);
		free(cu->ranges);
		free(cu->order);
		free(cu);
	}
	hashmap_release(&a->cus);
	free(a);
}

/* Languages whose DW_AT_name bfd treats as a linkage name. */
static bool a2l_lang_unmangled(int lang)
{
	switch (lang) {
	case DW_LANG_C89: case DW_LANG_C: case DW_LANG_Cobol74:
	case DW_LANG_Cobol85: case DW_LANG_Fortran77: case DW_LANG_Pascal83:
	case DW_LANG_PLI: case DW_LANG_C99: case DW_LANG_UPC: case DW_LANG_C11:
	case DW_LANG_Mips_Assembler:
	case 0x8765:  /* DW_LANG_Upc */
	case 0x8e57:  /* DW_LANG_HP_Basic91 */
	case 0x8e59:  /* DW_LANG_HP_IMacro */
	case 0x8e5a:  /* DW_LANG_HP_Assembler */
		return true;
	default:
		return false;
	}
}

static int a2l_add_func(struct a2l_cu *cu, Dwarf_Die *die, int tag,
			int parent)
{
	struct a2l_func *f;
	Dwarf_Attribute attr;
	Dwarf_Addr base, start, end;
	ptrdiff_t off = 0;

	if (mem_grow(&cu->f, &cu->alloc, sizeof(*cu->f), cu->nr + 1) < 0)
		return -1;
	f = &cu->f[cu->nr];
	memset(f, 0, sizeof(*f));
	f->idx = (uint32_t)cu->nr;
	f->parent = parent;
	f->inlined = tag == DW_TAG_inlined_subroutine;
	f->first_range = (uint32_t)cu->nr_ranges;
	f->low = UINT64_MAX;
	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &attr) ||
	    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr))
		f->name = dwarf_formstring(&attr);
	if (f->name) {
		f->is_linkage = true;
	} else {
		f->name = dwarf_diename(die);
		f->is_linkage = f->name && a2l_lang_unmangled(cu->lang);
	}
	while ((off = dwarf_ranges(die, off, &base, &start, &end)) > 0) {
		uint64_t *r;
		uint32_t k;

		if (end <= start)
			continue;
		r = f->nr_ranges ? cu->ranges + 2 * f->first_range : NULL;
		f->low = MIN(f->low, start);
		f->high = MAX(f->high, end);
		/* bfd's arange_add(): extend a range that touches this one */
		for (k = 0; k < f->nr_ranges; k++) {
			if (start == r[2 * k + 1]) {
				r[2 * k + 1] = end;
				break;
			}
			if (end == r[2 * k]) {
				r[2 * k] = start;
				break;
			}
		}
		if (k < f->nr_ranges)
			continue;
		if (mem_grow(&cu->ranges, &cu->alloc_ranges,
			     2 * sizeof(*cu->ranges), cu->nr_ranges + 1) < 0)
			return -1;
		cu->ranges[2 * cu->nr_ranges] = start;
		cu->ranges[2 * cu->nr_ranges + 1] = end;
		cu->nr_ranges++;
		f->nr_ranges++;
	}
	cu->nr++;
	return (int)(cu->nr - 1);
}

static int a2l_scan(struct a2l_cu *cu, Dwarf_Die *die, int parent,
		    unsigned depth)
{
	Dwarf_Die child;

	if (depth > A2L_MAX_DEPTH || dwarf_child(die, &child) != 0)
		return 0;
	do {
		int tag = dwarf_tag(&child), me = parent;

		if (tag == DW_TAG_subprogram ||
		    tag == DW_TAG_inlined_subroutine ||
		    tag == DW_TAG_entry_point) {
			me = a2l_add_func(cu, &child, tag, parent);
			if (me < 0)
				return -1;
		}
		if (dwarf_haschildren(&child) &&
		    a2l_scan(cu, &child, me, depth + 1) < 0)
			return -1;
	} while (dwarf_siblingof(&child, &child) == 0);
	return 0;
}

/* The order of cu->order: (low, high, DIE order), a total order. */
struct a2l_key {
	uint64_t low, high;
	uint32_t idx;
};

static inline bool a2l_key_before(const struct a2l_key *a,
				  const struct a2l_key *b)
{
	if (a->low != b->low)
		return a->low < b->low;
	if (a->high != b->high)
		return a->high < b->high;
	return a->idx < b->idx;
}

MSORT_DEFINE(a2l_sort, struct a2l_key, a2l_key_before)

/* Fills cu->order: every function, by (low, high, DIE order). */
static int a2l_order(struct a2l_cu *cu)
{
	struct a2l_key *keys;
	size_t i, n = cu->nr;

	cu->order = mem_array(n ? n : 1, sizeof(*cu->order));
	keys = mem_array(n + n / 2 + 1, sizeof(*keys));
	if (!cu->order || !keys) {
		free(keys);
		return -1;
	}
	for (i = 0; i < n; i++) {
		keys[i].low = cu->f[i].low;
		keys[i].high = cu->f[i].high;
		keys[i].idx = (uint32_t)i;
	}
	a2l_sort(keys, n, keys + n);
	for (i = 0; i < n; i++)
		cu->order[i] = keys[i].idx;
	cu->nr_order = n;
	free(keys);
	return 0;
}

static struct a2l_cu *a2l_cu_get(struct a2l *a, Dwarf_Die *cudie)
{
	uint64_t key = dwarf_dieoffset(cudie);
	struct a2l_cu *cu;
	Dwarf_Attribute attr;
	Dwarf_Word lang = 0;
	size_t i;
	void *v;

	if (hashmap_get(&a->cus, key, &v))
		return v;
	cu = mem_zalloc(1, sizeof(*cu));
	if (!cu)
		return NULL;
	if (dwarf_attr(cudie, DW_AT_language, &attr))
		(void)dwarf_formudata(&attr, &lang);
	cu->lang = (int)lang;
	if (a2l_scan(cu, cudie, -1, 0) < 0)
		goto fail;
	/*
	 * Every function takes part, those without ranges as [0, 0): they
	 * steer bfd's binary search, so they must steer ours.
	 */
	for (i = 0; i < cu->nr; i++) {
		if (!cu->f[i].nr_ranges)
			cu->f[i].low = cu->f[i].high = 0;
	}
	if (a2l_order(cu) < 0)
		goto fail;
	/* bfd's high watermark, which its binary search relies on */
	for (i = 0; i < cu->nr_order; i++) {
		struct a2l_func *f = &cu->f[cu->order[i]];

		f->high_mark = f->high;
		if (i && cu->f[cu->order[i - 1]].high_mark > f->high_mark)
			f->high_mark = cu->f[cu->order[i - 1]].high_mark;
	}
	if (hashmap_put(&a->cus, key, cu) < 0)
		goto fail;
	return cu;
fail:
	free(cu->f);
	free(cu->ranges);
	free(cu->order);
	free(cu);
	return NULL;
}

/* lookup_address_in_function_table(), including its quirks. */
static const struct a2l_func *a2l_find_func(const struct a2l_cu *cu,
					    uint64_t addr)
{
	size_t n = cu->nr_order, low = 0, high = n, first = n, mid;
	const struct a2l_func *best = NULL;
	uint64_t best_len = UINT64_MAX;

	if (n == 0 || cu->f[cu->order[n - 1]].high_mark < addr)
		return NULL;
	while (low < high) {
		const struct a2l_func *f;

		mid = (low + high) / 2;
		f = &cu->f[cu->order[mid]];
		if (addr < f->low)
			high = mid;
		else if (addr >= f->high_mark)
			low = mid + 1;
		else
			high = first = mid;
	}
	for (; first < n; first++) {
		const struct a2l_func *f = &cu->f[cu->order[first]];
		uint32_t r;

		if (addr < f->low)
			break;
		for (r = 0; r < f->nr_ranges; r++) {
			uint64_t lo = cu->ranges[2 * (f->first_range + r)];
			uint64_t hi = cu->ranges[2 * (f->first_range + r) + 1];

			if (addr < lo || addr >= hi)
				continue;
			if (hi - lo < best_len ||
			    (hi - lo == best_len && best && f->idx > best->idx)) {
				best = f;
				best_len = hi - lo;
			}
		}
	}
	return best;
}

unsigned a2l_lookup(struct module *m, uint64_t addr, const char **names)
{
	const struct a2l_func *func = NULL;
	const struct a2l_cu *cu = NULL;
	struct a2l *a = m->a2l;
	Dwarf_Die cudie;
	const char *fallback;
	bool found = false;
	unsigned n = 1;

	if (!a) {
		a = mem_zalloc(1, sizeof(*a));
		if (!a)
			return 0;
		a->dw = module_dwarf(m, m->syms_elf);
		m->a2l = a;
	}
	if (a->dw && dwarf_addrdie(a->dw, addr, &cudie)) {
		cu = a2l_cu_get(a, &cudie);
		if (cu)
			func = a2l_find_func(cu, addr);
		if (!func)   /* the line table is inflated when needed */
			(void)dwimage_need_lines(module_dwarf_image(m,
								m->syms_elf));
		found = func || dwarf_getsrc_die(&cudie, addr);
	}
	if (func && func->is_linkage) {
		names[0] = func->name;
	} else {
		fallback = symtab_bfd_function(m->symtab, addr);
		if (fallback)
			found = true;
		names[0] = fallback ? fallback : func ? func->name : NULL;
	}
	if (!found)
		return 0;
	if (!names[0])
		names[0] = "??";
	/* Only an inlined function has a caller (bfd's caller_func). */
	while (func && func->inlined && func->parent >= 0 &&
	       n < A2L_CHAIN_MAX) {
		func = &cu->f[func->parent];
		names[n++] = func->name ? func->name : "??";
	}
	return n;
}
