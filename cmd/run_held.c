/*
 * run_held.c - samples held until their frames can be named (see
 * run_internal.h).
 *
 * On a first run the warmup thread decompresses the C library's DWARF
 * (15 ms or so for Debian's libc6-dbg) while the run's thread reads and
 * unwinds; inline names of libc frames need it, and the first sample
 * has some.  Instead of waiting, the resolver gives such frames pending
 * locations (resolve_opts.defer_names) and the samples are copied here,
 * every later one too, so that they come out in input order; once no
 * module with pending frames would make naming wait, they are named and
 * handed out in that order.  Names do not depend on when they are
 * looked up (a2lstate.h replays what perf's order of questions taught
 * addr2line), so the output is the same as when the run waits.
 *
 * Memory: at most RUN_HELD_MAX bytes of samples; past that the run names
 * them, waiting if it must.
 */
#include <string.h>

#include "cmd/run_internal.h"

#include "common/mem.h"

#define RUN_HELD_MAX ((size_t)16 << 20)
/* How often (held samples) to ask whether naming would still wait. */
#define RUN_HELD_CHECK 16

struct run_held {
	struct rsample *s;        /* frames: an index into frames */
	size_t nr, alloc;
	struct rframe *frames;
	size_t nr_frames, alloc_frames;
};

static bool run_held_pending(const struct rsample *s)
{
	uint32_t i;

	for (i = 0; i < s->nr_frames; i++)
		if (s->frames[i].loc && s->frames[i].loc->kind == SYM_PENDING)
			return true;
	return false;
}

static size_t run_held_bytes(const struct run_held *h)
{
	return h->nr * sizeof(*h->s) + h->nr_frames * sizeof(*h->frames);
}

int run_held_flush(struct run *run)
{
	struct run_held *h = run->held;
	size_t i;

	if (!h)
		return 0;
	for (i = 0; i < h->nr; i++) {
		struct rsample *s = &h->s[i];

		s->frames = h->frames + (size_t)(uintptr_t)s->frames;
		if (resolve_name_sample(&run->res, s) < 0 ||
		    run_give(run, run->fn, run->fn_ctx, s) < 0)
			return -1;
	}
	h->nr = h->nr_frames = 0;
	return 0;
}

int run_held_give(struct run *run, const struct rsample *s)
{
	struct run_held *h = run->held;
	struct rsample *c;

	if (!resolve_deferred_names(&run->res) ||
	    ((!h || !h->nr) && !run_held_pending(s)))
		return run_give(run, run->fn, run->fn_ctx, s);
	if (!h && !(h = run->held = mem_zalloc(1, sizeof(*h))))
		return -1;
	if (mem_grow(&h->s, &h->alloc, sizeof(*h->s), h->nr + 1) < 0 ||
	    mem_grow(&h->frames, &h->alloc_frames, sizeof(*h->frames),
		     h->nr_frames + s->nr_frames) < 0)
		return -1;
	c = &h->s[h->nr++];
	run->named_late++;
	*c = *s;
	memcpy(h->frames + h->nr_frames, s->frames,
	       s->nr_frames * sizeof(*s->frames));
	c->frames = (struct rframe *)(uintptr_t)h->nr_frames;
	h->nr_frames += s->nr_frames;
	if (run_held_bytes(h) < RUN_HELD_MAX &&
	    (h->nr % RUN_HELD_CHECK || resolve_names_wait(&run->res)))
		return 0;
	return run_held_flush(run);
}

void run_held_free(struct run *run)
{
	struct run_held *h = run->held;

	if (!h)
		return;
	free(h->s);
	free(h->frames);
	free(h);
	run->held = NULL;
}
