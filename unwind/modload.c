/*
 * modload.c - modules loaded on a thread of their own (see modload.h).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/base.h"
#include "common/mem.h"
#include "unwind/a2l.h"
#include "unwind/cfi.h"
#include "unwind/modload.h"
#include "unwind/symtab.h"

/* How often a waiting sample asks whether the input's queue is full. */
#define MODLOAD_POLL_MS 5

/* Threads: one slow download does not hold up the modules after it. */
#define MODLOAD_THREADS 4

struct modload {
	struct modcache *mc;
	struct modload_opts opts;
	struct module *first, **tail;   /* the queue, by load_next */
	unsigned busy;                  /* given and not done */
	bool stop;
	pthread_mutex_t lock;
	pthread_cond_t work;            /* a module came, or stop */
	pthread_cond_t done;            /* a module is done */
	pthread_t threads[MODLOAD_THREADS];
	unsigned nr_threads;
	/* RESTACK_TEST_SLOW_LOAD */
	char *slow_text;
	unsigned slow_ms;
};

static void modload_sleep_ms(unsigned ms)
{
	struct timespec t = { ms / 1000, (long)(ms % 1000) * 1000000 };

	while (nanosleep(&t, &t) < 0 && errno == EINTR)
		;
}

/* What naming and unwinding m's frames read first, read now. */
static void modload_prepare(struct modload *l, struct module *m)
{
	symtab_load(m);
	cfi_prepare(m);
	if (l->opts.inline_names && m->path[0] != '[')
		a2l_prepare(m);
}

static void *modload_main(void *arg)
{
	struct modload *l = arg;

	for (;;) {
		enum module_status st;
		struct module *m;

		pthread_mutex_lock(&l->lock);
		while (!l->first && !l->stop)
			pthread_cond_wait(&l->work, &l->lock);
		m = l->first;
		if (!m) {
			pthread_mutex_unlock(&l->lock);
			return NULL;
		}
		l->first = m->load_next;
		if (!l->first)
			l->tail = &l->first;
		pthread_mutex_unlock(&l->lock);

		if (l->slow_text && strstr(m->path, l->slow_text))
			modload_sleep_ms(l->slow_ms);
		st = module_lookup(l->mc, m);
		if (st == MODULE_OK || st == MODULE_UNVERIFIED)
			modload_prepare(l, m);

		pthread_mutex_lock(&l->lock);
		m->load_status = (uint8_t)st;
		m->load_done = true;
		l->busy--;
		pthread_cond_broadcast(&l->done);
		pthread_mutex_unlock(&l->lock);
	}
}

/* RESTACK_TEST_SLOW_LOAD=TEXT:MS, when set and well formed. */
static void modload_test_hook(struct modload *l)
{
	const char *v = getenv("RESTACK_TEST_SLOW_LOAD");
	const char *colon = v ? strrchr(v, ':') : NULL;
	char *end;
	unsigned long ms;

	if (!colon || colon == v)
		return;
	ms = strtoul(colon + 1, &end, 10);
	if (*end || end == colon + 1 || ms > 600000)
		return;
	l->slow_text = mem_zalloc(1, (size_t)(colon - v) + 1);
	if (!l->slow_text)
		return;
	memcpy(l->slow_text, v, (size_t)(colon - v));
	l->slow_ms = (unsigned)ms;
}

/* Stops and joins the threads started; frees l. */
static void modload_free(struct modload *l)
{
	unsigned i;

	pthread_mutex_lock(&l->lock);
	l->stop = true;
	pthread_cond_broadcast(&l->work);
	pthread_mutex_unlock(&l->lock);
	for (i = 0; i < l->nr_threads; i++)
		pthread_join(l->threads[i], NULL);
	pthread_mutex_destroy(&l->lock);
	pthread_cond_destroy(&l->work);
	pthread_cond_destroy(&l->done);
	free(l->slow_text);
	free(l);
}

struct modload *modload_start(struct modcache *mc,
			      const struct modload_opts *opts, struct err *err)
{
	struct modload *l = mem_zalloc(1, sizeof(*l));
	unsigned want = opts->threads ? MIN(opts->threads, MODLOAD_THREADS) :
					MODLOAD_THREADS;
	sigset_t all, old;

	if (!l) {
		err_set(err, ERR_NOMEM, ERR_NO_OFF, "module loader");
		return NULL;
	}
	l->mc = mc;
	l->opts = *opts;
	l->tail = &l->first;
	modload_test_hook(l);
	pthread_mutex_init(&l->lock, NULL);
	pthread_cond_init(&l->work, NULL);
	pthread_cond_init(&l->done, NULL);
	/* signals go to the threads that handle them */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	while (l->nr_threads < want &&
	       !pthread_create(&l->threads[l->nr_threads], NULL,
			       modload_main, l))
		l->nr_threads++;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!l->nr_threads) {
		modload_free(l);
		err_set(err, ERR_NOMEM, ERR_NO_OFF,
			"cannot start the module loader's threads");
		return NULL;
	}
	mc->loader = l;
	return l;
}

void modload_stop(struct modload *l)
{
	if (!l)
		return;
	modcache_settle(l->mc);
	l->mc->loader = NULL;
	modload_free(l);
}

uint64_t modload_missed(const struct modload *l)
{
	return l->mc->missed;
}

void modload_queue(struct modload *l, struct module *m)
{
	pthread_mutex_lock(&l->lock);
	m->load_next = NULL;
	m->load_done = false;
	*l->tail = m;
	l->tail = &m->load_next;
	l->busy++;
	pthread_cond_signal(&l->work);
	pthread_mutex_unlock(&l->lock);
}

/* The time ms from now, for pthread_cond_timedwait(). */
static struct timespec modload_deadline(unsigned ms)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	t.tv_nsec += (long)ms * 1000000;
	while (t.tv_nsec >= 1000000000) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000;
	}
	return t;
}

bool modload_wait(struct modload *l, struct module *m)
{
	pthread_mutex_lock(&l->lock);
	while (!m->load_done) {
		struct timespec until;

		pthread_mutex_unlock(&l->lock);
		if (l->opts.full && l->opts.full(l->opts.ctx))
			return false;
		until = modload_deadline(MODLOAD_POLL_MS);
		pthread_mutex_lock(&l->lock);
		if (!m->load_done)
			pthread_cond_timedwait(&l->done, &l->lock, &until);
	}
	pthread_mutex_unlock(&l->lock);
	return true;
}

void modload_drain(struct modload *l)
{
	pthread_mutex_lock(&l->lock);
	while (l->busy)
		pthread_cond_wait(&l->done, &l->lock);
	pthread_mutex_unlock(&l->lock);
}
