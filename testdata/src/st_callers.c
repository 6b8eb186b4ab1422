/*
 * st_callers.c - stitching ground truth (tests/cli/stitch_truth.sh): one
 * recursive function entered from three callers, two of them with frames
 * of the same size (so the recursion below them sits at the same stack
 * addresses, and what lies above a cut is ambiguous), the third larger;
 * each call recurses to a random depth between 20 and 320 and spins at
 * the bottom.
 *
 *   st_callers [CPU_SECONDS]     (default 1.5)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned sink;
static unsigned seed = 4242;

static unsigned st_rand(unsigned n)
{
	seed = seed * 1103515245u + 12345u;
	return (seed >> 16) % n;
}

__attribute__((noinline)) static unsigned spin(unsigned n)
{
	unsigned x = n, i;

	for (i = 0; i < 20000; i++)
		x = x * 1664525u + 1013904223u;
	return x;
}

__attribute__((noinline)) static unsigned walk(int depth, int target)
{
	volatile char buf[56];
	unsigned r;

	buf[depth % 56] = (char)depth;
	r = buf[(depth * 5) % 56];
	if (depth >= target)
		r += spin(r);
	else
		r += walk(depth + 1, target);
	return r + buf[depth % 56];	/* no tail call */
}

__attribute__((noinline)) static unsigned caller_one(int target)
{
	volatile char pad[200];

	pad[target % 200] = 1;
	return walk(1, target) + pad[target % 200];
}

__attribute__((noinline)) static unsigned caller_two(int target)
{
	volatile char pad[200];

	pad[(target * 3) % 200] = 2;
	return walk(1, target) + pad[(target * 3) % 200];
}

__attribute__((noinline)) static unsigned caller_three(int target)
{
	volatile char pad[600];

	pad[target % 600] = 3;
	return walk(1, target) + pad[target % 600];
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1.5;
	clock_t end = clock() + (clock_t)(secs * CLOCKS_PER_SEC);

	while (clock() < end) {
		int i;

		for (i = 0; i < 30; i++) {
			int target = 20 + st_rand(300);

			switch (st_rand(3)) {
			case 0:
				sink += caller_one(target);
				break;
			case 1:
				sink += caller_two(target);
				break;
			default:
				sink += caller_three(target);
				break;
			}
		}
	}
	printf("%u\n", sink);
	return 0;
}
