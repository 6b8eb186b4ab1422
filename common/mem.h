/*
 * mem.h - allocation helpers that check sizes for overflow and return NULL
 * (never abort) when memory runs out.
 */
#ifndef RESTACK_COMMON_MEM_H
#define RESTACK_COMMON_MEM_H

#include <stddef.h>
#include <stdio.h>

/*
 * Makes *arr (an array of *alloc elements of elem_size bytes, owned by the
 * caller and freed with free()) hold at least need elements, growing it
 * geometrically.  New elements are zeroed.  Returns 0, or -1 on overflow or
 * when out of memory (the array is then unchanged).  mem_grow() is inline
 * for the common case, where the array is big enough already.
 */
int mem_grow_slow(void *arr, size_t *alloc, size_t elem_size, size_t need);

static inline int mem_grow(void *arr, size_t *alloc, size_t elem_size,
			   size_t need)
{
	return need <= *alloc ? 0 : mem_grow_slow(arr, alloc, elem_size, need);
}

/* calloc(n, size) with an overflow check; NULL on failure. */
void *mem_zalloc(size_t n, size_t size);

/* A copy of s in new memory the caller frees, or NULL. */
char *mem_strdup(const char *s);

/*
 * The rest of stream f in new memory the caller frees, with a NUL after
 * the *len bytes read.  NULL on a read error, when out of memory, or when
 * the stream holds more than max bytes.
 */
char *mem_slurp(FILE *f, size_t max, size_t *len);

#endif
