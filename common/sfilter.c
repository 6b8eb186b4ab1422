/*
 * sfilter.c - which samples a run keeps (see sfilter.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/sfilter.h"

static int sfilter_cmp_id(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

	return (x > y) - (x < y);
}

int sfilter_add_ids(struct sfilter *f, bool tid, const char *s, char *msg,
		    size_t n)
{
	int32_t *ids = tid ? f->tids : f->pids;
	unsigned *nr = tid ? &f->nr_tids : &f->nr_pids;
	const char *what = tid ? "--tid" : "--pid";
	const char *p = s;
	bool any = false;

	while (*p) {
		char *end;
		long v;

		if (*p == ',' || *p == ' ') {
			p++;
			continue;
		}
		if (*p < '0' || *p > '9')
			goto bad;
		v = strtol(p, &end, 10);
		if (v > INT32_MAX || (*end && *end != ',' && *end != ' '))
			goto bad;
		if (*nr == SFILTER_MAX_IDS) {
			snprintf(msg, n, "%s: more than %d values", what,
				 SFILTER_MAX_IDS);
			return -1;
		}
		ids[(*nr)++] = (int32_t)v;
		any = true;
		p = end;
	}
	if (!any)
		goto bad;
	qsort(ids, *nr, sizeof(*ids), sfilter_cmp_id);
	return 0;
bad:
	snprintf(msg, n, "%s takes numbers separated by commas, not '%s'",
		 what, s);
	return -1;
}

int sfilter_add_comms(struct sfilter *f, const char *s, char *msg, size_t n)
{
	const char *p = s;

	for (;;) {
		size_t len = strcspn(p, ",");

		if (len) {
			if (f->nr_comms == SFILTER_MAX_COMMS) {
				snprintf(msg, n, "--comms: more than %d names",
					 SFILTER_MAX_COMMS);
				return -1;
			}
			f->comms[f->nr_comms].s = p;
			f->comms[f->nr_comms++].len = len;
		}
		if (!p[len])
			break;
		p += len + 1;
	}
	if (!f->nr_comms) {
		snprintf(msg, n, "--comms takes command names separated by "
			 "commas, not '%s'", s);
		return -1;
	}
	return 0;
}

/*
 * Seconds with up to nine decimals in [s, e) to ns; empty: 0 (open).
 * 0, or -1.
 */
static int sfilter_seconds(const char *s, const char *e, uint64_t *ns)
{
	uint64_t sec = 0, frac = 0;
	unsigned digits = 0;

	*ns = 0;
	if (s == e)
		return 0;
	if (*s < '0' || *s > '9')
		return -1;
	for (; s < e && *s >= '0' && *s <= '9'; s++) {
		if (sec > UINT64_MAX / 10 / 1000000000)
			return -1;
		sec = sec * 10 + (uint64_t)(*s - '0');
	}
	if (s < e && *s == '.') {
		for (s++; s < e && *s >= '0' && *s <= '9'; s++) {
			if (++digits > 9)
				return -1;
			frac = frac * 10 + (uint64_t)(*s - '0');
		}
		for (; digits < 9; digits++)
			frac *= 10;
	}
	if (s != e)
		return -1;
	*ns = sec * 1000000000 + frac;
	return 0;
}

/* 'START,END' ranges separated by spaces. */
static int sfilter_time_abs(struct sfilter *f, const char *s)
{
	const char *p = s;
	unsigned i;

	while (*p) {
		const char *end = p + strcspn(p, " "), *comma;
		struct sfilter_range *r;

		if (end == p) {
			p++;
			continue;
		}
		comma = memchr(p, ',', (size_t)(end - p));
		if (!comma ||
		    memchr(comma + 1, ',', (size_t)(end - comma - 1)) ||
		    f->nr_time == SFILTER_MAX_RANGES)
			return -1;
		r = &f->time[f->nr_time++];
		if (sfilter_seconds(p, comma, &r->start) < 0 ||
		    sfilter_seconds(comma + 1, end, &r->end) < 0 ||
		    (r->end && r->end < r->start))
			return -1;
		p = end;
	}
	if (!f->nr_time)
		return -1;
	/* in order, not overlapping */
	for (i = 0; i + 1 < f->nr_time; i++)
		if (f->time[i].end >= f->time[i + 1].start)
			return -1;
	return 0;
}

/* 'P%' in [s, e) as a fraction.  0, or -1. */
static int sfilter_pct(const char *s, const char *e, double *v)
{
	char buf[64], *end;
	size_t len = (size_t)(e - s);

	if (len < 2 || len >= sizeof(buf) || e[-1] != '%' ||
	    ((*s < '0' || *s > '9') && *s != '.'))
		return -1;
	memcpy(buf, s, len - 1);
	buf[len - 1] = '\0';
	*v = strtod(buf, &end) / 100.0;
	return *end || !(*v >= 0.0 && *v <= 1.0) ? -1 : 0;
}

/* One 'P%', 'P%/N' or 'P%-Q%' in [s, e). */
static int sfilter_time_pct_one(struct sfilter_range *r, const char *s,
				const char *e)
{
	const char *slash = memchr(s, '/', (size_t)(e - s));
	const char *dash = memchr(s, '-', (size_t)(e - s));
	double p, q;

	if (slash) {
		char *end;
		long i;

		if (sfilter_pct(s, slash, &p) < 0 || p <= 0.0 ||
		    slash[1] < '0' || slash[1] > '9')
			return -1;
		i = strtol(slash + 1, &end, 10);
		if (end != e || i < 1 || i > 100000)
			return -1;
		r->pstart = p * (double)(i - 1);
		r->pend = p * (double)i;
		return r->pend > 1.0 + 1e-12 ? -1 : 0;
	}
	if (dash) {
		if (sfilter_pct(s, dash, &p) < 0 ||
		    sfilter_pct(dash + 1, e, &q) < 0)
			return -1;
		r->pstart = p;
		r->pend = q;
		return 0;
	}
	if (sfilter_pct(s, e, &p) < 0 || p <= 0.0)
		return -1;
	r->pstart = 0.0;
	r->pend = p;
	return 0;
}

static int sfilter_time_pct(struct sfilter *f, const char *s)
{
	const char *p = s;

	for (;;) {
		const char *end = p + strcspn(p, ",");

		if (f->nr_time == SFILTER_MAX_RANGES ||
		    sfilter_time_pct_one(&f->time[f->nr_time++], p, end) < 0)
			return -1;
		if (!*end)
			return 0;
		p = end + 1;
	}
}

int sfilter_set_time(struct sfilter *f, const char *s, char *msg, size_t n)
{
	int rc;

	f->nr_time = 0;
	f->percent = strchr(s, '%') != NULL;
	f->span_set = false;
	f->time_arg = s;
	rc = f->percent ? sfilter_time_pct(f, s) : sfilter_time_abs(f, s);
	if (rc < 0) {
		f->nr_time = 0;
		f->percent = false;
		snprintf(msg, n, "--time takes START,END in seconds (either "
			 "may be left out; ranges separated by spaces) or "
			 "percentages (P%%, P%%/N, P%%-Q%%, separated by "
			 "commas), not '%s'", s);
		return -1;
	}
	return 0;
}

bool sfilter_empty(const struct sfilter *f)
{
	return !f->nr_pids && !f->nr_tids && !f->nr_comms && !f->nr_time &&
	       !f->split;
}

void sfilter_set_span(struct sfilter *f, uint64_t first, uint64_t last)
{
	uint64_t total = last > first ? last - first : 0;
	unsigned i;

	if (!f->percent)
		return;
	for (i = 0; i < f->nr_time; i++) {
		struct sfilter_range *r = &f->time[i];

		/* rounded as perf rounds; the end is one ns before the next
		 * slice's start, unless it is the last sample's time */
		r->start = first + (uint64_t)(r->pstart * (double)total + 0.5);
		r->end = first + (uint64_t)(r->pend * (double)total + 0.5);
		if (r->end > r->start && r->end != last)
			r->end--;
	}
	f->span_set = true;
}

void sfilter_names_init(struct sfilter_names *t)
{
	memset(t, 0, sizeof(*t));
}

void sfilter_names_release(struct sfilter_names *t)
{
	hashmap_release(&t->names);
	arena_release(&t->arena);
}

int sfilter_names_event(struct sfilter_names *t, const struct event *ev)
{
	void *v = NULL;

	if (ev->type == EVENT_COMM) {
		v = arena_strdup(&t->arena, ev->comm.comm ? ev->comm.comm : "");
		if (!v)
			return -1;
	} else if (ev->type == EVENT_FORK) {
		/* a new thread has its parent's name (NULL: none yet) */
		if (!hashmap_get(&t->names, (uint64_t)(uint32_t)ev->fork.ptid,
				 &v))
			v = NULL;
		if (!v) {
			hashmap_del(&t->names, (uint64_t)(uint32_t)ev->tid);
			return 0;
		}
	} else {
		return 0;
	}
	return hashmap_put(&t->names, (uint64_t)(uint32_t)ev->tid, v);
}

const char *sfilter_names_get(const struct sfilter_names *t, int32_t tid)
{
	void *v;

	return hashmap_get(&t->names, (uint64_t)(uint32_t)tid, &v) ? v : NULL;
}

static bool sfilter_has_id(const int32_t *ids, unsigned nr, int32_t id)
{
	return bsearch(&id, ids, nr, sizeof(*ids), sfilter_cmp_id) != NULL;
}

static bool sfilter_comm_ok(const struct sfilter *f,
			    const struct sfilter_names *t, int32_t tid)
{
	const char *name = sfilter_names_get(t, tid);
	char own[16];
	size_t len;
	unsigned i;

	if (!name) {
		snprintf(own, sizeof(own), ":%d", tid);
		name = own;
	}
	len = strlen(name);
	for (i = 0; i < f->nr_comms; i++)
		if (f->comms[i].len == len &&
		    !memcmp(f->comms[i].s, name, len))
			return true;
	return false;
}

/* As perf: a sample without a time is kept; one range's 0 is open. */
bool sfilter_keep_time(const struct sfilter *f, uint64_t time)
{
	unsigned i;

	if (!f->nr_time || time == 0 || time == EVENT_NO_TIME)
		return true;
	if (f->nr_time == 1)
		return !((f->time[0].start && time < f->time[0].start) ||
			 (f->time[0].end && time > f->time[0].end));
	for (i = 0; i < f->nr_time; i++)
		if (time >= f->time[i].start &&
		    (time <= f->time[i].end || !f->time[i].end))
			return true;
	return false;
}

bool sfilter_keep(const struct sfilter *f, const struct sfilter_names *t,
		  int32_t pid, int32_t tid, uint64_t time)
{
	if (f->split && (pid != f->split_pid ||
			 (f->split_thread && tid != f->split_tid)))
		return false;
	return (!f->nr_pids || sfilter_has_id(f->pids, f->nr_pids, pid)) &&
	       (!f->nr_tids || sfilter_has_id(f->tids, f->nr_tids, tid)) &&
	       (!f->nr_comms || sfilter_comm_ok(f, t, tid)) &&
	       sfilter_keep_time(f, time);
}
