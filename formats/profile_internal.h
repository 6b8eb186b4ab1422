/*
 * profile_internal.h - what the profile readers share (see profile.h):
 * profile.c (opening, folded stacks, named symbol locations),
 * profile_pprof.c and profile_chrome.c.
 */
#ifndef RESTACK_FORMATS_PROFILE_INTERNAL_H
#define RESTACK_FORMATS_PROFILE_INTERNAL_H

#include <stddef.h>

#include "common/arena.h"
#include "common/hashmap.h"
#include "common/strbuf.h"
#include "formats/profile.h"

struct pprof_in;
struct ct_state;

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
	struct ct_state *ct;      /* chrome: profile_chrome.c's */
};

/* Room for n frames in p->frames.  0, or -1 (error set). */
int profile_frames(struct profile *p, size_t n);

/*
 * The symbol location of a frame named [name, name + len) of kind (enum
 * sym_kind), inlined or not: one per distinct such frame.  NULL when out
 * of memory.
 */
struct sym_loc *profile_named(struct profile *p, const char *name,
			      size_t len, uint8_t kind, bool inlined);

/* Chrome traces: reads and sweeps p->data.  0, or -1 with p->err set. */
int profile_chrome_open(struct profile *p);
int profile_chrome_next(struct profile *p);
void profile_chrome_free(struct profile *p);

/* pprof: parses p->data's message.  0, or -1 with p->err set. */
int profile_pprof_open(struct profile *p);
/* profile_next() for pprof. */
int profile_pprof_next(struct profile *p);
void profile_pprof_free(struct profile *p);

/* The end reason whose marker ("[truncated: ...]") is [s, s + len), or
 * END_ROOT. */
enum end_reason profile_marker(const char *s, size_t len);

#endif
