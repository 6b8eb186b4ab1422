/*
 * perfdata_order.c - put records in timestamp order with bounded memory.
 *
 * perf writes each CPU's ring buffer in turn, so records are sorted only
 * within a round.  A FINISHED_ROUND record promises that later records are
 * not older than the newest one seen before the previous FINISHED_ROUND
 * (perf's ordered_events rule): at each round we may deliver everything up
 * to that time.  The queue is a binary heap on (time, file sequence).
 */
#include "formats/perfdata_internal.h"

#include "common/mem.h"

static bool qent_before(const struct pd_qent *a, const struct pd_qent *b)
{
	if (a->time != b->time)
		return a->time < b->time;
	return a->seq < b->seq;
}

static void heap_swap(struct pd_qent *a, struct pd_qent *b)
{
	struct pd_qent t = *a;

	*a = *b;
	*b = t;
}

int pd_queue_push(struct pd_queue *q, const struct pd_qent *e)
{
	size_t i;

	if (mem_grow(&q->heap, &q->alloc, sizeof(*q->heap), q->nr + 1) < 0)
		return -1;
	i = q->nr++;
	q->heap[i] = *e;
	while (i > 0) {
		size_t parent = (i - 1) / 2;

		if (!qent_before(&q->heap[i], &q->heap[parent]))
			break;
		heap_swap(&q->heap[i], &q->heap[parent]);
		i = parent;
	}
	q->bytes += e->len;
	if (e->time > q->max_time || q->max_time == EVENT_NO_TIME)
		q->max_time = e->time;
	return 0;
}

static void heap_pop(struct pd_queue *q, struct pd_qent *e)
{
	size_t i = 0;

	*e = q->heap[0];
	q->heap[0] = q->heap[--q->nr];
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < q->nr && qent_before(&q->heap[l], &q->heap[m]))
			m = l;
		if (r < q->nr && qent_before(&q->heap[r], &q->heap[m]))
			m = r;
		if (m == i)
			break;
		heap_swap(&q->heap[i], &q->heap[m]);
		i = m;
	}
	q->bytes -= e->len;
}

/*
 * Pops the oldest record if it may be delivered now: at end of input, up
 * to the round's limit, or when the queue holds more than its byte budget.
 */
bool pd_queue_pop_ready(struct pd_queue *q, struct pd_qent *e)
{
	if (q->nr == 0)
		return false;
	if (!q->draining && q->heap[0].time > q->flush_limit &&
	    q->bytes <= q->max_bytes)
		return false;
	heap_pop(q, e);
	return true;
}

void pd_queue_round(struct pd_queue *q)
{
	q->flush_limit = q->next_flush;
	q->next_flush = q->max_time == EVENT_NO_TIME ? 0 : q->max_time;
}

void pd_queue_release(struct perfdata_reader *r, struct pd_queue *q)
{
	size_t i;

	for (i = 0; i < q->nr; i++)
		pd_block_put(r, q->heap[i].blk);
	free(q->heap);
	q->heap = NULL;
	q->nr = q->alloc = 0;
}
