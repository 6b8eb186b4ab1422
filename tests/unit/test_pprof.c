/*
 * test_pprof.c - the protobuf encoder against the wire-format examples of
 * the protocol-buffers documentation, and the pprof writer's determinism:
 * the same samples in another order give the same bytes.
 */
#include <string.h>

#include "formats/pbuf.h"
#include "formats/pprof.h"
#include "tests/harness.h"

struct loc2 {
	struct sym_loc l;
	struct sym_entry e[2];
};

static bool bytes_are(const struct strbuf *sb, const char *want, size_t n)
{
	return sb->len == n && !memcmp(sb->buf, want, n);
}

static void test_pbuf(void)
{
	struct strbuf sb = STRBUF_INIT;
	static const uint64_t packed[] = { 3, 270, 86942 };

	pbuf_uint(&sb, 1, 150);
	CHECK(bytes_are(&sb, "\x08\x96\x01", 3), "uint field 1 = 150");
	strbuf_reset(&sb);
	pbuf_str(&sb, 2, "testing");
	CHECK(bytes_are(&sb, "\x12\x07testing", 9), "string field 2");
	strbuf_reset(&sb);
	pbuf_packed(&sb, 4, packed, 3);
	CHECK(bytes_are(&sb, "\x22\x06\x03\x8e\x02\x9e\xa7\x05", 8),
	      "packed repeated field 4");
	strbuf_reset(&sb);
	pbuf_int(&sb, 1, -1);
	CHECK(bytes_are(&sb, "\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01",
			11), "negative int64: ten-byte varint");
	strbuf_reset(&sb);
	pbuf_uint(&sb, 3, 0);
	pbuf_int(&sb, 3, 0);
	pbuf_packed(&sb, 3, packed, 0);
	CHECK_EQ_U64(sb.len, 0, "zero scalars and empty packed fields omitted");
	pbuf_bytes(&sb, 5, "", 0);
	CHECK(bytes_are(&sb, "\x2a\x00", 2), "empty bytes field written");
	strbuf_reset(&sb);
	pbuf_varint(&sb, UINT64_MAX);
	CHECK_EQ_U64(sb.len, 10, "UINT64_MAX takes ten bytes");
	pbuf_uint(&sb, 536870911, 1);
	CHECK(bytes_are(&sb, "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"
			"\xf8\xff\xff\xff\x0f\x01", 16), "largest field number");
	strbuf_release(&sb);
}

static void encode(const struct rsample *s, const unsigned *order,
		   unsigned n, struct strbuf *out)
{
	struct pprof *p = pprof_new(NULL);
	unsigned i;

	for (i = 0; i < n; i++)
		CHECK(pprof_add(p, &s[order[i]]) == 0, "add sample %u", order[i]);
	CHECK(pprof_encode(p, out) == 0, "encode");
	pprof_free(p);
}

static void test_order(void)
{
	static const uint8_t bid[4] = { 0xde, 0xad, 0xbe, 0xef };
	struct loc2 a = { { "/bin/p", 0x10, SYM_USER, 2, 4, bid },
			  { { "inner", "p.c", 3, true },
			    { "outer", "p.c", 9, false } } };
	struct loc2 b = { { "/lib/libc.so.6", 0x20, SYM_USER, 1 },
			  { { "write", NULL, 0, false } } };
	struct loc2 c = { { "/bin/p", 0x30, SYM_USER, 1 },
			  { { "main", NULL, 0, false } } };
	struct rframe f1[] = { { 1, FRAME_SAMPLE, &b.l },
			       { 2, FRAME_CFI_EH, &a.l },
			       { 3, FRAME_CFI_EH, &c.l } };
	struct rframe f2[] = { { 2, FRAME_SAMPLE, &a.l },
			       { 3, FRAME_CFI_EH, &c.l } };
	struct rsample s[3];
	static const unsigned fwd[] = { 0, 1, 2 }, rev[] = { 2, 1, 0 };
	struct strbuf x = STRBUF_INIT, y = STRBUF_INIT;

	memset(s, 0, sizeof(s));
	s[0].comm = "p";
	s[0].pid = s[0].tid = 5;
	s[0].event = "cpu-clock";
	s[0].period = 1000;
	s[0].frames = f1;
	s[0].nr_frames = 3;
	s[1] = s[0];
	s[1].frames = f2;
	s[1].nr_frames = 2;
	s[1].end = END_WINDOW;
	s[2] = s[0];
	s[2].tid = 6;
	encode(s, fwd, 3, &x);
	encode(s, rev, 3, &y);
	CHECK(x.len > 0 && x.len == y.len && !memcmp(x.buf, y.buf, x.len),
	      "same samples in another order: same bytes (%zu, %zu)",
	      x.len, y.len);
	CHECK(memmem(x.buf, x.len, "deadbeef", 8) != NULL,
	      "build-id written as hex");
	CHECK(memmem(x.buf, x.len, "[truncated: window exhausted]", 29) != NULL,
	      "truncated stacks get their marker location");
	CHECK(memmem(x.buf, x.len, "nanoseconds", 11) != NULL,
	      "cpu-clock periods are CPU time in nanoseconds");
	strbuf_release(&x);
	strbuf_release(&y);
}

int main(void)
{
	test_pbuf();
	test_order();
	return done_testing();
}
