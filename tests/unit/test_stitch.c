/*
 * test_stitch.c - the per-thread root cache: joining a truncated walk to
 * outer frames other samples saw, the two-frame match, a sample never
 * confirming itself, joining an activation seen at another call site,
 * stopping where samples showed several callers, strict mode's popped
 * frames (also after a second pass), JIT frames, and the memory bound.
 */
#include <string.h>

#include "tests/harness.h"
#include "unwind/stitch.h"

/* Stand-ins for modules: the stitcher only stores and compares them. */
static char mod_a[1];
#define MOD_A ((struct module *)mod_a)

/* Functions are 0x100 bytes long in these tests. */
static bool same_function(void *ctx, struct module *a, uint64_t rel_a,
			  struct module *b, uint64_t rel_b)
{
	(void)ctx;
	return a == b && rel_a >> 8 == rel_b >> 8;
}

/* Fills f[] from pairs of (pc, sp); all in MOD_A, rel = pc. */
static unsigned frames(struct stitch_frame *f, const uint64_t *pcsp,
		       unsigned nr)
{
	unsigned i;

	memset(f, 0, nr * sizeof(*f));
	for (i = 0; i < nr; i++) {
		f[i].pc = f[i].addr = f[i].rel = pcsp[2 * i];
		f[i].sp = pcsp[2 * i + 1];
		f[i].mod = MOD_A;
	}
	return nr;
}

static unsigned complete(struct stitcher *st, uint64_t thread, uint32_t seq,
			 const uint64_t *pcsp, unsigned nr, uint64_t cfa,
			 struct stitch_frame *out, struct stitch_result *res)
{
	struct stitch_frame f[16];
	struct stitch_walk w = { f, frames(f, pcsp, nr), cfa };

	return stitcher_complete(st, thread, seq, &w, out, 16, res);
}

static void observe(struct stitcher *st, uint64_t thread, uint32_t seq,
		    const uint64_t *pcsp, unsigned nr, enum end_reason end)
{
	struct stitch_frame f[16];

	CHECK(stitcher_observe(st, thread, seq, f, frames(f, pcsp, nr),
			       end) == 0, "observe sample %u", seq);
}

static void test_join(void)
{
	static const uint64_t full[] = { 0x10, 0x100, 0x20, 0x200,
					 0x30, 0x300, 0x40, 0x400 };
	static const uint64_t cut[] = { 0x11, 0x80, 0x20, 0x200, 0x30, 0x300 };
	static const uint64_t other[] = { 0x12, 0x80, 0x21, 0x200,
					  0x30, 0x300 };
	struct stitcher *st = stitcher_new(NULL);
	struct stitch_frame out[16];
	struct stitch_result res;
	unsigned n;

	CHECK(st != NULL, "a stitcher");
	observe(st, 1, 1, full, 4, END_ROOT);
	observe(st, 1, 20, cut, 3, END_WINDOW);
	n = complete(st, 1, 20, cut, 3, 0, out, &res);
	CHECK(n == 1 && out[0].pc == 0x40 && out[0].sp == 0x400 &&
		      res.rooted && !res.joined && res.nr == 1,
	      "a cut walk gets the outer frame another sample saw");
	/* The two outermost frames must be linked as the walk saw them:
	 * (0x21, 0x200) was never seen calling from there. */
	n = complete(st, 1, 21, other, 3, 0, out, &res);
	CHECK_EQ_U64(n, 0, "a walk whose two outer frames are unknown "
			   "together is left alone");
	CHECK_EQ_U64(complete(st, 2, 20, cut, 3, 0, out, &res), 0,
		     "another thread's cache is not used");
	stitcher_free(st);
}

static void test_self(void)
{
	static const uint64_t walk[] = { 1, 0x10, 2, 0x20, 3, 0x30 };
	static const uint64_t root[] = { 3, 0x30, 4, 0x40 };
	struct stitcher *st = stitcher_new(NULL);
	struct stitch_frame out[16];
	struct stitch_result res;

	observe(st, 7, 10, walk, 3, END_WINDOW);
	observe(st, 7, 12, root, 2, END_ROOT);
	CHECK_EQ_U64(complete(st, 7, 10, walk, 3, 0, out, &res), 0,
		     "a link only the sample itself made does not count");
	CHECK_EQ_U64(complete(st, 7, 30, walk, 3, 0, out, &res), 1,
		     "the same link counts for a sample not learnt yet");
	CHECK(res.rooted && out[0].pc == 4, "... and reaches the root");
	stitcher_free(st);

	/* A learnt sample's own walk is not evidence for it, first or not. */
	st = stitcher_new(NULL);
	observe(st, 7, 1, root, 2, END_ROOT);
	observe(st, 7, 20, walk, 3, END_WINDOW);
	observe(st, 7, 21, walk, 3, END_WINDOW);
	observe(st, 7, 22, walk, 3, END_WINDOW);
	CHECK_EQ_U64(complete(st, 7, 21, walk, 3, 0, out, &res), 1,
		     "two other samples showed the walk's links");
	stitcher_free(st);
	st = stitcher_new(NULL);
	observe(st, 7, 1, root, 2, END_ROOT);
	observe(st, 7, 20, walk, 3, END_WINDOW);
	observe(st, 7, 21, walk, 3, END_WINDOW);
	CHECK_EQ_U64(complete(st, 7, 21, walk, 3, 0, out, &res), 1,
		     "one other sample showed them");
	CHECK_EQ_U64(complete(st, 7, 20, walk, 3, 0, out, &res), 1,
		     "... also for the first one");
	stitcher_free(st);
}

/*
 * --validate-stitch: a complete sample cut short is stitched as if the
 * cache had never seen it: its own outer frames are no evidence, and
 * the callers only it showed are no ambiguity.
 */
static void test_self_walk(void)
{
	static const uint64_t full[] = { 1, 0x10, 2, 0x20, 3, 0x30, 4, 0x40 };
	static const uint64_t other[] = { 1, 0x10, 2, 0x20, 3, 0x30,
					   5, 0x40 };
	struct stitcher *st = stitcher_new(NULL);
	struct stitch_frame out[16], f[16], self[16];
	struct stitch_walk w = { 0 };
	struct stitch_result res;

	observe(st, 7, 1, full, 4, END_ROOT);
	w.f = f;
	w.nr = frames(f, full, 2);
	w.self = self;
	w.nr_self = frames(self, full, 4);
	w.self_rooted = true;
	CHECK_EQ_U64(stitcher_complete(st, 7, 1, &w, out, 16, &res), 0,
		     "a sample's whole walk does not complete its own cut");
	observe(st, 7, 2, other, 4, END_ROOT);
	observe(st, 7, 3, full, 4, END_ROOT);
	CHECK(stitcher_complete(st, 7, 3, &w, out, 16, &res) == 1 &&
		      res.ambiguous,
	      "another caller seen by others is still ambiguous");
	CHECK(stitcher_complete(st, 7, 2, &w, out, 16, &res) == 2 &&
		      res.rooted && out[1].pc == 4,
	      "the caller only the sample itself showed is discounted");
	stitcher_free(st);
}

static void test_activation(void)
{
	/* main's frame at sp 0x600 (function 0x200), its caller at 0x900.
	 * A complete sample saw main at call site 0x205; cut walks stop in
	 * main at call site 0x2a0, the caller out of reach. */
	static const uint64_t full[] = { 0x110, 0x500, 0x205, 0x600,
					 0x300, 0x900 };
	static const uint64_t cut[] = { 0x150, 0x300, 0x160, 0x400,
					0x2a0, 0x600 };
	static const uint64_t cut_other_fn[] = { 0x151, 0x300, 0x161, 0x400,
						 0x3a0, 0x600 };
	struct stitch_opts o = { 0 };
	struct stitcher *plain = stitcher_new(NULL), *st;
	struct stitch_frame out[16];
	struct stitch_result res;
	unsigned n;

	o.same_function = same_function;
	st = stitcher_new(&o);
	observe(plain, 1, 20, full, 3, END_ROOT);
	observe(plain, 1, 21, cut, 3, END_WINDOW);
	observe(plain, 1, 22, cut, 3, END_WINDOW);
	CHECK_EQ_U64(complete(plain, 1, 21, cut, 3, 0x900, out, &res), 0,
		     "without a function test, call sites are not joined");
	stitcher_free(plain);

	observe(st, 1, 19, full, 3, END_ROOT);
	observe(st, 1, 21, cut, 3, END_WINDOW);
	observe(st, 1, 22, cut, 3, END_WINDOW);
	observe(st, 1, 23, cut_other_fn, 3, END_WINDOW);
	observe(st, 1, 24, cut_other_fn, 3, END_WINDOW);
	n = complete(st, 1, 21, cut, 3, 0x900, out, &res);
	CHECK(n == 1 && out[0].pc == 0x300 && out[0].sp == 0x900 &&
		      res.joined && res.rooted,
	      "the activation seen at another call site gives the caller");
	CHECK_EQ_U64(complete(st, 1, 21, cut, 3, 0x800, out, &res), 0,
		     "not when the walk's CFA is elsewhere");
	CHECK_EQ_U64(complete(st, 1, 21, cut, 3, 0, out, &res), 0,
		     "not when the walk's CFA is unknown");
	CHECK_EQ_U64(complete(st, 1, 23, cut_other_fn, 3, 0x900, out, &res), 0,
		     "not for another function at the same sp");
	stitcher_free(st);
}

/*
 * Recursion r (frames at sp 0x100, 0x200, 0x300) entered from A or from B,
 * both called by main: the frame at 0x300 has two callers.
 */
static const uint64_t via_a[] = { 0x10, 0x80, 0x20, 0x100, 0x20, 0x200,
				  0x20, 0x300, 0xa0, 0x400, 0xf0, 0x500 };
static const uint64_t via_b[] = { 0x10, 0x80, 0x20, 0x100, 0x20, 0x200,
				  0x20, 0x300, 0xb0, 0x400, 0xf0, 0x500 };
static const uint64_t cut_r[] = { 0x11, 0x80, 0x20, 0x100, 0x20, 0x200 };

static void test_ambiguous(void)
{
	struct stitcher *st = stitcher_new(NULL);
	struct stitch_frame out[16];
	struct stitch_result res;
	unsigned n;

	observe(st, 1, 1, via_a, 6, END_ROOT);
	observe(st, 1, 2, via_a, 6, END_ROOT);
	observe(st, 1, 3, cut_r, 3, END_WINDOW);
	n = complete(st, 1, 3, cut_r, 3, 0, out, &res);
	CHECK(n == 3 && res.rooted && !res.ambiguous && out[2].pc == 0xf0,
	      "one caller ever seen: the stack is completed (%u)", n);
	observe(st, 1, 4, via_b, 6, END_ROOT);
	observe(st, 1, 5, via_a, 6, END_ROOT);
	n = complete(st, 1, 3, cut_r, 3, 0, out, &res);
	CHECK(n == 1 && !res.rooted && res.ambiguous && out[0].pc == 0x20 &&
		      out[0].sp == 0x300,
	      "two callers seen: the certain frame, then ambiguous (%u)", n);
	n = complete(st, 1, 4, cut_r, 3, 0, out, &res);
	CHECK(n == 3 && res.rooted && out[1].pc == 0xa0,
	      "a caller only the sample itself showed is no ambiguity (%u)",
	      n);
	n = complete(st, 1, 2, cut_r, 3, 0, out, &res);
	CHECK(n == 1 && res.ambiguous,
	      "... but another sample's caller still is (%u)", n);
	stitcher_free(st);
}

/* A root seen once and a caller seen once make a frame ambiguous too. */
static void test_root_or_caller(void)
{
	static const uint64_t rooted[] = { 0x10, 0x80, 0x20, 0x100,
					   0x25, 0x200 };
	static const uint64_t deeper[] = { 0x10, 0x80, 0x20, 0x100,
					   0x25, 0x200, 0x30, 0x300 };
	struct stitcher *st = stitcher_new(NULL);
	struct stitch_frame out[16];
	struct stitch_result res;
	static const uint64_t cut[] = { 0x10, 0x80, 0x20, 0x100 };

	observe(st, 1, 1, rooted, 3, END_ROOT);
	observe(st, 1, 2, deeper, 4, END_WINDOW);
	CHECK(complete(st, 1, 3, cut, 2, 0, out, &res) == 1 &&
		      res.ambiguous && !res.rooted,
	      "a frame seen as the root and with a caller is ambiguous");
	stitcher_free(st);
}

/*
 * A sample is learnt once: a second pass over it changes nothing, and in
 * particular does not forget that a later sample popped a frame (strict
 * mode used to treat popped frames as live in the second pass).
 */
static void test_second_pass(void)
{
	static const uint64_t shallow[] = { 0x50, 0x350, 0xa0, 0x400,
					    0xf0, 0x500 };
	struct stitch_opts o = { 0 };
	struct stitcher *st;
	struct stitch_frame out[16];
	struct stitch_result res;
	unsigned n;

	o.refuse_stale = true;
	st = stitcher_new(&o);
	observe(st, 1, 1, via_a, 6, END_ROOT);
	observe(st, 1, 2, shallow, 3, END_ROOT);   /* pops 0x100-0x300 */
	observe(st, 1, 3, cut_r, 3, END_WINDOW);
	observe(st, 1, 1, via_b, 6, END_ROOT);     /* pass two */
	observe(st, 1, 2, shallow, 3, END_ROOT);
	n = complete(st, 1, 9, cut_r, 3, 0, out, &res);
	CHECK(n == 0 && res.refused && !res.rooted,
	      "strict: the caller of a frame popped since it was seen is not "
	      "taken, also after a second pass (%u)", n);
	stitcher_free(st);
	st = stitcher_new(NULL);
	observe(st, 1, 1, via_a, 6, END_ROOT);
	observe(st, 1, 2, shallow, 3, END_ROOT);
	observe(st, 1, 1, via_b, 6, END_ROOT);
	n = complete(st, 1, 9, cut_r, 3, 0, out, &res);
	CHECK(n == 3 && res.rooted && res.stale && out[1].pc == 0xa0,
	      "a second pass teaches no new caller (%u)", n);
	{
		struct stitch_walk w = { 0 };
		struct stitch_frame f[16];

		w.f = f;
		w.nr = frames(f, cut_r, 3);
		w.live_only = true;
		n = stitcher_complete(st, 1, 9, &w, out, 16, &res);
		CHECK(n == 0 && res.refused,
		      "a live-only walk stops at a popped frame (%u)", n);
	}
	stitcher_free(st);
}

/*
 * Activations: strict takes a caller seen in the sample's own activation
 * of the frame (no sample between showed it popped); on also takes one
 * other activations showed, unless frames of that return address showed
 * callers that vary with more than the depth (a tree walk's dispatch).
 */
static void test_activations(void)
{
	static const uint64_t full[] = { 0x10, 0x80, 0x20, 0x100, 0x30, 0x200,
					 0x40, 0x300 };
	static const uint64_t cut[] = { 0x10, 0x80, 0x20, 0x100 };
	static const uint64_t up[] = { 0x35, 0x250, 0x40, 0x300 };
	struct stitch_opts o = { 0 };
	struct stitch_frame out[16];
	struct stitch_result res;
	struct stitcher *st;
	uint64_t w[8];
	unsigned i, n;

	o.refuse_stale = true;
	st = stitcher_new(&o);
	observe(st, 1, 1, full, 4, END_ROOT);
	observe(st, 1, 2, cut, 2, END_WINDOW);
	n = complete(st, 1, 2, cut, 2, 0, out, &res);
	CHECK(n == 0 && !res.rooted,
	      "one sample that showed the caller just before is too little "
	      "(%u)", n);
	observe(st, 1, 20, cut, 2, END_WINDOW);
	n = complete(st, 1, 2, cut, 2, 0, out, &res);
	CHECK(n == 2 && res.rooted,
	      "... unless the frame lived on, unpopped (%u)", n);
	n = complete(st, 1, 20, cut, 2, 0, out, &res);
	CHECK(n == 2 && res.rooted,
	      "strict: the caller seen in the same activation (%u)", n);
	observe(st, 1, 21, up, 2, END_ROOT);   /* pops 0x100 and 0x200 */
	observe(st, 1, 22, cut, 2, END_WINDOW);
	n = complete(st, 1, 22, cut, 2, 0, out, &res);
	CHECK(n == 0 && res.refused,
	      "strict: not the caller of an activation since popped (%u)", n);
	CHECK(complete(st, 1, 20, cut, 2, 0, out, &res) == 2 && res.rooted,
	      "... which was the caller of the earlier sample's activation");
	stitcher_free(st);

	st = stitcher_new(NULL);
	observe(st, 1, 1, full, 4, END_ROOT);
	observe(st, 1, 3, up, 2, END_ROOT);
	observe(st, 1, 4, cut, 2, END_WINDOW);
	n = complete(st, 1, 4, cut, 2, 0, out, &res);
	CHECK(n == 2 && res.rooted && res.stale,
	      "on: the caller other activations showed (%u)", n);
	/* frames of return address 0x20 with two callers at another depth
	 * (the same caller's frame size, another caller function) */
	for (i = 0; i < 2; i++) {
		w[0] = 0x10;
		w[1] = 0x780;
		w[2] = 0x20;
		w[3] = 0x800;
		w[4] = i ? 0x31 : 0x30;
		w[5] = 0x900;
		w[6] = 0x40;
		w[7] = 0xa00;
		observe(st, 1, 5 + i, w, 4, END_ROOT);
	}
	observe(st, 1, 8, cut, 2, END_WINDOW);
	n = complete(st, 1, 8, cut, 2, 0, out, &res);
	CHECK(n == 0 && res.ambiguous,
	      "on: not when that return address's callers vary (%u)", n);
	stitcher_free(st);
}

static void test_bounds(void)
{
	struct stitch_opts o = { 0 };
	struct stitch_counters c;
	struct stitcher *st;
	uint64_t walk[2 * 8];
	uint32_t seq;
	unsigned i;

	o.max_thread_nodes = 64;
	st = stitcher_new(&o);
	for (seq = 1; seq <= 200; seq++) {
		for (i = 0; i < 8; i++) {
			walk[2 * i] = 0x1000 + seq * 16 + i;
			walk[2 * i + 1] = 0x8000 + i * 0x100;
		}
		observe(st, 3, seq, walk, 8, END_WINDOW);
	}
	stitcher_counters(st, &c);
	CHECK(c.nodes <= 64 && c.evicted > 0,
	      "a thread keeps at most its budget (%llu nodes, %llu evicted)",
	      (unsigned long long)c.nodes, (unsigned long long)c.evicted);
	stitcher_forget(st, 3);
	stitcher_counters(st, &c);
	CHECK_EQ_U64(c.nodes, 0, "forgetting a thread frees its frames");
	stitcher_free(st);
}


/*
 * Lazy observation (stitcher_set_lazy()) learns what eager observation
 * does: the same walks, observed lazily with room to spare and with a
 * buffer too small for them, complete every cut walk alike; a thread
 * without a cut walk never gets nodes.
 */
static unsigned lazy_walk(uint32_t *seed, struct stitch_frame *f,
			  unsigned cut)
{
	uint64_t pcsp[2 * 12];
	unsigned depth, n = 0, i, caller;

	*seed = *seed * 1103515245u + 12345u;
	depth = 1 + (*seed >> 16) % 6;
	caller = (*seed >> 8) & 1;
	pcsp[2 * n] = 0x1500;   /* leaf */
	pcsp[2 * n + 1] = 0xf000 - depth * 0x100;
	n++;
	for (i = depth; i-- > 0; n++) {
		pcsp[2 * n] = 0x1400;
		pcsp[2 * n + 1] = 0xf000 - i * 0x100;
	}
	pcsp[2 * n] = caller ? 0x1300 : 0x1200;
	pcsp[2 * n + 1] = 0xf100;
	n++;
	pcsp[2 * n] = 0x1100;
	pcsp[2 * n + 1] = 0xf200;
	n++;
	pcsp[2 * n] = 0x1000;
	pcsp[2 * n + 1] = 0xf300;
	n++;
	return frames(f, pcsp, cut && cut < n ? n - cut : n);
}

/* Whether n stitched frames are the same (their padding aside). */
static bool lazy_same(const struct stitch_frame *a,
		      const struct stitch_frame *b, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++)
		if (a[i].pc != b[i].pc || a[i].sp != b[i].sp ||
		    a[i].mod != b[i].mod || a[i].rel != b[i].rel)
			return false;
	return true;
}

static void test_lazy(void)
{
	struct stitch_opts tiny = { .max_pending_bytes = 300 };
	struct stitcher *st[3] = {
		stitcher_new(NULL), stitcher_new(NULL), stitcher_new(&tiny),
	};
	struct stitch_counters c;
	unsigned k, same = 0, cuts = 0, stitched = 0, failed = 0;
	uint32_t seq;

	stitcher_set_lazy(st[1], true);
	stitcher_set_lazy(st[2], true);
	for (k = 0; k < 3; k++) {
		uint32_t seed = 7;

		for (seq = 1; seq <= 400; seq++) {
			struct stitch_frame f[16];
			bool cut = seq % 37 == 0 && seq > 100;
			unsigned nr = lazy_walk(&seed, f, cut ? 2 + seq % 2 : 0);

			/* thread 1 has cut walks, thread 2 none */
			failed += stitcher_observe(st[k], 1, seq, f, nr,
						   cut ? END_WINDOW :
							 END_ROOT) != 0;
			failed += stitcher_observe(st[k], 2, seq, f,
						   lazy_walk(&seed, f, 0),
						   END_ROOT) != 0;
		}
		stitcher_settle(st[k]);
	}
	CHECK(!failed, "lazy: 3 x 800 walks observed (%u failed)", failed);
	for (seq = 101; seq <= 400; seq++) {
		struct stitch_frame f[16], out[3][16];
		struct stitch_result res[3];
		struct stitch_walk w;
		uint32_t seed = 7, s2;
		unsigned n[3];

		if (seq % 37)
			continue;
		/* the walk of sample seq, as observed */
		for (s2 = 1; s2 < seq; s2++) {
			lazy_walk(&seed, f, 0);
			lazy_walk(&seed, f, 0);
		}
		memset(&w, 0, sizeof(w));
		w.f = f;
		w.nr = lazy_walk(&seed, f, 2 + seq % 2);
		cuts++;
		for (k = 0; k < 3; k++)
			n[k] = stitcher_complete(st[k], 1, seq, &w, out[k], 16,
						 &res[k]);
		stitched += n[0] > 0;
		same += n[0] == n[1] && n[0] == n[2] &&
			lazy_same(out[0], out[1], n[0]) &&
			lazy_same(out[0], out[2], n[0]) &&
			res[0].rooted == res[1].rooted &&
			res[0].rooted == res[2].rooted &&
			res[0].ambiguous == res[1].ambiguous &&
			res[0].ambiguous == res[2].ambiguous;
	}
	CHECK(cuts > 5 && stitched > 0,
	      "lazy: %u cut walks, %u stitched (some must be)", cuts, stitched);
	CHECK(same == cuts, "lazy: %u of %u cut walks completed as eagerly",
	      same, cuts);
	stitcher_counters(st[1], &c);
	CHECK(c.peak_nodes < 20,
	      "lazy: only the thread with cut walks has nodes (%llu)",
	      (unsigned long long)c.peak_nodes);
	stitcher_counters(st[0], &c);
	CHECK(c.peak_nodes >= 20, "eager: both threads have nodes (%llu)",
	      (unsigned long long)c.peak_nodes);
	for (k = 0; k < 3; k++)
		stitcher_free(st[k]);
}

/* Marks frames from..to-1 of f as JIT code. */
static void jit_frames(struct stitch_frame *f, unsigned from, unsigned to)
{
	for (; from < to; from++)
		f[from].jit = true;
}

/* observe() with frames from..to-1 in JIT code. */
static void observe_jit(struct stitcher *st, uint32_t seq,
			const uint64_t *pcsp, unsigned nr, unsigned from,
			unsigned to, enum end_reason end)
{
	struct stitch_frame f[16];

	frames(f, pcsp, nr);
	jit_frames(f, from, to);
	CHECK(stitcher_observe(st, 1, seq, f, nr, end) == 0,
	      "observe sample %u", seq);
}

/*
 * JIT recursion (0x410 at sp 0x200, 0x300) under a top level (0x620 at
 * 0x400) that inlines its callers: two complete samples before a cut one
 * showed one call site, which a cut sample from another inlined caller
 * would show as well.  A JIT frame is not judged in the sample's own
 * activation; native frames are, and the sample that vouched for them
 * vouches for the JIT frames further out.
 */
static void test_jit(void)
{
	static const uint64_t full[] = { 0x500, 0x100, 0x410, 0x200,
					 0x410, 0x300, 0x620, 0x400,
					 0x700, 0x500 };
	static const uint64_t cut[] = { 0x505, 0x150, 0x410, 0x200,
					0x410, 0x300 };
	static const uint64_t gc[] = { 0x800, 0x60, 0x810, 0x90,
				       0x820, 0xa0, 0x410, 0x200,
				       0x410, 0x300, 0x620, 0x400,
				       0x700, 0x500 };
	static const uint64_t gc_cut[] = { 0x801, 0x40, 0x800, 0x60,
					   0x810, 0x90 };
	struct stitch_frame f[16], out[16];
	struct stitch_walk w = { f, 0, 0 };
	struct stitch_result res;
	struct stitcher *st;
	bool jit;

	for (jit = false; ; jit = true) {
		st = stitcher_new(NULL);
		observe_jit(st, 10, full, 5, 1, jit ? 4 : 1, END_ROOT);
		observe_jit(st, 11, full, 5, 1, jit ? 4 : 1, END_ROOT);
		w.nr = frames(f, cut, 3);
		jit_frames(f, 1, jit ? 3 : 1);
		observe_jit(st, 12, cut, 3, 1, jit ? 3 : 1, END_WINDOW);
		if (!jit) {
			CHECK(stitcher_complete(st, 1, 12, &w, out, 16,
						&res) == 2 && res.rooted,
			      "native frames: two samples before vouch for "
			      "the sample's activation");
			stitcher_free(st);
			continue;
		}
		CHECK(stitcher_complete(st, 1, 12, &w, out, 16, &res) == 0 &&
			      res.ambiguous,
		      "JIT frames: not judged in the sample's own activation");
		stitcher_free(st);
		break;
	}

	st = stitcher_new(NULL);
	observe_jit(st, 20, gc, 7, 3, 6, END_ROOT);
	observe_jit(st, 21, gc, 7, 3, 6, END_ROOT);
	w.nr = frames(f, gc_cut, 3);
	observe_jit(st, 22, gc_cut, 3, 0, 0, END_WINDOW);
	CHECK(stitcher_complete(st, 1, 22, &w, out, 16, &res) == 5 &&
		      res.rooted && out[1].pc == 0x410 && out[3].pc == 0x620,
	      "JIT frames outside native frames judged in the sample's "
	      "activation come from the sample that showed them");
	stitcher_free(st);
}

int main(void)
{
	test_join();
	test_self();
	test_self_walk();
	test_activation();
	test_ambiguous();
	test_root_or_caller();
	test_second_pass();
	test_activations();
	test_bounds();
	test_lazy();
	test_jit();
	return done_testing();
}
