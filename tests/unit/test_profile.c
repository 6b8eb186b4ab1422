/*
 * test_profile.c - the profile readers (formats/profile.h) and the
 * protobuf decoder under them: folded stacks with restack's annotations
 * and markers, decimal weights; pprof as restack's writer makes it
 * (inline lines, kernel frames, the truncation marker, labels, a
 * difference's negated base samples) and with every sample type kept
 * (pprof_set_types() out, all_types in); Chrome traces nested by time;
 * and pbufdec's bounds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats/pbufdec.h"
#include "formats/pprof.h"
#include "formats/profile.h"
#include "tests/harness.h"

static char tmp[] = "/tmp/test_profile.XXXXXX";
static char path[64];

static void put(const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	if (f) {
		fwrite(data, 1, len, f);
		fclose(f);
	}
}

static void test_pbufdec(void)
{
	static const uint8_t longv[] = { 0x08, 0xff, 0xff, 0xff, 0xff, 0xff,
					 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 };
	static const uint8_t past[] = { 0x08, 0x01, 0x12, 0x05, 0x01 };
	static const uint8_t packed[] = { 0x0a, 0x03, 0x01, 0xac, 0x02 };
	struct pbufdec d = pbufdec_make(longv, longv, sizeof(longv));
	struct pbuf_field f;
	struct err err;
	uint64_t v, got[2] = { 0, 0 };
	size_t pos = 0, n = 0;

	CHECK(pbufdec_next(&d, &f, &err) < 0 && err.off == 0,
	      "pbufdec: a varint of 11 bytes is an error at its field");
	d = pbufdec_make(past, past, sizeof(past));
	CHECK(pbufdec_next(&d, &f, &err) == 1 && f.num == 1 && f.v == 1,
	      "pbufdec: field 1 = 1");
	CHECK(pbufdec_next(&d, &f, &err) < 0 && err.off == 2,
	      "pbufdec: a length past the message is an error at offset 2");
	d = pbufdec_make(packed, packed, sizeof(packed));
	pbufdec_next(&d, &f, &err);
	while (n < 2 && pbufdec_packed(&d, &f, &pos, &v, &err) > 0)
		got[n++] = v;
	CHECK(n == 2 && got[0] == 1 && got[1] == 300,
	      "pbufdec: packed varints 1, 300");
}

static void test_folded(void)
{
	static const char text[] =
		"# comment\n"
		"t;[truncated: loop];a_[s];b_[i];c_[k] 2\r\n"
		"\n"
		"t;x 1.5\n";
	struct profile_opts o = { .kind = PROFILE_FOLDED };
	const struct rsample *s;
	struct profile *p;
	struct err err;

	put(text, sizeof(text) - 1);
	CHECK(profile_sniff(path) == PROFILE_FOLDED,
	      "folded: told by contents");
	p = profile_open(path, &o, &err);
	if (!CHECK(p != NULL, "folded: opens"))
		return;
	CHECK_EQ_U64(profile_info(p)->scale, 10, "folded: 1 decimal: x10");
	if (CHECK(profile_next(p, &s) == 1, "folded: line 1")) {
		CHECK_STR(s->comm, "t", "folded: first frame is the thread");
		CHECK_EQ_U64(s->end, END_LOOP, "folded: the marker's reason");
		CHECK_EQ_U64(s->nr_frames, 3, "folded: three frames");
		CHECK_EQ_U64(s->nr_kernel, 1, "folded: one kernel frame");
		CHECK_EQ_U64(s->period, 20, "folded: weight 2, scaled");
		CHECK(s->nr_frames == 3 &&
		      !strcmp(s->frames[0].loc->e[0].name, "c") &&
		      s->frames[0].loc->kind == SYM_KERNEL,
		      "folded: leaf first, _[k] a kernel frame");
		CHECK(s->nr_frames == 3 && s->frames[1].loc->e[0].inlined &&
		      s->frames[1].origin == FRAME_STITCHED &&
		      s->frames[2].origin == FRAME_STITCHED,
		      "folded: _[i] inlined, in its caller's stitched frame");
	}
	if (CHECK(profile_next(p, &s) == 1, "folded: line 2"))
		CHECK_EQ_U64(s->count, 15, "folded: 1.5 -> 15");
	CHECK(profile_next(p, &s) == 0, "folded: then the end");
	profile_close(p);

	put("t;a 1\nt;b x\n", 12);
	p = profile_open(path, &o, &err);
	CHECK(p && profile_next(p, &s) == 1 && profile_next(p, &s) < 0 &&
	      profile_err(p)->off == 6,
	      "folded: a line without a weight is an error at its offset");
	profile_close(p);
}

static void test_pprof(void)
{
	static const uint8_t bid[] = { 0xab, 0xcd };
	struct {
		struct sym_loc l;
		struct sym_entry e[2];
	} user = { { .module = "/bin/prog", .rel = 0x1234, .kind = SYM_USER,
		     .nr = 2, .build_id_size = 2, .build_id = bid },
		   { { .name = "inner", .file = "a.c", .line = 7,
		       .inlined = true },
		     { .name = "outer", .file = "a.c", .line = 9 } } },
	  kern = { { .module = "[kernel.kallsyms]", .rel = 0xffff,
		     .kind = SYM_KERNEL, .nr = 1 },
		   { { .name = "do_sys" } } };
	struct rframe fr[2] = { { .loc = &kern.l, .origin = FRAME_KERNEL },
				{ .loc = &user.l } };
	struct rsample in = { .pid = 5, .tid = 6, .comm = "prog", .period = 300,
			      .event = "cpu-clock", .end = END_NO_CFI,
			      .nr_frames = 2, .nr_kernel = 1, .frames = fr };
	struct pprof *pp = pprof_new(NULL);
	struct profile_opts o = { .kind = PROFILE_PPROF };
	const struct rsample *s;
	struct profile *p;
	struct err err;
	FILE *f = fopen(path, "wb");

	if (!pp || !f)
		return;
	pprof_add(pp, &in);
	pprof_add(pp, &in);
	pprof_add_base(pp, &in);
	pprof_write(pp, fileno(f), &err);
	fclose(f);
	pprof_free(pp);
	CHECK(profile_sniff(path) == PROFILE_PPROF, "pprof: told by gzip");
	p = profile_open(path, &o, &err);
	if (!CHECK(p != NULL, "pprof: opens"))
		return;
	CHECK_STR(profile_info(p)->type, "cpu", "pprof: period type cpu");
	CHECK_STR(profile_info(p)->unit, "nanoseconds", "... nanoseconds");
	if (CHECK(profile_next(p, &s) == 1, "pprof: one sample")) {
		CHECK(s->count == 2 && s->period == 600,
		      "pprof: samples 2, period 600");
		CHECK(!strcmp(s->comm, "prog") && s->pid == 5 && s->tid == 6,
		      "pprof: thread, pid and tid from the labels");
		CHECK_EQ_U64(s->end, END_NO_CFI, "pprof: the marker's reason");
		CHECK(s->nr_frames == 2 && s->nr_kernel == 1,
		      "pprof: two frames, the leaf a kernel one");
		CHECK(s->nr_frames == 2 && s->frames[1].loc->nr == 2 &&
		      s->frames[1].loc->e[0].inlined &&
		      !strcmp(s->frames[1].loc->e[0].name, "inner") &&
		      s->frames[1].loc->e[0].line == 7 &&
		      !strcmp(s->frames[1].loc->e[1].name, "outer") &&
		      !s->frames[1].loc->e[1].inlined,
		      "pprof: inline lines innermost first");
		CHECK(s->nr_frames == 2 && s->frames[1].loc->rel == 0x1234 &&
		      s->frames[1].loc->build_id_size == 2 &&
		      s->frames[1].loc->build_id[1] == 0xcd &&
		      !strcmp(s->frames[1].loc->module, "/bin/prog"),
		      "pprof: the mapping's file and build-id, the address");
	}
	CHECK(profile_next(p, &s) == 0, "pprof: the base sample is skipped");
	CHECK_EQ_U64(profile_info(p)->skipped, 1, "... and counted");
	profile_close(p);

	o.sample_type = "samples";
	p = profile_open(path, &o, &err);
	CHECK(p && profile_next(p, &s) == 1 && s->period == 2 && s->count == 2,
	      "pprof: --sample-type samples weighs by samples");
	profile_close(p);
	o.sample_type = "nope";
	p = profile_open(path, &o, &err);
	CHECK(!p && strstr(err.msg, "nope"), "pprof: an unknown sample type");
	profile_close(p);
}

/* n samples s whose values are vals[i * 3...] into path, three types. */
static void put_types(const struct rsample *s, const int64_t *vals,
		      unsigned n, const char *dflt)
{
	static const char *const types[] = { "alloc", "inuse", "delta" },
			  *const units[] = { "count", "bytes", "count" };
	struct pprof *pp = pprof_new(NULL);
	struct err err;
	unsigned i;
	FILE *f = fopen(path, "wb");

	if (!pp || !f || pprof_set_types(pp, 3, types, units, dflt) < 0) {
		CHECK(0, "pprof_set_types");
		if (f)
			fclose(f);
		pprof_free(pp);
		return;
	}
	/* two inputs' headers: the first type, the largest period, the
	 * earliest time but 0, the durations summed */
	CHECK(pprof_add_header(pp, "space", "bytes", 512, 2000, 30) == 0 &&
	      pprof_add_header(pp, "cpu", "nanoseconds", 4096, 0, 12) == 0 &&
	      pprof_add_header(pp, NULL, NULL, 1, 1000, 0) == 0,
	      "pprof_add_header");
	for (i = 0; i < n; i++)
		CHECK(pprof_add_values(pp, &s[i], &vals[3 * i]) == 0,
		      "pprof_add_values %u", i);
	CHECK(pprof_write(pp, fileno(f), &err) == 0, "three types written");
	fclose(f);
	pprof_free(pp);
}

static void test_pprof_types(void)
{
	struct {
		struct sym_loc l;
		struct sym_entry e[1];
	} leaf = { { .module = "/bin/prog", .rel = 0x10, .kind = SYM_USER,
		     .nr = 1 }, { { .name = "leaf" } } };
	struct rframe fr[1] = { { .loc = &leaf.l } };
	struct rsample in[4] = { { .pid = 5, .tid = 6, .comm = "prog",
				   .nr_frames = 1, .frames = fr } };
	/* tid 6 twice: 10 0 -6; tid 7's sum to all 0 and are left out */
	static const int64_t vals[] = { 5, 0, -3, 5, 0, -3,
					1, -1, 0, -1, 1, 0 },
			     one[] = { 5, 0, 3 };
	struct profile_opts o = { .kind = PROFILE_PPROF, .all_types = true };
	const struct profile_info *info;
	const struct rsample *s;
	struct profile *p;
	struct err err;

	in[1] = in[0];
	in[2] = in[0];
	in[2].tid = 7;
	in[3] = in[2];
	put_types(in, vals, 4, "inuse");
	p = profile_open(path, &o, &err);
	if (!CHECK(p != NULL, "types: opens"))
		return;
	info = profile_info(p);
	CHECK(info->nr_types == 3 && !strcmp(info->types[0], "alloc") &&
	      !strcmp(info->units[0], "count") &&
	      !strcmp(info->types[1], "inuse") &&
	      !strcmp(info->units[1], "bytes") &&
	      !strcmp(info->types[2], "delta") &&
	      !strcmp(info->units[2], "count"),
	      "types: the three types and units, in order");
	CHECK(info->default_type && !strcmp(info->default_type, "inuse"),
	      "types: the default");
	CHECK(info->period_type[0] && !strcmp(info->period_type[0], "space") &&
	      info->period_type[1] && !strcmp(info->period_type[1], "bytes"),
	      "types: the first period type");
	CHECK(info->period == 4096 && info->time_nanos == 1000 &&
	      info->duration_nanos == 42,
	      "types: the largest period, earliest time, durations summed");
	if (CHECK(profile_next(p, &s) == 1, "types: a sample whose chosen "
		  "value is 0 comes with all_types"))
		CHECK(s->tid == 6 && info->values[0] == 10 &&
		      info->values[1] == 0 && info->values[2] == -6 &&
		      s->period == 0,
		      "types: its values summed, negative ones too");
	CHECK(profile_next(p, &s) == 0,
	      "types: a sample whose sums are all 0 is left out");
	profile_close(p);

	o.all_types = false;
	p = profile_open(path, &o, &err);
	CHECK(p && profile_next(p, &s) == 0 && profile_info(p)->skipped == 0,
	      "types: without all_types, a chosen value of 0 is skipped");
	profile_close(p);

	put_types(in, one, 1, NULL);
	p = profile_open(path, &o, &err);
	CHECK(p && !profile_info(p)->default_type &&
	      profile_next(p, &s) == 1 && s->period == 3 && s->count == 3,
	      "types: no default: none read, the last type weighs");
	profile_close(p);
}

static void test_chrome(void)
{
	/* b is listed first but nested in a, which starts with it */
	static const char text[] =
		"[{\"name\": \"b\", \"ph\": \"X\", \"ts\": 0, \"dur\": 4.5, "
		"\"pid\": 1, \"tid\": 1},\n"
		"{\"name\": \"a\", \"ph\": \"X\", \"ts\": 0, \"dur\": 10, "
		"\"pid\": 1, \"tid\": 1},\n"
		"{\"name\": \"c\", \"ph\": \"B\", \"ts\": 10, \"pid\": 1, "
		"\"tid\": 1},\n"
		"{\"ph\": \"E\", \"ts\": 12, \"pid\": 1, \"tid\": 1}";
	struct profile_opts o = { .kind = PROFILE_CHROME };
	const struct rsample *s;
	struct profile *p;
	struct err err;
	uint64_t a = 0, ab = 0, c = 0;

	put(text, sizeof(text) - 1);
	CHECK(profile_sniff(path) == PROFILE_CHROME, "chrome: told by '['");
	p = profile_open(path, &o, &err);
	if (!CHECK(p != NULL, "chrome: a trace without its ']' opens"))
		return;
	while (profile_next(p, &s) == 1) {
		if (s->nr_frames == 1 && !strcmp(s->frames[0].loc->e[0].name,
						 "a"))
			a = s->period;
		else if (s->nr_frames == 2 &&
			 !strcmp(s->frames[1].loc->e[0].name, "a") &&
			 !strcmp(s->frames[0].loc->e[0].name, "b"))
			ab = s->period;
		else if (s->nr_frames == 1)
			c = s->period;
		CHECK_STR(s->comm, "1/1", "chrome: unnamed thread PID/TID");
	}
	CHECK_EQ_U64(a, 5500, "chrome: a's self time, ns");
	CHECK_EQ_U64(ab, 4500, "chrome: a;b (nested by time, not order)");
	CHECK_EQ_U64(c, 2000, "chrome: B/E pair c");
	profile_close(p);
}

int main(void)
{
	if (!mkdtemp(tmp))
		return 1;
	snprintf(path, sizeof(path), "%s/in", tmp);
	test_pbufdec();
	test_folded();
	test_pprof();
	test_pprof_types();
	test_chrome();
	unlink(path);
	rmdir(tmp);
	return done_testing();
}
