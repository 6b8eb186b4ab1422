/*
 * syscap_order.h - the sysprof reader's reorder window: frames in, the
 * same frames out by (time, file offset), with memory bounded by the
 * bytes read rather than by the capture's size.
 *
 * sysprof's writers (per-CPU perf buffers flushed in chunks, /proc scans,
 * muxed sub-captures) leave frames nearly, not strictly, in time order.
 * A frame waits in the window until at most a window's worth of frames
 * (counted in file bytes, whether queued or not) has been read after it:
 * each time another half window has been read, the newest time queued by
 * the mark before becomes the limit up to which frames may go.  A capture
 * smaller than the window comes out fully sorted.  A frame older than one
 * already delivered (it was read too late for its place) goes out at
 * once and is counted in late.
 *
 * Frames wait in ascending runs, as they were read, merged by a heap of
 * the runs: O(1) a frame for frames in order, O(log runs) otherwise.  The
 * window owns its arrays: a waiting frame costs 16 bytes (8/3 of that
 * allocated at most) and 16 more when it starts a run, and at most
 * window / 24 frames wait (a frame is 24 bytes or more).
 */
#ifndef RESTACK_FORMATS_SYSCAP_ORDER_H
#define RESTACK_FORMATS_SYSCAP_ORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct syscap_qent {
	int64_t time;
	uint64_t off;           /* of the frame, in the file */
};

/* Frames that came in ascending order, ents[head..end). */
struct syscap_run {
	size_t head, end;
};

struct syscap_order {
	struct syscap_qent *ents;       /* in arrival order, with holes */
	size_t nr_ents, alloc_ents, nr_live;
	struct syscap_run *runs;        /* binary min-heap by head entry */
	size_t nr_runs, alloc_runs;
	size_t open;                    /* run at the end of ents, or
					 * SIZE_MAX */
	uint64_t window;                /* bytes */
	int64_t horizon;                /* time units; 0: none (see
					 * syscap_order_set_horizon()) */
	uint64_t read_bytes, next_mark;
	bool any;                       /* max_time is set */
	int64_t max_time;               /* newest time queued */
	bool mark_any, limit_any;
	int64_t mark_time, limit;       /* limit: what may go now */
	uint64_t mark_off;              /* file offset read at the last mark */
	uint64_t done_off;              /* every frame before it went out
					 * once nothing is ready */
	bool delivered;
	int64_t last_time;              /* newest time delivered */
	uint64_t late;                  /* delivered after a newer one */
};

void syscap_order_init(struct syscap_order *q, uint64_t window);

/*
 * Frames may also go once a frame newer by more than horizon (in the
 * frames' time, ns) has been read, however few bytes came after them: a
 * live stream's frames do not wait for the window's bytes.  0: off.
 */
static inline void syscap_order_set_horizon(struct syscap_order *q,
					    int64_t horizon)
{
	q->horizon = horizon;
}

/*
 * One frame read, ending at file offset end: e, when not NULL, is queued.
 * Returns -1 when out of memory (e is then not queued).
 */
int syscap_order_read(struct syscap_order *q, const struct syscap_qent *e,
		      uint64_t len, uint64_t end);

/*
 * Takes the oldest frame into *e if it may go now (all may when draining,
 * at the end of the input).  When it returns false without draining, the
 * frames before syscap_order_done_off() have all gone out.
 */
bool syscap_order_pop(struct syscap_order *q, bool draining,
		      struct syscap_qent *e);

static inline uint64_t syscap_order_done_off(const struct syscap_order *q)
{
	return q->done_off;
}

/* Frees the entries; the counts (late) stay. */
void syscap_order_release(struct syscap_order *q);

#endif
