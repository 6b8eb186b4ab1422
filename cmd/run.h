/*
 * run.h - what `convert` and `stats` share: the unwinding options, the
 * loop from a capture to resolved samples, and the statistics report.
 */
#ifndef RESTACK_CMD_RUN_H
#define RESTACK_CMD_RUN_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#include "cmd/lookup.h"
#include "common/err.h"
#include "common/sfilter.h"
#include "common/stack.h"
#include "formats/perfdata.h"
#include "formats/source.h"
#include "unwind/a2lstate.h"
#include "unwind/pool.h"
#include "unwind/resolve.h"

#define RUN_MAX_BUILDID_DIRS 16
#define RUN_MAX_KEPT 1024   /* modules a kept module cache holds at most */

struct rsample;
struct event;
struct run_shard;
struct modload;

/*
 * Optional, for writers that carry the input's records over (perf.data,
 * sysprof): called for every record of the pass that hands out samples, in
 * order, with the resolved sample when the record is one (else rs is
 * NULL); in is the metadata of the reader ev comes from.  With -j > 1 on
 * a file, called on any worker's thread, never on two at once: look
 * modules up with run_module_build_id() only.  Returns 0, or -1 after
 * printing the error.
 */
typedef int (*run_record_fn)(void *ctx, const struct perfdata_info *in,
			     const struct event *ev,
			     const struct rsample *rs);

/*
 * Optional, for writers that show what happened besides the samples
 * (Firefox markers): called once for each record that is not a sample, in
 * the reader's order, by the first pass that hands samples out (whatever
 * the run's filter, which is the callback's to apply).  With -j > 1 on a
 * file, on worker 0's thread, while samples may be handed out on another:
 * keep what it is given apart from what the sample function writes.
 * Returns 0, or -1 when out of memory.
 */
typedef int (*run_event_fn)(void *ctx, const struct event *ev);

/*
 * Optional, for writers whose output only sums samples (folded stacks):
 * with -j > 1 on a file, each worker but the first adds its samples to a
 * sink of its own as it resolves them, instead of handing them over in
 * input order.  fork(ctx) makes a sink like the one behind ctx (NULL:
 * out of memory); add() takes a sample, on that worker's thread only;
 * join(ctx, sink) adds the sink's sums to ctx's and frees it, returning
 * 0, or -1 when out of memory (the sink is freed all the same); drop()
 * frees a sink of a run that failed.  ctx is run_opts.sinks_ctx, else
 * run_capture()'s (run_folded_sinks: a struct folded).  Sums of
 * names are taken in input order all the same when inline chains are on:
 * their names depend on what was named before (unwind/a2lstate.h).
 */
struct run_sinks {
	void *(*fork)(void *ctx);
	int (*add)(void *sink, const struct rsample *s);
	int (*join)(void *ctx, void *sink);
	void (*drop)(void *sink);
	bool names;     /* the sums hold frame names */
};

/* Sinks of folded stacks: ctx (run_opts.sinks_ctx) is the struct folded
 * the workers' sums are added to. */
extern const struct run_sinks run_folded_sinks;

/*
 * Module caches kept from one run to the next (batch mode), so that the
 * modules every capture may share (see modcache_end_input()) are opened,
 * decompressed and parsed once.  Cache i serves worker i of every run (0:
 * the only resolver with one job), so each is used by one thread at a
 * time, without locks.  The caller owns them: zero-initialised, given to
 * the runs through run_opts, released after the last run_free().
 */
struct run_modcaches {
	struct modcache mc[POOL_MAX_WORKERS];
	bool ready[POOL_MAX_WORKERS];
};

void run_modcaches_release(struct run_modcaches *c);

/* --profile: what samples weigh (cmd/offcpu.h) */
enum run_profile {
	RUN_PROFILE_CPU,        /* the samples as recorded */
	RUN_PROFILE_OFFCPU,     /* switch-outs, weighted by the time off CPU */
	RUN_PROFILE_WALL,       /* both, in nanoseconds */
};

/* The tracepoint whose samples off-CPU profiles are made of. */
#define RUN_SCHED_SWITCH "sched:sched_switch"

struct run_opts {
	bool no_inline, no_kernel, no_fp;
	unsigned max_frames;
	unsigned max_scan;               /* --max-scan N */
	bool max_scan_set;
	const char *kallsyms;            /* --kallsyms FILE */
	const char *buildid_dirs[RUN_MAX_BUILDID_DIRS];
	unsigned nr_buildid_dirs;
	const char *jit_dirs[RUN_MAX_BUILDID_DIRS + 1];
	unsigned nr_jit_dirs;
	const char *event;               /* --event NAME */
	enum run_profile profile;        /* --profile KIND; not CPU:
					  * samples of sched:sched_switch
					  * are resolved, alone (OFFCPU) or
					  * with the chosen event's (WALL) */
	bool quiet;
	bool trace;                      /* --trace-unwind */
	bool no_stitch;                  /* --stitch=off */
	bool stitch_strict;              /* --stitch=strict */
	bool validate_stitch;            /* --validate-stitch */
	unsigned long stitch_max_nodes;  /* --stitch-max-nodes */
	unsigned long stitch_memory;     /* --stitch-memory MiB */
	unsigned jobs;                   /* -j N, 0: the cores less one */
	const char *stats_json;          /* --stats-json FILE */
	double min_coverage;             /* --min-coverage PCT, -1: none */
	struct lookup_opts lookup;       /* --symfs, --archive, --debuginfod */
	run_record_fn on_record;         /* see run_record_fn; NULL: none */
	void *record_ctx;
	run_event_fn on_event;           /* see run_event_fn; NULL: none */
	void *event_ctx;
	struct run_modcaches *modcaches; /* batch mode: kept across runs;
					  * NULL: each run its own caches */
	const struct run_sinks *sinks;   /* see run_sinks; NULL: none */
	void *sinks_ctx;                 /* the sinks' ctx; NULL:
					  * run_capture()'s */
	struct sfilter filter;           /* --pid=, --tid=, --comms, --time:
					  * the samples kept (the others are
					  * neither unwound nor written) */
};

#define RUN_OPTS_INIT { .min_coverage = -1 }

/* Worker threads to use: -j, else the cores less one (1 to trace). */
unsigned run_jobs(const struct run_opts *o);

/* getopt_long entries for the options above (ids >= 256). */
extern const struct option run_long_options[];
/* Usage lines for them. */
extern const char *const run_usage_lines[];

/*
 * Handles option c (from run_long_options) with argument arg.  Returns 1
 * when handled, 0 when c is not one of ours, -1 on a bad value (printed).
 */
int run_parse_option(struct run_opts *o, int c, const char *arg);

/*
 * For a command's getopt loop, an option c the command did not take
 * itself: a run option (run_parse_option()), else a usage error for cmd
 * naming given (the option as written): "bad or incomplete" for getopt's
 * '?' and ':', "unknown" otherwise.  Returns 0 when handled, EXIT_USAGE
 * after printing the error.
 */
int run_option_or_usage(struct run_opts *o, int c, const char *arg,
			const char *cmd, const char *const *usage,
			const char *given);

typedef int (*run_sample_fn)(void *ctx, const struct rsample *s);

struct run {
	const struct run_opts *opts;
	const char *path;
	struct source *rd;
	struct resolve res;
	bool res_ready;
	struct lookup lookup;            /* where modules are looked for */
	bool lookup_ready;
	char *kallsyms_used;             /* the kernel symbols file read */
	bool kallsyms_temp;              /* ... a copy of the capture's own,
					  * removed by run_release() */
	int kallsyms_clean;              /* its sigclean.h registration */
	struct kallsyms_once kallsyms_once; /* -j > 1 or warmup: read once
					    * for all */
	bool kallsyms_shared;
	struct warmup *warmup;           /* the thread that reads kernel
					  * symbols and decompresses DWARF
					  * ahead, or NULL (unwind/warmup.h) */
	struct run_warm *warm;           /* what its look at the capture's
					  * mappings works with (run_warm.c) */
	struct modload *loaders[POOL_MAX_WORKERS]; /* a sysprof stream's
					  * modules are loaded on threads of
					  * their own (unwind/modload.h), a
					  * loader per worker, or none */
	const char *home_debug;          /* ~/.debug when used */
	char home_buf[4096];
	char capture_dir[4096];          /* where JIT files may sit too */
	const char *jit_dirs[RUN_MAX_BUILDID_DIRS + 1];
	int event_attr;                  /* chosen event, -1 until known */
	enum resolve_pass first_pass;    /* set up when the resolver is */
	unsigned passes;                 /* over the input: 1 or 2 */
	uint64_t retried;                /* samples resolved in a RETRY pass */
	uint64_t stop_after;             /* a pass ends after this many wanted
					  * samples (0: at the end of input) */
	uint64_t other_event_samples;    /* samples of events not chosen */
	struct resolve_opts ro;          /* worked out from opts and input */
	enum event_arch arch;
	struct pool *pool;               /* -j > 1 on a stream: workers, res
					  * is the first's */
	bool sharded;                    /* -j > 1 on a file: run_shard.c */
	struct run_shard *shard;         /* ... while its workers run */
	struct perfdata_windows *windows; /* its readers' shared windows */
	unsigned jobs;                   /* workers used (1: no pool) */
	unsigned auto_jobs;              /* run_auto_workers(), 0: none */
	uint64_t worker_samples[POOL_MAX_WORKERS]; /* -j > 1: the samples
						    * each resolved */
	bool progress, progress_shown;   /* stderr is a terminal */
	unsigned pass_no;                /* passes started */
	double progress_at;
	unsigned progress_pass;          /* pass_no at the last line */
	uint64_t progress_tick;          /* event.order / 4096, last seen */
	run_sample_fn fn;                /* the caller's, for the workers */
	void *fn_ctx;
	struct a2lstate a2l;             /* inline chains' names as perf's
					  * addr2line gave them, in output
					  * order */
	struct rframe *a2l_frames;       /* a sample's frames with those */
	size_t alloc_a2l_frames;
	struct sfilter filter;           /* opts->filter, --time's
					  * percentages made times */
	bool filtering;                  /* filter drops some samples */
	struct sfilter_names names;      /* threads' names, this pass */
	uint64_t filtered;               /* samples of the event dropped */
	bool events_given;               /* opts->on_event has had them */
	struct run_held *held;           /* samples waiting for their names
					  * (run_held.c), or NULL */
	uint64_t named_late;             /* samples held so */
};

/* run_capture() flags */
#define RUN_ORDERED 1   /* fn needs the samples in time order */

/*
 * Reads path to the end, resolving every sample of the chosen event and
 * passing it to fn.  Without RUN_ORDERED, samples whose stacks the root
 * caches could not complete on first sight come last.  Returns 0, or -1
 * after printing the error (the exit status is then EXIT_BAD).
 * run_free() releases everything.
 */
int run_capture(struct run *run, const struct run_opts *opts,
		const char *path, unsigned flags, run_sample_fn fn, void *ctx);
void run_free(struct run *run);

/*
 * --split: reads path (its samples not unwound) for the threads (process:
 * the processes) that have samples of the event run_capture() would use
 * that opts->filter keeps, in the order of their first such sample, each
 * with its command name at its last one (truncated to 63 bytes; process:
 * its last sample's thread's).  *out (malloc'd, NULL when none) gets *nr
 * of them.  Returns 0, or -1 after printing the error.
 */
struct run_thread {
	int32_t pid, tid;
	char comm[64];
};

int run_list_threads(const struct run_opts *opts, const char *path,
		     bool process, struct run_thread **out, size_t *nr);

/*
 * The build-id of the module recorded at path, as the capture gave it or
 * as read from the file found for it, copied to bid; returns its size, 0
 * when none is known.  For run_record_fn: with -j > 1, what the workers
 * knew when their first pass over the file ended.
 */
unsigned run_module_build_id(const struct run *run, const char *path,
			     uint8_t bid[20]);

/* The statistics report (`restack stats`, `convert --stats`). */
void run_print_stats(const struct run *run, FILE *f);

/*
 * The kernel symbols file as reports name it: the capture's own for a
 * temporary copy of what a capture carries.
 */
const char *run_kallsyms_shown(const struct run *run);

#endif
