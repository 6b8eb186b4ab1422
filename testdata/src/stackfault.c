/*
 * stackfault.c - samples whose user stack the kernel cannot copy.
 *
 * deep() recurses with 12 KiB frames; built with -fstack-clash-protection,
 * each frame is allocated a page at a time, every page probed at sp as it
 * is taken.  After each descent main() gives the pages below its own frame
 * back (MADV_DONTNEED), so the next descent faults every one of them in
 * again.  A sample taken in such a fault, or between moving sp and the
 * probe, finds the page at sp not in memory: perf's stack copy (which must
 * not fault) comes out empty.
 *
 *	stackfault [ROUNDS]
 */
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#define PAGE 4096UL
#define DEPTH 40

__attribute__((noinline)) static int deep(int n, volatile char *up)
{
	volatile char frame[3 * PAGE + 100];

	frame[0] = up ? up[5] : 1;
	frame[sizeof(frame) - 1] = (char)n;
	if (n == 0)
		return frame[0];
	return deep(n - 1, frame) + frame[sizeof(frame) - 1];
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 1500;
	/* the pages deep() used: from 8 pages below main's frame down */
	uintptr_t top = ((uintptr_t)__builtin_frame_address(0) & ~(PAGE - 1)) -
			8 * PAGE;
	uintptr_t len = (DEPTH + 2) * 4 * PAGE;
	long sum = 0;

	for (int r = 0; r < rounds; r++) {
		sum += deep(DEPTH, NULL);
		madvise((void *)(top - len), len, MADV_DONTNEED);
	}
	return (int)(sum & 1);
}
