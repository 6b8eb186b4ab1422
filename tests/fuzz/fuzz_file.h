/*
 * fuzz_file.h - for the fuzz targets whose code under test reads files:
 * the input written to one.
 */
#ifndef RESTACK_TESTS_FUZZ_FILE_H
#define RESTACK_TESTS_FUZZ_FILE_H

#include <stdint.h>
#include <stdio.h>

/* Writes size bytes of data to path (replacing it); 0, or -1. */
static inline int fuzz_write_file(const char *path, const uint8_t *data,
				  size_t size)
{
	FILE *f = fopen(path, "wb");
	int ok;

	if (!f)
		return -1;
	ok = fwrite(data, 1, size, f) == size;
	return fclose(f) == 0 && ok ? 0 : -1;
}

#endif
