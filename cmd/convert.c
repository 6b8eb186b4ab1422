/*
 * convert.c - `restack convert`: unwind a capture and write a profile.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/report.h"
#include "cmd/run.h"
#include "common/strbuf.h"
#include "formats/folded.h"
#include "formats/script.h"

static const char *const convert_usage[] = {
	"usage: restack convert [options] <input> -o <output>",
	"       restack convert [options] --outdir DIR <input>...",
	"",
	"  -o, --output FILE       write here ('-' = standard output)",
	"      --outdir DIR        convert every input into DIR (named after",
	"                          the input, '.data' dropped, the format's",
	"                          extension added); one failed input does",
	"                          not stop the others",
	"      --to FORMAT         folded or script (default: from the",
	"                          output's name: .folded, .txt, .script)",
	"      --pid               first frame 'comm-pid' (folded)",
	"      --tid               first frame 'comm-pid/tid' (folded)",
	"      --weight W          samples (default) or period",
	"      --annotate          suffix frames: _[k] kernel, _[i] inlined,",
	"                          _[j] JIT code; else how the frame was",
	"                          found: _[fp] frame pointer, _[s] stitched,",
	"                          _[scan] stack scan, _[stub] PLT rule",
	"      --stats             print the unwinding summary to stderr",
	NULL,
};

enum {
	OPT_TO = 512,
	OPT_PID,
	OPT_TID,
	OPT_WEIGHT,
	OPT_ANNOTATE,
	OPT_STATS,
	OPT_OUTDIR,
};

static void convert_help(FILE *f)
{
	cmd_print_usage(f, convert_usage);
	cmd_print_usage(f, run_usage_lines);
	fprintf(f, "  -h, --help              show this help and exit\n");
}

enum convert_format {
	FMT_FOLDED,
	FMT_SCRIPT,
};

/* Where the profile goes: a temporary file renamed on success, or stdout. */
struct convert_out {
	enum convert_format fmt;
	const char *path;
	char tmp[PATH_MAX];
	int fd;
	struct folded *fo;
	struct strbuf sb;
};

static int convert_flush(struct convert_out *o)
{
	size_t off = 0;

	if (o->sb.oom) {
		cmd_error("out of memory");
		return -1;
	}
	while (off < o->sb.len) {
		ssize_t n = write(o->fd, o->sb.buf + off, o->sb.len - off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			cmd_error("cannot write '%s': %s", o->path,
				  strerror(errno));
			return -1;
		}
		off += (size_t)n;
	}
	strbuf_reset(&o->sb);
	return 0;
}

static int convert_add(void *ctx, const struct rsample *s)
{
	struct convert_out *o = ctx;

	if (o->fmt == FMT_FOLDED)
		return folded_add(o->fo, s);
	script_format_sample(s, &o->sb);
	if (o->sb.len >= 65536 && convert_flush(o) < 0)
		return -1;
	return 0;
}

static int convert_open(struct convert_out *o)
{
	if (!strcmp(o->path, "-")) {
		o->fd = STDOUT_FILENO;
		return 0;
	}
	if (snprintf(o->tmp, sizeof(o->tmp), "%s.tmp.%d", o->path,
		     (int)getpid()) >= (int)sizeof(o->tmp)) {
		cmd_error("output name too long: '%s'", o->path);
		return -1;
	}
	o->fd = open(o->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (o->fd < 0) {
		cmd_error("cannot create '%s': %s", o->tmp, strerror(errno));
		return -1;
	}
	return 0;
}

/* Finishes the output; on failure (ok false) removes the partial file. */
static int convert_close(struct convert_out *o, bool ok)
{
	struct err err;

	if (ok && o->fmt == FMT_FOLDED && folded_write(o->fo, o->fd, &err) < 0) {
		cmd_report_err(o->path, &err);
		ok = false;
	}
	if (ok && convert_flush(o) < 0)
		ok = false;
	if (o->fd >= 0 && o->fd != STDOUT_FILENO) {
		if (close(o->fd) < 0 && ok) {
			cmd_error("cannot write '%s': %s", o->path,
				  strerror(errno));
			ok = false;
		}
		if (ok && rename(o->tmp, o->path) < 0) {
			cmd_error("cannot write '%s': %s", o->path,
				  strerror(errno));
			ok = false;
		}
		if (!ok)
			unlink(o->tmp);
	}
	o->fd = -1;
	return ok ? 0 : -1;
}

/* The format named by --to, or else by the output's extension. */
static int convert_pick_format(const char *to, const char *out,
			       enum convert_format *fmt)
{
	const char *dot = strrchr(out, '.');

	if (to) {
		if (!strcmp(to, "folded"))
			*fmt = FMT_FOLDED;
		else if (!strcmp(to, "script"))
			*fmt = FMT_SCRIPT;
		else
			return -1;
		return 0;
	}
	*fmt = FMT_FOLDED;
	if (!strcmp(out, "-") || !dot || !strcmp(dot, ".folded") ||
	    !strcmp(dot, ".txt") || !strcmp(dot, ".collapsed") ||
	    !strcmp(dot, ".stacks"))
		return 0;
	if (!strcmp(dot, ".script")) {
		*fmt = FMT_SCRIPT;
		return 0;
	}
	return -1;
}

/* The extension --outdir gives outputs of format fmt. */
static const char *convert_ext(enum convert_format fmt)
{
	switch (fmt) {
	case FMT_SCRIPT:
		return ".script";
	case FMT_FOLDED:
	default:
		return ".folded";
	}
}

/* What every input of one command shares. */
struct convert_cfg {
	const struct run_opts *ro;
	const struct folded_opts *fopts;
	bool stats;
	struct report rep;
};

/*
 * Converts in to out; adds the outcome to the report.  Returns the
 * input's status (errors were printed).
 */
static enum report_status convert_one(struct convert_cfg *cfg,
				      const char *in, const char *out,
				      enum convert_format fmt)
{
	struct convert_out co = { .fd = -1, .fmt = fmt, .path = out };
	enum report_status status = REPORT_FAILED;
	struct report_timing t;
	struct run run;
	int rc;

	report_timing_start(&t);
	strbuf_init(&co.sb);
	co.fo = folded_new(cfg->fopts);
	if (!co.fo) {
		cmd_error("out of memory");
		report_add(&cfg->rep, in, out, status, NULL, NULL);
		return status;
	}
	rc = convert_open(&co);
	if (rc == 0) {
		/* Script output keeps time order; folded stacks are summed. */
		rc = run_capture(&run, cfg->ro, in,
				 fmt == FMT_SCRIPT ? RUN_ORDERED : 0,
				 convert_add, &co);
		if (rc == 0 && cfg->stats && !cfg->ro->quiet)
			run_print_stats(&run, stderr);
		rc = convert_close(&co, rc == 0);
		if (rc == 0)
			status = report_judge(&cfg->rep, &run);
		report_timing_end(&t);
		report_add(&cfg->rep, in, out, status, &run, &t);
		run_free(&run);
	} else {
		report_add(&cfg->rep, in, out, status, NULL, NULL);
	}
	if (status == REPORT_GATE && !cfg->ro->quiet)
		cmd_error("%s: %.2f%% of samples reached their thread's root, "
			  "below --min-coverage %.2f%%", in,
			  report_coverage(&run), cfg->ro->min_coverage);
	folded_free(co.fo);
	strbuf_release(&co.sb);
	return status;
}

/* outdir/NAME.EXT for input in: NAME is in's last component less .data. */
static char *convert_outdir_name(const char *outdir, const char *in,
				 enum convert_format fmt)
{
	const char *base = strrchr(in, '/');
	size_t len;
	struct strbuf sb = STRBUF_INIT;

	base = base ? base + 1 : in;
	len = strlen(base);
	if (len > 5 && !strcmp(base + len - 5, ".data"))
		len -= 5;
	strbuf_addf(&sb, "%s/%.*s%s", outdir, (int)len, base,
		    convert_ext(fmt));
	if (sb.oom) {
		strbuf_release(&sb);
		return NULL;
	}
	return sb.buf;
}

/* Converts every input into outdir; returns the exit status. */
static int convert_batch(struct convert_cfg *cfg, const char *outdir,
			 char **inputs, int nr, enum convert_format fmt)
{
	char **outs = calloc((size_t)nr, sizeof(*outs));
	enum report_status *st = calloc((size_t)nr, sizeof(*st));
	int i, j, status = EXIT_OK;

	if (!outs || !st) {
		cmd_error("out of memory");
		return EXIT_BAD;
	}
	for (i = 0; i < nr; i++) {
		outs[i] = convert_outdir_name(outdir, inputs[i], fmt);
		if (!outs[i]) {
			cmd_error("out of memory");
			status = EXIT_BAD;
			goto out;
		}
		if (!strcmp(inputs[i], "-")) {
			status = cmd_usage_error(convert_usage,
				"convert: --outdir needs named inputs, not '-'");
			goto out;
		}
		for (j = 0; j < i; j++)
			if (!strcmp(outs[i], outs[j])) {
				status = cmd_usage_error(convert_usage,
					"convert: '%s' and '%s' would both be "
					"written to '%s'", inputs[j],
					inputs[i], outs[i]);
				goto out;
			}
	}
	if (mkdir(outdir, 0777) < 0 && errno != EEXIST) {
		cmd_error("cannot create '%s': %s", outdir, strerror(errno));
		status = EXIT_BAD;
		goto out;
	}
	for (i = 0; i < nr; i++) {
		st[i] = convert_one(cfg, inputs[i], outs[i], fmt);
		if (st[i] == REPORT_FAILED)
			status = EXIT_BAD;
		else if (st[i] == REPORT_GATE && status == EXIT_OK)
			status = EXIT_GATE;
	}
	if (!cfg->ro->quiet) {
		cmd_error("converted %u of %u inputs into %s%s", cfg->rep.nr_ok +
			  cfg->rep.nr_gate, cfg->rep.nr, outdir,
			  cfg->rep.nr_failed ? "; failed:" : "");
		for (i = 0; i < nr && cfg->rep.nr_failed; i++)
			if (st[i] == REPORT_FAILED)
				fprintf(stderr, "  %s\n", inputs[i]);
	}
out:
	for (i = 0; outs && i < nr; i++)
		free(outs[i]);
	free(outs);
	free(st);
	return status;
}

int cmd_convert(int argc, char **argv)
{
	struct option opts[64];
	static const struct option own[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "outdir", required_argument, NULL, OPT_OUTDIR },
		{ "to", required_argument, NULL, OPT_TO },
		{ "pid", no_argument, NULL, OPT_PID },
		{ "tid", no_argument, NULL, OPT_TID },
		{ "weight", required_argument, NULL, OPT_WEIGHT },
		{ "annotate", no_argument, NULL, OPT_ANNOTATE },
		{ "stats", no_argument, NULL, OPT_STATS },
		{ "help", no_argument, NULL, 'h' },
	};
	struct run_opts ro = RUN_OPTS_INIT;
	struct folded_opts fopts = { 0 };
	const char *out = NULL, *to = NULL, *outdir = NULL;
	struct convert_cfg cfg = { .ro = &ro, .fopts = &fopts };
	enum convert_format fmt;
	bool stats = false;
	size_t n = 0, i;
	int c, rc;

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
		case OPT_OUTDIR:
			outdir = optarg;
			break;
		case OPT_TO:
			to = optarg;
			break;
		case OPT_PID:
			fopts.pid = true;
			break;
		case OPT_TID:
			fopts.tid = true;
			break;
		case OPT_WEIGHT:
			if (!strcmp(optarg, "period"))
				fopts.period = true;
			else if (strcmp(optarg, "samples"))
				return cmd_usage_error(convert_usage,
					"convert: --weight is samples or period, "
					"not '%s'", optarg);
			break;
		case OPT_ANNOTATE:
			fopts.annotate = true;
			break;
		case OPT_STATS:
			stats = true;
			break;
		case 'h':
			convert_help(stdout);
			return EXIT_OK;
		case '?':
		case ':':
			return cmd_usage_error(convert_usage,
				"convert: bad or incomplete option '%s'",
				argv[optind - 1]);
		default:
			rc = run_parse_option(&ro, c, optarg);
			if (rc < 0)
				return EXIT_USAGE;
			if (rc == 0)
				return cmd_usage_error(convert_usage,
					"convert: unknown option '%s'",
					argv[optind - 1]);
			break;
		}
	}
	if (out && outdir)
		return cmd_usage_error(convert_usage,
				       "convert: -o and --outdir exclude each "
				       "other");
	if (optind >= argc || (!outdir && optind != argc - 1))
		return cmd_usage_error(convert_usage,
				       outdir ? "convert: expected inputs" :
				       "convert: expected one input (or "
				       "--outdir DIR for several)");
	if (!out && !outdir)
		return cmd_usage_error(convert_usage,
				       "convert: no output (-o FILE or -o -)");
	if (convert_pick_format(to, out ? out : "", &fmt) < 0)
		return cmd_usage_error(convert_usage,
			"convert: unsupported output format '%s' (folded or "
			"script)", to ? to : out ? out : "");
	cfg.stats = stats;
	report_init(&cfg.rep, ro.min_coverage, run_jobs(&ro));
	if (outdir) {
		rc = convert_batch(&cfg, outdir, argv + optind, argc - optind,
				   fmt);
	} else {
		enum report_status st = convert_one(&cfg, argv[optind], out,
						    fmt);

		rc = st == REPORT_FAILED ? EXIT_BAD :
		     st == REPORT_GATE ? EXIT_GATE : EXIT_OK;
	}
	if (ro.stats_json && rc != EXIT_USAGE &&
	    report_write(&cfg.rep, ro.stats_json) < 0 && rc == EXIT_OK)
		rc = EXIT_BAD;
	report_release(&cfg.rep);
	return rc;
}
