/*
 * tracework.c - a program that instruments its own functions and writes
 * what it did as Chrome Trace Event JSON, for tests/cli/profiles.sh.
 *
 * Two threads ("worker 1", "worker 2") each run three rounds of
 *
 *   outer:  10 ms, inner_a, 10 ms, inner_b, 10 ms     ("B"/"E" events)
 *   inner_a: 20 ms, inner_b, 10 ms                    ("X" events)
 *   inner_b: 10 ms
 *
 * each part spinning until the monotonic clock has reached its scheduled
 * end (the last part's end plus its length), and the events carry the
 * scheduled times, so the trace says what the layout says, to the
 * nanosecond, however the threads were preempted: per thread, self
 * times outer 90 ms, inner_a 90 ms, inner_b 60 ms (inclusive: outer
 * 240, inner_a 120, inner_b 60).
 *
 *   tracework OUT.json
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 3
#define MS 1000000ULL

struct worker {
	int no;
	long tid;
	char buf[8192];
	size_t len;
};

static unsigned long long now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL +
	       (unsigned long long)ts.tv_nsec;
}

static unsigned long long t0;

/* Spins until ns have passed since *at; moves *at there. */
static void spin(unsigned long long *at, unsigned long long ns)
{
	*at += ns;
	while (now() < *at)
		;
}

/* An "X" event of name from start to t, or a "B" or "E" one at t. */
static void emit(struct worker *w, char ph, const char *name,
		 unsigned long long start, unsigned long long t)
{
	unsigned long long ts = (ph == 'X' ? start : t) - t0;

	w->len += (size_t)snprintf(w->buf + w->len, sizeof(w->buf) - w->len,
				   ",\n{\"name\":\"%s\",\"ph\":\"%c\","
				   "\"ts\":%llu.%03llu,", name, ph,
				   ts / 1000, ts % 1000);
	if (ph == 'X')
		w->len += (size_t)snprintf(w->buf + w->len,
					   sizeof(w->buf) - w->len,
					   "\"dur\":%llu.%03llu,",
					   (t - start) / 1000,
					   (t - start) % 1000);
	w->len += (size_t)snprintf(w->buf + w->len, sizeof(w->buf) - w->len,
				   "\"pid\":1,\"tid\":%ld}", w->tid);
}

static void inner_b(struct worker *w, unsigned long long *at)
{
	unsigned long long start = *at;

	spin(at, 10 * MS);
	emit(w, 'X', "inner_b", start, *at);
}

static void inner_a(struct worker *w, unsigned long long *at)
{
	unsigned long long start = *at;

	spin(at, 20 * MS);
	inner_b(w, at);
	spin(at, 10 * MS);
	emit(w, 'X', "inner_a", start, *at);
}

static void outer(struct worker *w, unsigned long long *at)
{
	emit(w, 'B', "outer", 0, *at);
	spin(at, 10 * MS);
	inner_a(w, at);
	spin(at, 10 * MS);
	inner_b(w, at);
	spin(at, 10 * MS);
	emit(w, 'E', "outer", 0, *at);
}

static void *run(void *arg)
{
	struct worker *w = arg;
	unsigned long long at = now();
	int i;

	w->tid = syscall(SYS_gettid);
	w->len += (size_t)snprintf(w->buf + w->len, sizeof(w->buf) - w->len,
		",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,"
		"\"tid\":%ld,\"args\":{\"name\":\"worker %d\"}}", w->tid, w->no);
	for (i = 0; i < ROUNDS; i++)
		outer(w, &at);
	return NULL;
}

int main(int argc, char **argv)
{
	struct worker w[2] = { { .no = 1 }, { .no = 2 } };
	pthread_t th[2];
	FILE *f;
	int i;

	if (argc != 2) {
		fprintf(stderr, "usage: tracework OUT.json\n");
		return 64;
	}
	t0 = now();
	for (i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, run, &w[i]);
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	f = fopen(argv[1], "w");
	if (!f)
		return 1;
	fprintf(f, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n"
		   "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,"
		   "\"args\":{\"name\":\"tracework\"}}");
	for (i = 0; i < 2; i++)
		fwrite(w[i].buf, 1, w[i].len, f);
	fprintf(f, "\n]}\n");
	return fclose(f) ? 1 : 0;
}
