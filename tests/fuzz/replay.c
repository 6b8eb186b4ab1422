/*
 * replay.c - a main() that feeds files to LLVMFuzzerTestOneInput, so the
 * fuzz targets' corpora replay in `make check` without libFuzzer.
 *
 *   replay_fuzz_NAME PATH...   each PATH is a file or a directory (its
 *                              regular files, sorted, not recursive)
 *
 * Prints one "ok - replay FILE" line per input (a crash or sanitizer
 * report ends the program instead) and exits 0, or 2 on unreadable input.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t len = 0, alloc = 0;

	if (!f) {
		printf("not ok - replay %s\n# cannot open: %s\n", path,
		       strerror(errno));
		return -1;
	}
	for (;;) {
		size_t n;

		if (len == alloc) {
			uint8_t *nb;

			alloc = alloc ? alloc * 2 : 65536;
			nb = realloc(buf, alloc);
			if (!nb) {
				free(buf);
				fclose(f);
				printf("not ok - replay %s\n# out of memory\n",
				       path);
				return -1;
			}
			buf = nb;
		}
		n = fread(buf + len, 1, alloc - len, f);
		len += n;
		if (n == 0)
			break;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, len);
	free(buf);
	printf("ok - replay %s\n", path);
	fflush(stdout);
	return 0;
}

static int replay_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int replay_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **names = NULL;
	size_t nr = 0, i;
	int rc = 0;

	if (!d) {
		printf("not ok - replay %s\n# cannot open: %s\n", dir,
		       strerror(errno));
		return -1;
	}
	while ((de = readdir(d))) {
		char **nn;
		char *path;
		struct stat st;

		if (de->d_name[0] == '.')
			continue;
		if (asprintf(&path, "%s/%s", dir, de->d_name) < 0)
			break;
		if (stat(path, &st) < 0 || !S_ISREG(st.st_mode)) {
			free(path);
			continue;
		}
		nn = realloc(names, (nr + 1) * sizeof(*names));
		if (!nn) {
			free(path);
			break;
		}
		names = nn;
		names[nr++] = path;
	}
	closedir(d);
	qsort(names, nr, sizeof(*names), replay_cmp);
	for (i = 0; i < nr; i++) {
		if (replay_file(names[i]) < 0)
			rc = -1;
		free(names[i]);
	}
	free(names);
	return rc;
}

int main(int argc, char **argv)
{
	int i, rc = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
		return 64;
	}
	for (i = 1; i < argc; i++) {
		struct stat st;

		if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			if (replay_dir(argv[i]) < 0)
				rc = 2;
		} else if (replay_file(argv[i]) < 0) {
			rc = 2;
		}
	}
	return rc;
}
