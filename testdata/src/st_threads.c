/*
 * st_threads.c - stitching ground truth (tests/cli/stitch_truth.sh):
 * three threads with different roots, each spinning at the bottom of its
 * own chain of functions (frames of 200 to 1500 bytes) and a recursion
 * 60 to 180 levels deep, while the main thread waits; deep enough that
 * an 8 KiB stack copy cuts most samples.
 *
 *   st_threads [CPU_SECONDS]     (default 1.5, for the three together)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned sink;

struct job {
	unsigned seed;
	double secs;
};

static unsigned st_rand(struct job *j, unsigned n)
{
	j->seed = j->seed * 1103515245u + 12345u;
	return (j->seed >> 16) % n;
}

__attribute__((noinline)) static unsigned spin(unsigned n)
{
	unsigned x = n, i;

	for (i = 0; i < 20000; i++)
		x = x * 1664525u + 1013904223u;
	return x;
}

__attribute__((noinline)) static unsigned deeper(int depth, int target)
{
	volatile char buf[48];
	unsigned r;

	buf[depth % 48] = (char)depth;
	if (depth >= target)
		r = spin(buf[depth % 48]);
	else
		r = deeper(depth + 1, target);
	return r + buf[(depth * 7) % 48];	/* no tail call */
}

static double thread_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* LOOP(JOB, BYTES): recursions at random depths for the job's CPU time,
 * under a frame of BYTES */
#define LOOP(j, size) do { \
	volatile char pad[size]; \
	double end = thread_cpu() + (j)->secs; \
	pad[0] = 1; \
	while (thread_cpu() < end) \
		sink += deeper(1, 60 + (int)st_rand((j), 120)) + pad[0]; \
} while (0)

__attribute__((noinline)) static void red_inner(struct job *j)
{
	LOOP(j, 1500);
}

__attribute__((noinline)) static void red_outer(struct job *j)
{
	volatile char pad[200];

	pad[0] = 1;
	red_inner(j);
	sink += pad[0];
}

static void *red(void *arg)
{
	red_outer(arg);
	return NULL;
}

__attribute__((noinline)) static void green_inner(struct job *j)
{
	LOOP(j, 700);
}

static void *green(void *arg)
{
	green_inner(arg);
	return NULL;
}

__attribute__((noinline)) static void blue_3(struct job *j)
{
	LOOP(j, 300);
}

__attribute__((noinline)) static void blue_2(struct job *j)
{
	volatile char pad[520];

	pad[0] = 1;
	blue_3(j);
	sink += pad[0];
}

__attribute__((noinline)) static void blue_1(struct job *j)
{
	volatile char pad[260];

	pad[0] = 1;
	blue_2(j);
	sink += pad[0];
}

static void *blue(void *arg)
{
	blue_1(arg);
	return NULL;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1.5;
	void *(*fn[3])(void *) = { red, green, blue };
	struct job jobs[3];
	pthread_t t[3];
	int i;

	for (i = 0; i < 3; i++) {
		jobs[i].seed = 99 + (unsigned)i;
		jobs[i].secs = secs / 3;
		if (pthread_create(&t[i], NULL, fn[i], &jobs[i]))
			return 1;
	}
	for (i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	printf("%u\n", sink);
	return 0;
}
