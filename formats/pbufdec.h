/*
 * pbufdec.h - a bounded protocol-buffers decoder: the fields of one
 * message, one at a time, from a byte range that outlives the reader.
 *
 * Nothing is read outside the range: a field that runs past its end, a
 * varint of more than ten bytes, or a wire type other than varint,
 * 64-bit, length-delimited and 32-bit (groups are not read) is an error
 * with the byte offset of the field (offsets count from the start of the
 * outermost message, base).  Decoding only; pbuf.h encodes.
 */
#ifndef RESTACK_FORMATS_PBUFDEC_H
#define RESTACK_FORMATS_PBUFDEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

struct pbufdec {
	const uint8_t *p, *end;
	const uint8_t *base;     /* offsets are counted from here */
};

struct pbuf_field {
	uint32_t num;
	uint8_t wire;            /* 0 varint, 1 64-bit, 2 bytes, 5 32-bit */
	uint64_t v;              /* varint and fixed values */
	const uint8_t *data;     /* wire 2: the bytes */
	size_t len;
	uint64_t off;            /* the field's key */
};

/* A reader of the message at [data, data + len), base as above. */
static inline struct pbufdec pbufdec_make(const void *base, const void *data,
					  size_t len)
{
	/* (no arithmetic on a NULL data: an empty message may have none) */
	struct pbufdec d = { data, len ? (const uint8_t *)data + len : data,
			     base };

	return d;
}

/* A reader of a length-delimited field's bytes, as a message. */
static inline struct pbufdec pbufdec_sub(const struct pbufdec *d,
					 const struct pbuf_field *f)
{
	return pbufdec_make(d->base, f->data, f->len);
}

/* The next field: 1, 0 at the message's end, -1 with *err filled. */
int pbufdec_next(struct pbufdec *d, struct pbuf_field *f, struct err *err);

/*
 * The next value of a repeated varint field f, packed (wire 2) or not:
 * call with *pos 0 first; 1 with *v set, 0 when done, -1 with *err.
 */
int pbufdec_packed(const struct pbufdec *d, const struct pbuf_field *f,
		   size_t *pos, uint64_t *v, struct err *err);

#endif
