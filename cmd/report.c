/*
 * report.c - --stats-json and --min-coverage (see report.h).
 */
#include <ctype.h>
#include <errno.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "cmd/report.h"

#include "cmd/cmd.h"
#include "cmd/outfile.h"
#include "formats/fdout.h"
#include "formats/textesc.h"
#include "unwind/dwcache.h"
#include "unwind/modinfo.h"
#include "unwind/module.h"

void report_init(struct report *r, double min_coverage, unsigned jobs)
{
	memset(r, 0, sizeof(*r));
	strbuf_init(&r->inputs);
	r->min_coverage = min_coverage;
	r->jobs = jobs;
}

void report_release(struct report *r)
{
	strbuf_release(&r->inputs);
}

double report_coverage(const struct run *run)
{
	const struct resolve_stats *st = &run->res.stats;

	if (!st->samples)
		return 100.0;   /* nothing to miss */
	return 100.0 * (double)st->end[END_ROOT] / (double)st->samples;
}

enum report_status report_judge(const struct report *r,
				const struct run *run)
{
	if (r->min_coverage >= 0 && report_coverage(run) < r->min_coverage)
		return REPORT_GATE;
	return REPORT_OK;
}

static double report_now(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void report_timing_start(struct report_timing *t)
{
	memset(t, 0, sizeof(*t));
	t->start_wall = report_now(CLOCK_MONOTONIC);
	t->start_cpu = report_now(CLOCK_PROCESS_CPUTIME_ID);
}

void report_timing_end(struct report_timing *t)
{
	struct rusage ru;

	t->wall_s = report_now(CLOCK_MONOTONIC) - t->start_wall;
	t->cpu_s = report_now(CLOCK_PROCESS_CPUTIME_ID) - t->start_cpu;
	if (getrusage(RUSAGE_SELF, &ru) == 0)
		t->peak_rss_kb = ru.ru_maxrss;
}

static void report_key(struct strbuf *sb, const char *key)
{
	textesc_json(sb, key);
	strbuf_addch(sb, ':');
}

static void report_str_or_null(struct strbuf *sb, const char *key,
			       const char *val)
{
	report_key(sb, key);
	if (val)
		textesc_json(sb, val);
	else
		strbuf_addstr(sb, "null");
	strbuf_addch(sb, ',');
}

/* A statistics name as a JSON key: "no CFI" -> "no_cfi". */
static void report_name_u64(struct strbuf *sb, const char *name, uint64_t v)
{
	char key[64];
	size_t i;

	for (i = 0; name[i] && i < sizeof(key) - 1; i++)
		key[i] = name[i] == ' ' || name[i] == '-' ? '_' :
			 (char)tolower((unsigned char)name[i]);
	key[i] = '\0';
	report_key(sb, key);
	strbuf_addf(sb, "%llu,", (unsigned long long)v);
}

static void report_u64(struct strbuf *sb, const char *key, uint64_t v)
{
	report_key(sb, key);
	strbuf_addf(sb, "%llu,", (unsigned long long)v);
}

/* Removes the comma after an object's or array's last member. */
static void report_close(struct strbuf *sb, char c)
{
	if (sb->len && sb->buf[sb->len - 1] == ',')
		sb->buf[--sb->len] = '\0';
	strbuf_addch(sb, c);
}

static void report_bool(struct strbuf *sb, const char *key, bool v)
{
	report_key(sb, key);
	strbuf_addstr(sb, v ? "true," : "false,");
}

static void report_module(struct strbuf *sb, const struct module *m)
{
	struct modinfo mi;

	modinfo_describe(m, &mi);
	strbuf_addch(sb, '{');
	report_str_or_null(sb, "path", mi.path);
	report_str_or_null(sb, "build_id", mi.build_id[0] ? mi.build_id : NULL);
	report_str_or_null(sb, "status", mi.status);
	report_str_or_null(sb, "file", mi.file);
	report_str_or_null(sb, "found_in", mi.found_in);
	report_str_or_null(sb, "why_missing", mi.why_missing);
	report_str_or_null(sb, "debug_file", mi.debug_file);
	report_str_or_null(sb, "debug_found_in", mi.debug_found_in);
	report_bool(sb, "cfi", mi.eh_frame || mi.debug_frame);
	report_bool(sb, "eh_frame", mi.eh_frame);
	report_bool(sb, "debug_frame", mi.debug_frame);
	report_bool(sb, "symbols", mi.symbols);
	report_bool(sb, "dynsym_only", mi.dynsym_only);
	report_bool(sb, "dwarf", mi.dwarf);
	report_bool(sb, "gopclntab", mi.gopclntab);
	report_u64(sb, "samples", mi.samples);
	report_u64(sb, "frames", mi.frames);
	report_u64(sb, "no_cfi", mi.no_cfi);
	report_u64(sb, "no_sym", mi.no_sym);
	report_close(sb, '}');
	strbuf_addch(sb, ',');
}

/*
 * Modules the run used that were kept loaded from an earlier input of the
 * batch instead of being looked up again.
 */
static uint64_t report_nr_reused(const struct run *run)
{
	const struct module *m;
	uint64_t n = 0;

	for (m = run->res.mc->all; m; m = m->next)
		n += m->status != MODULE_PENDING && m->reused;
	return n;
}

/* The counts of a finished run, as members of the input's object. */
static void report_run(struct strbuf *sb, const struct run *run)
{
	const struct resolve_stats *st = &run->res.stats;
	const struct perfdata_info *in = source_info(run->rd);
	const struct module *m;
	unsigned i;

	report_str_or_null(sb, "event",
			   run->event_attr >= 0 ?
				   in->attrs[run->event_attr].name : NULL);
	report_u64(sb, "samples", st->samples);
	report_u64(sb, "reached_root", st->end[END_ROOT]);
	report_key(sb, "coverage_pct");
	strbuf_addf(sb, "%.2f,", report_coverage(run));
	report_u64(sb, "window_full", st->truncated);
	report_u64(sb, "window_ends", st->window_ends);
	report_u64(sb, "stitched", st->stitched);
	report_u64(sb, "stitched_to_root", st->stitched_rooted);
	if (run->res.opts.validate_stitch) {
		report_key(sb, "stitch_check");
		strbuf_addch(sb, '{');
		report_u64(sb, "tried", st->validate_tried);
		report_u64(sb, "exact", st->validate_exact);
		report_u64(sb, "honest", st->validate_honest);
		report_u64(sb, "wrong", st->validate_wrong);
		report_u64(sb, "ambiguous", st->validate_ambiguous);
		report_close(sb, '}');
		strbuf_addch(sb, ',');
	}
	report_u64(sb, "other_event_samples", run->other_event_samples);
	report_u64(sb, "filtered_samples", run->filtered);
	report_u64(sb, "samples_named_late", run->named_late);
	report_u64(sb, "passes", run->passes);
	report_u64(sb, "workers", run->jobs);
	report_key(sb, "worker_samples");
	strbuf_addch(sb, '[');
	for (i = 0; i < run->jobs; i++)
		strbuf_addf(sb, "%llu,", (unsigned long long)(
				    run->jobs > 1 ? run->worker_samples[i] :
						    st->samples));
	report_close(sb, ']');
	strbuf_addch(sb, ',');
	report_key(sb, "end_reasons");
	strbuf_addch(sb, '{');
	for (i = 0; i < END_REASON__COUNT; i++)
		report_name_u64(sb, end_reason_name(i), st->end[i]);
	report_close(sb, '}');
	strbuf_addch(sb, ',');
	report_key(sb, "frames_by_origin");
	strbuf_addch(sb, '{');
	for (i = 0; i < FRAME_ORIGIN__COUNT; i++)
		report_name_u64(sb, frame_origin_name(i), st->frames[i]);
	report_close(sb, '}');
	strbuf_addch(sb, ',');
	report_str_or_null(sb, "kernel_symbols",
			   symbolizer_has_kallsyms(&run->res.sym) ?
				   run_kallsyms_shown(run) : NULL);
	report_u64(sb, "modules_reused", report_nr_reused(run));
	report_key(sb, "modules");
	strbuf_addch(sb, '[');
	for (m = run->res.mc->all; m; m = m->next)
		if (m->status != MODULE_PENDING)
			report_module(sb, m);
	report_close(sb, ']');
	strbuf_addch(sb, ',');
}

void report_add(struct report *r, const char *input, const char *out,
		enum report_status status, const struct run *run,
		const struct report_timing *t)
{
	static const char *const names[] = { "ok", "coverage-below-gate",
					     "failed" };
	struct strbuf *sb = &r->inputs;

	r->nr++;
	if (status == REPORT_OK)
		r->nr_ok++;
	else if (status == REPORT_GATE)
		r->nr_gate++;
	else
		r->nr_failed++;
	strbuf_addch(sb, '{');
	report_str_or_null(sb, "input", input);
	report_str_or_null(sb, "output", status == REPORT_FAILED ? NULL : out);
	report_str_or_null(sb, "status", names[status]);
	if (run && status != REPORT_FAILED)
		report_run(sb, run);
	if (t) {
		report_key(sb, "timing");
		strbuf_addf(sb, "{\"wall_s\":%.3f,\"cpu_s\":%.3f,"
				"\"peak_rss_kb\":%ld},",
			    t->wall_s, t->cpu_s, t->peak_rss_kb);
	}
	report_close(sb, '}');
	strbuf_addch(sb, ',');
}

int report_write(const struct report *r, const char *path)
{
	struct strbuf sb = STRBUF_INIT;
	struct dwcache_counters dc;
	int rc = 0;

	strbuf_addf(&sb, "{\"restack\":\"%s\",\"jobs\":%u,", RESTACK_VERSION,
		    r->jobs);
	report_key(&sb, "min_coverage_pct");
	if (r->min_coverage >= 0)
		strbuf_addf(&sb, "%.2f,", r->min_coverage);
	else
		strbuf_addstr(&sb, "null,");
	dwcache_get_counters(&dc);
	report_key(&sb, "dwarf_cache");
	strbuf_addch(&sb, '{');
	report_str_or_null(&sb, "dir", dwcache_dir());
	report_u64(&sb, "read", dc.loaded);
	report_u64(&sb, "written", dc.stored);
	report_u64(&sb, "write_failed", dc.failed);
	report_close(&sb, '}');
	strbuf_addch(&sb, ',');
	strbuf_addf(&sb, "\"inputs_total\":%u,\"converted\":%u,"
			 "\"below_gate\":%u,\"failed\":%u,\"inputs\":[",
		    r->nr, r->nr_ok + r->nr_gate, r->nr_gate, r->nr_failed);
	strbuf_add(&sb, r->inputs.buf ? r->inputs.buf : "", r->inputs.len);
	report_close(&sb, ']');
	strbuf_addstr(&sb, "}\n");
	if (sb.oom) {
		cmd_error("out of memory");
		strbuf_release(&sb);
		return -1;
	}
	if (!strcmp(path, "-")) {
		rc = cmd_write_stdout(sb.buf, sb.len);
	} else {
		/* as an output: never in place, nor over a device */
		struct outfile o;
		struct err err;

		rc = outfile_open(&o, path);
		if (rc == 0) {
			bool ok = fdout_write(o.fd, sb.buf, sb.len,
					      "statistics", &err) == 0;

			if (!ok)
				cmd_report_err(path, &err);
			rc = outfile_close(&o, ok);
		}
	}
	strbuf_release(&sb);
	return rc;
}
