/*
 * test_svg.c - the flame graph on a synthetic 200k-sample profile (frames
 * below 0.1 px are left out, so the file stays small whatever the number
 * of distinct stacks), its determinism, and the XML/JSON escaping of
 * frame names (invalid UTF-8, control characters, markup).
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "formats/svg.h"
#include "formats/textesc.h"
#include "tests/harness.h"

#define NFUNC 64
#define DEPTH 24

struct loc1 {
	struct sym_loc l;
	struct sym_entry e[1];
};

static struct loc1 locs[NFUNC];
static char names[NFUNC][16];

/* Writes g to a temporary file; returns its contents (malloc'd). */
static char *render(struct svg *g, size_t *len)
{
	FILE *f = tmpfile();
	struct err err;

	if (!f)
		return NULL;
	if (svg_write(g, fileno(f), &err) < 0) {
		fclose(f);
		return NULL;
	}
	return harness_read_back(f, len);
}

static struct svg *big_profile(unsigned nsamples)
{
	struct svg *g = svg_new(NULL);
	struct rframe fr[DEPTH];
	struct rsample s;
	uint64_t x = 88172645463325252ULL;
	unsigned i, d;

	memset(&s, 0, sizeof(s));
	s.comm = "big";
	s.event = "cpu-clock";
	s.frames = fr;
	for (i = 0; i < nsamples; i++) {
		/* xorshift: a heavy-tailed mix of shallow and deep stacks */
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		s.nr_frames = 1 + (unsigned)(x % DEPTH);
		for (d = 0; d < s.nr_frames; d++) {
			unsigned fn = d < 3 ? d : (unsigned)((x >> (d * 2)) % NFUNC);

			fr[s.nr_frames - 1 - d].loc = &locs[fn].l;
			fr[s.nr_frames - 1 - d].origin = FRAME_CFI_EH;
		}
		if (svg_add(g, &s) < 0)
			break;
	}
	return g;
}

static void test_big(void)
{
	struct svg *g;
	size_t len, len2, frames = 0;
	char *a, *b, *p;
	unsigned i;

	for (i = 0; i < NFUNC; i++) {
		snprintf(names[i], sizeof(names[i]), "fn%u", i);
		locs[i].l.module = "/bin/big";
		locs[i].l.kind = SYM_USER;
		locs[i].l.nr = 1;
		locs[i].e[0].name = names[i];
	}
	g = big_profile(200000);
	a = render(g, &len);
	svg_free(g);
	g = big_profile(200000);
	b = render(g, &len2);
	svg_free(g);
	CHECK(a && b && len == len2 && !memcmp(a, b, len),
	      "200k samples: same bytes on every run");
	for (p = a; p && (p = strstr(p, "<g class=\"f\"")); p++)
		frames++;
	DIAG("200k samples: %zu frames drawn, %zu bytes", frames, len);
	CHECK(frames > 1000 && frames < 60000,
	      "200k samples: tiny frames merged away (%zu drawn)", frames);
	CHECK(len < 16u << 20, "200k samples: under 16 MiB (%zu)", len);
	CHECK(a && strstr(a, "big: 200000 samples") == NULL &&
	      strstr(a, "cpu-clock: 200000 samples") != NULL,
	      "heading counts the samples");
	free(a);
	free(b);
}

static void test_escape(void)
{
	struct strbuf sb = STRBUF_INIT;

	textesc_xml(&sb, "a<b>&\"c\"");
	CHECK_STR(strbuf_str(&sb), "a&lt;b&gt;&amp;&quot;c&quot;", "XML markup");
	strbuf_reset(&sb);
	textesc_xml(&sb, "x\xff\x01y\xc3\xa9\xe2\x82");
	CHECK_STR(strbuf_str(&sb), "x\xef\xbf\xbd\xef\xbf\xbdy\xc3\xa9\xef\xbf\xbd\xef\xbf\xbd",
		  "invalid UTF-8 and control characters become U+FFFD in XML");
	strbuf_reset(&sb);
	textesc_json(&sb, "q\"\\\n\x01\xc0\xaf");
	CHECK_STR(strbuf_str(&sb), "\"q\\\"\\\\\\u000a\\u0001\xef\xbf\xbd\xef\xbf\xbd\"",
		  "JSON: quotes, backslashes, control characters, overlong");
	strbuf_release(&sb);
}

int main(void)
{
	test_escape();
	test_big();
	return done_testing();
}
