/*
 * test_apk.c - stored entries of a zip (an APK) found by name and by
 * offset, compressed entries and damaged directories refused; build-ids
 * shorter than 20 bytes matched with their zero padding.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/harness.h"
#include "unwind/apk.h"
#include "unwind/module.h"

static uint8_t zip[4096];
static size_t zlen;

static void put16(uint8_t *p, unsigned v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, v & 0xffff);
	put16(p + 2, v >> 16);
}

struct ent {
	const char *name;
	const char *data;
	unsigned method;
	uint32_t local;
};

/* A zip of ents: local headers and data, central directory, end record. */
static void build(struct ent *e, unsigned n, const char *comment)
{
	uint32_t cd;
	unsigned i;

	zlen = 0;
	for (i = 0; i < n; i++) {
		size_t nl = strlen(e[i].name), dl = strlen(e[i].data);
		uint8_t *h = zip + zlen;

		memset(h, 0, 30);
		put32(h, 0x04034b50);
		put16(h + 8, e[i].method);
		put32(h + 18, (uint32_t)dl);
		put32(h + 22, (uint32_t)dl);
		put16(h + 26, (unsigned)nl);
		put16(h + 28, 3);  /* extra: alignment padding */
		e[i].local = (uint32_t)zlen;
		memcpy(h + 30, e[i].name, nl);
		memset(h + 30 + nl, 0, 3);
		memcpy(h + 33 + nl, e[i].data, dl);
		zlen += 33 + nl + dl;
	}
	cd = (uint32_t)zlen;
	for (i = 0; i < n; i++) {
		size_t nl = strlen(e[i].name), dl = strlen(e[i].data);
		uint8_t *h = zip + zlen;

		memset(h, 0, 46);
		put32(h, 0x02014b50);
		put16(h + 10, e[i].method);
		put32(h + 20, (uint32_t)dl);
		put32(h + 24, (uint32_t)dl);
		put16(h + 28, (unsigned)nl);
		put32(h + 42, e[i].local);
		memcpy(h + 46, e[i].name, nl);
		zlen += 46 + nl;
	}
	memset(zip + zlen, 0, 22);
	put32(zip + zlen, 0x06054b50);
	put16(zip + zlen + 8, n);
	put16(zip + zlen + 10, n);
	put32(zip + zlen + 12, (uint32_t)(zlen - cd));
	put32(zip + zlen + 16, cd);
	put16(zip + zlen + 20, (unsigned)strlen(comment));
	memcpy(zip + zlen + 22, comment, strlen(comment));
	zlen += 22 + strlen(comment);
}

static int to_file(void)
{
	char tmpl[] = "/tmp/test_apk.XXXXXX";
	int fd = mkstemp(tmpl);

	if (fd < 0)
		return -1;
	unlink(tmpl);
	if (write(fd, zip, zlen) != (ssize_t)zlen) {
		close(fd);
		return -1;
	}
	return fd;
}

static void test_find(void)
{
	struct ent e[] = {
		{ "AndroidManifest.xml", "<manifest/>", 8, 0 },
		{ "lib/arm64-v8a/libfoo.so", "\177ELF-foo-bytes", 0, 0 },
		{ "lib/arm64-v8a/libbar.so", "\177ELF-bar", 0, 0 },
	};
	uint64_t off = 0, size = 0, foo;
	int fd;

	build(e, 3, "a comment");
	fd = to_file();
	CHECK(fd >= 0, "zip written");
	CHECK(apk_find(fd, zlen, "lib/arm64-v8a/libfoo.so", 0, &off,
		       &size) == 0, "an entry by name");
	foo = e[1].local + 30 + strlen(e[1].name) + 3;
	CHECK_EQ_U64(off, foo, "its data offset");
	CHECK_EQ_U64(size, strlen(e[1].data), "its size");
	CHECK(!memcmp(zip + off, "\177ELF-foo", 8), "its bytes");
	off = size = 0;
	CHECK(apk_find(fd, zlen, NULL, foo + 5, &off, &size) == 0 &&
	      off == foo, "the entry holding an offset");
	CHECK(apk_find(fd, zlen, NULL, e[2].local + 2, &off, &size) < 0,
	      "an offset in a local header is in no entry's data");
	CHECK(apk_find(fd, zlen, "AndroidManifest.xml", 0, &off, &size) < 0,
	      "a compressed entry is refused");
	CHECK(apk_find(fd, zlen, "lib/arm64-v8a/libfoo", 0, &off, &size) < 0,
	      "no such entry");
	CHECK(apk_find(fd, zlen - 1, "lib/arm64-v8a/libfoo.so", 0, &off,
		       &size) < 0, "a cut end record is refused");
	close(fd);

	build(e, 3, "");
	put32(zip + zlen - 6, 4000);    /* directory offset past the end */
	fd = to_file();
	CHECK(apk_find(fd, zlen, "lib/arm64-v8a/libfoo.so", 0, &off,
		       &size) < 0, "a directory past the end is refused");
	close(fd);

	build(e, 3, "");
	put32(zip + e[2].local + 22, 100000);
	put32(zip + zlen - 22 - 46 - strlen(e[2].name) + 24, 100000);
	put32(zip + zlen - 22 - 46 - strlen(e[2].name) + 20, 100000);
	fd = to_file();
	CHECK(apk_find(fd, zlen, "lib/arm64-v8a/libbar.so", 0, &off,
		       &size) < 0, "an entry running past the end is refused");
	close(fd);
}

static void test_split(void)
{
	size_t len = 0;
	const char *entry = NULL;

	CHECK(apk_split("/data/app/x/base.apk!/lib/arm64-v8a/libfoo.so", &len,
			&entry) && len == strlen("/data/app/x/base.apk") &&
	      !strcmp(entry, "lib/arm64-v8a/libfoo.so"), "base.apk!/entry");
	CHECK(apk_split("/data/app/x/base.apk", &len, &entry) &&
	      len == strlen("/data/app/x/base.apk") && !entry, "plain APK");
	CHECK(!apk_split("/usr/lib/libc.so.6", &len, &entry), "no APK");
	CHECK(!apk_split("/a.apk!/", &len, &entry), "no entry name");
}

static void test_build_id(void)
{
	uint8_t want[20], have[20];

	memset(want, 0, sizeof(want));
	memcpy(want, "0123456789abcdef", 16);
	memcpy(have, want, 20);
	CHECK(module_build_id_match(want, 20, have, 16),
	      "16 bytes padded to 20 match");
	CHECK(module_build_id_match(want, 16, have, 16), "16 bytes as 16");
	CHECK(!module_build_id_match(want, 16, have, 20),
	      "a longer file id does not");
	want[18] = 1;
	CHECK(!module_build_id_match(want, 20, have, 16),
	      "padding that is not zero does not");
	want[18] = 0;
	have[3] ^= 1;
	CHECK(!module_build_id_match(want, 20, have, 16), "other bytes");
	CHECK(!module_build_id_match(want, 20, have, 0), "no id");
	CHECK_EQ_U64(module_build_id_name_size(want, 20), 16,
		     "a padded id is named by 16 bytes");
	want[19] = 7;
	CHECK_EQ_U64(module_build_id_name_size(want, 20), 20,
		     "a full one by 20");
}

int main(void)
{
	test_find();
	test_split();
	test_build_id();
	return done_testing();
}
