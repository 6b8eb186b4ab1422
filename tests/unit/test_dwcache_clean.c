/*
 * test_dwcache_clean.c - a DWARF-cache file being written is removed by
 * sigclean_run() (what a SIGINT, SIGTERM or SIGHUP runs), and one that
 * was finished is not: a run killed while storing an index leaves no
 * `.tmp-*` file in the cache.
 */
#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/harness.h"

#include "common/sigclean.h"
#include "unwind/dwcache.h"

/* How many entries of dir start with prefix. */
static int count_prefix(const char *dir, const char *prefix)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		n += !strncmp(de->d_name, prefix, strlen(prefix));
	closedir(d);
	return n;
}

int main(void)
{
	char dir[PATH_MAX], cmd[PATH_MAX + 16];
	struct dwcache_file f;
	struct stat st;
	char path[PATH_MAX + 32];

	snprintf(dir, sizeof(dir), "%s/restack-dwclean.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(dir)) {
		CHECK(false, "cannot make a directory");
		return done_testing();
	}
	dwcache_set_dir(dir);

	CHECK(dwcache_create(&f, "done.idx"), "a cache file is created");
	dwcache_write(&f, "abcd", 4, 0);
	dwcache_finish(&f);
	snprintf(path, sizeof(path), "%s/done.idx", dir);
	CHECK(stat(path, &st) == 0 && st.st_size == 4,
	      "the finished file is in place");

	CHECK(dwcache_create(&f, "cut.idx"), "a second one is created");
	dwcache_write(&f, "abcd", 4, 0);
	CHECK(count_prefix(dir, ".tmp-") == 1, "its temporary exists");

	sigclean_run();

	CHECK(count_prefix(dir, ".tmp-") == 0,
	      "the signal handler's clean-up removes the temporary");
	CHECK(stat(path, &st) == 0, "and leaves the finished file");
	close(f.fd);

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		DIAG("cannot remove %s", dir);
	return done_testing();
}
