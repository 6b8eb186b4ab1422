/*
 * test_shards.c - workers that each put the results of their share of the
 * records, merged in order: every result comes out once, in (pass, order)
 * order, whole (frames and name), whatever the number of workers, their
 * speed, long stretches where a worker has nothing, results too big for
 * the ring, and a ring that wraps many times; records put with a result,
 * or alone, come out whole (their bytes and strings copied); a failing
 * worker or emit stops the run without hanging.
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/harness.h"
#include "unwind/shards.h"

#define RECORDS 60000u

struct run_ctx {
	struct shards *sh;
	unsigned nr;
	int fail_worker;        /* this worker fails at record 30000; -1 */
	uint64_t fail_emit_at;  /* emit fails on this result; 0: never */
	/* checked by emit, on the merger's thread */
	uint64_t emitted, last_key, bad;
	unsigned pass_seen;
	bool race;              /* work_end_race()'s run */
};

/*
 * Who has record r: stretches of 5000 records belong to one worker, the
 * rest is spread; a record is a result in pass 0 unless r % 7 == 3, which
 * comes in pass 1 (a retry).
 */
static unsigned owner(unsigned r, unsigned nr)
{
	if ((r / 5000) % 3 == 1)
		return (r / 5000) % nr;
	return (r * 2654435761u >> 7) % nr;
}

static unsigned nr_frames(unsigned r)
{
	/* a few larger than the ring takes whole (SHARDS_RING / 8 bytes) */
	return r % 9973 == 17 ? 30000 : r % 41;
}

/*
 * Records: every fifth result comes with one (a COMM record whose name is
 * in its bytes), every eleventh is a record alone.  Their sizes vary with r, up to 2 KiB.
 */
static bool with_record(unsigned r)
{
	return r % 5 == 0;
}

static bool record_alone(unsigned r)
{
	return r % 11 == 4;
}

static size_t record_len(unsigned r)
{
	return 16 + 8 * (r % 251);
}

static uint8_t record_byte(unsigned r, size_t i)
{
	return (uint8_t)(r * 31 + i * 7);
}

/* The record of r in ev (raw: record_len(r) bytes, name: 16). */
static void make_record(unsigned r, unsigned pass, struct event *ev,
			uint8_t *raw, char *name)
{
	size_t i, n = record_len(r);

	memset(ev, 0, sizeof(*ev));
	ev->type = EVENT_COMM;
	ev->order = r;
	ev->time = (uint64_t)pass << 32 | r;
	for (i = 0; i < n; i++)
		raw[i] = record_byte(r, i);
	snprintf(name, 16, "c%u", r);
	memcpy(raw + 8, name, strlen(name) + 1);
	ev->comm.comm = (const char *)raw + 8;
	ev->raw = raw;
	ev->raw_len = n;
}

/* Whether ev is make_record()'s for r, copied away from the original. */
static bool record_ok(const struct event *ev, unsigned r, unsigned pass)
{
	char name[16];
	size_t i;

	if (!ev || ev->type != EVENT_COMM || ev->order != r ||
	    ev->time != ((uint64_t)pass << 32 | r) ||
	    ev->raw_len != record_len(r) ||
	    ev->comm.comm != (const char *)ev->raw + 8)
		return false;
	snprintf(name, sizeof(name), "c%u", r);
	if (strcmp(ev->comm.comm, name))
		return false;
	for (i = 16; i < ev->raw_len; i++)
		if (ev->raw[i] != record_byte(r, i))
			return false;
	return true;
}

static int emit(void *ctx, uint64_t order, const struct rsample *rs,
		const struct event *ev)
{
	struct run_ctx *c = ctx;
	unsigned r, pass, i;
	char comm[32];
	uint64_t key;

	if (!rs) {
		/* a record alone */
		r = (unsigned)order;
		pass = ev ? (unsigned)(ev->time >> 32) : 0;
		if (c->emitted && ((uint64_t)pass << 32 | r) <= c->last_key)
			c->bad++;
		if (!record_alone(r) || !record_ok(ev, r, pass))
			c->bad++;
		c->last_key = (uint64_t)pass << 32 | r;
		c->emitted++;
		return 0;
	}
	r = (unsigned)rs->time;
	pass = (unsigned)rs->period;
	key = (uint64_t)pass << 32 | r;
	if (!c->race && (with_record(r) ? !record_ok(ev, r, pass) : ev != NULL))
		c->bad++;

	if (c->fail_emit_at && c->emitted + 1 == c->fail_emit_at)
		return -1;
	if (c->emitted && key <= c->last_key)
		c->bad++;
	if (order != r)         /* the order it was put with */
		c->bad++;
	c->last_key = key;
	c->emitted++;
	snprintf(comm, sizeof(comm), "t%u", r % 1000);
	if (c->race)
		return 0;
	if (rs->nr_frames != nr_frames(r) || strcmp(rs->comm, comm) ||
	    (unsigned)rs->tid != owner(r, c->nr))
		c->bad++;
	for (i = 0; i < rs->nr_frames; i++)
		if (rs->frames[i].pc != (uint64_t)r * 100000 + i)
			c->bad++;
	return 0;
}

static int work(void *ctx, unsigned me)
{
	struct run_ctx *c = ctx;
	static __thread struct rframe frames[30000];
	static __thread uint8_t raw[2048];
	unsigned pass, r, i;
	char comm[32], name[16];
	struct event ev;

	for (pass = 0; pass < 2; pass++) {
		for (r = 0; r < RECORDS; r++) {
			struct rsample rs;

			if ((int)me == c->fail_worker && r == 30000)
				return -1;
			if (owner(r, c->nr) != me ||
			    (r % 7 == 3) != (pass == 1)) {
				shards_progress(c->sh, me, r + 1);
				continue;
			}
			/* some slow stretches, so the others run ahead */
			if (me == 1 && r % 10000 < 50)
				usleep(20);
			make_record(r, pass, &ev, raw, name);
			if (record_alone(r)) {
				if (shards_put(c->sh, me, r, NULL, &ev, 0) < 0)
					return -1;
				/* the original is gone once put */
				memset(raw, 0xee, sizeof(raw));
				continue;
			}
			memset(&rs, 0, sizeof(rs));
			rs.time = r;
			rs.period = pass;
			rs.tid = (int32_t)me;
			rs.nr_frames = nr_frames(r);
			for (i = 0; i < rs.nr_frames; i++)
				frames[i].pc = (uint64_t)r * 100000 + i;
			rs.frames = frames;
			snprintf(comm, sizeof(comm), "t%u", r % 1000);
			rs.comm = comm;
			if (shards_put(c->sh, me, r, &rs,
				       with_record(r) ? &ev : NULL, 0) < 0)
				return -1;
			memset(raw, 0xee, sizeof(raw));
		}
		if (shards_end_pass(c->sh, me) < 0)
			return -1;
	}
	return 0;
}

/*
 * A pass's end seen at another worker's head bounds what that worker may
 * still emit by the next pass's start, not by nothing: worker 0 emits a
 * result of pass 0 at once while worker 1's ring holds only the end of
 * its pass 0; in pass 1 worker 1 puts order 5 (unpublished: fewer than a
 * publication's worth), then worker 0 puts order 10, which must wait for
 * it.  The steps are taken in turn (step).
 */
static atomic_uint step;

static void wait_step(unsigned n)
{
	while (atomic_load(&step) < n)
		usleep(100);
}

static int put_one(struct shards *sh, unsigned me, unsigned r, unsigned pass)
{
	struct rsample rs;
	char comm[32];

	memset(&rs, 0, sizeof(rs));
	rs.time = r;
	rs.period = pass;
	rs.tid = (int32_t)me;
	snprintf(comm, sizeof(comm), "t%u", r % 1000);
	rs.comm = comm;
	return shards_put(sh, me, r, &rs, NULL, 0);
}

static int work_end_race(void *ctx, unsigned me)
{
	struct run_ctx *c = ctx;

	if (me == 1) {
		if (shards_end_pass(c->sh, 1) < 0)
			return -1;
		atomic_store(&step, 1);
		wait_step(2);
		if (put_one(c->sh, 1, 5, 1) < 0)
			return -1;
		atomic_store(&step, 3);
		return shards_end_pass(c->sh, 1);
	}
	wait_step(1);
	if (put_one(c->sh, 0, 1, 0) < 0 || shards_end_pass(c->sh, 0) < 0)
		return -1;
	atomic_store(&step, 2);
	wait_step(3);
	if (put_one(c->sh, 0, 10, 1) < 0)
		return -1;
	return shards_end_pass(c->sh, 0);
}

static int run(unsigned nr, int fail_worker, uint64_t fail_emit_at,
	       struct run_ctx *c)
{
	bool thread_failed;
	int rc;

	memset(c, 0, sizeof(*c));
	c->nr = nr;
	c->fail_worker = fail_worker;
	c->fail_emit_at = fail_emit_at;
	c->sh = shards_new(nr, emit, c);
	if (!c->sh)
		return -2;
	rc = shards_run(c->sh, work, c, &thread_failed);
	shards_free(c->sh);
	return rc;
}

int main(void)
{
	static const unsigned nrs[] = { 1, 2, 3, 8 };
	struct run_ctx c;
	bool thread_failed;
	unsigned i;
	int rc;

	alarm(120);   /* a hang fails the test */
	for (i = 0; i < sizeof(nrs) / sizeof(nrs[0]); i++) {
		rc = run(nrs[i], -1, 0, &c);
		CHECK(rc == 0 && c.emitted == RECORDS && c.bad == 0,
		      "%u workers: %llu of %u results, in (pass, order) order, "
		      "whole (%llu wrong)", nrs[i],
		      (unsigned long long)c.emitted, RECORDS,
		      (unsigned long long)c.bad);
	}
	rc = run(3, 1, 0, &c);
	CHECK(rc == -1 && c.bad == 0 && c.emitted < RECORDS,
	      "a worker that fails stops the run (%llu emitted before)",
	      (unsigned long long)c.emitted);
	rc = run(3, 0, 0, &c);
	CHECK(rc == -1 && c.bad == 0, "the merger's own work failing too");
	rc = run(2, -1, 1000, &c);
	CHECK(rc == -1 && c.emitted == 999 && c.bad == 0,
	      "emit failing stops the run after what it took");
	memset(&c, 0, sizeof(c));
	c.nr = 2;
	c.race = true;
	c.sh = shards_new(2, emit, &c);
	rc = c.sh ? shards_run(c.sh, work_end_race, &c, &thread_failed) : -2;
	shards_free(c.sh);
	CHECK(rc == 0 && c.emitted == 3 && c.bad == 0,
	      "a pass's end at another worker's head: that worker's next "
	      "pass still comes first where its orders are smaller (%llu "
	      "emitted, %llu out of order)", (unsigned long long)c.emitted,
	      (unsigned long long)c.bad);
	return done_testing();
}
