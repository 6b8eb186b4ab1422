/*
 * input.h - an input file or stdin ("-"), read by offset.
 *
 * A regular file can be read anywhere (pread).  A pipe can only be read
 * forwards: input_read_at() then needs the offset to be where the stream
 * is, and input_skip() discards bytes.  Offsets always count from the first
 * byte of the input, so error messages name real positions.
 */
#ifndef RESTACK_COMMON_INPUT_H
#define RESTACK_COMMON_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

struct input {
	int fd;
	bool own_fd;        /* close fd in input_close() */
	bool seekable;      /* a regular file: pread works */
	uint64_t size;      /* file size if seekable, else UINT64_MAX */
	uint64_t stream_pos;/* next offset a non-seekable input delivers */
	const char *name;   /* as given: path or "-"; not owned */
};

/*
 * Opens path ("-" is stdin).  name must outlive the input.  Returns 0, or
 * -1 with *err filled.
 */
int input_open(struct input *in, const char *path, struct err *err);

/*
 * The first len bytes (at most INPUT_PEEK_MAX) of the input on fd, to
 * tell its format: a regular file is read with pread(); a stream's bytes
 * are kept and delivered again to the input reading that descriptor
 * (input_open("-") for standard input, input_from_fd()), so it can be
 * peeked at and then read whole.  One stream per process.  Returns the
 * count (fewer at end of input), or -1 with *err filled.  Not
 * thread-safe: call before any thread reads the stream.
 */
#define INPUT_PEEK_MAX 16
long long input_peek_fd(int fd, void *buf, size_t len, struct err *err);

/* Whether bytes input_peek_fd() took are still to be read from in. */
bool input_has_peeked(const struct input *in);

/* Wraps an open descriptor the caller keeps owning. */
void input_from_fd(struct input *in, int fd, const char *name);

void input_close(struct input *in);

/*
 * Reads up to len bytes at off into buf; fewer only at end of input.
 * Returns the count read, or -1 with *err filled.
 */
long long input_read_at(struct input *in, void *buf, size_t len, uint64_t off,
			struct err *err);

/*
 * A stream's next bytes, as many as one read() gives (at most len; it
 * waits for one at least).  Returns the count, 0 at end of input, or -1
 * with *err filled.
 */
long long input_read_some(struct input *in, void *buf, size_t len,
			  struct err *err);

/*
 * Moves a stream's position forward to off, discarding bytes.  Seekable
 * inputs need nothing.  Returns 0, or -1 (end of input or read error).
 */
int input_skip_to(struct input *in, uint64_t off, struct err *err);

#endif
