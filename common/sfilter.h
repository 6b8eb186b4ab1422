/*
 * sfilter.h - which samples a run keeps: by process, thread, command name
 * and time, with perf script's syntax (--pid, --tid, --comms, --time).
 *
 * A struct sfilter holds no pointers it owns (its command names point
 * into the option strings, which must outlive it): it is copied by value,
 * and a copy is what a run resolves percentages in (sfilter_set_span()).
 * Kinds combine as perf's do: a sample is kept when each kind given
 * matches it (pid AND tid AND command AND time), a kind matching when any
 * of its values does.
 *
 * The command name of a thread at a sample comes from the COMM and FORK
 * events before it (struct sfilter_names, fed every event in delivery
 * order): the name perf script shows, ":TID" for a thread it has none for.
 */
#ifndef RESTACK_COMMON_SFILTER_H
#define RESTACK_COMMON_SFILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/arena.h"
#include "common/event.h"
#include "common/hashmap.h"

#define SFILTER_MAX_IDS 256     /* pids, and tids, at most */
#define SFILTER_MAX_COMMS 64
#define SFILTER_MAX_RANGES 32   /* --time ranges */

struct sfilter_range {
	uint64_t start, end;    /* ns, both included; 0: open */
	double pstart, pend;    /* percentages' fractions (0..1) */
};

struct sfilter {
	int32_t pids[SFILTER_MAX_IDS];  /* sorted */
	unsigned nr_pids;
	int32_t tids[SFILTER_MAX_IDS];  /* sorted */
	unsigned nr_tids;
	struct {
		const char *s;          /* in the option's string */
		size_t len;
	} comms[SFILTER_MAX_COMMS];
	unsigned nr_comms;
	struct sfilter_range time[SFILTER_MAX_RANGES];
	unsigned nr_time;
	bool percent;           /* ranges in percent: sfilter_set_span() */
	bool span_set;
	const char *time_arg;   /* --time as given, for messages */
	/* --split: one process (split_pid), or one thread (and split_tid) */
	bool split, split_thread;
	int32_t split_pid, split_tid;
};

/*
 * Adds a list of pids (tids: tid true), separated by commas or spaces,
 * or command names (separated by commas), to f.  0, or -1 with a
 * message in msg (of size n).  s must outlive f.
 */
int sfilter_add_ids(struct sfilter *f, bool tid, const char *s, char *msg,
		    size_t n);
int sfilter_add_comms(struct sfilter *f, const char *s, char *msg, size_t n);

/*
 * --time as perf script takes it: 'START,END' in seconds with up to nine
 * decimals (either may be left out: open), several such ranges separated
 * by spaces (in order, not overlapping); or percentages of the time from
 * the capture's first to its last sample: 'P%' (the first P%), 'P%/N'
 * (the Nth slice of P%), 'P%-Q%', several separated by commas.  0, or
 * -1 with a message in msg.
 */
int sfilter_set_time(struct sfilter *f, const char *s, char *msg, size_t n);

/* Whether f keeps every sample. */
bool sfilter_empty(const struct sfilter *f);

/* Whether --time needs the first and last sample times. */
static inline bool sfilter_needs_span(const struct sfilter *f)
{
	return f->percent && !f->span_set;
}

/* Turns percentages into times, from the first and last sample times. */
void sfilter_set_span(struct sfilter *f, uint64_t first, uint64_t last);

/* The thread names a filter needs, in delivery order. */
struct sfilter_names {
	struct hashmap names;   /* tid -> name in arena */
	struct arena arena;
};

void sfilter_names_init(struct sfilter_names *t);
void sfilter_names_release(struct sfilter_names *t);
/* Takes a COMM or FORK event (others are ignored).  0, or -1 on OOM. */
int sfilter_names_event(struct sfilter_names *t, const struct event *ev);
/* The thread's name now, or NULL when no event named it. */
const char *sfilter_names_get(const struct sfilter_names *t, int32_t tid);

/* Whether a sample at time of thread pid/tid is kept. */
bool sfilter_keep(const struct sfilter *f, const struct sfilter_names *t,
		  int32_t pid, int32_t tid, uint64_t time);

/* Whether time is in --time's ranges (the other filters left aside). */
bool sfilter_keep_time(const struct sfilter *f, uint64_t time);

#endif
