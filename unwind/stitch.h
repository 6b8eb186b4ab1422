/*
 * stitch.h - per-thread root caches: complete stacks that the fixed-size
 * stack copy truncated, from the outer frames the same thread showed in
 * other samples.
 *
 * Every unwound frame is a node keyed by (pc, sp) in its thread's cache,
 * linked to its caller's node.  When a walk runs out of copied stack
 * (END_WINDOW), its two outermost frames must be found in the cache, linked
 * as the walk saw them by another sample (K >= 2); the cached callers
 * beyond them are then appended, marked FRAME_STITCHED, up to a node that
 * was the outermost frame of a walk that reached the thread's root.
 * When the outermost frame itself has no caller link (no sample saw its
 * caller while it was at this call site), a frame of the same function at
 * the same sp whose caller sits at the walk's CFA is the same activation
 * seen at another call site; its caller link is used ("joined").
 * Algorithm and pitfalls: shared/reference/stitching-jit.md, section 7.5.
 *
 * Nodes record which samples asserted their caller link (so a sample never
 * confirms itself) and whether a later sample's stack pointer showed them
 * popped ("stale": the frame was left since; its link is used, and
 * counted, because recursion and loops re-create the same frames).
 * Memory is bounded per thread and overall; the least recently seen nodes
 * go first.
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
	bool refuse_stale;          /* never use a popped frame's link */
};

/* A frame as the unwinder found it (leaf first). */
struct stitch_frame {
	uint64_t pc, sp;
	uint64_t addr;              /* pc, or pc - 1 for callers: to name */
	struct module *mod;         /* where pc is, for naming stitched frames */
	const char *map_path;
	uint64_t rel;
};

struct stitch_counters {
	uint64_t attempts;          /* truncated walks offered for stitching */
	uint64_t stitched;          /* got at least one frame */
	uint64_t rooted;            /* ... and reached a root */
	uint64_t stale;             /* ... using a popped frame's link */
	uint64_t no_match;          /* outermost frames unknown or unlinked */
	uint64_t frames;            /* stitched frames appended */
	uint64_t conflicts;         /* a node's caller link changed */
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

/* A truncated walk: frames f, leaf first; the outermost one's CFA (its
 * caller's sp) when the unwinder computed it before the copy ran out. */
struct stitch_walk {
	const struct stitch_frame *f;
	unsigned nr;
	uint64_t outer_cfa;         /* 0: unknown */
};

struct stitch_result {
	unsigned nr;                /* frames appended */
	bool rooted;                /* they reach a root */
	bool stale;                 /* a popped frame's link was used */
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
