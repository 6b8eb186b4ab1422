/*
 * speedscope.h - the speedscope writer: speedscope's JSON file format
 * (https://www.speedscope.app/file-format-schema.json), one "sampled"
 * profile per thread, named "comm pid/tid".
 *
 * Each profile lists its thread's stacks in input order (rsample.order:
 * samples a second pass completed, which come last, go back to their
 * places), root first, so speedscope's time-ordered view follows the
 * thread through time; consecutive identical stacks are one sample with
 * their weights summed.  Memory: 20 bytes per sample until written.
 * Weights are 1 per sample (unit "none"), or periods (--weight period;
 * unit "nanoseconds" for cpu-clock and task-clock, where startValue is
 * then the thread's first sample time after the capture's first sample).
 * Frames are shared and deduplicated by (name, module); names as in
 * folded output, a stack that did not reach its thread's root starts
 * with its "[truncated: REASON]" frame.  The heaviest thread is the
 * active profile.
 */
#ifndef RESTACK_FORMATS_SPEEDSCOPE_H
#define RESTACK_FORMATS_SPEEDSCOPE_H

#include <stdbool.h>

#include "common/err.h"
#include "common/stack.h"

struct speedscope_opts {
	bool period;          /* weights are periods, not sample counts */
	bool ns;              /* ... in nanoseconds, whatever the event
			       * (off-CPU profiles) */
	const char *name;     /* the profile group's name (copied), or NULL */
};

struct speedscope;

struct speedscope *speedscope_new(const struct speedscope_opts *opts);
void speedscope_free(struct speedscope *ss);

/* Adds one sample.  Returns 0, or -1 when out of memory. */
int speedscope_add(struct speedscope *ss, const struct rsample *s);

/* Writes the JSON document to fd.  Returns 0, or -1 with *err filled. */
int speedscope_write(struct speedscope *ss, int fd, struct err *err);

#endif
