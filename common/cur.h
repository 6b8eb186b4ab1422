/*
 * cur.h - a bounded cursor over bytes that came from a file.
 *
 * Every read is checked against the end of the span; a read past it
 * returns 0 and sets the sticky short_read flag, so decoders can read a
 * run of fields and test once.  The byte order is decided once, from a
 * magic number, and lives in the cursor; the bytes are never swapped in
 * place.  file_off is the file offset of start, for error messages.
 */
#ifndef RESTACK_COMMON_CUR_H
#define RESTACK_COMMON_CUR_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "common/base.h"

struct cur {
	const uint8_t *start, *p, *end;
	uint64_t file_off; /* file offset of start */
	bool swap;         /* data is in the other byte order */
	bool short_read;   /* sticky: some read ran past end */
};

static inline struct cur cur_make(const void *data, size_t len,
				  uint64_t file_off, bool swap)
{
	struct cur c;

	c.start = c.p = data;
	c.end = c.start + len;
	c.file_off = file_off;
	c.swap = swap;
	c.short_read = false;
	return c;
}

static inline size_t cur_left(const struct cur *c)
{
	return (size_t)(c->end - c->p);
}

/* File offset of the next byte to be read. */
static inline uint64_t cur_off(const struct cur *c)
{
	return c->file_off + (uint64_t)(c->p - c->start);
}

static inline bool cur_need(struct cur *c, size_t n)
{
	if (c->short_read || cur_left(c) < n) {
		c->short_read = true;
		return false;
	}
	return true;
}

static inline uint8_t cur_u8(struct cur *c)
{
	if (!cur_need(c, 1))
		return 0;
	return *c->p++;
}

static inline uint16_t cur_u16(struct cur *c)
{
	uint16_t v;

	if (!cur_need(c, sizeof(v)))
		return 0;
	memcpy(&v, c->p, sizeof(v));
	c->p += sizeof(v);
	return c->swap ? bswap_16(v) : v;
}

static inline uint32_t cur_u32(struct cur *c)
{
	uint32_t v;

	if (!cur_need(c, sizeof(v)))
		return 0;
	memcpy(&v, c->p, sizeof(v));
	c->p += sizeof(v);
	return c->swap ? bswap_32(v) : v;
}

static inline uint64_t cur_u64(struct cur *c)
{
	uint64_t v;

	if (!cur_need(c, sizeof(v)))
		return 0;
	memcpy(&v, c->p, sizeof(v));
	c->p += sizeof(v);
	return c->swap ? bswap_64(v) : v;
}

/* Returns a pointer to the next n bytes and skips them, or NULL. */
static inline const uint8_t *cur_bytes(struct cur *c, size_t n)
{
	const uint8_t *p;

	if (!cur_need(c, n))
		return NULL;
	p = c->p;
	c->p += n;
	return p;
}

static inline void cur_skip(struct cur *c, size_t n)
{
	(void)cur_bytes(c, n);
}

/*
 * Splits off the next n bytes as a cursor of their own (same byte order,
 * correct file offsets) and skips them in *c.  On a short read the
 * returned cursor is empty and has short_read set too.
 */
static inline struct cur cur_sub(struct cur *c, size_t n)
{
	uint64_t off = cur_off(c);
	const uint8_t *p = cur_bytes(c, n);
	struct cur s = cur_make(p ? p : c->p, p ? n : 0, off, c->swap);

	s.short_read = p == NULL;
	return s;
}

/*
 * Reads a NUL-terminated string that must end inside the cursor and skips
 * it and its NUL; returns NULL (and sets short_read) when there is no NUL.
 */
static inline const char *cur_cstr(struct cur *c)
{
	const uint8_t *nul;
	const char *s;

	if (c->short_read)
		return NULL;
	nul = memchr(c->p, '\0', cur_left(c));
	if (!nul) {
		c->short_read = true;
		return NULL;
	}
	s = (const char *)c->p;
	c->p = nul + 1;
	return s;
}

/*
 * The bits of a LEB128 number (DWARF) and, in *bits, how many it had.
 * One that does not fit 64 bits or runs past the end sets short_read and
 * yields 0.
 */
static inline uint64_t cur_leb(struct cur *c, unsigned *bits, bool *neg)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t b;

	do {
		if (!cur_need(c, 1) || shift > 63) {
			c->short_read = true;
			*bits = 0;
			*neg = false;
			return 0;
		}
		b = *c->p++;
		v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	*bits = shift;
	*neg = b & 0x40;
	return v;
}

/* An unsigned LEB128 number; errors as cur_leb(). */
static inline uint64_t cur_uleb(struct cur *c)
{
	unsigned bits;
	bool neg;

	return cur_leb(c, &bits, &neg);
}

/* A signed LEB128 number; errors as cur_leb(). */
static inline int64_t cur_sleb(struct cur *c)
{
	unsigned bits;
	bool neg;
	uint64_t v = cur_leb(c, &bits, &neg);

	if (neg && bits < 64)
		v |= ~0ull << bits;
	return (int64_t)v;
}

/*
 * Reads a string stored in a fixed field of len bytes (NUL padded): the
 * whole field is skipped; returns NULL when it holds no NUL.
 */
static inline const char *cur_fixed_str(struct cur *c, size_t len)
{
	const uint8_t *p = cur_bytes(c, len);

	if (!p)
		return NULL;
	if (!memchr(p, '\0', len))
		return NULL;
	return (const char *)p;
}

#endif
