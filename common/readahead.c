/*
 * readahead.c - a stream read ahead by a thread (see readahead.h).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/readahead.h"

#define RA_POLL_MS 100
#define RA_CHUNK (64u << 10)

struct readahead_chunk {
	struct readahead_chunk *next;
	size_t off, len;        /* bytes data[off..len) are unread */
	uint8_t data[RA_CHUNK];
};

/* The thread's end: a read error or the end of the stream. */
static void readahead_end(struct readahead *ra, long long got,
			  const struct err *err)
{
	pthread_mutex_lock(&ra->lock);
	ra->eof = got == 0;
	ra->failed = got != 0;
	if (got != 0)
		ra->err = *err;
	pthread_cond_broadcast(&ra->more);
	pthread_mutex_unlock(&ra->lock);
}

/* No room for another chunk (one always fits); called with the lock. */
static bool readahead_full_locked(const struct readahead *ra)
{
	return ra->chunks && (ra->chunks + 1) * RA_CHUNK > ra->cap;
}

static void *readahead_main(void *arg)
{
	struct readahead *ra = arg;
	struct err err;

	for (;;) {
		struct readahead_chunk *c;
		bool stop;
		long long got;

		pthread_mutex_lock(&ra->lock);
		/* a chunk counts whole, however little a read put in it */
		while (!ra->stop && readahead_full_locked(ra))
			pthread_cond_wait(&ra->room, &ra->lock);
		stop = ra->stop;
		pthread_mutex_unlock(&ra->lock);
		if (stop)
			return NULL;
		/* bounded waits, so that a stop is seen */
		if (!input_has_peeked(ra->in)) {
			struct pollfd p = { .fd = ra->in->fd,
					    .events = POLLIN };

			if (poll(&p, 1, RA_POLL_MS) == 0)
				continue;
		}
		/* a chunk read before, else a new one */
		pthread_mutex_lock(&ra->lock);
		c = ra->spare;
		if (c)
			ra->spare = c->next;
		pthread_mutex_unlock(&ra->lock);
		if (!c)
			c = malloc(sizeof(*c));
		if (!c) {
			err_set(&err, ERR_NOMEM, ERR_NO_OFF, "read-ahead");
			readahead_end(ra, -1, &err);
			return NULL;
		}
		got = input_read_some(ra->in, c->data, RA_CHUNK, &err);
		if (got <= 0) {
			free(c);        /* the spare list's are freed at stop */
			readahead_end(ra, got, &err);
			return NULL;
		}
		c->next = NULL;
		c->off = 0;
		c->len = (size_t)got;
		pthread_mutex_lock(&ra->lock);
		if (ra->last)
			ra->last->next = c;
		else
			ra->first = c;
		ra->last = c;
		ra->chunks++;
		ra->len += c->len;
		if (ra->len > ra->peak)
			ra->peak = ra->len;
		pthread_cond_broadcast(&ra->more);
		pthread_mutex_unlock(&ra->lock);
	}
}

int readahead_start(struct readahead *ra, struct input *in, size_t cap,
		    struct err *err)
{
	sigset_t all, old;
	int rc;

	memset(ra, 0, sizeof(*ra));
	ra->in = in;
	ra->cap = cap;
	pthread_mutex_init(&ra->lock, NULL);
	pthread_cond_init(&ra->more, NULL);
	pthread_cond_init(&ra->room, NULL);
	ra->ready = true;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&ra->thread, NULL, readahead_main, ra);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		readahead_stop(ra);
		return err_set(err, ERR_NOMEM, ERR_NO_OFF,
			       "cannot start the read-ahead thread");
	}
	ra->started = true;
	return 0;
}

/* The time timeout_ms from now, for pthread_cond_timedwait(). */
static struct timespec readahead_deadline(int timeout_ms)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	t.tv_sec += timeout_ms / 1000;
	t.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
	if (t.tv_nsec >= 1000000000) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000;
	}
	return t;
}

long long readahead_read(struct readahead *ra, void *buf, size_t len,
			 int timeout_ms, struct err *err)
{
	struct timespec until = readahead_deadline(timeout_ms > 0 ?
						   timeout_ms : 0);
	size_t done = 0;
	bool failed;

	pthread_mutex_lock(&ra->lock);
	while (!ra->len && !ra->eof && !ra->failed) {
		if (timeout_ms < 0) {
			pthread_cond_wait(&ra->more, &ra->lock);
		} else if (timeout_ms == 0 ||
			   pthread_cond_timedwait(&ra->more, &ra->lock,
						  &until) == ETIMEDOUT) {
			pthread_mutex_unlock(&ra->lock);
			return -2;
		}
	}
	while (done < len && ra->first) {
		struct readahead_chunk *c = ra->first;
		size_t n = c->len - c->off;

		if (n > len - done)
			n = len - done;
		memcpy((uint8_t *)buf + done, c->data + c->off, n);
		c->off += n;
		done += n;
		ra->len -= n;
		if (c->off == c->len) {
			ra->first = c->next;
			if (!ra->first)
				ra->last = NULL;
			ra->chunks--;
			c->next = ra->spare;    /* for the thread's next read */
			ra->spare = c;
		}
	}
	failed = !done && ra->failed;
	if (failed)
		*err = ra->err;
	pthread_cond_signal(&ra->room);
	pthread_mutex_unlock(&ra->lock);
	return done ? (long long)done : failed ? -1 : 0;
}

bool readahead_full(struct readahead *ra)
{
	bool full;

	if (!ra->started)
		return false;
	pthread_mutex_lock(&ra->lock);
	full = !ra->eof && !ra->failed && readahead_full_locked(ra);
	pthread_mutex_unlock(&ra->lock);
	return full;
}

void readahead_stop(struct readahead *ra)
{
	if (!ra->ready)
		return;
	if (ra->started) {
		pthread_mutex_lock(&ra->lock);
		ra->stop = true;
		pthread_cond_broadcast(&ra->room);
		pthread_mutex_unlock(&ra->lock);
		pthread_join(ra->thread, NULL);
		ra->started = false;
	}
	while (ra->first) {
		struct readahead_chunk *c = ra->first;

		ra->first = c->next;
		free(c);
	}
	while (ra->spare) {
		struct readahead_chunk *c = ra->spare;

		ra->spare = c->next;
		free(c);
	}
	ra->last = NULL;
	pthread_mutex_destroy(&ra->lock);
	pthread_cond_destroy(&ra->more);
	pthread_cond_destroy(&ra->room);
	ra->ready = false;
}
