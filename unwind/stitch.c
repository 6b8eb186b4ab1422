/*
 * stitch.c - per-thread root caches (see stitch.h).
 *
 * A thread's cache is an array of nodes indexed by a hash of (pc, sp).
 * Each node keeps the distinct callers it was seen with (two, and whether
 * there were more), each with the number of samples that showed it and
 * the first of them.  A caller is named by its frame's (pc, sp), and
 * reached through an (index, generation) pair, so a node evicted and
 * reused for another frame never passes for the old one.  Staleness is
 * answered from a monotonic stack of the thread's leaf stack pointers:
 * the largest leaf sp seen after a node was last observed, found by
 * binary search.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/stitch.h"

#include "common/base.h"
#include "common/mem.h"

#define ST_NONE UINT32_MAX
#define ST_ROOT (UINT32_MAX - 1)   /* the link of a thread's first frame */
#define ST_LINKS 2
/*
 * A return address whose frames showed several callers at more than this
 * percentage of the depths (sp) their callers were seen at has callers
 * that depend on more than the depth (st_pc_varies()).
 */
#define ST_VARIES_PCT 5
/*
 * One sample that showed a caller, and the frame not seen popped since,
 * tells the caller of a sample this many samples away, or of one the
 * frame outlived by this many: a frame can be popped and called again at
 * the same depth unseen between a few samples (CPython's start-up code
 * did it between two), less likely so one that lives on.
 */
#define ST_LIVE_GAP 8
#define ST_HIST_MAX 8192
#define ST_CHAIN_MAX 65536
/* What a node costs: the node and its share of the hash tables. */
#define ST_NODE_BYTES 192
/* by_cfa: callers at one (sp, caller's sp) disagreed */
#define ST_CFA_AMBIGUOUS ((void *)UINTPTR_MAX)

/*
 * One caller a node was seen with (slot ST_ROOT: none, a root), and in
 * which activations of the node's frame: an activation lasts from a
 * sample that had the frame to the last one before a sample showed it
 * popped (a leaf above it).
 */
struct st_link {
	uint64_t pc, sp;        /* the caller's frame */
	uint32_t slot, gen;
	uint32_t count;         /* samples that showed it */
	uint32_t first, last;   /* the first and last of them */
	uint32_t act_start;     /* the last one's first sample */
	uint32_t act_first;     /* ... and first sample that showed it */
	uint32_t act_seen;      /* ... and last sample with the frame */
	uint32_t act_count;     /* samples that showed it in that one */
};

struct st_node {
	uint64_t pc, sp;
	uint64_t addr, rel;
	struct module *mod;
	const char *map_path;
	uint64_t tick;          /* last touched, for eviction */
	struct st_link link[ST_LINKS];
	uint32_t gen;           /* bumped when the slot is reused */
	uint32_t seen;          /* last sample that had this frame */
	uint32_t act_start;     /* first sample of its current activation */
	uint32_t next_free;
	uint8_t nr_links;       /* distinct callers kept */
	bool more_links;        /* ... and there were others */
	bool used;
	bool jit;               /* stitch_frame.jit */
};

struct st_hist {
	uint32_t seq;
	uint64_t sp;
};

/* A buffered walk: its outer frames shared with the walk before, then
 * nr_new frames of st_thread.pend_f. */
struct st_pend {
	uint32_t seq;
	uint32_t keep;          /* outer frames of the walk before kept */
	uint32_t nr_new;
	uint8_t end;            /* enum end_reason */
};

enum {
	ST_LEARNING,            /* every walk goes to the cache as it comes */
	ST_PENDING,             /* walks are buffered */
	ST_IDLE,                /* no cut walk came: nothing to learn */
};

struct st_thread {
	uint64_t key;
	struct hashmap index;   /* key of (pc, sp) -> slot + 1 */
	struct hashmap by_cfa;  /* key of (sp, caller's sp) -> slot + 1 of
				 * the last node linked so, or
				 * ST_CFA_AMBIGUOUS */
	struct hashmap by_pc;   /* pc -> (frames with a caller) << 32 |
				 * (frames with several callers), for the
				 * frames of that return address */
	struct st_node *nodes;
	size_t nr, alloc;       /* slots in use / allocated */
	uint32_t free_head;     /* free slots chained through next_free */
	size_t live;
	uint32_t last_seq;      /* newest sample observed */
	struct st_hist *hist;   /* leaf sp, decreasing; seq increasing */
	size_t nr_hist, alloc_hist;
	uint32_t hist_cut;      /* samples up to this one were dropped
				 * from hist: older nodes count as popped */
	uint32_t *last;         /* slots of the last observed walk's frames,
				 * outermost first: a hint, checked on use */
	size_t nr_last, alloc_last;
	/* lazy observation (stitcher_set_lazy()): walks not learnt yet */
	uint8_t lazy;           /* ST_LEARNING, ST_PENDING or ST_IDLE */
	uint32_t pend_seq;      /* newest sample buffered */
	struct st_pend *pend;   /* the walks, in order */
	size_t nr_pend, alloc_pend;
	uint32_t *pend_f;       /* their new frames (pend_u indexes),
				 * outermost first */
	size_t nr_pend_f, alloc_pend_f;
	uint32_t *pend_cur;     /* the last walk, outermost first */
	size_t nr_pend_cur, alloc_pend_cur;
	struct stitch_frame *pend_u;   /* the distinct frames */
	size_t nr_pend_u, alloc_pend_u;
	struct hashmap pend_idx;       /* key of (pc, sp) -> pend_u index + 1 */
	size_t pend_bytes;      /* what the buffer holds */
};

struct stitcher {
	struct stitch_opts opts;
	struct hashmap threads; /* tid -> struct st_thread */
	uint64_t tick;
	uint64_t live;
	bool lazy;              /* new threads' walks are buffered */
	size_t pend_bytes;      /* buffered, all threads */
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
	if (!st->opts.max_pending_bytes)
		st->opts.max_pending_bytes =
			st->opts.max_nodes * ST_NODE_BYTES / 4;
	return st;
}

/* Drops a thread's buffered walks. */
static void st_pend_release(struct stitcher *st, struct st_thread *t)
{
	st->pend_bytes -= t->pend_bytes;
	t->pend_bytes = 0;
	free(t->pend);
	free(t->pend_f);
	free(t->pend_cur);
	free(t->pend_u);
	hashmap_release(&t->pend_idx);
	t->pend = NULL;
	t->pend_f = t->pend_cur = NULL;
	t->pend_u = NULL;
	t->nr_pend = t->alloc_pend = 0;
	t->nr_pend_f = t->alloc_pend_f = 0;
	t->nr_pend_cur = t->alloc_pend_cur = 0;
	t->nr_pend_u = t->alloc_pend_u = 0;
}

static void st_thread_free(struct stitcher *st, struct st_thread *t)
{
	st_pend_release(st, t);
	st->live -= t->live;
	hashmap_release(&t->index);
	hashmap_release(&t->by_cfa);
	hashmap_release(&t->by_pc);
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
	t->lazy = st->lazy ? ST_PENDING : ST_LEARNING;
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

/* The caller frame of link l, while it is still cached. */
static struct st_node *st_link_node(const struct st_thread *t,
				    const struct st_link *l)
{
	struct st_node *p;

	if (l->slot >= t->nr)
		return NULL;
	p = &t->nodes[l->slot];
	return p->used && p->gen == l->gen && p->pc == l->pc &&
			       p->sp == l->sp ?
		       p :
		       NULL;
}

static void st_drop(struct stitcher *st, struct st_thread *t,
		    struct st_node *n)
{
	uint32_t idx = (uint32_t)(n - t->nodes);

	hashmap_del(&t->index, st_key(n->pc, n->sp));
	n->used = false;
	n->gen++;
	n->next_free = t->free_head;
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
	uint32_t idx, gen;

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
		t->free_head = t->nodes[idx].next_free;
	} else {
		if (mem_grow(&t->nodes, &t->alloc, sizeof(*t->nodes),
			     t->nr + 1) < 0)
			return NULL;
		idx = (uint32_t)t->nr++;
		t->nodes[idx].gen = 0;
	}
	if (hashmap_put(&t->index, st_key(f->pc, f->sp),
			(void *)(uintptr_t)(idx + 1)) < 0)
		return NULL;
	n = &t->nodes[idx];
	gen = n->gen;
	memset(n, 0, sizeof(*n));
	n->gen = gen;
	n->pc = f->pc;
	n->sp = f->sp;
	n->used = true;
	t->live++;
	st->live++;
	if (st->live > st->c.peak_nodes)
		st->c.peak_nodes = st->live;
	return n;
}

/*
 * Records this sample's leaf stack pointer for staleness queries; seq is
 * newer than every sample recorded before.
 */
static int st_hist_push(struct st_thread *t, uint32_t seq, uint64_t sp)
{
	while (t->nr_hist && t->hist[t->nr_hist - 1].sp <= sp)
		t->nr_hist--;
	if (t->nr_hist == ST_HIST_MAX) {
		/* the oldest half goes; what it knew is lost */
		t->hist_cut = t->hist[ST_HIST_MAX / 2 - 1].seq;
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

/* Whether a sample after sample seq had its leaf above sp. */
static bool st_popped_after(const struct st_thread *t, uint64_t sp,
			    uint32_t seq)
{
	size_t lo = 0, hi = t->nr_hist;

	if (seq <= t->hist_cut)
		return true;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (t->hist[mid].seq <= seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < t->nr_hist && t->hist[lo].sp > sp;
}

/* Whether a leaf above n's frame was seen after n was: n was popped. */
static bool st_stale(const struct st_thread *t, const struct st_node *n)
{
	return st_popped_after(t, n->sp, n->seen);
}

/* Sample seq had n's frame: the activation of its callers goes on. */
static void st_link_seen(struct st_node *n, uint32_t seq)
{
	unsigned i;

	for (i = 0; i < n->nr_links; i++)
		if (n->link[i].act_start == n->act_start)
			n->link[i].act_seen = seq;
}

/*
 * Sample seq showed n's caller to be p (NULL: n is the thread's root).
 * Returns whether that caller is new to n.
 */
/* Counts a frame of pc that got its first caller (one) or its second. */
static int st_pc_note(struct st_thread *t, uint64_t pc, bool second)
{
	void *v = NULL;
	uint64_t c;

	hashmap_get(&t->by_pc, pc, &v);
	c = (uint64_t)(uintptr_t)v;
	c += second ? 1 : (uint64_t)1 << 32;
	return hashmap_put(&t->by_pc, pc, (void *)(uintptr_t)c);
}

/*
 * Whether frames of pc were seen with several callers at a share of the
 * depths they were seen at that says the caller depends on more than
 * the depth (tree walks, interpreters): then a caller seen in other
 * activations of a frame is no evidence for this one.
 */
static bool st_pc_varies(const struct st_thread *t, uint64_t pc)
{
	void *v = NULL;
	uint64_t c;

	if (!hashmap_get(&t->by_pc, pc, &v))
		return false;
	c = (uint64_t)(uintptr_t)v;
	return (c & 0xffffffff) * 100 > (c >> 32) * ST_VARIES_PCT;
}

static bool st_link_add(struct stitcher *st, struct st_node *n,
			const struct st_node *p, uint32_t p_slot, uint32_t seq)
{
	uint64_t pc = p ? p->pc : 0, sp = p ? p->sp : 0;
	uint32_t slot = p ? p_slot : ST_ROOT, gen = p ? p->gen : 0;
	struct st_link *l;
	unsigned i;

	for (i = 0; i < n->nr_links; i++) {
		l = &n->link[i];
		if (l->slot == ST_ROOT ? slot == ST_ROOT :
					 l->pc == pc && l->sp == sp) {
			/* the caller's frame may have been evicted and
			 * cached again */
			l->slot = slot;
			l->gen = gen;
			if (l->count < UINT32_MAX)
				l->count++;
			if (l->act_start != n->act_start) {
				l->act_start = n->act_start;
				l->act_first = seq;
				l->act_count = 0;
			}
			l->act_count++;
			l->last = l->act_seen = seq;
			return false;
		}
	}
	if (n->nr_links)
		st->c.conflicts += !n->more_links && n->nr_links == 1;
	if (n->nr_links == ST_LINKS) {
		n->more_links = true;
		return false;
	}
	l = &n->link[n->nr_links++];
	l->pc = pc;
	l->sp = sp;
	l->slot = slot;
	l->gen = gen;
	l->count = 1;
	l->first = l->last = l->act_seen = seq;
	l->act_start = n->act_start;
	l->act_first = seq;
	l->act_count = 1;
	return true;
}

/*
 * Remembers the caller of the activation at (n's sp, its caller's sp),
 * for walks cut at another call site of it; callers that disagree make
 * the pair ambiguous for good.
 */
static int st_cfa_note(struct st_thread *t, struct st_node *n,
		       const struct st_node *p)
{
	uint64_t key = st_cfa_key(n->sp, p->sp);
	void *v;

	if (hashmap_get(&t->by_cfa, key, &v)) {
		struct st_node *o;

		if (v == ST_CFA_AMBIGUOUS)
			return 0;
		o = (uintptr_t)v - 1 < t->nr ? &t->nodes[(uintptr_t)v - 1] :
					       NULL;
		if (o && o != n && o->used && o->sp == n->sp &&
		    o->nr_links && o->link[0].slot != ST_ROOT &&
		    o->link[0].sp == p->sp && o->link[0].pc != p->pc)
			return hashmap_put(&t->by_cfa, key, ST_CFA_AMBIGUOUS);
	}
	return hashmap_put(&t->by_cfa, key,
			   (void *)(uintptr_t)(n - t->nodes + 1));
}

/* Learns sample seq's walk f (nr frames, leaf first) into t's cache. */
static int st_learn(struct stitcher *st, struct st_thread *t, uint32_t seq,
		    const struct stitch_frame *f, unsigned nr,
		    enum end_reason end)
{
	struct st_node *n, *p = NULL;
	uint32_t p_slot = ST_NONE, prev;
	unsigned i, had;

	/* A later pass over the same samples teaches nothing new. */
	if (seq <= t->last_seq)
		return 0;
	prev = t->last_seq;
	t->last_seq = seq;
	if (st_hist_push(t, seq, f[0].sp) < 0 ||
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
		/* samples come in order here: popped since its last sample
		 * (or new), the frame is a new activation; none can have
		 * popped it when that was the thread's previous sample */
		if (!n->seen || (n->seen != prev && st_stale(t, n)))
			n->act_start = seq;
		n->seen = seq;
		st_link_seen(n, seq);
		n->mod = f[i].mod;
		n->map_path = f[i].map_path;
		n->addr = f[i].addr;
		n->rel = f[i].rel;
		n->jit = f[i].jit;
		had = n->nr_links;
		if (i == nr - 1 && end == END_ROOT)
			st_link_add(st, n, NULL, 0, seq);
		if (p_slot != ST_NONE) {
			p = &t->nodes[p_slot];
			if (st_link_add(st, n, p, p_slot, seq) &&
			    st_cfa_note(t, n, p) < 0)
				return -1;
		}
		if (had < 2 && n->nr_links > had &&
		    st_pc_note(t, n->pc, n->nr_links == 2) < 0)
			return -1;
		p_slot = (uint32_t)(n - t->nodes);
	}
	t->nr_last = nr;
	st->c.nodes = st->live;
	return 0;
}

static bool st_frame_eq(const struct stitch_frame *a,
			const struct stitch_frame *b)
{
	/* pc to rel: six words without padding, compared as one block */
	return !memcmp(a, b, offsetof(struct stitch_frame, jit)) &&
	       a->jit == b->jit;
}

/* Learns t's buffered walks, in order, and drops the buffer. */
static int st_pend_learn(struct stitcher *st, struct st_thread *t)
{
	struct stitch_frame *leaf = NULL;
	uint32_t *cur = NULL;
	size_t alloc_cur = 0, alloc_leaf = 0, next = 0, i, j;
	int rc = 0;

	for (i = 0; i < t->nr_pend && rc == 0; i++) {
		const struct st_pend *w = &t->pend[i];
		size_t nr = w->keep + w->nr_new;

		if (mem_grow(&cur, &alloc_cur, sizeof(*cur), nr) < 0 ||
		    mem_grow(&leaf, &alloc_leaf, sizeof(*leaf), nr) < 0) {
			rc = -1;
			break;
		}
		memcpy(cur + w->keep, t->pend_f + next,
		       w->nr_new * sizeof(*cur));
		next += w->nr_new;
		for (j = 0; j < nr; j++)
			leaf[j] = t->pend_u[cur[nr - 1 - j]];
		rc = st_learn(st, t, w->seq, leaf, (unsigned)nr,
			      (enum end_reason)w->end);
	}
	free(cur);
	free(leaf);
	st_pend_release(st, t);
	return rc;
}

/* The index of frame f among t's distinct buffered frames (added when
 * new), or -1 when out of memory. */
static int64_t st_pend_frame(struct st_thread *t, const struct stitch_frame *f)
{
	uint64_t key = st_key(f->pc, f->sp);
	void *v;

	if (hashmap_get(&t->pend_idx, key, &v) &&
	    st_frame_eq(&t->pend_u[(uintptr_t)v - 1], f))
		return (int64_t)(uintptr_t)v - 1;
	if (mem_grow(&t->pend_u, &t->alloc_pend_u, sizeof(*t->pend_u),
		     t->nr_pend_u + 1) < 0 ||
	    hashmap_put(&t->pend_idx, key,
			(void *)(uintptr_t)(t->nr_pend_u + 1)) < 0)
		return -1;
	t->pend_u[t->nr_pend_u] = *f;
	return (int64_t)t->nr_pend_u++;
}

/* What t's buffer holds (its allocations grow by at most twice that). */
static size_t st_pend_size(const struct st_thread *t)
{
	return t->nr_pend * sizeof(*t->pend) +
	       (t->nr_pend_f + t->alloc_pend_cur) * sizeof(*t->pend_f) +
	       t->nr_pend_u * (sizeof(*t->pend_u) + 16);
}

/*
 * Buffers sample seq's walk for t; 1 when it did, 0 when the buffer was
 * full instead, -1 when out of memory.
 */
static int st_pend_add(struct stitcher *st, struct st_thread *t,
		       uint32_t seq, const struct stitch_frame *f,
		       unsigned nr, enum end_reason end)
{
	size_t keep = 0, bytes;
	struct st_pend *w;
	unsigned i;

	while (keep < nr && keep < t->nr_pend_cur &&
	       st_frame_eq(&t->pend_u[t->pend_cur[keep]], &f[nr - 1 - keep]))
		keep++;
	if (st->pend_bytes - t->pend_bytes + st_pend_size(t) +
	    sizeof(*w) + (nr - keep) * (sizeof(*t->pend_f) +
					sizeof(*t->pend_u) + 16) >
	    st->opts.max_pending_bytes)
		return 0;
	if (mem_grow(&t->pend, &t->alloc_pend, sizeof(*t->pend),
		     t->nr_pend + 1) < 0 ||
	    mem_grow(&t->pend_f, &t->alloc_pend_f, sizeof(*t->pend_f),
		     t->nr_pend_f + (nr - keep)) < 0 ||
	    mem_grow(&t->pend_cur, &t->alloc_pend_cur, sizeof(*t->pend_cur),
		     nr) < 0)
		return -1;
	for (i = (unsigned)keep; i < nr; i++) {
		int64_t u = st_pend_frame(t, &f[nr - 1 - i]);

		if (u < 0)
			return -1;
		t->pend_f[t->nr_pend_f++] = (uint32_t)u;
		t->pend_cur[i] = (uint32_t)u;
	}
	w = &t->pend[t->nr_pend++];
	w->seq = seq;
	w->keep = (uint32_t)keep;
	w->nr_new = (uint32_t)(nr - keep);
	w->end = (uint8_t)end;
	t->nr_pend_cur = nr;
	bytes = st_pend_size(t);
	st->pend_bytes += bytes - t->pend_bytes;
	t->pend_bytes = bytes;
	return 1;
}

int stitcher_observe(struct stitcher *st, uint64_t thread, uint32_t seq,
		     const struct stitch_frame *f, unsigned nr,
		     enum end_reason end)
{
	struct st_thread *t;
	int rc;

	if (!nr)
		return 0;
	t = st_thread(st, thread, true);
	if (!t)
		return -1;
	if (t->lazy == ST_IDLE)
		return 0;
	if (t->lazy == ST_PENDING) {
		if (seq <= t->pend_seq)
			return 0;
		if (end != END_WINDOW) {
			rc = st_pend_add(st, t, seq, f, nr, end);
			if (rc != 0) {
				t->pend_seq = seq;
				return rc < 0 ? -1 : 0;
			}
		}
		/* a cut walk, or no room: learn what waited, then this */
		t->lazy = ST_LEARNING;
		if (st_pend_learn(st, t) < 0)
			return -1;
	}
	return st_learn(st, t, seq, f, nr, end);
}

void stitcher_set_lazy(struct stitcher *st, bool lazy)
{
	st->lazy = lazy;
}

void stitcher_settle(struct stitcher *st)
{
	size_t pos = 0;
	void *v;

	st->lazy = false;
	while (hashmap_iter(&st->threads, &pos, NULL, &v)) {
		struct st_thread *t = v;

		if (t->lazy == ST_PENDING) {
			st_pend_release(st, t);
			t->lazy = ST_IDLE;
		}
	}
}

/*
 * Whether sample seq itself showed link l of n: it was the first to show
 * it, or it was learnt (seq is not newer than the thread's newest sample
 * learnt) and its own walk (w->self) has n's frame followed by l's caller
 * (or ends there at the root).
 */
static bool st_link_self(const struct st_thread *t,
			 const struct stitch_walk *w, uint32_t seq,
			 const struct st_node *n, const struct st_link *l)
{
	size_t lo = 0, hi = w->nr_self;

	if (l->first == seq)
		return true;
	if (seq > t->last_seq)
		return false;
	while (lo < hi) {   /* sp grows from the leaf */
		size_t mid = (lo + hi) / 2;

		if (w->self[mid].sp < n->sp)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == w->nr_self || w->self[lo].sp != n->sp ||
	    w->self[lo].pc != n->pc)
		return false;
	if (l->slot == ST_ROOT)
		return lo + 1 == w->nr_self && w->self_rooted;
	return lo + 1 < w->nr_self && w->self[lo + 1].pc == l->pc &&
	       w->self[lo + 1].sp == l->sp;
}

/* Samples other than seq that showed link l of n. */
static uint32_t st_link_others(const struct st_thread *t,
			       const struct stitch_walk *w, uint32_t seq,
			       const struct st_node *n, const struct st_link *l)
{
	return l->count - st_link_self(t, w, seq, n, l);
}

/*
 * Whether link l of n is the caller of n's frame in sample seq's
 * activation of it, which sample at had (seq itself, or for a frame
 * further out, the sample that showed the link to it from seq's
 * activation of the frame inside; 0: none is known): at had the frame in the activation l
 * was last seen in (between its first and last samples with the frame)
 * and a sample other than seq showed l there, or at came after that
 * activation's last sample and no sample since showed the frame popped.
 * Returns 2 when at (not seq) showed l, or other samples showed l there
 * before and after seq (a pop and a call again between samples would have
 * had to bring the same caller back), 1 when at least two others showed it on one side only or
 * one did at least ST_LIVE_GAP samples before at, 0 when that is all
 * there is, -1 when at is in another activation (or unknown: at 0).
 */
static int st_link_live(const struct st_thread *t, uint32_t seq,
			uint32_t at, const struct st_node *n,
			const struct st_link *l)
{
	bool in = false;

	if (!at)
		return -1;
	if (l->act_start <= at && at <= l->act_seen)
		in = true;
	else if (at > l->act_seen)
		in = !st_popped_after(t, n->sp, l->act_seen);
	if (!in)
		return -1;
	/* the sample that put n's frame in seq's stack showed its caller */
	if (at != seq && (at == l->last || at == l->act_first))
		return 2;
	if (l->act_first < seq && seq < l->last)
		return 2;   /* other samples showed it before and after */
	if (l->act_count - (seq == l->last || seq == l->act_first) >= 2)
		return 1;
	return (seq > l->last && seq - l->last >= ST_LIVE_GAP) ||
	       (seq < l->act_first && l->act_first - seq >= ST_LIVE_GAP) ||
	       (l->act_seen > seq && l->act_seen - seq >= ST_LIVE_GAP);
}

/* What st_caller() found. */
enum st_answer {
	ST_NO_CALLER,           /* no other sample showed one */
	ST_LIVE,                /* the caller in seq's activation */
	ST_RECURRING,           /* the caller other activations showed */
	ST_AMBIGUOUS,           /* several, or one that may not be seq's */
	ST_POPPED,              /* strict: one not known to be seq's */
};

/*
 * What sample seq may take for n's caller: the one caller every other
 * sample that had n's frame showed, when it was seen in seq's activation
 * of the frame (ST_LIVE), or (not strict) seen in other activations of a
 * frame whose return address does not show callers that vary with more
 * than the depth (ST_RECURRING: recursion and loops re-create the same
 * frames with the same callers), neither it nor its caller in JIT code
 * (the code at an address changes as functions are compiled again).  Where the frame is one activation
 * seen at another call site (joined: its caller's frame is where the cut
 * walk's CFA says), one sample that showed the caller in it will do.
 * Returns the link, or NULL.
 */
static const struct st_link *st_caller(const struct stitcher *st,
				       const struct st_thread *t,
				       const struct stitch_walk *w,
				       uint32_t seq, uint32_t at,
				       const struct st_node *n, bool joined,
				       enum st_answer *ans)
{
	const struct st_link *one = NULL;
	bool varies, strict, jit;
	unsigned i;
	int live;

	*ans = ST_AMBIGUOUS;
	if (n->more_links)
		return NULL;
	for (i = 0; i < n->nr_links; i++) {
		if (!st_link_others(t, w, seq, n, &n->link[i]))
			continue;
		if (one)
			return NULL;
		one = &n->link[i];
	}
	*ans = ST_NO_CALLER;
	if (!one)
		return NULL;
	jit = n->jit || (st_link_node(t, one) && st_link_node(t, one)->jit);
	/*
	 * JIT code inlines callers (one frame, one sp, a return address
	 * per call site) and its frames are large, so the copies of the
	 * deeper call paths never show their outer callers: that the frame
	 * was not seen popped says little.  Its caller is taken only from
	 * the sample that showed the link from the frame inside, in seq's
	 * activation (at is not seq), never judged at seq itself.
	 */
	if (jit && at == seq) {
		*ans = ST_AMBIGUOUS;
		return NULL;
	}
	/*
	 * Where frames of this return address have several callers, a
	 * pop and a call from elsewhere may come between two samples: only
	 * a caller seen on both sides of the sample is certain there.
	 */
	live = st_link_live(t, seq, at, n, one);
	varies = live < 2 && st_pc_varies(t, n->pc);
	strict = st->opts.refuse_stale || w->live_only;
	if (live == 2 || (live >= !joined && !varies)) {
		*ans = ST_LIVE;
		return one;
	}
	if (live < 0 && !strict && !varies && !jit) {
		*ans = ST_RECURRING;
		return one;
	}
	*ans = live < 0 && strict ? ST_POPPED : ST_AMBIGUOUS;
	return NULL;
}

/* Whether some sample other than seq showed n's caller to be (pc, sp). */
static bool st_has_link(const struct st_thread *t,
			const struct stitch_walk *w, uint32_t seq,
			const struct st_node *n, uint64_t pc, uint64_t sp)
{
	unsigned i;

	for (i = 0; i < n->nr_links; i++)
		if (n->link[i].slot != ST_ROOT && n->link[i].pc == pc &&
		    n->link[i].sp == sp &&
		    st_link_others(t, w, seq, n, &n->link[i]))
			return true;
	return false;
}

/*
 * The activation of outer's function at outer's sp, seen at another call
 * site with its caller at the walk's CFA, whose caller st_caller() takes
 * (*ans says what it found); NULL when there is none.
 */
static struct st_node *st_same_activation(struct stitcher *st,
					  struct st_thread *t,
					  const struct stitch_walk *w,
					  const struct st_node *outer,
					  uint32_t seq, enum st_answer *ans)
{
	uint64_t cfa = w->outer_cfa;
	const struct st_link *l;
	struct st_node *n;
	void *v;

	*ans = ST_NO_CALLER;
	if (!cfa || !st->opts.same_function ||
	    !hashmap_get(&t->by_cfa, st_cfa_key(outer->sp, cfa), &v))
		return NULL;
	if (v == ST_CFA_AMBIGUOUS) {
		*ans = ST_AMBIGUOUS;
		return NULL;
	}
	if ((uintptr_t)v - 1 >= t->nr)
		return NULL;
	n = &t->nodes[(uintptr_t)v - 1];
	if (!n->used || n == outer || n->sp != outer->sp || !n->mod ||
	    !outer->mod ||
	    !st->opts.same_function(st->opts.ctx, n->mod, n->rel, outer->mod,
				    outer->rel))
		return NULL;
	l = st_caller(st, t, w, seq, seq, n, true, ans);
	if (!l || l->slot == ST_ROOT || l->sp != cfa)
		return NULL;
	return n;
}

unsigned stitcher_complete(struct stitcher *st, uint64_t thread, uint32_t seq,
			   const struct stitch_walk *walk,
			   struct stitch_frame *out, unsigned max,
			   struct stitch_result *res)
{
	struct st_thread *t = st_thread(st, thread, false);
	struct stitch_walk own = *walk;
	const struct stitch_walk *w = &own;
	const struct stitch_frame *f = w->f;
	unsigned nr = w->nr, k, n_out = 0;
	const struct st_link *l;
	struct st_node *outer, *n, *p;
	enum st_answer ans;
	uint32_t at = seq;
	uint64_t last_sp;

	memset(res, 0, sizeof(*res));
	if (!t || nr < st->opts.k_min)
		return 0;
	if (!own.self) {
		own.self = own.f;
		own.nr_self = own.nr;
		own.self_rooted = false;
	}
	/* The walk's outermost frames must be cached and linked as it saw
	 * them, by some other sample. */
	outer = st_find(t, f[nr - 1].pc, f[nr - 1].sp);
	if (!outer)
		return 0;
	for (k = 1; k < st->opts.k_min; k++) {
		n = st_find(t, f[nr - 1 - k].pc, f[nr - 1 - k].sp);
		if (!n ||
		    !st_has_link(t, w, seq, n, f[nr - k].pc, f[nr - k].sp))
			return 0;
	}
	p = outer;
	l = st_caller(st, t, w, seq, seq, outer, false, &ans);
	if (ans == ST_NO_CALLER) {
		p = st_same_activation(st, t, w, outer, seq, &ans);
		if (p) {
			res->joined = true;
			l = st_caller(st, t, w, seq, seq, p, true, &ans);
		}
	}
	last_sp = f[nr - 1].sp;
	for (; l && n_out < max && n_out < ST_CHAIN_MAX;
	     p = n, l = st_caller(st, t, w, seq, at, n, false, &ans)) {
		/*
		 * The caller's frame was in the sample that showed the link
		 * in seq's activation; after a caller from other activations
		 * no activation further out is known to be seq's.
		 */
		if (ans == ST_RECURRING) {
			res->stale = true;
			at = 0;
		} else if (at && l->last != seq) {
			at = l->last;
		}
		if (l->slot == ST_ROOT) {
			res->rooted = true;
			break;
		}
		n = st_link_node(t, l);
		if (!n || n->sp <= last_sp)
			break;   /* evicted, or a loop */
		out[n_out].pc = n->pc;
		out[n_out].sp = n->sp;
		out[n_out].mod = n->mod;
		out[n_out].map_path = n->map_path;
		out[n_out].addr = n->addr;
		out[n_out].rel = n->rel;
		n_out++;
		last_sp = n->sp;
	}
	res->ambiguous = !l && ans == ST_AMBIGUOUS;
	res->refused = !l && ans == ST_POPPED;
	res->nr = n_out;
	if (!n_out)
		res->joined = false;
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
