/*
 * test_firefox.c - the Firefox Profiler writer on hand-made samples: the
 * columns it writes for inline, kernel, unknown, JIT, stitched and
 * truncated frames (addresses relative to the module, -1 where there is
 * none or it does not fit), the lib's codeId and breakpadId, times in
 * milliseconds, weights, the "Truncated stacks" markers, the threads'
 * starts and ends and lost samples as markers, an empty profile, the
 * gzip output, and the same bytes on every run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "formats/firefox.h"
#include "tests/harness.h"

struct loc2 {
	struct sym_loc l;
	struct sym_entry e[2];
};

static const uint8_t bid[20] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13,
				 14, 15, 16, 17, 18, 19, 20 };
static struct loc2 main_loc, inl_loc, far_loc, k_loc, unk_loc, jit_loc;

static void setup(void)
{
	main_loc.l = (struct sym_loc){ .module = "/usr/bin/app", .rel = 0x1000,
				       .kind = SYM_USER, .nr = 1,
				       .build_id_size = 20, .build_id = bid };
	main_loc.e[0] = (struct sym_entry){ .name = "main", .file = "app.c",
					    .line = 7 };
	/* outer() with inner() inlined at 0x1234 */
	inl_loc.l = main_loc.l;
	inl_loc.l.rel = 0x1234;
	inl_loc.l.nr = 2;
	inl_loc.e[0] = (struct sym_entry){ .name = "inner", .file = "app.c",
					   .line = 12, .inlined = true };
	inl_loc.e[1] = (struct sym_entry){ .name = "outer", .file = "app.c",
					   .line = 30 };
	far_loc.l = main_loc.l;
	far_loc.l.rel = 0x90000000;   /* over 2^31 - 1 */
	far_loc.e[0] = (struct sym_entry){ .name = "far" };
	k_loc.l = (struct sym_loc){ .module = "[kernel.kallsyms]",
				    .rel = 0xffffffff81000000ULL,
				    .kind = SYM_KERNEL, .nr = 1 };
	k_loc.e[0] = (struct sym_entry){ .name = "do_syscall_64" };
	unk_loc.l = (struct sym_loc){ .kind = SYM_UNKNOWN, .nr = 1 };
	jit_loc.l = (struct sym_loc){ .module = "/tmp/perf-10.map",
				      .rel = 0x5000, .kind = SYM_JIT, .nr = 1 };
	jit_loc.e[0] = (struct sym_entry){ .name = "JS:fib" };
}

/* Writes ff to a temporary file; returns its contents (malloc'd). */
static char *render(struct firefox *ff, size_t *len)
{
	FILE *f = tmpfile();
	struct err err;

	if (!f)
		return NULL;
	if (firefox_write(ff, fileno(f), &err) < 0) {
		fclose(f);
		return NULL;
	}
	return harness_read_back(f, len);
}

/*
 * Five samples of thread 10/10 ("app"), 1 ms apart from 5 s, then one of
 * thread 10/11 ("worker"): kernel over inlined user code, a stitched
 * main, an unknown leaf, two truncated stacks (window exhausted), JIT
 * code at a far address.
 */
static struct firefox *profile(bool period, bool plain)
{
	struct firefox *ff = firefox_new(&(struct firefox_opts){
		.period = period, .plain = plain });
	struct rframe fr[4];
	struct rsample s;
	struct firefox_meta m = { .interval_ms = 1, .arch = "x86_64",
				  .name = "t.data" };
	int i;

	memset(&s, 0, sizeof(s));
	s.pid = 10;
	s.tid = 10;
	s.comm = "app";
	s.event = "cpu-clock";
	s.frames = fr;
	for (i = 0; ff && i < 6; i++) {
		s.time = 5000000000ULL + (uint64_t)i * 1000000 +
			 (i == 5 ? 500 : 0);
		s.period = 1000000 + (uint64_t)i;
		s.end = END_ROOT;
		s.nr_kernel = 0;
		fr[0] = (struct rframe){ .origin = FRAME_SAMPLE };
		fr[1] = (struct rframe){ .origin = FRAME_CFI_EH,
					 .loc = &main_loc.l };
		switch (i) {
		case 0:   /* kernel, inner/outer, main (stitched) */
			s.nr_frames = 3;
			s.nr_kernel = 1;
			fr[0].loc = &k_loc.l;
			fr[0].origin = FRAME_KERNEL;
			fr[1] = (struct rframe){ .origin = FRAME_SAMPLE,
						 .loc = &inl_loc.l };
			fr[2] = (struct rframe){ .origin = FRAME_STITCHED,
						 .loc = &main_loc.l };
			break;
		case 1:   /* unknown, main */
			s.nr_frames = 2;
			fr[0].loc = &unk_loc.l;
			break;
		case 2:
		case 3:   /* truncated: far, main */
			s.nr_frames = 2;
			s.end = END_WINDOW;
			fr[0].loc = &far_loc.l;
			break;
		case 4:   /* JIT, main */
			s.nr_frames = 2;
			fr[0].loc = &jit_loc.l;
			break;
		case 5:   /* another thread: main alone */
			s.tid = 11;
			s.comm = "worker";
			s.nr_frames = 1;
			fr[0] = fr[1];
			break;
		}
		if (firefox_add(ff, &s) < 0) {
			firefox_free(ff);
			return NULL;
		}
	}
	if (ff && firefox_set_meta(ff, &m) < 0) {
		firefox_free(ff);
		return NULL;
	}
	return ff;
}

/* Whether json has needle, with a diagnostic when not. */
static bool has(const char *json, const char *needle)
{
	if (json && strstr(json, needle))
		return true;
	DIAG("missing: %s", needle);
	return false;
}

static void test_columns(void)
{
	struct firefox *ff = profile(false, true);
	size_t len = 0, len2 = 0;
	char *a = ff ? render(ff, &len) : NULL, *b;

	firefox_free(ff);
	ff = profile(false, true);
	b = ff ? render(ff, &len2) : NULL;
	firefox_free(ff);
	CHECK(a && b && len == len2 && !memcmp(a, b, len),
	      "same bytes on every run (%zu)", len);
	CHECK(has(a, "\"preprocessedProfileVersion\":70,") &&
	      has(a, "\"product\":\"restack\"") &&
	      has(a, "\"symbolicated\":true") &&
	      has(a, "\"startTime\":5000,") &&
	      has(a, "\"interval\":1,"), "meta");
	CHECK(has(a, "{\"name\":\"Stitched\",\"color\":\"purple\","
		     "\"subcategories\":[\"Other\"]}"), "categories");
	/* strings: the marker names first, then in order of first sight */
	CHECK(has(a, "\"stringArray\":[\"Truncated stacks\",\"Thread start\","
		     "\"Thread end\",\"Lost samples\",\"Lost records\",\"app\","
		     "\"/usr/bin/app\",\"app.c\",\"main\",\"outer\","
		     "\"inner\",\"[kernel.kallsyms]\",\"do_syscall_64\","
		     "\"[unknown]\",\"[truncated: window exhausted]\","
		     "\"window exhausted\",\"far\",\"perf-10.map\","
		     "\"/tmp/perf-10.map\",\"JS:fib\",\"worker\"]"),
	      "stringArray");
	/*
	 * Frames in order of first sight: main (stitched), outer, inner
	 * (inlined at 0x1234 = 4660), do_syscall_64 (kernel: no address,
	 * no lib); main (found by CFI: User), [unknown]; the marker; far
	 * (0x90000000 does not fit: -1); JS:fib (JIT, its own lib).
	 */
	CHECK(has(a, "\"address\":[4096,4660,4660,-1,4096,-1,-1,-1,20480]"),
	      "frame addresses: relative, -1 without a module or over 2^31");
	CHECK(has(a, "\"lib\":[0,0,0,-1,0,-1,-1,0,1]"), "frame libs");
	CHECK(has(a, "\"inlineDepth\":[0,0,1,0,0,0,0,0,0]"), "inline depths");
	CHECK(has(a, "\"category\":[4,1,1,2,1,0,5,1,3]"),
	      "categories: Stitched, User, User, Kernel, User, Other, "
	      "Truncated, User, JIT");
	CHECK(has(a, "\"line\":[7,30,12,null,7,null,null,null,null]"),
	      "DWARF lines");
	CHECK(has(a, "\"codeId\":"
		     "\"0102030405060708090a0b0c0d0e0f1011121314\"") &&
	      has(a, "\"breakpadId\":\"0403020106050807090A0B0C0D0E0F100\""),
	      "lib: build-id as codeId and breakpadId");
	CHECK(has(a, "\"libs\":[{\"arch\":\"x86_64\",\"name\":\"app\","
		     "\"path\":\"/usr/bin/app\",\"debugName\":\"app\","
		     "\"debugPath\":\"/usr/bin/app\""), "lib: path and name");
	CHECK(has(a, "\"breakpadId\":\"\",\"codeId\":null}"),
	      "lib without a build-id");
	/* stacks root first: main (stitched), outer, inner, kernel; main,
	 * unknown; marker, main, far; main (4 again), JS:fib */
	CHECK(has(a, "\"stackTable\":{\"length\":10,"
		     "\"frame\":[0,1,2,3,4,5,6,4,7,8],"
		     "\"prefixOffset\":[0,1,1,1,0,1,0,1,1,5]}"),
	      "stack table: prefixes point back");
	CHECK(has(a, "\"samples\":{\"length\":5,\"weightType\":\"samples\","
		     "\"weight\":null,\"stack\":[3,5,8,8,9],"
		     "\"time\":[0,1,2,3,4]}"), "thread 10: samples");
	CHECK(has(a, "\"samples\":{\"length\":1,\"weightType\":\"samples\","
		     "\"weight\":null,\"stack\":[4],\"time\":[5.0005]}"),
	      "thread 11: its sample, time in ms to the nanosecond");
	CHECK(has(a, "\"name\":\"worker\",\"processName\":\"app\","
		     "\"isMainThread\":false,\"pid\":\"10\",\"tid\":\"11\""),
	      "thread 11: named, in process 10");
	CHECK(has(a, "\"registerTime\":0,\"unregisterTime\":4,") &&
	      has(a, "\"registerTime\":5.0005,\"unregisterTime\":5.0005,"),
	      "threads registered from first to last sample");
	CHECK(has(a, "\"markers\":{\"length\":1,\"data\":[{\"type\":"
		     "\"TruncatedStacks\",\"reason\":\"window exhausted\","
		     "\"samples\":2}],\"name\":[0],\"startTime\":[2],"
		     "\"endTime\":[3],\"phase\":[1],\"category\":[5]}"),
	      "two truncated samples: one marker");
	CHECK(has(a, "\"markers\":{\"length\":0,\"data\":[],\"name\":[],"
		     "\"startTime\":[],\"endTime\":[],\"phase\":[],"
		     "\"category\":[]}"), "no marker on thread 11");
	free(a);
	free(b);
}

static void test_period_gzip(void)
{
	struct firefox *ff = profile(true, true);
	size_t len = 0, zlen = 0;
	char *plain = ff ? render(ff, &len) : NULL, *gz, *out;
	uLongf outlen = 0;
	z_stream z;

	firefox_free(ff);
	CHECK(has(plain, "\"weight\":[1000000,1000001,1000002,1000003,"
			 "1000004],\"stack\""), "--weight period: the periods");
	ff = profile(true, false);
	gz = ff ? render(ff, &zlen) : NULL;
	firefox_free(ff);
	CHECK(gz && zlen > 10 && (uint8_t)gz[0] == 0x1f &&
	      (uint8_t)gz[1] == 0x8b && zlen < len, "gzip: %zu bytes for %zu",
	      zlen, len);
	out = malloc(len + 1);
	memset(&z, 0, sizeof(z));
	if (gz && out && inflateInit2(&z, 15 + 16) == Z_OK) {
		z.next_in = (unsigned char *)gz;
		z.avail_in = (uInt)zlen;
		z.next_out = (unsigned char *)out;
		z.avail_out = (uInt)len + 1;
		if (inflate(&z, Z_FINISH) == Z_STREAM_END)
			outlen = z.total_out;
		inflateEnd(&z);
	}
	CHECK(plain && outlen == len && !memcmp(out, plain, len),
	      "gzip: the plain JSON inside");
	free(out);
	free(gz);
	free(plain);
}

/*
 * Events: thread 10/11 started 2 ms before the first sample (the
 * profile's zero moves there) and ended; lost samples of an unknown
 * thread of process 10 and of an unknown process go to 10/10; the start
 * of 10/12, which has no samples, is left out.
 */
static void test_events(void)
{
	struct firefox *ff = profile(false, true);
	const uint64_t ms = 1000000, t0 = 5000000000ULL;
	size_t len = 0;
	char *a;

	if (ff && (firefox_add_event(ff, FIREFOX_LOST_SAMPLES, 10, 99,
				     t0 + 3 * ms + 5, 7) < 0 ||
		   firefox_add_event(ff, FIREFOX_THREAD_END, 10, 11,
				     t0 + 9 * ms, 0) < 0 ||
		   firefox_add_event(ff, FIREFOX_THREAD_START, 10, 11,
				     t0 - 2 * ms, 0) < 0 ||
		   firefox_add_event(ff, FIREFOX_THREAD_START, 10, 12,
				     t0 - 5 * ms, 0) < 0 ||
		   firefox_add_event(ff, FIREFOX_LOST_RECORDS, 77, 77,
				     t0 + 1 * ms, 3) < 0)) {
		firefox_free(ff);
		ff = NULL;
	}
	a = ff ? render(ff, &len) : NULL;
	firefox_free(ff);
	CHECK(has(a, "\"startTime\":4998,") &&
	      has(a, "\"profilingStartTime\":0,\"profilingEndTime\":12,"),
	      "the profile starts at the earliest event, ends after the last");
	CHECK(has(a, "\"time\":[2,3,4,5,6]}"), "sample times from there");
	CHECK(has(a, "\"processStartupTime\":0,\"processShutdownTime\":null,"
		     "\"registerTime\":0,\"unregisterTime\":11,"),
	      "thread 11: from its start to its end");
	CHECK(has(a, "\"registerTime\":2,\"unregisterTime\":6,"),
	      "thread 10: from its first to its last sample");
	CHECK(has(a, "\"markers\":{\"length\":2,\"data\":[null,null],"
		     "\"name\":[1,2],\"startTime\":[0,11],"
		     "\"endTime\":[null,null],\"phase\":[0,0],"
		     "\"category\":[0,0]}"),
	      "thread 11: 'Thread start' and 'Thread end' instants");
	CHECK(has(a, "\"markers\":{\"length\":3,\"data\":["
		     "{\"type\":\"Lost\",\"what\":\"records\",\"count\":3},"
		     "{\"type\":\"TruncatedStacks\","
		     "\"reason\":\"window exhausted\",\"samples\":2},"
		     "{\"type\":\"Lost\",\"what\":\"samples\",\"count\":7}],"
		     "\"name\":[4,0,3],\"startTime\":[3,4,5.000005],"
		     "\"endTime\":[null,5,null],\"phase\":[0,1,0],"
		     "\"category\":[0,5,0]}"),
	      "thread 10: lost records and samples of unknown threads, in "
	      "time order with its truncated stacks");
	CHECK(has(a, "{\"name\":\"Lost\",") &&
	      has(a, "{\"key\":\"count\",\"label\":\"Count\","
		     "\"format\":\"integer\"}"), "the Lost marker schema");
	free(a);
}

/* One function per name and module, whatever file DWARF gives a frame:
 * the profiler merges call nodes by function, folded output by name. */
static void test_one_func(void)
{
	struct firefox *ff = firefox_new(&(struct firefox_opts){
		.plain = true });
	struct loc2 a = main_loc, b = main_loc;
	struct rframe fr[1];
	struct rsample s = { .pid = 1, .tid = 1, .comm = "x", .nr_frames = 1,
			     .frames = fr };
	size_t len = 0;
	char *out = NULL;

	a.e[0] = (struct sym_entry){ .name = "f", .line = 3 };
	b.l.rel = 0x2000;
	b.e[0] = (struct sym_entry){ .name = "f", .file = "f.h", .line = 9 };
	fr[0] = (struct rframe){ .origin = FRAME_SAMPLE, .loc = &a.l };
	if (ff && firefox_add(ff, &s) == 0) {
		fr[0].loc = &b.l;
		s.time = 1000;
		if (firefox_add(ff, &s) == 0)
			out = render(ff, &len);
	}
	firefox_free(ff);
	CHECK(has(out, "\"funcTable\":{\"length\":1,") &&
	      has(out, "\"resource\":[0],\"source\":[0],"),
	      "f at two addresses, one without a file: one function, with "
	      "the file");
	CHECK(has(out, "\"func\":[0,0],"), "both frames are of it");
	free(out);
}

/*
 * Samples in input order whatever order they come in (rsample.order):
 * those a second pass completed come last.  Each thread's samples, its
 * "Truncated stacks" runs and its name (its last sample's) are those of
 * the samples in order: the same bytes.
 */
static char *ordered(const unsigned *arrival, size_t *len)
{
	struct firefox *ff = firefox_new(&(struct firefox_opts){
		.plain = true });
	struct rframe fr[2];
	struct rsample s;
	char *out = NULL;
	unsigned i;

	for (i = 0; ff && i < 5; i++) {
		unsigned o = arrival[i];

		memset(&s, 0, sizeof(s));
		s.pid = s.tid = 7;
		s.comm = o == 4 ? "new" : "old";
		s.event = "cpu-clock";
		s.time = 1000000 * (uint64_t)(o + 1);
		s.order = o;
		s.frames = fr;
		s.nr_frames = 2;
		/* 1, 2 and 3 truncated: one run */
		s.end = o >= 1 && o <= 3 ? END_WINDOW : END_ROOT;
		fr[0] = (struct rframe){ .origin = FRAME_SAMPLE,
					 .loc = &far_loc.l };
		fr[1] = (struct rframe){ .origin = FRAME_CFI_EH,
					 .loc = &main_loc.l };
		if (firefox_add(ff, &s) < 0)
			break;
	}
	if (ff && i == 5)
		out = render(ff, len);
	firefox_free(ff);
	return out;
}

static void test_order(void)
{
	static const unsigned in_order[5] = { 0, 1, 2, 3, 4 };
	static const unsigned retried[5] = { 0, 1, 2, 4, 3 };
	size_t la = 0, lb = 0;
	char *a = ordered(in_order, &la), *b = ordered(retried, &lb);

	CHECK(a && b && la == lb && !memcmp(a, b, la),
	      "a sample that comes late goes back to its place: the same "
	      "profile");
	CHECK(has(a, "\"name\":\"new\""),
	      "the thread is named after its last sample in order");
	CHECK(has(a, "\"samples\":3"), "one run of three truncated samples");
	free(a);
	free(b);
}

/* A clock's periods are the threads' CPU time: threadCPUDelta in ns. */
static void test_cpu_delta(void)
{
	struct firefox *ff = firefox_new(&(struct firefox_opts){
		.plain = true });
	struct firefox_meta m = { .interval_ms = 0.25, .cpu_ns = true };
	struct rframe fr[1] = {
		{ .origin = FRAME_SAMPLE, .loc = &main_loc.l } };
	struct rsample s = { .pid = 1, .tid = 1, .comm = "x", .nr_frames = 1,
			     .frames = fr, .period = 250000 };
	size_t len = 0;
	char *out = NULL;

	if (ff && firefox_add(ff, &s) == 0) {
		s.time = 300000;
		s.period = 260000;
		if (firefox_add(ff, &s) == 0 && firefox_set_meta(ff, &m) == 0)
			out = render(ff, &len);
	}
	firefox_free(ff);
	CHECK(has(out, "\"sampleUnits\":{\"time\":\"ms\",\"eventDelay\":"
		       "\"ms\",\"threadCPUDelta\":\"ns\"}") &&
	      has(out, "\"time\":[0,0.3],\"threadCPUDelta\":[250000,260000]}"),
	      "clock periods as threadCPUDelta (ns)");
	free(out);
}

static void test_empty(void)
{
	struct firefox *ff = firefox_new(NULL);
	size_t len = 0;
	char *a = ff ? render(ff, &len) : NULL;

	firefox_free(ff);
	/* gzip by default: inflate the few bytes */
	CHECK(a && len > 10 && (uint8_t)a[0] == 0x1f, "empty: gzip");
	if (a) {
		char out[8192];
		z_stream z;

		memset(&z, 0, sizeof(z));
		memset(out, 0, sizeof(out));
		if (inflateInit2(&z, 15 + 16) == Z_OK) {
			z.next_in = (unsigned char *)a;
			z.avail_in = (uInt)len;
			z.next_out = (unsigned char *)out;
			z.avail_out = sizeof(out) - 1;
			inflate(&z, Z_FINISH);
			inflateEnd(&z);
		}
		CHECK(has(out, "\"libs\":[],") &&
		      has(out, "\"threads\":[]}\n") &&
		      has(out, "\"stackTable\":{\"length\":0,\"frame\":[],"
			       "\"prefixOffset\":[]}"),
		      "empty: no libs, stacks or threads");
	}
	free(a);
}

int main(void)
{
	setup();
	test_columns();
	test_period_gzip();
	test_events();
	test_one_func();
	test_order();
	test_cpu_delta();
	test_empty();
	return done_testing();
}
