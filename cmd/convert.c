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
#include "cmd/outfile.h"
#include "cmd/offcpu.h"
#include "cmd/profin.h"
#include "cmd/report.h"
#include "cmd/run.h"
#include "common/mem.h"
#include "common/strbuf.h"
#include "formats/fdout.h"
#include "formats/firefox.h"
#include "formats/folded.h"
#include "formats/perfdata_write.h"
#include "formats/pprof.h"
#include "formats/script.h"
#include "formats/speedscope.h"
#include "formats/svg.h"
#include "formats/syscap_write.h"

static const char *const convert_usage[] = {
	"usage: restack convert [options] <input> -o <output>",
	"       restack convert [options] --outdir DIR <input>...",
	"",
	"  -o, --output FILE       write here ('-' = standard output)",
	"      --outdir DIR        convert every input into DIR (named after",
	"                          the input, '.data' dropped, the format's",
	"                          extension added); one failed input does",
	"                          not stop the others",
	"      --split WHAT        with --outdir: one output per thread or",
	"                          process (WHAT), named COMM-PID-TID.EXT or",
	"                          COMM-PID.EXT (in DIR/NAME/ for several",
	"                          inputs)",
	"      --to FORMAT         folded, script, pprof, speedscope, firefox,",
	"                          svg, perf or sysprof (default: from the",
	"                          output's name: .folded, .txt, .script,",
	"                          .pb.gz, .speedscope.json, .json.gz,",
	"                          .firefox.json, .svg, .data, .syscap;",
	"                          perf to '-' is pipe mode; firefox is",
	"                          gzip-compressed unless the name ends .json)",
	"      --sysprof-version V sysprof output for this sysprof: 3.46 (no",
	"                          build-ids after MAP names) or a major",
	"                          version from 45; default: frame types",
	"                          1-15, which 3.46 reads, with build-ids",
	"      --pid               first frame 'comm-pid' (folded; with a",
	"                          value, --pid=LIST, a filter: see below)",
	"      --tid               first frame 'comm-pid/tid' (folded; with a",
	"                          value, --tid=LIST, a filter)",
	"      --weight W          samples (default) or period",
	"      --annotate          suffix frames: _[k] kernel, _[i] inlined,",
	"                          _[j] JIT code; else how the frame was",
	"                          found: _[fp] frame pointer, _[s] stitched,",
	"                          _[scan] stack scan, _[stub] PLT rule,",
	"                          _[go] Go function table's SP delta",
	"      --title TEXT        flame graph heading (svg; default",
	"                          'Flame Graph'), profile name (speedscope)",
	"      --stats             print the unwinding summary to stderr",
	"      --from KIND         read inputs as folded, pprof, chrome or",
	"                          capture",
	"                          (default: told by their contents)",
	"      --sample-type NAME  pprof input: the sample type whose values",
	"                          are the weights (default: the profile's",
	"                          default, else its last; pprof output of",
	"                          a pprof input without it keeps every",
	"                          type)",
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
	OPT_TITLE,
	OPT_SYSPROF_VERSION,
	OPT_SPLIT,
	OPT_FROM,
	OPT_SAMPLE_TYPE,
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
	FMT_PPROF,
	FMT_SVG,
	FMT_SPEEDSCOPE,
	FMT_FIREFOX,
	FMT_PERF,
	FMT_SYSPROF,
};

/* --to names and output name endings, first match wins. */
static const struct {
	const char *name;
	enum convert_format fmt;
	const char *ends[4];
} convert_formats[] = {
	{ "folded", FMT_FOLDED, { ".folded", ".txt", ".collapsed", ".stacks" } },
	{ "script", FMT_SCRIPT, { ".script" } },
	{ "pprof", FMT_PPROF, { ".pb.gz", ".pprof" } },
	{ "svg", FMT_SVG, { ".svg" } },
	{ "speedscope", FMT_SPEEDSCOPE, { ".speedscope.json" } },
	{ "firefox", FMT_FIREFOX, { ".json.gz", ".firefox.json" } },
	{ "perf", FMT_PERF, { ".data" } },
	{ "sysprof", FMT_SYSPROF, { ".syscap" } },
};

/* Where the profile goes (cmd/outfile.h) and its writer. */
struct convert_out {
	enum convert_format fmt;
	const char *path;
	struct outfile file;
	int fd;                      /* file.fd */
	struct folded *fo;
	const struct folded_opts *fopts;
	struct pprof *pp;
	struct svg *svg;
	struct speedscope *ss;
	struct firefox *ff;
	struct strbuf sb;
	struct perfdata_writer *pw;  /* FMT_PERF */
	struct syscap_writer *sw;    /* FMT_SYSPROF */
	struct run *run;
	const char *profile;         /* pprof_opts.profile */
	bool text_done;              /* perfdata_writer_set_kernel_text() */
	bool counts;                 /* a profile input to firefox output
				      * weighted by samples: its counts are
				      * the weights */
	bool all_types;              /* pprof output of a pprof input:
				      * every sample type... */
	const struct profile_info *all; /* ... these values */
	bool sw_started;             /* the sysprof writer had an event */
	bool in_place;               /* written where it is, as it comes */
	const struct perfdata_info *in; /* FMT_SYSPROF: the input's, as the
				      * record being written has it */
};

static int convert_flush(struct convert_out *o)
{
	struct err err;

	if (fdout_flush(o->fd, &o->sb, "the profile", &err) < 0) {
		cmd_report_err(o->path, &err);
		return -1;
	}
	return 0;
}

static int convert_add(void *ctx, const struct rsample *s)
{
	struct convert_out *o = ctx;

	if (o->fmt == FMT_FOLDED)
		return folded_add(o->fo, s);
	if (o->fmt == FMT_PPROF && o->all)
		return pprof_add_values(o->pp, s, o->all->values);
	if (o->fmt == FMT_PPROF)
		return pprof_add(o->pp, s);
	if (o->fmt == FMT_SVG)
		return svg_add(o->svg, s);
	if (o->fmt == FMT_SPEEDSCOPE)
		return speedscope_add(o->ss, s);
	if (o->fmt == FMT_FIREFOX && o->counts) {
		struct rsample c = *s;

		c.period = rsample_count(s);
		return firefox_add(o->ff, &c);
	}
	if (o->fmt == FMT_FIREFOX)
		return firefox_add(o->ff, s);
	if (o->fmt == FMT_PERF || o->fmt == FMT_SYSPROF)
		return 0;   /* written with its record, convert_record() */
	script_format_sample(s, &o->sb);
	if (o->sb.len >= 65536 && convert_flush(o) < 0)
		return -1;
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

/*
 * sysprof output: the build-id of a mapped file, if the input has it or a
 * worker read it from the file.
 */
static unsigned convert_map_build_id(void *ctx, const char *path,
				     uint8_t *bid)
{
	struct convert_out *o = ctx;
	const struct perfdata_info *in = o->in;
	unsigned i;

	for (i = 0; in && i < in->nr_build_ids; i++) {
		const struct perfdata_build_id *b = &in->build_ids[i];

		if (b->size <= 20 && !strcmp(b->filename, path)) {
			memcpy(bid, b->build_id, b->size);
			return b->size;
		}
	}
	return run_module_build_id(o->run, path, bid);
}

/*
 * A stream's reader waits for input: what is written so far goes out
 * (an error comes again at the next write).
 */
static void convert_idle(void *ctx)
{
	struct convert_out *o = ctx;

	(void)syscap_writer_flush(o->sw);
}

/* perf.data and sysprof output: every input record, with its resolved
 * sample. */
static int convert_record(void *ctx, const struct perfdata_info *in,
			  const struct event *ev, const struct rsample *rs)
{
	struct convert_out *o = ctx;

	if (o->sw && !o->sw_started) {
		o->sw_started = true;
		/* a sysprof input's frames are carried over as they are */
		if (source_format(o->run->rd) == SOURCE_SYSPROF && !in->swap)
			syscap_writer_passthrough(o->sw);
		/* a stream (one reader, this thread's) flushes as it waits */
		if (!o->run->sharded)
			source_set_idle(o->run->rd, convert_idle, o);
	}
	if (o->sw) {
		o->in = in;
		if (syscap_writer_event(o->sw, in, ev, rs) < 0) {
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
	if (perfdata_writer_event(o->pw, in, ev, rs) < 0) {
		cmd_report_err(o->path, perfdata_writer_err(o->pw));
		return -1;
	}
	return 0;
}

/* The last part of a path ("-" for standard input). */
static const char *convert_basename(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && slash[1] ? slash + 1 : path;
}

/* Firefox output: what the capture says about itself.  0, or -1. */
static int convert_firefox_meta(struct convert_out *o, struct run *run,
				const char *in)
{
	const struct perfdata_info *info = source_info(run->rd);
	struct firefox_meta m = { .name = convert_basename(in) };

	if (info) {
		m.arch = info->arch;
		m.osrelease = info->osrelease;
		m.cpu = info->cpudesc;
		m.cpus = info->has_nrcpus ? info->nr_cpus_online : 0;
		if (run->event_attr >= 0 &&
		    (unsigned)run->event_attr < info->nr_attrs) {
			const struct event_attr *a =
				&info->attrs[run->event_attr];
			size_t n = a->name ? strcspn(a->name, ":") : 0;

			bool clock = (n == 9 && !strncmp(a->name, "cpu-clock",
							 n)) ||
				     (n == 10 && !strncmp(a->name, "task-clock",
							  n));

			/* a frequency, or a clock's period in ns (sysprof's
			 * period 1 is not: the writer estimates it then) */
			if (a->freq && a->sample_period)
				m.interval_ms = 1000.0 /
						(double)a->sample_period;
			else if (clock && a->sample_period >= 1000)
				m.interval_ms = (double)a->sample_period / 1e6;
			/* not with off-CPU intervals among the periods */
			m.cpu_ns = clock && !run->opts->profile &&
				   (a->freq || a->sample_period >= 1000);
		}
	}
	if (firefox_set_meta(o->ff, &m) < 0) {
		cmd_error("out of memory");
		return -1;
	}
	return 0;
}

/*
 * Firefox output (run_event_fn): the threads' starts and ends and the lost
 * records, as the run reads them.  --time's ranges apply to them (the
 * threads are the samples').  Runs on a worker's thread with -j > 1: it
 * touches the writer's events alone (firefox_add_event()).
 */
static int convert_firefox_event(void *ctx, const struct event *ev)
{
	struct convert_out *o = ctx;
	enum firefox_event kind;
	uint64_t count = 0;

	if (ev->time == EVENT_NO_TIME)
		return 0;
	if (ev->type == EVENT_FORK) {
		kind = FIREFOX_THREAD_START;
	} else if (ev->type == EVENT_EXIT) {
		kind = FIREFOX_THREAD_END;
	} else if (ev->type == EVENT_LOST) {
		kind = ev->lost.samples ? FIREFOX_LOST_SAMPLES :
					  FIREFOX_LOST_RECORDS;
		count = ev->lost.lost;
	} else {
		return 0;
	}
	if (!sfilter_keep_time(&o->run->filter, ev->time))
		return 0;
	return firefox_add_event(o->ff, kind, ev->pid, ev->tid, ev->time,
				 count);
}

static int convert_writer_finish(struct convert_out *o, bool quiet)
{
	const struct perfdata_write_stats *st;

	if (o->sw) {
		const struct syscap_write_stats *ss;
		const char *ks = NULL;
		size_t klen = 0, kmap = 0;
		int rc = 0;

		/* The kernel symbols travel with the capture. */
		if (o->run->kallsyms_used && syscap_writer_has_kernel(o->sw))
			ks = mem_read_file(o->run->kallsyms_used, SIZE_MAX,
					   &klen, &kmap);
		if (ks) {
			rc = syscap_writer_kallsyms(o->sw, ks, klen);
			mem_unmap((void *)ks, kmap);
		}
		if (rc < 0 || syscap_writer_finish(o->sw) < 0) {
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
	int rc = o->in_place ? outfile_open_in_place(&o->file, o->path) :
			       outfile_open(&o->file, o->path);

	o->fd = o->file.fd;
	return rc;
}

/* Finishes the output; on failure (ok false) removes the partial file. */
static int convert_close(struct convert_out *o, bool ok)
{
	struct err err;

	if (ok && ((o->fmt == FMT_FOLDED &&
		    folded_write(o->fo, o->fd, &err) < 0) ||
		   (o->fmt == FMT_PPROF && pprof_write(o->pp, o->fd, &err) < 0) ||
		   (o->fmt == FMT_SVG && svg_write(o->svg, o->fd, &err) < 0) ||
		   (o->fmt == FMT_SPEEDSCOPE &&
		    speedscope_write(o->ss, o->fd, &err) < 0) ||
		   (o->fmt == FMT_FIREFOX &&
		    firefox_write(o->ff, o->fd, &err) < 0))) {
		cmd_report_err(o->path, &err);
		ok = false;
	}
	if (ok && convert_flush(o) < 0)
		ok = false;
	o->fd = -1;
	return outfile_close(&o->file, ok);
}

/* Makes the writer of o->fmt (script output needs none).  0, or -1. */
static int convert_writer_new(struct convert_out *o,
			      const struct folded_opts *fopts,
			      const char *title, const char *in)
{
	switch (o->fmt) {
	case FMT_FOLDED:
		o->fopts = fopts;
		o->fo = folded_new(fopts);
		return o->fo ? 0 : -1;
	case FMT_PPROF:
		o->pp = pprof_new(&(struct pprof_opts){
			.period = fopts->period, .profile = o->profile });
		return o->pp ? 0 : -1;
	case FMT_SVG:
		o->svg = svg_new(&(struct svg_opts){
			.period = fopts->period, .title = title });
		return o->svg ? 0 : -1;
	case FMT_SPEEDSCOPE:
		o->ss = speedscope_new(&(struct speedscope_opts){
			.period = fopts->period, .ns = o->profile != NULL,
			.name = title ? title : convert_basename(in) });
		return o->ss ? 0 : -1;
	case FMT_FIREFOX: {
		size_t n = strlen(o->path);

		/* gzip unless the name ends ".json" (.firefox.json) */
		o->ff = firefox_new(&(struct firefox_opts){
			.period = fopts->period || o->counts,
			.plain = n > 5 && !strcmp(o->path + n - 5, ".json") });
		return o->ff ? 0 : -1;
	}
	case FMT_SCRIPT:
	case FMT_PERF:
	case FMT_SYSPROF:
		break;   /* perf and sysprof: convert_record_writer() */
	}
	return 0;
}

static void convert_writer_free(struct convert_out *o)
{
	folded_free(o->fo);
	pprof_free(o->pp);
	svg_free(o->svg);
	speedscope_free(o->ss);
	firefox_free(o->ff);
	perfdata_writer_free(o->pw);
	syscap_writer_free(o->sw);
	strbuf_release(&o->sb);
}

/*
 * perf.data and sysprof output carry the input's records over: their
 * writers start on the opened output and take every record (ro's hook).
 * Returns 0, or -1 after printing the error.
 */
static int convert_record_writer(struct convert_out *o,
				 const struct syscap_write_opts *sopts,
				 const char *in, struct run *run,
				 struct run_opts *ro)
{
	struct err err;

	if (o->fmt != FMT_PERF && o->fmt != FMT_SYSPROF)
		return 0;
	o->run = run;
	/* perf.data to '-', a FIFO or a terminal is in pipe mode */
	if (o->fmt == FMT_PERF)
		o->pw = perfdata_writer_new(o->fd, o->fd == STDOUT_FILENO ||
					    !outfile_seekable(&o->file), in,
					    source_sniff(in) == SOURCE_SYSPROF,
					    &err);
	else
		o->sw = syscap_writer_new(o->fd, sopts, convert_map_build_id,
					  o, &err);
	if (!o->pw && !o->sw) {
		cmd_report_err(o->path, &err);
		return -1;
	}
	ro->on_record = convert_record;
	ro->record_ctx = o;
	return 0;
}

/* The format named by --to, or else by the output's extension. */
static int convert_pick_format(const char *to, const char *out,
			       enum convert_format *fmt)
{
	size_t len = strlen(out), i, j;

	*fmt = FMT_FOLDED;
	/* a name without an extension (a dot in a directory's name aside) */
	if (!to && (!strcmp(out, "-") ||
		    !strchr(convert_basename(out), '.')))
		return 0;
	for (i = 0; i < ARRAY_SIZE(convert_formats); i++) {
		if (to) {
			if (!strcmp(to, convert_formats[i].name))
				break;
			continue;
		}
		for (j = 0; j < ARRAY_SIZE(convert_formats[i].ends); j++) {
			const char *e = convert_formats[i].ends[j];

			if (e && len > strlen(e) &&
			    !strcmp(out + len - strlen(e), e))
				goto found;
		}
	}
found:
	if (i == ARRAY_SIZE(convert_formats))
		return -1;
	*fmt = convert_formats[i].fmt;
	return 0;
}

/* The extension --outdir gives outputs of format fmt: its first one. */
static const char *convert_ext(enum convert_format fmt)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(convert_formats); i++)
		if (convert_formats[i].fmt == fmt)
			return convert_formats[i].ends[0];
	return ".folded";
}

enum convert_split {
	SPLIT_NONE,
	SPLIT_THREAD,
	SPLIT_PROCESS,
};

/* What every input of one command shares. */
struct convert_cfg {
	enum convert_split split;       /* --split */
	const struct run_opts *ro;
	const struct folded_opts *fopts;
	const char *title;      /* --title */
	struct syscap_write_opts sopts; /* --sysprof-version */
	bool stats;
	struct report rep;
	struct run_modcaches *modcaches; /* batch mode: modules kept from
					  * input to input, or NULL */
	struct profin_opts pin;  /* --from, --sample-type */
};

/*
 * pprof output of a pprof input: every sample type of it (all_types), or
 * its chosen one (--sample-type).
 */
static int convert_profile_info(void *ctx, const char *path,
				const struct profile_info *info)
{
	struct convert_out *o = ctx;

	(void)path;
	if (o->pp && o->all_types) {
		o->all = info;
		if (pprof_set_types(o->pp, info->nr_types, info->types,
				    info->units, info->default_type) < 0 ||
		    pprof_add_header(o->pp, info->period_type[0],
				     info->period_type[1], info->period,
				     info->time_nanos,
				     info->duration_nanos) < 0) {
			cmd_error("out of memory");
			return -1;
		}
	} else if (o->pp && info->type && info->unit) {
		(void)pprof_set_type(o->pp, info->type, info->unit);
	}
	return 0;
}

/*
 * --profile offcpu|wall: the profile between the run and the writer in
 * *p, its records paired beforehand unless in is "-".  Returns 0, or -1
 * after printing the error.
 */
static int convert_profile(struct run_opts *ro, struct run *run,
			   struct convert_out *co, const char *in,
			   struct offcpu **p)
{
	*p = offcpu_new(ro, run, convert_add, co);
	if (!*p) {
		cmd_error("out of memory");
		return -1;
	}
	if (strcmp(in, "-"))
		return offcpu_prepass(*p, in);
	ro->on_record = offcpu_record;
	ro->record_ctx = *p;
	return 0;
}

/*
 * What of this conversion needs a capture as its input, with its verb
 * (for the usage error when an input is a profile), or NULL: nothing.
 */
static const char *convert_capture_only(const struct convert_cfg *cfg,
					const struct run_opts *ro,
					enum convert_format fmt)
{
	if (fmt == FMT_PERF || fmt == FMT_SYSPROF)
		return "perf and sysprof output need";
	if (ro->profile)
		return "--profile offcpu|wall needs";
	if (cfg->split)
		return "--split needs";
	if (!sfilter_empty(&ro->filter))
		return "--pids, --tids, --comms and --time need";
	return NULL;
}

/*
 * Converts the profile in (of kind) to out; adds the outcome to the
 * report.  Returns the input's status (errors were printed).
 */
static enum report_status convert_profile_input(struct convert_cfg *cfg,
						const char *in, const char *out,
						enum convert_format fmt,
						enum profile_kind kind)
{
	struct convert_out co = { .fd = -1, .fmt = fmt, .path = out,
				  .file = { .fd = -1 },
				  .counts = !cfg->fopts->period };
	enum report_status status = REPORT_FAILED;
	struct report_timing t;
	int rc;

	report_timing_start(&t);
	strbuf_init(&co.sb);
	if (convert_writer_new(&co, cfg->fopts, cfg->title, in) < 0) {
		cmd_error("out of memory");
		rc = -1;
	} else {
		rc = convert_open(&co);
		if (rc == 0) {
			struct profin_opts pin = cfg->pin;

			/* pprof to pprof keeps every sample type unless
			 * --sample-type picks one */
			pin.all_types = kind == PROFILE_PPROF &&
					fmt == FMT_PPROF && !pin.sample_type;
			co.all_types = pin.all_types;
			pin.on_info = convert_profile_info;
			rc = profin_read(&pin, kind, in, cfg->ro->quiet,
					 convert_add, &co);
			rc = convert_close(&co, rc == 0);
		}
	}
	if (rc == 0)
		status = REPORT_OK;
	report_timing_end(&t);
	report_add(&cfg->rep, in, out, status, NULL, &t);
	convert_writer_free(&co);
	return status;
}

/*
 * Converts in to out; adds the outcome to the report.  Returns the
 * input's status (errors were printed).
 */
static enum report_status convert_one(struct convert_cfg *cfg,
				      const char *in, const char *out,
				      enum convert_format fmt)
{
	struct convert_out co = { .fd = -1, .fmt = fmt, .path = out,
				  .file = { .fd = -1 } };
	enum report_status status = REPORT_FAILED;
	struct run_opts ro = *cfg->ro;
	struct report_timing t;
	struct offcpu *prof = NULL;
	enum profile_kind kind = profin_kind(&cfg->pin, in);
	struct run run;
	bool cut;
	int rc;

	if (kind != PROFILE_NONE)
		return convert_profile_input(cfg, in, out, fmt, kind);
	ro.modcaches = cfg->modcaches;
	report_timing_start(&t);
	strbuf_init(&co.sb);
	co.profile = ro.profile == RUN_PROFILE_WALL ? "wall" :
		     ro.profile == RUN_PROFILE_OFFCPU ? "off_cpu" : NULL;
	if (convert_writer_new(&co, cfg->fopts, cfg->title, in) < 0) {
		cmd_error("out of memory");
		report_add(&cfg->rep, in, out, status, NULL, NULL);
		convert_writer_free(&co);
		return status;
	}
	/* folded stacks only sum samples: with several workers each
	 * folds its own (run_sinks), and the sums are added up at the end */
	if (fmt == FMT_FOLDED && !ro.profile) {
		ro.sinks = &run_folded_sinks;
		ro.sinks_ctx = co.fo;
	}
	if (co.ff) {
		co.run = &run;
		ro.on_event = convert_firefox_event;
		ro.event_ctx = &co;
	}
	/* sysprof output from a stream grows as the stream is read */
	co.in_place = fmt == FMT_SYSPROF && source_is_stream(in);
	rc = convert_open(&co);
	if (rc == 0 && convert_record_writer(&co, &cfg->sopts, in, &run,
					     &ro) < 0) {
		convert_close(&co, false);
		report_add(&cfg->rep, in, out, status, NULL, NULL);
	} else if (rc == 0 && ro.profile &&
		   convert_profile(&ro, &run, &co, in, &prof) < 0) {
		convert_close(&co, false);
		report_add(&cfg->rep, in, out, status, NULL, NULL);
	} else if (rc == 0) {
		/* Script, perf and sysprof output keep time order; the
		 * other formats sum stacks, or (Firefox, speedscope) put
		 * each thread's samples in order themselves.  Off-CPU
		 * profiles pair switches in time order. */
		rc = run_capture(&run, &ro, in,
				 fmt == FMT_SCRIPT || prof ||
				 fmt == FMT_PERF || fmt == FMT_SYSPROF ?
				 RUN_ORDERED : 0,
				 prof ? offcpu_sample : convert_add,
				 prof ? (void *)prof : &co);
		if (rc == 0 && prof)
			rc = offcpu_finish(prof);
		/* a sysprof stream cut short: what came before is a capture */
		cut = rc < 0 && co.sw && co.in_place && run.rd &&
		      source_err(run.rd)->code == ERR_TRUNCATED;
		if (cut && convert_writer_finish(&co, ro.quiet) < 0)
			cut = false;
		if (rc == 0 && (co.pw || co.sw))
			rc = convert_writer_finish(&co, ro.quiet);
		if (rc == 0 && co.ff)
			rc = convert_firefox_meta(&co, &run, in);
		if (rc == 0 && cfg->stats && !ro.quiet)
			run_print_stats(&run, stderr);
		if (rc == 0 && cfg->stats && !ro.quiet && prof)
			offcpu_print_stats(prof, stderr);
		rc = convert_close(&co, rc == 0 || cut);
		if (rc == 0 && !cut)
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
	convert_writer_free(&co);
	offcpu_free(prof);
	return status;
}

/*
 * outdir/NAME.EXT for input in: NAME is in's last component less .data;
 * no .EXT when split (a directory of outputs).
 */
static char *convert_outdir_name(const char *outdir, const char *in,
				 enum convert_format fmt, bool split)
{
	const char *base = strrchr(in, '/');
	size_t len;
	struct strbuf sb = STRBUF_INIT;

	base = base ? base + 1 : in;
	len = strlen(base);
	if (len > 5 && !strcmp(base + len - 5, ".data"))
		len -= 5;
	strbuf_addf(&sb, "%s/%.*s%s", outdir, (int)len, base,
		    split ? "" : convert_ext(fmt));
	if (sb.oom) {
		strbuf_release(&sb);
		return NULL;
	}
	return sb.buf;
}

/*
 * A --split output's file name in sb: the command name with bytes other
 * than letters, digits, '.', '_', '+' and '-' made '_' (a leading '.'
 * too), then -PID, and -TID per thread.
 */
static void convert_part_name(struct strbuf *sb, const struct run_thread *t,
			      bool thread)
{
	const char *c;

	for (c = t->comm; *c; c++)
		strbuf_addch(sb, (*c >= 'a' && *c <= 'z') ||
				 (*c >= 'A' && *c <= 'Z') ||
				 (*c >= '0' && *c <= '9') || *c == '_' ||
				 *c == '+' || *c == '-' ||
				 (*c == '.' && c != t->comm) ? *c : '_');
	strbuf_addf(sb, "-%d", t->pid);
	if (thread)
		strbuf_addf(sb, "-%d", t->tid);
}

/*
 * --split: converts each thread (or process) of in into dir as its own
 * output, in the order of their first samples; each conversion keeps only
 * its samples (the filters of cfg too).  Returns the input's status: the
 * worst of its outputs'.
 */
static enum report_status convert_split(struct convert_cfg *cfg,
					const char *in, const char *dir,
					enum convert_format fmt,
					char **inputs, int nr)
{
	bool thread = cfg->split == SPLIT_THREAD;
	const struct run_opts *all = cfg->ro;
	struct run_opts ro = *all;
	enum report_status st = REPORT_OK, one;
	struct strbuf path = STRBUF_INIT;
	struct run_thread *t;
	size_t i, nr_t;

	if (mkdir(dir, 0777) < 0 && errno != EEXIST) {
		cmd_error("cannot create '%s': %s", dir, strerror(errno));
		report_add(&cfg->rep, in, dir, REPORT_FAILED, NULL, NULL);
		return REPORT_FAILED;
	}
	if (run_list_threads(all, in, !thread, &t, &nr_t) < 0) {
		report_add(&cfg->rep, in, dir, REPORT_FAILED, NULL, NULL);
		return REPORT_FAILED;
	}
	if (!nr_t && !all->quiet)
		cmd_error("note: %s: no samples to split", in);
	cfg->ro = &ro;
	for (i = 0; i < nr_t; i++) {
		strbuf_reset(&path);
		strbuf_addf(&path, "%s/", dir);
		convert_part_name(&path, &t[i], thread);
		strbuf_addstr(&path, convert_ext(fmt));
		if (path.oom) {
			cmd_error("out of memory");
			st = REPORT_FAILED;
			break;
		}
		if (outfile_is_input("convert", "output", path.buf, inputs,
				     nr)) {
			st = REPORT_FAILED;
			continue;
		}
		ro.filter.split = true;
		ro.filter.split_thread = thread;
		ro.filter.split_pid = t[i].pid;
		ro.filter.split_tid = t[i].tid;
		one = convert_one(cfg, in, path.buf, fmt);
		if (one == REPORT_FAILED || (one == REPORT_GATE &&
					     st == REPORT_OK))
			st = one;
	}
	cfg->ro = all;
	strbuf_release(&path);
	free(t);
	return st;
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
		/* --split: outdir itself for one input */
		outs[i] = cfg->split && nr == 1 ? strdup(outdir) :
			  convert_outdir_name(outdir, inputs[i], fmt,
					      cfg->split);
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
		if (!cfg->split &&
		    outfile_is_input("convert", "output", outs[i], inputs,
				     nr)) {
			status = EXIT_USAGE;
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
	/* modules found for one input serve the next ones (run.h); without
	 * the memory for that, each input has its own */
	cfg->modcaches = calloc(1, sizeof(*cfg->modcaches));
	for (i = 0; i < nr; i++) {
		st[i] = cfg->split ?
			convert_split(cfg, inputs[i], outs[i], fmt, inputs,
				      nr) :
			convert_one(cfg, inputs[i], outs[i], fmt);
		if (st[i] == REPORT_FAILED)
			status = EXIT_BAD;
		else if (st[i] == REPORT_GATE && status == EXIT_OK)
			status = EXIT_GATE;
	}
	if (!cfg->ro->quiet) {
		cmd_error("converted %u of %u %s into %s%s", cfg->rep.nr_ok +
			  cfg->rep.nr_gate, cfg->rep.nr,
			  cfg->split ? "outputs" : "inputs", outdir,
			  cfg->rep.nr_failed ? "; failed:" : "");
		for (i = 0; i < nr && cfg->rep.nr_failed; i++)
			if (st[i] == REPORT_FAILED)
				fprintf(stderr, "  %s\n", inputs[i]);
	}
out:
	if (cfg->modcaches) {
		run_modcaches_release(cfg->modcaches);
		free(cfg->modcaches);
		cfg->modcaches = NULL;
	}
	for (i = 0; outs && i < nr; i++)
		free(outs[i]);
	free(outs);
	free(st);
	return status;
}

/*
 * --pid / --tid: with a value (--pid=LIST), perf script's filter; bare,
 * stackcollapse-perf.pl's flag (pid or tid in folded frame names).  perf
 * script's users write '--pid 123': a number list that is no file after
 * the bare flag is that mistake.  Returns EXIT_OK or the exit status.
 */
static int convert_pid_option(struct run_opts *ro, struct folded_opts *fopts,
			      bool tid, const char *arg, int argc,
			      char **argv)
{
	const char *next = optind < argc ? argv[optind] : NULL;
	struct stat st;
	char msg[512];

	if (arg) {
		if (sfilter_add_ids(&ro->filter, tid, arg, msg,
				    sizeof(msg)) < 0)
			return cmd_usage_error(convert_usage, "convert: %s",
					       msg);
		return EXIT_OK;
	}
	if (next && *next && strspn(next, "0123456789,") == strlen(next) &&
	    stat(next, &st) < 0)
		return cmd_usage_error(convert_usage,
			"convert: bare --%s puts %s in folded frame names; to "
			"keep only samples of %s, write --%s=%s or --%ss %s",
			tid ? "tid" : "pid", tid ? "the tid" : "the pid",
			next, tid ? "tid" : "pid", next, tid ? "tid" : "pid",
			next);
	if (tid)
		fopts->tid = true;
	else
		fopts->pid = true;
	return EXIT_OK;
}

int cmd_convert(int argc, char **argv)
{
	struct option opts[64];
	static const struct option own[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "outdir", required_argument, NULL, OPT_OUTDIR },
		{ "to", required_argument, NULL, OPT_TO },
		{ "pid", optional_argument, NULL, OPT_PID },
		{ "tid", optional_argument, NULL, OPT_TID },
		{ "weight", required_argument, NULL, OPT_WEIGHT },
		{ "annotate", no_argument, NULL, OPT_ANNOTATE },
		{ "stats", no_argument, NULL, OPT_STATS },
		{ "title", required_argument, NULL, OPT_TITLE },
		{ "sysprof-version", required_argument, NULL,
		  OPT_SYSPROF_VERSION },
		{ "split", required_argument, NULL, OPT_SPLIT },
		{ "from", required_argument, NULL, OPT_FROM },
		{ "sample-type", required_argument, NULL, OPT_SAMPLE_TYPE },
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
		case OPT_TID:
			rc = convert_pid_option(&ro, &fopts, c == OPT_TID,
						optarg, argc, argv);
			if (rc != EXIT_OK)
				return rc;
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
		case OPT_TITLE:
			cfg.title = optarg;
			break;
		case OPT_SYSPROF_VERSION: {
			char *end;
			unsigned long v = strtoul(optarg, &end, 10);

			if (!strcmp(optarg, "3.46") || (!*end && v >= 45 &&
							 v < 1000)) {
				cfg.sopts.version = !*end ? (unsigned)v : 3;
				break;
			}
			return cmd_usage_error(convert_usage,
				"convert: --sysprof-version is 3.46 or a major "
				"version from 45, not '%s'", optarg);
		}
		case OPT_SPLIT:
			if (!strcmp(optarg, "thread"))
				cfg.split = SPLIT_THREAD;
			else if (!strcmp(optarg, "process"))
				cfg.split = SPLIT_PROCESS;
			else
				return cmd_usage_error(convert_usage,
					"convert: --split is thread or "
					"process, not '%s'", optarg);
			break;
		case OPT_FROM:
		case OPT_SAMPLE_TYPE:
			if (profin_option(&cfg.pin, c == OPT_FROM, optarg,
					  "convert", convert_usage) < 0)
				return EXIT_USAGE;
			break;
		case 'h':
			convert_help(stdout);
			return EXIT_OK;
		default:
			if (run_option_or_usage(&ro, c, optarg, "convert", convert_usage,
						argv[optind - 1]))
				return EXIT_USAGE;
			break;
		}
	}
	if (out && outdir)
		return cmd_usage_error(convert_usage,
				       "convert: -o and --outdir exclude each "
				       "other");
	if (cfg.split && !outdir)
		return cmd_usage_error(convert_usage,
				       "convert: --split writes into --outdir "
				       "DIR");
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
			"convert: unsupported output format '%s' (folded, "
			"script, pprof, speedscope, firefox, svg, perf or "
			"sysprof)",
			to ? to : out ? out : "");
	if (ro.profile && (fmt == FMT_PERF || fmt == FMT_SYSPROF))
		return cmd_usage_error(convert_usage,
			"convert: --profile %s makes folded, script, pprof, "
			"speedscope, firefox or svg output, not %s",
			ro.profile == RUN_PROFILE_WALL ? "wall" : "offcpu",
			fmt == FMT_PERF ? "perf.data" : "sysprof");
	/* off-CPU and wall-clock profiles weigh in nanoseconds */
	if (ro.profile) {
		fopts.period = true;
		if (!cfg.title && fmt == FMT_SVG)
			cfg.title = ro.profile == RUN_PROFILE_WALL ?
				    "Wall-clock Flame Graph" :
				    "Off-CPU Flame Graph";
	}
	if ((out && outfile_is_input("convert", "output", out, argv + optind,
				     argc - optind)) ||
	    (ro.stats_json &&
	     outfile_is_input("convert", "--stats-json file", ro.stats_json,
			      argv + optind, argc - optind)))
		return EXIT_USAGE;
	for (c = optind; c < argc; c++) {
		const char *what = convert_capture_only(&cfg, &ro, fmt);

		if (what && profin_kind(&cfg.pin, argv[c]) != PROFILE_NONE)
			return cmd_usage_error(convert_usage,
				"convert: '%s' is a profile: %s a capture",
				argv[c], what);
	}
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
