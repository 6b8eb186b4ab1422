/*
 * test_folded.c - the folded-stack writer: frame order, names as
 * stackcollapse-perf.pl tidies them, prefixes, weights, sorting.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats/folded.h"
#include "tests/harness.h"

struct loc2 {
	struct sym_loc l;
	struct sym_entry e[3];
};

/* f's output (malloc'd); frees f. */
static char *fold_out(struct folded *f)
{
	struct err err;
	char *buf = calloc(1, 65536);
	int p[2];
	ssize_t got;

	if (pipe(p) < 0)
		return buf;
	folded_write(f, p[1], &err);
	close(p[1]);
	got = read(p[0], buf, 65535);
	buf[got > 0 ? got : 0] = '\0';
	close(p[0]);
	folded_free(f);
	return buf;
}

/* Runs the writer over samples and returns its output (malloc'd). */
static char *fold(const struct folded_opts *o, const struct rsample *s,
		  unsigned n)
{
	struct folded *f = folded_new(o);
	unsigned i;

	for (i = 0; i < n; i++)
		folded_add(f, &s[i]);
	return fold_out(f);
}

/*
 * Tables of some samples each, merged, give what one table of all of them
 * gives, whichever is merged into which; the merged one is unchanged.
 */
static void test_merge(const struct rsample *s)
{
	const struct rsample all[] = { s[0], s[2], s[1], s[2] };
	struct folded_opts o = { .period = true };
	char *want = fold(&o, all, 4), *out, *src_out;
	struct folded *a, *b;
	int way;

	for (way = 0; way < 2; way++) {
		a = folded_new(&o);
		b = folded_new(&o);
		folded_add(a, &s[0]);
		folded_add(a, &s[2]);
		folded_add(b, &s[1]);
		folded_add(b, &s[2]);
		CHECK(folded_merge(way ? b : a, way ? a : b) == 0,
		      "merge %d returns 0", way);
		src_out = fold_out(way ? a : b);
		out = fold_out(way ? b : a);
		CHECK_STR(out, want, "merged tables (%s into %s) equal one "
			  "table of all the samples", way ? "a" : "b",
			  way ? "b" : "a");
		CHECK_STR(src_out, way ? "aaa;main;a:bc 1000\nmy_prog;main;"
			  "a:bc;[libx.so];outer;inner;do_syscall_64;"
			  "[kernel] 1000\n" :
			  "aaa;main;a:bc 1000\nmy_prog;main;a:bc;[libx.so];"
			  "outer;inner;do_syscall_64;[kernel] 500\n",
			  "the merged-in table is left as it was");
		free(out);
		free(src_out);
	}
	free(want);
}

/* One frame named name, folded. */
static char *fold_name(const char *name)
{
	struct loc2 l = { { "/bin/p", 0, SYM_USER, 1 },
			  { { name, NULL, 0, false } } };
	struct rframe fr = { 0x1000, FRAME_SAMPLE, &l.l };
	struct rsample s;
	struct folded_opts o = { 0 };

	memset(&s, 0, sizeof(s));
	s.comm = "p";
	s.frames = &fr;
	s.nr_frames = 1;
	return fold(&o, &s, 1);
}

static void test_names(void)
{
	static const struct {
		const char *name, *want;
	} cases[] = {
		{ "f(int, char const*)", "p;f 1\n" },
		{ "(anonymous namespace)::g(int)",
		  "p;(anonymous namespace)::g 1\n" },
		{ "a::(anonymous namespace)::B<(E)0>::h()",
		  "p;a::(anonymous namespace)::B< 1\n" },
		{ "net/http.(*Client).Do", "p;net/http.(*Client).Do 1\n" },
		{ "JS:*fib /tmp/w.js:6:13", "p;JS:*fib /tmp/w.js:6:13 1\n" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *out = fold_name(cases[i].name);

		CHECK_STR(out, cases[i].want, "name '%s' tidied as "
			  "stackcollapse-perf.pl does", cases[i].name);
		free(out);
	}
}

int main(void)
{
	struct loc2 leaf = { { "/usr/lib/libx.so", 0, SYM_USER, 2 },
			     { { "inner", NULL, 0, true },
			       { "outer(int)", NULL, 0, false } } };
	struct loc2 unk = { { "/usr/lib/libx.so", 0, SYM_USER, 1 },
			    { { NULL, NULL, 0, false } } };
	struct loc2 odd = { { "/bin/p", 0, SYM_USER, 1 },
			    { { "a;b\"c'", NULL, 0, false } } };
	struct loc2 root = { { "/bin/p", 0, SYM_USER, 1 },
			     { { "main", NULL, 0, false } } };
	struct loc2 kern = { { "[kernel.kallsyms]", 0, SYM_KERNEL, 1 },
			     { { NULL, NULL, 0, false } } };
	struct loc2 ksym = { { "[kernel.kallsyms]", 0, SYM_KERNEL, 1 },
			     { { "do_syscall_64", NULL, 0, false } } };
	struct rframe fr[] = {
		{ 0xffff1, FRAME_KERNEL, &kern.l },
		{ 0xffff2, FRAME_KERNEL, &ksym.l },
		{ 0x1000, FRAME_SAMPLE, &leaf.l },
		{ 0x2000, FRAME_CFI_EH, &unk.l },
		{ 0x3000, FRAME_FP, &odd.l },
		{ 0x4000, FRAME_CFI_EH, &root.l },
	};
	struct rsample s[3];
	struct folded_opts o = { 0 };
	char *out;

	memset(s, 0, sizeof(s));
	s[0].pid = 7;
	s[0].tid = 8;
	s[0].comm = "my prog";
	s[0].period = 1000;
	s[0].frames = fr;
	s[0].nr_frames = 6;
	s[0].nr_kernel = 2;
	s[1] = s[0];
	s[1].period = 500;
	s[2] = s[0];
	s[2].frames = fr + 4;
	s[2].nr_frames = 2;
	s[2].nr_kernel = 0;
	s[2].comm = "aaa";

	out = fold(&o, s, 3);
	CHECK_STR(out,
		  "aaa;main;a:bc 1\n"
		  "my_prog;main;a:bc;[libx.so];outer;inner;do_syscall_64;"
		  "[kernel] 2\n",
		  "root first, inline frames outside-in, kernel last, "
		  "names tidied, sorted, counted");
	free(out);

	o.period = true;
	out = fold(&o, s, 2);
	CHECK(strstr(out, " 1500\n") != NULL, "--weight period sums periods");
	free(out);

	o.period = false;
	o.pid = true;
	out = fold(&o, s + 2, 1);
	CHECK_STR(out, "aaa-7;main;a:bc 1\n", "--pid: comm-pid");
	free(out);
	o.tid = true;
	out = fold(&o, s + 2, 1);
	CHECK_STR(out, "aaa-7/8;main;a:bc 1\n", "--tid: comm-pid/tid");
	free(out);

	o.tid = o.pid = false;
	o.annotate = true;
	out = fold(&o, s, 1);
	CHECK(strstr(out, "a:bc_[fp];") && strstr(out, "inner_[i];") &&
		      strstr(out, "do_syscall_64_[k]"),
	      "--annotate marks fp, inlined and kernel frames");
	free(out);
	test_names();
	test_merge(s);
	return done_testing();
}
