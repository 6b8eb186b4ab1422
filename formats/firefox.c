/*
 * firefox.c - the Firefox Profiler writer (see firefox.h): the tables,
 * built as samples come (firefox_json.c writes them).
 *
 * A sample's stack is interned root first, each node (prefix, frame), so
 * parents always precede their children, as the format's prefixOffset
 * column needs.  The frames of a symbol location are kept by location
 * pointer and category, so a location met again costs one lookup per
 * frame's stack node.
 */
#include <stdlib.h>
#include <string.h>

#include "formats/firefox_internal.h"
#include "formats/folded.h"

#include "common/mem.h"
#include "common/msort.h"

/* A symbol location's frames in one category: nr frame rows, outer
 * function first. */
struct ff_locframes {
	const struct sym_loc *loc;
	unsigned cat;
	uint16_t nr;
	uint32_t frame[];
};

/* --- interned rows -------------------------------------------------- */

static void ff_tab_init(struct ff_tab *t, unsigned nw)
{
	memset(t, 0, sizeof(*t));
	t->nw = nw;
}

static void ff_tab_release(struct ff_tab *t)
{
	hashmap_release(&t->map);
	free(t->next);
	free(t->rows);
}

/* The index of row key (added when new), or -1 when out of memory. */
static int64_t ff_tab_add(struct ff_tab *t, const uint64_t *key)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL;
	uint32_t i, first = 0;
	unsigned w;
	void *v;

	for (w = 0; w < t->nw; w++)
		h = hashmap_mix(h ^ key[w]) + w;
	if (hashmap_get(&t->map, h, &v))
		first = (uint32_t)(uintptr_t)v;
	for (i = first; i; i = t->next[i - 1]) {
		const uint64_t *row = ff_row(t, i - 1);

		/* keys are 1-8 words: no memcmp() call */
		for (w = 0; w < t->nw && row[w] == key[w]; w++)
			;
		if (w == t->nw)
			return i - 1;
	}
	if (t->nr >= UINT32_MAX - 1 ||
	    mem_grow(&t->rows, &t->alloc, t->nw * sizeof(*key),
		     t->nr + 1) < 0 ||
	    mem_grow(&t->next, &t->next_alloc, sizeof(*t->next), t->nr + 1) < 0)
		return -1;
	memcpy(t->rows + t->nr * t->nw, key, t->nw * sizeof(*key));
	t->next[t->nr] = first;
	if (hashmap_put(&t->map, h, (void *)(uintptr_t)(t->nr + 1)) < 0)
		return -1;
	return (int64_t)t->nr++;
}

/* --- building ------------------------------------------------------- */

static uint32_t ff_str(struct firefox *ff, const char *s);

struct firefox *firefox_new(const struct firefox_opts *opts)
{
	static const char *const ev_names[FIREFOX_EVENT__COUNT] = {
		[FIREFOX_THREAD_START] = "Thread start",
		[FIREFOX_THREAD_END] = "Thread end",
		[FIREFOX_LOST_SAMPLES] = "Lost samples",
		[FIREFOX_LOST_RECORDS] = "Lost records",
	};
	struct firefox *ff = mem_zalloc(1, sizeof(*ff));
	bool oom;
	unsigned i;

	if (!ff)
		return NULL;
	if (opts)
		ff->opts = *opts;
	ff_tab_init(&ff->libs, FF_LIB__N);
	ff_tab_init(&ff->res, FF_RES__N);
	ff_tab_init(&ff->srcs, FF_SRC__N);
	ff_tab_init(&ff->funcs, FF_FUNC__N);
	ff_tab_init(&ff->frames, FF_FRAME__N);
	ff_tab_init(&ff->stacks, FF_STACK__N);
	strtab_init(&ff->strs);
	strbuf_init(&ff->buf);
	ff->marker_name = ff_str(ff, "Truncated stacks");
	oom = ff->marker_name == FF_NONE;
	for (i = 0; i < FIREFOX_EVENT__COUNT; i++) {
		ff->ev_name[i] = ff_str(ff, ev_names[i]);
		oom |= ff->ev_name[i] == FF_NONE;
	}
	if (oom) {
		firefox_free(ff);
		return NULL;
	}
	return ff;
}

static void ff_meta_free(struct firefox_meta *m)
{
	free((char *)m->arch);
	free((char *)m->osrelease);
	free((char *)m->cpu);
	free((char *)m->name);
}

void firefox_free(struct firefox *ff)
{
	size_t i;

	if (!ff)
		return;
	for (i = 0; i < ff->nr_threads; i++) {
		free(ff->threads[i]->v);
		free(ff->threads[i]->m);
		free(ff->threads[i]->pre);
		free(ff->threads[i]);
	}
	free(ff->threads);
	free(ff->ev);
	ff_meta_free(&ff->meta);
	strtab_release(&ff->strs);
	ff_tab_release(&ff->libs);
	ff_tab_release(&ff->res);
	ff_tab_release(&ff->srcs);
	ff_tab_release(&ff->funcs);
	ff_tab_release(&ff->frames);
	ff_tab_release(&ff->stacks);
	free(ff->bids);
	free(ff->func_src);
	hashmap_release(&ff->loc_frames);
	hashmap_release(&ff->markers);
	hashmap_release(&ff->thread_map);
	arena_release(&ff->arena);
	strbuf_release(&ff->buf);
	free(ff);
}

static char *ff_dup(const char *s)
{
	return s ? mem_strdup(s) : NULL;
}

int firefox_set_meta(struct firefox *ff, const struct firefox_meta *m)
{
	struct firefox_meta c = *m;

	c.arch = ff_dup(m->arch);
	c.osrelease = ff_dup(m->osrelease);
	c.cpu = ff_dup(m->cpu);
	c.name = ff_dup(m->name);
	ff_meta_free(&ff->meta);
	ff->meta = c;
	if ((m->arch && !c.arch) || (m->osrelease && !c.osrelease) ||
	    (m->cpu && !c.cpu) || (m->name && !c.name))
		return -1;
	return 0;
}

/* The strs id of s, or FF_NONE when out of memory. */
static uint32_t ff_str(struct firefox *ff, const char *s)
{
	int64_t id = strtab_add(&ff->strs, s);

	return id < 0 || id >= FF_NONE ? FF_NONE : (uint32_t)id;
}

/* The resource of module (its file name, type 1: library), or FF_NONE. */
static uint32_t ff_resource(struct firefox *ff, const char *module)
{
	uint64_t key[FF_RES__N];
	uint32_t name = ff_str(ff, ff_basename(module));
	int64_t id;

	if (name == FF_NONE)
		return FF_NONE;
	key[FF_RES_NAME] = name;
	id = ff_tab_add(&ff->res, key);
	return id < 0 ? FF_NONE : (uint32_t)id;
}

/* The lib of l's module (the first build-id seen for it), or FF_NONE. */
static uint32_t ff_lib(struct firefox *ff, const struct sym_loc *l)
{
	uint64_t key[FF_LIB__N];
	uint32_t path = ff_str(ff, l->module);
	size_t before = ff->libs.nr;
	int64_t id;

	if (path == FF_NONE)
		return FF_NONE;
	key[FF_LIB_PATH] = path;
	id = ff_tab_add(&ff->libs, key);
	if (id < 0)
		return FF_NONE;
	if (ff->libs.nr == before)
		return (uint32_t)id;
	if (mem_grow(&ff->bids, &ff->bids_alloc, sizeof(*ff->bids),
		     ff->nr_bids + 1) < 0)
		return FF_NONE;
	memset(&ff->bids[ff->nr_bids], 0, sizeof(ff->bids[0]));
	if (l->build_id && l->build_id_size <= sizeof(ff->bids[0].b)) {
		ff->bids[ff->nr_bids].size = l->build_id_size;
		memcpy(ff->bids[ff->nr_bids].b, l->build_id, l->build_id_size);
	}
	ff->nr_bids++;
	return (uint32_t)id;
}

/* The source row of file, or FF_NONE. */
static uint32_t ff_source(struct firefox *ff, const char *file)
{
	uint64_t key[FF_SRC__N];
	uint32_t name = ff_str(ff, file);
	int64_t id;

	if (name == FF_NONE)
		return FF_NONE;
	key[FF_SRC_FILE] = name;
	id = ff_tab_add(&ff->srcs, key);
	return id < 0 ? FF_NONE : (uint32_t)id;
}

/* A frame row; res, src, lib: FF_NONE for none.  -1 out of memory. */
static int64_t ff_frame(struct firefox *ff, const char *name, uint32_t res,
			uint32_t src, uint32_t lib, int64_t addr,
			unsigned depth, unsigned cat, uint32_t line)
{
	uint64_t fkey[FF_FUNC__N], key[FF_FRAME__N];
	uint32_t sname = ff_str(ff, name);
	size_t before;
	int64_t func;

	if (sname == FF_NONE)
		return -1;
	/* one function per name and resource, whatever file DWARF names
	 * for its frames, as folded output has one name */
	fkey[FF_FUNC_NAME] = sname;
	fkey[FF_FUNC_RES] = res;
	before = ff->funcs.nr;
	func = ff_tab_add(&ff->funcs, fkey);
	if (func < 0 || mem_grow(&ff->func_src, &ff->func_src_alloc,
				 sizeof(*ff->func_src), ff->funcs.nr) < 0)
		return -1;
	if (ff->funcs.nr > before)
		ff->func_src[func] = src;
	else if (ff->func_src[func] == FF_NONE)
		ff->func_src[func] = src;
	key[FF_FRAME_FUNC] = (uint64_t)func;
	key[FF_FRAME_ADDR] = (uint64_t)addr;
	key[FF_FRAME_LIB] = lib;
	key[FF_FRAME_DEPTH] = depth;
	key[FF_FRAME_CAT] = cat;
	key[FF_FRAME_LINE] = line;
	return ff_tab_add(&ff->frames, key);
}

static unsigned ff_category(const struct rframe *fr, bool kernel)
{
	const struct sym_loc *l = fr->loc;

	/* the order of folded's annotations */
	if (kernel)
		return FF_CAT_KERNEL;
	if (l->kind == SYM_JIT)
		return FF_CAT_JIT;
	if (fr->origin == FRAME_STITCHED)
		return FF_CAT_STITCHED;
	if (l->kind == SYM_UNKNOWN || !l->module)
		return FF_CAT_OTHER;
	return FF_CAT_USER;
}

static uint64_t ff_loc_key(const struct sym_loc *l, unsigned cat)
{
	return hashmap_mix((uint64_t)(uintptr_t)l ^ cat);
}

/*
 * The frames of fr's symbol location in category cat, made on first
 * sight; NULL when out of memory.
 */
static const struct ff_locframes *ff_loc(struct firefox *ff,
					 const struct rframe *fr, bool kernel)
{
	const struct sym_loc *l = fr->loc;
	unsigned cat = ff_category(fr, kernel), e, depth;
	uint64_t key = ff_loc_key(l, cat);
	uint32_t res = FF_NONE, lib = FF_NONE;
	struct ff_locframes *lf;
	int64_t addr = -1;
	void *v;

	/* Keys are hashes: on a clash, probe the next key. */
	while (hashmap_get(&ff->loc_frames, key, &v)) {
		lf = v;
		if (lf->loc == l && lf->cat == cat)
			return lf;
		key++;
	}
	lf = arena_alloc(&ff->arena, sizeof(*lf) +
			 l->nr * sizeof(lf->frame[0]));
	if (!lf)
		return NULL;
	lf->loc = l;
	lf->cat = cat;
	lf->nr = l->nr;
	if (l->module && l->kind != SYM_UNKNOWN) {
		res = ff_resource(ff, l->module);
		if (res == FF_NONE)
			return NULL;
		if (!kernel) {
			lib = ff_lib(ff, l);
			if (lib == FF_NONE)
				return NULL;
			if (l->rel <= INT32_MAX)
				addr = (int64_t)l->rel;
		}
	}
	for (depth = 0; depth < l->nr; depth++) {
		const struct sym_entry *en;
		uint32_t src = FF_NONE;
		int64_t fid;

		e = l->nr - 1 - depth;
		en = &l->e[e];
		strbuf_reset(&ff->buf);
		folded_entry_name(&ff->buf, l, e, kernel);
		if (ff->buf.oom)
			return NULL;
		if (en->file && res != FF_NONE) {
			src = ff_source(ff, en->file);
			if (src == FF_NONE)
				return NULL;
		}
		fid = ff_frame(ff, strbuf_str(&ff->buf), res, src, lib, addr,
			       depth, cat, en->line);
		if (fid < 0)
			return NULL;
		lf->frame[depth] = (uint32_t)fid;
	}
	if (hashmap_put(&ff->loc_frames, key, lf) < 0)
		return NULL;
	return lf;
}

/* The frame of a "[truncated: REASON]" marker, or -1. */
static int64_t ff_marker_frame(struct firefox *ff, const char *marker)
{
	int64_t id;
	void *v;

	if (hashmap_get(&ff->markers, (uint64_t)(uintptr_t)marker, &v))
		return (int64_t)(uintptr_t)v - 1;
	id = ff_frame(ff, marker, FF_NONE, FF_NONE, FF_NONE, -1, 0,
		      FF_CAT_TRUNCATED, 0);
	if (id < 0 || hashmap_put(&ff->markers, (uint64_t)(uintptr_t)marker,
				  (void *)(uintptr_t)(id + 1)) < 0)
		return -1;
	return id;
}

static struct ff_thread *ff_thread(struct firefox *ff,
				   const struct rsample *s)
{
	uint64_t key = hashmap_mix((uint64_t)(uint32_t)s->pid << 32 |
				   (uint32_t)s->tid);
	struct ff_thread *t;
	void *v;

	while (hashmap_get(&ff->thread_map, key, &v)) {
		t = v;
		if (t->pid == s->pid && t->tid == s->tid)
			return t;
		key++;
	}
	t = mem_zalloc(1, sizeof(*t));
	if (!t || mem_grow(&ff->threads, &ff->threads_alloc,
			   sizeof(*ff->threads), ff->nr_threads + 1) < 0 ||
	    hashmap_put(&ff->thread_map, key, t) < 0) {
		free(t);
		return NULL;
	}
	t->pid = s->pid;
	t->tid = s->tid;
	ff->threads[ff->nr_threads++] = t;
	return t;
}

static bool ff_sample_before(const struct ff_sample *a,
			     const struct ff_sample *b)
{
	return a->order < b->order;
}

MSORT_DEFINE(ff_sort_samples, struct ff_sample, ff_sample_before)

/*
 * Thread t's "Truncated stacks" markers: one per run of consecutive
 * samples truncated for the same reason.
 */
static int ff_thread_markers(struct ff_thread *t)
{
	bool open = false;
	size_t i;

	t->nr_m = 0;
	for (i = 0; i < t->nr; i++) {
		const struct ff_sample *v = &t->v[i];
		struct ff_marker *m = t->nr_m ? &t->m[t->nr_m - 1] : NULL;

		if (v->reason == FF_NONE) {
			open = false;
			continue;
		}
		if (open && m->reason == v->reason &&
		    m->samples < UINT32_MAX) {
			m->end = MAX(m->end, v->time);
			m->samples++;
			continue;
		}
		if (mem_grow(&t->m, &t->alloc_m, sizeof(*t->m),
			     t->nr_m + 1) < 0)
			return -1;
		m = &t->m[t->nr_m++];
		m->start = m->end = v->time;
		m->reason = v->reason;
		m->samples = 1;
		open = true;
	}
	return 0;
}

int ff_settle(struct firefox *ff)
{
	struct ff_sample *tmp = NULL;
	size_t i, tmp_alloc = 0;

	for (i = 0; i < ff->nr_threads; i++) {
		struct ff_thread *t = ff->threads[i];

		if (t->unsorted) {
			if (mem_grow(&tmp, &tmp_alloc, sizeof(*tmp),
				     t->nr / 2 + 1) < 0)
				return -1;
			ff_sort_samples(t->v, t->nr, tmp);
			t->unsorted = false;
		}
		if (ff_thread_markers(t) < 0) {
			free(tmp);
			return -1;
		}
	}
	free(tmp);
	return 0;
}

/*
 * Whether the thread's last sample had location loc in category cat at
 * place at (root first) after the same ones as this sample: then *stack
 * is the stack it ended.
 */
static bool ff_prefix_same(const struct ff_thread *t, size_t at,
			   const void *loc, unsigned cat, int64_t *stack)
{
	if (at >= t->nr_pre || t->pre[at].loc != loc || t->pre[at].cat != cat)
		return false;
	*stack = t->pre[at].stack;
	return true;
}

static int ff_prefix_set(struct ff_thread *t, size_t at, const void *loc,
			 unsigned cat, int64_t stack)
{
	if (mem_grow(&t->pre, &t->alloc_pre, sizeof(*t->pre), at + 1) < 0)
		return -1;
	t->pre[at] = (struct ff_prefix){ loc, cat, stack };
	return 0;
}

int firefox_add(struct firefox *ff, const struct rsample *s)
{
	const char *marker = rsample_marker(s);
	uint64_t key[FF_STACK__N];
	int64_t stack = -1, fid;
	struct ff_thread *t;
	uint32_t comm, reason = FF_NONE, i;
	size_t at = 0;
	bool same = true;
	uint16_t j;

	if (!ff->any) {
		ff->t0 = s->time;
		ff->any = true;
	}
	ff->t0 = MIN(ff->t0, s->time);
	t = ff_thread(ff, s);
	if (!t)
		return -1;
	/* mostly the one the thread's last sample had */
	if (t->nr && !strcmp(strtab_str(&ff->strs, t->last_comm), s->comm))
		comm = t->last_comm;
	else
		comm = ff_str(ff, s->comm);
	if (comm == FF_NONE)
		return -1;
	t->last_comm = comm;
	if (!t->nr || s->order >= t->comm_order) {
		t->comm = comm;
		t->comm_order = s->order;
	}
	if (t->nr && s->order < t->v[t->nr - 1].order)
		t->unsorted = true;
	if (marker) {
		if (!ff_prefix_same(t, at, marker, FF_CAT_TRUNCATED, &stack)) {
			same = false;
			fid = ff_marker_frame(ff, marker);
			key[FF_STACK_PREFIX] = FF_NONE;
			key[FF_STACK_FRAME] = (uint64_t)fid;
			if (fid < 0 ||
			    (stack = ff_tab_add(&ff->stacks, key)) < 0 ||
			    ff_prefix_set(t, at, marker, FF_CAT_TRUNCATED,
					  stack) < 0)
				return -1;
		}
		at++;
		reason = ff_str(ff, end_reason_name(s->end));
		if (reason == FF_NONE)
			return -1;
	}
	for (i = s->nr_frames; i-- > 0;) {
		const struct rframe *fr = &s->frames[i];
		unsigned cat = ff_category(fr, i < s->nr_kernel);
		const struct ff_locframes *lf;

		if (same && ff_prefix_same(t, at, fr->loc, cat, &stack)) {
			at++;
			continue;
		}
		same = false;
		lf = ff_loc(ff, fr, i < s->nr_kernel);
		if (!lf)
			return -1;
		for (j = 0; j < lf->nr; j++) {
			key[FF_STACK_PREFIX] = stack < 0 ? FF_NONE :
					       (uint64_t)stack;
			key[FF_STACK_FRAME] = lf->frame[j];
			stack = ff_tab_add(&ff->stacks, key);
			if (stack < 0)
				return -1;
		}
		if (ff_prefix_set(t, at++, fr->loc, cat, stack) < 0)
			return -1;
	}
	t->nr_pre = at;
	if (mem_grow(&t->v, &t->alloc, sizeof(*t->v), t->nr + 1) < 0)
		return -1;
	t->v[t->nr].stack = stack < 0 ? FF_NONE : (uint32_t)stack;
	t->v[t->nr].reason = reason;
	t->v[t->nr].time = s->time;
	t->v[t->nr].period = s->period;
	t->v[t->nr++].order = s->order;
	return 0;
}

int firefox_add_event(struct firefox *ff, enum firefox_event kind,
		      int32_t pid, int32_t tid, uint64_t time, uint64_t count)
{
	struct ff_event *e;

	if ((unsigned)kind >= FIREFOX_EVENT__COUNT)
		return 0;
	if (mem_grow(&ff->ev, &ff->ev_alloc, sizeof(*ff->ev),
		     ff->nr_ev + 1) < 0)
		return -1;
	e = &ff->ev[ff->nr_ev++];
	e->pid = pid;
	e->tid = tid;
	e->time = time;
	e->count = count;
	e->kind = (uint8_t)kind;
	return 0;
}
