/*
 * test_sigclean.c - sigclean_run() removes what was registered and only
 * that: a temporary file, a whole tree (deep, wide, with links, which it
 * never follows), not a path whose registration was dropped, and it works
 * with every slot taken.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/harness.h"

#include "common/sigclean.h"

static char base[PATH_MAX];

/* out (PATH_MAX bytes) = the formatted path */
static void pathf(char *out, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void pathf(char *out, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(out, PATH_MAX, fmt, ap);
	va_end(ap);
}

static bool exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

static void touch(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd >= 0)
		close(fd);
}

/* dir/d0/d1/.../d<depth-1>, each level with a file, returns the leaf */
static void deep(const char *dir, int depth, char *leaf)
{
	int i;

	strcpy(leaf, dir);
	for (i = 0; i < depth; i++) {
		size_t len = strlen(leaf);

		snprintf(leaf + len, PATH_MAX - len, "/d%d", i);
		mkdir(leaf, 0755);
		len = strlen(leaf);
		snprintf(leaf + len, PATH_MAX - len, "/f");
		touch(leaf);
		leaf[len] = '\0';
	}
}

int main(void)
{
	char file[PATH_MAX], kept[PATH_MAX], tree[PATH_MAX], outside[PATH_MAX];
	char path[PATH_MAX], leaf[PATH_MAX], spare[SIGCLEAN_SLOTS][PATH_MAX];
	int fd, id, kept_id, i, n;

	pathf(base, "%s/test_sigclean.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(base))
		return 1;

	pathf(file, "%s/out.tmp.XXXXXX", base);
	fd = sigclean_mkstemp(file, &id);
	CHECK(fd >= 0 && id > 0, "sigclean_mkstemp() makes a file");
	close(fd);
	pathf(kept, "%s/kept.tmp.XXXXXX", base);
	fd = sigclean_mkstemp(kept, &kept_id);
	close(fd);
	sigclean_del(kept_id);

	/* a directory outside the tree that links in the tree point to */
	pathf(outside, "%s/outside", base);
	mkdir(outside, 0755);
	pathf(path, "%s/precious", outside);
	touch(path);

	pathf(tree, "%s/restack-archive.XXXXXX", base);
	CHECK(sigclean_mkdtemp(tree, &id) && id > 0,
	      "sigclean_mkdtemp() makes a directory");
	deep(tree, 100, leaf);   /* deeper than the handler descends */
	pathf(path, "%s/wide", tree);
	mkdir(path, 0755);
	for (i = 0; i < 3000; i++) {
		pathf(path, "%s/wide/entry-with-a-long-name-%05d", tree, i);
		touch(path);
	}
	pathf(path, "%s/link-to-outside", tree);
	CHECK(symlink(outside, path) == 0, "a link to outside the tree");
	pathf(path, "%s/wide/link-to-file", tree);
	CHECK(symlink("../../outside/precious", path) == 0,
	      "a link to a file outside the tree");

	/* every other slot taken: then the table is full */
	for (n = 0; n < SIGCLEAN_SLOTS; n++) {
		pathf(spare[n], "%s/spare.XXXXXX", base);
		fd = sigclean_mkstemp(spare[n], &id);
		if (fd < 0)
			break;
		close(fd);
	}
	CHECK(n == SIGCLEAN_SLOTS - 2 && errno == ENOSPC,
	      "%d more slots, then ENOSPC (got %d)", SIGCLEAN_SLOTS - 2, n);

	sigclean_run();

	CHECK(!exists(file), "the registered file is removed");
	CHECK(exists(kept), "a file whose registration was dropped stays");
	for (i = 0; i < n; i++)
		if (exists(spare[i]))
			break;
	CHECK(i == n, "every slot's file is removed");
	CHECK(!exists(tree) || exists(leaf),
	      "the tree is removed (or only what is below the depth limit "
	      "stays)");
	pathf(path, "%s/wide", tree);
	CHECK(!exists(path), "a directory of 3000 entries is removed");
	pathf(path, "%s/d0/d1/d2/d3/d4/d5/d6/d7/d8/d9/f", tree);
	CHECK(!exists(path), "files ten levels down are removed");
	pathf(path, "%s/precious", outside);
	CHECK(exists(path), "links are removed, not followed");

	unlink(kept);
	pathf(path, "rm -rf '%s'", base);
	if (system(path) != 0)
		DIAG("cannot remove %s", base);
	return done_testing();
}
