/*
 * strbuf.c - growable strings.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/mem.h"
#include "common/strbuf.h"

void strbuf_init(struct strbuf *sb)
{
	sb->buf = NULL;
	sb->len = sb->alloc = 0;
	sb->oom = false;
}

void strbuf_release(struct strbuf *sb)
{
	free(sb->buf);
	strbuf_init(sb);
}

void strbuf_reset(struct strbuf *sb)
{
	sb->len = 0;
	if (sb->buf)
		sb->buf[0] = '\0';
}

bool strbuf_grow(struct strbuf *sb, size_t len)
{
	size_t need;

	if (__builtin_add_overflow(sb->len, len + 1, &need) ||
	    mem_grow(&sb->buf, &sb->alloc, 1, need) < 0) {
		sb->oom = true;
		return false;
	}
	return true;
}

void strbuf_add(struct strbuf *sb, const void *data, size_t len)
{
	if (!strbuf_grow(sb, len))
		return;
	memcpy(sb->buf + sb->len, data, len);
	sb->len += len;
	sb->buf[sb->len] = '\0';
}

void strbuf_addstr(struct strbuf *sb, const char *s)
{
	strbuf_add(sb, s, strlen(s));
}

void strbuf_addch(struct strbuf *sb, char c)
{
	if (sb->len + 1 < sb->alloc) {
		sb->buf[sb->len++] = c;
		sb->buf[sb->len] = '\0';
		return;
	}
	strbuf_add(sb, &c, 1);
}

void strbuf_addu(struct strbuf *sb, uint64_t v)
{
	char d[20];
	size_t n = sizeof(d);

	do {
		d[--n] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	strbuf_add(sb, d + n, sizeof(d) - n);
}

void strbuf_addi(struct strbuf *sb, int64_t v)
{
	if (v < 0) {
		strbuf_addch(sb, '-');
		strbuf_addu(sb, 0 - (uint64_t)v);
		return;
	}
	strbuf_addu(sb, (uint64_t)v);
}

void strbuf_addf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(sb->buf ? sb->buf + sb->len : NULL,
		      sb->buf ? sb->alloc - sb->len : 0, fmt, ap);
	va_end(ap);
	if (n < 0) {
		sb->oom = true;
		return;
	}
	if (sb->buf && (size_t)n < sb->alloc - sb->len) {
		sb->len += (size_t)n;
		return;
	}
	if (!strbuf_grow(sb, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(sb->buf + sb->len, sb->alloc - sb->len, fmt, ap);
	va_end(ap);
	sb->len += (size_t)n;
}

const char *strbuf_str(const struct strbuf *sb)
{
	return sb->buf ? sb->buf : "";
}
