/*
 * stitch.h - per-thread root caches: complete stacks that the fixed-size
 * stack copy truncated, from the outer frames the same thread showed in
 * other samples.
 *
 * Every unwound frame is a node keyed by (pc, sp) in its thread's cache,
 * with the distinct callers samples showed it with (a caller: the frame at
 * the next (pc, sp) out, or none for the thread's root), and how many
 * samples showed each.  When a walk runs out of copied stack (END_WINDOW),
 * its two outermost frames must be found in the cache, linked as the walk
 * saw them by another sample (K >= 2); then, from its outermost frame,
 * callers are appended (FRAME_STITCHED) as long as each frame was only
 * ever seen with one caller, up to the thread's root.  A frame seen with
 * several callers ends the stitch as ambiguous: the stack is then marked
 * "[truncated: ambiguous caller]" instead of guessing (several call paths
 * reach the same (pc, sp) in recursion entered from several callers, tree
 * walks, interpreters; which one a cut sample was on is unknowable).
 * When the outermost frame itself has no caller link (no sample saw its
 * caller while it was at this call site), a frame of the same function at
 * the same sp whose caller sits at the walk's CFA is the same activation
 * seen at another call site; its caller is used ("joined"), unless
 * activations there were seen with different callers.
 * Algorithm and pitfalls: shared/reference/stitching-jit.md, section 7.5.
 *
 * A sample never vouches for itself: a caller only sample seq showed
 * counts neither as evidence nor as ambiguity when seq is completed (so
 * --validate-stitch, which cuts a sample the cache has seen, sees the
 * cache as it would be without that sample's outer frames).  Each sample
 * is learnt once: a later pass over the same samples (the same seq)
 * changes nothing.  Whether a later sample's stack pointer showed a frame
 * popped ("stale": the frame was left since) is counted; refuse_stale
 * (--stitch=strict) stops before a stale frame's caller.  Memory is
 * bounded per thread and overall; the least recently seen nodes go first.
 */
#ifndef RESTACK_UNWIND_STITCH_H
#define RESTACK_UNWIND_STITCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/hashmap.h"
#include "common/stack.h"

struct module;

struct stitch_opts {
	unsigned k_min;             /* consecutive frames that must match (2) */
	/* Whether two code addresses lie in the same function; NULL: never
	 * join activations across call sites. */
	bool (*same_function)(void *ctx, struct module *a, uint64_t rel_a,
			      struct module *b, uint64_t rel_b);
	void *ctx;
	size_t max_thread_nodes;    /* per thread (default 65536) */
	size_t max_nodes;           /* overall (default: 64 MiB worth) */
	bool refuse_stale;          /* never follow a popped frame's caller */
	size_t max_pending_bytes;   /* lazy observation's buffers, overall
				     * (default: a quarter of max_nodes' worth) */
};

/* A frame as the unwinder found it (leaf first). */
struct stitch_frame {
	uint64_t pc, sp;
	uint64_t addr;              /* pc, or pc - 1 for callers: to name */
	struct module *mod;         /* where pc is, for naming stitched frames */
	const char *map_path;
	uint64_t rel;
	bool jit;                   /* code that can change under the same
				     * address: JIT code, no file behind it */
};

struct stitch_counters {
	uint64_t attempts;          /* truncated walks offered for stitching */
	uint64_t stitched;          /* got at least one frame */
	uint64_t rooted;            /* ... and reached a root */
	uint64_t stale;             /* ... using a popped frame's link */
	uint64_t no_match;          /* outermost frames unknown or unlinked */
	uint64_t frames;            /* stitched frames appended */
	uint64_t conflicts;         /* frames seen with more than one caller */
	uint64_t evicted;           /* nodes dropped for memory */
	uint64_t threads;           /* threads with a cache now */
	uint64_t threads_seen;      /* threads that ever had one */
	uint64_t nodes;             /* live nodes now */
	uint64_t peak_nodes;
};

struct stitcher;

struct stitcher *stitcher_new(const struct stitch_opts *opts);
void stitcher_free(struct stitcher *st);

/*
 * Threads are named by a key the caller makes unique per thread lifetime
 * (tid and a count of its exits and execs), the same in every pass.
 *
 * Records the frames of sample seq (a number from 1 that identifies it,
 * the same in every pass over the input) of thread key: leaf first, nr
 * frames, the walk ended for reason end.  Returns 0, or -1 when out of
 * memory.
 */
int stitcher_observe(struct stitcher *st, uint64_t thread, uint32_t seq,
		     const struct stitch_frame *f, unsigned nr,
		     enum end_reason end);

/*
 * Lazy observation, for a pass that a later one follows over the same
 * samples (stitcher_set_lazy(st, true) before it): a thread's walks are
 * kept in a buffer (outer frames shared with the walk before, bounded by
 * max_pending_bytes overall) and learnt only when the thread has a walk
 * that ran out of copied stack (END_WINDOW), all of them then, in order,
 * before that one; or when the buffer is full.  The cache then knows what
 * it would have known had every walk been learnt as it came (only which
 * nodes memory limits evict can differ, their order of use being another).
 * A thread without a cut walk, the usual case with shallow stacks, costs
 * its buffer and never its nodes.  stitcher_settle(), when that pass ends,
 * drops the buffers: their threads need no stitching, and later passes
 * learn nothing for them.
 */
void stitcher_set_lazy(struct stitcher *st, bool lazy);
void stitcher_settle(struct stitcher *st);

/* A truncated walk: frames f, leaf first; the outermost one's CFA (its
 * caller's sp) when the unwinder computed it before the copy ran out. */
struct stitch_walk {
	const struct stitch_frame *f;
	unsigned nr;
	uint64_t outer_cfa;         /* 0: unknown */
	bool live_only;             /* stop before a popped frame's caller
				     * (as refuse_stale, for one walk) */
	/* What the sample itself showed, leaf first: links in it are not
	 * evidence for it (NULL, 0: f, nr) */
	const struct stitch_frame *self;
	unsigned nr_self;
	bool self_rooted;           /* ... and its walk reached the root */
};

struct stitch_result {
	unsigned nr;                /* frames appended */
	bool rooted;                /* they reach a root (also with nr 0:
				     * the walk's outermost frame is one) */
	bool stale;                 /* a popped frame's caller was used */
	bool ambiguous;             /* stopped at a frame seen with several
				     * callers (also with nr 0) */
	bool refused;               /* strict: stopped at a popped frame */
	bool joined;                /* through the same activation seen at
				     * another call site */
};

/*
 * Looks for the callers of truncated walk w of sample seq.  Fills out[]
 * (at most max) with the stitched frames, innermost first, and *res.
 * Every link followed must have been seen by a sample other than seq.
 * Returns res->nr, 0 when nothing matched.  Does not change the cache.
 */
unsigned stitcher_complete(struct stitcher *st, uint64_t thread, uint32_t seq,
			   const struct stitch_walk *w,
			   struct stitch_frame *out, unsigned max,
			   struct stitch_result *res);

/* The thread's life is over: drop its frames. */
void stitcher_forget(struct stitcher *st, uint64_t thread);

void stitcher_counters(const struct stitcher *st, struct stitch_counters *c);

/*
 * Adds src's counters into dst's (stitchers that served disjoint sets of
 * threads, as parallel workers do).
 */
void stitcher_add_counters(struct stitcher *dst, const struct stitcher *src);

/* Bytes one cached frame costs, to turn a memory budget into nodes. */
size_t stitcher_node_bytes(void);

#endif
