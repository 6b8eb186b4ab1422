/*
 * st_bigmain.c - stitching ground truth (tests/cli/stitch_truth.sh): a
 * stable deep stack.  main keeps a 6 KiB array on its stack and calls a
 * short chain of functions that loop, so every sample has the same stack
 * and a 4 KiB copy ends inside main's frame.
 *
 *   st_bigmain [CPU_SECONDS]     (default 1.0)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned sink;

__attribute__((noinline)) static unsigned inner(volatile char *big, int n)
{
	unsigned x = (unsigned)n, i;

	for (i = 0; i < 200000; i++)
		x = x * 1664525u + (unsigned)big[i % 6144];
	return x;
}

__attribute__((noinline)) static unsigned middle(volatile char *big, int n)
{
	volatile char pad[300];

	pad[n % 300] = (char)n;
	return inner(big, n) + pad[n % 300];
}

__attribute__((noinline)) static unsigned outer(volatile char *big, int n)
{
	volatile char pad[500];

	pad[n % 500] = (char)n;
	return middle(big, n) + pad[n % 500];
}

int main(int argc, char **argv)
{
	volatile char big[6144];
	double secs = argc > 1 ? atof(argv[1]) : 1.0;
	clock_t end = clock() + (clock_t)(secs * CLOCKS_PER_SEC);
	int i, n = 0;

	for (i = 0; i < 6144; i++)
		big[i] = (char)i;
	while (clock() < end)
		sink += outer(big, n++);
	printf("%u\n", sink + big[n % 6144]);
	return 0;
}
