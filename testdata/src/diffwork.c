/*
 * diffwork.c - the workload of tests/cli/diff.sh: main calls work_a and
 * work_b in turn, each spinning on the CPU for the same number of
 * iterations, or work_b for twice as many with "double".  Recorded once
 * each way, work_b's self share goes from 1/2 to 2/3 (+16.7 points) and
 * work_a's from 1/2 to 1/3.
 *
 *   diffwork [ROUNDS [double]]      (default 2000 rounds, about 0.5 s)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile unsigned long sink;

__attribute__((noinline)) static void work_a(unsigned long n)
{
	unsigned long i, s = sink;

	for (i = 0; i < n; i++) {
		s = s * 2862933555777941757ULL + 3037000493ULL;
		sink = s;
	}
}

__attribute__((noinline)) static void work_b(unsigned long n)
{
	unsigned long i, s = sink;

	for (i = 0; i < n; i++) {
		s = s * 6364136223846793005ULL + 1442695040888963407ULL;
		sink = s;
	}
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 2000, i;
	unsigned long k = argc > 2 && !strcmp(argv[2], "double") ? 2 : 1;

	for (i = 0; i < rounds; i++) {
		work_a(50000);
		work_b(50000 * k);
	}
	printf("%lu\n", sink);
	return 0;
}
