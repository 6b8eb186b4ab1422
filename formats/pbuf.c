/*
 * pbuf.c - protocol-buffers wire-format encoding (see pbuf.h).
 */
#include <string.h>

#include "formats/pbuf.h"

void pbuf_varint(struct strbuf *sb, uint64_t v)
{
	char b[10];
	size_t n = 0;

	while (v >= 0x80) {
		b[n++] = (char)(v | 0x80);
		v >>= 7;
	}
	b[n++] = (char)v;
	strbuf_add(sb, b, n);
}

void pbuf_key(struct strbuf *sb, uint32_t field, enum pbuf_wire wire)
{
	pbuf_varint(sb, (uint64_t)field << 3 | wire);
}

void pbuf_uint(struct strbuf *sb, uint32_t field, uint64_t v)
{
	if (!v)
		return;
	pbuf_key(sb, field, PBUF_VARINT);
	pbuf_varint(sb, v);
}

void pbuf_int(struct strbuf *sb, uint32_t field, int64_t v)
{
	pbuf_uint(sb, field, (uint64_t)v);
}

void pbuf_bytes(struct strbuf *sb, uint32_t field, const void *p,
		size_t len)
{
	pbuf_key(sb, field, PBUF_LEN);
	pbuf_varint(sb, len);
	if (len)
		strbuf_add(sb, p, len);
}

void pbuf_str(struct strbuf *sb, uint32_t field, const char *s)
{
	pbuf_bytes(sb, field, s ? s : "", s ? strlen(s) : 0);
}

void pbuf_packed(struct strbuf *sb, uint32_t field, const uint64_t *v,
		 size_t n)
{
	size_t len = 0, i;
	uint64_t x;

	if (!n)
		return;
	for (i = 0; i < n; i++)
		for (x = v[i], len++; x >= 0x80; x >>= 7)
			len++;
	pbuf_key(sb, field, PBUF_LEN);
	pbuf_varint(sb, len);
	for (i = 0; i < n; i++)
		pbuf_varint(sb, v[i]);
}
