/*
 * test_cur.c - the bounded cursor (common/cur.h): bounds, the sticky
 * short_read flag, byte order, sub-cursors and string reads.
 */
#include "common/cur.h"
#include "tests/harness.h"

static const uint8_t bytes[] = {
	0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
	0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10,
};

static void test_reads(void)
{
	struct cur c = cur_make(bytes, sizeof(bytes), 0x100, false);

	CHECK_EQ_U64(cur_left(&c), 16, "new cursor has 16 bytes left");
	CHECK_EQ_U64(cur_off(&c), 0x100, "new cursor is at its file offset");
	CHECK_EQ_U64(cur_u8(&c), 0x01, "u8");
	CHECK_EQ_U64(cur_u16(&c), 0x0302, "u16 little-endian, unaligned");
	CHECK_EQ_U64(cur_u32(&c), 0x07060504, "u32 little-endian, unaligned");
	CHECK_EQ_U64(cur_u64(&c), 0x0f0e0d0c0b0a0908ULL,
		     "u64 little-endian, unaligned");
	CHECK_EQ_U64(cur_off(&c), 0x10f, "offset advances with reads");
	CHECK_EQ_U64(cur_left(&c), 1, "one byte left");
	CHECK(!c.short_read, "no short read yet");
	CHECK_EQ_U64(cur_u8(&c), 0x10, "last byte");
	CHECK_EQ_U64(cur_left(&c), 0, "nothing left");
	CHECK(!c.short_read, "reading exactly to the end is not short");
}

static void test_swap(void)
{
	struct cur c = cur_make(bytes, sizeof(bytes), 0, true);

	CHECK_EQ_U64(cur_u16(&c), 0x0102, "u16 swapped");
	CHECK_EQ_U64(cur_u32(&c), 0x03040506, "u32 swapped");
	CHECK_EQ_U64(cur_u8(&c), 0x07, "u8 is not affected by swap");
	CHECK_EQ_U64(cur_u64(&c), 0x08090a0b0c0d0e0fULL, "u64 swapped");
	CHECK(memcmp(bytes, "\x01\x02\x03\x04", 4) == 0,
	      "swapping never writes to the buffer");
}

static void test_short_read(void)
{
	struct cur c = cur_make(bytes, 6, 0, false);
	const uint8_t *p;

	CHECK_EQ_U64(cur_u32(&c), 0x04030201, "u32 inside the span");
	CHECK_EQ_U64(cur_u32(&c), 0, "u32 across the end reads 0");
	CHECK(c.short_read, "u32 across the end sets short_read");
	CHECK_EQ_U64(cur_left(&c), 2, "a failed read consumes nothing");
	CHECK_EQ_U64(cur_u8(&c), 0, "short_read is sticky: u8 reads 0");
	CHECK_EQ_U64(cur_u16(&c), 0, "short_read is sticky: u16 reads 0");
	CHECK_EQ_U64(cur_left(&c), 2, "sticky reads consume nothing");

	c = cur_make(bytes, 7, 0, false);
	CHECK_EQ_U64(cur_u64(&c), 0, "u64 on 7 bytes reads 0");
	CHECK(c.short_read, "u64 on 7 bytes is short");

	c = cur_make(bytes, 0, 0, false);
	CHECK_EQ_U64(cur_u8(&c), 0, "u8 on an empty span reads 0");
	CHECK(c.short_read, "u8 on an empty span is short");

	c = cur_make(bytes, 8, 0, false);
	p = cur_bytes(&c, 8);
	CHECK(p == bytes, "cur_bytes of the whole span");
	CHECK(cur_bytes(&c, 0) != NULL, "cur_bytes(0) at the end succeeds");
	CHECK(!c.short_read, "cur_bytes(0) at the end is not short");
	CHECK(cur_bytes(&c, 1) == NULL, "cur_bytes past the end is NULL");
	CHECK(c.short_read, "cur_bytes past the end sets short_read");

	c = cur_make(bytes, 8, 0, false);
	CHECK(cur_bytes(&c, SIZE_MAX) == NULL, "cur_bytes(SIZE_MAX) is NULL");
	CHECK_EQ_U64(cur_left(&c), 8, "huge cur_bytes consumes nothing");

	c = cur_make(bytes, 8, 0, false);
	cur_skip(&c, 9);
	CHECK(c.short_read, "cur_skip past the end sets short_read");
	CHECK_EQ_U64(cur_off(&c), 0, "cur_skip past the end does not move");
}

static void test_sub(void)
{
	struct cur c = cur_make(bytes, sizeof(bytes), 0x1000, true);
	struct cur s, t;

	cur_skip(&c, 2);
	s = cur_sub(&c, 4);
	CHECK(!s.short_read && !c.short_read, "cur_sub inside the span");
	CHECK_EQ_U64(cur_left(&s), 4, "sub-cursor has n bytes");
	CHECK_EQ_U64(cur_off(&s), 0x1002, "sub-cursor keeps file offsets");
	CHECK(s.swap, "sub-cursor keeps the byte order");
	CHECK_EQ_U64(cur_off(&c), 0x1006, "cur_sub skips n bytes in the parent");
	CHECK_EQ_U64(cur_u32(&s), 0x03040506, "sub-cursor reads its bytes");
	CHECK_EQ_U64(cur_u8(&s), 0, "sub-cursor ends at n");
	CHECK(s.short_read && !c.short_read,
	      "a short read in the sub-cursor leaves the parent alone");

	t = cur_sub(&c, 11);
	CHECK(t.short_read, "cur_sub past the end returns a short cursor");
	CHECK_EQ_U64(cur_left(&t), 0, "a short sub-cursor is empty");
	CHECK(c.short_read, "cur_sub past the end sets the parent's flag");

	c = cur_make(bytes, sizeof(bytes), 0, false);
	t = cur_sub(&c, 16);
	CHECK(!t.short_read && cur_left(&c) == 0 && cur_left(&t) == 16,
	      "cur_sub of everything");
	t = cur_sub(&c, 0);
	CHECK(!t.short_read && cur_left(&t) == 0, "cur_sub(0) at the end");
}

static void test_cstr(void)
{
	static const uint8_t s1[] = { 'a', 'b', 0, 'c', 0, 'd', 'e' };
	struct cur c = cur_make(s1, sizeof(s1), 0, false);
	const char *s;

	s = cur_cstr(&c);
	CHECK_STR(s, "ab", "cur_cstr reads up to the NUL");
	CHECK_EQ_U64(cur_off(&c), 3, "cur_cstr skips the NUL");
	CHECK_STR(cur_cstr(&c), "c", "second string");
	CHECK(cur_cstr(&c) == NULL, "string without NUL before the end");
	CHECK(c.short_read, "missing NUL sets short_read");
	CHECK(cur_cstr(&c) == NULL, "cur_cstr after a short read is NULL");

	c = cur_make(s1, 2, 0, false);
	CHECK(cur_cstr(&c) == NULL, "the NUL just past the span is not seen");

	c = cur_make(s1 + 2, 1, 0, false);
	CHECK_STR(cur_cstr(&c), "", "an empty string");
	CHECK(!c.short_read && cur_left(&c) == 0, "empty string consumed");

	c = cur_make(s1, 0, 0, false);
	CHECK(cur_cstr(&c) == NULL, "cur_cstr on an empty span");

	c = cur_make(s1, 4, 0, false);
	CHECK_STR(cur_fixed_str(&c, 4), "ab", "fixed string with padding");
	CHECK_EQ_U64(cur_left(&c), 0, "fixed string skips its whole field");
	c = cur_make(s1 + 5, 2, 0, false);
	CHECK(cur_fixed_str(&c, 2) == NULL, "fixed field without NUL");
	CHECK(!c.short_read, "a fixed field without NUL is not a short read");
	c = cur_make(s1, 3, 0, false);
	CHECK(cur_fixed_str(&c, 4) == NULL && c.short_read,
	      "fixed field longer than the span");
}

static void test_leb(void)
{
	static const uint8_t u[] = { 0xe5, 0x8e, 0x26 };      /* 624485 */
	static const uint8_t sn[] = { 0xc0, 0xbb, 0x78 };     /* -123456 */
	static const uint8_t s2[] = { 0x02, 0x7e };           /* 2, -2 */
	static const uint8_t cut[] = { 0x80, 0x80 };
	static const uint8_t big[] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
				       0xff, 0xff, 0xff, 0xff, 0x01 };
	struct cur c;

	c = cur_make(u, sizeof(u), 0, false);
	CHECK_EQ_U64(cur_uleb(&c), 624485, "ULEB128 624485");
	CHECK(!c.short_read && !cur_left(&c), "... uses all three bytes");
	c = cur_make(sn, sizeof(sn), 0, false);
	CHECK_EQ_U64((uint64_t)cur_sleb(&c), (uint64_t)-123456,
		     "SLEB128 -123456");
	c = cur_make(s2, sizeof(s2), 0, false);
	CHECK(cur_sleb(&c) == 2 && cur_sleb(&c) == -2, "SLEB128 2 and -2");
	c = cur_make(cut, sizeof(cut), 0, false);
	CHECK(cur_uleb(&c) == 0 && c.short_read,
	      "a LEB128 number cut short is a short read");
	c = cur_make(big, sizeof(big), 0, false);
	CHECK(cur_uleb(&c) == 0 && c.short_read,
	      "a LEB128 number over 64 bits is refused");
}

int main(void)
{
	test_reads();
	test_leb();
	test_swap();
	test_short_read();
	test_sub();
	test_cstr();
	return done_testing();
}
