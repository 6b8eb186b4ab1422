/*
 * pbuf.h - a protocol-buffers encoder: the few wire-format primitives a
 * writer needs (varints, length-delimited fields, packed repeated
 * varints), appended to a strbuf used as a byte buffer.
 *
 * Encoding only, for messages we write (pprof's profile.proto).  Nested
 * messages are built in a scratch strbuf and added with pbuf_bytes().
 * Scalar fields equal to 0 are omitted, as proto3 encoders do; decoders
 * read an absent field as 0.  Out-of-memory is the strbuf's sticky oom.
 */
#ifndef RESTACK_FORMATS_PBUF_H
#define RESTACK_FORMATS_PBUF_H

#include <stddef.h>
#include <stdint.h>

#include "common/strbuf.h"

enum pbuf_wire {
	PBUF_VARINT = 0,
	PBUF_LEN = 2,
};

/* A bare base-128 varint. */
void pbuf_varint(struct strbuf *sb, uint64_t v);
/* Field key: (field << 3) | wire type. */
void pbuf_key(struct strbuf *sb, uint32_t field, enum pbuf_wire wire);
/* uint64/uint32/bool field; nothing when v is 0. */
void pbuf_uint(struct strbuf *sb, uint32_t field, uint64_t v);
/* int64 field (two's complement, ten bytes when negative); nothing for 0. */
void pbuf_int(struct strbuf *sb, uint32_t field, int64_t v);
/* bytes, string or embedded message field, written even when empty. */
void pbuf_bytes(struct strbuf *sb, uint32_t field, const void *p,
		size_t len);
/* string field (NULL is written as ""). */
void pbuf_str(struct strbuf *sb, uint32_t field, const char *s);
/* packed repeated uint64/int64 field; nothing when n is 0. */
void pbuf_packed(struct strbuf *sb, uint32_t field, const uint64_t *v,
		 size_t n);

#endif
