/*
 * test_gzpar.c - formats/gzpar.h: the file zlib's own gzip decoder reads
 * back is the text given, whatever the pieces it came in (empty, a byte,
 * exactly a block, several blocks at once), with and without the thread,
 * which give the same bytes; a failed write fails the file.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "formats/gzpar.h"
#include "tests/harness.h"

/* Text that compresses somewhat, like JSON: numbers and repeats. */
static void text_make(struct strbuf *sb, size_t len, uint64_t seed)
{
	while (sb->len < len) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		if ((seed >> 60) < 4)
			strbuf_addstr(sb, "\"frameTable\":{\"address\":[");
		strbuf_addu(sb, (seed >> 33) % ((seed >> 62) ? 1000 : 1000000));
		strbuf_addch(sb, ',');
	}
	sb->len = len;
}

/*
 * Writes text through gzpar to a temporary file in pieces of the sizes
 * in cuts (cycled; 0 = the rest at finish), returns the file's bytes.
 */
static unsigned char *gz_run(const struct strbuf *text, const size_t *cuts,
			     size_t nr_cuts, bool thread, size_t *len)
{
	char path[] = "/tmp/test_gzpar.XXXXXX";
	int fd = mkstemp(path);
	struct strbuf sb = STRBUF_INIT;
	struct err err;
	struct gzpar *g;
	unsigned char *buf = NULL;
	size_t at = 0, i = 0;
	off_t end;

	if (fd < 0)
		return NULL;
	unlink(path);
	g = gzpar_open(fd, "test", thread, &err);
	if (!g)
		goto out;
	while (at < text->len && nr_cuts && cuts[i % nr_cuts]) {
		size_t n = cuts[i++ % nr_cuts];

		n = n < text->len - at ? n : text->len - at;
		strbuf_add(&sb, text->buf + at, n);
		at += n;
		if (gzpar_write(g, &sb) < 0) {
			gzpar_finish(g, &sb);
			goto out;
		}
	}
	if (at < text->len)
		strbuf_add(&sb, text->buf + at, text->len - at);
	if (gzpar_finish(g, &sb) < 0)
		goto out;
	end = lseek(fd, 0, SEEK_END);
	buf = malloc((size_t)end + 1);
	if (buf && pread(fd, buf, (size_t)end, 0) != end) {
		free(buf);
		buf = NULL;
	}
	*len = (size_t)end;
out:
	strbuf_release(&sb);
	close(fd);
	return buf;
}

/* Whether zlib's gzip decoder gives text back from gz, whole. */
static bool gz_reads_back(const unsigned char *gz, size_t len,
			  const struct strbuf *text)
{
	z_stream z = { 0 };
	unsigned char *out = malloc(text->len + 16);
	bool ok;
	int rc;

	if (!out || inflateInit2(&z, 15 + 16) != Z_OK) {
		free(out);
		return false;
	}
	z.next_in = (unsigned char *)gz;
	z.avail_in = (uInt)len;
	z.next_out = out;
	z.avail_out = (uInt)text->len + 16;
	rc = inflate(&z, Z_FINISH);
	ok = rc == Z_STREAM_END && z.avail_in == 0 &&
	     z.total_out == text->len &&
	     (!text->len || !memcmp(out, text->buf, text->len));
	if (!ok)
		DIAG("inflate %d, %lu of %zu bytes, %u left over", rc,
		     z.total_out, text->len, z.avail_in);
	inflateEnd(&z);
	free(out);
	return ok;
}

static void test_pieces(void)
{
	static const struct {
		size_t len;
		size_t cuts[3];
		const char *what;
	} cases[] = {
		{ 0, { 0 }, "empty text" },
		{ 1, { 0 }, "one byte" },
		{ 100000, { 65536, 0 }, "less than a block" },
		{ GZPAR_BLOCK, { GZPAR_BLOCK, 0 }, "exactly a block" },
		{ GZPAR_BLOCK + 1, { GZPAR_BLOCK, 0 }, "a block and a byte" },
		{ 3000000, { 65536, 0 }, "many blocks, in 64 KiB pieces" },
		{ 3000000, { 7, 100003, 1 }, "many blocks, in odd pieces" },
		{ 2500000, { 3 * GZPAR_BLOCK, 0 }, "three blocks at once" },
		{ 5000, { 1, 0 }, "a byte at a time" },
	};
	unsigned i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct strbuf text = STRBUF_INIT;
		size_t nc = 0, l1 = 0, l2 = 0;
		unsigned char *a, *b;

		text_make(&text, cases[i].len, i + 1);
		while (nc < 3 && cases[i].cuts[nc])
			nc++;
		a = gz_run(&text, cases[i].cuts, nc, true, &l1);
		b = gz_run(&text, cases[i].cuts, nc, false, &l2);
		CHECK(a && gz_reads_back(a, l1, &text),
		      "%s: zlib reads the text back (%zu -> %zu bytes)",
		      cases[i].what, text.len, l1);
		CHECK(a && b && l1 == l2 && !memcmp(a, b, l1),
		      "%s: the same bytes without the thread", cases[i].what);
		free(a);
		free(b);
		strbuf_release(&text);
	}
}

/* A file that cannot be written fails, with the error's name. */
static void test_write_fails(void)
{
	struct strbuf text = STRBUF_INIT, sb = STRBUF_INIT;
	struct err err = { 0 };
	int fd = open("/dev/full", O_WRONLY);
	struct gzpar *g;
	int rc = 0;

	if (fd < 0) {
		SKIP("no /dev/full", "a failed write");
		return;
	}
	text_make(&text, 2000000, 7);
	g = gzpar_open(fd, "test profile", true, &err);
	CHECK(g != NULL, "opens on /dev/full");
	if (g) {
		strbuf_add(&sb, text.buf, text.len);
		rc |= gzpar_write(g, &sb);
		rc |= gzpar_finish(g, &sb);
	}
	CHECK(rc < 0, "the write fails");
	CHECK(strstr(err.msg, "test profile") != NULL, "naming it: %s",
	      err.msg);
	close(fd);
	strbuf_release(&sb);
	strbuf_release(&text);
}

int main(void)
{
	test_pieces();
	test_write_fails();
	return done_testing();
}
