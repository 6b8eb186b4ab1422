/*
 * merge.c - `restack merge IN... -o OUT`: many captures or profiles into
 * one profile, stacks summed.
 *
 * The inputs are read one after the other into one writer (folded, pprof
 * or svg: the outputs that sum stacks, so the result does not depend on
 * the inputs' order); memory is one entry per distinct stack (and per
 * distinct frame), whatever the number of inputs.  A capture is unwound
 * as `convert` would; see docs/profiles.md.  pprof output of pprof inputs
 * only keeps their sample types, every one, unless --sample-type picks
 * one: the inputs must then have the same types (names and units, in
 * order), as `go tool pprof` merges (the first's period type, the
 * largest period, the durations summed).
 */
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/outfile.h"
#include "cmd/profin.h"
#include "cmd/run.h"
#include "formats/folded.h"
#include "formats/pprof.h"
#include "formats/svg.h"

static const char *const merge_usage[] = {
	"usage: restack merge [options] <input>... -o <output>",
	"",
	"  -o, --output FILE       write here ('-' = standard output)",
	"      --to FORMAT         folded, pprof or svg (default: from the",
	"                          output's name: .folded, .pb.gz, .svg)",
	"      --weight W          samples (default) or period",
	"      --pid               first frame 'comm-pid' (folded)",
	"      --tid               first frame 'comm-pid/tid' (folded)",
	"      --annotate          suffix frames as convert does (folded)",
	"      --title TEXT        flame graph heading (svg)",
	"      --from KIND         read inputs as folded, pprof, chrome or",
	"                          capture",
	"                          (default: told by their contents)",
	"      --sample-type NAME  pprof input: the sample type whose values",
	"                          are the weights (pprof output of pprof",
	"                          inputs without it keeps every type)",
	NULL,
};

enum {
	OPT_TO = 512,
	OPT_WEIGHT,
	OPT_PID,
	OPT_TID,
	OPT_ANNOTATE,
	OPT_TITLE,
	OPT_FROM,
	OPT_SAMPLE_TYPE,
};

/* The run options merge does not take: they report on single inputs. */
static const char *const merge_not_taken[] = {
	"--stats-json", "--min-coverage", NULL
};

enum merge_format { MERGE_FOLDED, MERGE_PPROF, MERGE_SVG };

struct merge {
	enum merge_format fmt;
	struct folded *fo;
	struct pprof *pp;
	struct svg *svg;
	bool typed;              /* pprof: the sample type is set */
	/* pprof output of pprof inputs only, without --sample-type: */
	bool all_types;          /* every sample type is kept */
	const struct profile_info *info; /* the input's: its values */
	const char *first;       /* the first input, whose types... */
	struct strbuf types;     /* ... these are: "type/unit, ..." */
	struct strbuf cur;       /* scratch: the input's */
};

static int merge_add(void *ctx, const struct rsample *s)
{
	struct merge *m = ctx;

	if (m->fmt == MERGE_FOLDED)
		return folded_add(m->fo, s);
	if (m->fmt == MERGE_PPROF && m->all_types)
		return pprof_add_values(m->pp, s, m->info->values);
	if (m->fmt == MERGE_PPROF)
		return pprof_add(m->pp, s);
	return svg_add(m->svg, s);
}

/*
 * info's sample types into sb: "type/unit, ..." for people, then a NUL
 * and each type and unit NUL-terminated (exact, for merge_check_types).
 */
static void merge_types_str(struct strbuf *sb, const struct profile_info *info)
{
	size_t i;

	strbuf_reset(sb);
	for (i = 0; i < info->nr_types; i++)
		strbuf_addf(sb, "%s%s/%s", i ? ", " : "", info->types[i],
			    info->units[i]);
	strbuf_addch(sb, '\0');
	for (i = 0; i < info->nr_types; i++) {
		strbuf_add(sb, info->types[i], strlen(info->types[i]) + 1);
		strbuf_add(sb, info->units[i], strlen(info->units[i]) + 1);
	}
}

/* An input after the first: the same sample types, or an error. */
static int merge_check_types(struct merge *m, const char *path,
			     const struct profile_info *info)
{
	merge_types_str(&m->cur, info);
	if (m->cur.oom) {
		cmd_error("out of memory");
		return -1;
	}
	if (m->cur.len == m->types.len &&
	    !memcmp(m->cur.buf, m->types.buf, m->cur.len))
		return 0;
	cmd_error("%s: sample types %s, not %s's %s: pick one with "
		  "--sample-type", path, strbuf_str(&m->cur), m->first,
		  strbuf_str(&m->types));
	return -1;
}

/*
 * pprof output: every sample type of the first pprof input (all_types:
 * the others must have the same), else its chosen one.
 */
static int merge_info(void *ctx, const char *path,
		      const struct profile_info *info)
{
	struct merge *m = ctx;

	if (!m->pp)
		return 0;
	if (m->all_types) {
		m->info = info;
		if (m->first && merge_check_types(m, path, info) < 0)
			return -1;
		if (!m->first) {
			m->first = path;
			merge_types_str(&m->types, info);
			if (m->types.oom ||
			    pprof_set_types(m->pp, info->nr_types, info->types,
					    info->units,
					    info->default_type) < 0)
				goto oom;
		}
		if (pprof_add_header(m->pp, info->period_type[0],
				     info->period_type[1], info->period,
				     info->time_nanos,
				     info->duration_nanos) < 0)
			goto oom;
		return 0;
	}
	if (!m->typed && info->type && info->unit) {
		m->typed = true;
		(void)pprof_set_type(m->pp, info->type, info->unit);
	}
	return 0;
oom:
	cmd_error("out of memory");
	return -1;
}

static int merge_format_of(const char *to, const char *out,
			   enum merge_format *fmt)
{
	static const struct {
		const char *name, *end[2];
		enum merge_format fmt;
	} f[] = {
		{ "folded", { ".folded", ".txt" }, MERGE_FOLDED },
		{ "pprof", { ".pb.gz", ".pprof" }, MERGE_PPROF },
		{ "svg", { ".svg", NULL }, MERGE_SVG },
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
	if (i < ARRAY_SIZE(f)) {
		*fmt = f[i].fmt;
		return 0;
	}
	if (!to && (!strcmp(out, "-") || !strchr(out, '.'))) {
		*fmt = MERGE_FOLDED;
		return 0;
	}
	return -1;
}

int cmd_merge(int argc, char **argv)
{
	static const struct option own[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "to", required_argument, NULL, OPT_TO },
		{ "weight", required_argument, NULL, OPT_WEIGHT },
		{ "pid", no_argument, NULL, OPT_PID },
		{ "tid", no_argument, NULL, OPT_TID },
		{ "annotate", no_argument, NULL, OPT_ANNOTATE },
		{ "title", required_argument, NULL, OPT_TITLE },
		{ "from", required_argument, NULL, OPT_FROM },
		{ "sample-type", required_argument, NULL, OPT_SAMPLE_TYPE },
		{ "help", no_argument, NULL, 'h' },
	};
	struct option opts[64];
	struct run_opts ro = RUN_OPTS_INIT;
	struct folded_opts fopts = { 0 };
	struct profin_opts pin = { 0 };
	struct merge m = { 0 };
	struct outfile of = { .fd = -1 };
	const char *out = NULL, *to = NULL, *title = NULL;
	struct err err;
	size_t n = 0, i;
	int c, rc = 0;

	for (i = 0; i < ARRAY_SIZE(own); i++)
		opts[n++] = own[i];
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
		case OPT_WEIGHT:
			if (!strcmp(optarg, "period"))
				fopts.period = true;
			else if (strcmp(optarg, "samples"))
				return cmd_usage_error(merge_usage,
					"merge: --weight is samples or period, "
					"not '%s'", optarg);
			break;
		case OPT_PID:
			fopts.pid = true;
			break;
		case OPT_TID:
			fopts.tid = true;
			break;
		case OPT_ANNOTATE:
			fopts.annotate = true;
			break;
		case OPT_TITLE:
			title = optarg;
			break;
		case OPT_FROM:
		case OPT_SAMPLE_TYPE:
			if (profin_option(&pin, c == OPT_FROM, optarg, "merge",
					  merge_usage) < 0)
				return EXIT_USAGE;
			break;
		case 'h':
			cmd_print_usage(stdout, merge_usage);
			cmd_print_usage_except(stdout, run_usage_lines,
					       merge_not_taken);
			printf("  -h, --help              "
			       "show this help and exit\n");
			return EXIT_OK;
		default:
			if (run_option_or_usage(&ro, c, optarg, "merge", merge_usage,
						argv[optind - 1]))
				return EXIT_USAGE;
			break;
		}
	}
	if (ro.stats_json || ro.min_coverage >= 0)
		return cmd_usage_error(merge_usage, "merge: --stats-json and "
				       "--min-coverage are convert's and "
				       "stats'");
	if (optind >= argc)
		return cmd_usage_error(merge_usage, "merge: expected inputs");
	if (!out)
		return cmd_usage_error(merge_usage,
				       "merge: no output (-o FILE or -o -)");
	if (merge_format_of(to, out, &m.fmt) < 0)
		return cmd_usage_error(merge_usage,
				       "merge: unsupported output format '%s' "
				       "(folded, pprof or svg)", to ? to : out);
	if (outfile_is_input("merge", "output", out, argv + optind,
			     argc - optind))
		return EXIT_USAGE;
	/* pprof inputs only, pprof output: every sample type (merge_info) */
	if (m.fmt == MERGE_PPROF && !pin.sample_type) {
		for (c = optind; c < argc &&
		     profin_kind(&pin, argv[c]) == PROFILE_PPROF; c++)
			;
		m.all_types = pin.all_types = c == argc;
	}
	if (m.fmt == MERGE_FOLDED)
		m.fo = folded_new(&fopts);
	else if (m.fmt == MERGE_PPROF)
		m.pp = pprof_new(&(struct pprof_opts){ .period = fopts.period });
	else
		m.svg = svg_new(&(struct svg_opts){ .period = fopts.period,
						     .title = title });
	if (!m.fo && !m.pp && !m.svg) {
		cmd_error("out of memory");
		return EXIT_BAD;
	}
	pin.on_info = merge_info;
	ro.sinks_ctx = m.fo;    /* -j workers fold their own samples */
	rc = outfile_open(&of, out);
	for (c = optind; rc == 0 && c < argc; c++) {
		/* the last input's symbol locations are gone */
		if (m.fo)
			folded_forget_locs(m.fo);
		if (m.pp)
			pprof_forget_locs(m.pp);
		rc = profin_load(&pin, &ro, argv[c], merge_add, &m,
				 m.fo ? &run_folded_sinks : NULL);
	}
	if (rc == 0 &&
	    ((m.fo && folded_write(m.fo, of.fd, &err) < 0) ||
	     (m.pp && pprof_write(m.pp, of.fd, &err) < 0) ||
	     (m.svg && svg_write(m.svg, of.fd, &err) < 0))) {
		cmd_report_err(out, &err);
		rc = -1;
	}
	if (of.fd >= 0 && outfile_close(&of, rc == 0) < 0)
		rc = -1;
	folded_free(m.fo);
	pprof_free(m.pp);
	svg_free(m.svg);
	strbuf_release(&m.types);
	strbuf_release(&m.cur);
	return rc == 0 ? EXIT_OK : EXIT_BAD;
}
