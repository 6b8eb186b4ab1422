/*
 * manythreads.c - many short-lived threads, each recursing deeper than an
 * 8 KiB stack window, to show that root caches stay within their memory
 * budget however many threads there are.
 *
 *   manythreads [THREADS]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static unsigned dive(int depth)
{
	volatile char buf[96];
	unsigned r = 0;
	int i;

	for (i = 0; i < 96; i++)
		buf[i] = (char)(depth ^ i);
	for (i = 0; i < 300; i++)
		r += buf[(i * 5) % 96];
	if (depth)
		r ^= dive(depth - 1) * 3;
	return r + buf[depth % 96];   /* buf is live across the call */
}

static void *worker(void *arg)
{
	unsigned s = 0;
	int i;

	for (i = 0; i < 40; i++)
		s += dive(120 + i % 7);
	*(unsigned *)arg = s;
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 200, i, k;
	unsigned sum = 0, res[16];
	pthread_t t[16];

	/* 16 at a time, so the machine is never oversubscribed too much */
	for (i = 0; i < n; i += 16) {
		for (k = 0; k < 16 && i + k < n; k++)
			pthread_create(&t[k], NULL, worker, &res[k]);
		for (k = 0; k < 16 && i + k < n; k++) {
			pthread_join(t[k], NULL);
			sum += res[k];
		}
	}
	printf("%u\n", sum);
	return 0;
}
