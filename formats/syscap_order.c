/*
 * syscap_order.c - the sysprof reader's reorder window (see
 * syscap_order.h).
 *
 * The release rule is the perf.data reader's without rounds
 * (formats/perfdata_order.c): marks every half window of bytes read, and
 * at each mark the newest time queued at the mark before becomes the
 * limit.  So a frame read before mark k-1 is no newer than the limit set
 * at mark k, and once nothing is ready every frame read before mark k-1
 * has gone out: that offset is done_off, below which the reader may let
 * the file's pages go.  The rule looks only at what was read, so the
 * order is the same whatever the caller pops when.
 *
 * The runs are perfdata_order.c's queue, packed in place: entries in
 * arrival order, an entry not older than the last one extends the open
 * run (which ends at the end of the array), any other starts a run, and a
 * heap of the runs by their first entry gives the oldest.
 */
#include <stdlib.h>
#include <string.h>

#include "formats/syscap_order.h"

#include "common/mem.h"

#define SQ_MIN_ENTS 256u

static bool sq_before(const struct syscap_qent *a, const struct syscap_qent *b)
{
	if (a->time != b->time)
		return a->time < b->time;
	return a->off < b->off;
}

static bool sq_run_before(const struct syscap_order *q, size_t a, size_t b)
{
	return sq_before(&q->ents[q->runs[a].head], &q->ents[q->runs[b].head]);
}

/* Swaps two runs of the heap, following the open one. */
static void sq_swap(struct syscap_order *q, size_t a, size_t b)
{
	struct syscap_run t = q->runs[a];

	q->runs[a] = q->runs[b];
	q->runs[b] = t;
	if (q->open == a)
		q->open = b;
	else if (q->open == b)
		q->open = a;
}

static void sq_sift_up(struct syscap_order *q, size_t i)
{
	while (i > 0 && sq_run_before(q, i, (i - 1) / 2)) {
		sq_swap(q, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

static void sq_sift_down(struct syscap_order *q, size_t i)
{
	for (;;) {
		size_t m = 2 * i + 1;

		if (m >= q->nr_runs)
			return;
		if (m + 1 < q->nr_runs && sq_run_before(q, m + 1, m))
			m++;
		if (!sq_run_before(q, m, i))
			return;
		sq_swap(q, i, m);
		i = m;
	}
}

static int sq_head_cmp(const void *a, const void *b)
{
	const struct syscap_run *x = a, *y = b;

	return (x->head > y->head) - (x->head < y->head);
}

/*
 * Room for one more entry at the end of q->ents.  Popped entries leave
 * holes at the heads of runs: when the array is full, the live entries
 * are packed down in place, runs in array order (the open run, started
 * last, stays last and so ends at the end), and the heap is built again;
 * the array grows instead when more than 3/4 of it is live.  So it is
 * never more than 8/3 of the entries waiting, and a push moves at most 3
 * entries amortized.
 */
static int sq_make_room(struct syscap_order *q)
{
	size_t n = 0, i;

	if (q->nr_ents < q->alloc_ents)
		return 0;
	if (q->nr_live >= q->alloc_ents / 4 * 3) {
		size_t alloc = q->alloc_ents * 2;
		struct syscap_qent *ents;

		if (alloc < SQ_MIN_ENTS)
			alloc = SQ_MIN_ENTS;
		if (alloc > SIZE_MAX / sizeof(*ents))
			return -1;
		ents = realloc(q->ents, alloc * sizeof(*ents));
		if (!ents)
			return -1;
		q->ents = ents;
		q->alloc_ents = alloc;
		return 0;
	}
	qsort(q->runs, q->nr_runs, sizeof(*q->runs), sq_head_cmp);
	for (i = 0; i < q->nr_runs; i++) {
		struct syscap_run *run = &q->runs[i];
		size_t len = run->end - run->head;

		memmove(q->ents + n, q->ents + run->head, len * sizeof(*q->ents));
		run->head = n;
		run->end = n + len;
		n += len;
	}
	q->nr_ents = n;
	if (q->open != SIZE_MAX)
		q->open = q->nr_runs - 1;
	for (i = q->nr_runs / 2; i-- > 0;)
		sq_sift_down(q, i);
	return 0;
}

static int sq_push(struct syscap_order *q, const struct syscap_qent *e)
{
	struct syscap_run *open;

	if (sq_make_room(q) < 0)
		return -1;
	open = q->open != SIZE_MAX ? &q->runs[q->open] : NULL;
	if (open && !sq_before(e, &q->ents[open->end - 1])) {
		q->ents[open->end++] = *e;      /* its head stays */
	} else {
		if (mem_grow(&q->runs, &q->alloc_runs, sizeof(*q->runs),
			     q->nr_runs + 1) < 0)
			return -1;
		q->ents[q->nr_ents] = *e;
		q->runs[q->nr_runs].head = q->nr_ents;
		q->runs[q->nr_runs].end = q->nr_ents + 1;
		q->open = q->nr_runs++;
		sq_sift_up(q, q->open);
	}
	q->nr_ents++;
	q->nr_live++;
	return 0;
}

void syscap_order_init(struct syscap_order *q, uint64_t window)
{
	memset(q, 0, sizeof(*q));
	q->open = SIZE_MAX;
	q->window = window;
	q->next_mark = window / 2;
}

int syscap_order_read(struct syscap_order *q, const struct syscap_qent *e,
		      uint64_t len, uint64_t end)
{
	if (e) {
		if (sq_push(q, e) < 0)
			return -1;
		if (!q->any || e->time > q->max_time)
			q->max_time = e->time;
		q->any = true;
	}
	q->read_bytes += len;
	if (q->read_bytes < q->next_mark)
		return 0;
	q->limit = q->mark_time;
	q->limit_any = q->mark_any;
	q->mark_time = q->max_time;
	q->mark_any = q->any;
	q->done_off = q->mark_off;
	q->mark_off = end;
	q->next_mark = q->read_bytes + q->window / 2;
	return 0;
}

bool syscap_order_pop(struct syscap_order *q, bool draining,
		      struct syscap_qent *e)
{
	struct syscap_run *top;

	if (!q->nr_runs)
		return false;
	top = &q->runs[0];
	/* max_time is the newest queued: no older than any waiting */
	if (!draining && (!q->limit_any || q->ents[top->head].time > q->limit) &&
	    !(q->horizon > 0 && (uint64_t)q->max_time -
	      (uint64_t)q->ents[top->head].time > (uint64_t)q->horizon))
		return false;
	*e = q->ents[top->head];
	q->nr_live--;
	if (++top->head < top->end) {
		sq_sift_down(q, 0);
	} else {
		/* the run is used up: the last run takes its place */
		if (q->open == 0)
			q->open = SIZE_MAX;
		if (--q->nr_runs == 0) {
			q->nr_ents = 0;         /* start the array afresh */
		} else {
			sq_swap(q, 0, q->nr_runs);
			sq_sift_down(q, 0);
		}
	}
	if (q->delivered && e->time < q->last_time)
		q->late++;
	else
		q->last_time = e->time;
	q->delivered = true;
	return true;
}

void syscap_order_release(struct syscap_order *q)
{
	free(q->ents);
	free(q->runs);
	q->ents = NULL;
	q->runs = NULL;
	q->nr_ents = q->alloc_ents = q->nr_live = 0;
	q->nr_runs = q->alloc_runs = 0;
	q->open = SIZE_MAX;
}
