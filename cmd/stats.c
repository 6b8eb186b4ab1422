/*
 * stats.c - `restack stats`: how well a capture unwinds, without writing
 * a profile.
 */
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/outfile.h"
#include "cmd/offcpu.h"
#include "cmd/report.h"
#include "cmd/run.h"

static const char *const stats_usage[] = {
	"usage: restack stats [options] <input>",
	"",
	"Unwinds every sample and reports: samples, the share that reached",
	"their thread's root, why the others stopped (one reason per sample),",
	"frames by how they were found, and per module whether its file,",
	"CFI and symbols were found.",
	"",
	NULL,
};

static int stats_count(void *ctx, const struct rsample *s)
{
	(void)ctx;
	(void)s;
	return 0;
}

/*
 * Only the resolvers' counts matter: with several workers, none hands its
 * samples over (run_sinks), and the sinks hold nothing.
 */
static char stats_nothing;

static void *stats_fork(void *ctx)
{
	(void)ctx;
	return &stats_nothing;
}

static int stats_join(void *ctx, void *sink)
{
	(void)ctx;
	(void)sink;
	return 0;
}

static void stats_drop(void *sink)
{
	(void)sink;
}

static const struct run_sinks stats_sinks = {
	.fork = stats_fork,
	.add = stats_count,
	.join = stats_join,
	.drop = stats_drop,
};

int cmd_stats(int argc, char **argv)
{
	struct option opts[64];
	struct run_opts ro = RUN_OPTS_INIT;
	struct offcpu *prof = NULL;
	struct run run;
	struct report rep;
	struct report_timing t;
	enum report_status status;
	size_t n = 0, i;
	int c, rc;

	opts[n].name = "help";
	opts[n].has_arg = no_argument;
	opts[n].flag = NULL;
	opts[n++].val = 'h';
	for (i = 0; run_long_options[i].name; i++)
		opts[n++] = run_long_options[i];
	memset(&opts[n], 0, sizeof(opts[n]));
	opterr = 0;
	while ((c = getopt_long(argc, argv, "qj:h", opts, NULL)) != -1) {
		if (c == 'h') {
			cmd_print_usage(stdout, stats_usage);
			cmd_print_usage(stdout, run_usage_lines);
			printf("  -h, --help              "
			       "show this help and exit\n");
			return EXIT_OK;
		}
		rc = c == '?' || c == ':' ? 0 : run_parse_option(&ro, c, optarg);
		if (rc < 0)
			return EXIT_USAGE;
		if (rc == 0)
			return cmd_usage_error(stats_usage,
					       "stats: bad option '%s'",
					       argv[optind - 1]);
	}
	if (optind != argc - 1)
		return cmd_usage_error(stats_usage, "stats: expected one input");
	if (ro.stats_json &&
	    outfile_is_input("stats", "--stats-json file", ro.stats_json,
			     argv + optind, 1))
		return EXIT_USAGE;
	if (ro.profile) {
		/* the profile's per-thread table after the report */
		prof = offcpu_new(&ro, &run, stats_count, NULL);
		if (!prof) {
			cmd_error("out of memory");
			return EXIT_BAD;
		}
		if (strcmp(argv[optind], "-")) {
			if (offcpu_prepass(prof, argv[optind]) < 0) {
				offcpu_free(prof);
				return EXIT_BAD;
			}
		} else {
			ro.on_record = offcpu_record;
			ro.record_ctx = prof;
		}
	} else {
		ro.sinks = &stats_sinks;
	}
	report_init(&rep, ro.min_coverage, run_jobs(&ro));
	report_timing_start(&t);
	rc = run_capture(&run, &ro, argv[optind], prof ? RUN_ORDERED : 0,
			 prof ? offcpu_sample : stats_count,
			 prof ? (void *)prof : NULL);
	if (rc == 0 && prof)
		rc = offcpu_finish(prof);
	status = REPORT_FAILED;
	if (rc == 0) {
		report_timing_end(&t);
		status = report_judge(&rep, &run);
		if (!ro.stats_json || strcmp(ro.stats_json, "-")) {
			run_print_stats(&run, stdout);
			if (prof)
				offcpu_print_stats(prof, stdout);
		}
	}
	report_add(&rep, argv[optind], NULL, status, rc == 0 ? &run : NULL,
		   rc == 0 ? &t : NULL);
	run_free(&run);
	if (ro.stats_json && report_write(&rep, ro.stats_json) < 0 &&
	    status != REPORT_FAILED)
		status = REPORT_FAILED;
	report_release(&rep);
	offcpu_free(prof);
	return status == REPORT_FAILED ? EXIT_BAD :
	       status == REPORT_GATE ? EXIT_GATE : EXIT_OK;
}
