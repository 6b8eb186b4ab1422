/*
 * test_dbgd.c - the debuginfod prefetch (unwind/dbgd.c) against a
 * file:// "server" (libdebuginfod reads <dir>/buildid/<id>/<kind>), and
 * the lookup order of unwind/locate.c.
 *
 * Many lookups run through several helper processes at once; found ones
 * must come back with their bytes, missing ones as "not found" without a
 * negative entry left in the client cache, and an entry the client left
 * there earlier must not hide a file that is now available.  A file over
 * the size limit is refused as too large, and an answer that is not ELF
 * says what it was and leaves the cache.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/harness.h"
#include "unwind/dbgd.h"
#include "unwind/locate.h"
#include "unwind/module.h"

#define NR_IDS 24
#define NR_PRESENT 16

static char tmp[256];

static void make_id(unsigned i, uint8_t *bid)
{
	unsigned k;

	for (k = 0; k < 20; k++)
		bid[k] = (uint8_t)(0x40 + i * 7 + k);
}

static int write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

static void mkdirs(const char *path)
{
	char buf[512], *p;

	snprintf(buf, sizeof(buf), "%s", path);
	for (p = buf + 1; *p; p++) {
		if (*p == '/') {
			*p = '\0';
			mkdir(buf, 0755);
			*p = '/';
		}
	}
	mkdir(buf, 0755);
}

static bool file_is(const char *path, const char *text)
{
	char buf[128] = "";
	FILE *f = path ? fopen(path, "r") : NULL;
	size_t n;

	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return !strcmp(buf, text);
}

static void test_fetch(void)
{
	struct dbgd_want wants[NR_IDS];
	struct dbgd_opts o = { .jobs = 6 };
	char urls[300], cache[300], path[512], hex[41], text[64];
	const struct dbgd_summary *s;
	struct dbgd *d;
	struct err err;
	unsigned i, found = 0, missing = 0, negative = 0;
	const char *why;

	snprintf(urls, sizeof(urls), "file://%s/srv", tmp);
	snprintf(cache, sizeof(cache), "%s/cache", tmp);
	o.urls = urls;
	setenv("DEBUGINFOD_CACHE_PATH", cache, 1);
	memset(wants, 0, sizeof(wants));
	for (i = 0; i < NR_IDS; i++) {
		make_id(i, wants[i].bid);
		wants[i].size = 20;
		wants[i].name = "test";
		wants[i].exe = DBGD_NEED_ALWAYS;
		wants[i].debug = i % 2 ? DBGD_NEED_ALWAYS : DBGD_NEED_NONE;
		module_build_id_hex(wants[i].bid, 20, hex);
		if (i >= NR_PRESENT)
			continue;
		snprintf(path, sizeof(path), "%s/srv/buildid/%s", tmp, hex);
		mkdirs(path);
		snprintf(path, sizeof(path), "%s/srv/buildid/%s/executable",
			 tmp, hex);
		snprintf(text, sizeof(text), "\177ELF exe %u", i);
		write_file(path, text);
		snprintf(path, sizeof(path), "%s/srv/buildid/%s/debuginfo",
			 tmp, hex);
		snprintf(text, sizeof(text), "\177ELF debug %u", i);
		write_file(path, text);
	}
	/* A negative entry the client made in some earlier run. */
	module_build_id_hex(wants[3].bid, 20, hex);
	snprintf(path, sizeof(path), "%s/%s", cache, hex);
	mkdirs(path);
	snprintf(path, sizeof(path), "%s/%s/executable", cache, hex);
	write_file(path, "");

	d = dbgd_fetch(wants, NR_IDS, &o, &err);
	if (!CHECK(d != NULL, "dbgd_fetch runs (%s)", d ? "" : err.msg))
		return;
	for (i = 0; i < NR_IDS; i++) {
		const char *p = dbgd_result(d, wants[i].bid, 20,
					    DBGD_EXECUTABLE, &why);
		struct stat st;

		snprintf(text, sizeof(text), "\177ELF exe %u", i);
		if (i < NR_PRESENT ? file_is(p, text) :
				     !p && !strcmp(why, "not found on the "
							"debuginfod servers"))
			i < NR_PRESENT ? found++ : missing++;
		module_build_id_hex(wants[i].bid, 20, hex);
		snprintf(path, sizeof(path), "%s/%s/executable", cache, hex);
		if (stat(path, &st) == 0 && st.st_size == 0)
			negative++;
	}
	CHECK_EQ_U64(found, NR_PRESENT, "every present executable fetched, "
		     "with its bytes (the stale negative entry of #3 too)");
	CHECK_EQ_U64(missing, NR_IDS - NR_PRESENT,
		     "every absent one reported not found");
	CHECK_EQ_U64(negative, 0, "no negative entries left in the cache");
	CHECK(file_is(dbgd_result(d, wants[5].bid, 20, DBGD_DEBUGINFO, NULL),
		      "\177ELF debug 5"), "debuginfo fetched where asked for");
	CHECK(!dbgd_result(d, wants[4].bid, 20, DBGD_DEBUGINFO, &why) &&
	      !strcmp(why, "not looked up on debuginfod"),
	      "debuginfo not fetched where not asked for");
	CHECK(!dbgd_result(d, wants[NR_PRESENT + 1].bid, 20, DBGD_DEBUGINFO,
			   NULL),
	      "no debuginfo lookup for a missing executable");
	s = dbgd_summary(d);
	CHECK_EQ_U64(s->lookups, NR_IDS + NR_PRESENT / 2,
		     "lookups: every executable, debuginfo for odd ids found");
	CHECK_EQ_U64(s->downloaded + s->cached, NR_PRESENT + NR_PRESENT / 2,
		     "found ones counted");
	CHECK_EQ_U64(s->not_found, NR_IDS - NR_PRESENT, "misses counted");
	dbgd_free(d);

	/* Now the server has them all: the misses did not stick. */
	for (i = NR_PRESENT; i < NR_IDS; i++) {
		module_build_id_hex(wants[i].bid, 20, hex);
		snprintf(path, sizeof(path), "%s/srv/buildid/%s", tmp, hex);
		mkdirs(path);
		snprintf(path, sizeof(path), "%s/srv/buildid/%s/executable",
			 tmp, hex);
		snprintf(text, sizeof(text), "\177ELF exe %u", i);
		write_file(path, text);
	}
	d = dbgd_fetch(wants, NR_IDS, &o, &err);
	if (!CHECK(d != NULL, "dbgd_fetch runs again"))
		return;
	found = 0;
	for (i = 0; i < NR_IDS; i++) {
		snprintf(text, sizeof(text), "\177ELF exe %u", i);
		found += file_is(dbgd_result(d, wants[i].bid, 20,
					     DBGD_EXECUTABLE, NULL), text);
	}
	CHECK_EQ_U64(found, NR_IDS, "a later run finds what an earlier "
		     "run missed");
	CHECK_EQ_U64(dbgd_summary(d)->cached, NR_PRESENT + NR_PRESENT / 2,
		     "what the first run fetched comes from the client cache");
	dbgd_free(d);

	/* No URLs: nothing is looked up, quickly. */
	o.urls = "";
	d = dbgd_fetch(wants, NR_IDS, &o, &err);
	CHECK(d && !dbgd_summary(d)->lookups &&
	      !dbgd_result(d, wants[0].bid, 20, DBGD_EXECUTABLE, NULL),
	      "no URLs: no lookups");
	dbgd_free(d);
}

/* Writes the executable of build-id i to the file:// server. */
static void serve_exe(unsigned i, const char *text)
{
	char path[512], hex[41];
	uint8_t bid[20];

	make_id(i, bid);
	module_build_id_hex(bid, 20, hex);
	snprintf(path, sizeof(path), "%s/srv2/buildid/%s", tmp, hex);
	mkdirs(path);
	snprintf(path, sizeof(path), "%s/srv2/buildid/%s/executable", tmp,
		 hex);
	write_file(path, text);
}

static void test_bad_answers(void)
{
	struct dbgd_want wants[3];
	struct dbgd_opts o = { .jobs = 2, .maxsize = 4096 };
	char urls[300], cache[300], path[512], hex[41], big[6000];
	const char *p, *why = "";
	struct dbgd *d;
	struct err err;
	struct stat st;
	unsigned i;

	snprintf(urls, sizeof(urls), "file://%s/srv2", tmp);
	snprintf(cache, sizeof(cache), "%s/cache2", tmp);
	o.urls = urls;
	setenv("DEBUGINFOD_CACHE_PATH", cache, 1);
	memset(wants, 0, sizeof(wants));
	for (i = 0; i < 3; i++) {
		make_id(100 + i, wants[i].bid);
		wants[i].size = 20;
		wants[i].name = "test";
		wants[i].exe = DBGD_NEED_ALWAYS;
		wants[i].debug = DBGD_NEED_ALWAYS;
	}
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	memcpy(big, "\177ELF", 4);
	serve_exe(100, big);                      /* 5999 bytes */
	serve_exe(101, "<!DOCTYPE html><p>no such file</p>\n");
	serve_exe(102, "\177ELF small");
	d = dbgd_fetch(wants, 3, &o, &err);
	if (!CHECK(d != NULL, "dbgd_fetch runs (%s)", d ? "" : err.msg))
		return;
	p = dbgd_result(d, wants[0].bid, 20, DBGD_EXECUTABLE, &why);
	CHECK(!p && strstr(why, "too large (over 4096 bytes)"),
	      "a file over the limit is too large (%s)", why);
	module_build_id_hex(wants[0].bid, 20, hex);
	snprintf(path, sizeof(path), "%s/%s/executable", cache, hex);
	CHECK(stat(path, &st) < 0, "... and is not in the client cache");
	p = dbgd_result(d, wants[1].bid, 20, DBGD_EXECUTABLE, &why);
	CHECK(!p && !strcmp(why, "debuginfod answered with something that "
			    "is not an ELF file (it starts with '<!DOCTYP')"),
	      "a non-ELF answer says what it was (%s)", why);
	module_build_id_hex(wants[1].bid, 20, hex);
	snprintf(path, sizeof(path), "%s/%s/executable", cache, hex);
	CHECK(stat(path, &st) < 0, "... and leaves the client cache");
	CHECK(!dbgd_result(d, wants[1].bid, 20, DBGD_DEBUGINFO, &why) &&
	      !strcmp(why, "not looked up on debuginfod"),
	      "... and its debuginfo is not looked up");
	CHECK(file_is(dbgd_result(d, wants[2].bid, 20, DBGD_EXECUTABLE,
				  NULL), "\177ELF small"),
	      "a file under the limit is fetched");
	CHECK_EQ_U64(dbgd_summary(d)->failed, 2, "both counted as failed");
	dbgd_free(d);
}

/* Whether /usr/lib/x.so's candidates of kind are "PATH FROM" of want. */
static bool locate_order_is(const struct locate_opts *o,
			    enum locate_kind kind, const uint8_t *bid,
			    const char *const *want, unsigned nr_want)
{
	struct locate_iter it = { 0 };
	char path[256], got[320];
	const char *from;
	unsigned n = 0;
	bool same = true;

	while (locate_next(o, kind, "/usr/lib/x.so", bid, 3, &it, path,
			   sizeof(path), &from)) {
		snprintf(got, sizeof(got), "%s %s", path, from);
		if (n >= nr_want || strcmp(got, want[n])) {
			DIAG("candidate %u: %s", n, got);
			same = false;
		}
		n++;
	}
	return same && n == nr_want;
}

static void test_locate_order(void)
{
	static const struct locate_dir dirs[] = {
		{ "/c1", "build-id cache" }, { "/arch", "perf archive" },
	};
	static const char *const debug_dirs[] = { "/dd", "/usr/lib/debug" };
	struct locate_opts o = {
		.symfs = "/root", .buildid_dirs = dirs, .nr_buildid_dirs = 2,
		.debug_dirs = debug_dirs, .nr_debug_dirs = 2,
	};
	static const char *const want_exe[] = {
		"/root/usr/lib/x.so --symfs",
		"/usr/lib/x.so recorded path",
		"/c1/.build-id/ab/cdef/elf build-id cache",
		"/c1/.build-id/ab/cdef/vdso build-id cache",
		"/c1/.build-id/ab/cdef build-id cache",
		"/arch/.build-id/ab/cdef/elf perf archive",
		"/arch/.build-id/ab/cdef/vdso perf archive",
		"/arch/.build-id/ab/cdef perf archive",
		"/dd/.build-id/ab/cdef debuginfo directory",
		"/usr/lib/debug/.build-id/ab/cdef debuginfo directory",
	};
	static const char *const want_debug[] = {
		"/c1/.build-id/ab/cdef/debug build-id cache",
		"/arch/.build-id/ab/cdef/debug perf archive",
		"/dd/.build-id/ab/cdef.debug debuginfo directory",
		"/usr/lib/debug/.build-id/ab/cdef.debug debuginfo directory",
	};
	const uint8_t bid[3] = { 0xab, 0xcd, 0xef };
	struct locate_iter it = { 0 };
	char path[256];
	const char *from;
	unsigned n = 0;

	CHECK(locate_order_is(&o, LOCATE_EXE, bid, want_exe,
			      ARRAY_SIZE(want_exe)),
	      "executable candidates in lookup order");
	CHECK(locate_order_is(&o, LOCATE_DEBUG, bid, want_debug,
			      ARRAY_SIZE(want_debug)),
	      "debuginfo candidates in lookup order");
	while (locate_next(&o, LOCATE_EXE, "/usr/lib/x.so", bid, 0, &it, path,
			   sizeof(path), &from))
		n++;
	CHECK_EQ_U64(n, 2, "without a build-id only the recorded paths");
}

int main(void)
{
	const char *t = getenv("TMPDIR");

	snprintf(tmp, sizeof(tmp), "%s/test_dbgd.XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		return 1;
	}
	unsetenv("DEBUGINFOD_URLS");
	setenv("DEBUGINFOD_TIMEOUT", "5", 1);
	test_locate_order();
	test_fetch();
	test_bad_answers();
	locate_remove_tree(tmp);
	return done_testing();
}
