/*
 * clock.c - reads the clock in a loop: on Linux, clock_gettime() runs in
 * the vdso, so most samples land there (tests/cli/arm64.sh's [vdso]
 * frames).
 *
 *   clock [ITERATIONS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile long sink;

__attribute__((noinline)) static void tick(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	sink += ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000, i;

	for (i = 0; i < n; i++)
		tick();
	printf("%ld\n", sink & 1);
	return 0;
}
