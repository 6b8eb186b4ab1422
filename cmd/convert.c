/*
 * convert.c - `restack convert`: unwind a capture and write a profile.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/run.h"
#include "common/strbuf.h"
#include "formats/folded.h"
#include "formats/perfdata_write.h"
#include "formats/script.h"
#include "formats/syscap_write.h"

static const char *const convert_usage[] = {
	"usage: restack convert [options] <input> -o <output>",
	"",
	"  -o, --output FILE       write here ('-' = standard output)",
	"      --to FORMAT         folded, script, perf or sysprof (default:",
	"                          from the output's name: .folded, .txt,",
	"                          .script, .data, .syscap; perf to '-' is",
	"                          pipe mode)",
	"      --sysprof-version V sysprof output for this sysprof: 3.46 (no",
	"                          build-ids after MAP names) or a major",
	"                          version from 45; default: frame types",
	"                          1-15, which 3.46 reads, with build-ids",
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
	OPT_SYSPROF_VERSION,
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
	FMT_PERF,
	FMT_SYSPROF,
};

/* Where the profile goes: a temporary file renamed on success, or stdout. */
struct convert_out {
	enum convert_format fmt;
	const char *path;
	char tmp[PATH_MAX];
	int fd;
	struct folded *fo;
	struct strbuf sb;
	struct perfdata_writer *pw;  /* FMT_PERF */
	struct syscap_writer *sw;    /* FMT_SYSPROF */
	struct run *run;
	bool text_done;              /* perfdata_writer_set_kernel_text() */
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
	if (o->fmt == FMT_PERF || o->fmt == FMT_SYSPROF)
		return 0;   /* written with its record, convert_record() */
	script_format_sample(s, &o->sb);
	if (o->sb.len >= 65536 && convert_flush(o) < 0)
		return -1;
	return 0;
}

/* perf.data output: the build-id of a module a stack passes through. */
static unsigned convert_build_id(void *ctx, const char *module, uint8_t *bid)
{
	struct convert_out *o = ctx;
	const struct module *m;

	for (m = o->run->res.mc.all; m; m = m->next) {
		if (m->build_id_size && !strcmp(m->path, module)) {
			memcpy(bid, m->build_id, m->build_id_size);
			return m->build_id_size;
		}
	}
	return 0;
}

/* The kernel's _text address from a kallsyms file, or 0. */
static uint64_t convert_kernel_text(const char *kallsyms)
{
	char line[512];
	uint64_t text = 0;
	FILE *f = kallsyms ? fopen(kallsyms, "re") : NULL;

	while (f && fgets(line, sizeof(line), f)) {
		char *end;
		uint64_t a = strtoull(line, &end, 16);

		if (!strcmp(end, " T _text\n")) {
			text = a;
			break;
		}
	}
	if (f)
		fclose(f);
	return text;
}

/* sysprof output: the build-id of a mapped file, if the input has it. */
static unsigned convert_map_build_id(void *ctx, const char *path,
				     uint8_t *bid)
{
	struct convert_out *o = ctx;
	const struct perfdata_info *in = source_info(o->run->rd);
	unsigned i;

	for (i = 0; i < in->nr_build_ids; i++) {
		const struct perfdata_build_id *b = &in->build_ids[i];

		if (b->size <= 20 && !strcmp(b->filename, path)) {
			memcpy(bid, b->build_id, b->size);
			return b->size;
		}
	}
	return convert_build_id(ctx, path, bid);
}

/* perf.data and sysprof output: every input record, with its resolved
 * sample. */
static int convert_record(void *ctx, const struct event *ev,
			  const struct rsample *rs)
{
	struct convert_out *o = ctx;

	if (o->sw) {
		if (syscap_writer_event(o->sw, source_info(o->run->rd), ev,
					 rs) < 0) {
			cmd_report_err(o->path, syscap_writer_err(o->sw));
			return -1;
		}
		return 0;
	}
	if (!o->text_done && o->run->res_ready) {
		o->text_done = true;
		perfdata_writer_set_kernel_text(o->pw, convert_kernel_text(
						       o->run->kallsyms_used));
	}
	if (perfdata_writer_event(o->pw, source_info(o->run->rd), ev, rs) <
	    0) {
		cmd_report_err(o->path, perfdata_writer_err(o->pw));
		return -1;
	}
	return 0;
}

static int convert_writer_finish(struct convert_out *o, bool quiet)
{
	const struct perfdata_write_stats *st;

	if (o->sw) {
		const struct syscap_write_stats *ss;

		if (syscap_writer_finish(o->sw) < 0) {
			cmd_report_err(o->path, syscap_writer_err(o->sw));
			return -1;
		}
		ss = syscap_writer_stats(o->sw);
		if (ss->cut_samples && !quiet)
			cmd_error("warning: %s: %llu stacks cut to sysprof's "
				  "8187 addresses per sample", o->path,
				  (unsigned long long)ss->cut_samples);
		return 0;
	}

	if (perfdata_writer_finish(o->pw, source_info(o->run->rd)) < 0) {
		cmd_report_err(o->path, perfdata_writer_err(o->pw));
		return -1;
	}
	st = perfdata_writer_stats(o->pw);
	if (st->dropped && !quiet)
		cmd_error("note: %s: %llu AUXTRACE records not carried over",
			  o->path, (unsigned long long)st->dropped);
	if (st->cut_callchains && !quiet)
		cmd_error("warning: %s: %llu callchains cut to fit a record",
			  o->path, (unsigned long long)st->cut_callchains);
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
		else if (!strcmp(to, "perf"))
			*fmt = FMT_PERF;
		else if (!strcmp(to, "sysprof"))
			*fmt = FMT_SYSPROF;
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
	if (!strcmp(dot, ".data")) {
		*fmt = FMT_PERF;
		return 0;
	}
	if (!strcmp(dot, ".syscap")) {
		*fmt = FMT_SYSPROF;
		return 0;
	}
	return -1;
}

int cmd_convert(int argc, char **argv)
{
	struct option opts[64];
	static const struct option own[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "to", required_argument, NULL, OPT_TO },
		{ "pid", no_argument, NULL, OPT_PID },
		{ "tid", no_argument, NULL, OPT_TID },
		{ "weight", required_argument, NULL, OPT_WEIGHT },
		{ "annotate", no_argument, NULL, OPT_ANNOTATE },
		{ "stats", no_argument, NULL, OPT_STATS },
		{ "sysprof-version", required_argument, NULL,
		  OPT_SYSPROF_VERSION },
		{ "help", no_argument, NULL, 'h' },
	};
	struct run_opts ro = { 0 };
	struct folded_opts fopts = { 0 };
	struct syscap_write_opts sopts = { 0 };
	const char *out = NULL, *to = NULL, *in;
	struct convert_out co = { .fd = -1 };
	bool stats = false;
	struct run run;
	size_t n = 0, i;
	int c, rc;

	for (i = 0; i < ARRAY_SIZE(own); i++)
		opts[n++] = own[i];
	for (i = 0; run_long_options[i].name; i++)
		opts[n++] = run_long_options[i];
	memset(&opts[n], 0, sizeof(opts[n]));

	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
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
		case OPT_SYSPROF_VERSION: {
			char *end;
			unsigned long v = strtoul(optarg, &end, 10);

			if (!strcmp(optarg, "3.46") || (!*end && v >= 45 &&
							 v < 1000)) {
				sopts.version = !*end ? (unsigned)v : 3;
				break;
			}
			return cmd_usage_error(convert_usage,
				"convert: --sysprof-version is 3.46 or a major "
				"version from 45, not '%s'", optarg);
		}
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
	if (optind != argc - 1)
		return cmd_usage_error(convert_usage,
				       "convert: expected one input");
	if (!out)
		return cmd_usage_error(convert_usage,
				       "convert: no output (-o FILE or -o -)");
	if (convert_pick_format(to, out, &co.fmt) < 0)
		return cmd_usage_error(convert_usage,
			"convert: unsupported output format '%s' (folded, "
			"script, perf or sysprof)", to ? to : out);
	in = argv[optind];
	co.path = out;
	strbuf_init(&co.sb);
	co.fo = folded_new(&fopts);
	if (!co.fo) {
		cmd_error("out of memory");
		return EXIT_BAD;
	}
	rc = convert_open(&co);
	if (rc == 0 && (co.fmt == FMT_PERF || co.fmt == FMT_SYSPROF)) {
		struct err err;

		co.run = &run;
		if (co.fmt == FMT_PERF)
			co.pw = perfdata_writer_new(co.fd, co.fd == STDOUT_FILENO,
						    in,
						    source_sniff(in) == SOURCE_SYSPROF,
						    convert_build_id, &co, &err);
		else
			co.sw = syscap_writer_new(co.fd, &sopts,
						  convert_map_build_id, &co,
						  &err);
		if (!co.pw && !co.sw) {
			cmd_report_err(out, &err);
			convert_close(&co, false);
			folded_free(co.fo);
			return EXIT_BAD;
		}
		ro.on_record = convert_record;
		ro.record_ctx = &co;
	}
	if (rc == 0) {
		/* Script and perf output keep time order; folded stacks are
		 * summed. */
		rc = run_capture(&run, &ro, in,
				 co.fmt != FMT_FOLDED ? RUN_ORDERED : 0,
				 convert_add, &co);
		if (rc == 0 && (co.pw || co.sw))
			rc = convert_writer_finish(&co, ro.quiet);
		if (rc == 0 && stats && !ro.quiet)
			run_print_stats(&run, stderr);
		run_free(&run);
		rc = convert_close(&co, rc == 0);
	}
	folded_free(co.fo);
	perfdata_writer_free(co.pw);
	syscap_writer_free(co.sw);
	strbuf_release(&co.sb);
	return rc < 0 ? EXIT_BAD : EXIT_OK;
}
