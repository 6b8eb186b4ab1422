/*
 * test_syscap_order.c - the sysprof reader's reorder window
 * (formats/syscap_order.c) and the reader's two walks through it: frames
 * come out by (time, offset) when out of place by less than the window,
 * later ones are counted late, the window holds what its bytes allow,
 * and MAP and PROCESS frames still come first from anywhere in the file;
 * a stream's time horizon lets frames go without the window's bytes.
 */
#include <stdlib.h>
#include <string.h>

#include "formats/syscap.h"
#include "formats/syscap_order.h"
#include "formats/syscap_read.h"
#include "tests/harness.h"

#define FRAME 40        /* bytes per frame in the window tests */

static int qent_cmp(const void *a, const void *b)
{
	const struct syscap_qent *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return (x->off > y->off) - (x->off < y->off);
}

static uint32_t lcg(uint32_t *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 8;
}

/*
 * Runs n frames of the given times, FRAME bytes each, through a window of
 * the given size, popping as a reader does; out gets the order.  Checks
 * on the way that the window never holds more than its bytes allow and
 * that every frame before done_off has gone out when nothing is ready.
 */
static uint64_t run(const int64_t *times, size_t n, uint64_t window,
		    struct syscap_qent *out, const char *name)
{
	struct syscap_order q;
	bool *gone = calloc(n, 1);
	size_t i = 0, k = 0, max_nr = 0, bad_done = 0;
	uint64_t late;

	syscap_order_init(&q, window);
	for (;;) {
		bool end = i == n;
		struct syscap_qent e;

		if (syscap_order_pop(&q, end, &e)) {
			gone[e.off / FRAME] = true;
			out[k++] = e;
			continue;
		}
		if (end)
			break;
		for (size_t j = 0; j < syscap_order_done_off(&q) / FRAME; j++)
			bad_done += !gone[j];
		e.time = times[i];
		e.off = i * FRAME;
		syscap_order_read(&q, &e, FRAME, (i + 1) * FRAME);
		i++;
		if (q.nr_live > max_nr)
			max_nr = q.nr_live;
	}
	CHECK_EQ_U64(k, n, "%s: every frame out", name);
	CHECK(max_nr <= window / FRAME + 1,
	      "%s: the window held %zu frames at most (%llu bytes: %llu)",
	      name, max_nr, (unsigned long long)window,
	      (unsigned long long)(window / FRAME + 1));
	CHECK_EQ_U64(bad_done, 0, "%s: frames before done_off had gone out",
		     name);
	late = q.late;
	syscap_order_release(&q);
	free(gone);
	return late;
}

static bool sorted_like(const struct syscap_qent *out, const int64_t *times,
			size_t n)
{
	struct syscap_qent *want = malloc(n * sizeof(*want));
	bool same;
	size_t i;

	for (i = 0; i < n; i++) {
		want[i].time = times[i];
		want[i].off = i * FRAME;
	}
	qsort(want, n, sizeof(*want), qent_cmp);
	same = !memcmp(want, out, n * sizeof(*want));
	free(want);
	return same;
}

static void test_window(void)
{
	enum { N = 20000, TURN = 64 };
	int64_t *t = malloc(N * sizeof(*t));
	struct syscap_qent *out = malloc(N * sizeof(*out));
	uint32_t seed = 7;
	size_t i, p, k;
	uint64_t late;

	/* two CPUs' buffers written in turns that cover the same times */
	for (i = 0; i < N; i++) {
		size_t turn = i / (2 * TURN), j = i % (2 * TURN);

		t[i] = (int64_t)(1000 + 10 * (turn * 2 * TURN +
					      2 * (j % TURN) + j / TURN));
	}
	late = run(t, N, 64 * FRAME * 4, out, "turns");
	CHECK(sorted_like(out, t, N), "turns: sorted by time");
	CHECK_EQ_U64(late, 0, "turns: nothing late");

	/* random times, all within a window larger than the input */
	for (i = 0; i < N; i++)
		t[i] = (int64_t)(lcg(&seed) % 5000) - 100;
	late = run(t, N, (uint64_t)N * FRAME * 2, out, "random");
	CHECK(sorted_like(out, t, N), "random: sorted by (time, offset)");
	CHECK_EQ_U64(late, 0, "random: nothing late");

	/* in order, with one frame read 8 windows after its place */
	for (i = 0; i < N; i++)
		t[i] = (int64_t)(10 * i);
	t[10000] = 10 * (10000 - 8 * 100);
	late = run(t, N, 100 * FRAME, out, "one late");
	CHECK_EQ_U64(late, 1, "one late: counted");
	for (p = 0; p < N; p++)
		if (out[p].off == 10000 * FRAME)
			break;
	for (i = p + 1; i < N; i++)
		if (out[i].off < 10000 * FRAME)
			break;
	CHECK(p < N && p >= 10000 - 100 && i - p - 1 <= 100,
	      "one late: delivered when read (%zu, before %zu frames still "
	      "in the window)", p, i - p - 1);
	for (i = 1, k = 0; i < N; i++)
		if (i != p && i - 1 != p && out[i].time < out[i - 1].time)
			k++;
	CHECK_EQ_U64(k, 0, "one late: the others in order");
	free(t);
	free(out);
}

/* A little-endian capture built in memory. */
struct cap {
	uint8_t *p;
	size_t len;
};

static void cap_frame(struct cap *c, uint8_t type, int32_t pid, int64_t time,
		      const void *payload, size_t n)
{
	size_t len = (24 + n + 7) & ~(size_t)7;
	uint8_t *f;
	uint16_t l16 = (uint16_t)len;
	int16_t cpu = -1;

	c->p = realloc(c->p, c->len + len);
	f = c->p + c->len;
	memset(f, 0, len);
	memcpy(f, &l16, 2);
	memcpy(f + 2, &cpu, 2);
	memcpy(f + 4, &pid, 4);
	memcpy(f + 8, &time, 8);
	f[16] = type;
	memcpy(f + 24, payload, n);
	c->len += len;
}

static void cap_sample(struct cap *c, int32_t pid, int32_t tid, int64_t time)
{
	uint8_t b[16] = { 0 };
	uint16_t n = 1;
	uint64_t addr = 0x401000;

	memcpy(b, &n, 2);
	memcpy(b + 4, &tid, 4);
	memcpy(b + 8, &addr, 8);
	cap_frame(c, SYSCAP_SAMPLE, pid, time, b, sizeof(b));
}

static void cap_map(struct cap *c, int32_t pid, int64_t time)
{
	uint8_t b[32 + 8] = { 0 };
	uint64_t start = 0x400000, end = 0x410000;

	memcpy(b, &start, 8);
	memcpy(b + 8, &end, 8);
	memcpy(b + 32, "/bin/x", 7);
	cap_frame(c, SYSCAP_MAP, pid, time, b, sizeof(b));
}

/* The events of c read with a window of the given size (0: default). */
static size_t read_all(const struct cap *c, uint64_t window,
		       struct event *evs, size_t max, uint64_t *late)
{
	struct err err;
	struct syscap_reader *r = syscap_open_mem(c->p, c->len, "mem", &err);
	size_t n = 0;

	if (!CHECK(r != NULL, "the capture opens"))
		return 0;
	if (window)
		syscap_set_window(r, window);
	while (n < max && syscap_next(r, &evs[n]) > 0) {
		if (evs[n].type == EVENT_COMM)
			evs[n].comm.comm = NULL;   /* not kept */
		n++;
	}
	*late = syscap_late(r);
	syscap_close(r);
	return n;
}

static void test_reader(void)
{
	enum { N = 3000 };
	struct cap c = { calloc(1, SYSCAP_HEADER_SIZE), SYSCAP_HEADER_SIZE };
	static const uint8_t magic[4] = { 0x5e, 0x97, 0xca, 0xfd };
	struct event *evs = calloc(N + 8, sizeof(*evs));
	uint64_t late, late_off;
	size_t n, i, p, bad = 0;

	memcpy(c.p, magic, 4);
	c.p[4] = 1;
	c.p[5] = 1;
	cap_frame(&c, SYSCAP_PROCESS, 10, 5, "x", 2);
	/* samples of thread 11 of process 10, each pair swapped */
	for (i = 0; i < N; i++)
		cap_sample(&c, 10, 11, (int64_t)(100 + 10 * (i ^ 1)));
	/* one sample read long after its time, and a late /proc scan */
	late_off = c.len;
	cap_sample(&c, 10, 11, 150);
	cap_map(&c, 10, 50000);

	n = read_all(&c, 0, evs, N + 8, &late);
	CHECK_EQ_U64(n, N + 4, "default window: every frame, a COMM more");
	CHECK(evs[0].type == EVENT_COMM && evs[1].type == EVENT_MMAP,
	      "default window: PROCESS and the last MAP first");
	CHECK(evs[2].type == EVENT_COMM && evs[2].tid == 11 &&
	      evs[3].type == EVENT_SAMPLE && evs[3].tid == 11,
	      "default window: the thread named before its first sample");
	for (i = 4; i < n; i++)
		bad += evs[i].time < evs[i - 1].time;
	CHECK_EQ_U64(bad, 0, "default window: samples in time order");
	CHECK_EQ_U64(late, 0, "default window: nothing late");

	/* a window of 1 KiB: 40-byte samples out of place by one, and one
	 * out of place by nearly all of them */
	n = read_all(&c, 1024, evs, N + 8, &late);
	CHECK_EQ_U64(n, N + 4, "1 KiB window: every frame");
	CHECK(evs[0].type == EVENT_COMM && evs[1].type == EVENT_MMAP,
	      "1 KiB window: PROCESS and MAP still first");
	CHECK_EQ_U64(late, 1, "1 KiB window: one sample late");
	for (p = 4; p < n; p++)
		if (evs[p].time == 150 && evs[p].file_off == late_off)
			break;
	CHECK(p < n && p + 1 + 1024 / 40 + 1 >= n,
	      "1 KiB window: the late one delivered when read (%zu of %zu)",
	      p, n);
	bad = 0;
	for (i = 5; i < n; i++)
		if (i != p && i - 1 != p)
			bad += evs[i].time < evs[i - 1].time;
	CHECK_EQ_U64(bad, 0, "1 KiB window: the others in order");
	free(evs);
	free(c.p);
}

/*
 * A stream's time horizon: frames go once a frame newer by more than it
 * has been read, however large the window; the order stays by time for
 * frames out of place by less, a frame older than the horizon is late.
 */
static void test_horizon(void)
{
	struct syscap_order q;
	struct syscap_qent e, out[8];
	static const int64_t times[] = { 100, 90, 250, 150, 320, 120, 900 };
	size_t i, k = 0;

	syscap_order_init(&q, 1u << 30);
	syscap_order_set_horizon(&q, 200);
	for (i = 0; i < ARRAY_SIZE(times); i++) {
		e.time = times[i];
		e.off = 256 + FRAME * i;
		CHECK(syscap_order_read(&q, &e, FRAME, e.off + FRAME) == 0,
		      "horizon: frame %zu queued", i);
		while (syscap_order_pop(&q, false, &out[k]))
			k++;
		if (i == 3)
			CHECK_EQ_U64(k, 0, "horizon: nothing goes within 200 "
				     "of the newest (250)");
		if (i == 4)
			CHECK(k == 2 && out[0].time == 90 && out[1].time == 100,
			      "horizon: 320 lets 90 and 100 go, in time order "
			      "(%zu)", k);
	}
	CHECK(k == 6 && out[2].time == 120 && out[3].time == 150 &&
	      out[4].time == 250 && out[5].time == 320,
	      "horizon: 900 lets all but itself go: 120 waited for its "
	      "place (%zu)", k);
	CHECK_EQ_U64(q.late, 0, "horizon: nothing late");
	e.time = 300;   /* older than 320, which went */
	e.off = 256 + FRAME * 7;
	syscap_order_read(&q, &e, FRAME, e.off + FRAME);
	CHECK(syscap_order_pop(&q, false, &out[k]) && out[k].time == 300,
	      "horizon: a frame older than what went goes at once");
	CHECK_EQ_U64(q.late, 1, "horizon: ... counted late");
	syscap_order_release(&q);
}

int main(void)
{
	test_window();
	test_reader();
	test_horizon();
	return done_testing();
}
