/*
 * pool.c - worker threads over per-worker resolvers (see pool.h).
 *
 * The reading thread copies events into batches, one open batch per
 * worker, and queues a batch when it is full.  A worker resolves a whole
 * batch, writing its samples' results into the batch, then publishes them
 * in a ring indexed by the samples' input sequence numbers.  The reading
 * thread emits the ring in order and recycles a batch once all its results
 * were emitted.  A fixed number of batches bounds everything in flight.
 */
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "common/base.h"
#include "common/hashmap.h"
#include "common/mem.h"
#include "unwind/pool.h"
#include "unwind/shards.h"

#define POOL_BATCH_BYTES (1u << 20)   /* copied event bytes per batch */
#define POOL_BATCH_SAMPLES 1024u       /* samples per batch at most */
#define POOL_BATCHES_PER_WORKER 3u
#define POOL_EMIT_RUN 256u            /* results emitted per unlock */
#define POOL_WARM_STACK 256u          /* stack bytes read ahead per sample */

enum pool_msg_kind {
	POOL_MSG_EVENT,         /* to resolve: struct pool_msg */
	POOL_MSG_SAMPLE,        /* a sample: struct pool_sample_msg */
	POOL_MSG_PASS,          /* a pass begins: struct pool_msg */
};

/* What every message starts with. */
struct pool_hdr {
	uint32_t kind;
	uint32_t size;          /* of the message with payload, aligned */
	bool emit;              /* has a sequence number: hand it out */
	uint64_t seq;           /* its place in the order */
};

/* A copied event; its payload (strings, arrays, stack) follows it. */
struct pool_msg {
	struct pool_hdr h;
	enum resolve_pass pass; /* POOL_MSG_PASS */
	struct event ev;
	struct event_attr attr;
};

/*
 * A sample with only what resolve_event() reads of it (two cache lines
 * for the worker's core to fetch, not nine); the callchain, registers and
 * stack copy follow it unless a source holds the record.
 */
struct pool_sample_msg {
	struct pool_hdr h;
	int32_t pid, tid, cpu;
	uint8_t cpumode;
	bool has_attr;
	unsigned attr_index;
	const char *attr_name;
	uint64_t time, ip, period;
	const uint64_t *callchain;
	uint64_t callchain_nr;
	uint64_t regs_abi, regs_mask;
	const uint64_t *regs;
	unsigned regs_nr;
	const uint8_t *stack;
	uint64_t stack_size, stack_dyn_size;
};

/* A resolved sample, with its frames and thread name following it. */
struct pool_result {
	uint64_t seq;
	bool has;               /* resolve_event() handed out a sample */
	uint32_t size;
	struct rsample rs;
	struct pool_batch *batch;
};

/* Bytes of the source a batch's events point into. */
struct pool_token {
	const struct pool_source *src;
	void *token;
};

struct pool_batch {
	struct pool_batch *next;
	struct pool_token *tokens;  /* released when the batch is reused */
	size_t nr_tokens, alloc_tokens;
	struct pool_batch *all_next; /* every batch, for the release */
	uint8_t *buf;           /* copied messages */
	size_t len, cap;
	unsigned nr_samples;
	uint8_t *out;           /* results */
	size_t out_len, out_cap;
	unsigned pending;       /* results published, not yet emitted */
};

struct pool_worker {
	struct pool *pool;
	unsigned index;
	struct resolve *res;
	struct resolve own;
	bool own_ready;
	pthread_t thread;
	bool started;
	bool running;             /* resolving a batch */
	uint64_t pass_seq0;       /* the pass's first sequence number */
	uint64_t last_deferred;   /* pass ordinal of its last deferred sample */
	volatile uint64_t warm_sum; /* pool_warm_batch()'s, to keep its loads */
	struct pool_batch *queue, **queue_tail;
	pthread_cond_t wake;
	struct pool_batch *open;  /* being filled by the reading thread */
};

struct pool {
	pthread_mutex_t lock;
	pthread_cond_t done;      /* results published, batches freed */
	struct pool_worker w[POOL_MAX_WORKERS];
	unsigned nr;
	struct pool_batch *free_batches;
	struct pool_batch *all_batches;
	unsigned nr_batches, nr_busy;
	struct pool_result **ring;
	size_t ring_size;         /* a power of two */
	uint64_t next_seq;        /* given to the next sample */
	uint64_t next_emit;       /* the next sample to emit */
	bool stop;
	atomic_bool failed;
	pool_emit_fn emit;
	void *emit_ctx;
	struct shards_split split;  /* which worker takes a thread */
};

static size_t pool_align(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/* ---- worker side ---- */

static void *pool_out_reserve(struct pool_batch *b, size_t n)
{
	if (mem_grow(&b->out, &b->out_cap, 1, b->out_len + n) < 0)
		return NULL;
	return b->out + b->out_len;
}

/* Appends the result of one sample to b->out (offsets fixed later). */
static int pool_result_add(struct pool_batch *b, uint64_t seq,
			   const struct rsample *rs)
{
	size_t comm_len = rs && rs->comm ? strlen(rs->comm) + 1 : 0;
	size_t frames = rs ? rs->nr_frames * sizeof(struct rframe) : 0;
	size_t size = pool_align(sizeof(struct pool_result)) +
		      pool_align(frames) + pool_align(comm_len);
	struct pool_result *res = pool_out_reserve(b, size);
	uint8_t *p;

	if (!res)
		return -1;
	memset(res, 0, sizeof(*res));
	res->seq = seq;
	res->size = (uint32_t)size;
	res->batch = b;
	if (rs) {
		res->has = true;
		res->rs = *rs;
		p = (uint8_t *)res + pool_align(sizeof(*res));
		if (frames)
			memcpy(p, rs->frames, frames);
		p += pool_align(frames);
		if (comm_len)
			memcpy(p, rs->comm, comm_len);
	}
	b->out_len += size;
	return 0;
}

/*
 * Reads the registers and the bottom of the stack copy of every sample
 * of the batch, in one burst of independent loads, before resolving any.
 * They sit in pages this core has not touched (the reading thread and
 * the mapper did); one at a time, in the middle of the unwinding, each
 * first access cost about half a microsecond, and prefetching them a few
 * samples ahead did not help (measured on the large bench capture); in a
 * burst the misses overlap.
 */
static uint64_t pool_warm_batch(const struct pool_batch *b)
{
	uint64_t sum = 0;
	size_t off, i;

	for (off = 0; off < b->len;
	     off += ((const struct pool_hdr *)(b->buf + off))->size) {
		const struct pool_sample_msg *m =
			(const struct pool_sample_msg *)(b->buf + off);

		if (m->h.kind != POOL_MSG_SAMPLE)
			continue;
		/* a byte a line: records need not be aligned (pipe mode) */
		for (i = 0; m->regs && i < m->regs_nr * 8; i += 64)
			sum += ((const volatile uint8_t *)m->regs)[i];
		for (i = 0; m->stack &&
			    i < MIN(m->stack_dyn_size, POOL_WARM_STACK);
		     i += 64)
			sum += ((const volatile uint8_t *)m->stack)[i];
	}
	return sum;
}

/* The event (and its attribute) a sample message stands for. */
static void pool_unpack_sample(const struct pool_sample_msg *m,
			       struct event *ev, struct event_attr *attr)
{
	struct event_sample *s = &ev->sample;

	memset(ev, 0, sizeof(*ev));
	ev->type = EVENT_SAMPLE;
	ev->pid = m->pid;
	ev->tid = m->tid;
	ev->cpu = m->cpu;
	ev->time = m->time;
	if (m->has_attr) {
		memset(attr, 0, sizeof(*attr));
		attr->index = m->attr_index;
		attr->name = m->attr_name;
		ev->attr = attr;
	}
	s->cpumode = m->cpumode;
	s->ip = m->ip;
	s->period = m->period;
	s->callchain = m->callchain;
	s->callchain_nr = m->callchain_nr;
	s->regs_user_abi = m->regs_abi;
	s->regs_user_mask = m->regs_mask;
	s->regs_user = m->regs;
	s->regs_user_nr = m->regs_nr;
	s->stack = m->stack;
	s->stack_size = m->stack_size;
	s->stack_dyn_size = m->stack_dyn_size;
}

/* Resolves every message of b into b->out; returns 0 or -1 (memory). */
static int pool_run_batch(struct pool_worker *w, struct pool_batch *b)
{
	size_t off = 0, deferred;
	struct rsample rs;
	int rc;

	b->out_len = 0;
	w->warm_sum = pool_warm_batch(b);   /* keeps the loads */
	while (off < b->len) {
		struct pool_hdr *h = (struct pool_hdr *)(b->buf + off);
		struct pool_msg *m = (struct pool_msg *)h;
		const struct event *ev = &m->ev;
		struct event_attr attr;
		struct event sample;

		off += h->size;
		if (h->kind == POOL_MSG_PASS) {
			resolve_begin_pass(w->res, m->pass);
			w->pass_seq0 = h->seq;
			w->last_deferred = 0;
			continue;
		}
		if (h->kind == POOL_MSG_SAMPLE) {
			pool_unpack_sample((const struct pool_sample_msg *)h,
					   &sample, &attr);
			ev = &sample;
		}
		deferred = resolve_nr_deferred(w->res);
		rc = resolve_event(w->res, ev, &rs);
		if (rc < 0)
			return -1;
		if (resolve_nr_deferred(w->res) != deferred)
			w->last_deferred = h->seq - w->pass_seq0 + 1;
		if (h->emit &&
		    pool_result_add(b, h->seq, rc > 0 ? &rs : NULL) < 0)
			return -1;
	}
	return 0;
}

static void pool_batch_free_locked(struct pool *p, struct pool_batch *b)
{
	b->len = 0;
	b->nr_samples = 0;
	b->pending = 0;
	b->next = p->free_batches;
	p->free_batches = b;
	p->nr_busy--;
	pthread_cond_broadcast(&p->done);
}

/* Makes b's results visible to the reading thread. */
static void pool_publish_locked(struct pool *p, struct pool_batch *b)
{
	size_t off = 0;
	unsigned n = 0;

	while (off < b->out_len) {
		struct pool_result *res = (struct pool_result *)(b->out + off);
		uint8_t *q = (uint8_t *)res + pool_align(sizeof(*res));

		off += res->size;
		if (res->has) {
			res->rs.frames = (struct rframe *)q;
			q += pool_align(res->rs.nr_frames *
					sizeof(struct rframe));
			res->rs.comm = res->rs.comm ? (const char *)q : "";
		}
		p->ring[res->seq & (p->ring_size - 1)] = res;
		n++;
	}
	b->pending = n;
	if (!n)
		pool_batch_free_locked(p, b);
	else
		pthread_cond_broadcast(&p->done);
}

static void *pool_worker_main(void *arg)
{
	struct pool_worker *w = arg;
	struct pool *p = w->pool;
	struct pool_batch *b;
	int rc;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		while (!w->queue && !p->stop)
			pthread_cond_wait(&w->wake, &p->lock);
		if (!w->queue)
			break;
		b = w->queue;
		w->queue = b->next;
		if (!w->queue)
			w->queue_tail = &w->queue;
		w->running = true;
		pthread_mutex_unlock(&p->lock);
		rc = p->failed ? -1 : pool_run_batch(w, b);
		pthread_mutex_lock(&p->lock);
		w->running = false;
		if (rc < 0) {
			p->failed = true;
			pool_batch_free_locked(p, b);
			continue;
		}
		pool_publish_locked(p, b);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* ---- reading side ---- */

/*
 * Emits every published result in order; called with the lock held, which
 * it drops while emitting runs of up to POOL_EMIT_RUN results.
 */
static void pool_emit_ready_locked(struct pool *p)
{
	struct pool_result *run[POOL_EMIT_RUN];
	unsigned n, i;

	for (;;) {
		for (n = 0; n < POOL_EMIT_RUN && p->next_emit != p->next_seq;
		     n++) {
			size_t slot = p->next_emit & (p->ring_size - 1);
			struct pool_result *res = p->ring[slot];

			if (!res || res->seq != p->next_emit)
				break;
			p->ring[slot] = NULL;
			p->next_emit++;
			run[n] = res;
		}
		if (!n)
			return;
		pthread_mutex_unlock(&p->lock);
		for (i = 0; i < n; i++)
			if (run[i]->has && !p->failed &&
			    p->emit(p->emit_ctx, &run[i]->rs) < 0)
				p->failed = true;
		pthread_mutex_lock(&p->lock);
		for (i = 0; i < n; i++) {
			struct pool_batch *b = run[i]->batch;

			if (--b->pending == 0)
				pool_batch_free_locked(p, b);
		}
	}
}

static void pool_queue_locked(struct pool *p, struct pool_worker *w)
{
	struct pool_batch *b = w->open;

	w->open = NULL;
	b->next = NULL;
	*w->queue_tail = b;
	w->queue_tail = &b->next;
	pthread_cond_signal(&w->wake);
	(void)p;
}

/* Queues every open batch that holds something. */
static void pool_flush_locked(struct pool *p)
{
	unsigned i;

	for (i = 0; i < p->nr; i++)
		if (p->w[i].open && p->w[i].open->len)
			pool_queue_locked(p, &p->w[i]);
}

/* Gives back what b's events pointed into (the reading thread only). */
static void pool_release_tokens(struct pool_batch *b)
{
	size_t i;

	for (i = 0; i < b->nr_tokens; i++)
		b->tokens[i].src->release(b->tokens[i].src->ctx,
					  b->tokens[i].token);
	b->nr_tokens = 0;
}

/* An empty batch for worker w with room for need bytes, or NULL. */
static struct pool_batch *pool_get_batch(struct pool *p, size_t need)
{
	struct pool_batch *b;

	pthread_mutex_lock(&p->lock);
	while (!p->free_batches && !p->failed) {
		pool_flush_locked(p);
		pool_emit_ready_locked(p);
		if (!p->free_batches && !p->failed)
			pthread_cond_wait(&p->done, &p->lock);
	}
	b = p->failed ? NULL : p->free_batches;
	if (b) {
		p->free_batches = b->next;
		p->nr_busy++;
	}
	pthread_mutex_unlock(&p->lock);
	if (b)
		pool_release_tokens(b);
	if (b && need > b->cap) {
		uint8_t *nb = realloc(b->buf, need);

		if (!nb) {
			pthread_mutex_lock(&p->lock);
			p->failed = true;
			pool_batch_free_locked(p, b);
			pthread_mutex_unlock(&p->lock);
			return NULL;
		}
		b->buf = nb;
		b->cap = need;
	}
	return b;
}

/* How to copy an event into a batch. */
struct pool_copy_how {
	enum pool_msg_kind kind;
	bool emit;              /* give it a sequence number */
	bool kept;              /* a source holds its record's bytes */
};

/* Whether [p, p + len) lies in ev's record bytes (which a source holds). */
static bool pool_in_record(const struct event *ev, const void *p, size_t len)
{
	const uint8_t *b = p;

	return !len || (ev->raw && b >= ev->raw && len <= ev->raw_len &&
			(size_t)(b - ev->raw) <= ev->raw_len - len);
}

static size_t pool_str_size(const char *s)
{
	return s ? pool_align(strlen(s) + 1) : 0;
}

/*
 * Bytes a copy of ev takes, message header included: the bytes of the
 * record (stack copy, raw payload, the record itself) only when no source
 * holds them.
 */
static size_t pool_event_size(const struct event *ev,
			      const struct pool_copy_how *how)
{
	const struct event_sample *s = &ev->sample;
	size_t n = pool_align(sizeof(struct pool_msg));

	switch (ev->type) {
	case EVENT_SAMPLE:
		n = pool_align(sizeof(struct pool_sample_msg));
		if (!how->kept ||
		    !pool_in_record(ev, s->callchain, s->callchain_nr * 8))
			n += pool_align(s->callchain_nr * 8);
		if (!how->kept ||
		    !pool_in_record(ev, s->regs_user, s->regs_user_nr * 8))
			n += pool_align(s->regs_user_nr * 8);
		if (!how->kept)
			n += pool_align(MIN(s->stack_dyn_size,
					    s->stack_size));
		break;
	case EVENT_MMAP:
		n += pool_str_size(ev->mmap.filename);
		break;
	case EVENT_COMM:
		n += pool_str_size(ev->comm.comm);
		break;
	case EVENT_BUILD_ID:
		n += pool_str_size(ev->build_id.filename);
		break;
	case EVENT_JIT:
		n += pool_str_size(ev->jit.name);
		break;
	default:
		break;
	}
	return n;
}

static void *pool_copy(uint8_t **at, const void *src, size_t len)
{
	void *dst = *at;

	if (len)
		memcpy(dst, src, len);
	*at += pool_align(len);
	return dst;
}

static const char *pool_copy_str(uint8_t **at, const char *s)
{
	return s ? pool_copy(at, s, strlen(s) + 1) : NULL;
}

/* Copies sample ev into b at b->len (the room was checked). */
static void pool_copy_sample(struct pool_batch *b, const struct event *ev,
			     uint64_t seq, size_t size,
			     const struct pool_copy_how *how)
{
	struct pool_sample_msg *m =
		(struct pool_sample_msg *)(b->buf + b->len);
	uint8_t *at = (uint8_t *)m + pool_align(sizeof(*m));
	const struct event_sample *s = &ev->sample;

	memset(m, 0, sizeof(*m));
	m->h.kind = POOL_MSG_SAMPLE;
	m->h.emit = how->emit;
	m->h.size = (uint32_t)size;
	m->h.seq = seq;
	m->pid = ev->pid;
	m->tid = ev->tid;
	m->cpu = ev->cpu;
	m->time = ev->time;
	if (ev->attr) {
		m->has_attr = true;
		m->attr_index = ev->attr->index;
		m->attr_name = ev->attr->name;
	}
	m->cpumode = s->cpumode;
	m->ip = s->ip;
	m->period = s->period;
	m->callchain = s->callchain;
	m->callchain_nr = s->callchain_nr;
	m->regs_abi = s->regs_user_abi;
	m->regs_mask = s->regs_user_mask;
	m->regs = s->regs_user;
	m->regs_nr = s->regs_user_nr;
	m->stack = s->stack;
	m->stack_size = s->stack_size;
	m->stack_dyn_size = s->stack_dyn_size;
	/* arrays in the record stay there when it is kept */
	if (!how->kept ||
	    !pool_in_record(ev, s->callchain, s->callchain_nr * 8))
		m->callchain = pool_copy(&at, s->callchain,
					 s->callchain_nr * 8);
	if (!how->kept ||
	    !pool_in_record(ev, s->regs_user, s->regs_user_nr * 8))
		m->regs = pool_copy(&at, s->regs_user, s->regs_user_nr * 8);
	if (!how->kept)
		m->stack = pool_copy(&at, s->stack,
				     MIN(s->stack_dyn_size, s->stack_size));
	b->len += size;
}

/* Copies ev (not a sample) into b at b->len (the room was checked). */
static void pool_copy_event(struct pool_batch *b, const struct event *ev,
			    uint64_t seq, size_t size,
			    const struct pool_copy_how *how)
{
	struct pool_msg *m = (struct pool_msg *)(b->buf + b->len);
	uint8_t *at = (uint8_t *)m + pool_align(sizeof(*m));

	memset(m, 0, sizeof(*m));
	m->h.kind = how->kind;
	m->h.emit = how->emit;
	m->h.size = (uint32_t)size;
	m->h.seq = seq;
	m->ev = *ev;
	m->ev.raw = NULL;
	m->ev.raw_len = 0;
	if (ev->attr) {
		m->attr = *ev->attr;
		m->ev.attr = &m->attr;
	}
	switch (ev->type) {
	case EVENT_MMAP:
		m->ev.mmap.filename = pool_copy_str(&at, ev->mmap.filename);
		break;
	case EVENT_COMM:
		m->ev.comm.comm = pool_copy_str(&at, ev->comm.comm);
		break;
	case EVENT_BUILD_ID:
		m->ev.build_id.filename =
			pool_copy_str(&at, ev->build_id.filename);
		break;
	case EVENT_JIT:
		m->ev.jit.name = pool_copy_str(&at, ev->jit.name);
		break;
	default:
		break;
	}
	b->len += size;
}

/* Room for size bytes in worker w's open batch; false on failure. */
static bool pool_room(struct pool *p, struct pool_worker *w, size_t size,
		      bool sample)
{
	struct pool_batch *b = w->open;

	if (b && (b->len + size > b->cap ||
		  (sample && b->nr_samples >= POOL_BATCH_SAMPLES))) {
		pthread_mutex_lock(&p->lock);
		pool_queue_locked(p, w);
		pool_emit_ready_locked(p);
		pthread_mutex_unlock(&p->lock);
		b = NULL;
	}
	if (!b) {
		b = pool_get_batch(p, MAX(size, (size_t)POOL_BATCH_BYTES));
		if (!b)
			return false;
		w->open = b;
	}
	return true;
}

/* Keeps the bytes of event ev for batch b; false: copy them. */
static bool pool_keep(struct pool_batch *b, const struct pool_source *src)
{
	void *token;

	if (!src || mem_grow(&b->tokens, &b->alloc_tokens, sizeof(*b->tokens),
			     b->nr_tokens + 1) < 0)
		return false;
	token = src->hold(src->ctx);
	if (!token)
		return false;
	b->tokens[b->nr_tokens].src = src;
	b->tokens[b->nr_tokens++].token = token;
	return true;
}

/*
 * Queues a copy of ev for worker w (as a sample when sample is set),
 * keeping its bytes through src when it can.
 */
static int pool_send(struct pool *p, struct pool_worker *w,
		     const struct event *ev, const struct pool_source *src,
		     struct pool_copy_how *how, bool sample)
{
	uint64_t seq = how->emit ? p->next_seq : 0;
	size_t size;

	how->kept = false;
	/* room for a copy, in case the bytes cannot be kept */
	if (!pool_room(p, w, pool_event_size(ev, how), sample))
		return -1;
	if (src && sample)
		how->kept = pool_keep(w->open, src);
	size = pool_event_size(ev, how);
	if (ev->type == EVENT_SAMPLE)
		pool_copy_sample(w->open, ev, seq, size, how);
	else
		pool_copy_event(w->open, ev, seq, size, how);
	if (how->emit)
		p->next_seq++;
	if (sample)
		w->open->nr_samples++;
	return 0;
}

int pool_event(struct pool *p, const struct event *ev,
	       const struct pool_source *src)
{
	struct pool_copy_how how = { POOL_MSG_EVENT, false, false };
	unsigned i;

	if (p->failed)
		return -1;
	if (ev->type == EVENT_SAMPLE) {
		unsigned wi = shards_split_pick(&p->split, ev->tid);

		if (wi == UINT_MAX) {
			p->failed = true;
			return -1;
		}
		how.emit = true;
		return pool_send(p, &p->w[wi], ev, src, &how, true);
	}
	/* every worker */
	for (i = 0; i < p->nr; i++) {
		if (pool_send(p, &p->w[i], ev, src, &how, false) < 0)
			return -1;
	}
	return 0;
}

int pool_begin_pass(struct pool *p, enum resolve_pass pass)
{
	size_t size = pool_align(sizeof(struct pool_msg));
	unsigned i;

	for (i = 0; i < p->nr; i++) {
		struct pool_msg *m;

		if (!pool_room(p, &p->w[i], size, false))
			return -1;
		m = (struct pool_msg *)(p->w[i].open->buf + p->w[i].open->len);
		memset(m, 0, sizeof(*m));
		m->h.kind = POOL_MSG_PASS;
		m->h.size = (uint32_t)size;
		m->pass = pass;
		m->h.seq = p->next_seq;
		p->w[i].open->len += size;
	}
	return 0;
}

/* Whether no worker has or does anything; called with the lock held. */
static bool pool_idle_locked(const struct pool *p)
{
	unsigned i;

	for (i = 0; i < p->nr; i++)
		if (p->w[i].queue || p->w[i].running)
			return false;
	return true;
}

int pool_drain(struct pool *p)
{
	struct pool_batch *b;
	unsigned i;

	pthread_mutex_lock(&p->lock);
	for (i = 0; i < p->nr; i++) {
		b = p->w[i].open;
		if (b && !b->len) {
			/* an empty open batch: give it back */
			p->w[i].open = NULL;
			pool_batch_free_locked(p, b);
		}
	}
	pool_flush_locked(p);
	for (;;) {
		pool_emit_ready_locked(p);
		if (p->failed ? pool_idle_locked(p) : p->nr_busy == 0)
			break;
		pthread_cond_wait(&p->done, &p->lock);
	}
	pthread_mutex_unlock(&p->lock);
	/* the workers are idle: every batch's tokens can go back */
	for (b = p->all_batches; b; b = b->all_next)
		pool_release_tokens(b);
	return p->failed ? -1 : 0;
}

size_t pool_nr_deferred(struct pool *p)
{
	size_t n = 0;
	unsigned i;

	for (i = 0; i < p->nr; i++)
		n += resolve_nr_deferred(p->w[i].res);
	return n;
}

uint64_t pool_last_deferred(struct pool *p)
{
	uint64_t last = 0;
	unsigned i;

	for (i = 0; i < p->nr; i++)
		last = MAX(last, p->w[i].last_deferred);
	return last;
}

static void pool_release(struct pool *p)
{
	struct pool_batch *b, *next;
	unsigned i;

	for (b = p->all_batches; b; b = next) {
		next = b->all_next;
		free(b->buf);
		free(b->out);
		free(b->tokens);
		free(b);
	}
	for (i = 0; i < p->nr; i++) {
		if (p->w[i].own_ready)
			resolve_release(&p->w[i].own);
		pthread_cond_destroy(&p->w[i].wake);
	}
	pthread_cond_destroy(&p->done);
	pthread_mutex_destroy(&p->lock);
	shards_split_release(&p->split);
	free(p->ring);
	free(p);
}

/* Stops and joins the workers (their queues must be empty or abandoned). */
static void pool_stop(struct pool *p)
{
	unsigned i;

	pthread_mutex_lock(&p->lock);
	p->stop = true;
	for (i = 0; i < p->nr; i++)
		pthread_cond_signal(&p->w[i].wake);
	pthread_mutex_unlock(&p->lock);
	for (i = 0; i < p->nr; i++)
		if (p->w[i].started)
			pthread_join(p->w[i].thread, NULL);
}

struct pool *pool_start(unsigned nr, struct resolve *first, pool_init_fn init,
			void *init_ctx, pool_emit_fn emit, void *emit_ctx,
			struct err *err)
{
	struct pool *p;
	unsigned i, nr_batches;
	size_t in_flight;

	if (nr < 2 || nr > POOL_MAX_WORKERS) {
		err_set(err, ERR_USAGE, ERR_NO_OFF, "bad number of workers");
		return NULL;
	}
	p = mem_zalloc(1, sizeof(*p));
	if (!p)
		goto oom;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->done, NULL);
	p->nr = nr;
	shards_split_init(&p->split, nr);
	p->emit = emit;
	p->emit_ctx = emit_ctx;
	nr_batches = nr * POOL_BATCHES_PER_WORKER;
	in_flight = (size_t)nr_batches * POOL_BATCH_SAMPLES;
	for (p->ring_size = 1; p->ring_size < in_flight; p->ring_size <<= 1)
		;
	p->ring = mem_zalloc(p->ring_size, sizeof(*p->ring));
	if (!p->ring)
		goto oom_free;
	for (i = 0; i < nr_batches; i++) {
		struct pool_batch *b = mem_zalloc(1, sizeof(*b));

		if (!b)
			goto oom_free;
		b->all_next = p->all_batches;
		p->all_batches = b;
		b->next = p->free_batches;
		p->free_batches = b;
	}
	p->nr_batches = nr_batches;
	for (i = 0; i < nr; i++) {
		struct pool_worker *w = &p->w[i];

		w->pool = p;
		w->index = i;
		w->queue_tail = &w->queue;
		pthread_cond_init(&w->wake, NULL);
		if (i == 0) {
			w->res = first;
			continue;
		}
		if (init(init_ctx, i, &w->own, err) < 0) {
			/* a half set-up resolver is released too */
			w->own_ready = true;
			goto fail;
		}
		w->own_ready = true;
		w->res = &w->own;
	}
	for (i = 0; i < nr; i++) {
		if (pthread_create(&p->w[i].thread, NULL, pool_worker_main,
				   &p->w[i]) != 0) {
			err_set(err, ERR_NOMEM, ERR_NO_OFF,
				"cannot start a worker thread");
			goto fail;
		}
		p->w[i].started = true;
	}
	return p;
oom_free:
	err_set(err, ERR_NOMEM, ERR_NO_OFF, "worker pool");
fail:
	if (p) {
		pool_stop(p);
		pool_release(p);
	}
	return NULL;
oom:
	err_set(err, ERR_NOMEM, ERR_NO_OFF, "worker pool");
	return NULL;
}

int pool_finish(struct pool *p, uint64_t *worker_samples)
{
	int rc = pool_drain(p);
	unsigned i;

	pool_stop(p);
	for (i = 0; worker_samples && i < p->nr; i++)
		worker_samples[i] = p->w[i].res->stats.samples;
	for (i = 1; i < p->nr; i++)
		if (resolve_add_counts(p->w[0].res, p->w[i].res) < 0)
			rc = -1;
	pool_release(p);
	return rc;
}
