/*
 * test_mem.c - common/mem.h: mem_map_grow() keeps a buffer's bytes when the
 * kernel holds it as several mappings (an madvise() of part of it, as
 * mem_huge() does inside a buffer that spans a huge-page boundary, splits
 * it, and mremap() refuses such a range); mem_read_file() reads a file
 * that is not regular (a FIFO, as /proc files are read) larger than its
 * first buffer, whole.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/mem.h"
#include "tests/harness.h"

#define MEM_KIB 1024u

static unsigned char mem_byte(size_t i)
{
	return (unsigned char)(i * 7 + i / 4096);
}

static bool mem_same(const unsigned char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != mem_byte(i))
			return false;
	return true;
}

static void test_grow_split(void)
{
	size_t size, page = (size_t)sysconf(_SC_PAGESIZE), i;
	unsigned char *p = mem_map(512 * MEM_KIB, &size);
	int split;

	CHECK(p != NULL, "a 512 KiB mapping");
	if (!p)
		return;
	for (i = 0; i < size; i++)
		p[i] = mem_byte(i);
	/* another flag on the second half: two mappings to the kernel */
	split = madvise(p + size / 2, size / 2, MADV_NOHUGEPAGE);
	if (split == 0)
		split = madvise(p + size / 2 + page, page, MADV_HUGEPAGE);
	CHECK(mem_map_grow(&p, &size, 4096 * MEM_KIB) == 0 &&
		      size >= 4096 * MEM_KIB,
	      "grown to 4 MiB although split (madvise: %s)",
	      split == 0 ? "split" : "not supported here");
	CHECK(mem_same(p, 512 * MEM_KIB), "the first 512 KiB kept");
	memset(p + 512 * MEM_KIB, 0xa5, size - 512 * MEM_KIB);
	mem_unmap(p, size);
}

static void test_read_fifo(void)
{
	char dir[] = "/tmp/test_mem.XXXXXX", path[64];
	size_t total = 3 * 1024 * MEM_KIB + 123, len = 0, map_size = 0, i;
	const char *text;
	unsigned char *buf;
	pid_t child;
	int status = 0;

	if (!mkdtemp(dir)) {
		CHECK(false, "a temporary directory");
		return;
	}
	snprintf(path, sizeof(path), "%s/fifo", dir);
	CHECK(mkfifo(path, 0600) == 0, "a FIFO");
	buf = malloc(total);
	if (!buf)
		abort();
	for (i = 0; i < total; i++)
		buf[i] = mem_byte(i) ? mem_byte(i) : 1;   /* no NUL */
	child = fork();
	if (child == 0) {
		int fd = open(path, O_WRONLY);
		size_t off = 0;

		while (fd >= 0 && off < total) {
			/* odd pieces, as a pipe hands them over */
			ssize_t n = write(fd, buf + off,
					  total - off < 70000 ? total - off :
								70000);
			if (n <= 0)
				_exit(1);
			off += (size_t)n;
		}
		_exit(fd >= 0 ? 0 : 1);
	}
	text = mem_read_file(path, (size_t)1 << 30, &len, &map_size);
	waitpid(child, &status, 0);
	CHECK(text && len == total && memcmp(text, buf, total) == 0 &&
		      text[len] == '\0',
	      "a 3 MiB FIFO read whole (%zu bytes)", len);
	if (text)
		mem_unmap((void *)(uintptr_t)text, map_size);
	free(buf);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	test_grow_split();
	test_read_fifo();
	return done_testing();
}
