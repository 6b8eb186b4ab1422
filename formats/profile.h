/*
 * profile.h - profiles as inputs: folded stacks and pprof, read into the
 * resolved samples of common/stack.h, so every writer takes them as it
 * takes a capture's (no unwinding: the stacks are already named).
 *
 * Each distinct stack comes as one sample with its summed weight: period
 * is the weight and count the samples it stands for (see the readers).
 * Frames are named as the writers name them (folded_entry_name()), so a
 * profile restack wrote reads back to the same stacks: the first folded
 * frame is the thread's name (rsample.comm), a "[truncated: REASON]"
 * frame after it is the stack's end reason, and folded --annotate
 * suffixes (_[k], _[i], _[j], _[s], ...) give the frame's kind back.
 *
 * The reader owns everything it hands out (sample, frames, symbol
 * locations, names) until profile_close(); memory is the file (mapped, or
 * a pprof's uncompressed message) plus one symbol location per distinct
 * frame.
 */
#ifndef RESTACK_FORMATS_PROFILE_H
#define RESTACK_FORMATS_PROFILE_H

#include <stdbool.h>
#include <stdint.h>

#include "common/err.h"
#include "common/stack.h"

enum profile_kind {
	PROFILE_NONE,     /* not a profile: a capture */
	PROFILE_FOLDED,
	PROFILE_PPROF,
	PROFILE_CHROME,   /* Chrome Trace Event JSON */
};

/* The kind a --from name gives, PROFILE_NONE for an unknown name. */
enum profile_kind profile_kind_named(const char *name);

/*
 * What path's first bytes say it is: gzip or a protobuf message starting
 * with a sample type (pprof), JSON starting with '{' or '[' (a Chrome
 * trace), text whose first line ends in a number (folded); PROFILE_NONE
 * for anything else, "-", FIFOs and other files that are not regular (not
 * read: their bytes are the capture reader's) and unreadable files (the
 * capture readers then say why).
 */
enum profile_kind profile_sniff(const char *path);

struct profile_opts {
	enum profile_kind kind;   /* what to read it as */
	const char *sample_type;  /* pprof: the sample type whose values
				   * are the weights; NULL: the profile's
				   * default_sample_type, else its last */
	bool all_types;           /* pprof: every sample type is kept (see
				   * profile_info.values): samples whose
				   * values are all 0 are skipped, no other */
};

struct profile;

/* Opens path.  NULL with *err filled on failure. */
struct profile *profile_open(const char *path, const struct profile_opts *o,
			     struct err *err);

/*
 * The next stack: 1 with *s set (valid until the next call), 0 at the
 * end, -1 on bad input (profile_err(): its byte offset is in the file,
 * or in a pprof's uncompressed message).
 */
int profile_next(struct profile *p, const struct rsample **s);

const struct err *profile_err(const struct profile *p);

/*
 * What the weights are: folded decimal weights are scaled to integers
 * by 10^decimals (*scale, 1 for integers); a pprof's chosen sample type
 * and unit ("cpu", "nanoseconds"); NULL when unknown.
 *
 * A pprof's sample types, in its order (nr_types 0 for other kinds),
 * its default_sample_type (NULL without one) and the values of the
 * sample profile_next() returned last, one per type, as they are
 * (negative in a difference).  With profile_opts.all_types, a sample
 * whose chosen value is 0 or negative comes too: its period is then 0.
 * Its period_type (type and unit, NULL when absent), period, time_nanos
 * and duration_nanos as they are (0 when absent).
 */
struct profile_info {
	uint64_t scale;
	const char *type, *unit;
	uint64_t skipped;         /* pprof samples with a negative weight */
	size_t nr_types;
	const char *const *types, *const *units;
	const char *default_type;
	const int64_t *values;
	const char *period_type[2];
	int64_t period, time_nanos, duration_nanos;
};

const struct profile_info *profile_info(const struct profile *p);

void profile_close(struct profile *p);

#endif
