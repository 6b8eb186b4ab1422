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
#include "unwind/a2l_index.h"
#include "unwind/a2l_internal.h"
#include "unwind/dwimage.h"
#include "unwind/module.h"
#include "unwind/symtab.h"

#define A2L_MAX_DEPTH 128

struct a2l {
	Dwarf *dw;
	bool dw_tried;
	struct a2l_index *idx;    /* the stored index, or NULL */
	/*
	 * mapped: addresses find their unit in a map from addresses to unit
	 * numbers, idx's or, when none was stored, one made from libdw
	 * (ivl, die_offs) to be stored; units are built from libdw when idx
	 * has no table for them (dirty: then the index is stored again with
	 * them, when the state is freed).  Else libdw finds the units.
	 */
	bool mapped, dirty;
	struct a2l_index_ivl *ivl;
	size_t nr_ivl;
	uint64_t *die_offs;       /* each unit's DIE offset */
	size_t nr_units;
	struct a2l_index_src src;
	/* mapped: unit number, else CU DIE offset -> struct a2l_cu */
	struct hashmap cus;
};

void a2l_cu_free(struct a2l_cu *cu)
{
	free(cu->f);
	free(cu->ranges);
	free(cu->order);
}

/* Frees the unit tables made, the map and the index they came from. */
static void a2l_release_units(struct a2l *a)
{
	size_t pos = 0;
	void *v;

	while (hashmap_iter(&a->cus, &pos, NULL, &v)) {
		a2l_cu_free(v);
		free(v);
	}
	hashmap_release(&a->cus);
	a2l_index_free(a->idx);
	a->idx = NULL;
	free(a->ivl);
	free(a->die_offs);
	a->ivl = NULL;
	a->die_offs = NULL;
	a->nr_ivl = a->nr_units = 0;
	a->mapped = a->dirty = false;
}

static void a2l_store(struct a2l *a);

void a2l_free(struct a2l *a)
{
	if (!a)
		return;
	if (a->mapped && a->dirty)
		a2l_store(a);
	a2l_release_units(a);
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

/* The table of the unit of cudie, made (NULL when out of memory). */
static struct a2l_cu *a2l_cu_make(Dwarf_Die *cudie)
{
	struct a2l_cu *cu;
	Dwarf_Attribute attr;
	Dwarf_Word lang = 0;
	size_t i;

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
	return cu;
fail:
	a2l_cu_free(cu);
	free(cu);
	return NULL;
}

/* The table of the unit of cudie, kept by its DIE offset. */
static struct a2l_cu *a2l_cu_get(struct a2l *a, Dwarf_Die *cudie)
{
	uint64_t key = dwarf_dieoffset(cudie);
	struct a2l_cu *cu;
	void *v;

	if (hashmap_get(&a->cus, key, &v))
		return v;
	cu = a2l_cu_make(cudie);
	if (cu && hashmap_put(&a->cus, key, cu) < 0) {
		a2l_cu_free(cu);
		free(cu);
		cu = NULL;
	}
	return cu;
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

static inline bool a2l_u64_before(const uint64_t *a, const uint64_t *b)
{
	return *a < *b;
}

MSORT_DEFINE(a2l_sort_u64, uint64_t, a2l_u64_before)

/*
 * The points where dwarf_addrdie()'s answer can change: each address
 * range's start, start + 1 and end (a2l_index.h), sorted, without
 * repeats, into *pts; returns their count, or 0.
 */
static size_t a2l_index_points(Dwarf *dw, uint64_t **pts)
{
	Dwarf_Aranges *ar;
	size_t n, i, nr = 0, k;
	uint64_t *p;

	*pts = NULL;
	if (dwarf_getaranges(dw, &ar, &n) != 0 || !n || n > SIZE_MAX / 8)
		return 0;
	p = mem_array(3 * n + 3 * n / 2 + 2, sizeof(*p));
	if (!p)
		return 0;
	for (i = 0; i < n; i++) {
		Dwarf_Arange *r = dwarf_onearange(ar, i);
		Dwarf_Addr start;
		Dwarf_Word len;

		if (!r || dwarf_getarangeinfo(r, &start, &len, NULL) != 0) {
			free(p);
			return 0;
		}
		p[nr++] = start;
		if (start + 1 > start)
			p[nr++] = start + 1;
		if (start + len > start)
			p[nr++] = start + len;
	}
	a2l_sort_u64(p, nr, p + nr);
	for (i = k = 0; i < nr; i++)
		if (!k || p[i] != p[k - 1])
			p[k++] = p[i];
	*pts = p;
	return k;
}

/*
 * The map from addresses to units of a->dw, as dwarf_addrdie() answers at
 * each point where its answer may change (a2l_index.h): units numbered as
 * first met, with their DIE offsets, into a->ivl and a->die_offs.  No
 * unit's table is built: a run builds those it looks addresses up in.
 * False when libdw or memory fails.
 */
static bool a2l_map_build(struct a2l *a)
{
	struct hashmap unit_of = { 0 };  /* CU DIE offset -> unit + 1 */
	size_t nr_pts, alloc_units = 0, i;
	bool ok = false;
	uint64_t *pts;

	nr_pts = a2l_index_points(a->dw, &pts);
	if (!nr_pts)
		return false;
	a->ivl = mem_array(nr_pts, sizeof(*a->ivl));
	if (!a->ivl)
		goto out;
	for (i = 0; i < nr_pts; i++) {
		Dwarf_Die cudie;
		int64_t unit = -1;
		void *v;

		if (dwarf_addrdie(a->dw, pts[i], &cudie)) {
			uint64_t off = dwarf_dieoffset(&cudie);

			if (hashmap_get(&unit_of, off, &v)) {
				unit = (int64_t)(uintptr_t)v - 1;
			} else {
				if (mem_grow(&a->die_offs, &alloc_units,
					     sizeof(*a->die_offs),
					     a->nr_units + 1) < 0)
					goto out;
				a->die_offs[a->nr_units] = off;
				unit = (int64_t)a->nr_units++;
				if (hashmap_put(&unit_of, off,
						(void *)(uintptr_t)(unit + 1)) < 0)
					goto out;
			}
		}
		if (a->nr_ivl && a->ivl[a->nr_ivl - 1].cu == unit)
			continue;
		a->ivl[a->nr_ivl].start = pts[i];
		a->ivl[a->nr_ivl++].cu = unit;
	}
	ok = true;
out:
	hashmap_release(&unit_of);
	free(pts);
	return ok;
}

/*
 * Stores the index again: the map, and the tables of the units built so
 * far or stored before.  Its names point into libdw's DWARF: before the
 * module's files close.
 */
static void a2l_store(struct a2l *a)
{
	size_t n = a->idx ? a2l_index_nr_units(a->idx) : a->nr_units;
	size_t nr_ivl = a->nr_ivl, i;
	const struct a2l_index_ivl *ivl = a->ivl;
	const struct a2l_cu **cus = mem_zalloc(n ? n : 1, sizeof(*cus));
	struct a2l_cu *old = mem_zalloc(n ? n : 1, sizeof(*old));
	uint64_t *offs = mem_zalloc(n ? n : 1, sizeof(*offs));
	struct dwcache_file f;

	if (!cus || !old || !offs || !a2l_index_begin(&a->src, &f))
		goto out;
	if (a->idx)
		ivl = a2l_index_map(a->idx, &nr_ivl);
	for (i = 0; i < n; i++) {
		void *v;
		bool stored = a->idx &&
			      a2l_index_has_unit(a->idx, (int64_t)i, &offs[i]);

		if (!a->idx)
			offs[i] = a->die_offs[i];
		if (hashmap_get(&a->cus, i, &v))
			cus[i] = v;
		else if (stored && a2l_index_unit(a->idx, (int64_t)i, &old[i]))
			cus[i] = &old[i];
	}
	a2l_index_store(&f, &a->src, ivl, nr_ivl, cus, offs, n);
out:
	for (i = 0; old && i < n; i++)
		a2l_cu_free(&old[i]);
	free(old);
	free(cus);
	free(offs);
}

/* What m->syms_elf's index is found by; false without a build-id. */
static bool a2l_index_src(struct module *m, struct a2l_index_src *src)
{
	size_t raw_size = 0;

	memset(src, 0, sizeof(*src));
	src->bid_len = module_elf_build_id(m->syms_elf, src->bid,
					   sizeof(src->bid));
	if (!src->bid_len || !elf_rawfile(m->syms_elf, &raw_size))
		return false;
	src->raw_size = raw_size;
	return true;
}

/*
 * m's addr2line state: the stored index, else libdw's DWARF with a map of
 * its units made to be stored (when there is a cache to keep it in).
 */
static struct a2l *a2l_open(struct module *m)
{
	struct a2l *a = mem_zalloc(1, sizeof(*a));
	bool keyed;

	if (!a)
		return NULL;
	m->a2l = a;
	keyed = m->syms_elf && a2l_index_wanted() && a2l_index_src(m, &a->src);
	if (keyed)
		a->idx = a2l_index_load(&a->src);
	if (a->idx) {
		a->mapped = true;
		return a;
	}
	a->dw = module_dwarf(m, m->syms_elf);
	a->dw_tried = true;
	if (a->dw && keyed) {
		if (a2l_map_build(a))
			a->mapped = a->dirty = true;
		else
			a2l_release_units(a);
	}
	return a;
}

/*
 * The table of the unit holding addr (mapped) into *cu (NULL when no unit
 * holds it): the stored one, else made from libdw's DWARF; false when the
 * stored unit is damaged, libdw does not find it, or memory ran out.
 */
static bool a2l_unit_cu(struct module *m, struct a2l *a, uint64_t addr,
			const struct a2l_cu **out)
{
	int64_t unit = a->idx ? a2l_index_find(a->idx, addr) :
				a2l_index_ivl_find(a->ivl, a->nr_ivl, addr);
	struct a2l_cu *cu;
	Dwarf_Die cudie;
	uint64_t off = 0;
	void *v;

	*out = NULL;
	if (unit < 0)
		return true;
	if (hashmap_get(&a->cus, (uint64_t)unit, &v)) {
		*out = v;
		return true;
	}
	if (a->idx && a2l_index_has_unit(a->idx, unit, &off)) {
		cu = mem_zalloc(1, sizeof(*cu));
		if (cu && !a2l_index_unit(a->idx, unit, cu)) {
			a2l_cu_free(cu);
			free(cu);
			return false;
		}
	} else {
		if (!a->idx)
			off = a->die_offs[unit];
		if (!a->dw_tried)
			a->dw = module_dwarf(m, m->syms_elf);
		a->dw_tried = true;
		if (!a->dw || !dwarf_offdie(a->dw, off, &cudie))
			return false;
		cu = a2l_cu_make(&cudie);
		a->dirty = true;
	}
	if (!cu)
		return false;
	if (hashmap_put(&a->cus, (uint64_t)unit, cu) < 0) {
		a2l_cu_free(cu);
		free(cu);
		return false;
	}
	*out = cu;
	return true;
}

/* Drops the units taken from the index and the map: libdw's tables from
 * now on. */
static void a2l_index_drop(struct module *m, struct a2l *a)
{
	a2l_release_units(a);
	if (!a->dw_tried)
		a->dw = module_dwarf(m, m->syms_elf);
	a->dw_tried = true;
}

/* Whether addr2line finds a line for addr in its unit, by libdw. */
static bool a2l_has_line(struct module *m, struct a2l *a, uint64_t addr)
{
	Dwarf_Die cudie;

	if (!a->dw_tried) {
		a->dw = module_dwarf(m, m->syms_elf);
		a->dw_tried = true;
	}
	if (!a->dw || !dwarf_addrdie(a->dw, addr, &cudie))
		return false;
	/* the line table is inflated when needed */
	(void)dwimage_need_lines(module_dwarf_image(m, m->syms_elf));
	return dwarf_getsrc_die(&cudie, addr) != NULL;
}

/* Fills entry i of deps for func (of unit cu), when deps is not NULL. */
static void a2l_dep(struct a2l_deps *deps, unsigned i,
		    const struct a2l_cu *cu, const struct a2l_func *func)
{
	if (!deps)
		return;
	deps->stateful[i] = func && !func->is_linkage;
	deps->low[i] = deps->stateful[i] && func->nr_ranges ?
			       cu->ranges[2 * func->first_range] :
			       0;
	deps->idx[i] = deps->stateful[i] ? func->idx : 0;
	deps->dwarf[i] = func ? func->name : NULL;
}

unsigned a2l_lookup(struct module *m, uint64_t addr, const char **names)
{
	return a2l_lookup_deps(m, addr, names, NULL);
}

void a2l_prepare(struct module *m)
{
	if (!m->a2l)
		(void)a2l_open(m);
}

bool a2l_would_wait(struct module *m)
{
	uint8_t bid[64];
	unsigned bid_len = 0;
	size_t raw_size = 0;

	if (m->names_ready || m->a2l)
		return false;
	if (m->syms_elf && elf_rawfile(m->syms_elf, &raw_size)) {
		/* the debug file was found by the module's build-id */
		bid_len = m->build_id_size;
		if (bid_len)
			memcpy(bid, m->build_id, bid_len);
		else
			bid_len = module_elf_build_id(m->syms_elf, bid,
						      sizeof(bid));
	}
	if (!bid_len || !dwimage_building(bid, bid_len, raw_size))
		m->names_ready = true;
	return !m->names_ready;
}

unsigned a2l_lookup_deps(struct module *m, uint64_t addr, const char **names,
			 struct a2l_deps *deps)
{
	const struct a2l_func *func = NULL;
	const struct a2l_cu *cu = NULL;
	struct a2l *a = m->a2l;
	Dwarf_Die cudie;
	const char *fallback;
	bool found = false, in_unit = false;
	unsigned n = 1;

	if (!a) {
		a = a2l_open(m);
		if (!a)
			return 0;
	}
	if (a->mapped && !a2l_unit_cu(m, a, addr, &cu))
		a2l_index_drop(m, a);
	if (a->mapped) {
		in_unit = cu != NULL;
		if (cu)
			func = a2l_find_func(cu, addr);
		found = func != NULL;
	} else if (a->dw && dwarf_addrdie(a->dw, addr, &cudie)) {
		cu = a2l_cu_get(a, &cudie);
		if (cu)
			func = a2l_find_func(cu, addr);
		if (!func)   /* the line table is inflated when needed */
			(void)dwimage_need_lines(module_dwarf_image(m,
								m->syms_elf));
		found = func || dwarf_getsrc_die(&cudie, addr);
	}
	if (deps)
		deps->renames = false;
	if (func && func->is_linkage) {
		names[0] = func->name;
	} else {
		uint64_t value = 0;

		fallback = symtab_bfd_function(m->symtab, addr, &value);
		if (fallback)
			found = true;
		else if (!found && in_unit)
			found = a2l_has_line(m, a, addr);
		names[0] = fallback ? fallback : func ? func->name : NULL;
		if (deps && fallback && func && func->nr_ranges)
			deps->renames =
				value == cu->ranges[2 * func->first_range];
	}
	if (!found)
		return 0;
	if (!names[0])
		names[0] = "??";
	a2l_dep(deps, 0, cu, func);
	/* Only an inlined function has a caller (bfd's caller_func). */
	while (func && func->inlined && func->parent >= 0 &&
	       n < A2L_CHAIN_MAX) {
		func = &cu->f[func->parent];
		a2l_dep(deps, n, cu, func);
		names[n++] = func->name ? func->name : "??";
	}
	return n;
}
