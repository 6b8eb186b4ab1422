/*
 * profin.h - profile inputs for the commands (convert, merge, diff): the
 * --from and --sample-type options, telling a profile from a capture,
 * and reading one into a run_sample_fn as run_capture() would.
 */
#ifndef RESTACK_CMD_PROFIN_H
#define RESTACK_CMD_PROFIN_H

#include <stdbool.h>

#include "cmd/run.h"
#include "formats/profile.h"

struct profin_opts {
	const char *from;          /* --from: folded, pprof, capture; NULL:
				    * by contents */
	const char *sample_type;   /* --sample-type NAME (pprof) */
	bool all_types;            /* pprof: profile_opts.all_types */
	/* optional: called with profin_read()'s ctx once a profile is
	 * open, before its samples (info stays valid until the last one
	 * is read: its values are the current sample's); 0, or -1 after
	 * printing an error (the input is not read) */
	int (*on_info)(void *ctx, const char *path,
		       const struct profile_info *info);
};

/*
 * Handles --from (from true) or --sample-type's argument for command cmd.
 * 0, or -1 after printing a usage error (then exit EXIT_USAGE).
 */
int profin_option(struct profin_opts *o, bool from, const char *arg,
		  const char *cmd, const char *const *usage);

/* What path is read as: a profile kind, or PROFILE_NONE (a capture). */
enum profile_kind profin_kind(const struct profin_opts *o, const char *path);

/*
 * Reads the profile at path (of kind), passing every stack to fn.
 * Notes (scaled weights, skipped negative samples) go to stderr unless
 * quiet.  Returns 0, or -1 after printing the error.
 */
int profin_read(const struct profin_opts *o, enum profile_kind kind,
		const char *path, bool quiet, run_sample_fn fn, void *ctx);

/*
 * Reads any input, a capture (unwound with ro, its samples summed:
 * sinks as run_capture() takes them, or NULL) or a profile, passing every
 * sample to fn.  Returns 0, or -1 after printing the error.
 */
int profin_load(const struct profin_opts *o, const struct run_opts *ro,
		const char *path, run_sample_fn fn, void *ctx,
		const struct run_sinks *sinks);

#endif
