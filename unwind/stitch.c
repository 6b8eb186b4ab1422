/*
 * stitch.c - per-thread root caches (see stitch.h).
 *
 * A thread's cache is an array of nodes indexed by a hash of (pc, sp).
 * Caller links are (index, generation) pairs, so a node evicted and reused
 * for another frame never passes for the old one.  Staleness is answered
 * from a monotonic stack of the thread's leaf stack pointers: the largest
 * leaf sp seen after a node was last observed, found by binary search.
 */
#include <stdlib.h>
#include <string.h>

#include "unwind/stitch.h"

#include "common/base.h"
#include "common/mem.h"

#define ST_NONE UINT32_MAX
#define ST_HIST_MAX 8192
#define ST_CHAIN_MAX 65536
/* What a node costs: the node and its share of the hash tables. */
#define ST_NODE_BYTES 128

struct st_node {
	uint64_t pc, sp;
	uint64_t addr, rel;
	struct module *mod;
	const char *map_path;
	uint64_t tick;          /* last touched, for eviction */
	uint32_t parent, parent_gen;
	uint32_t gen;           /* bumped when the slot is reused */
	uint32_t link_first;    /* samples that asserted the caller link */
	uint32_t link_last;
	uint32_t seen;          /* last sample that had this frame */
	bool rooted;            /* outermost frame of a walk that hit root */
	bool used;
	bool has_parent;
};

struct st_hist {
	uint32_t seq;
	uint64_t sp;
};

struct st_thread {
	uint64_t key;
	struct hashmap index;   /* key of (pc, sp) -> slot + 1 */
	struct hashmap by_cfa;  /* key of (sp, caller's sp) -> slot + 1 of
				 * the last node linked so */
	struct st_node *nodes;
	size_t nr, alloc;       /* slots in use / allocated */
	uint32_t free_head;     /* free slots chained through parent */
	size_t live;
	struct st_hist *hist;   /* leaf sp, decreasing; seq increasing */
	size_t nr_hist, alloc_hist;
	uint32_t *last;         /* slots of the last observed walk's frames,
				 * outermost first: a hint, checked on use */
	size_t nr_last, alloc_last;
};

struct stitcher {
	struct stitch_opts opts;
	struct hashmap threads; /* tid -> struct st_thread */
	uint64_t tick;
	uint64_t live;
	struct stitch_counters c;
};

static uint64_t st_key(uint64_t pc, uint64_t sp)
{
	return hashmap_mix(pc) ^ (sp * 0x9e3779b97f4a7c15ULL);
}

static uint64_t st_cfa_key(uint64_t sp, uint64_t cfa)
{
	return hashmap_mix(sp) ^ (cfa * 0xc2b2ae3d27d4eb4fULL);
}

struct stitcher *stitcher_new(const struct stitch_opts *opts)
{
	struct stitcher *st = mem_zalloc(1, sizeof(*st));

	if (!st)
		return NULL;
	if (opts)
		st->opts = *opts;
	if (!st->opts.k_min)
		st->opts.k_min = 2;
	if (!st->opts.max_thread_nodes)
		st->opts.max_thread_nodes = 65536;
	if (!st->opts.max_nodes)
		st->opts.max_nodes = (64u << 20) / ST_NODE_BYTES;
	return st;
}

static void st_thread_free(struct stitcher *st, struct st_thread *t)
{
	st->live -= t->live;
	hashmap_release(&t->index);
	hashmap_release(&t->by_cfa);
	free(t->nodes);
	free(t->last);
	free(t->hist);
	free(t);
}

void stitcher_free(struct stitcher *st)
{
	size_t pos = 0;
	void *v;

	if (!st)
		return;
	while (hashmap_iter(&st->threads, &pos, NULL, &v))
		st_thread_free(st, v);
	hashmap_release(&st->threads);
	free(st);
}

void stitcher_forget(struct stitcher *st, uint64_t thread)
{
	void *v;

	if (hashmap_get(&st->threads, thread, &v)) {
		hashmap_del(&st->threads, thread);
		st_thread_free(st, v);
		st->c.threads--;
	}
}

static struct st_thread *st_thread(struct stitcher *st, uint64_t key,
				   bool create)
{
	struct st_thread *t;
	void *v;

	if (hashmap_get(&st->threads, key, &v))
		return v;
	if (!create)
		return NULL;
	t = mem_zalloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->key = key;
	t->free_head = ST_NONE;
	if (hashmap_put(&st->threads, key, t) < 0) {
		free(t);
		return NULL;
	}
	st->c.threads++;
	st->c.threads_seen++;
	return t;
}

static struct st_node *st_find(struct st_thread *t, uint64_t pc, uint64_t sp)
{
	struct st_node *n;
	void *v;

	if (!t || !hashmap_get(&t->index, st_key(pc, sp), &v))
		return NULL;
	n = &t->nodes[(uintptr_t)v - 1];
	return n->used && n->pc == pc && n->sp == sp ? n : NULL;
}

static struct st_node *st_parent(const struct st_thread *t,
				 const struct st_node *n)
{
	struct st_node *p;

	if (!n->has_parent || n->parent >= t->nr)
		return NULL;
	p = &t->nodes[n->parent];
	return p->used && p->gen == n->parent_gen ? p : NULL;
}

static void st_drop(struct stitcher *st, struct st_thread *t,
		    struct st_node *n)
{
	uint32_t idx = (uint32_t)(n - t->nodes);

	hashmap_del(&t->index, st_key(n->pc, n->sp));
	n->used = false;
	n->gen++;
	n->parent = t->free_head;
	n->has_parent = false;
	t->free_head = idx;
	t->live--;
	st->live--;
	st->c.evicted++;
}

static int st_tick_cmp(const void *a, const void *b)
{
	uint64_t x = **(const uint64_t *const *)a;
	uint64_t y = **(const uint64_t *const *)b;

	return x < y ? -1 : x > y;
}

/* Drops the least recently touched quarter of a thread's nodes. */
static void st_evict(struct stitcher *st, struct st_thread *t)
{
	uint64_t **ticks, cut;
	size_t n = 0, i;

	if (!t->live)
		return;
	ticks = mem_zalloc(t->live, sizeof(*ticks));
	if (!ticks)
		return;
	for (i = 0; i < t->nr; i++)
		if (t->nodes[i].used)
			ticks[n++] = &t->nodes[i].tick;
	qsort(ticks, n, sizeof(*ticks), st_tick_cmp);
	cut = *ticks[n / 4];
	free(ticks);
	for (i = 0; i < t->nr; i++)
		if (t->nodes[i].used && t->nodes[i].tick <= cut)
			st_drop(st, t, &t->nodes[i]);
}

/* The thread that touched its nodes least recently, for global limits. */
static struct st_thread *st_coldest(struct stitcher *st)
{
	struct st_thread *best = NULL;
	uint64_t best_tick = UINT64_MAX;
	size_t pos = 0, i;
	void *v;

	while (hashmap_iter(&st->threads, &pos, NULL, &v)) {
		struct st_thread *t = v;
		uint64_t newest = 0;

		for (i = 0; i < t->nr; i++)
			if (t->nodes[i].used && t->nodes[i].tick > newest)
				newest = t->nodes[i].tick;
		if (t->live && newest < best_tick) {
			best_tick = newest;
			best = t;
		}
	}
	return best;
}

static struct st_node *st_get(struct stitcher *st, struct st_thread *t,
			      const struct stitch_frame *f)
{
	struct st_node *n = st_find(t, f->pc, f->sp);
	uint32_t idx;

	if (n)
		return n;
	if (t->live >= st->opts.max_thread_nodes)
		st_evict(st, t);
	while (st->live >= st->opts.max_nodes) {
		struct st_thread *cold = st_coldest(st);

		if (!cold)
			break;
		st_evict(st, cold);
	}
	if (t->free_head != ST_NONE) {
		idx = t->free_head;
		t->free_head = t->nodes[idx].parent;
	} else {
		if (mem_grow(&t->nodes, &t->alloc, sizeof(*t->nodes),
			     t->nr + 1) < 0)
			return NULL;
		idx = (uint32_t)t->nr++;
	}
	if (hashmap_put(&t->index, st_key(f->pc, f->sp),
			(void *)(uintptr_t)(idx + 1)) < 0)
		return NULL;
	n = &t->nodes[idx];
	n->pc = f->pc;
	n->sp = f->sp;
	n->used = true;
	n->has_parent = false;
	n->rooted = false;
	n->link_first = n->link_last = 0;
	t->live++;
	st->live++;
	if (st->live > st->c.peak_nodes)
		st->c.peak_nodes = st->live;
	return n;
}

/* Records this sample's leaf stack pointer for staleness queries. */
static int st_hist_push(struct st_thread *t, uint32_t seq, uint64_t sp)
{
	while (t->nr_hist && t->hist[t->nr_hist - 1].sp <= sp)
		t->nr_hist--;
	if (t->nr_hist && t->hist[t->nr_hist - 1].seq >= seq)
		return 0;   /* a second pass over the same samples */
	if (t->nr_hist == ST_HIST_MAX) {
		memmove(t->hist, t->hist + ST_HIST_MAX / 2,
			(ST_HIST_MAX / 2) * sizeof(*t->hist));
		t->nr_hist = ST_HIST_MAX / 2;
	}
	if (mem_grow(&t->hist, &t->alloc_hist, sizeof(*t->hist),
		     t->nr_hist + 1) < 0)
		return -1;
	t->hist[t->nr_hist].seq = seq;
	t->hist[t->nr_hist].sp = sp;
	t->nr_hist++;
	return 0;
}

/* Whether a leaf above n's frame was seen after n was: n was popped. */
static bool st_stale(const struct st_thread *t, const struct st_node *n)
{
	size_t lo = 0, hi = t->nr_hist;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (t->hist[mid].seq <= n->seen)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < t->nr_hist && t->hist[lo].sp > n->sp;
}

int stitcher_observe(struct stitcher *st, uint64_t thread, uint32_t seq,
		     const struct stitch_frame *f, unsigned nr,
		     enum end_reason end)
{
	struct st_thread *t;
	struct st_node *n;
	uint32_t prev = ST_NONE, prev_gen = 0;
	unsigned i;

	if (!nr)
		return 0;
	t = st_thread(st, thread, true);
	if (!t || st_hist_push(t, seq, f[0].sp) < 0 ||
	    mem_grow(&t->last, &t->alloc_last, sizeof(*t->last), nr) < 0)
		return -1;
	/*
	 * Outermost first, so each caller exists before its callee links
	 * it.  Slots are remembered by index: st_get() may move the array.
	 * Consecutive walks of a thread mostly share their outer frames:
	 * the last walk's slot at the same depth is tried before the index.
	 */
	for (i = nr; i-- > 0;) {
		size_t depth = nr - 1 - i;

		n = NULL;
		if (depth < t->nr_last && t->last[depth] < t->nr) {
			n = &t->nodes[t->last[depth]];
			if (!n->used || n->pc != f[i].pc || n->sp != f[i].sp)
				n = NULL;
		}
		if (!n) {
			n = st_get(st, t, &f[i]);
			/* later depths of the last walk no longer match */
			t->nr_last = MIN(t->nr_last, depth);
		}
		if (!n)
			return -1;
		t->last[depth] = (uint32_t)(n - t->nodes);
		n->tick = ++st->tick;
		n->seen = seq;
		n->mod = f[i].mod;
		n->map_path = f[i].map_path;
		n->addr = f[i].addr;
		n->rel = f[i].rel;
		if (i == nr - 1 && end == END_ROOT) {
			n->rooted = true;
			n->has_parent = false;
		}
		if (prev != ST_NONE) {
			if (n->has_parent && n->parent == prev &&
			    n->parent_gen == prev_gen) {
				if (!n->link_first)
					n->link_first = seq;
				n->link_last = seq;
			} else {
				if (n->has_parent)
					st->c.conflicts++;
				n->has_parent = true;
				n->parent = prev;
				n->parent_gen = prev_gen;
				n->link_first = n->link_last = seq;
				if (hashmap_put(&t->by_cfa,
						st_cfa_key(n->sp, f[i + 1].sp),
						(void *)(uintptr_t)(n - t->nodes +
								    1)) < 0)
					return -1;
			}
			n->rooted = false;
		}
		prev = (uint32_t)(n - t->nodes);
		prev_gen = n->gen;
	}
	t->nr_last = nr;
	st->c.nodes = st->live;
	return 0;
}

/* A link made only by sample seq itself proves nothing about seq. */
static bool st_link_other(const struct st_node *n, uint32_t seq)
{
	return !(n->link_first == seq && n->link_last == seq);
}

/*
 * The activation of outer's function at outer's sp, seen at another call
 * site with its caller at cfa and linked by some sample other than seq.
 */
static struct st_node *st_same_activation(struct stitcher *st,
					  struct st_thread *t,
					  const struct st_node *outer,
					  uint64_t cfa, uint32_t seq)
{
	struct st_node *n, *p;
	void *v;

	if (!cfa || !st->opts.same_function ||
	    !hashmap_get(&t->by_cfa, st_cfa_key(outer->sp, cfa), &v) ||
	    (uintptr_t)v - 1 >= t->nr)
		return NULL;
	n = &t->nodes[(uintptr_t)v - 1];
	p = n->used ? st_parent(t, n) : NULL;
	if (!p || n == outer || n->sp != outer->sp || p->sp != cfa ||
	    !st_link_other(n, seq) || !n->mod || !outer->mod ||
	    !st->opts.same_function(st->opts.ctx, n->mod, n->rel, outer->mod,
				    outer->rel))
		return NULL;
	return n;
}

unsigned stitcher_complete(struct stitcher *st, uint64_t thread, uint32_t seq,
			   const struct stitch_walk *w,
			   struct stitch_frame *out, unsigned max,
			   struct stitch_result *res)
{
	struct st_thread *t = st_thread(st, thread, false);
	const struct stitch_frame *f = w->f;
	unsigned nr = w->nr, k, n_out = 0;
	struct st_node *outer, *n, *p;
	uint64_t last_sp;

	memset(res, 0, sizeof(*res));
	if (!t || nr < st->opts.k_min)
		return 0;
	/* The walk's outermost frames must be cached and linked as it saw
	 * them, by some other sample. */
	outer = st_find(t, f[nr - 1].pc, f[nr - 1].sp);
	if (!outer)
		return 0;
	for (k = 1; k < st->opts.k_min; k++) {
		n = st_find(t, f[nr - 1 - k].pc, f[nr - 1 - k].sp);
		p = n ? st_parent(t, n) : NULL;
		if (!p || p->pc != f[nr - k].pc || p->sp != f[nr - k].sp ||
		    !st_link_other(n, seq))
			return 0;
	}
	p = outer;
	if (!st_parent(t, outer) || !st_link_other(outer, seq)) {
		p = st_same_activation(st, t, outer, w->outer_cfa, seq);
		if (!p)
			return 0;
		res->joined = true;
	}
	last_sp = f[nr - 1].sp;
	for (n = st_parent(t, p); n && n_out < max && n_out < ST_CHAIN_MAX;
	     p = n, n = st_parent(t, n)) {
		if (n->sp <= last_sp || !st_link_other(p, seq))
			break;   /* a loop, or nothing but this sample says so */
		if (st_stale(t, n))
			res->stale = true;
		out[n_out].pc = n->pc;
		out[n_out].sp = n->sp;
		out[n_out].mod = n->mod;
		out[n_out].map_path = n->map_path;
		out[n_out].addr = n->addr;
		out[n_out].rel = n->rel;
		n_out++;
		last_sp = n->sp;
		if (n->rooted) {
			res->rooted = true;
			break;
		}
	}
	if (res->stale && st->opts.refuse_stale)
		n_out = 0;
	res->nr = n_out;
	if (!n_out)
		res->rooted = res->joined = res->stale = false;
	return n_out;
}

void stitcher_counters(const struct stitcher *st, struct stitch_counters *c)
{
	*c = st->c;
	c->nodes = st->live;
}

void stitcher_add_counters(struct stitcher *dst, const struct stitcher *src)
{
	const uint64_t *a = (const uint64_t *)&src->c;
	uint64_t *b = (uint64_t *)&dst->c;
	size_t i;

	/* every field is a count: threads are disjoint between stitchers */
	for (i = 0; i < sizeof(dst->c) / sizeof(uint64_t); i++)
		b[i] += a[i];
	dst->live += src->live;
}

size_t stitcher_node_bytes(void)
{
	return ST_NODE_BYTES;
}
