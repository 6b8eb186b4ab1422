/*
 * shards.c - workers that read for themselves, their results merged in
 * order (see shards.h).
 *
 * Each worker has a ring of result slots that only it fills and only the
 * merger empties.  A worker publishes its filled slots and its progress
 * every SHARDS_PUBLISH results or steps, and before it waits: the merger
 * only reads what is published.  A slot's key is (output pass,
 * event.order); the merger emits the smallest key at the head of any ring
 * once every worker with an empty ring has published progress beyond it.
 *
 * The merger is whichever worker holds merge_lock: each tries to take it
 * when it publishes and when its ring is full, and the caller's thread
 * takes it at the end.  So the emitting falls to the workers with time to
 * spare, instead of making worker 0 the slowest (on two cores, the other
 * worker idled a third of the time when worker 0 emitted everything).  A
 * worker holding it emits its own result with no copy when nothing can
 * come before it.  The worker the others wait for leaves the merging to
 * them: one whose progress is behind all others' when it publishes, and
 * every worker while another waits for room (shards_leave_merging()).
 * Without that, on two cores, the worker behind did nearly all of the
 * emitting while the one ahead slept, waiting for room, for 6-8% of the
 * run (a third of it under perf record).
 *
 * Waiting uses one mutex, one condition variable and a count of changes
 * (publications, emitted results): a waiter sleeps until the count moves,
 * after polling it for a while when every worker has a core of its own
 * (a sleeper costs the publisher that wakes it a system call).
 * The waiters are counted, so that nobody takes the mutex while everyone
 * is busy: a publisher checks the count after a full fence, the waiter
 * raises it before checking the change count a last time.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <limits.h>

#include "common/base.h"
#include "common/mem.h"
#include "formats/event_copy.h"
#include "unwind/shards.h"

#define SHARDS_RING (1u << 20)  /* bytes of results a worker holds */
#define SHARDS_BIG (SHARDS_RING / 8) /* larger entries are allocated */
#define SHARDS_PUBLISH 32u      /* results or steps between publications */
#define SHARDS_NOTIFY 64u       /* results emitted between wake-ups */
#define SHARDS_PASS_SHIFT 56    /* key = pass << this | order */
#define SHARDS_SPIN 20000u      /* polls of the change count (about
				 * 0.2-0.5 ms) before a waiter sleeps */

enum shards_kind {
	SHARDS_RESULT,          /* its copies (frames, comm, event) follow */
	SHARDS_BIG_RESULT,      /* its copies are in .big */
	SHARDS_END,             /* ends the worker's output pass */
	SHARDS_WRAP,            /* the rest of the ring is unused */
};

/*
 * An entry of a worker's ring, 8-byte aligned; the ring is written and
 * read front to back, so that the other core's loads of it stream.
 */
struct shards_entry {
	uint32_t size;          /* of the entry, from here */
	uint32_t kind;          /* enum shards_kind */
	uint64_t key;
	void *big;              /* SHARDS_BIG_RESULT: malloc'd, freed */
	struct event *ev;       /* the record's copy, or NULL */
	bool has_rs;            /* rs is a result (else only ev) */
	struct rsample rs;
};

#define SHARDS_WRAP_SIZE 8u     /* size and kind are all a WRAP has */

struct shards_worker {
	/* published by the worker, read by the merger */
	_Alignas(64) atomic_uint_fast64_t tail;    /* ring bytes published */
	atomic_uint_fast64_t progress;  /* every result below this key is */
	atomic_bool done;               /* the work function returned */

	/* the worker's own */
	_Alignas(64) uint64_t fill;     /* ring bytes filled (tail lags) */
	uint64_t pass;                  /* output pass */
	uint64_t progress_own;          /* progress not yet published */
	unsigned unpublished;
	uint64_t head_seen;             /* head, when last read */
	uint8_t *ring_w;                /* = ring, in the worker's line */
	unsigned windex;                /* = index, likewise */
	uint64_t others_limit;          /* see shards_due_now() */
	unsigned limit_wait;
	bool behind;                    /* see shards_leave_merging() */

	/* the merger's (under merge_lock) */
	_Alignas(64) atomic_uint_fast64_t head;    /* ring bytes emitted */
	uint64_t head_own;
	uint8_t *ring;

	struct shards *sh;
	unsigned index;
	pthread_t thread;
	bool started;
};

struct shards {
	struct shards_worker w[SHARDS_MAX_WORKERS];
	unsigned nr;
	shards_emit_fn emit;
	void *emit_ctx;
	shards_work_fn work;
	void *work_ctx;
	atomic_bool failed;
	bool spin;                      /* a core for every worker */
	atomic_uint helpers;            /* workers waiting for room, who
					 * merge meanwhile */

	_Alignas(64) pthread_mutex_t merge_lock; /* held by the merger */
	uint64_t pass;                  /* the output pass being emitted */

	_Alignas(64) atomic_uint_fast64_t changes; /* publications, emits */
	atomic_uint waiters;
	pthread_mutex_t lock;           /* for changed */
	pthread_cond_t changed;
};

/* A polling loop's breather for the core's other work. */
static inline void shards_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

static size_t shards_align(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

static uint64_t shards_key(uint64_t pass, uint64_t order)
{
	return pass << SHARDS_PASS_SHIFT | order;
}

/* The output pass of a key. */
static uint64_t shards_pass(uint64_t key)
{
	return key >> SHARDS_PASS_SHIFT;
}

/* The event.order of a key. */
static uint64_t shards_order(uint64_t key)
{
	return key & ((UINT64_C(1) << SHARDS_PASS_SHIFT) - 1);
}

/* Counts a change; wakes the waiters, if any. */
static void shards_changed(struct shards *sh)
{
	atomic_fetch_add(&sh->changes, 1);      /* a full fence */
	if (!atomic_load(&sh->waiters))
		return;
	pthread_mutex_lock(&sh->lock);
	pthread_cond_broadcast(&sh->changed);
	pthread_mutex_unlock(&sh->lock);
}

/*
 * Waits until the change count is no longer seen (or the run fails).
 * Polls it for a while first when every worker has a core: a sleeper
 * costs whoever publishes next a wake-up, and that is the busiest worker.
 */
static void shards_wait_change(struct shards *sh, uint64_t seen)
{
	unsigned i;

	if (sh->spin) {
		for (i = 0; i < SHARDS_SPIN; i++) {
			if (atomic_load_explicit(&sh->changes,
						 memory_order_relaxed) != seen ||
			    shards_stopping(sh))
				return;
			shards_pause();
		}
	}
	pthread_mutex_lock(&sh->lock);
	atomic_fetch_add(&sh->waiters, 1);
	while (!atomic_load(&sh->failed) && atomic_load(&sh->changes) == seen)
		pthread_cond_wait(&sh->changed, &sh->lock);
	atomic_fetch_sub(&sh->waiters, 1);
	pthread_mutex_unlock(&sh->lock);
}

static void shards_fail(struct shards *sh)
{
	atomic_store(&sh->failed, true);
	shards_changed(sh);
}

bool shards_stopping(const struct shards *sh)
{
	return atomic_load_explicit(&sh->failed, memory_order_relaxed);
}

/* Makes worker w's slots and progress visible to the merger. */
static void shards_publish(struct shards *sh, struct shards_worker *w)
{
	atomic_store_explicit(&w->tail, w->fill, memory_order_release);
	atomic_store_explicit(&w->progress, w->progress_own,
			      memory_order_release);
	w->unpublished = 0;
	shards_changed(sh);
}

/*
 * Whether w's progress is behind that of every other worker still at
 * work, as they published it; not when they are all done.
 */
static bool shards_behind(struct shards *sh, struct shards_worker *w)
{
	bool others = false;
	unsigned i;

	for (i = 0; i < sh->nr; i++) {
		struct shards_worker *o = &sh->w[i];

		if (o == w || atomic_load_explicit(&o->done,
						   memory_order_relaxed))
			continue;
		if (atomic_load_explicit(&o->progress, memory_order_relaxed) <=
		    w->progress_own)
			return false;
		others = true;
	}
	return others;
}

/*
 * Whether worker w leaves the merging to the others: when one of them
 * waits for room (it merges meanwhile), or when w was behind all those at
 * work when it last published (they merge when they publish; when they
 * are done, w no longer is behind at its next publication).
 */
static bool shards_leave_merging(const struct shards *sh,
				 const struct shards_worker *w)
{
	return atomic_load_explicit(&sh->helpers, memory_order_relaxed) ||
	       w->behind;
}

/* ---- the merger (whoever holds merge_lock) ---- */

/* The entry at w's head, past any WRAP; NULL when nothing is published. */
static struct shards_entry *shards_head(struct shards_worker *w, uint64_t tail)
{
	struct shards_entry *e;

	for (;;) {
		if (w->head_own == tail)
			return NULL;
		e = (struct shards_entry *)(w->ring +
					    w->head_own % SHARDS_RING);
		if (e->kind != SHARDS_WRAP)
			return e;
		w->head_own += e->size;
		atomic_store_explicit(&w->head, w->head_own,
				      memory_order_release);
	}
}

/*
 * What w has published: the entry at its head (NULL: none), and in
 * *progress its progress, read first, since it covers only what the tail
 * read after it does.
 */
static struct shards_entry *shards_peek(struct shards_worker *w,
					uint64_t *progress)
{
	*progress = atomic_load_explicit(&w->progress, memory_order_acquire);
	return shards_head(w, atomic_load_explicit(&w->tail,
						   memory_order_acquire));
}

/* Gives the entry at w's head back. */
static void shards_pop(struct shards_worker *w, struct shards_entry *e)
{
	if (e->kind == SHARDS_BIG_RESULT)
		free(e->big);
	w->head_own += e->size;
	atomic_store_explicit(&w->head, w->head_own, memory_order_release);
}

/*
 * Emits every result that is due, with merge_lock held.  Returns 1 when
 * it emitted or moved to the next pass, 0 when nothing was due, -1 when
 * the run is abandoned.  Says so (shards_changed()) every SHARDS_NOTIFY
 * results and when it returns, for the workers that wait for room.
 */
static int shards_merge(struct shards *sh)
{
	struct shards_entry *heads[SHARDS_MAX_WORKERS];
	unsigned emitted = 0;
	int moved = 0;

	for (;;) {
		struct shards_worker *best = NULL;
		struct shards_entry *e;
		uint64_t best_key = UINT64_MAX, limit = UINT64_MAX;
		unsigned ended = 0, i;

		if (shards_stopping(sh))
			return -1;
		for (i = 0; i < sh->nr; i++) {
			struct shards_worker *w = &sh->w[i];
			uint64_t p;

			e = heads[i] = shards_peek(w, &p);
			if (!e)
				limit = MIN(limit, p);
			else if (e->kind == SHARDS_END)
				ended++;
			else if (e->key < best_key) {
				best_key = e->key;
				best = w;
			}
		}
		if (ended == sh->nr) {
			for (i = 0; i < sh->nr; i++)
				shards_pop(&sh->w[i], heads[i]);
			sh->pass++;
			moved = 1;
			continue;
		}
		if (!best || best_key >= limit) {
			if (moved)
				shards_changed(sh);
			return moved;
		}
		e = heads[best->index];
		if (sh->emit(sh->emit_ctx, shards_order(e->key),
			     e->has_rs ? &e->rs : NULL, e->ev) < 0) {
			shards_fail(sh);
			return -1;
		}
		shards_pop(best, e);
		moved = 1;
		if (++emitted % SHARDS_NOTIFY == 0)
			shards_changed(sh);
	}
}

/* shards_merge() unless another thread is merging: then 0. */
static int shards_try_merge(struct shards *sh)
{
	int rc;

	if (pthread_mutex_trylock(&sh->merge_lock))
		return 0;
	rc = shards_merge(sh);
	pthread_mutex_unlock(&sh->merge_lock);
	return rc;
}

/*
 * The least key the workers but me may still emit, as far as they have
 * published: the key at the head of their rings, else their progress; a
 * worker whose head ends a pass may still emit anything of the next one.
 * It only grows.  With merge_lock held.
 */
static uint64_t shards_others_limit(struct shards *sh, unsigned me)
{
	uint64_t limit = UINT64_MAX;
	unsigned i;

	for (i = 0; i < sh->nr; i++) {
		uint64_t p;
		struct shards_entry *e;

		if (i == me)
			continue;
		e = shards_peek(&sh->w[i], &p);

		if (!e)
			limit = MIN(limit, p);
		else if (e->kind != SHARDS_END)
			limit = MIN(limit, e->key);
		else
			limit = MIN(limit, shards_key(shards_pass(e->key) + 1,
						      0));
	}
	return limit;
}

/*
 * Whether w's result with key may be emitted at once: nothing of its own
 * waits in its ring, and no other worker may still emit a smaller key.
 * Decided first without merge_lock, from w's ring and the bound it knows,
 * so that the workers do not pass the lock's line between their cores for
 * every result; the other workers' lines are read again (with the lock)
 * only when that bound is too small, and then at most every
 * SHARDS_PUBLISH results.  When it returns true, w holds merge_lock.
 */
static bool shards_due_now(struct shards *sh, struct shards_worker *w,
			   uint64_t key)
{
	bool stale = key >= w->others_limit;

	if (w->fill != atomic_load_explicit(&w->head, memory_order_acquire))
		return false;   /* its own results wait */
	if (shards_leave_merging(sh, w))
		return false;   /* copied for another to emit */
	if (stale && w->limit_wait) {
		w->limit_wait--;
		return false;
	}
	if (pthread_mutex_trylock(&sh->merge_lock))
		return false;
	if (w->fill == w->head_own) {
		if (stale)
			w->others_limit = shards_others_limit(sh, w->windex);
		if (key < w->others_limit)
			return true;
		w->limit_wait = SHARDS_PUBLISH;
	}
	pthread_mutex_unlock(&sh->merge_lock);
	return false;
}

/* ---- the workers ---- */

/*
 * Waits until w's ring has n bytes free, merging meanwhile when nobody
 * else is.
 */
static int shards_make_room(struct shards *sh, struct shards_worker *w,
			    size_t n)
{
	int rc = 0;

	shards_publish(sh, w);
	atomic_fetch_add(&sh->helpers, 1);
	while (w->fill + n - atomic_load(&w->head) > SHARDS_RING) {
		uint64_t seen = atomic_load(&sh->changes);

		if (shards_try_merge(sh) < 0 || shards_stopping(sh)) {
			rc = -1;
			break;
		}
		if (w->fill + n - atomic_load(&w->head) > SHARDS_RING)
			shards_wait_change(sh, seen);
	}
	atomic_fetch_sub(&sh->helpers, 1);
	return rc;
}

/*
 * Room for an entry of size bytes (at most SHARDS_BIG + its header) at the
 * end of w's ring, wrapping around when the ring's end is closer; NULL
 * when the run is abandoned.
 */
static struct shards_entry *shards_reserve(struct shards *sh,
					   struct shards_worker *w,
					   size_t size)
{
	size_t at = w->fill % SHARDS_RING;
	size_t need = size + (at + size > SHARDS_RING ? SHARDS_RING - at : 0);

	if (w->fill + need - w->head_seen > SHARDS_RING) {
		w->head_seen = atomic_load_explicit(&w->head,
						    memory_order_acquire);
		if (w->fill + need - w->head_seen > SHARDS_RING &&
		    shards_make_room(sh, w, need) < 0)
			return NULL;
		w->head_seen = atomic_load(&w->head);
	}
	if (at + size > SHARDS_RING) {
		struct shards_entry *wrap =
			(struct shards_entry *)(w->ring_w + at);

		wrap->size = (uint32_t)(SHARDS_RING - at);
		wrap->kind = SHARDS_WRAP;
		w->fill += SHARDS_RING - at;
		at = 0;
	}
	return (struct shards_entry *)(w->ring_w + at);
}

/*
 * Publishes every SHARDS_PUBLISH results or steps, then emits what is due
 * unless another worker is at it: looking at the other rings more often
 * only fetched the lines their workers were writing.
 */
static int shards_step(struct shards *sh, struct shards_worker *w)
{
	if (++w->unpublished < SHARDS_PUBLISH)
		return 0;
	shards_publish(sh, w);
	w->behind = shards_behind(sh, w);
	if (shards_leave_merging(sh, w))
		return 0;
	return shards_try_merge(sh) < 0 ? -1 : 0;
}

/* Emits rs and ev of w at once if due and nobody else merges; 1 if so. */
static int shards_emit_now(struct shards *sh, struct shards_worker *w,
			   uint64_t key, const struct rsample *rs,
			   const struct event *ev)
{
	int rc = 1;

	if (!shards_due_now(sh, w, key))
		return 0;
	w->progress_own = key + 1;
	if (sh->emit(sh->emit_ctx, shards_order(key), rs, ev) < 0) {
		shards_fail(sh);
		rc = -1;
	}
	pthread_mutex_unlock(&sh->merge_lock);
	return rc;
}

int shards_put(struct shards *sh, unsigned index, uint64_t order,
	       const struct rsample *rs, const struct event *ev,
	       unsigned copy_flags)
{
	struct shards_worker *w = &sh->w[index];
	uint64_t key = shards_key(w->pass, order);
	size_t frames = rs ? rs->nr_frames * sizeof(*rs->frames) : 0;
	size_t comm_len = rs ? strlen(rs->comm) + 1 : 0;
	size_t at_ev = shards_align(shards_align(frames) + comm_len);
	size_t body = at_ev + (ev ? shards_align(sizeof(*ev)) +
					    event_copy_size(ev, copy_flags) :
				    0);
	size_t size = shards_align(sizeof(struct shards_entry));
	struct shards_entry *e;
	uint8_t *p;

	switch (shards_emit_now(sh, w, key, rs, ev)) {
	case 1:         /* nothing could come before it: no copy */
		return shards_step(sh, w);
	case -1:
		return -1;
	}
	if (body <= SHARDS_BIG)
		size += body;
	e = shards_reserve(sh, w, size);
	if (!e)
		return -1;
	e->size = (uint32_t)size;
	e->kind = body <= SHARDS_BIG ? SHARDS_RESULT : SHARDS_BIG_RESULT;
	e->key = key;
	e->has_rs = rs != NULL;
	if (e->kind == SHARDS_RESULT) {
		p = (uint8_t *)e + shards_align(sizeof(*e));
	} else {
		p = e->big = malloc(body);
		if (!p) {
			shards_fail(sh);
			return -1;
		}
	}
	if (rs) {
		e->rs = *rs;
		if (frames)
			memcpy(p, rs->frames, frames);
		e->rs.frames = (struct rframe *)p;
		memcpy(p + shards_align(frames), rs->comm, comm_len);
		e->rs.comm = (const char *)p + shards_align(frames);
	}
	e->ev = NULL;
	if (ev) {
		e->ev = (struct event *)(p + at_ev);
		event_copy(e->ev, p + at_ev + shards_align(sizeof(*ev)), ev,
			   copy_flags);
	}
	w->progress_own = key + 1;
	w->fill += e->size;
	return shards_step(sh, w);
}

void shards_progress(struct shards *sh, unsigned index, uint64_t upto)
{
	struct shards_worker *w = &sh->w[index];
	/* (UINT64_MAX, nothing more in this pass, says no more of it) */
	uint64_t key = shards_key(w->pass, MIN(upto, shards_order(UINT64_MAX)));

	if (key <= w->progress_own)
		return;
	w->progress_own = key;
	(void)shards_step(sh, w);   /* a failure shows in shards_stopping() */
}

int shards_end_pass(struct shards *sh, unsigned index)
{
	struct shards_worker *w = &sh->w[index];
	size_t size = shards_align(sizeof(struct shards_entry));
	struct shards_entry *e = shards_reserve(sh, w, size);

	if (!e)
		return -1;
	e->size = (uint32_t)size;
	e->kind = SHARDS_END;
	e->key = shards_key(w->pass, 0);
	w->pass++;
	w->progress_own = shards_key(w->pass, 0);
	w->fill += e->size;
	shards_publish(sh, w);
	return shards_try_merge(sh) < 0 ? -1 : 0;
}

/* ---- which worker takes a thread ---- */

void shards_split_init(struct shards_split *s, unsigned nr)
{
	memset(s, 0, sizeof(*s));
	s->nr = nr;
}

/* Keeps the last answer, for runs of one thread's samples. */
static unsigned shards_split_remember(struct shards_split *s, int32_t tid,
				      unsigned pick)
{
	s->has_last = true;
	s->last_tid = tid;
	s->last_pick = pick;
	return pick;
}

bool shards_split_find(struct shards_split *s, int32_t tid, unsigned *pick)
{
	void *v;

	if (s->has_last && s->last_tid == tid) {
		*pick = s->last_pick;
		return true;
	}
	if (!hashmap_get(&s->tid_worker, (uint64_t)(uint32_t)tid, &v))
		return false;
	*pick = shards_split_remember(s, tid, (unsigned)(uintptr_t)v);
	return true;
}

unsigned shards_split_pick(struct shards_split *s, int32_t tid)
{
	unsigned i, best = 0;

	if (shards_split_find(s, tid, &best))
		return best;
	for (i = 1; i < s->nr; i++)
		if (s->threads[i] < s->threads[best])
			best = i;
	if (hashmap_put(&s->tid_worker, (uint64_t)(uint32_t)tid,
			(void *)(uintptr_t)best) < 0)
		return UINT_MAX;
	s->threads[best]++;
	return shards_split_remember(s, tid, best);
}

void shards_split_release(struct shards_split *s)
{
	hashmap_release(&s->tid_worker);
}

/* ---- running ---- */

static void shards_done(struct shards *sh, struct shards_worker *w, int rc)
{
	if (rc < 0)
		shards_fail(sh);
	/* published before done: the merger finishes on done and empty */
	shards_publish(sh, w);
	atomic_store(&w->done, true);
	shards_changed(sh);
}

static void *shards_thread(void *arg)
{
	struct shards_worker *w = arg;
	struct shards *sh = w->sh;
	char name[16];

	/* "restack/1": what ps -L and perf report call the thread */
	snprintf(name, sizeof(name), "restack/%u", w->index);
	pthread_setname_np(pthread_self(), name);
	shards_done(sh, w, sh->work(sh->work_ctx, w->index));
	return NULL;
}

/*
 * Whether every worker is done and every result emitted.  With
 * merge_lock held.
 */
static bool shards_finished(struct shards *sh)
{
	unsigned i;

	for (i = 0; i < sh->nr; i++)
		if (!atomic_load(&sh->w[i].done) ||
		    shards_head(&sh->w[i], atomic_load(&sh->w[i].tail)))
			return false;
	return true;
}

int shards_run(struct shards *sh, shards_work_fn work, void *ctx,
	       bool *thread_failed)
{
	unsigned i;

	*thread_failed = false;
	sh->work = work;
	sh->work_ctx = ctx;
	for (i = 1; i < sh->nr; i++) {
		if (pthread_create(&sh->w[i].thread, NULL, shards_thread,
				   &sh->w[i]) != 0) {
			*thread_failed = true;
			shards_fail(sh);
			break;
		}
		sh->w[i].started = true;
	}
	if (!*thread_failed)
		shards_done(sh, &sh->w[0], work(ctx, 0));
	while (!shards_stopping(sh)) {
		uint64_t seen = atomic_load(&sh->changes);
		bool finished;
		int rc;

		pthread_mutex_lock(&sh->merge_lock);
		rc = shards_merge(sh);
		finished = rc >= 0 && shards_finished(sh);
		pthread_mutex_unlock(&sh->merge_lock);
		if (rc < 0 || finished)
			break;
		if (rc == 0)
			shards_wait_change(sh, seen);
	}
	for (i = 1; i < sh->nr; i++)
		if (sh->w[i].started)
			pthread_join(sh->w[i].thread, NULL);
	return shards_stopping(sh) ? -1 : 0;
}

struct shards *shards_new(unsigned nr, shards_emit_fn emit, void *emit_ctx)
{
	size_t size = ALIGN_UP(sizeof(struct shards), 64);
	struct shards *sh;
	unsigned i;

	if (nr < 1 || nr > SHARDS_MAX_WORKERS)
		return NULL;
	sh = aligned_alloc(64, size);
	if (!sh)
		return NULL;
	memset(sh, 0, size);
	sh->nr = nr;
	sh->spin = sysconf(_SC_NPROCESSORS_ONLN) >= (long)nr;
	sh->emit = emit;
	sh->emit_ctx = emit_ctx;
	pthread_mutex_init(&sh->merge_lock, NULL);
	pthread_mutex_init(&sh->lock, NULL);
	pthread_cond_init(&sh->changed, NULL);
	for (i = 0; i < nr; i++) {
		struct shards_worker *w = &sh->w[i];

		w->sh = sh;
		w->index = w->windex = i;
		w->ring = w->ring_w = malloc(SHARDS_RING);
		if (!w->ring) {
			shards_free(sh);
			return NULL;
		}
	}
	return sh;
}

void shards_free(struct shards *sh)
{
	unsigned i;

	if (!sh)
		return;
	for (i = 0; i < sh->nr; i++) {
		struct shards_worker *w = &sh->w[i];
		struct shards_entry *e;

		/* what an abandoned run left (the threads are gone) */
		while (w->ring && (e = shards_head(w, w->fill))) {
			if (e->kind == SHARDS_BIG_RESULT)
				free(e->big);
			w->head_own += e->size;
		}
		free(w->ring);
	}
	pthread_cond_destroy(&sh->changed);
	pthread_mutex_destroy(&sh->lock);
	pthread_mutex_destroy(&sh->merge_lock);
	free(sh);
}
