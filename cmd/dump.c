/*
 * dump.c - `restack dump`: one line per record, in time order.
 */
#include <getopt.h>
#include <stdbool.h>
#include <string.h>

#include "cmd/cmd.h"
#include "common/strbuf.h"
#include "formats/perfdata.h"

static const char *const dump_usage[] = {
	"usage: restack dump [options] <input>",
	"",
	"      --file-order   records in file order instead of time order",
	"  -h, --help         show this help and exit",
	"",
	"Prints one line per record: OFFSET TIME TYPE field=value ...",
	"(see README.md, 'restack dump').  <input> may be '-' for stdin.",
	NULL,
};

#define DUMP_FLUSH_BYTES (1u << 16)

int cmd_dump(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "file-order", no_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct perfdata_opts popts = { 0 };
	struct perfdata_reader *r;
	struct strbuf sb = STRBUF_INIT;
	struct err err;
	struct event ev;
	const char *path;
	int c, rc, status = EXIT_OK;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'F':
			popts.file_order = true;
			break;
		case 'h':
			cmd_print_usage(stdout, dump_usage);
			return EXIT_OK;
		default:
			return cmd_usage_error(dump_usage, "dump: unknown option '%s'",
					       argv[optind - 1]);
		}
	}
	if (optind != argc - 1)
		return cmd_usage_error(dump_usage, "dump: expected one input");
	path = argv[optind];

	r = perfdata_open(path, &popts, &err);
	if (!r) {
		cmd_report_err(path, &err);
		return EXIT_BAD;
	}
	while ((rc = perfdata_next(r, &ev)) > 0) {
		perfdata_format_event(r, &ev, &sb);
		strbuf_addch(&sb, '\n');
		if (sb.len >= DUMP_FLUSH_BYTES) {
			if (sb.oom || cmd_write_stdout(sb.buf, sb.len) < 0) {
				status = EXIT_BAD;
				goto out;
			}
			strbuf_reset(&sb);
		}
	}
	if (rc < 0) {
		/* What was printed is cut short: say so, fail. */
		if (sb.len)
			cmd_write_stdout(sb.buf, sb.len);
		cmd_report_err(path, perfdata_err(r));
		status = EXIT_BAD;
		goto out;
	}
	if (sb.oom || (sb.len && cmd_write_stdout(sb.buf, sb.len) < 0))
		status = EXIT_BAD;
out:
	strbuf_release(&sb);
	perfdata_close(r);
	return status;
}
