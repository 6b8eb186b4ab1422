/*
 * err.h - error reports that carry a code, a file offset and a message.
 *
 * Library code (common/, formats/, unwind/) never prints: it fills a
 * struct err and returns -1 or NULL.  cmd/ prints "restack: FILE+0xOFF: msg"
 * and chooses the exit status.
 */
#ifndef RESTACK_COMMON_ERR_H
#define RESTACK_COMMON_ERR_H

#include <stdint.h>

#include "common/base.h"

#define ERR_LIST(X)                                       \
	X(OK, "no error")                                 \
	X(IO, "read or write failed")                     \
	X(FORMAT, "not a recognised input format")        \
	X(TRUNCATED, "data ends early")                   \
	X(CORRUPT, "inconsistent data")                   \
	X(UNSUPPORTED, "valid but not supported")         \
	X(NOMEM, "out of memory")                         \
	X(USAGE, "bad usage")

#define X(name, text) ERR_##name,
enum err_code { ERR_LIST(X) ERR__COUNT };
#undef X

#define ERR_NO_OFF UINT64_MAX /* the error is not about a file position */

struct err {
	enum err_code code;
	int sys_errno;  /* errno for ERR_IO, else 0 */
	uint64_t off;   /* file offset the error is about, or ERR_NO_OFF */
	char msg[256];
};

/* Fills *e (which may be NULL) and returns -1: `return err_set(...)`. */
int err_set(struct err *e, enum err_code code, uint64_t off,
	    const char *fmt, ...) PRINTF_LIKE(4, 5);

/* Like err_set() with ERR_IO, appending strerror(sys_errno) to the text. */
int err_sys(struct err *e, int sys_errno, const char *fmt, ...)
	PRINTF_LIKE(3, 4);

/* A constant text naming the code. */
const char *err_code_str(enum err_code code);

/* Resets *e to ERR_OK. */
void err_clear(struct err *e);

#endif
