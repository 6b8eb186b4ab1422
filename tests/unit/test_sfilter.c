/*
 * test_sfilter.c - the sample filter: pid/tid/command lists, perf
 * script's --time forms (seconds, open ends, ranges, percentages as perf
 * rounds them) and command names from COMM and FORK events.
 */
#include <string.h>

#include "common/sfilter.h"
#include "tests/harness.h"

#define S 1000000000ull

static bool keep_t(const struct sfilter *f, uint64_t t)
{
	struct sfilter_names n;
	bool k;

	sfilter_names_init(&n);
	k = sfilter_keep(f, &n, 1, 1, t);
	sfilter_names_release(&n);
	return k;
}

static void test_ids(void)
{
	struct sfilter f = { 0 };
	struct sfilter_names n;
	char msg[256];

	sfilter_names_init(&n);
	CHECK(sfilter_empty(&f), "a new filter keeps everything");
	CHECK(sfilter_add_ids(&f, false, "30,10 20", msg, sizeof(msg)) == 0,
	      "pids by commas and spaces");
	CHECK(sfilter_keep(&f, &n, 20, 99, 5), "pid in the list kept");
	CHECK(!sfilter_keep(&f, &n, 21, 20, 5), "pid not in the list dropped");
	CHECK(sfilter_add_ids(&f, true, "99", msg, sizeof(msg)) == 0, "tids");
	CHECK(sfilter_keep(&f, &n, 30, 99, 5), "pid and tid both match");
	CHECK(!sfilter_keep(&f, &n, 30, 98, 5), "pid matches, tid not");
	CHECK(sfilter_add_ids(&f, false, "x1", msg, sizeof(msg)) < 0 &&
	      strstr(msg, "'x1'"), "not a number: %s", msg);
	CHECK(sfilter_add_ids(&f, false, ",", msg, sizeof(msg)) < 0,
	      "an empty list");
	CHECK(sfilter_add_ids(&f, false, "3000000000", msg, sizeof(msg)) < 0,
	      "beyond a pid's range");
	sfilter_names_release(&n);
}

static void test_comms(void)
{
	struct sfilter f = { 0 };
	struct sfilter_names n;
	struct event ev = { 0 };
	char msg[256];

	sfilter_names_init(&n);
	CHECK(sfilter_add_comms(&f, "busy,:7", msg, sizeof(msg)) == 0,
	      "command names");
	CHECK(sfilter_keep(&f, &n, 7, 7, 1), "an unnamed thread is ':tid'");
	CHECK(!sfilter_keep(&f, &n, 5, 5, 1), "':5' is not in the list");
	ev.type = EVENT_COMM;
	ev.pid = ev.tid = 5;
	ev.comm.comm = "busy";
	CHECK(sfilter_names_event(&n, &ev) == 0, "COMM taken");
	CHECK(sfilter_keep(&f, &n, 5, 5, 1), "named by COMM");
	ev.type = EVENT_FORK;
	ev.pid = 5;
	ev.tid = 6;
	ev.fork.ppid = ev.fork.ptid = 5;
	CHECK(sfilter_names_event(&n, &ev) == 0, "FORK taken");
	CHECK_STR(sfilter_names_get(&n, 6), "busy", "a new thread has its "
		  "parent's name");
	ev.type = EVENT_COMM;
	ev.tid = 5;
	ev.comm.comm = "other";
	sfilter_names_event(&n, &ev);
	CHECK(!sfilter_keep(&f, &n, 5, 5, 1), "renamed: dropped");
	CHECK(sfilter_keep(&f, &n, 5, 6, 1), "its thread keeps the old name");
	CHECK(sfilter_add_comms(&f, ",", msg, sizeof(msg)) < 0 ||
	      f.nr_comms == 2, "no names in ','");
	sfilter_names_release(&n);
}

static void test_time_abs(void)
{
	struct sfilter f = { 0 };
	char msg[512];

	CHECK(sfilter_set_time(&f, "10.5,11", msg, sizeof(msg)) == 0,
	      "START,END");
	CHECK_EQ_U64(f.time[0].start, 10 * S + S / 2, "start in ns");
	CHECK(!keep_t(&f, 10 * S + S / 2 - 1), "before START dropped");
	CHECK(keep_t(&f, 10 * S + S / 2), "START itself kept");
	CHECK(keep_t(&f, 11 * S), "END itself kept");
	CHECK(!keep_t(&f, 11 * S + 1), "after END dropped");
	CHECK(keep_t(&f, 0), "no time: kept, as perf keeps it");
	CHECK(sfilter_set_time(&f, ",11.000000001", msg, sizeof(msg)) == 0,
	      "open start");
	CHECK(keep_t(&f, 1) && !keep_t(&f, 11 * S + 2), "open start kept");
	CHECK(sfilter_set_time(&f, "11,", msg, sizeof(msg)) == 0, "open end");
	CHECK(keep_t(&f, 1000 * S) && !keep_t(&f, 10 * S), "open end kept");
	CHECK(sfilter_set_time(&f, "1,2 3,4", msg, sizeof(msg)) == 0,
	      "two ranges");
	CHECK(keep_t(&f, 2 * S) && !keep_t(&f, 2 * S + 1) &&
	      keep_t(&f, 3 * S) && !keep_t(&f, 5 * S), "between them dropped");
	CHECK(sfilter_set_time(&f, "3,4 1,2", msg, sizeof(msg)) < 0,
	      "ranges out of order");
	CHECK(sfilter_set_time(&f, "2,1", msg, sizeof(msg)) < 0,
	      "END before START");
	CHECK(sfilter_set_time(&f, "1.1234567891,2", msg, sizeof(msg)) < 0,
	      "ten decimals");
	CHECK(sfilter_set_time(&f, "12", msg, sizeof(msg)) < 0 &&
	      f.nr_time == 0, "no comma: an error, nothing kept of it");
	CHECK(sfilter_set_time(&f, "a,b", msg, sizeof(msg)) < 0,
	      "not numbers");
	CHECK(!sfilter_needs_span(&f), "seconds need no span");
}

static void test_time_pct(void)
{
	struct sfilter f = { 0 };
	char msg[512];

	CHECK(sfilter_set_time(&f, "10%/2", msg, sizeof(msg)) == 0, "P%%/N");
	CHECK(sfilter_needs_span(&f), "percentages need the span");
	sfilter_set_span(&f, 1000, 2000);
	/* as perf: 1000 + 100 .. 1000 + 200 - 1 */
	CHECK_EQ_U64(f.time[0].start, 1100, "second tenth's start");
	CHECK_EQ_U64(f.time[0].end, 1199, "its end, one ns before the next");
	CHECK(sfilter_set_time(&f, "0%-10%,90%-100%", msg, sizeof(msg)) == 0,
	      "P%%-Q%% list");
	sfilter_set_span(&f, 1000, 2000);
	CHECK_EQ_U64(f.time[1].end, 2000, "the last sample's time stays");
	CHECK(keep_t(&f, 1099) && !keep_t(&f, 1100) && !keep_t(&f, 1899) &&
	      keep_t(&f, 1900) && keep_t(&f, 2000), "two slices");
	CHECK(sfilter_set_time(&f, "25%", msg, sizeof(msg)) == 0, "P%%");
	sfilter_set_span(&f, 0, 1001);
	CHECK_EQ_U64(f.time[0].end, 249, "first quarter, rounded as perf");
	CHECK(sfilter_set_time(&f, "50%/3", msg, sizeof(msg)) < 0,
	      "a slice past the end");
	CHECK(sfilter_set_time(&f, "0%", msg, sizeof(msg)) < 0, "0%% alone");
	CHECK(sfilter_set_time(&f, "101%-102%", msg, sizeof(msg)) < 0,
	      "beyond 100%%");
	CHECK(sfilter_set_time(&f, "10%x/2", msg, sizeof(msg)) < 0,
	      "text after %%");
}

static void test_split(void)
{
	struct sfilter f = { 0 };
	struct sfilter_names n;
	char msg[256];

	sfilter_names_init(&n);
	f.split = true;
	f.split_pid = 0;
	CHECK(!sfilter_empty(&f), "a split filter is not empty");
	CHECK(sfilter_keep(&f, &n, 0, 0, 1) && sfilter_keep(&f, &n, 0, 3, 1),
	      "one process: pid 0 (idle) is a process too");
	CHECK(!sfilter_keep(&f, &n, 1, 0, 1), "another process dropped");
	f.split_thread = true;
	f.split_pid = 4;
	f.split_tid = 5;
	CHECK(sfilter_keep(&f, &n, 4, 5, 1) && !sfilter_keep(&f, &n, 4, 4, 1) &&
	      !sfilter_keep(&f, &n, 6, 5, 1), "one thread: pid and tid");
	sfilter_add_ids(&f, false, "7", msg, sizeof(msg));
	CHECK(!sfilter_keep(&f, &n, 4, 5, 1), "and the other filters too");
	sfilter_names_release(&n);
}

int main(void)
{
	test_split();
	test_ids();
	test_comms();
	test_time_abs();
	test_time_pct();
	return done_testing();
}
