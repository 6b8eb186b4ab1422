/*
 * diff.c - `restack diff BASE NEW -o OUT`: how NEW differs from BASE,
 * each a capture or a profile.
 *
 * Both are folded (stacks named as in folded output, summed); from the
 * two tables come the differential folded output ("stack base new"), the
 * JSON report (functions whose inclusive or self share of the total moved
 * by more than --threshold percentage points, and the --fail-above gate),
 * and, read again as samples, the differential flame graph (svg_add_base)
 * and the pprof profile of NEW with BASE's samples negated
 * (pprof_add_base, as `go tool pprof -diff_base` merges them).  A
 * function whose share of stacks that end truncated moved by more than
 * the threshold, or whose inclusive share moved the way and by no more
 * than the share of truncated stacks moved it (more truncation in NEW
 * takes outer frames' share away), is reported apart ("coverage"): stacks
 * cut short move shares that the program's work did not.  Those never
 * fail the gate.
 * See docs/profiles.md.
 */
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/outfile.h"
#include "cmd/profin.h"
#include "cmd/run.h"
#include "common/arena.h"
#include "common/hashmap.h"
#include "common/mem.h"
#include "common/strbuf.h"
#include "formats/fdout.h"
#include "formats/folded.h"
#include "formats/pprof.h"
#include "formats/svg.h"
#include "formats/textesc.h"

static const char *const diff_usage[] = {
	"usage: restack diff [options] <base> <new> -o <output>",
	"",
	"  -o, --output FILE       write here ('-' = standard output)",
	"      --to FORMAT         svg (differential flame graph), folded",
	"                          ('stack base new' lines), pprof (NEW with",
	"                          BASE negated) or json (the report); default",
	"                          from the output's name: .svg, .folded,",
	"                          .pb.gz, .json",
	"      --report FILE       also write the JSON report here",
	"      --threshold PP      report functions whose inclusive or self",
	"                          share moved by more than PP percentage",
	"                          points (default 1)",
	"      --fail-above PP     exit 1 when a function's share grew by",
	"                          more than PP points (CI gate)",
	"      --absolute          svg: colour by raw weights, not shares",
	"      --weight W          samples (default) or period",
	"      --title TEXT        flame graph heading (svg)",
	"      --from KIND         read inputs as folded, pprof, chrome or",
	"                          capture",
	"                          (default: told by their contents)",
	"      --sample-type NAME  pprof input: the sample type whose values",
	"                          are the weights",
	NULL,
};

static const char *const diff_not_taken[] = {
	"--stats-json", "--min-coverage", NULL
};

enum {
	OPT_TO = 512,
	OPT_REPORT,
	OPT_THRESHOLD,
	OPT_FAIL_ABOVE,
	OPT_ABSOLUTE,
	OPT_WEIGHT,
	OPT_TITLE,
	OPT_FROM,
	OPT_SAMPLE_TYPE,
};

enum diff_format { DIFF_SVG, DIFF_FOLDED, DIFF_PPROF, DIFF_JSON };

/* A distinct stack, with its weight in each profile. */
struct diff_stack {
	struct diff_stack *next;
	uint64_t w[2];
	size_t len;
	char text[];
};

/* A function (frame name), with its weights in each profile. */
struct diff_fn {
	struct diff_fn *next;
	uint64_t incl[2], self[2], trunc[2];
	uint64_t seen;              /* the stack last counted in incl */
	double d_incl, d_self, key; /* shares' changes (pp); sort key */
	bool coverage;              /* its truncated share moved */
	const char *name;
};

struct diff {
	struct arena arena;
	struct hashmap stacks, fns;
	struct diff_stack **sv;
	size_t nr_stacks, alloc_sv;
	struct diff_fn **fv;
	size_t nr_fns, alloc_fv;
	uint64_t total[2], trunc[2];
	uint64_t stack_no;
	unsigned side;              /* the profile being added: 0 base */
	bool oom;
};

static struct diff_stack *diff_stack_get(struct diff *d, const char *t,
					 size_t len)
{
	uint64_t h = hashmap_fnv(HASHMAP_FNV_SEED, t, len);
	struct diff_stack *s, *first = NULL;
	void *v;

	if (hashmap_get(&d->stacks, h, &v))
		first = v;
	for (s = first; s; s = s->next)
		if (s->len == len && !memcmp(s->text, t, len))
			return s;
	s = arena_alloc(&d->arena, sizeof(*s) + len + 1);
	if (!s || hashmap_put(&d->stacks, h, s) < 0 ||
	    mem_grow(&d->sv, &d->alloc_sv, sizeof(*d->sv), d->nr_stacks + 1))
		return NULL;
	memcpy(s->text, t, len);
	s->len = len;
	s->next = first;
	d->sv[d->nr_stacks++] = s;
	return s;
}

static struct diff_fn *diff_fn_get(struct diff *d, const char *t, size_t len)
{
	uint64_t h = hashmap_fnv(HASHMAP_FNV_SEED, t, len);
	struct diff_fn *f, *first = NULL;
	void *v;

	if (hashmap_get(&d->fns, h, &v))
		first = v;
	for (f = first; f; f = f->next)
		if (!strncmp(f->name, t, len) && !f->name[len])
			return f;
	f = arena_alloc(&d->arena, sizeof(*f));
	if (!f || !(f->name = arena_strndup(&d->arena, t, len)) ||
	    hashmap_put(&d->fns, h, f) < 0 ||
	    mem_grow(&d->fv, &d->alloc_fv, sizeof(*d->fv), d->nr_fns + 1))
		return NULL;
	f->next = first;
	d->fv[d->nr_fns++] = f;
	return f;
}

/* One folded line of profile d->side: its stack and its functions. */
static int diff_line(void *ctx, const char *t, size_t len, uint64_t w)
{
	struct diff *d = ctx;
	struct diff_stack *s = diff_stack_get(d, t, len);
	const char *end = t + len, *f, *leaf = NULL, *first;
	struct diff_fn *fn = NULL;
	bool trunc;

	if (!s)
		return -1;
	s->w[d->side] += w;
	d->total[d->side] += w;
	d->stack_no++;
	/* the thread's name is no function, nor a truncation marker */
	f = first = memchr(t, ';', len);
	trunc = f && end - f > 13 && !memcmp(f + 1, "[truncated: ", 12);
	if (trunc)
		d->trunc[d->side] += w;
	for (f = f ? f + 1 : end; f < end;) {
		const char *fe = memchr(f, ';', (size_t)(end - f));

		fe = fe ? fe : end;
		if (!(trunc && f == first + 1)) {
			fn = diff_fn_get(d, f, (size_t)(fe - f));
			if (!fn)
				return -1;
			if (fn->seen != d->stack_no) {
				fn->seen = d->stack_no;
				fn->incl[d->side] += w;
				if (trunc)
					fn->trunc[d->side] += w;
			}
			leaf = f;
		}
		f = fe + 1;
	}
	if (leaf)
		fn->self[d->side] += w;
	return 0;
}

static double diff_pct(uint64_t w, uint64_t all)
{
	return all ? 100.0 * (double)w / (double)all : 0;
}

static int diff_fn_cmp(const void *a, const void *b)
{
	const struct diff_fn *x = *(const struct diff_fn *const *)a;
	const struct diff_fn *y = *(const struct diff_fn *const *)b;
	double ax = x->key < 0 ? -x->key : x->key;
	double ay = y->key < 0 ? -y->key : y->key;

	/* growth first (what a regression is), then shrinkage; each the
	 * largest change first */
	if ((x->key > 0) != (y->key > 0))
		return x->key > 0 ? -1 : 1;
	if (ax != ay)
		return ax > ay ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int diff_stack_cmp(const void *a, const void *b)
{
	const struct diff_stack *x = *(const struct diff_stack *const *)a;
	const struct diff_stack *y = *(const struct diff_stack *const *)b;
	int c = memcmp(x->text, y->text, MIN(x->len, y->len));

	return c ? c : x->len < y->len ? -1 : x->len > y->len;
}

/* The shares' changes, each function's sort key and coverage flag. */
static void diff_judge(struct diff *d, double threshold)
{
	/* how much more of NEW than of BASE ended truncated (pp) */
	double lost = diff_pct(d->trunc[1], d->total[1]) -
		      diff_pct(d->trunc[0], d->total[0]);
	size_t i;

	for (i = 0; i < d->nr_fns; i++) {
		struct diff_fn *f = d->fv[i];
		double tb = diff_pct(f->trunc[0], f->incl[0]);
		double tn = diff_pct(f->trunc[1], f->incl[1]);

		f->d_incl = diff_pct(f->incl[1], d->total[1]) -
			    diff_pct(f->incl[0], d->total[0]);
		f->d_self = diff_pct(f->self[1], d->total[1]) -
			    diff_pct(f->self[0], d->total[0]);
		f->key = (f->d_incl < 0 ? -f->d_incl : f->d_incl) >=
			 (f->d_self < 0 ? -f->d_self : f->d_self) ?
			 f->d_incl : f->d_self;
		/* its own stacks end truncated more or less often, or its
		 * share moved the way, and by no more than, the stacks that
		 * lost their outer frames moved it */
		f->coverage = (tn > tb ? tn - tb : tb - tn) > threshold ||
			      (lost > threshold && f->d_incl < 0 &&
			       -f->d_incl <= lost + threshold) ||
			      (-lost > threshold && f->d_incl > 0 &&
			       f->d_incl <= -lost + threshold);
	}
	if (d->nr_fns > 1)
		qsort(d->fv, d->nr_fns, sizeof(*d->fv), diff_fn_cmp);
	if (d->nr_stacks > 1)
		qsort(d->sv, d->nr_stacks, sizeof(*d->sv), diff_stack_cmp);
}

static bool diff_moved(const struct diff_fn *f, double threshold)
{
	return f->d_incl > threshold || -f->d_incl > threshold ||
	       f->d_self > threshold || -f->d_self > threshold;
}

static void diff_json_fn(struct strbuf *sb, const struct diff *d,
			 const struct diff_fn *f, bool *first)
{
	strbuf_addstr(sb, *first ? "\n    {\"name\": " : ",\n    {\"name\": ");
	*first = false;
	textesc_json(sb, f->name);
	strbuf_addf(sb, ", \"inclusive_pct\": [%.3f, %.3f], "
		    "\"self_pct\": [%.3f, %.3f], "
		    "\"inclusive_delta_pp\": %.3f, \"self_delta_pp\": %.3f, "
		    "\"truncated_pct\": [%.3f, %.3f], "
		    "\"weights\": {\"inclusive\": [%llu, %llu], "
		    "\"self\": [%llu, %llu]}}",
		    diff_pct(f->incl[0], d->total[0]),
		    diff_pct(f->incl[1], d->total[1]),
		    diff_pct(f->self[0], d->total[0]),
		    diff_pct(f->self[1], d->total[1]), f->d_incl, f->d_self,
		    diff_pct(f->trunc[0], f->incl[0]),
		    diff_pct(f->trunc[1], f->incl[1]),
		    (unsigned long long)f->incl[0],
		    (unsigned long long)f->incl[1],
		    (unsigned long long)f->self[0],
		    (unsigned long long)f->self[1]);
}

/* The JSON report into sb; *failed: the functions above fail_above. */
static void diff_json(struct strbuf *sb, const struct diff *d,
		      const char *const in[2], bool period, double threshold,
		      double fail_above, unsigned *failed)
{
	bool first = true;
	size_t i;

	*failed = 0;
	strbuf_addstr(sb, "{\n  \"base\": ");
	textesc_json(sb, in[0]);
	strbuf_addstr(sb, ",\n  \"new\": ");
	textesc_json(sb, in[1]);
	strbuf_addf(sb, ",\n  \"weight\": \"%s\",\n  \"totals\": [%llu, %llu],"
		    "\n  \"truncated_pct\": [%.3f, %.3f],"
		    "\n  \"threshold_pp\": %.3f,\n  \"functions\": [",
		    period ? "period" : "samples",
		    (unsigned long long)d->total[0],
		    (unsigned long long)d->total[1],
		    diff_pct(d->trunc[0], d->total[0]),
		    diff_pct(d->trunc[1], d->total[1]), threshold);
	for (i = 0; i < d->nr_fns; i++)
		if (!d->fv[i]->coverage && diff_moved(d->fv[i], threshold))
			diff_json_fn(sb, d, d->fv[i], &first);
	strbuf_addstr(sb, first ? "],\n  \"coverage\": [" :
		      "\n  ],\n  \"coverage\": [");
	first = true;
	for (i = 0; i < d->nr_fns; i++)
		if (d->fv[i]->coverage)
			diff_json_fn(sb, d, d->fv[i], &first);
	strbuf_addstr(sb, first ? "],\n  \"fail_above_pp\": " :
		      "\n  ],\n  \"fail_above_pp\": ");
	if (fail_above < 0)
		strbuf_addstr(sb, "null");
	else
		strbuf_addf(sb, "%.3f", fail_above);
	strbuf_addstr(sb, ",\n  \"failed\": [");
	for (i = 0; fail_above >= 0 && i < d->nr_fns; i++) {
		const struct diff_fn *f = d->fv[i];

		if (f->coverage ||
		    (f->d_incl <= fail_above && f->d_self <= fail_above))
			continue;
		if ((*failed)++)
			strbuf_addstr(sb, ", ");
		textesc_json(sb, f->name);
	}
	strbuf_addstr(sb, "]\n}\n");
}

static void diff_folded(struct strbuf *sb, const struct diff *d)
{
	size_t i;

	for (i = 0; i < d->nr_stacks; i++) {
		const struct diff_stack *s = d->sv[i];

		strbuf_add(sb, s->text, s->len);
		strbuf_addf(sb, " %llu %llu\n", (unsigned long long)s->w[0],
			    (unsigned long long)s->w[1]);
	}
}

/* Loading: each input into a folded table, and the svg or pprof. */
struct diff_load {
	struct folded *fo;
	struct svg *svg;
	struct pprof *pp;
	bool base;
};

static int diff_add(void *ctx, const struct rsample *s)
{
	struct diff_load *l = ctx;

	if (folded_add(l->fo, s) < 0)
		return -1;
	if (l->svg)
		return (l->base ? svg_add_base : svg_add)(l->svg, s);
	if (l->pp)
		return (l->base ? pprof_add_base : pprof_add)(l->pp, s);
	return 0;
}

static int diff_info(void *ctx, const char *path,
		     const struct profile_info *info)
{
	struct diff_load *l = ctx;

	(void)path;
	if (l->pp && !l->base && info->type && info->unit)
		(void)pprof_set_type(l->pp, info->type, info->unit);
	return 0;
}

static int diff_format_of(const char *to, const char *out,
			  enum diff_format *fmt)
{
	static const struct {
		const char *name, *end[2];
		enum diff_format fmt;
	} f[] = {
		{ "svg", { ".svg", NULL }, DIFF_SVG },
		{ "folded", { ".folded", ".txt" }, DIFF_FOLDED },
		{ "pprof", { ".pb.gz", ".pprof" }, DIFF_PPROF },
		{ "json", { ".json", NULL }, DIFF_JSON },
	};
	size_t n = strlen(out), i, j;

	for (i = 0; i < ARRAY_SIZE(f); i++) {
		if (to && !strcmp(to, f[i].name))
			break;
		for (j = 0; !to && j < 2; j++)
			if (f[i].end[j] && n > strlen(f[i].end[j]) &&
			    !strcmp(out + n - strlen(f[i].end[j]), f[i].end[j]))
				goto found;
	}
found:
	if (i == ARRAY_SIZE(f))
		return -1;
	*fmt = f[i].fmt;
	return 0;
}

/* A number of percentage points, >= 0.  0, or -1 (printed). */
static int diff_pp(const char *opt, const char *arg, double *v)
{
	char *end;

	*v = strtod(arg, &end);
	if (!*arg || *end || !(*v >= 0) || *v > 100) {
		cmd_usage_error(diff_usage, "diff: %s takes percentage points "
				"from 0 to 100, not '%s'", opt, arg);
		return -1;
	}
	return 0;
}

/* Writes sb to path through an outfile.  0, or -1 (printed). */
static int diff_write_text(const char *path, struct strbuf *sb)
{
	struct outfile of = { .fd = -1 };
	struct err err;
	int rc = outfile_open(&of, path);

	if (rc == 0 && sb->oom) {
		cmd_error("out of memory");
		rc = -1;
	}
	if (rc == 0 && fdout_flush(of.fd, sb, "the diff", &err) < 0) {
		cmd_report_err(path, &err);
		rc = -1;
	}
	if (of.fd >= 0 && outfile_close(&of, rc == 0) < 0)
		rc = -1;
	return rc;
}

int cmd_diff(int argc, char **argv)
{
	static const struct option own[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "to", required_argument, NULL, OPT_TO },
		{ "report", required_argument, NULL, OPT_REPORT },
		{ "threshold", required_argument, NULL, OPT_THRESHOLD },
		{ "fail-above", required_argument, NULL, OPT_FAIL_ABOVE },
		{ "absolute", no_argument, NULL, OPT_ABSOLUTE },
		{ "weight", required_argument, NULL, OPT_WEIGHT },
		{ "title", required_argument, NULL, OPT_TITLE },
		{ "from", required_argument, NULL, OPT_FROM },
		{ "sample-type", required_argument, NULL, OPT_SAMPLE_TYPE },
		{ "help", no_argument, NULL, 'h' },
	};
	struct option opts[64];
	struct run_opts ro = RUN_OPTS_INIT;
	struct folded_opts fopts = { 0 };
	struct profin_opts pin = { 0 };
	struct diff d = { .oom = false };
	struct diff_load l[2] = { { 0 } };
	const char *out = NULL, *to = NULL, *report = NULL, *title = NULL;
	const char *in[2];
	double threshold = 1, fail_above = -1;
	bool absolute = false;
	enum diff_format fmt;
	struct strbuf sb = STRBUF_INIT;
	unsigned failed = 0, i;
	struct err err;
	size_t n = 0;
	int c, rc = 0;

	for (n = 0; n < ARRAY_SIZE(own); n++)
		opts[n] = own[n];
	for (i = 0; run_long_options[i].name; i++)
		opts[n++] = run_long_options[i];
	memset(&opts[n], 0, sizeof(opts[n]));
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:qj:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case OPT_TO:
			to = optarg;
			break;
		case OPT_REPORT:
			report = optarg;
			break;
		case OPT_THRESHOLD:
			if (diff_pp("--threshold", optarg, &threshold) < 0)
				return EXIT_USAGE;
			break;
		case OPT_FAIL_ABOVE:
			if (diff_pp("--fail-above", optarg, &fail_above) < 0)
				return EXIT_USAGE;
			break;
		case OPT_ABSOLUTE:
			absolute = true;
			break;
		case OPT_WEIGHT:
			if (!strcmp(optarg, "period"))
				fopts.period = true;
			else if (strcmp(optarg, "samples"))
				return cmd_usage_error(diff_usage,
					"diff: --weight is samples or period, "
					"not '%s'", optarg);
			break;
		case OPT_TITLE:
			title = optarg;
			break;
		case OPT_FROM:
		case OPT_SAMPLE_TYPE:
			if (profin_option(&pin, c == OPT_FROM, optarg, "diff",
					  diff_usage) < 0)
				return EXIT_USAGE;
			break;
		case 'h':
			cmd_print_usage(stdout, diff_usage);
			cmd_print_usage_except(stdout, run_usage_lines,
					       diff_not_taken);
			printf("  -h, --help              "
			       "show this help and exit\n");
			return EXIT_OK;
		default:
			if (run_option_or_usage(&ro, c, optarg, "diff", diff_usage,
						argv[optind - 1]))
				return EXIT_USAGE;
			break;
		}
	}
	if (ro.stats_json || ro.min_coverage >= 0)
		return cmd_usage_error(diff_usage, "diff: --stats-json and "
				       "--min-coverage are convert's and "
				       "stats'");
	if (argc - optind != 2)
		return cmd_usage_error(diff_usage,
				       "diff: expected two inputs, BASE NEW");
	if (!out)
		return cmd_usage_error(diff_usage,
				       "diff: no output (-o FILE or -o -)");
	if (diff_format_of(to, out, &fmt) < 0)
		return cmd_usage_error(diff_usage,
				       "diff: unsupported output format '%s' "
				       "(svg, folded, pprof or json)",
				       to ? to : out);
	if (outfile_is_input("diff", "output", out, argv + optind, 2) ||
	    (report && outfile_is_input("diff", "--report file", report,
					argv + optind, 2)))
		return EXIT_USAGE;
	in[0] = argv[optind];
	in[1] = argv[optind + 1];
	if (fmt == DIFF_SVG)
		l[0].svg = svg_new(&(struct svg_opts){
			.period = fopts.period, .diff = true,
			.absolute = absolute,
			.title = title ? title : "Differential Flame Graph" });
	else if (fmt == DIFF_PPROF)
		l[0].pp = pprof_new(&(struct pprof_opts){
			.period = fopts.period });
	for (i = 0; i < 2; i++) {
		l[i].fo = folded_new(&fopts);
		l[i].svg = l[0].svg;
		l[i].pp = l[0].pp;
		l[i].base = i == 0;
		if (!l[i].fo || (fmt == DIFF_SVG && !l[i].svg) ||
		    (fmt == DIFF_PPROF && !l[i].pp)) {
			cmd_error("out of memory");
			rc = -1;
		}
	}
	pin.on_info = diff_info;
	for (i = 0; rc == 0 && i < 2; i++) {
		/* (each input has its own folded table; svg keeps names) */
		if (l[0].pp)
			pprof_forget_locs(l[0].pp);
		rc = profin_load(&pin, &ro, in[i], diff_add, &l[i], NULL);
	}
	for (i = 0; rc == 0 && i < 2; i++) {
		d.side = i;
		if (folded_each(l[i].fo, diff_line, &d) < 0) {
			cmd_error("out of memory");
			rc = -1;
		}
	}
	if (rc == 0) {
		diff_judge(&d, threshold);
		diff_json(&sb, &d, in, fopts.period, threshold, fail_above,
			  &failed);
		if (report && diff_write_text(report, &sb) < 0)
			rc = -1;
	}
	if (rc == 0 && fmt == DIFF_JSON) {
		rc = diff_write_text(out, &sb);
	} else if (rc == 0 && fmt == DIFF_FOLDED) {
		strbuf_reset(&sb);
		diff_folded(&sb, &d);
		rc = diff_write_text(out, &sb);
	} else if (rc == 0) {
		struct outfile of = { .fd = -1 };

		rc = outfile_open(&of, out);
		if (rc == 0 && ((l[0].svg && svg_write(l[0].svg, of.fd,
							  &err) < 0) ||
				(l[0].pp && pprof_write(l[0].pp, of.fd,
							&err) < 0))) {
			cmd_report_err(out, &err);
			rc = -1;
		}
		if (of.fd >= 0 && outfile_close(&of, rc == 0) < 0)
			rc = -1;
	}
	for (i = 0; rc == 0 && failed && !ro.quiet && i < d.nr_fns; i++) {
		const struct diff_fn *f = d.fv[i];
		double up = MAX(f->d_incl, f->d_self);

		if (!f->coverage && up > fail_above)
			cmd_error("diff: %s grew by %.2f percentage points "
				  "(--fail-above %.2f)", f->name, up,
				  fail_above);
	}
	strbuf_release(&sb);
	for (i = 0; i < 2; i++)
		folded_free(l[i].fo);
	svg_free(l[0].svg);
	pprof_free(l[0].pp);
	hashmap_release(&d.stacks);
	hashmap_release(&d.fns);
	arena_release(&d.arena);
	free(d.sv);
	free(d.fv);
	if (rc < 0)
		return EXIT_BAD;
	return failed ? EXIT_GATE : EXIT_OK;
}
