/*
 * readahead.h - a thread that reads a stream ahead into a bounded queue,
 * so that the writer of a pipe or FIFO is not kept waiting while its
 * reader is busy (a module loading, a slow output): up to the bound is
 * taken in; beyond, the writer waits, as it would on a full pipe.
 *
 * The queue is a list of chunks of 64 KiB, one a read, allocated as more
 * wait than ever before and used again once read: memory is the most
 * that waited, up to the bound (chunks counted whole: a slow writer's
 * small reads hold less).
 * The thread fills it, readahead_read() on one other thread empties it.
 * The thread polls its descriptor 100 ms at a time, so readahead_stop()
 * returns within that even when nothing comes.  It blocks every signal
 * (the threads that handle them get them).
 */
#ifndef RESTACK_COMMON_READAHEAD_H
#define RESTACK_COMMON_READAHEAD_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "common/input.h"

struct readahead_chunk;

struct readahead {
	struct input *in;       /* borrowed; read by the thread only */
	struct readahead_chunk *first, *last; /* the queue, owned */
	struct readahead_chunk *spare;  /* chunks read, to be used again */
	size_t cap, len;        /* the bound, the bytes waiting */
	size_t chunks;          /* allocated, 64 KiB each (the bound's) */
	uint64_t peak;          /* most bytes that waited at once */
	bool eof, stop, failed, started, ready;
	struct err err;         /* the thread's read error */
	pthread_mutex_t lock;
	pthread_cond_t more;    /* bytes came, or the end */
	pthread_cond_t room;    /* bytes were taken, or stop */
	pthread_t thread;
};

/* Starts reading in (which must outlive it).  0, or -1 with *err. */
int readahead_start(struct readahead *ra, struct input *in, size_t cap,
		    struct err *err);

/*
 * Takes up to len bytes (at least one), waiting at most timeout_ms for
 * them (-1: as long as it takes).  Returns the count, 0 at the end of the
 * stream, -1 on a read error (*err filled), -2 when nothing came in time.
 */
long long readahead_read(struct readahead *ra, void *buf, size_t len,
			 int timeout_ms, struct err *err);

/*
 * Whether the queue is full: the thread waits for room, and the writer
 * waits once the pipe's own buffer is full too (at the end of the stream,
 * never).
 */
bool readahead_full(struct readahead *ra);

/* Stops the thread and frees the queue; a never started one is fine. */
void readahead_stop(struct readahead *ra);

#endif
