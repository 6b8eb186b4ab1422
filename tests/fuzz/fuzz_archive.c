/*
 * fuzz_archive.c - libFuzzer target for --archive: the bytes are an
 * archive (any format and compression libarchive reads), extracted by
 * perfarchive_open() twice, once for every build-id and once for the one
 * build-id of testdata/bin/prog, with small limits (1 MiB per entry, 4 MiB
 * in all) so the bounds are reached often.  Every extracted file is read
 * back; after perfarchive_close() the private $TMPDIR must be empty again
 * (an entry left behind aborts, as a crash would).  Built with
 * tests/fuzz/replay.c for `make check` and with -fsanitize=fuzzer by
 * `make fuzz`.
 */
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unwind/perfarchive.h"

#include "tests/fuzz/fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char fuzz_dir[64];      /* $TMPDIR while fuzzing */
static char fuzz_input[96];    /* the archive, next to fuzz_dir */
static volatile uint64_t fuzz_sink;

static void fuzz_cleanup(void)
{
	unlink(fuzz_input);
	rmdir(fuzz_dir);
}

/* Reads every regular file extracted, as the module lookup would. */
static int fuzz_touch(const char *path, const struct stat *st, int flag,
		      struct FTW *ftw)
{
	char buf[4096];
	ssize_t n;
	int fd;

	(void)ftw;
	if (flag != FTW_F || !S_ISREG(st->st_mode))
		return 0;
	fd = open(path, O_RDONLY | O_NONBLOCK);
	if (fd < 0)
		return 0;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		fuzz_sink += (uint64_t)buf[0] + (uint64_t)n;
	close(fd);
	return 0;
}

static bool fuzz_dir_empty(void)
{
	DIR *d = opendir(fuzz_dir);
	struct dirent *de;
	bool empty = true;

	if (!d)
		return false;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			empty = false;
	closedir(d);
	return empty;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char prog_bid[1][41] = {
		"cce7cbd43334a59d2e449e840d5d799e01a2c68c"
	};
	struct perfarchive_opts o = {
		.max_file = 1 << 20,
		.max_total = 4 << 20,
	};
	unsigned pass;

	if (!fuzz_dir[0]) {
		strcpy(fuzz_dir, "/tmp/restack-fuzz-archive.XXXXXX");
		if (!mkdtemp(fuzz_dir))
			abort();
		snprintf(fuzz_input, sizeof(fuzz_input), "%s.in", fuzz_dir);
		setenv("TMPDIR", fuzz_dir, 1);
		atexit(fuzz_cleanup);
	}
	if (fuzz_write_file(fuzz_input, data, size) < 0)
		abort();
	for (pass = 0; pass < 2; pass++) {
		struct perfarchive *a;
		struct err err;

		o.build_ids = pass ? prog_bid : NULL;
		o.nr_build_ids = pass ? 1 : 0;
		a = perfarchive_open(fuzz_input, &o, &err);
		if (a) {
			nftw(perfarchive_dir(a), fuzz_touch, 16, FTW_PHYS);
			perfarchive_close(a);
		}
		if (!fuzz_dir_empty()) {
			fprintf(stderr, "fuzz_archive: %s not empty after %s\n",
				fuzz_dir, a ? "perfarchive_close()" :
				"a failed perfarchive_open()");
			abort();
		}
	}
	unlink(fuzz_input);
	return 0;
}
