/*
 * mem.c - overflow-checked allocation helpers, mapped buffers and whole-file
 * reads.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/base.h"
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

void *mem_array(size_t n, size_t size)
{
	size_t bytes;

	if (__builtin_mul_overflow(n, size, &bytes))
		return NULL;
	return malloc(bytes ? bytes : 1);
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

void *mem_map(size_t size, size_t *map_size)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *p;

	if (size > SIZE_MAX - MEM_HUGE_PAGE)
		return NULL;
	/* whole huge pages: the kernel aligns such mappings to them */
	size = size >= MEM_HUGE_PAGE ? ALIGN_UP(size, MEM_HUGE_PAGE) :
				       ALIGN_UP(size ? size : 1, page);
	p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	*map_size = size;
	return p;
}

void mem_huge(void *p, size_t len)
{
	uintptr_t lo = ALIGN_UP((uintptr_t)p, MEM_HUGE_PAGE);
	uintptr_t hi = ((uintptr_t)p + len) & ~(uintptr_t)(MEM_HUGE_PAGE - 1);

	if (hi > lo)  /* a hint only: nothing to do when it fails */
		(void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
}

void mem_unmap(void *p, size_t map_size)
{
	if (p)
		munmap(p, map_size);
}

/* A new mapping of n bytes with the size bytes at p, which it unmaps. */
static void *mem_map_copy(void *p, size_t size, size_t n)
{
	void *q = mmap(NULL, n, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (q == MAP_FAILED)
		return MAP_FAILED;
	memcpy(q, p, size);
	munmap(p, size);
	return q;
}

int mem_map_grow(void *p, size_t *map_size, size_t need)
{
	void **pp = p;
	size_t n = *map_size;
	void *q;

	while (n < need) {
		if (n > SIZE_MAX / 2)
			return -1;
		n *= 2;
	}
	if (n == *map_size)
		return 0;
#ifdef __SANITIZE_THREAD__
	/* ThreadSanitizer does not see mremap(): pages moved there keep the
	 * shadow of what was mapped at their new address before (an exited
	 * thread's stack: a false race); a fresh mapping resets it */
	q = mem_map_copy(*pp, *map_size, n);
#else
	q = mremap(*pp, *map_size, n, MREMAP_MAYMOVE);
	/*
	 * mem_huge() of the huge pages inside a mapping that does not start
	 * on one splits it in the kernel's eyes, and mremap() refuses a
	 * range of several mappings (EFAULT): where the buffer landed
	 * decided whether /proc/kallsyms could be read
	 */
	if (q == MAP_FAILED)
		q = mem_map_copy(*pp, *map_size, n);
#endif
	if (q == MAP_FAILED)
		return -1;
	mem_huge(q, n);
	*pp = q;
	*map_size = n;
	return 0;
}

/*
 * Maps size (> 0) bytes of regular file fd read-only, with a NUL after
 * them: a reservation one page longer than the file's pages, the file
 * mapped over its start.  NULL when mmap fails.
 */
static const char *mem_map_file(int fd, size_t size, size_t *map_size)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t file_pages = ALIGN_UP(size, page);
	void *p, *f;

	p = mmap(NULL, file_pages + page, PROT_READ,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	f = mmap(p, size, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0);
	if (f == MAP_FAILED) {
		munmap(p, file_pages + page);
		return NULL;
	}
	*map_size = file_pages + page;
	return f;
}

const char *mem_read_file(const char *path, size_t max, size_t *len,
			  size_t *map_size)
{
	struct stat st;
	size_t n = 0, size = 0;
	const char *mapped;
	char *buf = NULL;
	ssize_t got;
	int fd, saved;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0)
		goto fail;
	if (S_ISREG(st.st_mode) && (uint64_t)st.st_size > max) {
		errno = EFBIG;
		goto fail;
	}
	if (S_ISREG(st.st_mode) && st.st_size > 0 &&
	    (mapped = mem_map_file(fd, (size_t)st.st_size, map_size))) {
		close(fd);
		*len = (size_t)st.st_size;
		return mapped;
	}
	/* room for the NUL, and one more byte to see the end of file */
	size = S_ISREG(st.st_mode) && st.st_size > 0 ?
		       (size_t)st.st_size + 2 :
		       (size_t)1 << 20;
	buf = mem_map(size, &size);
	if (!buf)
		goto fail_nomem;
	mem_huge(buf, size);
	for (;;) {
		if (n + 1 >= size && mem_map_grow(&buf, &size, n + 2) < 0)
			goto fail_nomem;
		got = read(fd, buf + n, size - n - 1);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			goto fail;
		if (!got)
			break;
		n += (size_t)got;
		if (n > max) {
			errno = EFBIG;
			goto fail;
		}
	}
	close(fd);
	buf[n] = '\0';
	*len = n;
	*map_size = size;
	return buf;
fail_nomem:
	errno = ENOMEM;
fail:
	saved = errno;
	mem_unmap(buf, size);
	close(fd);
	errno = saved;
	return NULL;
}
