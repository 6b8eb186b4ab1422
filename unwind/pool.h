/*
 * pool.h - resolve samples on several worker threads, hand them out in
 * input order, for inputs read once, as a stream (a capture file is
 * better served by shards.h, whose workers read it themselves).
 *
 * Each worker owns a whole struct resolve (process table, module cache,
 * unwinder, symbolizer, root caches).  Every non-sample event goes to all
 * workers, in input order; each sample goes to one worker chosen by its
 * thread id.  A worker therefore sees its threads' samples in the same
 * order, against the same process history, as a single resolver would, and
 * the root caches (which are per thread) learn exactly the same things: the
 * samples come out identical whatever the number of workers.  Nothing
 * global is locked on the hot path; the price is that each worker loads the
 * modules it needs itself (memory grows with the number of workers, not
 * with the input).
 *
 * The caller's thread reads the input and calls pool_event(); resolved
 * samples are passed to the emit callback on the caller's thread, in the
 * order their events were given, with the struct rsample valid only during
 * the call.  Events are copied: the caller may reuse its buffers as soon as
 * pool_event() returns.  In-flight work is bounded (a fixed number of
 * batches), so memory does not grow with the input.
 */
#ifndef RESTACK_UNWIND_POOL_H
#define RESTACK_UNWIND_POOL_H

#include <stdbool.h>

#include "common/err.h"
#include "common/event.h"
#include "common/stack.h"
#include "unwind/resolve.h"

#define POOL_MAX_WORKERS 64

struct pool;

/*
 * Sets up the resolver of worker index (1..nr-1); returns 0 or -1 with
 * *err filled.  The index lets the caller give each worker what it uses
 * without locks, such as a module cache kept across captures.
 */
typedef int (*pool_init_fn)(void *ctx, unsigned index, struct resolve *r,
			    struct err *err);
/* Takes one resolved sample, valid during the call; 0, or -1 to stop. */
typedef int (*pool_emit_fn)(void *ctx, const struct rsample *s);

/*
 * Starts nr workers (2..POOL_MAX_WORKERS).  Worker 0 uses *first, which
 * the caller has set up already and gets back, holding every worker's
 * counts, from pool_finish(); the others are set up by init.  Returns
 * NULL with *err filled on failure.
 */
struct pool *pool_start(unsigned nr, struct resolve *first, pool_init_fn init,
			void *init_ctx, pool_emit_fn emit, void *emit_ctx,
			struct err *err);

/* Starts a pass on every worker (resolve_begin_pass). */
int pool_begin_pass(struct pool *p, enum resolve_pass pass);

/*
 * Where events come from, when it can keep a sample's bytes (stack copy,
 * raw payload) alive for the workers instead of having them copied: hold
 * returns a token for the event just read (NULL: copy it), release gives
 * it back.  Both are called on the caller's thread only.
 */
struct pool_source {
	void *(*hold)(void *ctx);
	void (*release)(void *ctx, void *token);
	void *ctx;
};

/*
 * Gives one event to the workers; emits the samples that are ready.  src
 * may be NULL (everything is copied); when given, it must stay valid until
 * pool_drain() returns.  Returns 0, or -1 when a worker ran out of memory
 * or emit failed.
 */
int pool_event(struct pool *p, const struct event *ev,
	       const struct pool_source *src);

/*
 * Waits until every event given so far is resolved and emitted, and gives
 * back every token held.
 */
int pool_drain(struct pool *p);

/* Samples the workers' FIRST passes deferred (sum over workers). */
size_t pool_nr_deferred(struct pool *p);

/*
 * Where the RETRY pass may stop: the ordinal (from 1, among the samples
 * sent in the pass) of the last sample a worker deferred; 0: none.  Call
 * when the workers are idle (after pool_drain()).
 */
uint64_t pool_last_deferred(struct pool *p);

/*
 * Drains, stops the workers, adds their counts (statistics, per-module
 * counts, root-cache counters) into the first resolver and releases the
 * others; worker_samples (NULL, or one entry per worker) gets the samples
 * each worker resolved.  Returns 0, or -1 when something failed earlier.
 */
int pool_finish(struct pool *p, uint64_t *worker_samples);

#endif
