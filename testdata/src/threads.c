/*
 * threads.c - a threaded workload calling into a shared library
 * (libwork.so), built -O2 -fomit-frame-pointer so that only CFI unwinds it.
 *
 *   threads [ITERATIONS [KERNEL_MIB]]
 *
 * KERNEL_MIB, when given, first reads that many MiB from /dev/zero so the
 * capture is sure to hold kernel samples.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

double lib_work(int n);

static inline double mix(int n)
{
	double s = 0;
	int i;

	for (i = 0; i < n; i++)
		s += (i ^ 0x55) * 0.5;
	return s;
}

__attribute__((noinline)) double leaf(int n)
{
	return mix(n) + lib_work(n);
}

__attribute__((noinline)) double mid(int n, int depth)
{
	return depth ? mid(n, depth - 1) + 1 : leaf(n) * 2;
}

static int iterations = 3000;

static void *worker(void *arg)
{
	double s = 0;
	int i;

	for (i = 0; i < iterations; i++)
		s += mid(10000, i % 5);
	*(double *)arg = s;
	return NULL;
}

static void kernel_work(long mib)
{
	static char buf[1 << 16];
	long left = mib << 20;
	int fd = open("/dev/zero", O_RDONLY);

	while (fd >= 0 && left > 0) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n <= 0)
			break;
		left -= n;
	}
	if (fd >= 0)
		close(fd);
}

int main(int argc, char **argv)
{
	pthread_t t[2];
	double r[2];
	int i;

	if (argc > 1)
		iterations = atoi(argv[1]);
	if (argc > 2)
		kernel_work(atol(argv[2]));
	for (i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, &r[i]);
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("%f\n", r[0] + r[1]);
	return 0;
}
