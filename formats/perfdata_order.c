/*
 * perfdata_order.c - put records in timestamp order with bounded memory.
 *
 * perf writes each CPU's ring buffer in turn, so records are sorted only
 * within a round.  A FINISHED_ROUND record promises that later records are
 * not older than the newest one seen before the previous FINISHED_ROUND
 * (perf's ordered_events rule): at each round we may deliver everything up
 * to that time.
 *
 * Records are delivered by (time, file sequence).  Because every CPU's
 * records come in ascending runs, the queue keeps the records in arrival
 * order and merges the runs: a record that is not older than the last one
 * extends the newest run, any other starts a run, and a binary heap of the
 * runs, keyed by their oldest record, gives the next one.  Pushing is O(1)
 * for sorted input and popping O(log runs), a few runs for a perf capture;
 * an input of random times makes runs of about two records, and the
 * queue behaves like a heap of records.
 *
 * Memory is bounded without rounds too: each time another half of the
 * byte budget of timed records has been read, the newest time seen at the
 * mark before becomes a limit as well (force_limit).  So a record waits
 * until at most a budget's worth of records has been read after it.  The
 * rule looks only at what is read, not at what is queued: a reader that
 * queues only some records (a filter that judges them as they are read,
 * pd_queue_pass() for the others) delivers those in the same order, among
 * the same others, as one that queues them all.
 */
#include "formats/perfdata_internal.h"

#include "common/mem.h"

#define PD_QUEUE_MIN_ENTS 64

static bool run_before(const struct pd_run *a, const struct pd_run *b)
{
	if (a->time != b->time)
		return a->time < b->time;
	return a->seq < b->seq;
}

/* Keeps q->open on the heap slot of the run records may extend. */
static void run_move(struct pd_queue *q, size_t to, const struct pd_run *run,
		     bool is_open)
{
	q->runs[to] = *run;
	if (is_open)
		q->open = to;
}

static void run_sift_up(struct pd_queue *q, size_t i)
{
	struct pd_run run = q->runs[i];
	bool is_open = q->open == i;

	while (i > 0) {
		size_t parent = (i - 1) / 2;

		if (!run_before(&run, &q->runs[parent]))
			break;
		run_move(q, i, &q->runs[parent], q->open == parent);
		i = parent;
	}
	run_move(q, i, &run, is_open);
}

static void run_sift_down(struct pd_queue *q, size_t i)
{
	struct pd_run run = q->runs[i];
	bool is_open = q->open == i;
	size_t n = q->nr_runs;

	for (;;) {
		size_t l = 2 * i + 1, m;

		if (l >= n)
			break;
		m = l;
		if (l + 1 < n && run_before(&q->runs[l + 1], &q->runs[l]))
			m = l + 1;
		if (!run_before(&q->runs[m], &run))
			break;
		run_move(q, i, &q->runs[m], q->open == m);
		i = m;
	}
	run_move(q, i, &run, is_open);
}

/*
 * Makes room for one more record at the end of q->ents.  Popped records
 * leave holes at the heads of runs: when the array is full, the live
 * records are packed into a new one of twice their number (the open run
 * last, so that it still ends at the end).  Each push pays O(1) amortized
 * and the array never holds more than twice the records queued then.
 */
static int queue_make_room(struct pd_queue *q)
{
	struct pd_qent *ents;
	size_t alloc, n = 0, i;

	if (q->nr_ents < q->alloc_ents)
		return 0;
	if (q->nr_live > SIZE_MAX / 2 / sizeof(*ents) - 1)
		return -1;
	alloc = MAX((size_t)PD_QUEUE_MIN_ENTS, 2 * q->nr_live + 2);
	ents = malloc(alloc * sizeof(*ents));
	if (!ents)
		return -1;
	for (i = 0; i <= q->nr_runs; i++) {
		struct pd_run *run;
		size_t len;

		/* the open run goes last; i == nr_runs stands for it */
		if (i == q->open || (i == q->nr_runs && q->open == SIZE_MAX))
			continue;
		run = &q->runs[i < q->nr_runs ? i : q->open];
		len = run->end - run->head;
		memcpy(ents + n, q->ents + run->head, len * sizeof(*ents));
		run->head = n;
		run->end = n + len;
		n += len;
	}
	free(q->ents);
	q->ents = ents;
	q->alloc_ents = alloc;
	q->nr_ents = n;
	return 0;
}

int pd_queue_push(struct pd_queue *q, const struct pd_qent *e)
{
	struct pd_run *open;

	if (queue_make_room(q) < 0)
		return -1;
	q->ents[q->nr_ents] = *e;
	open = q->open != SIZE_MAX ? &q->runs[q->open] : NULL;
	if (open && e->time >= q->ents[open->end - 1].time) {
		open->end++;   /* its head, and so its place, stays */
	} else {
		if (mem_grow(&q->runs, &q->alloc_runs, sizeof(*q->runs),
			     q->nr_runs + 1) < 0)
			return -1;
		q->runs[q->nr_runs].time = e->time;
		q->runs[q->nr_runs].seq = e->seq;
		q->runs[q->nr_runs].head = q->nr_ents;
		q->runs[q->nr_runs].end = q->nr_ents + 1;
		q->open = q->nr_runs++;
		run_sift_up(q, q->open);
	}
	q->nr_ents++;
	q->nr_live++;
	q->bytes += e->len;
	pd_queue_pass(q, e);
	return 0;
}

void pd_queue_pass(struct pd_queue *q, const struct pd_qent *e)
{
	if (e->time > q->max_time || q->max_time == EVENT_NO_TIME)
		q->max_time = e->time;
	q->read_bytes += e->len;
	if (q->read_bytes < q->next_mark)
		return;
	q->force_limit = q->mark_time;
	q->mark_time = q->max_time;
	q->next_mark = q->read_bytes + q->max_bytes / 2;
}

/* Takes the oldest record; the queue must not be empty. */
static void queue_pop(struct pd_queue *q, struct pd_qent *e)
{
	struct pd_run *top = &q->runs[0];

	*e = q->ents[top->head++];
	q->nr_live--;
	q->bytes -= e->len;
	if (top->head < top->end) {
		top->time = q->ents[top->head].time;
		top->seq = q->ents[top->head].seq;
		run_sift_down(q, 0);
		return;
	}
	/* the run is used up: the last run takes its place */
	if (q->open == 0)
		q->open = SIZE_MAX;
	if (--q->nr_runs == 0) {
		/* nothing left: start the array afresh */
		q->nr_ents = 0;
		return;
	}
	if (q->open == q->nr_runs)
		q->open = 0;
	q->runs[0] = q->runs[q->nr_runs];
	run_sift_down(q, 0);
}

/*
 * The oldest record if it may be delivered now: at end of input, up to the
 * round's limit, or up to the limit the bytes read set (see the top).
 */
const struct pd_qent *pd_queue_peek_ready(const struct pd_queue *q)
{
	uint64_t t;

	if (q->nr_runs == 0)
		return NULL;
	t = q->runs[0].time;
	if (!q->draining && t > q->flush_limit && t > q->force_limit)
		return NULL;
	return &q->ents[q->runs[0].head];
}

bool pd_queue_pop_ready(struct pd_queue *q, struct pd_qent *e)
{
	if (!pd_queue_peek_ready(q))
		return false;
	queue_pop(q, e);
	return true;
}

const struct pd_qent *pd_queue_peek(const struct pd_queue *q)
{
	return q->nr_runs ? &q->ents[q->runs[0].head] : NULL;
}

void pd_queue_init(struct pd_queue *q, uint64_t max_bytes)
{
	memset(q, 0, sizeof(*q));
	q->open = SIZE_MAX;
	q->max_bytes = max_bytes;
	q->next_mark = max_bytes / 2;
}

void pd_queue_round(struct pd_queue *q)
{
	q->flush_limit = q->next_flush;
	q->next_flush = q->max_time == EVENT_NO_TIME ? 0 : q->max_time;
}

void pd_queue_release(struct perfdata_reader *r, struct pd_queue *q)
{
	size_t i, k;

	for (i = 0; i < q->nr_runs; i++)
		for (k = q->runs[i].head; k < q->runs[i].end; k++)
			pd_block_put(r, q->ents[k].blk);
	free(q->ents);
	free(q->runs);
	q->ents = NULL;
	q->runs = NULL;
	q->nr_ents = q->alloc_ents = q->nr_live = 0;
	q->nr_runs = q->alloc_runs = 0;
	q->open = SIZE_MAX;
}
