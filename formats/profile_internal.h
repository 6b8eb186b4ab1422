/*
 * profile_internal.h - what the profile readers share (see profile.h):
 * profile.c (opening, folded stacks, named symbol locations) and
 * profile_pprof.c.
 */
#ifndef RESTACK_FORMATS_PROFILE_INTERNAL_H
#define RESTACK_FORMATS_PROFILE_INTERNAL_H

#include <stddef.h>

#include "common/arena.h"
#include "common/hashmap.h"
#include "common/strbuf.h"
#include "formats/profile.h"

struct pprof_in;

struct profile {
	enum profile_kind kind;
	struct profile_opts opts;
	const char *data;         /* the file, mapped */
	size_t len, map_size;
	size_t pos;               /* folded: the next line */
	struct arena arena;       /* symbol locations, names */
	struct hashmap locs;      /* folded: hash -> profile_named chain */
	struct rsample s;
	struct strbuf comm;       /* the sample's thread name */
	struct rframe *frames;
	size_t alloc_frames;
	struct profile_info info;
	struct err err;
	struct pprof_in *pp;      /* pprof: profile_pprof.c's state */
};

/* Room for n frames in p->frames.  0, or -1 (error set). */
int profile_frames(struct profile *p, size_t n);

/* pprof: parses p->data's message.  0, or -1 with p->err set. */
int profile_pprof_open(struct profile *p);
/* profile_next() for pprof. */
int profile_pprof_next(struct profile *p);
void profile_pprof_free(struct profile *p);

#endif
