/*
 * resolve.h - turn the event stream into resolved samples: process model,
 * module cache, unwinder and symbolizer driven together.
 *
 * Feed every event in time order to resolve_event(); for each sample it
 * fills a struct rsample (kernel frames from the recorded callchain, then
 * the user frames the unwinder found or the recorded user callchain),
 * valid until the next call.
 */
#ifndef RESTACK_UNWIND_RESOLVE_H
#define RESTACK_UNWIND_RESOLVE_H

#include <stdbool.h>
#include <stdint.h>

#include "common/arena.h"
#include "common/err.h"
#include "common/event.h"
#include "common/stack.h"
#include "unwind/aspace.h"
#include "unwind/jit.h"
#include "unwind/symbundle.h"
#include "unwind/module.h"
#include "unwind/stitch.h"
#include "unwind/symbolize.h"
#include "unwind/unwind.h"

struct warmup;

struct resolve_opts {
	bool no_inline;          /* one frame per function, no inline chain */
	bool no_kernel;          /* drop kernel frames */
	bool no_fp;              /* no frame-pointer fallback */
	unsigned max_frames;     /* 0: 1024 */
	unsigned max_scan;       /* scanned frames per sample, 0: none */
	const char *kallsyms;    /* kernel symbols file, or NULL for none */
	struct kallsyms_once *kallsyms_shared; /* instead of kallsyms: read
					   * once for several resolvers */
	const char *const *buildid_dirs;
	unsigned nr_buildid_dirs;
	const struct locate_opts *locate; /* the lookup chain, borrowed; NULL:
				   * buildid_dirs and /usr/lib/debug */
	bool use_live_vdso;      /* this machine's vdso may stand in */
	bool no_stitch;          /* leave truncated stacks as they are */
	struct stitch_opts stitch;
	bool validate_stitch;    /* measure stitching on complete stacks */
	const char *const *jit_dirs; /* perf-PID.map, jit-PID.dump elsewhere */
	unsigned nr_jit_dirs;
	struct warmup *warmup;   /* optional: builds each module's DWARF
				  * image ahead as it is loaded (borrowed) */
	bool defer_names;        /* a user frame whose module's DWARF
				  * another thread is decompressing, and
				  * kernel frames while another thread
				  * reads the kernel symbols, get a
				  * SYM_PENDING location for now, named by
				  * resolve_name_sample() */
	struct modcache *mc;     /* batch mode: a module cache kept from
				  * input to input (borrowed, used without
				  * locks: one resolver at a time); resolve
				  * begins and ends this input on it.  NULL:
				  * a cache of the resolver's own */
};

struct resolve_stats {
	uint64_t samples;
	uint64_t end[END_REASON__COUNT];
	uint64_t frames[FRAME_ORIGIN__COUNT];
	uint64_t kernel_only;     /* samples with no user part at all */
	uint64_t truncated;       /* dyn_size == size: the window was full */
	uint64_t window_ends;     /* walks that ran out of copied stack */
	uint64_t stitched;        /* ... completed from the root cache */
	uint64_t stitched_rooted; /* ... up to the thread's root */
	uint64_t stitched_stale;  /* ... through frames popped since seen */
	uint64_t stitched_joined; /* ... through the outermost frame's
				   * activation seen at another call site */
	uint64_t jit_frames;      /* frames named from JIT information */
	/* --validate-stitch: complete stacks cut short and stitched again */
	uint64_t validate_tried;
	uint64_t validate_stitched;  /* ... got at least one frame */
	uint64_t validate_exact;     /* ... the whole stack, to the root */
	uint64_t validate_honest;    /* ... a leaf-side part, marked cut */
	uint64_t validate_wrong;     /* ... anything else */
	uint64_t validate_ambiguous; /* ... stopped at a frame seen with
				      * several callers */
};

/*
 * Passes over the input.  A pipe gets one (SINGLE).  A regular file gets
 * two: PRESCAN (samples only fill the root caches) then FINAL (every
 * sample resolved with all caches known), when samples must come out in
 * order; or FIRST (every sample resolved, but a stack that ran out of
 * copied stack and cannot be completed yet is deferred) then, only if
 * some were, RETRY (the deferred samples alone, with all caches known).
 */
enum resolve_pass {
	RESOLVE_SINGLE,
	RESOLVE_PRESCAN,
	RESOLVE_FINAL,
	RESOLVE_FIRST,
	RESOLVE_RETRY,
};

struct resolve_loc_slot;

/* A sample the FIRST pass left for the RETRY pass. */
struct resolve_deferred {
	uint64_t order;          /* event.order */
	uint64_t file_off;       /* event.file_off, UINT64_MAX when it came
				  * out of compressed data */
	uint64_t time;           /* with tid, to know it again */
	int32_t tid;
	uint32_t seq, tseq;      /* its numbers in the FIRST pass */
};

struct resolve {
	struct resolve_opts opts;
	const struct regs_arch *arch;
	struct modcache *mc;     /* opts.mc, else &own_mc */
	struct modcache own_mc;
	struct aspace as;
	struct symbolizer sym;
	struct unwinder uw;
	struct resolve_loc_slot *locs; /* symbol locations by module and
				  * address, in front of the modules'
				  * caches (resolve.c), owned */
	struct stitcher *st;     /* NULL when stitching is off */
	struct jit_index jit;
	struct symbundle bundle; /* names the capture carries (sysprof's
				  * __symbols__) */
	struct hashmap lives;    /* tid -> number of ended lives (stitch key) */
	struct hashmap tseqs;    /* stitch key -> samples of that thread life
				  * so far in this pass */
	uint32_t tseq;           /* the current sample's number in its thread
				  * life: the root caches' sample number, the
				  * same in every pass and for every -j */
	uint32_t seq;            /* samples so far in this pass */
	enum resolve_pass pass;
	struct resolve_deferred *deferred; /* RESOLVE_FIRST: the samples
				  * left for the retry, in order */
	size_t nr_deferred, alloc_deferred, next_deferred;
	bool retry_by_order;     /* RETRY: resolve_retry_by_order() */
	bool retry_by_offset;    /* RETRY: resolve_retry_by_offset() */
	struct rframe *frames;   /* output scratch */
	size_t alloc_frames;
	struct stitch_frame *sf, *sf2; /* scratch for stitching */
	struct hashmap pending;  /* (module, address) -> SYM_PENDING
				  * location, in pending_arena */
	struct arena pending_arena;
	struct module **pending_mods; /* modules with pending locations */
	size_t nr_pending_mods, alloc_pending_mods;
	const struct sym_loc *kernel_pending; /* every kernel frame's
				  * while the kernel symbols are not read */
	struct resolve_stats stats;
};

/*
 * Sets up for a capture recorded on arch.  Returns 0, or -1 with *err
 * filled (unknown architecture, out of memory).
 */
int resolve_init(struct resolve *r, const struct resolve_opts *opts,
		 enum event_arch arch, struct err *err);
void resolve_release(struct resolve *r);

/*
 * Takes one event.  Returns 1 with *out filled for a sample, 0 for any
 * other event (and for samples a PRESCAN, FIRST or RETRY pass does not
 * hand out), -1 when out of memory.
 */
int resolve_event(struct resolve *r, const struct event *ev,
		  struct rsample *out);

/*
 * With opts.defer_names, a sample resolve_event() gives may hold
 * SYM_PENDING locations (those of modules whose DWARF another thread is
 * decompressing): the caller copies it (frames included) and hands it out
 * once resolve_name_sample() named it, in the same order as the others.
 * resolve_names_wait() says whether naming a pending location would
 * still wait.
 */
bool resolve_names_wait(struct resolve *r);

/* Whether any sample so far got a pending location. */
static inline bool resolve_deferred_names(const struct resolve *r)
{
	return r->nr_pending_mods || r->kernel_pending;
}

/*
 * Names s's pending locations in place (waiting when need be) and settles
 * what its outermost frame's name decides (a thread's first function:
 * END_ROOT).  Returns 0, or -1 when out of memory.
 */
int resolve_name_sample(struct resolve *r, struct rsample *s);

/*
 * Starts a pass (the first call may be skipped for SINGLE).  FINAL and
 * RETRY forget processes and threads, since the events come again, but
 * keep modules, symbols and the root caches.
 */
void resolve_begin_pass(struct resolve *r, enum resolve_pass pass);

/*
 * Adds src's counts (statistics, per-module counts and whether a module
 * was kept from an earlier input, root-cache counters) into dst, for
 * resolvers that served disjoint sets of threads of the same capture, and
 * takes over the kernel symbols src read when dst did not.
 * Returns 0 or -1 (out of memory).
 */
int resolve_add_counts(struct resolve *dst, struct resolve *src);

/* Samples the FIRST pass deferred to the RETRY pass. */
static inline size_t resolve_nr_deferred(const struct resolve *r)
{
	return r->nr_deferred;
}

/*
 * Deferred samples the RETRY pass has not met (yet): after it, nonzero
 * when its reader did not deliver what the FIRST pass's did (the file
 * changed between passes, or its samples were numbered otherwise).
 */
static inline size_t resolve_nr_unretried(const struct resolve *r)
{
	return r->nr_deferred - r->next_deferred;
}

/*
 * The ordinal (from 1, among the samples resolve_event() was given in the
 * FIRST pass) of the last deferred sample; 0: none.  A RETRY pass has
 * nothing to do after it.
 */
static inline uint64_t resolve_last_deferred(const struct resolve *r)
{
	return r->nr_deferred ? r->deferred[r->nr_deferred - 1].seq : 0;
}

/*
 * Whether the sample delivered at order (event.order) was deferred: for a
 * reader's sample filter in the RETRY pass, whose reader then delivers
 * those samples alone (same orders as in the FIRST pass).
 */
bool resolve_deferred_at(const struct resolve *r, uint64_t order);

/*
 * The RETRY pass is given the deferred samples alone (resolve_deferred_at()
 * as the reader's filter): each is known by its order and gets the
 * numbers it had in the FIRST pass, other samples are not counted.  Call
 * after resolve_begin_pass(RESOLVE_RETRY).
 */
void resolve_retry_by_order(struct resolve *r);

/*
 * The same for a reader that reads the deferred samples' records alone
 * (perfdata_visit_only()), whose event.order is not the FIRST pass's: each
 * is known by its event.file_off, and its rsample gets its order from
 * then (the offsets: deferred[i].file_off, in delivery order).  False
 * when one is not a record's own (compressed data): the pass must then
 * be by order.
 */
bool resolve_retry_by_offset(struct resolve *r);

/*
 * In a RETRY pass, the FIRST pass's event.order of the next deferred
 * sample not yet met; UINT64_MAX when none is left.
 */
static inline uint64_t resolve_next_retry_order(const struct resolve *r)
{
	return r->next_deferred < r->nr_deferred ?
		       r->deferred[r->next_deferred].order :
		       UINT64_MAX;
}

#endif
