/*
 * test_speedscope.c - the speedscope writer keeps each thread's samples in
 * input order (rsample.order) whatever order they come in: a sample that
 * comes late (a second pass completed it) goes back between the samples
 * around it, and consecutive identical stacks are merged only once in
 * order.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/speedscope.h"
#include "tests/harness.h"

struct loc1 {
	struct sym_loc l;
	struct sym_entry e[1];
};

static struct loc1 a_loc, b_loc, main_loc;

static void setup(void)
{
	main_loc.l = (struct sym_loc){ .module = "/usr/bin/app", .rel = 0x1000,
				       .kind = SYM_USER, .nr = 1 };
	main_loc.e[0] = (struct sym_entry){ .name = "main" };
	a_loc.l = main_loc.l;
	a_loc.l.rel = 0x2000;
	a_loc.e[0] = (struct sym_entry){ .name = "a" };
	b_loc.l = main_loc.l;
	b_loc.l.rel = 0x3000;
	b_loc.e[0] = (struct sym_entry){ .name = "b" };
}

/*
 * The samples of orders 0..n-1 in the order arrival gives; leaf[i] says
 * sample i's leaf: 'a' or 'b' under main.  Their output, or NULL.
 */
static char *render(const unsigned *arrival, const char *leaf, unsigned n,
		    size_t *len)
{
	struct speedscope *ss = speedscope_new(NULL);
	struct rframe fr[2];
	struct rsample s;
	struct err err;
	FILE *f = tmpfile();
	char *out = NULL;
	unsigned i;

	for (i = 0; ss && f && i < n; i++) {
		unsigned o = arrival[i];

		memset(&s, 0, sizeof(s));
		s.pid = s.tid = 5;
		s.comm = "app";
		s.event = "cpu-clock";
		s.time = 1000 * (uint64_t)(o + 1);
		s.order = 2 * o;        /* another thread's samples between */
		s.frames = fr;
		s.nr_frames = 2;
		fr[0] = (struct rframe){ .origin = FRAME_SAMPLE,
					 .loc = leaf[o] == 'a' ? &a_loc.l :
								 &b_loc.l };
		fr[1] = (struct rframe){ .origin = FRAME_CFI_EH,
					 .loc = &main_loc.l };
		if (speedscope_add(ss, &s) < 0)
			break;
	}
	if (ss && f && i == n && speedscope_write(ss, fileno(f), &err) == 0)
		out = harness_read_back(f, len);
	else if (f)
		fclose(f);
	speedscope_free(ss);
	return out;
}

int main(void)
{
	static const char leaf[] = "abaab";
	static const unsigned in_order[] = { 0, 1, 2, 3, 4 };
	static const unsigned late[] = { 0, 2, 3, 4, 1 };
	size_t la = 0, lb = 0;
	char *a, *b;

	setup();
	a = render(in_order, leaf, 5, &la);
	b = render(late, leaf, 5, &lb);
	CHECK(a && strstr(a, "\"samples\":[[0,1],[0,2],[0,1],[0,2]],"
			     "\"weights\":[1,1,2,1]"),
	      "in order: a, b, a twice (merged), b");
	if (a && !strstr(a, "\"weights\":[1,1,2,1]"))
		DIAG("%s", a);
	CHECK(a && b && la == lb && !memcmp(a, b, la),
	      "b coming last goes back between the a's: the same profile");
	if (b && a && (la != lb || memcmp(a, b, la)))
		DIAG("%s", b);
	free(a);
	free(b);
	return done_testing();
}
