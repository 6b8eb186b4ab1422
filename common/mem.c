/*
 * mem.c - overflow-checked allocation helpers.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/mem.h"

/* mem_grow() when the array must grow. */
int mem_grow_slow(void *arr, size_t *alloc, size_t elem_size, size_t need)
{
	void **parr = arr;
	size_t n = *alloc, bytes;
	void *p;

	if (need <= n)
		return 0;
	n = n < 8 ? 8 : n;
	while (n < need) {
		if (n > SIZE_MAX / 2)
			return -1;
		n *= 2;
	}
	if (__builtin_mul_overflow(n, elem_size, &bytes))
		return -1;
	p = realloc(*parr, bytes);
	if (!p)
		return -1;
	memset((char *)p + *alloc * elem_size, 0, (n - *alloc) * elem_size);
	*parr = p;
	*alloc = n;
	return 0;
}

void *mem_zalloc(size_t n, size_t size)
{
	size_t bytes;

	if (__builtin_mul_overflow(n, size, &bytes))
		return NULL;
	return calloc(1, bytes ? bytes : 1);
}

char *mem_strdup(const char *s)
{
	size_t len = strlen(s) + 1;
	char *d = malloc(len);

	if (d)
		memcpy(d, s, len);
	return d;
}

char *mem_slurp(FILE *f, size_t max, size_t *len)
{
	size_t cap = 1 << 16, n = 0, got;
	char *buf = malloc(cap), *nb;

	while (buf && (got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
		n += got;
		if (n > max)
			goto fail;
		if (n == cap - 1) {
			if (cap > SIZE_MAX / 2)
				goto fail;
			nb = realloc(buf, cap * 2);
			if (!nb)
				goto fail;
			buf = nb;
			cap *= 2;
		}
	}
	if (!buf || ferror(f))
		goto fail;
	buf[n] = '\0';
	*len = n;
	return buf;
fail:
	free(buf);
	return NULL;
}
