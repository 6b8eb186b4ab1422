/*
 * profile_pprof.c - pprof profiles (profile.proto, gzip-compressed or
 * not) as inputs (see profile.h).
 *
 * The message is uncompressed into memory (at most 1 GiB) and read
 * twice: first everything but the samples (strings, sample types,
 * mappings, functions, locations: one symbol location per location,
 * its lines innermost first as profile.proto has them, the last line
 * the function they were inlined into), then one sample at a time.
 * A sample's period is the value of the chosen sample type (--sample-type;
 * else default_sample_type, else the last type, as `go tool pprof` picks,
 * but the last type when that is "samples"), its count the value of the
 * "samples" type (without one, or with --sample-type: the period).  So a
 * CPU profile's count is its samples and its period the CPU time, and
 * --sample-type makes both one type's.  Samples whose period is 0 add
 * nothing and are skipped, and so are negative ones (counted: a
 * difference profile); with all_types only those whose values are all 0
 * are (as `go tool pprof` merges), every type's value in profile_info.
 * Labels thread, pid and tid (restack's own) give the thread; without
 * them the thread is named after the first mapping's file.  Kernel
 * locations are those of a mapping named "[kernel...]"; restack's
 * "[truncated: REASON]" outermost location is the stack's end reason
 * again.  The period type, period, time and duration go to profile_info
 * as they are.
 */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "common/mem.h"
#include "formats/pbufdec.h"
#include "formats/profile_internal.h"

#define PPIN_MAX_RAW ((size_t)1 << 30)

struct ppin_func {
	const char *name, *file;
};

struct ppin_map {
	const char *file;
	uint8_t build_id[20];
	uint8_t build_id_size;
	bool kernel;
};

struct ppin_loc {
	const struct sym_loc *loc;
	bool kernel;
	uint8_t end;              /* a marker location: its end reason */
};

struct pprof_in {
	uint8_t *raw;             /* the uncompressed message */
	size_t len;
	const char **str;         /* string table */
	size_t nr_str, alloc_str;
	struct hashmap funcs, maps, locs;  /* id -> ppin_func/map/loc */
	int64_t *types;           /* sample types: string ids (type, unit) */
	size_t nr_types, alloc_types;
	int64_t default_type;
	int64_t period_type[2];   /* string ids: type, unit */
	const char *first_map;    /* the first mapping's file */
	size_t chosen, count_at;  /* value indexes: period's and count's */
	struct pbufdec top;       /* the second read */
	int64_t *values;
	size_t alloc_values;
	const char **names;       /* profile_info.types, then .units */
};

/* --- uncompressing -------------------------------------------------- */

static int ppin_inflate(struct profile *p, struct pprof_in *in)
{
	z_stream z;
	size_t alloc = 0;
	int zrc;

	memset(&z, 0, sizeof(z));
	if (inflateInit2(&z, 15 + 32) != Z_OK)
		return err_set(&p->err, ERR_NOMEM, ERR_NO_OFF, "zlib");
	z.next_in = (Bytef *)p->data;
	z.avail_in = (uInt)MIN(p->len, (size_t)UINT32_MAX);
	do {
		if (in->len == alloc) {
			if (alloc >= PPIN_MAX_RAW) {
				inflateEnd(&z);
				return err_set(&p->err, ERR_UNSUPPORTED,
					       ERR_NO_OFF, "pprof profile "
					       "of over 1 GiB uncompressed");
			}
			if (mem_grow(&in->raw, &alloc, 1,
				     MAX(alloc * 2, (size_t)1 << 16)) < 0) {
				inflateEnd(&z);
				return err_set(&p->err, ERR_NOMEM, ERR_NO_OFF,
					       "pprof profile");
			}
		}
		z.next_out = in->raw + in->len;
		z.avail_out = (uInt)MIN(alloc - in->len, (size_t)UINT32_MAX);
		zrc = inflate(&z, Z_NO_FLUSH);
		in->len = (size_t)(z.next_out - in->raw);
	} while (zrc == Z_OK);
	if (zrc != Z_STREAM_END) {
		uint64_t off = (uint64_t)((const char *)z.next_in - p->data);

		inflateEnd(&z);
		return err_set(&p->err, zrc == Z_BUF_ERROR ? ERR_TRUNCATED :
			       ERR_CORRUPT, off, "gzip data %s",
			       zrc == Z_BUF_ERROR ? "ends early" :
			       "is damaged");
	}
	inflateEnd(&z);
	return 0;
}

/* --- the first read --------------------------------------------------- */

/* String id v as text; NULL (error set) when out of the table. */
static const char *ppin_str(struct profile *p, uint64_t v, uint64_t off)
{
	struct pprof_in *in = p->pp;

	if (v >= in->nr_str) {
		err_set(&p->err, ERR_CORRUPT, off,
			"string index %llu beyond the string table's %zu",
			(unsigned long long)v, in->nr_str);
		return NULL;
	}
	return in->str[v];
}

static int ppin_put(struct profile *p, struct hashmap *m, uint64_t id,
		    void *v, uint64_t off)
{
	void *old;

	if (hashmap_get(m, id, &old))
		return err_set(&p->err, ERR_CORRUPT, off, "id %llu given twice",
			       (unsigned long long)id);
	if (hashmap_put(m, id, v) < 0)
		return err_set(&p->err, ERR_NOMEM, ERR_NO_OFF, "pprof tables");
	return 0;
}

/* A ValueType message f of d: its type's and unit's string ids. */
static int ppin_value_type(struct profile *p, struct pbufdec *d,
			   const struct pbuf_field *f, int64_t *tu)
{
	struct pbufdec v = pbufdec_sub(d, f);
	struct pbuf_field g;
	int rc;

	tu[0] = tu[1] = 0;
	while ((rc = pbufdec_next(&v, &g, &p->err)) > 0)
		if ((g.num == 1 || g.num == 2) && g.wire == 0)
			tu[g.num - 1] = (int64_t)g.v;
	return rc;
}

/* Pass 1a: the string table and sample types (ids need them). */
static int ppin_strings(struct profile *p)
{
	struct pprof_in *in = p->pp;
	struct pbufdec d = pbufdec_make(in->raw, in->raw, in->len);
	struct pbuf_field f;
	int rc;

	while ((rc = pbufdec_next(&d, &f, &p->err)) > 0) {
		if (f.num == 6 && f.wire == 2) {
			char *s = arena_strndup(&p->arena, (const char *)f.data,
						f.len);

			if (!s || mem_grow(&in->str, &in->alloc_str,
					   sizeof(*in->str), in->nr_str + 1) < 0)
				return err_set(&p->err, ERR_NOMEM, ERR_NO_OFF,
					       "pprof strings");
			/* a NUL inside ends the name */
			in->str[in->nr_str++] = s;
		} else if (f.num == 1 && f.wire == 2) {
			int64_t tu[2];

			if (ppin_value_type(p, &d, &f, tu) < 0)
				return -1;
			if (mem_grow(&in->types, &in->alloc_types,
				     2 * sizeof(*in->types),
				     in->nr_types + 1) < 0)
				return err_set(&p->err, ERR_NOMEM, ERR_NO_OFF,
					       "pprof sample types");
			in->types[2 * in->nr_types] = tu[0];
			in->types[2 * in->nr_types + 1] = tu[1];
			in->nr_types++;
		} else if (f.num == 14 && f.wire == 0) {
			in->default_type = (int64_t)f.v;
		} else if (f.num == 11 && f.wire == 2) {
			if (ppin_value_type(p, &d, &f, in->period_type) < 0)
				return -1;
		} else if (f.num == 12 && f.wire == 0) {
			p->info.period = (int64_t)f.v;
		} else if (f.num == 9 && f.wire == 0) {
			p->info.time_nanos = (int64_t)f.v;
		} else if (f.num == 10 && f.wire == 0) {
			p->info.duration_nanos = (int64_t)f.v;
		}
	}
	if (rc < 0)
		return -1;
	if (in->nr_str == 0 || in->str[0][0])
		return err_set(&p->err, ERR_CORRUPT, 0, "pprof string table "
			       "is empty or does not start with \"\"");
	if (in->nr_types == 0)
		return err_set(&p->err, ERR_CORRUPT, 0,
			       "pprof profile without sample types");
	return 0;
}

static int ppin_function(struct profile *p, struct pbufdec *d)
{
	struct ppin_func *fn = arena_alloc(&p->arena, sizeof(*fn));
	struct pbuf_field f;
	uint64_t id = 0, off = (uint64_t)(d->p - d->base);
	int rc;

	if (!fn)
		return err_set(&p->err, ERR_NOMEM, ERR_NO_OFF, "functions");
	fn->name = fn->file = "";
	while ((rc = pbufdec_next(d, &f, &p->err)) > 0) {
		if (f.wire != 0)
			continue;
		if (f.num == 1)
			id = f.v;
		else if (f.num == 2 && !(fn->name = ppin_str(p, f.v, f.off)))
			return -1;
		else if (f.num == 4 && !(fn->file = ppin_str(p, f.v, f.off)))
			return -1;
	}
	if (rc < 0)
		return -1;
	return ppin_put(p, &p->pp->funcs, id, fn, off);
}

static int ppin_hex(const char *s, uint8_t *out)
{
	size_t n = strlen(s), i;

	if (n == 0 || n % 2 || n > 40)
		return 0;
	for (i = 0; i < n; i++) {
		char c = s[i];
		int v = c >= '0' && c <= '9' ? c - '0' :
			c >= 'a' && c <= 'f' ? c - 'a' + 10 :
			c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;

		if (v < 0)
			return 0;
		out[i / 2] = (uint8_t)(i % 2 ? out[i / 2] << 4 | v : v);
	}
	return (int)(n / 2);
}

static int ppin_mapping(struct profile *p, struct pbufdec *d)
{
	struct ppin_map *m = arena_alloc(&p->arena, sizeof(*m));
	struct pbuf_field f;
	uint64_t id = 0, off = (uint64_t)(d->p - d->base);
	const char *bid = "";
	int rc;

	if (!m)
		return err_set(&p->err, ERR_NOMEM, ERR_NO_OFF, "mappings");
	m->file = "";
	while ((rc = pbufdec_next(d, &f, &p->err)) > 0) {
		if (f.wire != 0)
			continue;
		if (f.num == 1)
			id = f.v;
		else if (f.num == 5 && !(m->file = ppin_str(p, f.v, f.off)))
			return -1;
		else if (f.num == 6 && !(bid = ppin_str(p, f.v, f.off)))
			return -1;
	}
	if (rc < 0)
		return -1;
	m->build_id_size = (uint8_t)ppin_hex(bid, m->build_id);
	m->kernel = !strncmp(m->file, "[kernel", 7);
	if (!p->pp->first_map && m->file[0])
		p->pp->first_map = m->file;
	return ppin_put(p, &p->pp->maps, id, m, off);
}

/* A location's lines: count them, then fill l's entries.  0, or -1. */
static int ppin_lines(struct profile *p, struct pbufdec *d,
		      struct sym_loc *l, uint16_t *nr)
{
	struct pbufdec v = *d;
	struct pbuf_field f;
	int rc;

	*nr = 0;
	while ((rc = pbufdec_next(&v, &f, &p->err)) > 0) {
		struct pbufdec ld = pbufdec_sub(&v, &f);
		struct pbuf_field g;
		const struct ppin_func *fn = NULL;
		uint64_t line = 0;
		void *x;

		if (f.num != 4 || f.wire != 2)
			continue;
		if (*nr == UINT16_MAX)
			return err_set(&p->err, ERR_UNSUPPORTED, f.off,
				       "location of over 65535 lines");
		while ((rc = pbufdec_next(&ld, &g, &p->err)) > 0) {
			if (g.wire != 0)
				continue;
			if (g.num == 1) {
				if (!hashmap_get(&p->pp->funcs, g.v, &x))
					return err_set(&p->err, ERR_CORRUPT,
						       g.off, "no function %llu",
						       (unsigned long long)g.v);
				fn = x;
			} else if (g.num == 2) {
				line = g.v;
			}
		}
		if (rc < 0)
			return -1;
		if (l) {
			struct sym_entry *e = &l->e[*nr];

			e->name = fn && fn->name[0] ? fn->name : NULL;
			e->file = fn && fn->file[0] ? fn->file : NULL;
			e->line = line > UINT32_MAX ? 0 : (uint32_t)line;
		}
		(*nr)++;
	}
	return rc;
}

/* Pass 1c (functions and mappings known): one location. */
static int ppin_location(struct profile *p, struct pbufdec *d)
{
	struct ppin_loc *pl = arena_alloc(&p->arena, sizeof(*pl));
	const struct ppin_map *m = NULL;
	uint64_t id = 0, map = 0, addr = 0, off = (uint64_t)(d->p - d->base);
	struct pbufdec v = *d;
	struct pbuf_field f;
	struct sym_loc *l;
	uint16_t nr, i;
	void *x;
	int rc;

	if (!pl)
		return err_set(&p->err, ERR_NOMEM, ERR_NO_OFF, "locations");
	while ((rc = pbufdec_next(&v, &f, &p->err)) > 0) {
		if (f.wire != 0)
			continue;
		if (f.num == 1)
			id = f.v;
		else if (f.num == 2)
			map = f.v;
		else if (f.num == 3)
			addr = f.v;
	}
	if (rc < 0 || ppin_lines(p, d, NULL, &nr) < 0)
		return -1;
	if (map && !hashmap_get(&p->pp->maps, map, &x))
		return err_set(&p->err, ERR_CORRUPT, off, "no mapping %llu",
			       (unsigned long long)map);
	m = map ? x : NULL;
	l = arena_alloc(&p->arena, sizeof(*l) +
			(nr ? nr : 1) * sizeof(l->e[0]));
	if (!l)
		return err_set(&p->err, ERR_NOMEM, ERR_NO_OFF, "locations");
	if (nr && ppin_lines(p, d, l, &nr) < 0)
		return -1;
	l->nr = nr ? nr : 1;
	for (i = 0; i + 1 < l->nr; i++)
		l->e[i].inlined = true;
	l->rel = addr;
	if (m && m->file[0]) {
		l->module = m->file;
		l->kind = m->kernel ? SYM_KERNEL : SYM_USER;
		l->build_id_size = m->build_id_size;
		l->build_id = m->build_id_size ? m->build_id : NULL;
	} else {
		l->kind = SYM_UNKNOWN;
	}
	pl->loc = l;
	pl->kernel = m && m->kernel;
	pl->end = END_ROOT;
	if (!m && l->nr == 1 && l->e[0].name)
		pl->end = (uint8_t)profile_marker(l->e[0].name,
						  strlen(l->e[0].name));
	return ppin_put(p, &p->pp->locs, id, pl, off);
}

/* Pass 1b and 1c: fields num (functions, mappings, then locations). */
static int ppin_tables(struct profile *p, uint32_t num,
		       int (*fn)(struct profile *, struct pbufdec *))
{
	struct pprof_in *in = p->pp;
	struct pbufdec d = pbufdec_make(in->raw, in->raw, in->len);
	struct pbuf_field f;
	int rc;

	while ((rc = pbufdec_next(&d, &f, &p->err)) > 0) {
		struct pbufdec sub = pbufdec_sub(&d, &f);

		if (f.num == num && f.wire == 2 && fn(p, &sub) < 0)
			return -1;
	}
	return rc;
}

/* The sample type index named name, or SIZE_MAX. */
static size_t ppin_type(const struct pprof_in *in, const char *name)
{
	size_t i;

	for (i = 0; i < in->nr_types; i++) {
		int64_t t = in->types[2 * i];

		if (t >= 0 && (size_t)t < in->nr_str &&
		    !strcmp(in->str[t], name))
			return i;
	}
	return SIZE_MAX;
}

static const char *ppin_type_str(const struct pprof_in *in, size_t i,
				  unsigned what)
{
	int64_t t = in->types[2 * i + what];

	return t >= 0 && (size_t)t < in->nr_str ? in->str[t] : "";
}

/* profile_info's types, units and default. */
static int ppin_info_types(struct profile *p)
{
	struct pprof_in *in = p->pp;
	size_t i;

	in->names = mem_zalloc(2 * in->nr_types, sizeof(*in->names));
	if (!in->names)
		return err_set(&p->err, ERR_NOMEM, ERR_NO_OFF, "pprof types");
	for (i = 0; i < in->nr_types; i++) {
		in->names[i] = ppin_type_str(in, i, 0);
		in->names[in->nr_types + i] = ppin_type_str(in, i, 1);
	}
	p->info.nr_types = in->nr_types;
	p->info.types = in->names;
	p->info.units = in->names + in->nr_types;
	if (in->default_type > 0 && (size_t)in->default_type < in->nr_str)
		p->info.default_type = in->str[in->default_type];
	for (i = 0; i < 2; i++)
		if (in->period_type[i] > 0 &&
		    (size_t)in->period_type[i] < in->nr_str)
			p->info.period_type[i] = in->str[in->period_type[i]];
	return 0;
}

int profile_pprof_open(struct profile *p)
{
	struct pprof_in *in = mem_zalloc(1, sizeof(*in));
	size_t samples;

	if (!in)
		return err_set(&p->err, ERR_NOMEM, ERR_NO_OFF, "pprof");
	p->pp = in;
	if ((unsigned char)p->data[0] == 0x1f && p->len > 1 &&
	    (unsigned char)p->data[1] == 0x8b) {
		if (ppin_inflate(p, in) < 0)
			return -1;
	} else {
		size_t alloc = 0;

		if (mem_grow(&in->raw, &alloc, 1, p->len + 1) < 0)
			return err_set(&p->err, ERR_NOMEM, ERR_NO_OFF, "pprof");
		memcpy(in->raw, p->data, p->len);
		in->len = p->len;
	}
	if (ppin_strings(p) < 0 || ppin_tables(p, 5, ppin_function) < 0 ||
	    ppin_tables(p, 3, ppin_mapping) < 0 ||
	    ppin_tables(p, 4, ppin_location) < 0)
		return -1;
	if (p->opts.sample_type) {
		in->chosen = ppin_type(in, p->opts.sample_type);
		if (in->chosen == SIZE_MAX)
			return err_set(&p->err, ERR_USAGE, ERR_NO_OFF,
				       "no sample type '%s' in the profile",
				       p->opts.sample_type);
	} else {
		in->chosen = in->nr_types - 1;
		if (in->default_type > 0 &&
		    (size_t)in->default_type < in->nr_str &&
		    ppin_type(in, in->str[in->default_type]) != SIZE_MAX)
			in->chosen = ppin_type(in, in->str[in->default_type]);
	}
	/* by default, the samples count and the other type weighs */
	samples = ppin_type(in, "samples");
	in->count_at = samples == SIZE_MAX || p->opts.sample_type ?
		       in->chosen : samples;
	if (!p->opts.sample_type && in->chosen == samples)
		in->chosen = in->nr_types - 1;
	p->info.type = ppin_type_str(in, in->chosen, 0);
	p->info.unit = ppin_type_str(in, in->chosen, 1);
	if (ppin_info_types(p) < 0)
		return -1;
	in->top = pbufdec_make(in->raw, in->raw, in->len);
	return 0;
}

/* One sample message into p->s.  1, 0 (skipped: weight <= 0), -1. */
static int ppin_sample(struct profile *p, struct pbufdec *d)
{
	struct pprof_in *in = p->pp;
	struct pbufdec v = *d;
	struct pbuf_field f;
	size_t nv = 0, n = 0, pos, nk;
	uint64_t x;
	int rc;

	p->s = (struct rsample){ .cpu = -1, .event = p->info.type };
	p->s.comm = in->first_map ? in->first_map : "[unknown]";
	if (strrchr(p->s.comm, '/'))
		p->s.comm = strrchr(p->s.comm, '/') + 1;
	while ((rc = pbufdec_next(&v, &f, &p->err)) > 0) {
		pos = 0;
		if (f.num == 1) {
			while ((rc = pbufdec_packed(&v, &f, &pos, &x,
						    &p->err)) > 0) {
				void *l;

				if (!hashmap_get(&in->locs, x, &l))
					return err_set(&p->err, ERR_CORRUPT,
						       f.off, "no location "
						       "%llu",
						       (unsigned long long)x);
				if (profile_frames(p, n + 1) < 0)
					return -1;
				/* the ppin_loc, for now */
				p->frames[n++].loc = l;
			}
		} else if (f.num == 2) {
			while ((rc = pbufdec_packed(&v, &f, &pos, &x,
						    &p->err)) > 0) {
				if (mem_grow(&in->values, &in->alloc_values,
					     sizeof(*in->values), nv + 1) < 0)
					return err_set(&p->err, ERR_NOMEM,
						       ERR_NO_OFF, "values");
				in->values[nv++] = (int64_t)x;
			}
		} else if (f.num == 3 && f.wire == 2) {
			struct pbufdec ld = pbufdec_sub(&v, &f);
			struct pbuf_field g;
			const char *key = NULL, *str = NULL;
			int64_t num = 0;

			while ((rc = pbufdec_next(&ld, &g, &p->err)) > 0) {
				if (g.wire != 0)
					continue;
				if (g.num == 1 &&
				    !(key = ppin_str(p, g.v, g.off)))
					return -1;
				if (g.num == 2 &&
				    !(str = ppin_str(p, g.v, g.off)))
					return -1;
				if (g.num == 3)
					num = (int64_t)g.v;
			}
			if (key && str && !strcmp(key, "thread"))
				p->s.comm = str;
			else if (key && !str && !strcmp(key, "pid"))
				p->s.pid = (int32_t)num;
			else if (key && !str && !strcmp(key, "tid"))
				p->s.tid = (int32_t)num;
		}
		if (rc < 0)
			return -1;
	}
	if (rc < 0)
		return -1;
	if (nv != in->nr_types)
		return err_set(&p->err, ERR_CORRUPT, (uint64_t)(d->p - d->base),
			       "sample with %zu values for %zu sample types",
			       nv, in->nr_types);
	p->info.values = in->values;
	if (p->opts.all_types) {
		for (pos = 0; pos < nv && !in->values[pos]; pos++)
			;
		if (pos == nv)
			return 0;
	} else if (in->values[in->chosen] <= 0) {
		if (in->values[in->chosen] < 0)
			p->info.skipped++;
		return 0;
	}
	p->s.period = in->values[in->chosen] > 0 ?
		      (uint64_t)in->values[in->chosen] : 0;
	p->s.count = in->values[in->count_at] > 0 ?
		     (uint64_t)in->values[in->count_at] : 1;
	/* the marker location, outermost, is the end reason */
	if (n && ((const struct ppin_loc *)p->frames[n - 1].loc)->end !=
		 END_ROOT) {
		p->s.end = ((const struct ppin_loc *)p->frames[n - 1].loc)->end;
		n--;
	}
	for (nk = 0; nk < n &&
	     ((const struct ppin_loc *)p->frames[nk].loc)->kernel; nk++)
		;
	for (pos = 0; pos < n; pos++) {
		const struct ppin_loc *pl = (const void *)p->frames[pos].loc;

		p->frames[pos].loc = pl->loc;
		p->frames[pos].pc = pl->loc->rel;
		p->frames[pos].origin = pos < nk ? FRAME_KERNEL :
					FRAME_CFI_EH;
	}
	p->s.frames = p->frames;
	p->s.nr_frames = (uint32_t)n;
	p->s.nr_kernel = (uint32_t)nk;
	if (p->s.end != END_ROOT && nk == n)
		p->s.end = END_ROOT;
	return 1;
}

int profile_pprof_next(struct profile *p)
{
	struct pprof_in *in = p->pp;
	struct pbuf_field f;
	int rc;

	while ((rc = pbufdec_next(&in->top, &f, &p->err)) > 0) {
		struct pbufdec sub = pbufdec_sub(&in->top, &f);

		if (f.num != 2 || f.wire != 2)
			continue;
		rc = ppin_sample(p, &sub);
		if (rc != 0)
			return rc;
	}
	return rc;
}

void profile_pprof_free(struct profile *p)
{
	struct pprof_in *in = p->pp;

	if (!in)
		return;
	free(in->raw);
	free(in->str);
	free(in->types);
	free(in->values);
	free(in->names);
	hashmap_release(&in->funcs);
	hashmap_release(&in->maps);
	hashmap_release(&in->locs);
	free(in);
}
