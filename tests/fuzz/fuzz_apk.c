/*
 * fuzz_apk.c - libFuzzer target for the APK (zip) entry finder
 * (unwind/apk.c): the input is a zip file; a stored entry is looked for
 * by a name and at offsets across the file, and its bytes must lie in
 * the file.  Built with tests/fuzz/replay.c for `make check` and with
 * -fsanitize=fuzzer by `make fuzz`.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "unwind/apk.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_OFFSETS 32   /* offsets looked up per input */

static void fuzz_check(int rc, uint64_t off, uint64_t len, size_t size)
{
	if (rc == 0 && (off > size || len > size - off))
		abort();   /* an entry outside the file */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *f = tmpfile();
	uint64_t off = 0, len = 0, at;
	unsigned k;
	int fd;

	if (!f)
		return 0;
	if (fwrite(data, 1, size, f) != size || fflush(f) != 0) {
		fclose(f);
		return 0;
	}
	fd = fileno(f);
	fuzz_check(apk_find(fd, size, "lib/arm64-v8a/libwork.so", 0, &off,
			    &len), off, len, size);
	for (k = 0; k < FUZZ_OFFSETS; k++) {
		at = (uint64_t)size * k / FUZZ_OFFSETS;
		fuzz_check(apk_find(fd, size, NULL, at, &off, &len), off, len,
			   size);
	}
	fclose(f);
	return 0;
}
