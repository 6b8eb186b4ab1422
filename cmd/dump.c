/*
 * dump.c - `restack dump`: one line per record, in time order.
 */
#include <getopt.h>
#include <stdbool.h>
#include <string.h>

#include "cmd/cmd.h"
#include "common/strbuf.h"
#include "formats/perfdata.h"
#include "formats/tracepoint.h"

static const char *const dump_usage[] = {
	"usage: restack dump [options] <input>",
	"",
	"      --file-order   records in file order instead of time order",
	"  -h, --help         show this help and exit",
	"",
	"Prints one line per record: OFFSET TIME TYPE field=value ...",
	"(see docs/usage.md, 'restack dump'); tracepoint samples end with their",
	"fields decoded from the capture's tracing data (tp=SYSTEM:NAME",
	"FIELD=VALUE ... trace=\"TEXT\", TEXT as perf script prints it).",
	"<input> may be '-' for stdin.",
	NULL,
};

#define DUMP_FLUSH_BYTES (1u << 16)

#define DUMP_TYPE_TRACEPOINT 2   /* perf_event_attr.type */

/*
 * Appends a tracepoint sample's decoded fields.  When the capture's
 * tracing data is missing or unusable, a warning is printed once and the
 * samples keep their raw size only.
 */
static void dump_tracepoint(struct perfdata_reader *r, const char *path,
			    bool *warned, const struct event *ev,
			    struct strbuf *sb)
{
	struct tracepoint *tp;
	struct err err;

	if (ev->type != EVENT_SAMPLE || !ev->attr ||
	    ev->attr->type != DUMP_TYPE_TRACEPOINT || !ev->sample.raw)
		return;
	tp = perfdata_tracepoints(r, &err);
	if (tp) {
		tracepoint_format(tp, ev->attr->config, ev->sample.raw,
				  ev->sample.raw_size, ev->cpu, sb);
	} else if (!*warned) {
		*warned = true;
		cmd_error("warning: %s: tracepoint fields: %s", path, err.msg);
	}
}

int cmd_dump(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "file-order", no_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct perfdata_opts popts = { 0 };
	struct perfdata_reader *r;
	bool tp_warned = false;
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
		dump_tracepoint(r, path, &tp_warned, &ev, &sb);
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
