/*
 * stats.c - `restack stats`: how well a capture unwinds, without writing
 * a profile.
 */
#include <string.h>

#include "cmd/cmd.h"
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

int cmd_stats(int argc, char **argv)
{
	struct option opts[64];
	struct run_opts ro = { 0 };
	struct run run;
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
	while ((c = getopt_long(argc, argv, "qh", opts, NULL)) != -1) {
		if (c == 'h') {
			cmd_print_usage(stdout, stats_usage);
			cmd_print_usage(stdout, run_usage_lines);
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
	rc = run_capture(&run, &ro, argv[optind], 0, stats_count, NULL);
	if (rc == 0)
		run_print_stats(&run, stdout);
	run_free(&run);
	return rc < 0 ? EXIT_BAD : EXIT_OK;
}
