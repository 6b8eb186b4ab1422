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

/* malloc(n * size) with an overflow check; NULL on failure. */
void *mem_array(size_t n, size_t size);

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

/* The size of a transparent huge page (x86-64, arm64 with 4k pages). */
#define MEM_HUGE_PAGE ((size_t)2 << 20)

/*
 * Zeroed memory of at least size bytes mapped for the caller, for big
 * buffers filled once (file contents, decompressed sections): pages no one
 * touches cost nothing.  From MEM_HUGE_PAGE bytes on, the size is rounded
 * up to whole huge pages (the kernel then aligns the mapping to them, see
 * mem_huge()).  *map_size gets the size to give mem_unmap().  NULL when
 * out of memory.
 */
void *mem_map(size_t size, size_t *map_size);

/*
 * Asks for transparent huge pages for the whole huge pages inside
 * [p, p + len) (THP's madvise mode needs the hint): one page fault per
 * 2 MiB instead of 512, but each touch zeroes 2 MiB, so only for ranges
 * that will be filled.
 */
void mem_huge(void *p, size_t len);

/*
 * Makes the mapping *p (*map_size bytes, from mem_map()) at least need
 * bytes, doubling it, moved if it must be (mremap), with huge pages asked
 * for all of it (mem_huge()).  Returns 0, or -1 (the mapping unchanged).
 */
int mem_map_grow(void *p, size_t *map_size, size_t need);

/* Releases memory from mem_map() or mem_read_file(); NULL is allowed. */
void mem_unmap(void *p, size_t map_size);

/*
 * The contents of the file at path, read-only, followed by a NUL after
 * the *len bytes, in memory the caller owns and gives to mem_unmap() with
 * *map_size.  A regular file is mapped: its page-cache pages, nothing
 * copied, no new memory (a page of zeroes follows a file that ends on a
 * page boundary); others (/proc files, pipes) are read into memory from
 * mem_map() that grows as they read.  NULL with errno set when the file
 * cannot be opened or read, holds more than max bytes, or memory runs
 * out.
 */
const char *mem_read_file(const char *path, size_t max, size_t *len,
			  size_t *map_size);

#endif
