/*
 * gzpar.c - a gzip file compressed on two cores (see gzpar.h).
 *
 * Block s of the text lives in ring slot s % GZPAR_RING from when the
 * caller hands it over (FILLED) until it is written (FREE again).  The
 * thread and the caller take the oldest FILLED block (BUSY), deflate it
 * (DONE); only the caller writes, in block order.  The lock guards the
 * states and the counters; a block's text and output belong to whoever
 * holds it BUSY, or to the caller in the other states.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "formats/fdout.h"
#include "formats/gzpar.h"

#include "common/base.h"
#include "common/mem.h"

#define GZPAR_RING 4
#define GZPAR_DICT 32768      /* deflate's window */

enum gzpar_state { GZPAR_FREE, GZPAR_FILLED, GZPAR_BUSY, GZPAR_DONE };

struct gzpar_block {
	struct strbuf in;
	unsigned char dict[GZPAR_DICT];  /* the text before it */
	unsigned dict_len;
	unsigned char *out;
	size_t out_len, out_alloc;
	uint32_t crc;            /* of in */
	bool last;
	bool failed;             /* out of memory, or zlib refused */
	enum gzpar_state state;
};

struct gzpar {
	int fd;
	const char *what;
	struct err *err;
	int rc;
	pthread_mutex_t lock;
	pthread_cond_t cond;     /* a state changed, or stop */
	pthread_t thread;
	bool threaded, stop;
	z_stream z_caller, z_thread;
	bool z_caller_ok, z_thread_ok;
	struct gzpar_block blk[GZPAR_RING];
	uint64_t filled, written; /* blocks handed over, blocks written */
	unsigned char tail[GZPAR_DICT]; /* the text's last bytes so far */
	unsigned tail_len;
	uint32_t crc;
	uint64_t isize;
};

/* Deflates b with z (raw deflate, level 1), b's dictionary first. */
static void gzpar_deflate(z_stream *z, struct gzpar_block *b)
{
	size_t want = deflateBound(z, (uLong)b->in.len) + 64;
	int rc;

	b->failed = true;
	b->out_len = 0;
	if (b->out_alloc < want) {
		unsigned char *p = realloc(b->out, want);

		if (!p)
			return;
		b->out = p;
		b->out_alloc = want;
	}
	if (deflateReset(z) != Z_OK ||
	    (b->dict_len &&
	     deflateSetDictionary(z, b->dict, b->dict_len) != Z_OK))
		return;
	z->next_in = (unsigned char *)b->in.buf;
	z->avail_in = (uInt)b->in.len;
	z->next_out = b->out;
	z->avail_out = (uInt)b->out_alloc;
	rc = deflate(z, b->last ? Z_FINISH : Z_SYNC_FLUSH);
	if (b->last ? rc != Z_STREAM_END :
		      rc != Z_OK || z->avail_in || !z->avail_out)
		return;
	b->out_len = b->out_alloc - z->avail_out;
	b->crc = (uint32_t)crc32(0, (const unsigned char *)b->in.buf,
				 (uInt)b->in.len);
	b->failed = false;
}

/* The oldest FILLED block, or NULL.  Called with the lock held. */
static struct gzpar_block *gzpar_oldest_filled(struct gzpar *g)
{
	uint64_t s;

	for (s = g->written; s < g->filled; s++)
		if (g->blk[s % GZPAR_RING].state == GZPAR_FILLED)
			return &g->blk[s % GZPAR_RING];
	return NULL;
}

static void *gzpar_main(void *arg)
{
	struct gzpar *g = arg;
	struct gzpar_block *b = NULL;

	pthread_mutex_lock(&g->lock);
	for (;;) {
		while (!g->stop && !(b = gzpar_oldest_filled(g)))
			pthread_cond_wait(&g->cond, &g->lock);
		if (g->stop)
			break;
		b->state = GZPAR_BUSY;
		pthread_mutex_unlock(&g->lock);
		gzpar_deflate(&g->z_thread, b);
		pthread_mutex_lock(&g->lock);
		b->state = GZPAR_DONE;
		pthread_cond_broadcast(&g->cond);
	}
	pthread_mutex_unlock(&g->lock);
	return NULL;
}

static void gzpar_fail(struct gzpar *g, enum err_code code, const char *why)
{
	if (!g->rc)
		g->rc = err_set(g->err, code, ERR_NO_OFF, "%s: %s", g->what,
				why);
}

/* Writes block b, the next in order (the caller's, no lock needed). */
static void gzpar_put(struct gzpar *g, struct gzpar_block *b)
{
	if (b->failed)
		gzpar_fail(g, ERR_NOMEM, "compression ran out of memory");
	if (g->rc)
		return;
	g->crc = (uint32_t)crc32_combine(g->crc, b->crc, (z_off_t)b->in.len);
	g->isize += b->in.len;
	g->rc = fdout_write(g->fd, b->out, b->out_len, g->what, g->err);
}

/*
 * Writes the DONE blocks at the head, in order, deflating FILLED ones
 * itself or waiting for the thread's, until at most room blocks are in
 * flight (room 0: all written).
 */
static void gzpar_drain(struct gzpar *g, uint64_t room)
{
	struct gzpar_block *b;

	pthread_mutex_lock(&g->lock);
	for (;;) {
		b = &g->blk[g->written % GZPAR_RING];
		if (g->written < g->filled && b->state == GZPAR_DONE) {
			pthread_mutex_unlock(&g->lock);
			gzpar_put(g, b);
			pthread_mutex_lock(&g->lock);
			b->state = GZPAR_FREE;
			g->written++;
			continue;
		}
		if (g->filled - g->written <= room)
			break;
		b = gzpar_oldest_filled(g);
		if (b) {
			b->state = GZPAR_BUSY;
			pthread_mutex_unlock(&g->lock);
			gzpar_deflate(&g->z_caller, b);
			pthread_mutex_lock(&g->lock);
			b->state = GZPAR_DONE;
			continue;
		}
		pthread_cond_wait(&g->cond, &g->lock);
	}
	pthread_mutex_unlock(&g->lock);
}

/* Keeps the last GZPAR_DICT bytes of the text, p[0..n) following. */
static void gzpar_keep_tail(struct gzpar *g, const char *p, size_t n)
{
	size_t keep;

	if (!n)
		return;
	if (n >= GZPAR_DICT) {
		memcpy(g->tail, p + n - GZPAR_DICT, GZPAR_DICT);
		g->tail_len = GZPAR_DICT;
		return;
	}
	keep = MIN((size_t)g->tail_len, GZPAR_DICT - n);
	memmove(g->tail, g->tail + g->tail_len - keep, keep);
	memcpy(g->tail + keep, p, n);
	g->tail_len = (unsigned)(keep + n);
}

/* Hands sb's text over as the next block. */
static void gzpar_submit(struct gzpar *g, struct strbuf *sb, bool last)
{
	struct gzpar_block *b;
	struct strbuf old;

	gzpar_drain(g, GZPAR_RING - 1);
	b = &g->blk[g->filled % GZPAR_RING];
	old = b->in;
	b->in = *sb;
	*sb = old;
	strbuf_reset(sb);
	memcpy(b->dict, g->tail, g->tail_len);
	b->dict_len = g->tail_len;
	gzpar_keep_tail(g, b->in.buf, b->in.len);
	b->last = last;
	pthread_mutex_lock(&g->lock);
	b->state = GZPAR_FILLED;
	g->filled++;
	pthread_cond_signal(&g->cond);
	pthread_mutex_unlock(&g->lock);
	/* alone, the caller deflates each block as it comes */
	gzpar_drain(g, g->threaded ? GZPAR_RING : 0);
}

static void gzpar_free(struct gzpar *g)
{
	unsigned i;

	if (g->threaded) {
		pthread_mutex_lock(&g->lock);
		g->stop = true;
		pthread_cond_broadcast(&g->cond);
		pthread_mutex_unlock(&g->lock);
		pthread_join(g->thread, NULL);
	}
	if (g->z_caller_ok)
		deflateEnd(&g->z_caller);
	if (g->z_thread_ok)
		deflateEnd(&g->z_thread);
	for (i = 0; i < GZPAR_RING; i++) {
		strbuf_release(&g->blk[i].in);
		free(g->blk[i].out);
	}
	pthread_cond_destroy(&g->cond);
	pthread_mutex_destroy(&g->lock);
	free(g);
}

struct gzpar *gzpar_open(int fd, const char *what, bool thread,
			 struct err *err)
{
	/* no time, no name, "fastest" (XFL 4), Unix */
	static const unsigned char header[10] = { 0x1f, 0x8b, 8, 0, 0, 0,
						  0,    0,    4, 3 };
	struct gzpar *g = mem_zalloc(1, sizeof(*g));
	unsigned i;

	if (!g) {
		err_set(err, ERR_NOMEM, ERR_NO_OFF, "%s", what);
		return NULL;
	}
	g->fd = fd;
	g->what = what;
	g->err = err;
	pthread_mutex_init(&g->lock, NULL);
	pthread_cond_init(&g->cond, NULL);
	for (i = 0; i < GZPAR_RING; i++)
		strbuf_init(&g->blk[i].in);
	g->z_caller_ok = deflateInit2(&g->z_caller, Z_BEST_SPEED, Z_DEFLATED,
				      -15, 8, Z_DEFAULT_STRATEGY) == Z_OK;
	g->z_thread_ok = deflateInit2(&g->z_thread, Z_BEST_SPEED, Z_DEFLATED,
				      -15, 8, Z_DEFAULT_STRATEGY) == Z_OK;
	if (!g->z_caller_ok || !g->z_thread_ok) {
		err_set(err, ERR_NOMEM, ERR_NO_OFF, "%s: zlib", what);
		gzpar_free(g);
		return NULL;
	}
	g->threaded = thread && sysconf(_SC_NPROCESSORS_ONLN) > 1 &&
		      pthread_create(&g->thread, NULL, gzpar_main, g) == 0;
	g->rc = fdout_write(fd, header, sizeof(header), what, err);
	return g;
}

int gzpar_write(struct gzpar *g, struct strbuf *sb)
{
	if (sb->oom)
		gzpar_fail(g, ERR_NOMEM, "out of memory");
	else if (sb->len >= GZPAR_BLOCK)
		gzpar_submit(g, sb, false);
	return g->rc;
}

static void gzpar_le32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
	p[2] = (unsigned char)(v >> 16);
	p[3] = (unsigned char)(v >> 24);
}

int gzpar_finish(struct gzpar *g, struct strbuf *sb)
{
	unsigned char trailer[8];
	int rc;

	if (sb->oom)
		gzpar_fail(g, ERR_NOMEM, "out of memory");
	gzpar_submit(g, sb, true);
	gzpar_drain(g, 0);
	gzpar_le32(trailer, g->crc);
	gzpar_le32(trailer + 4, (uint32_t)g->isize);
	if (!g->rc)
		g->rc = fdout_write(g->fd, trailer, sizeof(trailer), g->what,
				    g->err);
	rc = g->rc;
	gzpar_free(g);
	return rc;
}
