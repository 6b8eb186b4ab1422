/*
 * shards.h - resolve one capture on several threads that each read the
 * whole input and resolve the samples of their share of its threads, and
 * hand the resolved samples out in input order.
 *
 * Each worker runs the caller's work function with a reader of its own,
 * whose sample filter (source_set_sample_filter()) drops the samples of
 * the other workers' threads before they are decoded, and a resolver of
 * its own.  Every worker sees every non-sample event, and its threads'
 * samples in the same order, as a single resolver would: the results do
 * not depend on the number of workers.  Nothing but the results crosses
 * from one thread to another: a worker unwinds records where its own
 * reader mapped them, while they are in its core's cache (the pool of
 * pool.h, which copies events from one reading thread to its workers, lost
 * more to that than a second core gave on two cores).
 *
 * A worker puts its results with their event.order; whichever worker is
 * free merges them by (output pass, order) and emits them, one at a time,
 * and the caller's thread (worker 0) emits the rest at the end.  Output
 * passes: a worker ends each one (shards_end_pass()) after putting its
 * results of the pass, and every worker ends the same number of them; the
 * results of pass n all come before those of pass n + 1.  So that a
 * worker whose threads have no samples for a while does not hold the
 * others back, it says how far it has come (shards_progress()).
 *
 * Each worker holds at most a fixed number of results not yet emitted and
 * blocks when it has that many: memory does not grow with the input.
 */
#ifndef RESTACK_UNWIND_SHARDS_H
#define RESTACK_UNWIND_SHARDS_H

#include <stdbool.h>
#include <stdint.h>

#include "common/event.h"
#include "common/hashmap.h"
#include "common/stack.h"

#define SHARDS_MAX_WORKERS 64

struct shards;

/*
 * Takes one result, valid during the call, with the event.order of its
 * record: a resolved sample s, its record ev, or both (either may be NULL,
 * not both); 0, or -1 to stop.  Called on any worker's thread, never on
 * two at once.
 */
typedef int (*shards_emit_fn)(void *ctx, uint64_t order,
			      const struct rsample *s,
			      const struct event *ev);

/*
 * The work of worker index, on a thread of its own (0: the caller's).
 * Returns 0, or -1 when it failed (the caller of shards_run() finds out
 * why from ctx); the other workers are then stopped.
 */
typedef int (*shards_work_fn)(void *ctx, unsigned index);

/* nr workers (1..SHARDS_MAX_WORKERS); NULL when out of memory. */
struct shards *shards_new(unsigned nr, shards_emit_fn emit, void *emit_ctx);

/*
 * Runs work on every worker and emits their results in order.  Returns 0,
 * or -1 when a worker failed, emit failed or a thread could not start
 * (*thread_failed is then set).
 */
int shards_run(struct shards *sh, shards_work_fn work, void *ctx,
	       bool *thread_failed);

/*
 * Worker index's result for the record of event.order order: rs, ev or
 * both (for a writer of every record: ev is then the record, rs NULL for
 * one that is not a resolved sample), copied; its frames' sym_loc
 * pointers and ev's attr must stay valid until shards_run() returns.
 * copy_flags: event_copy()'s for ev.  May wait for room.  Returns 0, or
 * -1 when the run is being abandoned.
 */
int shards_put(struct shards *sh, unsigned index, uint64_t order,
	       const struct rsample *rs, const struct event *ev,
	       unsigned copy_flags);

/*
 * Worker index has put every result of the current output pass whose
 * order is below upto.  Cheap: call it for every record dropped.
 */
void shards_progress(struct shards *sh, unsigned index, uint64_t upto);

/* Worker index has put every result of its current output pass. */
int shards_end_pass(struct shards *sh, unsigned index);

/* Whether the run is being abandoned (a worker failed). */
bool shards_stopping(const struct shards *sh);

void shards_free(struct shards *sh);

/*
 * Which worker takes a thread's samples: the one its samples went to
 * before, else the worker given the fewest threads so far (the first of
 * them): round robin in the order threads first appear.  Sample counts at
 * a thread's first sample say little about the work to come (a main
 * thread's few start-up samples would send both of its busy threads to
 * one worker).  Decided from the order of the samples alone, so the same
 * in every worker that sees them and in every run.  Zero-initialised
 * state, for nr workers.
 */
struct shards_split {
	struct hashmap tid_worker;      /* tid -> worker index */
	unsigned threads[SHARDS_MAX_WORKERS]; /* given to each */
	unsigned nr;
	bool has_last;                  /* the last answer, for runs of one
					 * thread's samples */
	int32_t last_tid;
	unsigned last_pick;
};

void shards_split_init(struct shards_split *s, unsigned nr);
/*
 * The worker for thread tid, given one now if it has none; UINT_MAX when
 * out of memory.
 */
unsigned shards_split_pick(struct shards_split *s, int32_t tid);
/* Whether thread tid has a worker (*pick), without giving it one. */
bool shards_split_find(struct shards_split *s, int32_t tid, unsigned *pick);
void shards_split_release(struct shards_split *s);

#endif
