/*
 * test_perfarchive.c - what unwind/perfarchive.c extracts from a tar
 * written here by hand (ustar, uncompressed): the build-id layout of the
 * wanted build-ids and nothing else, zeros as holes, a GNU sparse entry
 * (made by tar -S when GNU tar is there) sparse, and the two size limits
 * failing the archive before anything is left behind.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/harness.h"
#include "unwind/locate.h"
#include "unwind/perfarchive.h"

#define BID "cce7cbd43334a59d2e449e840d5d799e01a2c68c"
#define OTHER "abababababababababababababababababababab"
#define DIR_P "usr/bin/p/" BID

static char tmp[256];

/* Appends one ustar entry: type '0' file, '2' symlink. */
static void tar_entry(FILE *f, const char *name, char type, const char *link,
		      const char *data, size_t size)
{
	unsigned char h[512] = { 0 };
	unsigned sum = 0, i;
	static const char pad[512];

	snprintf((char *)h, 100, "%s", name);
	snprintf((char *)h + 100, 8, "%07o", 0644);
	snprintf((char *)h + 108, 8, "%07o", 0);
	snprintf((char *)h + 116, 8, "%07o", 0);
	snprintf((char *)h + 124, 12, "%011llo",
		 (unsigned long long)(type == '0' ? size : 0));
	snprintf((char *)h + 136, 12, "%011o", 0);
	memset(h + 148, ' ', 8);
	h[156] = (unsigned char)type;
	if (link)
		snprintf((char *)h + 157, 100, "%s", link);
	memcpy(h + 257, "ustar", 6);
	memcpy(h + 263, "00", 2);
	for (i = 0; i < 512; i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06o", sum);
	fwrite(h, 1, 512, f);
	if (type != '0')
		return;
	fwrite(data, 1, size, f);
	fwrite(pad, 1, (512 - size % 512) % 512, f);
}

static char *zeros(size_t size)
{
	return calloc(1, size);
}

/* The test archive: the layout of BID and OTHER, and junk. */
static void make_archive(const char *path)
{
	FILE *f = fopen(path, "w");
	char *elf = zeros(8192), *debug = zeros(1 << 20), *junk = zeros(4096);
	static const char end[1024];

	memcpy(elf, "\177ELF the program", 16);
	memset(debug + (512 << 10), 'd', 4096);   /* one block of data */
	memset(junk, 'j', 4096);
	tar_entry(f, ".build-id/cc/e7cbd43334a59d2e449e840d5d799e01a2c68c",
		  '2', "../../" DIR_P, NULL, 0);
	tar_entry(f, DIR_P "/elf", '0', NULL, elf, 8192);
	tar_entry(f, DIR_P "/debug", '0', NULL, debug, 1 << 20);
	tar_entry(f, DIR_P "/probes", '0', NULL, junk, 4096);
	tar_entry(f, "home/u/junk.img", '0', NULL, junk, 4096);
	tar_entry(f, "usr/lib/q/" OTHER "/elf", '0', NULL, elf, 8192);
	tar_entry(f, ".build-id/ab/ababababababababababababababababababab",
		  '2', "../../usr/lib/q/" OTHER, NULL, 0);
	fwrite(end, 1, sizeof(end), f);
	fclose(f);
	free(elf);
	free(debug);
	free(junk);
}

static bool exists(const char *dir, const char *name, struct stat *st)
{
	char path[1024];
	struct stat s;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return lstat(path, st ? st : &s) == 0;
}

/* Entries named restack-archive.* left in tmp. */
static unsigned leftovers(void)
{
	DIR *d = opendir(tmp);
	struct dirent *e;
	unsigned n = 0;

	while (d && (e = readdir(d)))
		n += !strncmp(e->d_name, "restack-archive.", 16);
	if (d)
		closedir(d);
	return n;
}

static void test_layout(const char *tar)
{
	static const char ids[][41] = { BID };
	struct perfarchive_opts o = { .build_ids = ids, .nr_build_ids = 1 };
	struct perfarchive *a;
	struct stat st;
	struct err err;
	const char *dir;

	a = perfarchive_open(tar, &o, &err);
	if (!CHECK(a != NULL, "the archive opens (%s)", a ? "" : err.msg))
		return;
	dir = perfarchive_dir(a);
	CHECK(exists(dir, ".build-id/cc/e7cbd43334a59d2e449e840d5d799e01a2c68c/"
		      "elf", &st) && st.st_size == 8192,
	      "the wanted build-id's link and elf are there");
	memset(&st, 0, sizeof(st));
	(void)exists(dir, DIR_P "/debug", &st);
	CHECK(st.st_size == 1 << 20, "its debug file has its full size");
	CHECK(st.st_blocks * 512 <= 64 << 10,
	      "... with its zeros as holes (%lld bytes on disk)",
	      (long long)st.st_blocks * 512);
	CHECK(!exists(dir, DIR_P "/probes", NULL), "probes are not extracted");
	CHECK(!exists(dir, "home", NULL), "a path outside the layout is not");
	CHECK(!exists(dir, "usr/lib/q", NULL) &&
	      !exists(dir, ".build-id/ab", NULL),
	      "another build-id's files and link are not");
	perfarchive_close(a);

	a = perfarchive_open(tar, NULL, &err);
	if (!CHECK(a != NULL, "the archive opens without a build-id list"))
		return;
	CHECK(exists(perfarchive_dir(a), "usr/lib/q/" OTHER "/elf", NULL) &&
	      exists(perfarchive_dir(a), ".build-id/ab", NULL) &&
	      !exists(perfarchive_dir(a), "home", NULL),
	      "... then every build-id's files are, still nothing else");
	perfarchive_close(a);
	CHECK_EQ_U64(leftovers(), 0, "closing removes the directory");
}

static void test_limits(const char *tar)
{
	struct perfarchive_opts o = { .max_file = 512 << 10 };
	struct perfarchive *a;
	struct err err;

	a = perfarchive_open(tar, &o, &err);
	CHECK(!a && strstr(err.msg, "entry '" DIR_P "/debug' is 1.0 MiB, "
			   "over the 524288 bytes limit (--archive-max-file)"),
	      "an entry over max_file fails the archive (%s)",
	      a ? "opened" : err.msg);
	perfarchive_close(a);
	CHECK_EQ_U64(leftovers(), 0, "... and leaves nothing behind");

	o.max_file = 0;
	o.max_total = (1 << 20) + 8192 + 4096;   /* junk.img is too much */
	a = perfarchive_open(tar, &o, &err);
	CHECK(!a && strstr(err.msg, "entry 'home/u/junk.img': the archive "
			   "holds more than 1060864 bytes"),
	      "skipped entries count toward max_total (%s)",
	      a ? "opened" : err.msg);
	perfarchive_close(a);
	CHECK_EQ_U64(leftovers(), 0, "... and leaves nothing behind");
}

/* A GNU tar -S archive of a 64 MiB file with 4 KiB of data. */
static void test_sparse(void)
{
	char cmd[2048], src[512], tar[512];
	struct perfarchive *a;
	struct stat st;
	struct err err;
	FILE *f;

	snprintf(src, sizeof(src), "%s/sp/" DIR_P, tmp);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", src);
	if (system(cmd) != 0) {
		CHECK(false, "mkdir for the sparse file");
		return;
	}
	strcat(src, "/debug");
	f = fopen(src, "w");
	if (!f || fseek(f, 32 << 20, SEEK_SET) < 0 || fputs("data", f) < 0 ||
	    ftruncate(fileno(f), 64 << 20) < 0) {
		CHECK(false, "the sparse file is made");
		if (f)
			fclose(f);
		return;
	}
	fclose(f);
	snprintf(tar, sizeof(tar), "%s/sparse.tar", tmp);
	snprintf(cmd, sizeof(cmd),
		 "tar --version 2>/dev/null | grep -q GNU && "
		 "tar -C '%s/sp' -S -cf '%s' usr", tmp, tar);
	if (system(cmd) != 0) {
		printf("skip - a GNU sparse entry stays sparse (no GNU tar)\n");
		return;
	}
	a = perfarchive_open(tar, NULL, &err);
	if (!CHECK(a != NULL, "the sparse archive opens (%s)",
		   a ? "" : err.msg))
		return;
	memset(&st, 0, sizeof(st));
	(void)exists(perfarchive_dir(a), DIR_P "/debug", &st);
	CHECK(st.st_size == 64 << 20 && st.st_blocks * 512 <= 64 << 10,
	      "a GNU sparse entry stays sparse (%lld of %lld bytes on disk)",
	      (long long)st.st_blocks * 512, (long long)st.st_size);
	perfarchive_close(a);
}

int main(void)
{
	const char *t = getenv("TMPDIR");
	char tar[512];

	snprintf(tmp, sizeof(tmp), "%s/test_perfarchive.XXXXXX",
		 t && *t ? t : "/tmp");
	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		return 1;
	}
	setenv("TMPDIR", tmp, 1);
	snprintf(tar, sizeof(tar), "%s/a.tar", tmp);
	make_archive(tar);
	test_layout(tar);
	test_limits(tar);
	test_sparse();
	locate_remove_tree(tmp);
	return done_testing();
}
