/*
 * pprof.h - the pprof writer: profile.proto, gzip-compressed (.pb.gz), as
 * `go tool pprof`, pprof-rs and the pprof web UI read it.
 *
 * Two sample values: samples (count) and the summed periods, named
 * cpu/nanoseconds for cpu-clock and task-clock, else EVENT/count; or the
 * sample types pprof_set_types() gives (a pprof input's, every one).  One
 * location per distinct frame address (the address is the module's ELF
 * address, restack's "rel"), lines innermost first for inlined calls,
 * one mapping per module (file, build-id; its range spans the addresses
 * seen), functions by (name, file).  Samples carry the labels thread
 * (comm), pid and tid; a stack that did not reach its thread's root gets
 * an outermost pseudo-location named "[truncated: REASON]" (as in folded
 * output) and the label truncated=REASON.  Everything is sorted before
 * ids are given out, so the output is byte-identical for the same
 * samples in any order.
 */
#ifndef RESTACK_FORMATS_PPROF_H
#define RESTACK_FORMATS_PPROF_H

#include <stdbool.h>

#include "common/err.h"
#include "common/stack.h"
#include "common/strbuf.h"

struct pprof_opts {
	bool period;      /* default_sample_type: the periods, not samples */
	/*
	 * An off-CPU or wall-clock profile (cmd/profile.h): "off_cpu" or
	 * "wall", the default sample type.  The values are then samples/
	 * count, cpu/nanoseconds (the periods of on-CPU samples),
	 * off_cpu/nanoseconds (of samples with off_cpu set) and
	 * wall/nanoseconds (both).  NULL: the two values above.
	 */
	const char *profile;
};

struct pprof;

struct pprof *pprof_new(const struct pprof_opts *opts);
void pprof_free(struct pprof *p);

/* Adds one sample (copying what it needs).  0, or -1 out of memory. */
int pprof_add(struct pprof *p, const struct rsample *s);

/*
 * Adds one sample of a difference's base: written with negated values and
 * the label pprof::base=true, as `go tool pprof -diff_base` merges a base
 * profile into the one it compares.  0, or -1 when out of memory.
 */
int pprof_add_base(struct pprof *p, const struct rsample *s);

/*
 * The second sample type's name and unit (copied), instead of the ones
 * the first sample's event gives (a profile input's chosen type).  0, or
 * -1 when out of memory.
 */
int pprof_set_type(struct pprof *p, const char *type, const char *unit);

/*
 * Instead of samples and the period: n sample types types[i]/units[i]
 * (copied), in that order, default_sample_type dflt (NULL: none); add
 * samples with pprof_add_values() then, not pprof_add().  Samples whose
 * summed values are all 0 are left out (as `go tool pprof` merges).  0,
 * or -1 when out of memory.
 */
int pprof_set_types(struct pprof *p, size_t n, const char *const *types,
		    const char *const *units, const char *dflt);

/*
 * Adds one sample whose values are vals, one per pprof_set_types() type
 * (copied; summed with those of the samples of the same stack and
 * labels, negative ones as they are).  0, or -1 when out of memory.
 */
int pprof_add_values(struct pprof *p, const struct rsample *s,
		     const int64_t *vals);

/*
 * With pprof_set_types(), an input's period type (type and unit, NULL:
 * none), period, time and duration: the output has the first period type
 * given, the largest period, the earliest time (but 0) and the durations
 * added up (as `go tool pprof` merges).  0, or -1 when out of memory.
 */
int pprof_add_header(struct pprof *p, const char *type, const char *unit,
		     int64_t period, int64_t time_nanos,
		     int64_t duration_nanos);

/*
 * Forgets the symbol locations of the samples added so far (what they
 * said stays): call it before adding samples of another input, whose
 * locations may sit where freed ones were.
 */
void pprof_forget_locs(struct pprof *p);

/* Writes the gzip-compressed profile to fd.  0, or -1 with *err. */
int pprof_write(struct pprof *p, int fd, struct err *err);

/*
 * The uncompressed profile.proto message, appended to out (for tests).
 * 0, or -1 when out of memory.
 */
int pprof_encode(struct pprof *p, struct strbuf *out);

#endif
