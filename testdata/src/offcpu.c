/*
 * offcpu.c - threads that wait for known times in known functions, for
 * the off-CPU and wall-clock profiles (tests/cli/offcpu.sh):
 *   sleeper      nanosleep of 20 ms, ROUNDS times, in sleep_20ms()
 *   reader       reads a pipe that the writer fills every 50 ms, in
 *                read_pipe()
 *   writer       sleeps 50 ms then writes one byte, ROUNDS50 times
 *   locker       waits for a mutex the holder keeps 30 ms at a time, in
 *                take_lock()
 *   holder       takes the mutex, spins 30 ms holding it, lets it go and
 *                spins 10 ms
 *   burner       CPU work only
 * Each thread writes "tid NAME TID LIFETIME_NS WAITED_NS" to the file
 * named by the first argument (stdout may be perf's pipe): its kernel
 * thread id, the time from its start to its end, and the time it spent
 * in its function that blocks (measured around the calls with
 * CLOCK_MONOTONIC).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 25	/* of the sleeper: 500 ms */
#define ROUNDS50 10	/* of the writer: 500 ms */
#define ROUNDS_LOCK 12	/* of the holder: 12 x 40 ms */

static int pipefd[2];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static volatile int holder_ready;
static volatile double sink;
static FILE *out;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void report(const char *name, uint64_t start, uint64_t waited)
{
	pthread_mutex_lock(&out_lock);
	fprintf(out, "tid %s %ld %llu %llu\n", name,
		(long)syscall(SYS_gettid),
		(unsigned long long)(now_ns() - start),
		(unsigned long long)waited);
	fflush(out);
	pthread_mutex_unlock(&out_lock);
}

__attribute__((noinline)) static void spin_ns(uint64_t ns)
{
	uint64_t end = now_ns() + ns;
	double x = 1.0;

	while (now_ns() < end)
		for (int i = 0; i < 1000; i++)
			x = x * 1.0000001 + 0.5;
	sink = x;
}

__attribute__((noinline)) static void sleep_20ms(void)
{
	struct timespec ts = { 0, 20000000 };

	while (nanosleep(&ts, &ts))
		;
	__asm__ volatile("" ::: "memory");
}

static void *sleeper(void *arg)
{
	uint64_t start = now_ns(), waited = 0;

	(void)arg;
	for (int i = 0; i < ROUNDS; i++) {
		uint64_t t = now_ns();

		sleep_20ms();
		waited += now_ns() - t;
	}
	report("sleeper", start, waited);
	return NULL;
}

__attribute__((noinline)) static int read_pipe(char *c)
{
	int n = (int)read(pipefd[0], c, 1);

	__asm__ volatile("" ::: "memory");
	return n;
}

static void *reader(void *arg)
{
	uint64_t start = now_ns(), waited = 0;
	char c = 0;

	(void)arg;
	for (;;) {
		uint64_t t = now_ns();
		int n = read_pipe(&c);

		waited += now_ns() - t;
		if (n != 1 || c == 'q')
			break;
	}
	report("reader", start, waited);
	return NULL;
}

static void *writer(void *arg)
{
	uint64_t start = now_ns(), waited = 0;

	(void)arg;
	for (int i = 0; i < ROUNDS50; i++) {
		struct timespec ts = { 0, 50000000 };
		uint64_t t = now_ns();
		char c = i + 1 == ROUNDS50 ? 'q' : 'x';

		while (nanosleep(&ts, &ts))
			;
		waited += now_ns() - t;
		if (write(pipefd[1], &c, 1) != 1)
			abort();
	}
	report("writer", start, waited);
	return NULL;
}

__attribute__((noinline)) static void take_lock(void)
{
	pthread_mutex_lock(&lock);
	__asm__ volatile("" ::: "memory");
}

static void *locker(void *arg)
{
	uint64_t start = now_ns(), waited = 0;

	(void)arg;
	while (!holder_ready)
		;
	for (int i = 0; i < ROUNDS_LOCK; i++) {
		uint64_t t = now_ns();

		take_lock();
		waited += now_ns() - t;
		pthread_mutex_unlock(&lock);
		/* let the holder take it again */
		struct timespec ts = { 0, 1000000 };

		nanosleep(&ts, NULL);
	}
	report("locker", start, waited);
	return NULL;
}

static void *holder(void *arg)
{
	uint64_t start = now_ns();

	(void)arg;
	for (int i = 0; i < ROUNDS_LOCK + 1; i++) {
		pthread_mutex_lock(&lock);
		holder_ready = 1;
		spin_ns(30000000);
		pthread_mutex_unlock(&lock);
		spin_ns(10000000);
	}
	report("holder", start, 0);
	return NULL;
}

static void *burner(void *arg)
{
	uint64_t start = now_ns();

	(void)arg;
	spin_ns(300000000);
	report("burner", start, 0);
	return NULL;
}

int main(int argc, char **argv)
{
	void *(*fns[])(void *) = { sleeper, reader, writer, holder, locker,
				   burner };
	pthread_t t[sizeof(fns) / sizeof(fns[0])];
	size_t i;

	out = argc > 1 ? fopen(argv[1], "w") : stdout;
	if (!out || pipe(pipefd))
		return 1;
	for (i = 0; i < sizeof(fns) / sizeof(fns[0]); i++)
		if (pthread_create(&t[i], NULL, fns[i], NULL))
			return 1;
	for (i = 0; i < sizeof(fns) / sizeof(fns[0]); i++)
		pthread_join(t[i], NULL);
	return 0;
}
