/*
 * test_ksyms.c - kernel symbols with and without their on-disk index:
 * the names from a stored index equal those of the parsed file
 * (symtab_load_kallsyms()) at every address around every symbol; an
 * index is made once, read afterwards, and not used once the file
 * changes or the index is cut; a file written less than 2 s ago is not
 * indexed; names a damaged index points outside its names are not used.
 */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tests/harness.h"
#include "unwind/dwcache.h"
#include "unwind/ksyms.h"
#include "unwind/symtab.h"

static char dir[64], kpath[128];

/* Duplicate starts (perf keeps one), types it skips, a module, a line out
 * of order, a short address. */
static const char kallsyms_text[] =
	"ffffffff81000000 T _stext\n"
	"ffffffff81000000 t startup_64\n"
	"ffffffff81000100 W weak_fn\n"
	"ffffffff81000100 T strong_fn\n"
	"ffffffff81000200 t __two_underscores\n"
	"ffffffff81000200 t one_name\n"
	"ffffffff81000300 D some_data\n"
	"ffffffff81000400 r skipped_rodata\n"
	"ffffffff81000500 T last_core\n"
	"ffffffff81000050 T out_of_order\n"
	"ffffffffc0000000 t mod_fn\t[mymod]\n"
	"ffffffffc0000100 T mod_fn2\t[mymod]\n"
	"1000 T short_addr\n";

/* What some addresses are named (perf sizes the first of two symbols at
 * one address 0, so keeps the other). */
static const struct {
	uint64_t addr;
	const char *name, *what;
} named[] = {
	{ 0xffffffff81000000ull, "startup_64", "one of two at one address" },
	{ 0xffffffff81000100ull, "strong_fn", "one of two at another" },
	{ 0xffffffff8100004full, "startup_64", "a line out of order sorted in" },
	{ 0xffffffff81000050ull, "out_of_order", "... and named" },
	{ 0xffffffff81000450ull, "some_data", "skipped types leave no symbol" },
	{ 0xffffffffc0000010ull, "mod_fn", "a module's name ends at its tab" },
	{ 0xffffffff81002000ull, "", "no symbol before module text" },
};

/* Waits out ksyms.c's 2 s for a file's times to settle. */
static void settle(void)
{
	struct timespec t = { 2, 100000000 };

	while (nanosleep(&t, &t) < 0)
		;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	CHECK(f && fputs(text, f) >= 0 && fclose(f) == 0, "write %s", path);
}

/* The name of addr as the parsed table has it, in buf ("" for none). */
static void truth(const struct symtab *t, uint64_t addr, char *buf)
{
	const struct symtab_sym *s = symtab_lookup(t, addr);
	size_t n = s ? symtab_name_len(s) : 0;

	memcpy(buf, s ? s->name : "", n);
	buf[n] = '\0';
}

static void name_of(const struct ksyms *k, uint64_t addr, char *buf)
{
	size_t n = 0;
	const char *p = ksyms_lookup(k, addr, &n);

	memcpy(buf, p ? p : "", p ? n : 0);
	buf[p ? n : 0] = '\0';
}

/* k names every address near every symbol of t as t does. */
static bool same_as(const struct ksyms *k, const struct symtab *t)
{
	static const int64_t near[] = { -1, 0, 1, 0x7f, 0x80, 0xfff, 0x1000 };
	size_t i, j, nr;
	const struct symtab_sym *s = symtab_syms(t, &nr);
	char want[256], got[256];

	for (i = 0; i < nr; i++)
		for (j = 0; j < sizeof(near) / sizeof(near[0]); j++) {
			uint64_t a = s[i].start + (uint64_t)near[j];

			truth(t, a, want);
			name_of(k, a, got);
			if (strcmp(want, got)) {
				DIAG("at %#llx: %s, want %s",
				     (unsigned long long)a, got, want);
				return false;
			}
		}
	return nr > 0;
}

static struct dwcache_counters counts(void)
{
	struct dwcache_counters c;

	dwcache_get_counters(&c);
	return c;
}

/*
 * Points every entry's name far past the names in the indexes under
 * cache_dir (the stored layout, ksyms.c: an 88-byte header, then 24-byte
 * entries with the name's offset at byte 16; the header stays valid).
 */
static void damage_names(const char *cache_dir)
{
	const uint32_t far = 0x7fffffff;
	char pattern[160];
	glob_t g;
	size_t i, e;

	snprintf(pattern, sizeof(pattern), "%s/kallsyms-*.ksyms", cache_dir);
	CHECK(glob(pattern, 0, NULL, &g) == 0, "find the indexes");
	for (i = 0; i < g.gl_pathc; i++) {
		FILE *f = fopen(g.gl_pathv[i], "r+b");

		for (e = 0; f && e < 9; e++)
			if (fseek(f, 88 + 24 * (long)e + 16, SEEK_SET) < 0 ||
			    fwrite(&far, 4, 1, f) != 1)
				break;
		CHECK(f && e == 9 && fclose(f) == 0, "damage %s",
		      g.gl_pathv[i]);
	}
	globfree(&g);
}

/* A load after what: the file's new names, from a new index. */
static void stored_afresh(const char *what)
{
	struct dwcache_counters c0 = counts(), c1;
	struct ksyms *k = ksyms_load(kpath);
	char name[256];

	c1 = counts();
	name_of(k, 0xffffffff81000500ull, name);
	CHECK_STR(name, "last_kore", "%s: the file's names", what);
	CHECK(c1.loaded == c0.loaded && c1.stored == c0.stored + 1,
	      "%s: not read, stored afresh", what);
	ksyms_free(k);
}

int main(void)
{
	struct dwcache_counters c0, c1;
	struct symtab *t;
	struct ksyms *parsed, *stored, *mapped, *k;
	char name[256], cache[128];
	size_t i;

	strcpy(dir, "/tmp/restack-test-ksyms.XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	snprintf(kpath, sizeof(kpath), "%s/kallsyms", dir);
	snprintf(cache, sizeof(cache), "%s/cache", dir);
	write_file(kpath, kallsyms_text);
	settle();
	t = symtab_load_kallsyms(kpath);
	CHECK(t && symtab_count(t) == 9, "the parsed table: 9 symbols");

	dwcache_set_dir(NULL);
	parsed = ksyms_load(kpath);
	CHECK(parsed && same_as(parsed, t), "no cache: the parsed names");
	dwcache_set_dir(cache);
	c0 = counts();
	stored = ksyms_load(kpath);
	c1 = counts();
	CHECK(c1.stored == c0.stored + 1 && c1.loaded == c0.loaded,
	      "first load: the index is stored");
	CHECK(stored && same_as(stored, t), "first load: the parsed names");
	mapped = ksyms_load(kpath);
	c0 = counts();
	CHECK(c0.loaded == c1.loaded + 1 && c0.stored == c1.stored,
	      "second load: the index is read");
	CHECK(mapped && same_as(mapped, t), "from the index: the same names");

	for (i = 0; i < sizeof(named) / sizeof(named[0]); i++) {
		name_of(mapped, named[i].addr, name);
		CHECK_STR(name, named[i].name, "%s", named[i].what);
	}
	ksyms_free(parsed);
	ksyms_free(stored);
	ksyms_free(mapped);

	/*
	 * The file is rewritten in place with the same size, at once (the
	 * same times, where the file system's clock is coarse): its old index
	 * is not used.
	 */
	{
		char changed[sizeof(kallsyms_text)];
		char *p;

		memcpy(changed, kallsyms_text, sizeof(changed));
		p = strstr(changed, "last_core");
		memcpy(p, "last_kore", 9);
		write_file(kpath, changed);
		c0 = counts();
		k = ksyms_load(kpath);
		c1 = counts();
		name_of(k, 0xffffffff81000500ull, name);
		CHECK_STR(name, "last_kore", "a file just written: its names");
		CHECK(c1.stored == c0.stored && c1.loaded == c0.loaded,
		      "a file just written: not indexed yet");
		ksyms_free(k);
		settle();
	}
	stored_afresh("a rewritten file");

	/* a cut index is not used (and is stored again) */
	{
		char cmd[512];

		snprintf(cmd, sizeof(cmd),
			 "for f in %s/kallsyms-*.ksyms; do "
			 "truncate -s 100 \"$f\"; done", cache);
		CHECK(system(cmd) == 0, "cut the indexes");
	}
	stored_afresh("a cut index");
	c0 = counts();
	k = ksyms_load(kpath);
	CHECK(k && counts().loaded == c0.loaded + 1, "then read again");
	ksyms_free(k);
	damage_names(cache);
	k = ksyms_load(kpath);
	{
		size_t len;

		CHECK(k && !ksyms_lookup(k, 0xffffffff81000050ull, &len),
		      "an index whose names point past its end: no name");
	}
	ksyms_free(k);
	symtab_free(t);

	{
		char cmd[256];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		CHECK(system(cmd) == 0, "remove %s", dir);
	}
	return done_testing();
}
