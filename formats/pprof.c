/*
 * pprof.c - the pprof writer (see pprof.h).
 *
 * Samples are aggregated by (locations, thread) while the capture is
 * read; everything they refer to is copied, since the symbolizer that
 * named the frames is gone when the profile is written.  At the end,
 * mappings, functions, locations and samples are sorted and numbered,
 * the message is encoded with pbuf.c (field numbers from pprof's
 * profile.proto) and compressed with zlib's gzip wrapper.
 */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "formats/fdout.h"
#include "formats/pbuf.h"
#include "formats/pprof.h"

#include "common/arena.h"
#include "common/hashmap.h"
#include "common/mem.h"
#include "common/strtab.h"

/* profile.proto field numbers */
enum {
	PP_PROFILE_SAMPLE_TYPE = 1,
	PP_PROFILE_SAMPLE = 2,
	PP_PROFILE_MAPPING = 3,
	PP_PROFILE_LOCATION = 4,
	PP_PROFILE_FUNCTION = 5,
	PP_PROFILE_STRING_TABLE = 6,
	PP_PROFILE_TIME_NANOS = 9,
	PP_PROFILE_DURATION_NANOS = 10,
	PP_PROFILE_PERIOD_TYPE = 11,
	PP_PROFILE_PERIOD = 12,
	PP_PROFILE_DEFAULT_SAMPLE_TYPE = 14,

	PP_VALUETYPE_TYPE = 1,
	PP_VALUETYPE_UNIT = 2,

	PP_SAMPLE_LOCATION_ID = 1,
	PP_SAMPLE_VALUE = 2,
	PP_SAMPLE_LABEL = 3,

	PP_LABEL_KEY = 1,
	PP_LABEL_STR = 2,
	PP_LABEL_NUM = 3,

	PP_MAPPING_ID = 1,
	PP_MAPPING_MEMORY_START = 2,
	PP_MAPPING_MEMORY_LIMIT = 3,
	PP_MAPPING_FILENAME = 5,
	PP_MAPPING_BUILD_ID = 6,
	PP_MAPPING_HAS_FUNCTIONS = 7,
	PP_MAPPING_HAS_INLINE_FRAMES = 10,

	PP_LOCATION_ID = 1,
	PP_LOCATION_MAPPING_ID = 2,
	PP_LOCATION_ADDRESS = 3,
	PP_LOCATION_LINE = 4,

	PP_LINE_FUNCTION_ID = 1,
	PP_LINE_LINE = 2,

	PP_FUNCTION_ID = 1,
	PP_FUNCTION_NAME = 2,
	PP_FUNCTION_SYSTEM_NAME = 3,
	PP_FUNCTION_FILENAME = 4,
};

#define PP_NONE UINT32_MAX     /* no string */

struct pp_map {
	uint32_t path;            /* names id */
	uint8_t build_id_size;
	uint8_t build_id[20];
	bool funcs, inl;          /* some location has lines, several lines */
	uint64_t lo, hi;          /* addresses seen, [lo, hi) */
	uint64_t id;
};

struct pp_func {
	uint32_t name, file;      /* names ids */
	uint64_t id;
};

struct pp_line {
	struct pp_func *fn;
	uint32_t line;
};

struct pp_loc {
	struct pp_loc *next_same; /* chain in pprof.loc_content */
	struct pp_map *map;       /* NULL: no module (unknown, marker) */
	uint64_t addr;
	uint32_t name;            /* without a map: "[unknown]" or marker */
	uint16_t nr_lines;
	uint64_t id;
	struct pp_line lines[];   /* innermost first */
};

struct pp_sample {
	struct pp_sample *next;   /* same hash */
	int32_t pid, tid;
	uint32_t comm, marker;    /* names ids; marker: the end reason of a
				   * truncated stack, else PP_NONE */
	uint64_t count, period;
	uint64_t off_cpu;         /* periods of off-CPU samples (profile) */
	bool base;                /* pprof_add_base(): written negative */
	int64_t *vals;            /* pprof_add_values()'s sums, or NULL */
	uint32_t nr;
	struct pp_loc *locs[];    /* leaf first */
};

/* A growable array of pointers. */
struct pp_vec {
	void **v;
	size_t nr, alloc;
};

struct pprof {
	struct pprof_opts opts;
	struct strtab names;      /* every string the profile mentions */
	struct arena arena;       /* maps, funcs, locs, samples */
	struct hashmap maps;      /* path id -> pp_map */
	struct hashmap funcs;     /* name id << 32 | file id -> pp_func */
	struct hashmap locs;      /* sym_loc pointer -> pp_loc */
	struct hashmap markers;   /* marker (a constant) -> pp_loc */
	struct hashmap loc_content; /* hash of a location's contents ->
				   * pp_loc chain: symbol locations of
				   * different symbolizers (workers) that say
				   * the same thing are one location */
	struct hashmap samples;   /* hash -> pp_sample chain */
	struct pp_vec map_v, func_v, loc_v, sample_v;
	struct pp_loc **stack;    /* scratch: the sample's locations */
	char *scratch;            /* a location being looked up */
	size_t scratch_alloc;
	size_t stack_alloc;
	uint32_t event;           /* the first sample's event name */
	uint32_t type, unit;      /* pprof_set_type()'s, else PP_NONE */
	uint32_t *types;          /* pprof_set_types(): names ids, the
				   * types then the units */
	size_t nr_types;          /* 0: samples and the period */
	uint32_t dflt;            /* pprof_set_types()'s default, PP_NONE */
	uint32_t period_type[2];  /* pprof_add_header()'s, else PP_NONE */
	int64_t period, time, duration; /* pprof_add_header()'s */
	bool any;
	uint64_t t_min, t_max;
};

static int pp_push(struct pp_vec *v, void *p)
{
	if (mem_grow(&v->v, &v->alloc, sizeof(*v->v), v->nr + 1) < 0)
		return -1;
	v->v[v->nr++] = p;
	return 0;
}

struct pprof *pprof_new(const struct pprof_opts *opts)
{
	struct pprof *p = mem_zalloc(1, sizeof(*p));

	if (!p)
		return NULL;
	if (opts)
		p->opts = *opts;
	p->event = PP_NONE;
	p->type = p->unit = p->dflt = PP_NONE;
	p->period_type[0] = p->period_type[1] = PP_NONE;
	/* Id 0 is the empty string, as in the profile's string table. */
	if (strtab_add(&p->names, "") < 0) {
		free(p);
		return NULL;
	}
	return p;
}

void pprof_free(struct pprof *p)
{
	if (!p)
		return;
	strtab_release(&p->names);
	arena_release(&p->arena);
	hashmap_release(&p->maps);
	hashmap_release(&p->funcs);
	hashmap_release(&p->locs);
	hashmap_release(&p->markers);
	hashmap_release(&p->loc_content);
	hashmap_release(&p->samples);
	free(p->map_v.v);
	free(p->func_v.v);
	free(p->loc_v.v);
	free(p->sample_v.v);
	free(p->types);
	free(p->stack);
	free(p->scratch);
	free(p);
}

/* names id of s, or PP_NONE when out of memory. */
static uint32_t pp_name(struct pprof *p, const char *s)
{
	int64_t id = strtab_add(&p->names, s ? s : "");

	return id < 0 ? PP_NONE : (uint32_t)id;
}

static struct pp_map *pp_map_get(struct pprof *p, const struct sym_loc *l)
{
	uint32_t path = pp_name(p, l->module);
	struct pp_map *m;
	void *v;

	if (path == PP_NONE)
		return NULL;
	if (hashmap_get(&p->maps, path, &v))
		return v;
	m = arena_alloc(&p->arena, sizeof(*m));
	if (!m || hashmap_put(&p->maps, path, m) < 0 || pp_push(&p->map_v, m))
		return NULL;
	m->path = path;
	if (l->build_id && l->build_id_size <= sizeof(m->build_id)) {
		m->build_id_size = l->build_id_size;
		memcpy(m->build_id, l->build_id, l->build_id_size);
	}
	m->lo = UINT64_MAX;
	return m;
}

static struct pp_func *pp_func_get(struct pprof *p, const struct sym_entry *e)
{
	uint32_t name = pp_name(p, e->name), file = pp_name(p, e->file);
	uint64_t key = (uint64_t)name << 32 | file;
	struct pp_func *f;
	void *v;

	if (name == PP_NONE || file == PP_NONE)
		return NULL;
	if (hashmap_get(&p->funcs, key, &v))
		return v;
	f = arena_alloc(&p->arena, sizeof(*f));
	if (!f || hashmap_put(&p->funcs, key, f) < 0 || pp_push(&p->func_v, f))
		return NULL;
	f->name = name;
	f->file = file;
	return f;
}

static uint64_t pp_loc_hash(const struct pp_loc *loc)
{
	uint64_t h = hashmap_mix((uintptr_t)loc->map ^ loc->addr);
	unsigned i;

	h = hashmap_mix(h ^ loc->name ^ ((uint64_t)loc->nr_lines << 32));
	for (i = 0; i < loc->nr_lines; i++)
		h = hashmap_mix(h ^ (uintptr_t)loc->lines[i].fn ^
				((uint64_t)loc->lines[i].line << 40));
	return h;
}

static bool pp_loc_same(const struct pp_loc *a, const struct pp_loc *b)
{
	unsigned i;

	if (a->map != b->map || a->addr != b->addr || a->name != b->name ||
	    a->nr_lines != b->nr_lines)
		return false;
	for (i = 0; i < a->nr_lines; i++)
		if (a->lines[i].fn != b->lines[i].fn ||
		    a->lines[i].line != b->lines[i].line)
			return false;
	return true;
}

/*
 * The location of a frame's symbols l, made on first sight: one per
 * distinct contents (mapping, address, lines), whichever symbolizer made
 * l.
 */
static struct pp_loc *pp_loc_get(struct pprof *p, const struct sym_loc *l)
{
	struct pp_loc *loc, *same;
	unsigned i, n = 0;
	uint64_t h;
	void *v;

	if (hashmap_get(&p->locs, (uint64_t)(uintptr_t)l, &v))
		return v;
	for (i = 0; i < l->nr; i++)
		n += l->e[i].name != NULL;
	/* built in scratch memory: kept only when no location says the
	 * same (so that merged inputs, whose symbol locations are all new,
	 * take no memory for the locations seen before) */
	if (mem_grow(&p->scratch, &p->scratch_alloc, 1,
		     sizeof(*loc) + n * sizeof(loc->lines[0])) < 0)
		return NULL;
	loc = (struct pp_loc *)(void *)p->scratch;
	memset(loc, 0, sizeof(*loc));
	if (l->kind == SYM_UNKNOWN || !l->module) {
		loc->name = pp_name(p, "[unknown]");
		if (loc->name == PP_NONE)
			return NULL;
	} else {
		loc->map = pp_map_get(p, l);
		if (!loc->map)
			return NULL;
		loc->addr = l->rel;
	}
	for (i = 0; i < l->nr; i++) {
		struct pp_line *ln;

		if (!l->e[i].name)
			continue;
		ln = &loc->lines[loc->nr_lines++];
		ln->fn = pp_func_get(p, &l->e[i]);
		ln->line = l->e[i].line;
		if (!ln->fn)
			return NULL;
	}
	h = pp_loc_hash(loc);
	for (same = hashmap_get(&p->loc_content, h, &v) ? v : NULL; same;
	     same = same->next_same)
		if (pp_loc_same(same, loc))
			break;
	if (same) {
		loc = same;
	} else {
		struct pp_loc *copy = arena_alloc(&p->arena, sizeof(*loc) +
						  n * sizeof(loc->lines[0]));

		if (!copy)
			return NULL;
		memcpy(copy, loc, sizeof(*loc) + n * sizeof(loc->lines[0]));
		loc = copy;
		if (loc->map) {
			loc->map->lo = MIN(loc->map->lo, l->rel);
			loc->map->hi = MAX(loc->map->hi, l->rel + 1);
			loc->map->funcs |= n > 0;
			loc->map->inl |= n > 1;
		}
		loc->next_same = hashmap_get(&p->loc_content, h, &v) ? v : NULL;
		if (hashmap_put(&p->loc_content, h, loc) < 0 ||
		    pp_push(&p->loc_v, loc) < 0)
			return NULL;
	}
	if (hashmap_put(&p->locs, (uint64_t)(uintptr_t)l, loc) < 0)
		return NULL;
	return loc;
}

/* The pseudo-location of a "[truncated: REASON]" marker. */
static struct pp_loc *pp_marker_get(struct pprof *p, const char *marker)
{
	struct pp_loc *loc;
	struct sym_entry e = { .name = marker };
	void *v;

	if (hashmap_get(&p->markers, (uint64_t)(uintptr_t)marker, &v))
		return v;
	loc = arena_alloc(&p->arena, sizeof(*loc) + sizeof(loc->lines[0]));
	if (!loc)
		return NULL;
	loc->name = pp_name(p, marker);
	loc->nr_lines = 1;
	loc->lines[0].fn = pp_func_get(p, &e);
	if (loc->name == PP_NONE || !loc->lines[0].fn ||
	    hashmap_put(&p->markers, (uint64_t)(uintptr_t)marker, loc) < 0 ||
	    pp_push(&p->loc_v, loc) < 0)
		return NULL;
	return loc;
}

static uint64_t pp_sample_hash(struct pp_loc *const *locs, uint32_t nr,
			       int32_t pid, int32_t tid, uint32_t comm)
{
	uint64_t h = hashmap_mix((uint64_t)(uint32_t)pid << 32 |
				 (uint32_t)tid) ^ comm;
	uint32_t i;

	for (i = 0; i < nr; i++)
		h = hashmap_mix(h ^ (uint64_t)(uintptr_t)locs[i]);
	return h;
}

static int pp_add(struct pprof *p, const struct rsample *s, bool base,
		  const int64_t *vals);

int pprof_add(struct pprof *p, const struct rsample *s)
{
	return pp_add(p, s, false, NULL);
}

int pprof_add_base(struct pprof *p, const struct rsample *s)
{
	return pp_add(p, s, true, NULL);
}

int pprof_add_values(struct pprof *p, const struct rsample *s,
		     const int64_t *vals)
{
	return pp_add(p, s, false, vals);
}

/* Adds n values vals to sums (two's complement: a sum out of int64's
 * range wraps, as Go's does). */
static void pp_sum(int64_t *sums, const int64_t *vals, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		sums[i] = (int64_t)((uint64_t)sums[i] + (uint64_t)vals[i]);
}

static int pp_add(struct pprof *p, const struct rsample *s, bool base,
		  const int64_t *vals)
{
	const char *marker = rsample_marker(s);
	uint32_t nr = 0, i, comm = pp_name(p, s->comm);
	struct pp_sample *smp, *first = NULL;
	uint64_t h;
	void *v;

	if (comm == PP_NONE)
		return -1;
	if (!p->any) {
		p->event = pp_name(p, s->event ? s->event : "");
		if (p->event == PP_NONE)
			return -1;
		p->t_min = p->t_max = s->time;
		p->any = true;
	}
	p->t_min = MIN(p->t_min, s->time);
	p->t_max = MAX(p->t_max, s->time);
	if (mem_grow(&p->stack, &p->stack_alloc, sizeof(*p->stack),
		     (size_t)s->nr_frames + 1) < 0)
		return -1;
	for (i = 0; i < s->nr_frames; i++) {
		p->stack[nr] = pp_loc_get(p, s->frames[i].loc);
		if (!p->stack[nr++])
			return -1;
	}
	if (marker) {
		p->stack[nr] = pp_marker_get(p, marker);
		if (!p->stack[nr++])
			return -1;
	}
	h = pp_sample_hash(p->stack, nr, s->pid, s->tid, comm) ^ base;
	if (hashmap_get(&p->samples, h, &v))
		first = v;
	for (smp = first; smp; smp = smp->next) {
		if (smp->nr == nr && smp->pid == s->pid && smp->tid == s->tid &&
		    smp->comm == comm && smp->base == base &&
		    !memcmp(smp->locs, p->stack, nr * sizeof(*p->stack))) {
			smp->count += rsample_count(s);
			if (s->off_cpu)
				smp->off_cpu += s->period;
			else
				smp->period += s->period;
			if (vals && smp->vals)
				pp_sum(smp->vals, vals, p->nr_types);
			return 0;
		}
	}
	smp = arena_alloc(&p->arena, sizeof(*smp) + nr * sizeof(smp->locs[0]));
	if (!smp)
		return -1;
	smp->pid = s->pid;
	smp->tid = s->tid;
	smp->comm = comm;
	smp->marker = marker ? pp_name(p, end_reason_name(s->end)) : PP_NONE;
	smp->count = rsample_count(s);
	smp->base = base;
	smp->period = s->off_cpu ? 0 : s->period;
	smp->off_cpu = s->off_cpu ? s->period : 0;
	smp->nr = nr;
	memcpy(smp->locs, p->stack, nr * sizeof(*p->stack));
	smp->vals = NULL;
	if (vals && p->nr_types) {
		smp->vals = arena_alloc(&p->arena,
					p->nr_types * sizeof(*smp->vals));
		if (!smp->vals)
			return -1;
		memcpy(smp->vals, vals, p->nr_types * sizeof(*smp->vals));
	}
	smp->next = first;
	if ((marker && smp->marker == PP_NONE) ||
	    hashmap_put(&p->samples, h, smp) < 0 ||
	    pp_push(&p->sample_v, smp) < 0)
		return -1;
	return 0;
}

void pprof_forget_locs(struct pprof *p)
{
	hashmap_release(&p->locs);
}

int pprof_set_type(struct pprof *p, const char *type, const char *unit)
{
	p->type = pp_name(p, type);
	p->unit = pp_name(p, unit);
	return p->type == PP_NONE || p->unit == PP_NONE ? -1 : 0;
}

int pprof_set_types(struct pprof *p, size_t n, const char *const *types,
		    const char *const *units, const char *dflt)
{
	size_t i;

	free(p->types);
	p->nr_types = 0;
	p->types = mem_zalloc(2 * n, sizeof(*p->types));
	if (!p->types)
		return -1;
	for (i = 0; i < n; i++) {
		p->types[2 * i] = pp_name(p, types[i]);
		p->types[2 * i + 1] = pp_name(p, units[i]);
		if (p->types[2 * i] == PP_NONE ||
		    p->types[2 * i + 1] == PP_NONE)
			return -1;
	}
	p->dflt = dflt ? pp_name(p, dflt) : PP_NONE;
	if (dflt && p->dflt == PP_NONE)
		return -1;
	p->nr_types = n;
	return 0;
}

int pprof_add_header(struct pprof *p, const char *type, const char *unit,
		     int64_t period, int64_t time_nanos,
		     int64_t duration_nanos)
{
	if (p->period_type[0] == PP_NONE && (type || unit)) {
		p->period_type[0] = pp_name(p, type);
		p->period_type[1] = pp_name(p, unit);
		if (p->period_type[0] == PP_NONE ||
		    p->period_type[1] == PP_NONE)
			return -1;
	}
	p->period = MAX(p->period, period);
	if (time_nanos && (!p->time || time_nanos < p->time))
		p->time = time_nanos;
	p->duration = (int64_t)((uint64_t)p->duration +
				(uint64_t)duration_nanos);
	return 0;
}

/* --- numbering: sort everything, give out ids 1, 2, ... ------------- */

/* Comparisons get the names table as qsort_r's context. */
static int pp_strcmp(const struct strtab *names, uint32_t a, uint32_t b)
{
	if (a == b)
		return 0;
	return strcmp(strtab_str(names, a), strtab_str(names, b));
}

static int pp_u64cmp(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

static int pp_map_cmp(const void *a, const void *b, void *names)
{
	const struct pp_map *x = *(void *const *)a, *y = *(void *const *)b;

	return pp_strcmp(names, x->path, y->path);
}

static int pp_func_cmp(const void *a, const void *b, void *names)
{
	const struct pp_func *x = *(void *const *)a, *y = *(void *const *)b;
	int c = pp_strcmp(names, x->name, y->name);

	return c ? c : pp_strcmp(names, x->file, y->file);
}

static int pp_loc_cmp(const void *a, const void *b, void *names)
{
	const struct pp_loc *x = *(void *const *)a, *y = *(void *const *)b;

	/* Locations without a mapping first, by name; then by mapping
	 * (numbered already) and address. */
	if (!x->map || !y->map) {
		if (x->map || y->map)
			return x->map ? 1 : -1;
		return pp_strcmp(names, x->name, y->name);
	}
	if (x->map != y->map)
		return pp_u64cmp(x->map->id, y->map->id);
	return pp_u64cmp(x->addr, y->addr);
}

static int pp_sample_cmp(const void *a, const void *b, void *names)
{
	const struct pp_sample *x = *(void *const *)a, *y = *(void *const *)b;
	uint32_t i, n = MIN(x->nr, y->nr);
	int c;

	/* Root first, so that stacks sharing callers sit together. */
	for (i = 1; i <= n; i++) {
		c = pp_u64cmp(x->locs[x->nr - i]->id, y->locs[y->nr - i]->id);
		if (c)
			return c;
	}
	if (x->nr != y->nr)
		return x->nr < y->nr ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->base != y->base)
		return x->base ? 1 : -1;
	return pp_strcmp(names, x->comm, y->comm);
}

/* Sorts v (never handing qsort_r a NULL array). */
static void pp_sort(struct pprof *p, struct pp_vec *v,
		    int (*cmp)(const void *, const void *, void *))
{
	if (v->nr > 1)
		qsort_r(v->v, v->nr, sizeof(void *), cmp, &p->names);
}

static void pp_number(struct pprof *p)
{
	size_t i;

	pp_sort(p, &p->map_v, pp_map_cmp);
	for (i = 0; i < p->map_v.nr; i++)
		((struct pp_map *)p->map_v.v[i])->id = i + 1;
	pp_sort(p, &p->func_v, pp_func_cmp);
	for (i = 0; i < p->func_v.nr; i++)
		((struct pp_func *)p->func_v.v[i])->id = i + 1;
	pp_sort(p, &p->loc_v, pp_loc_cmp);
	for (i = 0; i < p->loc_v.nr; i++)
		((struct pp_loc *)p->loc_v.v[i])->id = i + 1;
	pp_sort(p, &p->sample_v, pp_sample_cmp);
}

/* --- encoding ------------------------------------------------------- */

struct pp_enc {
	struct pprof *p;
	struct strtab st;         /* the profile's string table */
	struct strbuf msg, sub;   /* scratch for nested messages */
	bool oom;
};

/* The string table index of s, added in first-use order. */
static uint64_t pp_str(struct pp_enc *e, const char *s)
{
	int64_t id = strtab_add(&e->st, s);

	if (id < 0) {
		e->oom = true;
		return 0;
	}
	return (uint64_t)id;
}

static uint64_t pp_nstr(struct pp_enc *e, uint32_t name)
{
	return pp_str(e, strtab_str(&e->p->names, name));
}

static void pp_value_type(struct pp_enc *e, struct strbuf *out,
			  uint32_t field, const char *type, const char *unit)
{
	strbuf_reset(&e->msg);
	pbuf_int(&e->msg, PP_VALUETYPE_TYPE, (int64_t)pp_str(e, type));
	pbuf_int(&e->msg, PP_VALUETYPE_UNIT, (int64_t)pp_str(e, unit));
	e->oom |= e->msg.oom;
	pbuf_bytes(out, field, e->msg.buf, e->msg.len);
}

static void pp_label(struct pp_enc *e, const char *key, const char *str,
		     int64_t num)
{
	strbuf_reset(&e->sub);
	pbuf_int(&e->sub, PP_LABEL_KEY, (int64_t)pp_str(e, key));
	if (str)
		pbuf_int(&e->sub, PP_LABEL_STR, (int64_t)pp_str(e, str));
	else
		pbuf_int(&e->sub, PP_LABEL_NUM, num);
	e->oom |= e->sub.oom;
	pbuf_bytes(&e->msg, PP_SAMPLE_LABEL, e->sub.buf, e->sub.len);
}

static void pp_sample_enc(struct pp_enc *e, struct strbuf *out,
			  const struct pp_sample *s)
{
	const struct strtab *names = &e->p->names;
	uint64_t ids[256], vals[4] = { s->count, s->period, s->off_cpu,
				       s->period + s->off_cpu };
	uint32_t i, done = 0;

	if (s->base)   /* int64 values, two's complement as varints */
		for (i = 0; i < ARRAY_SIZE(vals); i++)
			vals[i] = (uint64_t)-(int64_t)vals[i];
	strbuf_reset(&e->msg);
	/* Location ids, leaf first, packed in batches (one packed field
	 * may repeat: decoders concatenate them). */
	while (done < s->nr) {
		uint32_t n = MIN(s->nr - done, (uint32_t)ARRAY_SIZE(ids));

		for (i = 0; i < n; i++)
			ids[i] = s->locs[done + i]->id;
		pbuf_packed(&e->msg, PP_SAMPLE_LOCATION_ID, ids, n);
		done += n;
	}
	if (s->vals)   /* int64 as uint64: the same varints */
		pbuf_packed(&e->msg, PP_SAMPLE_VALUE,
			    (const uint64_t *)(const void *)s->vals,
			    e->p->nr_types);
	else
		pbuf_packed(&e->msg, PP_SAMPLE_VALUE, vals,
			    e->p->opts.profile ? 4 : 2);
	pp_label(e, "thread", strtab_str(names, s->comm), 0);
	pp_label(e, "pid", NULL, s->pid);
	pp_label(e, "tid", NULL, s->tid);
	if (s->marker != PP_NONE)
		pp_label(e, "truncated", strtab_str(names, s->marker), 0);
	if (s->base)
		pp_label(e, "pprof::base", "true", 0);
	e->oom |= e->msg.oom;
	pbuf_bytes(out, PP_PROFILE_SAMPLE, e->msg.buf, e->msg.len);
}

static void pp_mapping_enc(struct pp_enc *e, struct strbuf *out,
			   const struct pp_map *m)
{
	strbuf_reset(&e->msg);
	pbuf_uint(&e->msg, PP_MAPPING_ID, m->id);
	pbuf_uint(&e->msg, PP_MAPPING_MEMORY_START, m->lo);
	pbuf_uint(&e->msg, PP_MAPPING_MEMORY_LIMIT, m->hi);
	pbuf_int(&e->msg, PP_MAPPING_FILENAME, (int64_t)pp_nstr(e, m->path));
	if (m->build_id_size) {
		char hex[41];
		unsigned i;

		for (i = 0; i < m->build_id_size; i++)
			snprintf(hex + 2 * i, 3, "%02x", m->build_id[i]);
		pbuf_int(&e->msg, PP_MAPPING_BUILD_ID, (int64_t)pp_str(e, hex));
	}
	pbuf_uint(&e->msg, PP_MAPPING_HAS_FUNCTIONS, m->funcs);
	pbuf_uint(&e->msg, PP_MAPPING_HAS_INLINE_FRAMES, m->inl);
	e->oom |= e->msg.oom;
	pbuf_bytes(out, PP_PROFILE_MAPPING, e->msg.buf, e->msg.len);
}

static void pp_location_enc(struct pp_enc *e, struct strbuf *out,
			    const struct pp_loc *l)
{
	unsigned i;

	strbuf_reset(&e->msg);
	pbuf_uint(&e->msg, PP_LOCATION_ID, l->id);
	if (l->map)
		pbuf_uint(&e->msg, PP_LOCATION_MAPPING_ID, l->map->id);
	pbuf_uint(&e->msg, PP_LOCATION_ADDRESS, l->addr);
	for (i = 0; i < l->nr_lines; i++) {
		strbuf_reset(&e->sub);
		pbuf_uint(&e->sub, PP_LINE_FUNCTION_ID, l->lines[i].fn->id);
		pbuf_int(&e->sub, PP_LINE_LINE, l->lines[i].line);
		e->oom |= e->sub.oom;
		pbuf_bytes(&e->msg, PP_LOCATION_LINE, e->sub.buf, e->sub.len);
	}
	e->oom |= e->msg.oom;
	pbuf_bytes(out, PP_PROFILE_LOCATION, e->msg.buf, e->msg.len);
}

static void pp_function_enc(struct pp_enc *e, struct strbuf *out,
			    const struct pp_func *f)
{
	int64_t name = (int64_t)pp_nstr(e, f->name);

	strbuf_reset(&e->msg);
	pbuf_uint(&e->msg, PP_FUNCTION_ID, f->id);
	pbuf_int(&e->msg, PP_FUNCTION_NAME, name);
	pbuf_int(&e->msg, PP_FUNCTION_SYSTEM_NAME, name);
	pbuf_int(&e->msg, PP_FUNCTION_FILENAME, (int64_t)pp_nstr(e, f->file));
	e->oom |= e->msg.oom;
	pbuf_bytes(out, PP_PROFILE_FUNCTION, e->msg.buf, e->msg.len);
}

/* The second value's type: CPU time for the clock events. */
static void pp_period_type(const char *event, const char **type,
			   const char **unit)
{
	size_t n = strcspn(event, ":");

	if ((n == 9 && !strncmp(event, "cpu-clock", n)) ||
	    (n == 10 && !strncmp(event, "task-clock", n))) {
		*type = "cpu";
		*unit = "nanoseconds";
	} else {
		*type = *event ? event : "period";
		*unit = "count";
	}
}

/* pprof_set_types()'s sample types. */
static void pp_types_enc(struct pp_enc *e, struct strbuf *out)
{
	const struct strtab *names = &e->p->names;
	size_t i;

	for (i = 0; i < e->p->nr_types; i++)
		pp_value_type(e, out, PP_PROFILE_SAMPLE_TYPE,
			      strtab_str(names, e->p->types[2 * i]),
			      strtab_str(names, e->p->types[2 * i + 1]));
}

/* Whether s's pprof_add_values() sums are all 0 (it is left out). */
static bool pp_sample_zero(const struct pprof *p, const struct pp_sample *s)
{
	size_t i;

	if (!s->vals)
		return false;
	for (i = 0; i < p->nr_types; i++)
		if (s->vals[i])
			return false;
	return true;
}

int pprof_encode(struct pprof *p, struct strbuf *out)
{
	struct pp_enc e = { .p = p };
	const char *type, *unit;
	size_t i;

	pp_number(p);
	strtab_init(&e.st);
	strbuf_init(&e.msg);
	strbuf_init(&e.sub);
	pp_str(&e, "");
	pp_period_type(p->event == PP_NONE ? "" : strtab_str(&p->names, p->event),
		       &type, &unit);
	if (p->opts.profile) {
		type = "cpu";
		unit = "nanoseconds";
	} else if (p->type != PP_NONE && p->unit != PP_NONE) {
		type = strtab_str(&p->names, p->type);
		unit = strtab_str(&p->names, p->unit);
	}
	if (p->nr_types) {
		pp_types_enc(&e, out);
	} else {
		pp_value_type(&e, out, PP_PROFILE_SAMPLE_TYPE, "samples",
			      "count");
		pp_value_type(&e, out, PP_PROFILE_SAMPLE_TYPE, type, unit);
	}
	if (p->opts.profile && !p->nr_types) {
		pp_value_type(&e, out, PP_PROFILE_SAMPLE_TYPE, "off_cpu",
			      "nanoseconds");
		pp_value_type(&e, out, PP_PROFILE_SAMPLE_TYPE, "wall",
			      "nanoseconds");
		type = p->opts.profile;
	}
	for (i = 0; i < p->sample_v.nr; i++)
		if (!pp_sample_zero(p, p->sample_v.v[i]))
			pp_sample_enc(&e, out, p->sample_v.v[i]);
	for (i = 0; i < p->map_v.nr; i++)
		pp_mapping_enc(&e, out, p->map_v.v[i]);
	for (i = 0; i < p->loc_v.nr; i++)
		pp_location_enc(&e, out, p->loc_v.v[i]);
	for (i = 0; i < p->func_v.nr; i++)
		pp_function_enc(&e, out, p->func_v.v[i]);
	if (!p->nr_types) {
		pbuf_int(out, PP_PROFILE_DURATION_NANOS,
			 (int64_t)(p->t_max - p->t_min));
	} else {
		pbuf_int(out, PP_PROFILE_TIME_NANOS, p->time);
		pbuf_int(out, PP_PROFILE_DURATION_NANOS, p->duration);
		if (p->period_type[0] != PP_NONE)
			pp_value_type(&e, out, PP_PROFILE_PERIOD_TYPE,
				      strtab_str(&p->names, p->period_type[0]),
				      strtab_str(&p->names, p->period_type[1]));
		pbuf_int(out, PP_PROFILE_PERIOD, p->period);
	}
	if (!p->nr_types)
		pbuf_int(out, PP_PROFILE_DEFAULT_SAMPLE_TYPE,
			 (int64_t)pp_str(&e, p->opts.period ? type :
					 "samples"));
	else if (p->dflt != PP_NONE)
		pbuf_int(out, PP_PROFILE_DEFAULT_SAMPLE_TYPE,
			 (int64_t)pp_nstr(&e, p->dflt));
	for (i = 0; i < e.st.nr; i++)
		pbuf_str(out, PP_PROFILE_STRING_TABLE, strtab_str(&e.st, (uint32_t)i));
	e.oom |= out->oom;
	strtab_release(&e.st);
	strbuf_release(&e.msg);
	strbuf_release(&e.sub);
	return e.oom ? -1 : 0;
}

int pprof_write(struct pprof *p, int fd, struct err *err)
{
	struct strbuf raw = STRBUF_INIT;
	unsigned char chunk[65536];
	z_stream z;
	int zrc, rc = 0;

	if (pprof_encode(p, &raw) < 0) {
		strbuf_release(&raw);
		return err_set(err, ERR_NOMEM, ERR_NO_OFF, "pprof profile");
	}
	if (raw.len > UINT32_MAX) {
		strbuf_release(&raw);
		return err_set(err, ERR_UNSUPPORTED, ERR_NO_OFF,
			       "pprof profile over 4 GiB");
	}
	memset(&z, 0, sizeof(z));
	/* 15 + 16: gzip wrapper (its header has no time and no name, so
	 * the output is deterministic). */
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK) {
		strbuf_release(&raw);
		return err_set(err, ERR_NOMEM, ERR_NO_OFF, "zlib deflateInit2");
	}
	z.next_in = (unsigned char *)raw.buf;
	z.avail_in = (uInt)raw.len;
	do {
		z.next_out = chunk;
		z.avail_out = sizeof(chunk);
		zrc = deflate(&z, Z_FINISH);
		if (zrc == Z_STREAM_ERROR) {
			rc = err_set(err, ERR_IO, ERR_NO_OFF, "zlib deflate failed");
			break;
		}
		if (rc == 0)
			rc = fdout_write(fd, chunk, sizeof(chunk) - z.avail_out,
					 "pprof profile", err);
	} while (rc == 0 && zrc != Z_STREAM_END);
	deflateEnd(&z);
	strbuf_release(&raw);
	return rc;
}
