/*
 * fdout.h - writing a whole buffer to a file descriptor, for the profile
 * writers.
 */
#ifndef RESTACK_FORMATS_FDOUT_H
#define RESTACK_FORMATS_FDOUT_H

#include <stddef.h>

#include "common/err.h"
#include "common/strbuf.h"

/*
 * Writes len bytes of buf to fd (retrying short writes and EINTR).
 * Returns 0, or -1 with *err naming what (e.g. "pprof profile").
 */
int fdout_write(int fd, const void *buf, size_t len, const char *what,
		struct err *err);

/*
 * Writes sb's text to fd and empties sb.  Returns 0, or -1 with *err
 * naming what (sb ran out of memory, or the write failed).
 */
int fdout_flush(int fd, struct strbuf *sb, const char *what,
		struct err *err);

#endif
