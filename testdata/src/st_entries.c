/*
 * st_entries.c - stitching ground truth (tests/cli/stitch_truth.sh): one
 * recursive function reached from three entry functions whose frames
 * differ in size (about 40, 330 and 1000 bytes), each recursing to a
 * random depth around 40, 150 or 300 levels and spinning at the bottom.
 * The same recursion thus sits at different stack addresses depending on
 * the entry, and an 8 KiB stack copy cuts most deep samples.
 *
 *   st_entries [CPU_SECONDS]     (default 1.5)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned sink;
static unsigned seed = 12345;

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

__attribute__((noinline)) static unsigned rec(int depth, int target)
{
	volatile char buf[40];
	unsigned r = 0;
	int i;

	for (i = 0; i < 40; i++)
		buf[i] = (char)(depth + i);
	r = buf[depth % 40];
	if (depth >= target)
		r += spin(r);
	else
		r += rec(depth + 1, target);
	return r + buf[(depth * 3) % 40];	/* no tail call */
}

__attribute__((noinline)) static unsigned entry_small(int target)
{
	volatile char pad[24];

	pad[0] = (char)target;
	return rec(1, target) + pad[0];
}

__attribute__((noinline)) static unsigned entry_mid(int target)
{
	volatile char pad[312];

	pad[target % 312] = (char)target;
	return rec(1, target) + pad[target % 312];
}

__attribute__((noinline)) static unsigned entry_big(int target)
{
	volatile char pad[984];

	pad[target % 984] = (char)target;
	return rec(1, target) + pad[target % 984];
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1.5;
	clock_t end = clock() + (clock_t)(secs * CLOCKS_PER_SEC);

	while (clock() < end) {
		int i;

		for (i = 0; i < 30; i++) {
			switch (st_rand(3)) {
			case 0:
				sink += entry_small(30 + st_rand(20));
				break;
			case 1:
				sink += entry_mid(140 + st_rand(20));
				break;
			default:
				sink += entry_big(290 + st_rand(20));
				break;
			}
		}
	}
	printf("%u\n", sink);
	return 0;
}
