/*
 * a2l_index.c - addr2line's function tables kept on disk (a2l_index.h).
 *
 * A stored index, in this machine's byte order:
 *	struct a2lx_hdr
 *	struct a2l_index_ivl [nr_ivl]  the address map, by start
 *	struct a2lx_unit  [nr_units]
 *	struct a2lx_func  [nr_funcs]   each unit's functions, in turn
 *	uint64_t          [2 * nr_ranges]  their ranges (low, high)
 *	uint32_t          [nr_order]   each unit's order, padded to 8 bytes
 *	char              [names_len]  NUL-terminated names
 * A unit's functions, ranges and order are numbered from its own first
 * ones, as in struct a2l_cu.
 */
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unwind/a2l_index.h"

#include "common/base.h"
#include "common/hashmap.h"
#include "common/mem.h"
#include "common/strbuf.h"
#include "unwind/a2l_internal.h"
#include "unwind/dwcache.h"

#define A2LX_MAGIC "RSTKA2L1"
/*
 * The layout of a stored index and the rules that made its tables: bump
 * it when either changes (a2l.c's scan, order or quirks), so that no run
 * takes names from an index older rules made.
 */
#define A2LX_VERSION 2

struct a2lx_hdr {
	char magic[8];
	uint32_t version, bid_len;
	uint8_t bid[64];
	uint64_t raw_size;
	uint64_t nr_ivl, nr_units, nr_funcs, nr_ranges, nr_order, names_len;
	uint64_t hash;          /* hashmap_fnv() of the fields above */
};

struct a2lx_unit {
	uint64_t first_func, nr_funcs;
	uint64_t first_range, nr_ranges;
	uint64_t first_order, nr_order;
	int64_t lang;
	uint64_t die_off;       /* of the unit's DIE in .debug_info */
	uint64_t built;         /* 1: the table is stored; 0: not yet */
};

struct a2lx_func {
	uint64_t low, high, high_mark;
	uint32_t first_range, nr_ranges;
	int32_t parent;
	uint32_t idx;
	uint64_t name;          /* offset in the names + 1; 0: none */
	uint8_t is_linkage, inlined, pad[6];
};

struct a2l_index {
	void *map;
	size_t map_size;
	const struct a2l_index_ivl *ivl;
	const struct a2lx_unit *units;
	const struct a2lx_func *funcs;
	const uint64_t *ranges;
	const uint32_t *order;
	const char *names;
	struct a2lx_hdr h;
};

/* <build-id>-<size>.a2l in buf; false when it does not fit. */
static bool a2lx_name(const struct a2l_index_src *src, char *buf, size_t len)
{
	return dwcache_bid_name(src->bid, src->bid_len, src->raw_size, "a2l",
				buf, len);
}

static void a2lx_fill_hdr(struct a2lx_hdr *h, const struct a2l_index_src *src)
{
	memcpy(h->magic, A2LX_MAGIC, sizeof(h->magic));
	h->version = A2LX_VERSION;
	h->bid_len = src->bid_len;
	memset(h->bid, 0, sizeof(h->bid));
	memcpy(h->bid, src->bid, src->bid_len);
	h->raw_size = src->raw_size;
	h->hash = hashmap_fnv(HASHMAP_FNV_SEED, h,
			      offsetof(struct a2lx_hdr, hash));
}

/* The byte offsets of the arrays after the header; false on overflow. */
struct a2lx_layout {
	uint64_t ivl, units, funcs, ranges, order, names, end;
};

static bool a2lx_layout(const struct a2lx_hdr *h, struct a2lx_layout *l)
{
	const uint64_t lim = (uint64_t)1 << 40;

	if (h->nr_ivl > lim || h->nr_units > lim || h->nr_funcs > lim ||
	    h->nr_ranges > lim || h->nr_order > lim || h->names_len > lim)
		return false;
	l->ivl = sizeof(*h);
	l->units = l->ivl + h->nr_ivl * sizeof(struct a2l_index_ivl);
	l->funcs = l->units + h->nr_units * sizeof(struct a2lx_unit);
	l->ranges = l->funcs + h->nr_funcs * sizeof(struct a2lx_func);
	l->order = l->ranges + h->nr_ranges * 2 * sizeof(uint64_t);
	l->names = l->order + ALIGN_UP(h->nr_order * sizeof(uint32_t), 8);
	l->end = l->names + h->names_len;
	return true;
}

/* The map is ordered and names units the index has; every name ends
 * inside the names. */
static bool a2lx_check(const struct a2l_index *x)
{
	uint64_t i;

	for (i = 0; i < x->h.nr_ivl; i++) {
		if ((i && x->ivl[i].start <= x->ivl[i - 1].start) ||
		    x->ivl[i].cu < -1 ||
		    (x->ivl[i].cu >= 0 &&
		     (uint64_t)x->ivl[i].cu >= x->h.nr_units))
			return false;
	}
	return !x->h.names_len || x->names[x->h.names_len - 1] == '\0';
}

bool a2l_index_wanted(void)
{
	return dwcache_dir() != NULL;
}

bool a2l_index_present(const struct a2l_index_src *src)
{
	struct a2lx_hdr got, want;
	struct a2lx_layout l;
	struct stat st;
	char name[200];
	bool ok;
	int fd;

	if (!a2lx_name(src, name, sizeof(name)))
		return false;
	fd = dwcache_open(name);
	if (fd < 0)
		return false;
	ok = fstat(fd, &st) == 0 &&
	     pread(fd, &got, sizeof(got), 0) == (ssize_t)sizeof(got);
	close(fd);
	want = got;
	a2lx_fill_hdr(&want, src);
	return ok && !memcmp(&want, &got, sizeof(want)) &&
	       a2lx_layout(&got, &l) && (uint64_t)st.st_size == l.end;
}

struct a2l_index *a2l_index_load(const struct a2l_index_src *src)
{
	struct a2l_index *x;
	struct a2lx_hdr want;
	struct a2lx_layout l;
	struct stat st;
	char name[200];
	const char *p;
	int fd;

	if (!a2lx_name(src, name, sizeof(name)))
		return NULL;
	fd = dwcache_open(name);
	if (fd < 0)
		return NULL;
	x = mem_zalloc(1, sizeof(*x));
	if (!x || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    pread(fd, &x->h, sizeof(x->h), 0) != (ssize_t)sizeof(x->h))
		goto fail;
	want = x->h;
	a2lx_fill_hdr(&want, src);
	if (memcmp(&want, &x->h, sizeof(want)) || !a2lx_layout(&x->h, &l) ||
	    (uint64_t)st.st_size != l.end)
		goto fail;
	x->map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (x->map == MAP_FAILED)
		goto fail;
	x->map_size = (size_t)st.st_size;
	p = x->map;
	x->ivl = (const void *)(p + l.ivl);
	x->units = (const void *)(p + l.units);
	x->funcs = (const void *)(p + l.funcs);
	x->ranges = (const void *)(p + l.ranges);
	x->order = (const void *)(p + l.order);
	x->names = p + l.names;
	if (!a2lx_check(x)) {
		munmap(x->map, x->map_size);
		goto fail;
	}
	close(fd);
	dwcache_count_loaded();
	return x;
fail:
	close(fd);
	free(x);
	return NULL;
}

void a2l_index_free(struct a2l_index *x)
{
	if (!x)
		return;
	munmap(x->map, x->map_size);
	free(x);
}

int64_t a2l_index_ivl_find(const struct a2l_index_ivl *ivl, size_t nr,
			   uint64_t addr)
{
	size_t lo = 0, hi = nr;

	/* the last interval starting at or before addr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ivl[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return -1;
	return ivl[lo - 1].cu;
}

int64_t a2l_index_find(const struct a2l_index *x, uint64_t addr)
{
	return a2l_index_ivl_find(x->ivl, x->h.nr_ivl, addr);
}

/* [first, first + nr) inside [0, total)? */
static bool a2lx_within(uint64_t first, uint64_t nr, uint64_t total)
{
	return first <= total && nr <= total - first;
}

size_t a2l_index_nr_units(const struct a2l_index *x)
{
	return x->h.nr_units;
}

const struct a2l_index_ivl *a2l_index_map(const struct a2l_index *x,
					  size_t *nr)
{
	*nr = x->h.nr_ivl;
	return x->ivl;
}

bool a2l_index_has_unit(const struct a2l_index *x, int64_t unit,
			uint64_t *die_off)
{
	if (unit < 0 || (uint64_t)unit >= x->h.nr_units)
		return false;
	*die_off = x->units[unit].die_off;
	return x->units[unit].built == 1;
}

bool a2l_index_unit(const struct a2l_index *x, int64_t unit,
		    struct a2l_cu *out)
{
	const struct a2lx_unit *u;
	size_t i;

	memset(out, 0, sizeof(*out));
	if (unit < 0 || (uint64_t)unit >= x->h.nr_units ||
	    x->units[unit].built != 1)
		return false;
	u = &x->units[unit];
	if (!a2lx_within(u->first_func, u->nr_funcs, x->h.nr_funcs) ||
	    !a2lx_within(u->first_range, u->nr_ranges, x->h.nr_ranges) ||
	    !a2lx_within(u->first_order, u->nr_order, x->h.nr_order))
		return false;
	out->f = mem_array(u->nr_funcs ? u->nr_funcs : 1, sizeof(*out->f));
	out->ranges = mem_array(u->nr_ranges ? 2 * u->nr_ranges : 1,
				sizeof(*out->ranges));
	out->order = mem_array(u->nr_order ? u->nr_order : 1,
			       sizeof(*out->order));
	if (!out->f || !out->ranges || !out->order)
		goto fail;
	out->nr = out->alloc = u->nr_funcs;
	out->nr_ranges = out->alloc_ranges = u->nr_ranges;
	out->nr_order = u->nr_order;
	out->lang = (int)u->lang;
	for (i = 0; i < u->nr_funcs; i++) {
		const struct a2lx_func *s = &x->funcs[u->first_func + i];
		struct a2l_func *f = &out->f[i];

		if (!a2lx_within(s->first_range, s->nr_ranges, u->nr_ranges) ||
		    s->parent < -1 || (s->parent >= 0 &&
				       (uint64_t)s->parent >= u->nr_funcs) ||
		    s->name > x->h.names_len)
			goto fail;
		f->low = s->low;
		f->high = s->high;
		f->high_mark = s->high_mark;
		f->first_range = s->first_range;
		f->nr_ranges = s->nr_ranges;
		f->parent = s->parent;
		f->idx = s->idx;
		f->name = s->name ? x->names + s->name - 1 : NULL;
		f->is_linkage = s->is_linkage != 0;
		f->inlined = s->inlined != 0;
	}
	memcpy(out->ranges, x->ranges + 2 * u->first_range,
	       2 * u->nr_ranges * sizeof(*out->ranges));
	for (i = 0; i < u->nr_order; i++) {
		out->order[i] = x->order[u->first_order + i];
		if (out->order[i] >= u->nr_funcs)
			goto fail;
	}
	return true;
fail:
	a2l_cu_free(out);
	memset(out, 0, sizeof(*out));
	return false;
}

/* The bytes of a stored index, built in memory. */
struct a2lx_out {
	struct strbuf units, funcs, ranges, order, names;
	struct hashmap name_off;  /* name pointer -> offset + 1 */
};

/* The offset + 1 of name in the names (0 for none, or out of memory). */
static uint64_t a2lx_put_name(struct a2lx_out *o, const char *name)
{
	uint64_t off;
	void *v;

	if (!name)
		return 0;
	/* libdw's names point into .debug_str: one pointer per string */
	if (hashmap_get(&o->name_off, (uint64_t)(uintptr_t)name, &v))
		return (uint64_t)(uintptr_t)v;
	off = o->names.len + 1;
	strbuf_add(&o->names, name, strlen(name) + 1);
	if (hashmap_put(&o->name_off, (uint64_t)(uintptr_t)name,
			(void *)(uintptr_t)off) < 0)
		o->names.oom = true;
	return off;
}

static void a2lx_put_unit(struct a2lx_out *o, const struct a2l_cu *cu,
			  uint64_t die_off)
{
	static const struct a2l_cu none;
	struct a2lx_unit u = {
		.first_func = o->funcs.len / sizeof(struct a2lx_func),
		.first_range = o->ranges.len / (2 * sizeof(uint64_t)),
		.first_order = o->order.len / sizeof(uint32_t),
		.die_off = die_off,
		.built = cu != NULL,
	};
	size_t i;

	if (!cu)
		cu = &none;
	u.nr_funcs = cu->nr;
	u.nr_ranges = cu->nr_ranges;
	u.nr_order = cu->nr_order;
	u.lang = cu->lang;
	strbuf_add(&o->units, &u, sizeof(u));
	for (i = 0; i < cu->nr; i++) {
		const struct a2l_func *f = &cu->f[i];
		struct a2lx_func s = {
			.low = f->low, .high = f->high,
			.high_mark = f->high_mark,
			.first_range = f->first_range,
			.nr_ranges = f->nr_ranges,
			.parent = f->parent, .idx = f->idx,
			.name = a2lx_put_name(o, f->name),
			.is_linkage = f->is_linkage, .inlined = f->inlined,
		};

		strbuf_add(&o->funcs, &s, sizeof(s));
	}
	if (cu->nr_ranges)   /* a unit without any has no array */
		strbuf_add(&o->ranges, cu->ranges,
			   2 * cu->nr_ranges * sizeof(*cu->ranges));
	if (cu->nr_order)
		strbuf_add(&o->order, cu->order,
			   cu->nr_order * sizeof(*cu->order));
}

static void a2lx_out_release(struct a2lx_out *o)
{
	strbuf_release(&o->units);
	strbuf_release(&o->funcs);
	strbuf_release(&o->ranges);
	strbuf_release(&o->order);
	strbuf_release(&o->names);
	hashmap_release(&o->name_off);
}

bool a2l_index_begin(const struct a2l_index_src *src,
		     struct dwcache_file *f)
{
	char name[200];

	return a2lx_name(src, name, sizeof(name)) && dwcache_create(f, name);
}

void a2l_index_store(struct dwcache_file *f, const struct a2l_index_src *src,
		     const struct a2l_index_ivl *ivl, size_t nr_ivl,
		     const struct a2l_cu *const *cus, const uint64_t *die_offs,
		     size_t nr_cus)
{
	static const uint8_t zeroes[8];
	struct a2lx_out o;
	struct a2lx_layout l;
	struct a2lx_hdr h;
	size_t i;

	memset(&o, 0, sizeof(o));
	for (i = 0; ivl && i < nr_cus; i++)
		a2lx_put_unit(&o, cus[i], die_offs[i]);
	if (!ivl || o.units.oom || o.funcs.oom || o.ranges.oom ||
	    o.order.oom || o.names.oom) {
		f->ok = false;
		dwcache_finish(f);
		a2lx_out_release(&o);
		return;
	}
	memset(&h, 0, sizeof(h));
	h.nr_ivl = nr_ivl;
	h.nr_units = nr_cus;
	h.nr_funcs = o.funcs.len / sizeof(struct a2lx_func);
	h.nr_ranges = o.ranges.len / (2 * sizeof(uint64_t));
	h.nr_order = o.order.len / sizeof(uint32_t);
	h.names_len = o.names.len;
	a2lx_fill_hdr(&h, src);
	if (!a2lx_layout(&h, &l)) {
		f->ok = false;
	} else {
		dwcache_write(f, &h, sizeof(h), 0);
		dwcache_write(f, ivl, nr_ivl * sizeof(*ivl), l.ivl);
		dwcache_write(f, o.units.buf, o.units.len, l.units);
		dwcache_write(f, o.funcs.buf, o.funcs.len, l.funcs);
		dwcache_write(f, o.ranges.buf, o.ranges.len, l.ranges);
		dwcache_write(f, o.order.buf, o.order.len, l.order);
		dwcache_write(f, zeroes, l.names - l.order - o.order.len,
			      l.order + o.order.len);
		dwcache_write(f, o.names.buf, o.names.len, l.names);
	}
	dwcache_finish(f);
	a2lx_out_release(&o);
}
