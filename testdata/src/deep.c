/*
 * deep.c - deep recursion with 64-byte locals per level: each iteration
 * descends to a depth chosen at random among 40, 150 and 300, working a
 * little at every level on the way down and spinning at the bottom, so an
 * 8 KiB stack window cuts most deep samples while every depth is sampled.
 * Built -O2 -fomit-frame-pointer for the stitching tests.
 *
 *   deep [ITERATIONS]
 */
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned sink;

__attribute__((noinline)) static unsigned spin(unsigned n)
{
	unsigned x = n, i;

	for (i = 0; i < 6000; i++)
		x = x * 1664525u + 1013904223u;
	return x;
}

__attribute__((noinline)) unsigned rec(int depth, int target)
{
	volatile char buf[64];
	unsigned r = 0;
	int i;

	for (i = 0; i < 64; i++)
		buf[i] = (char)(depth + i);
	for (i = 0; i < 40; i++)
		r += buf[(i * 7) & 63];
	/* buf is used after the calls: neither is a tail call */
	if (depth == target)
		r = spin(r);
	else
		r += rec(depth + 1, target);
	return r + buf[depth & 63];
}

int main(int argc, char **argv)
{
	static const int depths[3] = { 40, 150, 300 };
	int n = argc > 1 ? atoi(argv[1]) : 20000, i;
	unsigned seed = 12345;

	for (i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		sink += rec(1, depths[(seed >> 16) % 3]);
	}
	printf("%u\n", sink);
	return 0;
}
