/*
 * prog.c - the workload profiled for restack's perf.data fixtures and the
 * CLI tests: a recursive chain leaf <- mid <- ... <- mid <- main of
 * varying depth, spinning on the CPU (about 50 us per iteration), with
 * a short sleep every 16 iterations so that sched:sched_switch fires.
 *
 *   prog [ITER]     (default 500)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

__attribute__((noinline)) static unsigned long leaf(unsigned long n)
{
	unsigned long s = 0, i;

	for (i = 0; i < n; i++) {
		s += i * i;
		sink = s;
	}
	return s;
}

__attribute__((noinline)) static unsigned long mid(int depth, unsigned long n)
{
	if (depth == 0)
		return leaf(n);
	return mid(depth - 1, n) + sink % 3;
}

int main(int argc, char **argv)
{
	int iter = argc > 1 ? atoi(argv[1]) : 500;
	struct timespec nap = { 0, 200000 };
	int i;

	for (i = 0; i < iter; i++) {
		sink += mid(i % 8, 100000);
		if (i % 16 == 15)
			nanosleep(&nap, NULL);
	}
	printf("%lu\n", sink);
	return 0;
}
