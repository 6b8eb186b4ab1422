/*
 * svg.c - the flame graph writer (see svg.h).
 *
 * Samples are merged into a call tree (node = parent + frame name) while
 * the capture is read; svg_write() lays it out depth first, siblings by
 * name, and writes one <g> per frame wide enough to see, with the
 * sample offset, weight and depth in data- attributes for the script.
 */
#include <stdlib.h>
#include <string.h>

#include "formats/fdout.h"
#include "formats/folded.h"
#include "formats/svg.h"
#include "formats/textesc.h"

#include "common/hashmap.h"
#include "common/mem.h"
#include "common/strbuf.h"
#include "common/strtab.h"

/* Geometry, as flamegraph.pl's defaults. */
#define SVG_WIDTH 1200
#define SVG_XPAD 10
#define SVG_FRAME_H 16
#define SVG_FONT 12
#define SVG_CHAR_W (SVG_FONT * 0.59)
#define SVG_TOP 78          /* title, subtitle, legend, buttons */
#define SVG_BOTTOM 34       /* details line */
#define SVG_MIN_WIDTH 0.1   /* pixels: narrower frames are not drawn */

enum svg_kind {
	SVG_ROOT,
	SVG_THREAD,
	SVG_USER,
	SVG_KERNEL,
	SVG_JIT,
	SVG_INLINE,
	SVG_STITCHED,       /* drawn so when most of its weight was stitched */
	SVG_MARKER,
	SVG_UNKNOWN,
	SVG_KIND__COUNT
};

struct svg_node {
	uint32_t name;          /* names id */
	uint8_t kind;           /* enum svg_kind, of the first frame seen */
	uint32_t first, next;   /* first child, next sibling; 0: none */
	uint64_t total;         /* weight of the samples through it */
	uint64_t stitched;      /* of which its frame was stitched */
	uint64_t base;          /* diff: the base profile's weight */
};

struct svg {
	struct svg_opts opts;
	char *title;
	struct strtab names;
	struct svg_node *nodes; /* [0] is the root, "all" */
	size_t nr, alloc;
	struct hashmap child;   /* parent << 32 | name -> node index */
	struct strbuf buf;
	uint32_t event;         /* names id of the first sample's event */
	bool any;
	uint32_t max_depth;
	uint64_t samples;
	double max_delta;       /* diff: the largest change, for colours */
};

struct svg *svg_new(const struct svg_opts *opts)
{
	struct svg *g = mem_zalloc(1, sizeof(*g));

	if (!g)
		return NULL;
	if (opts)
		g->opts = *opts;
	g->title = mem_strdup(g->opts.title ? g->opts.title : "Flame Graph");
	g->opts.title = g->title;
	if (!g->title || strtab_add(&g->names, "all") < 0 ||
	    mem_grow(&g->nodes, &g->alloc, sizeof(*g->nodes), 1) < 0) {
		svg_free(g);
		return NULL;
	}
	g->nr = 1;
	g->nodes[0].kind = SVG_ROOT;
	return g;
}

void svg_free(struct svg *g)
{
	if (!g)
		return;
	free(g->title);
	strtab_release(&g->names);
	free(g->nodes);
	hashmap_release(&g->child);
	strbuf_release(&g->buf);
	free(g);
}

/* The child of parent named by g->buf, made on first sight; 0 on OOM. */
static uint32_t svg_child(struct svg *g, uint32_t parent, enum svg_kind kind)
{
	int64_t name = strtab_addn(&g->names, g->buf.buf ? g->buf.buf : "",
				   g->buf.len);
	struct svg_node *n;
	uint64_t key;
	void *v;

	if (name < 0 || g->buf.oom)
		return 0;
	key = (uint64_t)parent << 32 | (uint64_t)name;
	if (hashmap_get(&g->child, key, &v))
		return (uint32_t)(uintptr_t)v;
	if (g->nr >= UINT32_MAX ||
	    mem_grow(&g->nodes, &g->alloc, sizeof(*g->nodes), g->nr + 1) < 0 ||
	    hashmap_put(&g->child, key, (void *)(uintptr_t)g->nr) < 0)
		return 0;
	n = &g->nodes[g->nr];
	n->name = (uint32_t)name;
	n->kind = (uint8_t)kind;
	n->next = g->nodes[parent].first;
	g->nodes[parent].first = (uint32_t)g->nr;
	return (uint32_t)g->nr++;
}

static enum svg_kind svg_entry_kind(const struct sym_loc *l, unsigned i,
				    bool kernel)
{
	if (kernel)
		return SVG_KERNEL;
	if (l->kind == SYM_UNKNOWN || !l->e[i].name)
		return SVG_UNKNOWN;
	if (l->e[i].inlined)
		return SVG_INLINE;
	if (l->kind == SYM_JIT)
		return SVG_JIT;
	return SVG_USER;
}

/* Adds s's weight w to its nodes' totals, or their base weights. */
static int svg_walk(struct svg *g, const struct rsample *s, uint64_t w,
		    bool base)
{
	const char *marker = rsample_marker(s);
	uint32_t at, depth = 1, i;
	size_t k;

	if (base) {
		g->nodes[0].base += w;
	} else {
		g->samples += rsample_count(s);
		g->nodes[0].total += w;
	}
	strbuf_reset(&g->buf);
	strbuf_addstr(&g->buf, s->comm);
	for (k = 0; k < g->buf.len; k++)
		if (g->buf.buf[k] == ' ')
			g->buf.buf[k] = '_';
	at = svg_child(g, 0, SVG_THREAD);
	if (!at)
		return -1;
	*(base ? &g->nodes[at].base : &g->nodes[at].total) += w;
	if (marker) {
		strbuf_reset(&g->buf);
		strbuf_addstr(&g->buf, marker);
		at = svg_child(g, at, SVG_MARKER);
		if (!at)
			return -1;
		*(base ? &g->nodes[at].base : &g->nodes[at].total) += w;
		depth++;
	}
	for (i = s->nr_frames; i-- > 0;) {
		const struct rframe *fr = &s->frames[i];
		bool kernel = i < s->nr_kernel;
		int e;

		for (e = (int)fr->loc->nr - 1; e >= 0; e--) {
			strbuf_reset(&g->buf);
			folded_entry_name(&g->buf, fr->loc, (unsigned)e, kernel);
			at = svg_child(g, at, svg_entry_kind(fr->loc,
							      (unsigned)e,
							      kernel));
			if (!at)
				return -1;
			if (base) {
				g->nodes[at].base += w;
				continue;
			}
			g->nodes[at].total += w;
			if (fr->origin == FRAME_STITCHED)
				g->nodes[at].stitched += w;
			depth++;
		}
	}
	if (!base)
		g->max_depth = MAX(g->max_depth, depth);
	return 0;
}

int svg_add_base(struct svg *g, const struct rsample *s)
{
	return svg_walk(g, s, g->opts.period ? s->period : rsample_count(s),
			true);
}

int svg_add(struct svg *g, const struct rsample *s)
{
	if (!g->any) {
		int64_t ev = strtab_add(&g->names, s->event ? s->event : "");

		if (ev < 0)
			return -1;
		g->event = (uint32_t)ev;
		g->any = true;
	}
	return svg_walk(g, s, g->opts.period ? s->period : rsample_count(s),
			false);
}

/* --- drawing ---------------------------------------------------------- */

static uint32_t svg_hash(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

/* Colour of a frame: palette by kind, shade by name. */
static void svg_colour(struct strbuf *sb, enum svg_kind kind,
		       const char *name)
{
	static const struct {
		unsigned char base[3], span[3];
	} pal[SVG_KIND__COUNT] = {
		[SVG_ROOT] = { { 200, 200, 200 }, { 20, 20, 20 } },
		[SVG_THREAD] = { { 200, 200, 200 }, { 20, 20, 20 } },
		[SVG_USER] = { { 205, 40, 20 }, { 50, 100, 35 } },
		[SVG_KERNEL] = { { 230, 165, 0 }, { 25, 40, 30 } },
		[SVG_JIT] = { { 50, 170, 50 }, { 60, 60, 60 } },
		[SVG_INLINE] = { { 70, 190, 190 }, { 50, 50, 50 } },
		[SVG_STITCHED] = { { 110, 110, 215 }, { 50, 50, 40 } },
		[SVG_MARKER] = { { 150, 150, 150 }, { 30, 30, 30 } },
		[SVG_UNKNOWN] = { { 160, 160, 160 }, { 30, 30, 30 } },
	};
	uint32_t h = svg_hash(name);
	unsigned c[3], i;

	for (i = 0; i < 3; i++) {
		unsigned v = (h >> (8 * i)) & 0xff;

		c[i] = pal[kind].base[i] + pal[kind].span[i] * v / 255;
	}
	strbuf_addf(sb, "rgb(%u,%u,%u)", c[0], c[1], c[2]);
}

/*
 * A differential graph's change at n: of its share of the total, new
 * less base, in percentage points; with opts.absolute, of its weight, in
 * percent of the new total.
 */
static double svg_delta(const struct svg *g, const struct svg_node *n)
{
	double all = (double)g->nodes[0].total, base = (double)g->nodes[0].base;
	double t = (double)n->total, b = (double)n->base;

	if (g->opts.absolute)
		return all > 0 ? 100.0 * (t - b) / all : 0;
	return (all > 0 ? 100.0 * t / all : 0) -
	       (base > 0 ? 100.0 * b / base : 0);
}

/* Red for growth, blue for shrinkage, by the change's share of the most. */
static void svg_diff_colour(struct strbuf *sb, double delta, double most)
{
	double v = most > 0 ? delta / most : 0;
	unsigned c = (unsigned)(210.0 * (v < 0 ? -v : v) + 0.5);

	if (c > 210)
		c = 210;
	if (v >= 0)
		strbuf_addf(sb, "rgb(255,%u,%u)", 255 - c, 255 - c);
	else
		strbuf_addf(sb, "rgb(%u,%u,255)", 255 - c, 255 - c);
}

struct svg_draw {
	struct svg *g;
	struct strbuf *out;
	int fd;
	struct err *err;
	double scale;           /* pixels per unit of weight */
	uint32_t height;
	const char *unit;       /* "samples" or "period" */
	int rc;
};

static int svg_flush(struct svg_draw *d)
{
	if (d->rc == 0 && d->out->oom)
		d->rc = err_set(d->err, ERR_NOMEM, ERR_NO_OFF, "flame graph");
	if (d->rc == 0)
		d->rc = fdout_write(d->fd, d->out->buf, d->out->len,
				    "flame graph", d->err);
	strbuf_reset(d->out);
	return d->rc;
}

static int svg_name_cmp(const void *a, const void *b, void *names)
{
	const struct svg_node *x = *(const struct svg_node *const *)a;
	const struct svg_node *y = *(const struct svg_node *const *)b;

	return strcmp(strtab_str(names, x->name), strtab_str(names, y->name));
}

/* The label that fits px pixels: the name, cut with "..", or nothing. */
static void svg_label(struct strbuf *sb, const char *name, double px)
{
	size_t fit = (size_t)(px / SVG_CHAR_W), len = strlen(name);
	char *cut;

	if (fit < 3)
		return;
	if (len <= fit) {
		textesc_xml(sb, name);
		return;
	}
	len = fit - 2;
	/* not inside a UTF-8 sequence */
	while (len > 0 && ((unsigned char)name[len] & 0xc0) == 0x80)
		len--;
	cut = strndup(name, len);
	if (!cut) {
		sb->oom = true;
		return;
	}
	textesc_xml(sb, cut);
	strbuf_addstr(sb, "..");
	free(cut);
}

static void svg_frame(struct svg_draw *d, const struct svg_node *n,
		      uint32_t depth, uint64_t x)
{
	const char *name = strtab_str(&d->g->names, n->name);
	double px = (double)n->total * d->scale;
	double left = SVG_XPAD + (double)x * d->scale;
	unsigned y = d->height - SVG_BOTTOM - (depth + 1) * SVG_FRAME_H;
	uint64_t all = d->g->nodes[0].total;
	enum svg_kind kind = n->kind;
	struct strbuf *o = d->out;

	if (n->stitched * 2 > n->total)
		kind = SVG_STITCHED;
	strbuf_addf(o, "<g class=\"f\" data-s=\"%llu\" data-n=\"%llu\" "
		    "data-d=\"%u\"><title>", (unsigned long long)x,
		    (unsigned long long)n->total, depth);
	textesc_xml(o, name);
	strbuf_addf(o, "\n%llu %s, %.2f%%", (unsigned long long)n->total,
		    d->unit, 100.0 * (double)n->total / (double)all);
	if (n->stitched)
		strbuf_addf(o, ", stitched %.2f%%",
			    100.0 * (double)n->stitched / (double)n->total);
	if (d->g->opts.diff)
		strbuf_addf(o, "\nbase %llu %s, %.2f%%; %+.2f %s",
			    (unsigned long long)n->base, d->unit,
			    d->g->nodes[0].base ? 100.0 * (double)n->base /
			    (double)d->g->nodes[0].base : 0.0,
			    svg_delta(d->g, n), d->g->opts.absolute ?
			    "% of the total" : "pp");
	strbuf_addf(o, "</title><rect x=\"%.1f\" y=\"%u\" width=\"%.1f\" "
		    "height=\"%u\" fill=\"", left, y, px, SVG_FRAME_H - 1);
	if (d->g->opts.diff)
		svg_diff_colour(o, svg_delta(d->g, n), d->g->max_delta);
	else
		svg_colour(o, kind, name);
	strbuf_addf(o, "\" rx=\"2\"/><text x=\"%.1f\" y=\"%.1f\">",
		    left + 3, y + 10.5);
	svg_label(o, name, px);
	strbuf_addstr(o, "</text></g>\n");
}

/* Draws n at depth, x (in weight units), and its children. */
static void svg_tree(struct svg_draw *d, uint32_t idx, uint32_t depth,
		     uint64_t x)
{
	const struct svg_node *n = &d->g->nodes[idx];
	const struct svg_node **kids = NULL;
	size_t nr = 0, alloc = 0, i;
	uint32_t c;

	if (d->rc || (double)n->total * d->scale < SVG_MIN_WIDTH)
		return;
	svg_frame(d, n, depth, x);
	if (d->out->len >= 65536 && svg_flush(d))
		return;
	for (c = n->first; c; c = d->g->nodes[c].next) {
		if (mem_grow(&kids, &alloc, sizeof(*kids), nr + 1) < 0) {
			d->rc = err_set(d->err, ERR_NOMEM, ERR_NO_OFF,
					"flame graph");
			free(kids);
			return;
		}
		kids[nr++] = &d->g->nodes[c];
	}
	if (nr > 1)
		qsort_r(kids, nr, sizeof(*kids), svg_name_cmp, &d->g->names);
	for (i = 0; i < nr; i++) {
		svg_tree(d, (uint32_t)(kids[i] - d->g->nodes), depth + 1, x);
		x += kids[i]->total;
	}
	free(kids);
}

static void svg_legend(struct strbuf *o, bool diff)
{
	if (diff) {
		strbuf_addf(o, "<rect x=\"%u\" y=\"52\" width=\"12\" "
			    "height=\"12\" rx=\"2\" fill=\"rgb(255,45,45)\"/>"
			    "<text x=\"%u\" y=\"62\">grew</text>\n"
			    "<rect x=\"%u\" y=\"52\" width=\"12\" "
			    "height=\"12\" rx=\"2\" fill=\"rgb(45,45,255)\"/>"
			    "<text x=\"%u\" y=\"62\">shrank (widths: the new "
			    "profile)</text>\n", SVG_XPAD, SVG_XPAD + 16,
			    SVG_XPAD + 70, SVG_XPAD + 86);
		return;
	}

	static const struct {
		enum svg_kind kind;
		const char *label;
	} items[] = {
		{ SVG_USER, "user" },
		{ SVG_KERNEL, "kernel" },
		{ SVG_JIT, "JIT" },
		{ SVG_INLINE, "inlined" },
		{ SVG_STITCHED, "stitched" },
		{ SVG_MARKER, "truncated / unknown" },
	};
	unsigned i, x = SVG_XPAD;

	for (i = 0; i < ARRAY_SIZE(items); i++) {
		strbuf_addf(o, "<rect x=\"%u\" y=\"52\" width=\"12\" "
			    "height=\"12\" rx=\"2\" fill=\"", x);
		svg_colour(o, items[i].kind, "legend");
		strbuf_addf(o, "\"/><text x=\"%u\" y=\"62\">%s</text>\n",
			    x + 16, items[i].label);
		x += 16 + (unsigned)(strlen(items[i].label) * SVG_CHAR_W) + 18;
	}
}

/* The script: hover details, click to zoom, search.  Written for this
 * file's layout (data-s, data-n, data-d on each frame's <g>). */
static const char svg_script[] =
"<script type=\"text/ecmascript\"><![CDATA[\n"
"'use strict';\n"
"var fg = (function () {\n"
"\tvar W = %u, XPAD = %u, CHAR = %.3f, frames = [], total = 0, zoomed = null;\n"
"\tvar details = document.getElementById('details');\n"
"\tvar matched = document.getElementById('matched');\n"
"\tvar unzoomBtn = document.getElementById('unzoom');\n"
"\tvar resetBtn = document.getElementById('resetsearch');\n"
"\tvar gs = document.querySelectorAll('g.f');\n"
"\tfor (var i = 0; i < gs.length; i++) {\n"
"\t\tvar g = gs[i], r = g.querySelector('rect');\n"
"\t\tvar f = { g: g, r: r, t: g.querySelector('text'),\n"
"\t\t\tinfo: g.querySelector('title').textContent,\n"
"\t\t\ts: +g.getAttribute('data-s'), n: +g.getAttribute('data-n'),\n"
"\t\t\td: +g.getAttribute('data-d'), fill: r.getAttribute('fill') };\n"
"\t\tf.name = f.info.split('\\n')[0];\n"
"\t\tframes.push(f);\n"
"\t\tif (f.d === 0) total = f.n;\n"
"\t\tg.addEventListener('mouseover', (function (f) { return function () {\n"
"\t\t\tdetails.textContent = f.info.replace('\\n', ': '); }; })(f));\n"
"\t\tg.addEventListener('mouseout', function () { details.textContent = ' '; });\n"
"\t\tg.addEventListener('click', (function (f) { return function () {\n"
"\t\t\tif (f.d === 0) unzoom(); else zoom(f); }; })(f));\n"
"\t}\n"
"\tfunction label(f, w) {\n"
"\t\tvar fit = Math.floor(w / CHAR), s = f.name;\n"
"\t\tif (fit < 3) s = '';\n"
"\t\telse if (s.length > fit) s = s.substring(0, fit - 2) + '..';\n"
"\t\tf.t.textContent = s;\n"
"\t}\n"
"\tfunction place(f, x, w) {\n"
"\t\tf.r.setAttribute('x', x.toFixed(1));\n"
"\t\tf.r.setAttribute('width', w.toFixed(1));\n"
"\t\tf.t.setAttribute('x', (x + 3).toFixed(1));\n"
"\t\tlabel(f, w);\n"
"\t}\n"
"\t/* Shows f's subtree across the whole width, its callers faded. */\n"
"\tfunction zoom(z) {\n"
"\t\tvar full = W - 2 * XPAD;\n"
"\t\tzoomed = z;\n"
"\t\tunzoomBtn.style.opacity = 1;\n"
"\t\tframes.forEach(function (f) {\n"
"\t\t\tvar inside = f.d >= z.d && f.s >= z.s && f.s + f.n <= z.s + z.n;\n"
"\t\t\tvar below = f.d < z.d && f.s <= z.s && f.s + f.n >= z.s + z.n;\n"
"\t\t\tf.g.style.display = inside || below ? '' : 'none';\n"
"\t\t\tf.g.style.opacity = below ? 0.5 : 1;\n"
"\t\t\tif (inside)\n"
"\t\t\t\tplace(f, XPAD + (f.s - z.s) / z.n * full, f.n / z.n * full);\n"
"\t\t\telse if (below)\n"
"\t\t\t\tplace(f, XPAD, full);\n"
"\t\t});\n"
"\t}\n"
"\tfunction unzoom() {\n"
"\t\tvar full = W - 2 * XPAD;\n"
"\t\tzoomed = null;\n"
"\t\tunzoomBtn.style.opacity = 0;\n"
"\t\tframes.forEach(function (f) {\n"
"\t\t\tf.g.style.display = '';\n"
"\t\t\tf.g.style.opacity = 1;\n"
"\t\t\tplace(f, XPAD + f.s / total * full, f.n / total * full);\n"
"\t\t});\n"
"\t}\n"
"\t/* Highlights frames whose name matches re; returns the matched\n"
"\t * share of the total (nested matches counted once). */\n"
"\tfunction search(re) {\n"
"\t\tvar hits = [], sum = 0, end = -1;\n"
"\t\tif (typeof re === 'string') re = new RegExp(re);\n"
"\t\tframes.forEach(function (f) {\n"
"\t\t\tvar hit = re.test(f.name);\n"
"\t\t\tf.r.setAttribute('fill', hit ? 'rgb(230,0,230)' : f.fill);\n"
"\t\t\tif (hit) hits.push(f);\n"
"\t\t});\n"
"\t\thits.sort(function (a, b) { return a.s - b.s || b.n - a.n; });\n"
"\t\thits.forEach(function (f) {\n"
"\t\t\tif (f.s + f.n <= end) return;\n"
"\t\t\tsum += f.s + f.n - Math.max(f.s, end);\n"
"\t\t\tend = f.s + f.n;\n"
"\t\t});\n"
"\t\tvar share = total ? 100 * sum / total : 0;\n"
"\t\tmatched.textContent = 'Matched: ' + share.toFixed(1) + '%%';\n"
"\t\tresetBtn.style.opacity = 1;\n"
"\t\treturn share;\n"
"\t}\n"
"\tfunction resetSearch() {\n"
"\t\tframes.forEach(function (f) { f.r.setAttribute('fill', f.fill); });\n"
"\t\tmatched.textContent = ' ';\n"
"\t\tresetBtn.style.opacity = 0;\n"
"\t}\n"
"\tfunction prompted() {\n"
"\t\tvar s = prompt('Search for (regular expression):', '');\n"
"\t\tif (s) { try { search(s); } catch (e) { matched.textContent = 'Bad expression'; } }\n"
"\t}\n"
"\tunzoomBtn.addEventListener('click', unzoom);\n"
"\tresetBtn.addEventListener('click', resetSearch);\n"
"\tdocument.getElementById('search').addEventListener('click', prompted);\n"
"\twindow.addEventListener('keydown', function (e) {\n"
"\t\tif ((e.ctrlKey || e.metaKey) && e.key === 'f') { e.preventDefault(); prompted(); }\n"
"\t\telse if (e.key === 'Escape') { resetSearch(); unzoom(); }\n"
"\t});\n"
"\treturn { zoom: zoom, unzoom: unzoom, search: search,\n"
"\t\tresetSearch: resetSearch, frames: frames };\n"
"})();\n"
"]]></script>\n";

int svg_write(struct svg *g, int fd, struct err *err)
{
	struct strbuf out = STRBUF_INIT;
	struct svg_draw d = { .g = g, .out = &out, .fd = fd, .err = err };
	uint64_t all = g->nodes[0].total;
	const char *event = g->any ? strtab_str(&g->names, g->event) : "";

	d.unit = g->opts.period ? "period" : "samples";
	if (g->opts.diff) {
		size_t i;

		g->max_delta = 0;
		for (i = 1; i < g->nr; i++) {
			double v = svg_delta(g, &g->nodes[i]);

			g->max_delta = MAX(g->max_delta, v < 0 ? -v : v);
		}
	}
	d.height = SVG_TOP + (g->max_depth + 1) * SVG_FRAME_H + SVG_BOTTOM;
	d.scale = all ? (double)(SVG_WIDTH - 2 * SVG_XPAD) / (double)all : 0;
	strbuf_addf(&out,
		"<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%u\" height=\"%u\" "
		"viewBox=\"0 0 %u %u\" xmlns=\"http://www.w3.org/2000/svg\">\n"
		"<style type=\"text/css\">\n"
		"text { font-family: Verdana, sans-serif; font-size: %upx; "
		"fill: rgb(0,0,0); }\n"
		"g.f text { pointer-events: none; }\n"
		"g.f:hover rect { stroke: black; stroke-width: 0.5; cursor: pointer; }\n"
		"#title { font-size: 17px; text-anchor: middle; }\n"
		"#subtitle { text-anchor: middle; fill: rgb(90,90,90); }\n"
		"#unzoom, #resetsearch { opacity: 0; cursor: pointer; }\n"
		"#search { text-anchor: end; cursor: pointer; }\n"
		"#matched { text-anchor: end; }\n"
		"</style>\n"
		"<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"100%%\" "
		"fill=\"rgb(248,248,240)\"/>\n"
		"<text id=\"title\" x=\"%u\" y=\"24\">",
		SVG_WIDTH, d.height, SVG_WIDTH, d.height, SVG_FONT,
		SVG_WIDTH / 2);
	textesc_xml(&out, g->title);
	strbuf_addf(&out, "</text>\n<text id=\"subtitle\" x=\"%u\" y=\"42\">",
		    SVG_WIDTH / 2);
	textesc_xml(&out, event);
	strbuf_addf(&out, ": %llu samples", (unsigned long long)g->samples);
	if (g->opts.period)
		strbuf_addf(&out, ", widths by period (total %llu)",
			    (unsigned long long)all);
	strbuf_addstr(&out, "</text>\n");
	svg_legend(&out, g->opts.diff);
	strbuf_addf(&out,
		"<text id=\"unzoom\" x=\"%u\" y=\"24\">Reset zoom</text>\n"
		"<text id=\"search\" x=\"%u\" y=\"24\">Search</text>\n"
		"<text id=\"resetsearch\" x=\"%u\" y=\"62\">Reset search</text>\n"
		"<text id=\"details\" x=\"%u\" y=\"%u\"> </text>\n"
		"<text id=\"matched\" x=\"%u\" y=\"%u\"> </text>\n",
		SVG_XPAD, SVG_WIDTH - SVG_XPAD, SVG_WIDTH - SVG_XPAD - 110,
		SVG_XPAD, d.height - 12, SVG_WIDTH - SVG_XPAD,
		d.height - 12);
	if (all)
		svg_tree(&d, 0, 0, 0);
	if (d.rc == 0) {
		strbuf_addf(&out, svg_script, SVG_WIDTH, SVG_XPAD, SVG_CHAR_W);
		strbuf_addstr(&out, "</svg>\n");
		svg_flush(&d);
	}
	strbuf_release(&out);
	return d.rc;
}
