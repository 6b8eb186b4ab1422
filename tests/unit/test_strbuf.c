/*
 * test_strbuf.c - common/strbuf.h: strbuf_addu() and strbuf_addi() give
 * printf's "%llu" and "%lld" text, at the edges and on many values.
 */
#include <inttypes.h>
#include <stdio.h>

#include "common/strbuf.h"
#include "tests/harness.h"

/* Whether addu and addi of v give what snprintf gives. */
static bool strbuf_same(uint64_t v)
{
	struct strbuf sb = STRBUF_INIT;
	char want[64];
	bool ok;

	strbuf_addu(&sb, v);
	strbuf_addch(&sb, ' ');
	strbuf_addi(&sb, (int64_t)v);
	snprintf(want, sizeof(want), "%" PRIu64 " %" PRId64, v, (int64_t)v);
	ok = !strcmp(strbuf_str(&sb), want);
	if (!ok)
		DIAG("got '%s', want '%s'", strbuf_str(&sb), want);
	strbuf_release(&sb);
	return ok;
}

static void test_edges(void)
{
	static const uint64_t v[] = {
		0, 1, 9, 10, 99, 100, 4294967295u, 4294967296u,
		9999999999999999999u, 10000000000000000000u,
		(uint64_t)INT64_MAX, (uint64_t)INT64_MAX + 1, UINT64_MAX,
		UINT64_MAX - 1,
	};
	unsigned i;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		CHECK(strbuf_same(v[i]), "value %" PRIu64 " as printf", v[i]);
}

static void test_many(void)
{
	uint64_t x = 0x9e3779b97f4a7c15u;
	unsigned i, bad = 0;

	/* every length of number, both signs */
	for (i = 0; i < 100000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		bad += !strbuf_same(x >> (i % 64));
	}
	CHECK_EQ_U64(bad, 0, "100000 values of every length as printf");
}

static void test_appends(void)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_addstr(&sb, "a=");
	strbuf_addu(&sb, 42);
	strbuf_addstr(&sb, ",b=");
	strbuf_addi(&sb, -7);
	CHECK_STR(strbuf_str(&sb), "a=42,b=-7", "numbers append to the text");
	CHECK(!sb.oom, "no allocation failed");
	strbuf_release(&sb);
}

int main(void)
{
	test_edges();
	test_many();
	test_appends();
	return done_testing();
}
