/*
 * info.c - `restack info`: what a capture holds (header, events,
 * features, build-ids) and what its records add up to.
 */
#include <getopt.h>
#include <string.h>

#include "cmd/cmd.h"
#include "common/strbuf.h"
#include "formats/perfdata.h"

static const char *const info_usage[] = {
	"usage: restack info [options] <input>",
	"",
	"  -h, --help     show this help and exit",
	"",
	"Prints the header (host, kernel, perf version, arch, cpus, command",
	"line), each event with its sample_type, the features present, record",
	"counts by type, samples per event, the time span, lost records and the",
	"build-id list.  <input> may be '-' for standard input.",
	NULL,
};

static void info_time(struct strbuf *sb, uint64_t t)
{
	strbuf_addf(sb, "%llu.%09llu", (unsigned long long)(t / 1000000000),
		    (unsigned long long)(t % 1000000000));
}

static void info_header(struct strbuf *sb, const char *path,
			const struct perfdata_info *in)
{
	unsigned i;

	strbuf_addf(sb, "%-15s %s\n", "file", path);
	strbuf_addf(sb, "%-15s perf.data, %s mode, %s\n", "format",
		    in->pipe ? "pipe" : "file",
		    in->swap ? "other byte order than this host" :
			       "this host's byte order");
	if (in->file_size != UINT64_MAX)
		strbuf_addf(sb, "%-15s %llu bytes\n", "size",
			    (unsigned long long)in->file_size);
	if (!in->pipe)
		strbuf_addf(sb, "%-15s 0x%llx + 0x%llx\n", "data section",
			    (unsigned long long)in->data_offset,
			    (unsigned long long)in->data_size);
	if (in->hostname)
		strbuf_addf(sb, "%-15s %s\n", "hostname", in->hostname);
	if (in->osrelease)
		strbuf_addf(sb, "%-15s %s\n", "os release", in->osrelease);
	if (in->version)
		strbuf_addf(sb, "%-15s %s\n", "perf version", in->version);
	if (in->arch)
		strbuf_addf(sb, "%-15s %s\n", "arch", in->arch);
	if (in->has_nrcpus)
		strbuf_addf(sb, "%-15s %u online, %u available\n", "cpus",
			    in->nr_cpus_online, in->nr_cpus_avail);
	if (in->cpudesc)
		strbuf_addf(sb, "%-15s %s\n", "cpu", in->cpudesc);
	if (in->cpuid)
		strbuf_addf(sb, "%-15s %s\n", "cpuid", in->cpuid);
	if (in->total_mem_kb)
		strbuf_addf(sb, "%-15s %llu kB\n", "total memory",
			    (unsigned long long)in->total_mem_kb);
	if (in->nr_cmdline) {
		strbuf_addf(sb, "%-15s", "cmdline");
		for (i = 0; i < in->nr_cmdline; i++)
			strbuf_addf(sb, " %s", in->cmdline[i]);
		strbuf_addch(sb, '\n');
	}
	if (in->has_compressed)
		strbuf_addf(sb, "%-15s %s level %u, ratio %u, mmap_len %u\n",
			    "compression",
			    in->comp_type == 1 ? "zstd" : "unknown",
			    in->comp_level, in->comp_ratio, in->comp_mmap_len);
	strbuf_addf(sb, "%-15s", "features");
	for (i = 0; i < PERFDATA_FEAT_MAX; i++) {
		const char *name;

		if (!((in->features[i / 64] >> (i % 64)) & 1))
			continue;
		name = perfdata_feature_name(i);
		if (name)
			strbuf_addf(sb, " %s", name);
		else
			strbuf_addf(sb, " feature%u", i);
	}
	strbuf_addch(sb, '\n');
}

static void info_events(struct strbuf *sb, const struct perfdata_info *in,
			const struct perfdata_stats *st)
{
	unsigned i;
	uint64_t total = 0;

	strbuf_addf(sb, "\nevents %u\n", in->nr_attrs);
	for (i = 0; i < in->nr_attrs; i++) {
		const struct event_attr *a = &in->attrs[i];

		strbuf_addf(sb, "  %u %s type=%u config=0x%llx %s=%llu "
			    "sample_type=",
			    i, a->name ? a->name : "?", a->type,
			    (unsigned long long)a->config,
			    a->freq ? "freq" : "period",
			    (unsigned long long)a->sample_period);
		perfdata_sample_type_str(a->sample_type, sb);
		if (a->sample_regs_user)
			strbuf_addf(sb, " regs_user=0x%llx",
				    (unsigned long long)a->sample_regs_user);
		if (a->sample_stack_user)
			strbuf_addf(sb, " stack_user=%u",
				    a->sample_stack_user);
		strbuf_addch(sb, '\n');
	}
	for (i = 0; i < in->nr_attrs; i++)
		total += st->samples_by_attr ? st->samples_by_attr[i] : 0;
	strbuf_addf(sb, "\nsamples %llu\n", (unsigned long long)total);
	for (i = 0; i < in->nr_attrs; i++)
		strbuf_addf(sb, "  %s %llu\n",
			    in->attrs[i].name ? in->attrs[i].name : "?",
			    (unsigned long long)(st->samples_by_attr ?
							 st->samples_by_attr[i] :
							 0));
	if (total && st->time_min <= st->time_max) {
		strbuf_addf(sb, "%-15s ", "time span");
		info_time(sb, st->time_min);
		strbuf_addstr(sb, " .. ");
		info_time(sb, st->time_max);
		strbuf_addf(sb, " (%.6f s)\n",
			    (double)(st->time_max - st->time_min) / 1e9);
	}
	strbuf_addf(sb, "%-15s %llu records, %llu samples\n", "lost",
		    (unsigned long long)st->lost_records,
		    (unsigned long long)st->lost_samples);
}

static void info_records(struct strbuf *sb, const struct perfdata_stats *st)
{
	uint64_t total = 0;
	unsigned i;

	for (i = 0; i < ARRAY_SIZE(st->records); i++)
		total += st->records[i];
	strbuf_addf(sb, "\nrecords %llu\n", (unsigned long long)total);
	for (i = 0; i < ARRAY_SIZE(st->records); i++) {
		const char *name = perfdata_record_name(i);

		if (!st->records[i])
			continue;
		if (name)
			strbuf_addf(sb, "  %s %llu\n", name,
				    (unsigned long long)st->records[i]);
		else
			strbuf_addf(sb, "  UNKNOWN(%u) %llu\n", i,
				    (unsigned long long)st->records[i]);
	}
	if (st->compressed_bytes_in)
		strbuf_addf(sb, "%-15s %llu bytes -> %llu bytes\n",
			    "decompressed",
			    (unsigned long long)st->compressed_bytes_in,
			    (unsigned long long)st->compressed_bytes_out);
	if (st->out_of_order || st->forced_flushes)
		strbuf_addf(sb, "%-15s %llu records, %llu forced flushes\n",
			    "out of order",
			    (unsigned long long)st->out_of_order,
			    (unsigned long long)st->forced_flushes);
}

static void info_build_ids(struct strbuf *sb, const struct perfdata_info *in)
{
	unsigned i, k;

	strbuf_addf(sb, "\nbuild-ids %u\n", in->nr_build_ids);
	for (i = 0; i < in->nr_build_ids; i++) {
		const struct perfdata_build_id *b = &in->build_ids[i];

		strbuf_addstr(sb, "  ");
		for (k = 0; k < b->size; k++)
			strbuf_addf(sb, "%02x", b->build_id[k]);
		strbuf_addf(sb, " %s%s\n", b->filename,
			    b->from_mmap ? " (mmap2)" : "");
	}
}

int cmd_info(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct perfdata_reader *r;
	struct strbuf sb = STRBUF_INIT;
	struct err err;
	struct event ev;
	const char *path;
	int c, rc;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			cmd_print_usage(stdout, info_usage);
			return EXIT_OK;
		default:
			return cmd_usage_error(info_usage, "info: unknown option '%s'",
					       argv[optind - 1]);
		}
	}
	if (optind != argc - 1)
		return cmd_usage_error(info_usage, "info: expected one input");
	path = argv[optind];

	r = perfdata_open(path, NULL, &err);
	if (!r) {
		cmd_report_err(path, &err);
		return EXIT_BAD;
	}
	while ((rc = perfdata_next(r, &ev)) > 0)
		;
	if (rc < 0) {
		cmd_report_err(path, perfdata_err(r));
		perfdata_close(r);
		return EXIT_BAD;
	}
	info_header(&sb, path, perfdata_info(r));
	info_events(&sb, perfdata_info(r), perfdata_stats(r));
	info_records(&sb, perfdata_stats(r));
	info_build_ids(&sb, perfdata_info(r));
	perfdata_close(r);
	if (sb.oom) {
		cmd_error("out of memory");
		strbuf_release(&sb);
		return EXIT_BAD;
	}
	rc = cmd_write_stdout(sb.buf, sb.len);
	strbuf_release(&sb);
	return rc < 0 ? EXIT_BAD : EXIT_OK;
}
