/*
 * run_internal.h - what run.c shares with run_shard.c, the conversion of a
 * file on several threads that each read it (see unwind/shards.h).
 */
#ifndef RESTACK_CMD_RUN_INTERNAL_H
#define RESTACK_CMD_RUN_INTERNAL_H

#include "cmd/run.h"

/*
 * Sets up run->res (worker 0's resolver) and what all workers share, once
 * the input's metadata is known: in, that of the reader that has read the
 * records so far (a pipe-mode capture's comes as it is read, a file's
 * from its header); starts the pool unless run->sharded.  Returns 0, or
 * -1 after printing the error.
 */
int run_init_resolver(struct run *run, const struct perfdata_info *in);

/*
 * The debug files the warmup thread inflates before the run needs them
 * (run_warm.c): those of the user modules in's build-id list, queued now,
 * and that of the C library the capture's first records map (a perf.data
 * file's), found on the warmup thread.  Nothing without run->warmup.
 */
void run_warm_listed(struct run *run, const struct perfdata_info *in);
void run_warm_mapped(struct run *run, const struct perfdata_info *in);

/* Frees what run_warm_mapped() left, once the warmup thread is stopped. */
void run_warm_free(struct run *run);

/*
 * The workers for run when -j does not say, from a look at the capture's
 * first samples (run_auto.c); 0: the default's (run_jobs()).
 */
unsigned run_auto_workers(const struct run *run,
			  const struct perfdata_info *in);

/* Sets up the resolver of worker index (1..) like run->res. */
int run_setup_resolver(void *ctx, unsigned index, struct resolve *r,
		       struct err *err);

/*
 * Hands s to fn, its inline names as perf's addr2line gave them
 * (run.c); samples come in output order.  Returns fn's result or -1.
 */
int run_give(struct run *run, run_sample_fn fn, void *ctx,
	     const struct rsample *s);

/*
 * run_give() to run->fn for run->res's samples with one worker, holding
 * a sample with frames not named yet (resolve_opts.defer_names), and
 * those after it, until naming them does not wait (run_held.c).
 * run_held_flush() names and hands out those held, waiting if it must:
 * at the end of each pass.  Both return 0, or -1 when out of memory.
 */
int run_held_give(struct run *run, const struct rsample *s);
int run_held_flush(struct run *run);
void run_held_free(struct run *run);

/* Passes a resolved sample to the caller's function (ctx: the run). */
int run_emit(void *ctx, const struct rsample *s);

/* Whether the resolvers take ev (the others only pass by writers). */
bool run_resolves(const struct event *ev);

/* Whether samples of the event called name may be used (--event). */
bool run_event_named(const struct run_opts *o, const char *name);

/*
 * Off-CPU profiles (--profile): 1 when samples of the event called name
 * are used whatever the chosen event (sched:sched_switch), -1 when never
 * (the others, for --profile offcpu), 0 when as the chosen event's.
 */
int run_profile_wants(const struct run_opts *o, const char *name);

/* The progress line on stderr (see run.c); done clears it. */
void run_progress(struct run *run, const struct event *ev, bool done);

/*
 * run_capture() for a regular file and more than one job: every worker
 * reads the file and resolves its share of the threads.  run->rd is open
 * and the pass plan is as run_capture() worked it out (ordered: prescan
 * then final; else first then retry; no_stitch: single).  Returns 0, or
 * -1 after printing the error.
 */
int run_capture_sharded(struct run *run, bool ordered);

/*
 * Fills e for a RETRY pass that did not meet every sample r's FIRST pass
 * deferred (resolve_nr_unretried()): the run fails rather than drop them.
 */
void run_retry_missed(struct err *e, const struct resolve *r);

/*
 * Has rd, a RETRY pass's reader, read res's deferred samples and the
 * records that are not samples alone (perfdata_visit_only()), known by
 * their offsets (resolve_retry_by_offset()), when first_rd, the FIRST
 * pass's reader, indexed them (perfdata_index_records()); false: it did
 * not, and the pass is to be made as before.
 */
bool run_retry_visits(const struct source *first_rd, struct source *rd,
		      struct resolve *res);

/* The ctx of run's sinks (run_sinks). */
static inline void *run_sinks_ctx(const struct run *run)
{
	return run->opts->sinks_ctx ? run->opts->sinks_ctx : run->fn_ctx;
}

/* run_module_build_id() while the workers run. */
unsigned run_shard_build_id(const struct run_shard *rs, const char *path,
			    uint8_t bid[20]);

#endif
