/*
 * test_symbundle.c - names a capture carries (sysprof's __symbols__):
 * ranges per process, their ends, entries added out of order, empty and
 * wrapping ranges, names copied.
 */
#include <string.h>

#include "tests/harness.h"
#include "unwind/symbundle.h"

static const char *name_at(struct symbundle *b, int32_t pid, uint64_t addr)
{
	const struct symbundle_sym *s = symbundle_lookup(b, pid, addr);

	return s ? s->name : "(none)";
}

int main(void)
{
	struct symbundle b;
	char buf[16];

	symbundle_init(&b);
	CHECK_STR(name_at(&b, 1, 0x1000), "(none)", "empty bundle");
	strcpy(buf, "second");
	CHECK(symbundle_add(&b, 1, 0x2000, 0x10, buf) == 0, "add");
	strcpy(buf, "clobbered");
	CHECK(symbundle_add(&b, 1, 0x1000, 1, "first") == 0 &&
	      symbundle_add(&b, 2, 0x1000, 0x2000, "other pid") == 0,
	      "add out of order, another process");
	CHECK(symbundle_add(&b, 1, 0x3000, 0, "empty") == 0 &&
	      symbundle_add(&b, 1, UINT64_MAX - 4, 10, "wraps") == 0,
	      "empty and wrapping ranges are left out, not errors");
	CHECK_EQ_U64(b.entries, 3, "three entries kept");
	CHECK_STR(name_at(&b, 1, 0x1000), "first", "a one-byte range");
	CHECK_STR(name_at(&b, 1, 0x1001), "(none)", "... ends after it");
	CHECK_STR(name_at(&b, 1, 0xfff), "(none)", "... starts at it");
	CHECK_STR(name_at(&b, 1, 0x2000), "second",
		  "the name is the bundle's copy");
	CHECK_STR(name_at(&b, 1, 0x200f), "second", "last address");
	CHECK_STR(name_at(&b, 1, 0x2010), "(none)", "end excluded");
	CHECK_STR(name_at(&b, 2, 0x2000), "other pid", "per process");
	CHECK_STR(name_at(&b, 3, 0x2000), "(none)", "unknown process");
	CHECK_STR(name_at(&b, 1, UINT64_MAX), "(none)", "top address");
	symbundle_release(&b);
	return done_testing();
}
