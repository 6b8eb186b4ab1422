/*
 * strbuf.h - a growable NUL-terminated string.
 *
 * A failed allocation sets the sticky oom flag and drops the text being
 * added, so callers build whole lines and check once.
 */
#ifndef RESTACK_COMMON_STRBUF_H
#define RESTACK_COMMON_STRBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/base.h"

struct strbuf {
	char *buf;      /* always NUL-terminated once anything was added */
	size_t len;
	size_t alloc;
	bool oom;
};

#define STRBUF_INIT { NULL, 0, 0, false }

void strbuf_init(struct strbuf *sb);
/* Frees the contents; the strbuf can be used again. */
void strbuf_release(struct strbuf *sb);
/* Empties the string, keeping its memory. */
void strbuf_reset(struct strbuf *sb);
void strbuf_add(struct strbuf *sb, const void *data, size_t len);
void strbuf_addstr(struct strbuf *sb, const char *s);
void strbuf_addch(struct strbuf *sb, char c);
void strbuf_addf(struct strbuf *sb, const char *fmt, ...) PRINTF_LIKE(2, 3);
/* v in decimal, as "%llu" and "%lld" give it (without printf's cost). */
void strbuf_addu(struct strbuf *sb, uint64_t v);
void strbuf_addi(struct strbuf *sb, int64_t v);
/* Makes room for len more bytes; returns false when out of memory. */
bool strbuf_grow(struct strbuf *sb, size_t len);
/* The text so far ("" when empty). */
const char *strbuf_str(const struct strbuf *sb);

#endif
