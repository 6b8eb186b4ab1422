/*
 * inline.c - nested static inline functions, so that most samples land in
 * code inlined two or three levels deep (inline chains from DWARF).
 *
 *   inline [ITERATIONS]
 */
#include <stdio.h>
#include <stdlib.h>

static inline unsigned step(unsigned x)
{
	return x * 1103515245u + 12345u;
}

static inline unsigned mix3(unsigned x)
{
	int i;

	for (i = 0; i < 64; i++)
		x = step(x) ^ (x >> 7);
	return x;
}

static inline unsigned churn(unsigned x, int n)
{
	int i;

	for (i = 0; i < n; i++)
		x += mix3(x + (unsigned)i);
	return x;
}

__attribute__((noinline)) unsigned outer(unsigned seed, int n)
{
	return churn(seed, n) ^ churn(seed + 1, n / 2);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 200000;
	unsigned acc = 0;
	int i;

	for (i = 0; i < 40; i++)
		acc += outer((unsigned)i, n);
	printf("%u\n", acc);
	return 0;
}
