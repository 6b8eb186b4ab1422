/*
 * base.h - small macros every restack file may use: array sizes, branch
 * hints, byte swapping, format attributes and BUG() for programmer errors.
 */
#ifndef RESTACK_COMMON_BASE_H
#define RESTACK_COMMON_BASE_H

#include <byteswap.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef ARRAY_SIZE /* libiberty.h has the same */
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

#define PRINTF_LIKE(fmt, args) __attribute__((format(printf, fmt, args)))
#define UNUSED __attribute__((unused))

#define ALIGN_UP(x, a) (((x) + ((a) - 1)) & ~((__typeof__(x))(a) - 1))

#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

/*
 * BUG() marks a broken internal invariant, never bad input: input errors
 * go through struct err (common/err.h).
 */
#define BUG(msg)                                                          \
	do {                                                              \
		fprintf(stderr, "restack: BUG at %s:%d: %s\n", __FILE__, \
			__LINE__, (msg));                                 \
		abort();                                                  \
	} while (0)

#endif
