/*
 * firefox_internal.h - what the Firefox Profiler writer's two halves
 * share: the tables firefox.c builds from the samples and firefox_json.c
 * writes out.  Not for other modules.
 *
 * Every table is a list of rows interned by their contents (ff_tab: a
 * row is a few 64-bit words, found again through a hash of them), so a
 * row's index is the order of first sight; FF_NONE in a word is "none"
 * (null or -1 in the output).
 */
#ifndef RESTACK_FORMATS_FIREFOX_INTERNAL_H
#define RESTACK_FORMATS_FIREFOX_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "formats/firefox.h"

#include "common/arena.h"
#include "common/hashmap.h"
#include "common/strbuf.h"
#include "common/strtab.h"

#define FF_NONE UINT32_MAX    /* no row */

enum ff_category {
	FF_CAT_OTHER,
	FF_CAT_USER,
	FF_CAT_KERNEL,
	FF_CAT_JIT,
	FF_CAT_STITCHED,
	FF_CAT_TRUNCATED,
};

/* Rows of nw words each, interned. */
struct ff_tab {
	struct hashmap map;       /* hash of a row -> its first index + 1 */
	uint32_t *next;           /* index -> next index + 1, same hash */
	uint64_t *rows;           /* nw words per row */
	unsigned nw;
	size_t nr, alloc, next_alloc;
};

/* Column layouts (words of each row). */
enum { FF_LIB_PATH, FF_LIB__N };    /* its build-id: firefox.bids */
enum { FF_RES_NAME, FF_RES__N };
enum { FF_SRC_FILE, FF_SRC__N };
enum { FF_FUNC_NAME, FF_FUNC_RES, FF_FUNC__N };    /* source: func_src */
enum { FF_FRAME_FUNC, FF_FRAME_ADDR, FF_FRAME_LIB, FF_FRAME_DEPTH,
       FF_FRAME_CAT, FF_FRAME_LINE, FF_FRAME__N };
enum { FF_STACK_PREFIX, FF_STACK_FRAME, FF_STACK__N };

struct ff_bid {
	uint8_t size;
	uint8_t b[20];
};

struct ff_sample {
	uint32_t stack;
	uint32_t reason;          /* strs id of its end reason when
				   * truncated, else FF_NONE */
	uint64_t time, period;
	uint64_t order;           /* rsample.order */
} __attribute__((packed));

struct ff_marker {
	uint64_t start, end;
	uint32_t reason;          /* strs id */
	uint32_t samples;
};

/* An event of firefox_add_event(); kind FF_EV_NONE: left out. */
#define FF_EV_NONE 0xff
struct ff_event {
	int32_t pid, tid;
	uint64_t time, count;
	uint8_t kind;             /* enum firefox_event */
};

/* One symbol location of a thread's last sample, root first, and the
 * stack it ended (ff_thread.pre). */
struct ff_prefix {
	const void *loc;          /* the sym_loc, or the marker's text */
	unsigned cat;             /* enum ff_category */
	int64_t stack;            /* -1: none yet */
};

struct ff_thread {
	int32_t pid, tid;
	uint32_t comm;            /* strs id, the last sample's (in order) */
	uint64_t comm_order;      /* ... its order */
	uint32_t last_comm;       /* strs id, the last added sample's */
	struct ff_sample *v;      /* in the order they came; sorted by
				   * order when written */
	size_t nr, alloc;
	bool unsorted;            /* some came after one of a later order */
	struct ff_marker *m;      /* worked out when written */
	size_t nr_m, alloc_m;
	struct ff_prefix *pre;    /* its last sample's locations: a sample
				   * sharing the first k finds its stack
				   * there without looking up the tables */
	size_t nr_pre, alloc_pre;
	/* worked out when written (firefox_json.c): */
	size_t ev_lo, ev_hi;      /* its events in firefox.ev, sorted */
	uint64_t start, end;      /* registered and unregistered (ns) */
	bool ended;               /* end is its exit, not its last sample */
};

struct firefox {
	struct firefox_opts opts;
	struct firefox_meta meta;    /* strings owned */
	struct strtab strs;          /* the stringArray */
	struct ff_tab libs, res, srcs, funcs, frames, stacks;
	struct ff_bid *bids;
	size_t nr_bids, bids_alloc;
	uint32_t *func_src;          /* a function's source: its first
				      * frame's that had one, or FF_NONE */
	size_t func_src_alloc;
	struct hashmap loc_frames;   /* hash of (loc, category) ->
				      * ff_locframes, see ff_loc_key() */
	struct hashmap markers;      /* marker text pointer -> frame + 1 */
	uint32_t marker_name;        /* strs id of "Truncated stacks" */
	uint32_t ev_name[FIREFOX_EVENT__COUNT]; /* strs ids of their names */
	struct ff_event *ev;         /* firefox_add_event()'s */
	size_t nr_ev, ev_alloc;
	struct arena arena;
	struct hashmap thread_map;   /* hash of (pid, tid) -> ff_thread */
	struct ff_thread **threads;
	size_t nr_threads, threads_alloc;
	struct strbuf buf;
	bool any;
	uint64_t t0;                 /* the first sample's time (when
				      * written: the first sample's or
				      * event's) */
	uint64_t t_end;              /* when written: the last time seen
				      * plus an interval */
};

/*
 * Puts every thread's samples in input order (rsample.order: samples a
 * second pass completed come last) and works out its "Truncated stacks"
 * markers; before the document is written.  0, or -1 when out of memory.
 */
int ff_settle(struct firefox *ff);

static inline const uint64_t *ff_row(const struct ff_tab *t, size_t i)
{
	return t->rows + i * t->nw;
}

/* The last part of a path. */
static inline const char *ff_basename(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && slash[1] ? slash + 1 : path;
}

#endif
