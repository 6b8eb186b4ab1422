/*
 * run.c - from a capture to resolved samples, shared by convert and stats.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "cmd/run.h"
#include "cmd/run_internal.h"

#include "cmd/cmd.h"
#include "common/mem.h"
#include "common/sigclean.h"
#include "formats/fdout.h"
#include "formats/folded.h"
#include "unwind/cfi.h"
#include "unwind/dwcache.h"
#include "unwind/locate.h"
#include "unwind/modinfo.h"
#include "unwind/modload.h"
#include "unwind/module.h"
#include "unwind/warmup.h"

enum {
	OPT_NO_INLINE = 256,
	OPT_NO_KERNEL,
	OPT_NO_FP,
	OPT_MAX_FRAMES,
	OPT_MAX_SCAN,
	OPT_KALLSYMS,
	OPT_BUILDID_DIR,
	OPT_EVENT,
	OPT_TRACE,
	OPT_STITCH,
	OPT_VALIDATE_STITCH,
	OPT_STITCH_MAX_NODES,
	OPT_STITCH_MEMORY,
	OPT_JIT_DIR,
	OPT_STATS_JSON,
	OPT_MIN_COVERAGE,
	OPT_SYMFS,
	OPT_ARCHIVE,
	OPT_ARCHIVE_MAX_FILE,
	OPT_ARCHIVE_MAX_TOTAL,
	OPT_DEBUGINFOD_MAXSIZE,
	OPT_DEBUGINFO_DIR,
	OPT_DEBUGINFOD,
	OPT_OFFLINE,
	OPT_DWARF_CACHE,
	OPT_NO_DWARF_CACHE,
	OPT_PROFILE,
	OPT_PID_FILTER,
	OPT_TID_FILTER,
	OPT_COMMS,
	OPT_TIME,
};

/* -j / --jobs: accepted by every command that resolves samples. */

const struct option run_long_options[] = {
	{ "no-inline", no_argument, NULL, OPT_NO_INLINE },
	{ "no-kernel", no_argument, NULL, OPT_NO_KERNEL },
	{ "no-fp", no_argument, NULL, OPT_NO_FP },
	{ "max-frames", required_argument, NULL, OPT_MAX_FRAMES },
	{ "max-scan", required_argument, NULL, OPT_MAX_SCAN },
	{ "kallsyms", required_argument, NULL, OPT_KALLSYMS },
	{ "buildid-dir", required_argument, NULL, OPT_BUILDID_DIR },
	{ "event", required_argument, NULL, OPT_EVENT },
	{ "profile", required_argument, NULL, OPT_PROFILE },
	{ "quiet", no_argument, NULL, 'q' },
	{ "trace-unwind", no_argument, NULL, OPT_TRACE },
	{ "stitch", required_argument, NULL, OPT_STITCH },
	{ "validate-stitch", no_argument, NULL, OPT_VALIDATE_STITCH },
	{ "stitch-max-nodes", required_argument, NULL, OPT_STITCH_MAX_NODES },
	{ "stitch-memory", required_argument, NULL, OPT_STITCH_MEMORY },
	{ "jit-dir", required_argument, NULL, OPT_JIT_DIR },
	{ "jobs", required_argument, NULL, 'j' },
	{ "stats-json", required_argument, NULL, OPT_STATS_JSON },
	{ "min-coverage", required_argument, NULL, OPT_MIN_COVERAGE },
	{ "symfs", required_argument, NULL, OPT_SYMFS },
	{ "archive", required_argument, NULL, OPT_ARCHIVE },
	{ "archive-max-file", required_argument, NULL, OPT_ARCHIVE_MAX_FILE },
	{ "archive-max-total", required_argument, NULL,
	  OPT_ARCHIVE_MAX_TOTAL },
	{ "debuginfod-maxsize", required_argument, NULL,
	  OPT_DEBUGINFOD_MAXSIZE },
	{ "debuginfo-dir", required_argument, NULL, OPT_DEBUGINFO_DIR },
	{ "debuginfod", required_argument, NULL, OPT_DEBUGINFOD },
	{ "offline", no_argument, NULL, OPT_OFFLINE },
	{ "dwarf-cache", required_argument, NULL, OPT_DWARF_CACHE },
	{ "no-dwarf-cache", no_argument, NULL, OPT_NO_DWARF_CACHE },
	/* convert's own --pid / --tid come first: there a value is needed
	 * (--pid=LIST), bare they name folded frames */
	{ "pid", required_argument, NULL, OPT_PID_FILTER },
	{ "tid", required_argument, NULL, OPT_TID_FILTER },
	{ "pids", required_argument, NULL, OPT_PID_FILTER },
	{ "tids", required_argument, NULL, OPT_TID_FILTER },
	{ "comms", required_argument, NULL, OPT_COMMS },
	{ "time", required_argument, NULL, OPT_TIME },
	{ NULL, 0, NULL, 0 },
};

const char *const run_usage_lines[] = {
	"  -j, --jobs N            worker threads resolving samples (default:",
	"                          the number of cores less one, at least 1;",
	"                          on two cores, two for a large file whose",
	"                          first samples show two busy threads; the",
	"                          output is the same for every N)",
	"      --event NAME        use samples of this event (default: the",
	"                          first event that has samples)",
	"      --profile KIND      cpu (default), offcpu or wall: weights in",
	"                          nanoseconds of waiting, or of wall-clock",
	"                          time (docs/offcpu.md)",
	"      --pids LIST         only samples of these processes (pids",
	"                          separated by commas; also --pid=LIST)",
	"      --tids LIST         only samples of these threads (also",
	"                          --tid=LIST)",
	"      --comms LIST        only samples of threads with these command",
	"                          names at the sample (as perf script)",
	"      --time RANGE        only samples in START,END (seconds, as",
	"                          perf script prints them; either end may",
	"                          be left out) or in percent of the capture:",
	"                          10%/2 (the second tenth), 0%-25%; lists as",
	"                          perf script's --time",
	"      --no-inline         no frames for inlined functions",
	"      --no-kernel         drop kernel frames",
	"      --no-fp             never use a frame-pointer step where CFI is",
	"                          missing",
	"      --max-frames N      frame limit per sample (default 1024)",
	"      --max-scan N        frames a stack scan may recover per sample",
	"                          where CFI and frame pointers fail (default",
	"                          2; 0 disables scanning)",
	"      --kallsyms FILE     kernel symbols (default: those a sysprof",
	"                          capture carries, else the build-id",
	"                          cache's copy of the capture's kernel, else",
	"                          /proc/kallsyms when the capture was recorded",
	"                          on this machine and kernel)",
	"      --buildid-dir DIR   a perf build-id cache to find binaries in",
	"                          (repeatable; default $PERF_BUILDID_DIR or",
	"                          ~/.debug)",
	"      --symfs DIR         look for recorded paths under DIR first",
	"      --archive FILE      a `perf archive` tarball to find binaries",
	"                          and kernel symbols in (after the caches)",
	"      --archive-max-file MIB  the largest archive entry extracted",
	"                          (default 1024)",
	"      --archive-max-total MIB  the most an archive may hold (default",
	"                          4096)",
	"      --debuginfo-dir DIR  a directory of .build-id/xx/rest[.debug]",
	"                          files (repeatable; /usr/lib/debug is last)",
	"      --debuginfod URL    a debuginfod server (repeatable; default",
	"                          $DEBUGINFOD_URLS), asked last, up front, for",
	"                          missing executables and debuginfo",
	"                          ($DEBUGINFOD_TIMEOUT: seconds, default 30)",
	"      --debuginfod-maxsize MIB  the largest download (default",
	"                          $DEBUGINFOD_MAXSIZE bytes, else 1024 MiB)",
	"      --offline           no debuginfod lookups",
	"      --dwarf-cache DIR   keep decompressed debug info in DIR for",
	"                          later runs (default",
	"                          $XDG_CACHE_HOME/restack/dwarf, else",
	"                          ~/.cache/restack/dwarf)",
	"      --no-dwarf-cache    neither read nor write that cache",
	"      --stitch=MODE       on (default): complete stacks the stack copy",
	"                          cut short from the thread's other samples,",
	"                          through frames only ever seen with one",
	"                          caller (else: [truncated: ambiguous caller]);",
	"                          strict: only callers seen in the sample's",
	"                          own activation of the frame; off",
	"      --stitch-max-nodes N  root-cache frames kept per thread",
	"                          (default 65536)",
	"      --stitch-memory MIB root-cache memory for all threads",
	"                          (default 64)",
	"      --jit-dir DIR       where perf-PID.map and jit-PID.dump files are",
	"                          (repeatable; also looked for next to the",
	"                          capture, at their recorded path and in /tmp)",
	"      --validate-stitch   cut complete stacks short, stitch them without",
	"                          what they showed, and report how many come",
	"                          back exact, honestly cut or wrong",
	"      --stats-json FILE   the statistics of every input as JSON",
	"                          ('-': standard output), for CI",
	"      --min-coverage PCT  exit status 1 when fewer than PCT percent of",
	"                          an input's samples reached their thread's",
	"                          root (the output is still written)",
	"  -q, --quiet             no warnings, summaries or progress on",
	"                          stderr (progress shows only on a terminal)",
	"      --trace-unwind      print every unwinding step to stderr",
	NULL,
};

int run_option_or_usage(struct run_opts *o, int c, const char *arg,
			const char *cmd, const char *const *usage,
			const char *given)
{
	int rc;

	if (c == '?' || c == ':')
		return cmd_usage_error(usage, "%s: bad or incomplete option '%s'",
				       cmd, given);
	rc = run_parse_option(o, c, arg);
	if (rc < 0)
		return EXIT_USAGE;
	if (rc == 0)
		return cmd_usage_error(usage, "%s: unknown option '%s'", cmd,
				       given);
	return 0;
}

int run_parse_option(struct run_opts *o, int c, const char *arg)
{
	char *end;
	unsigned long v;

	switch (c) {
	case OPT_NO_INLINE:
		o->no_inline = true;
		return 1;
	case OPT_NO_KERNEL:
		o->no_kernel = true;
		return 1;
	case OPT_NO_FP:
		o->no_fp = true;
		return 1;
	case OPT_MAX_FRAMES:
		v = strtoul(arg, &end, 10);
		if (*end || v < 1 || v > 1000000) {
			cmd_error("--max-frames takes a number from 1 to "
				  "1000000, not '%s'", arg);
			return -1;
		}
		o->max_frames = (unsigned)v;
		return 1;
	case OPT_MAX_SCAN:
		v = strtoul(arg, &end, 10);
		if (!*arg || *end || v > 1000) {
			cmd_error("--max-scan takes a number from 0 to 1000, "
				  "not '%s'", arg);
			return -1;
		}
		o->max_scan = (unsigned)v;
		o->max_scan_set = true;
		return 1;
	case OPT_KALLSYMS:
		o->kallsyms = arg;
		return 1;
	case OPT_BUILDID_DIR:
		if (o->nr_buildid_dirs >= RUN_MAX_BUILDID_DIRS) {
			cmd_error("at most %d --buildid-dir options",
				  RUN_MAX_BUILDID_DIRS);
			return -1;
		}
		o->buildid_dirs[o->nr_buildid_dirs++] = arg;
		return 1;
	case OPT_EVENT:
		o->event = arg;
		return 1;
	case OPT_PROFILE:
		if (!strcmp(arg, "cpu") || !strcmp(arg, "offcpu") ||
		    !strcmp(arg, "wall")) {
			o->profile = *arg == 'c' ? RUN_PROFILE_CPU :
				     *arg == 'o' ? RUN_PROFILE_OFFCPU :
						   RUN_PROFILE_WALL;
			return 1;
		}
		cmd_error("--profile is cpu, offcpu or wall, not '%s'", arg);
		return -1;
	case 'q':
		o->quiet = o->lookup.quiet = true;
		return 1;
	case 'j':
		v = strtoul(arg, &end, 10);
		if (!*arg || *end || v < 1 || v > POOL_MAX_WORKERS) {
			cmd_error("-j takes a number from 1 to %d, not '%s'",
				  POOL_MAX_WORKERS, arg);
			return -1;
		}
		o->jobs = (unsigned)v;
		return 1;
	case OPT_TRACE:
		o->trace = true;
		return 1;
	case OPT_STITCH:
		if (!strcmp(arg, "off")) {
			o->no_stitch = true;
		} else if (!strcmp(arg, "strict")) {
			o->stitch_strict = true;
		} else if (strcmp(arg, "on")) {
			cmd_error("--stitch is on, strict or off, not '%s'",
				  arg);
			return -1;
		}
		return 1;
	case OPT_JIT_DIR:
		if (o->nr_jit_dirs >= RUN_MAX_BUILDID_DIRS) {
			cmd_error("at most %d --jit-dir options",
				  RUN_MAX_BUILDID_DIRS);
			return -1;
		}
		o->jit_dirs[o->nr_jit_dirs++] = arg;
		return 1;
	case OPT_STATS_JSON:
		o->stats_json = arg;
		return 1;
	case OPT_MIN_COVERAGE: {
		double d = strtod(arg, &end);

		if (!*arg || *end || !(d >= 0 && d <= 100)) {
			cmd_error("--min-coverage takes a percentage from 0 to "
				  "100, not '%s'", arg);
			return -1;
		}
		o->min_coverage = d;
		return 1;
	}
	case OPT_SYMFS:
		o->lookup.symfs = arg;
		return 1;
	case OPT_ARCHIVE:
		o->lookup.archive = arg;
		return 1;
	case OPT_ARCHIVE_MAX_FILE:
	case OPT_ARCHIVE_MAX_TOTAL:
	case OPT_DEBUGINFOD_MAXSIZE:
		v = strtoul(arg, &end, 10);
		if (!*arg || *end || v < 1 || v > (1ul << 30)) {
			cmd_error("--%s takes MiB from 1 to %lu, not '%s'",
				  c == OPT_ARCHIVE_MAX_FILE ? "archive-max-file" :
				  c == OPT_ARCHIVE_MAX_TOTAL ?
					  "archive-max-total" :
					  "debuginfod-maxsize",
				  1ul << 30, arg);
			return -1;
		}
		*(c == OPT_ARCHIVE_MAX_FILE ? &o->lookup.archive_max_file :
		  c == OPT_ARCHIVE_MAX_TOTAL ? &o->lookup.archive_max_total :
					       &o->lookup.dbgd_maxsize) =
			(uint64_t)v << 20;
		return 1;
	case OPT_DEBUGINFO_DIR:
	case OPT_DEBUGINFOD:
		if ((c == OPT_DEBUGINFOD ? o->lookup.nr_urls :
					   o->lookup.nr_debug_dirs) >=
		    LOOKUP_MAX_DIRS) {
			cmd_error("at most %d --%s options", LOOKUP_MAX_DIRS,
				  c == OPT_DEBUGINFOD ? "debuginfod" :
							"debuginfo-dir");
			return -1;
		}
		if (c == OPT_DEBUGINFOD)
			o->lookup.urls[o->lookup.nr_urls++] = arg;
		else
			o->lookup.debug_dirs[o->lookup.nr_debug_dirs++] = arg;
		return 1;
	case OPT_OFFLINE:
		o->lookup.offline = true;
		return 1;
	case OPT_DWARF_CACHE:
	case OPT_NO_DWARF_CACHE:
		/* process-wide; no image is built before options are read */
		dwcache_set_dir(c == OPT_DWARF_CACHE ? arg : NULL);
		return 1;
	case OPT_VALIDATE_STITCH:
		o->validate_stitch = true;
		return 1;
	case OPT_STITCH_MAX_NODES:
		v = strtoul(arg, &end, 10);
		if (*end || v < 1 || v > 100000000) {
			cmd_error("--stitch-max-nodes takes a number from 1 to "
				  "100000000, not '%s'", arg);
			return -1;
		}
		o->stitch_max_nodes = v;
		return 1;
	case OPT_STITCH_MEMORY:
		v = strtoul(arg, &end, 10);
		if (*end || v < 1 || v > 65536) {
			cmd_error("--stitch-memory takes MiB from 1 to 65536, "
				  "not '%s'", arg);
			return -1;
		}
		o->stitch_memory = v;
		return 1;
	case OPT_PID_FILTER:
	case OPT_TID_FILTER:
	case OPT_COMMS:
	case OPT_TIME: {
		char msg[512];
		int rc = c == OPT_COMMS ?
			 sfilter_add_comms(&o->filter, arg, msg, sizeof(msg)) :
			 c == OPT_TIME ?
			 sfilter_set_time(&o->filter, arg, msg, sizeof(msg)) :
			 sfilter_add_ids(&o->filter, c == OPT_TID_FILTER, arg,
					 msg, sizeof(msg));

		if (rc < 0) {
			cmd_error("%s", msg);
			return -1;
		}
		return 1;
	}
	default:
		return 0;
	}
}

/* /proc/kallsyms is usable: readable and showing real addresses. */
static bool run_proc_kallsyms_ok(void)
{
	char line[256];
	FILE *f = fopen("/proc/kallsyms", "re");
	bool ok = false;

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (strtoull(line, NULL, 16) != 0) {
			ok = true;
			break;
		}
	}
	fclose(f);
	return ok;
}

/*
 * The kernel symbols the capture carries, copied to a temporary file (the
 * symbolizer reads a file), registered for the signal clean-up as
 * run->kallsyms_clean; NULL when it cannot be written.
 */
static char *run_embedded_kallsyms(struct run *run,
				   const struct perfdata_info *in)
{
	static const char name[] = "/restack-kallsyms-XXXXXX";
	const char *dir = getenv("TMPDIR");
	struct err err;
	char *path;
	int fd;

	if (!dir || !dir[0])
		dir = "/tmp";
	path = malloc(strlen(dir) + sizeof(name));
	if (!path)
		return NULL;
	strcpy(path, dir);
	strcat(path, name);
	fd = sigclean_mkstemp(path, &run->kallsyms_clean);
	if (fd < 0) {
		free(path);
		return NULL;
	}
	if (fdout_write(fd, in->kallsyms, in->kallsyms_size,
			"kernel symbols", &err) < 0 || close(fd) < 0) {
		unlink(path);
		sigclean_del(run->kallsyms_clean);
		run->kallsyms_clean = 0;
		free(path);
		return NULL;
	}
	return path;
}

const char *run_kallsyms_shown(const struct run *run)
{
	return run->kallsyms_temp ? "the capture's /proc/kallsyms" :
				    run->kallsyms_used;
}

/* Chooses the kernel symbols file; NULL when there is none. */
static char *run_pick_kallsyms(struct run *run,
			       const struct perfdata_info *in,
			       const char *const *dirs, unsigned nr_dirs)
{
	struct utsname u;
	unsigned i, k;

	if (run->opts->kallsyms)
		return mem_strdup(run->opts->kallsyms);
	/* What the capture carries is its kernel's, wherever it is read. */
	if (in->kallsyms && in->kallsyms_size) {
		char *path = run_embedded_kallsyms(run, in);

		if (path) {
			run->kallsyms_temp = true;
			return path;
		}
	}
	/*
	 * The build-id cache keeps a copy made when the capture was
	 * recorded: exactly that kernel, and cheaper to read than /proc.
	 */
	for (i = 0; i < in->nr_build_ids; i++) {
		const struct perfdata_build_id *b = &in->build_ids[i];
		char hex[41], path[4096];

		if (strcmp(b->filename, "[kernel.kallsyms]"))
			continue;
		module_build_id_hex(b->build_id, b->size, hex);
		for (k = 0; k < nr_dirs; k++) {
			snprintf(path, sizeof(path),
				 "%s/.build-id/%.2s/%s/kallsyms", dirs[k], hex,
				 hex + 2);
			if (access(path, R_OK) == 0)
				return mem_strdup(path);
		}
	}
	if (in->hostname && in->osrelease && uname(&u) == 0 &&
	    !strcmp(u.nodename, in->hostname) &&
	    !strcmp(u.release, in->osrelease) && run_proc_kallsyms_ok())
		return mem_strdup("/proc/kallsyms");
	return NULL;
}

static void run_trace(void *ctx, const char *line)
{
	(void)ctx;
	fprintf(stderr, "%s\n", line);
}

void run_modcaches_release(struct run_modcaches *c)
{
	unsigned i;

	for (i = 0; i < POOL_MAX_WORKERS; i++)
		if (c->ready[i])
			modcache_release(&c->mc[i]);
	memset(c, 0, sizeof(*c));
}

/*
 * Modules one kept cache may hold between runs: each keeps up to two file
 * descriptors open, and all caches together take at most a quarter of the
 * process's limit.
 */
static unsigned run_max_kept(unsigned jobs)
{
	struct rlimit rl;
	rlim_t fds = 1024;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		fds = rl.rlim_cur;
	fds = fds / 4 / 2 / (jobs ? jobs : 1);
	return fds > RUN_MAX_KEPT ? RUN_MAX_KEPT : (unsigned)fds;
}

/* Worker index's kept module cache, or NULL when runs keep none. */
static struct modcache *run_modcache(struct run *run, unsigned index)
{
	struct run_modcaches *c = run->opts->modcaches;

	if (!c || index >= POOL_MAX_WORKERS)
		return NULL;
	if (!c->ready[index]) {
		modcache_init(&c->mc[index], NULL);
		c->ready[index] = true;
	}
	c->mc[index].max_kept = run_max_kept(run->jobs);
	return &c->mc[index];
}

/* modload_opts.full: the sysprof stream's read-ahead is full. */
static bool run_backlogged(void *ctx)
{
	return source_backlogged(ctx);
}

/*
 * A sysprof stream's writer is not kept waiting for a module that is slow
 * to load (unwind/modload.h): it loads on a thread of its own, and the
 * samples that need it wait while the read-ahead queue has room.  A
 * loader per worker, each worker's modules being its own.
 */
static int run_start_loader(struct run *run, unsigned index,
			    struct resolve *r, struct err *err)
{
	const struct modload_opts lo = {
		.full = run_backlogged,
		.ctx = run->rd,
		.inline_names = !run->opts->no_inline,
		.threads = run->jobs > 1 ? 1 : 0,
	};

	if (index >= POOL_MAX_WORKERS || !source_reads_ahead(run->rd))
		return 0;
	run->loaders[index] = modload_start(r->mc, &lo, err);
	return run->loaders[index] ? 0 : -1;
}

/* Every module loaded; says how many samples did not wait for one. */
static void run_stop_loaders(struct run *run)
{
	uint64_t n = 0;
	unsigned i;

	for (i = 0; i < POOL_MAX_WORKERS; i++) {
		if (!run->loaders[i])
			continue;
		n += modload_missed(run->loaders[i]);
		modload_stop(run->loaders[i]);
		run->loaders[i] = NULL;
	}
	if (n && !run->opts->quiet)
		cmd_error("warning: %s: %llu samples went on while a module "
			  "they needed was still loading (the stream's "
			  "read-ahead queue was full): its frames are not "
			  "named, a walk that needed its CFI ends as "
			  "[truncated: module loading]",
			  run->path, (unsigned long long)n);
}

/*
 * Sets up the resolver of worker index (0: the first, or the only one)
 * with the options run_init_resolver() worked out.
 */
int run_setup_resolver(void *ctx, unsigned index, struct resolve *r,
		       struct err *err)
{
	struct run *run = ctx;
	const struct perfdata_info *in = source_info(run->rd);
	struct resolve_opts ro = run->ro;
	unsigned i;

	ro.mc = run_modcache(run, index);
	if (resolve_init(r, &ro, run->arch, err) < 0)
		return -1;
	resolve_begin_pass(r, run->first_pass);
	for (i = 0; i < in->nr_build_ids; i++) {
		const struct perfdata_build_id *b = &in->build_ids[i];

		if (!b->from_mmap &&
		    modcache_note_build_id(r->mc, b->filename, b->build_id,
					   b->size) < 0)
			return err_set(err, ERR_NOMEM, ERR_NO_OFF,
				       "build-id list");
	}
	if (run->opts->trace)
		r->uw.trace = run_trace;
	return run_start_loader(run, index, r, err);
}

/*
 * Hands sample s to fn, its user frames named as perf's addr2line named
 * them by now (a2lstate.h): run_emit()'s callers and run_pass() give the
 * samples in output order, one at a time.  Returns fn's result, or -1
 * when out of memory.
 */
int run_give(struct run *run, run_sample_fn fn, void *ctx,
	     const struct rsample *s)
{
	struct rsample copy;
	uint32_t i;

	for (i = s->nr_kernel; i < s->nr_frames; i++)
		if (s->frames[i].loc && s->frames[i].loc->a2l)
			break;
	if (i == s->nr_frames)
		return fn(ctx, s);
	if (mem_grow(&run->a2l_frames, &run->alloc_a2l_frames,
		     sizeof(*run->a2l_frames), s->nr_frames) < 0)
		return -1;
	memcpy(run->a2l_frames, s->frames, s->nr_frames * sizeof(*s->frames));
	for (; i < s->nr_frames; i++) {
		struct rframe *f = &run->a2l_frames[i];

		f->loc = a2lstate_loc(&run->a2l, f->loc);
		if (!f->loc)
			return -1;
	}
	copy = *s;
	copy.frames = run->a2l_frames;
	return fn(ctx, &copy);
}

int run_emit(void *ctx, const struct rsample *s)
{
	struct run *run = ctx;

	return run->fn ? run_give(run, run->fn, run->fn_ctx, s) : 0;
}

unsigned run_jobs(const struct run_opts *o)
{
	long n;

	/* one readable trace */
	if (o->trace)
		return 1;
	if (o->jobs)
		return o->jobs;
	/*
	 * A worker per core but one, so one on two cores: there a second
	 * worker gains only on large captures of several busy threads
	 * (1.6x to 1.8x on make bench's large one), and loses on small
	 * captures and on those of one busy thread (0.7x to 1.0x), while
	 * its reader, resolver and rings take 10-30 MiB more (docs/performance.md, "Two
	 * workers").  A large file of several busy threads gets two there
	 * (run_auto.c).
	 */
	n = sysconf(_SC_NPROCESSORS_ONLN) - 1;
	return n < 1 ? 1 : n > POOL_MAX_WORKERS ? POOL_MAX_WORKERS : (unsigned)n;
}

/*
 * Workers for the run (sharded: on a file, run_shard.c).  Writers that
 * take every record get them in order through the sharded merge only, in
 * a pass that a first pass over the file went before (stitching on: what
 * run_module_build_id() tells them must not depend on the workers' pace).
 */
static unsigned run_workers(const struct run *run, bool sharded)
{
	const struct run_opts *o = run->opts;

	if (o->on_record && (!sharded || o->no_stitch))
		return 1;
	return sharded && run->auto_jobs ? run->auto_jobs : run_jobs(o);
}

/* Stops the warmup thread, its cache writes done; nothing uses it after. */
static void run_stop_warmup(struct run *run)
{
	run->kallsyms_once.warmup = NULL;
	warmup_stop(run->warmup);
	run->warmup = NULL;
}

int run_init_resolver(struct run *run, const struct perfdata_info *in)
{
	const struct run_opts *o = run->opts;
	struct resolve_opts ro = { 0 };
	unsigned jobs = run->jobs = run_workers(run, run->sharded);
	struct utsname u;
	const char *const *dirs = o->buildid_dirs;
	unsigned nr_dirs = o->nr_buildid_dirs;
	struct err err;
	enum event_arch arch = in->arch_id;
	unsigned i;

	if (!nr_dirs) {
		const char *env = getenv("PERF_BUILDID_DIR");
		const char *home = getenv("HOME");

		if (env && *env)
			snprintf(run->home_buf, sizeof(run->home_buf), "%s",
				 env);
		else if (home && *home)
			snprintf(run->home_buf, sizeof(run->home_buf),
				 "%s/.debug", home);
		if (run->home_buf[0]) {
			run->home_debug = run->home_buf;
			dirs = &run->home_debug;
			nr_dirs = 1;
		}
	}
	if (arch == EVENT_ARCH_UNKNOWN && in->arch && *in->arch) {
		/* never another architecture's registers by this one's rules */
		for (i = 0; i < in->nr_attrs; i++) {
			if (!in->attrs[i].sample_regs_user)
				continue;
			cmd_error("%s: recorded on %s, whose registers restack "
				  "cannot unwind (x86_64, aarch64, i386)",
				  run->path, in->arch);
			return -1;
		}
	} else if (arch == EVENT_ARCH_UNKNOWN) {
		/* No ARCH feature: assume this machine's. */
		if (uname(&u) == 0)
			arch = !strcmp(u.machine, "aarch64") ?
				       EVENT_ARCH_AARCH64 :
				       EVENT_ARCH_X86_64;
	}
	run->lookup_ready = true;   /* lookup_release() copes with a failure */
	if (lookup_init(&run->lookup, &o->lookup, run->path, in, dirs,
			nr_dirs) < 0)
		return -1;
	run->kallsyms_used = o->no_kernel ? NULL :
			     run_pick_kallsyms(run, in, run->lookup.dir_paths,
					       run->lookup.nr_dirs);
	ro.no_inline = o->no_inline;
	ro.no_kernel = o->no_kernel;
	ro.no_fp = o->no_fp;
	ro.max_frames = o->max_frames;
	ro.max_scan = o->max_scan_set ? o->max_scan : UNWIND_SCAN_DEFAULT;
	ro.kallsyms = run->kallsyms_used;
	run->warmup = warmup_start();
	ro.warmup = run->warmup;
	/* one worker goes on unwinding while the warmup thread inflates
	 * DWARF its frames' names need (run_held.c); a writer of every
	 * record takes each sample with its record, at once; a stream
	 * read ahead loads modules on threads of their own (modload.h) */
	ro.defer_names = jobs == 1 && run->warmup && !o->no_inline &&
			 !o->on_record && !o->trace &&
			 !source_reads_ahead(run->rd);
	/* (with filters, the samples kept may need few of them) */
	if (!o->no_inline && !run->filtering) {
		run_warm_listed(run, in);
		run_warm_mapped(run, in);
	}
	if ((jobs > 1 || run->warmup) && run->kallsyms_used) {
		/* one copy of the kernel's symbols for all workers, read
		 * ahead when there is a core to spare */
		if (kallsyms_once_init(&run->kallsyms_once,
				       run->kallsyms_used) < 0) {
			cmd_error("out of memory");
			return -1;
		}
		run->kallsyms_shared = true;
		ro.kallsyms_shared = &run->kallsyms_once;
		run->kallsyms_once.warmup = run->warmup;
		warmup_kallsyms(run->warmup, &run->kallsyms_once);
	}
	ro.buildid_dirs = dirs;
	ro.nr_buildid_dirs = nr_dirs;
	ro.locate = &run->lookup.loc;
	ro.use_live_vdso = in->hostname && in->osrelease && uname(&u) == 0 &&
			   !strcmp(u.release, in->osrelease);
	ro.no_stitch = o->no_stitch;
	ro.stitch.refuse_stale = o->stitch_strict;
	ro.stitch.max_thread_nodes = o->stitch_max_nodes;
	/* the root-cache budget is for all workers together */
	ro.stitch.max_nodes = (o->stitch_memory ? o->stitch_memory : 64) *
			      (1ul << 20) / stitcher_node_bytes() / jobs;
	ro.validate_stitch = o->validate_stitch && !o->no_stitch;
	/* JIT files: --jit-dir, then next to the capture. */
	for (i = 0; i < o->nr_jit_dirs; i++)
		run->jit_dirs[i] = o->jit_dirs[i];
	if (strcmp(run->path, "-")) {
		const char *slash = strrchr(run->path, '/');

		snprintf(run->capture_dir, sizeof(run->capture_dir), "%.*s",
			 slash ? (int)(slash - run->path) : 1,
			 slash ? run->path : ".");
		if (!run->capture_dir[0])
			strcpy(run->capture_dir, "/");
		run->jit_dirs[i++] = run->capture_dir;
	}
	ro.jit_dirs = run->jit_dirs;
	ro.nr_jit_dirs = i;
	run->ro = ro;
	run->arch = arch;
	if (run_setup_resolver(run, 0, &run->res, &err) < 0) {
		cmd_report_err(run->path, &err);
		resolve_release(&run->res);
		return -1;
	}
	run->res_ready = true;
	if (jobs > 1 && !run->sharded) {
		run->pool = pool_start(jobs, &run->res, run_setup_resolver, run,
				       run_emit, run, &err);
		if (!run->pool) {
			cmd_report_err(run->path, &err);
			return -1;
		}
	}
	return 0;
}

bool run_resolves(const struct event *ev)
{
	return ev->type == EVENT_SAMPLE || ev->type == EVENT_MMAP ||
	       ev->type == EVENT_COMM || ev->type == EVENT_FORK ||
	       ev->type == EVENT_EXIT || ev->type == EVENT_BUILD_ID ||
	       ev->type == EVENT_JIT;
}

bool run_event_named(const struct run_opts *o, const char *name)
{
	return !o->event || !strcmp(o->event, name ? name : "");
}

int run_profile_wants(const struct run_opts *o, const char *name)
{
	if (!o->profile)
		return 0;
	if (name && !strcmp(name, RUN_SCHED_SWITCH))
		return 1;
	return o->profile == RUN_PROFILE_OFFCPU ? -1 : 0;
}

static bool run_want_sample(struct run *run, const struct event *ev)
{
	int idx = ev->attr ? (int)ev->attr->index : 0;
	int pw = run_profile_wants(run->opts, ev->attr ? ev->attr->name :
							 NULL);

	if (pw > 0)
		return true;
	if (pw < 0)
		goto other;
	if (run->event_attr < 0) {
		if (!run_event_named(run->opts, ev->attr ? ev->attr->name :
							   NULL))
			goto other;
		run->event_attr = idx;
	}
	if (idx == run->event_attr)
		return true;
other:
	run->other_event_samples++;
	return false;
}

/* Seconds on the monotonic clock. */
static double run_clock(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * A progress line on stderr every 4096 records, four times a second at
 * most but at once in a new pass, when stderr is a terminal; done clears
 * it.
 */
void run_progress(struct run *run, const struct event *ev, bool done)
{
	const struct perfdata_info *in;
	double now;

	if (!run->progress)
		return;
	if (done) {
		if (run->progress_shown)
			fputs("\r\033[K", stderr);
		run->progress_shown = false;
		return;
	}
	/* ev->order counts the records a worker's filter dropped too */
	if (ev->order >> 12 == run->progress_tick)
		return;
	run->progress_tick = ev->order >> 12;
	now = run_clock();
	/* a new pass says so at once */
	if (now - run->progress_at < 0.25 &&
	    run->progress_pass == run->pass_no)
		return;
	run->progress_pass = run->pass_no;
	run->progress_at = now;
	run->progress_shown = true;
	in = source_info(run->rd);
	if (in->file_size && in->file_size != UINT64_MAX)
		fprintf(stderr, "\rrestack: %s: %s%3.0f%%", run->path,
			run->pass_no > 1 ? "second pass " : "",
			100.0 * (double)ev->file_off / (double)in->file_size);
	else
		fprintf(stderr, "\rrestack: %s: %s%llu records", run->path,
			run->pass_no > 1 ? "second pass " : "",
			(unsigned long long)ev->order + 1);
}

/*
 * One pass over a reader's events.  fn NULL: a prescan that only fills the
 * root caches.  Returns 0, or -1 after printing the error.
 */
static void *run_hold(void *ctx)
{
	return source_hold(ctx);
}

static void run_release(void *ctx, void *token)
{
	source_release(ctx, token);
}

/*
 * After a failed pass: the workers may still hold bytes of the pass's
 * reader, to be given back through a struct pool_source that lives only as
 * long as the pass; wait for them and take everything back now.
 */
static void run_pass_abandon(struct run *run)
{
	if (run->pool)
		(void)pool_drain(run->pool);
}

static int run_pass(struct run *run, struct source *rd,
		    run_sample_fn fn, void *ctx)
{
	/* the workers read samples' stack bytes where the reader has them */
	const struct pool_source src = { run_hold, run_release, rd };

	run->fn = fn;
	run->fn_ctx = ctx;
	run->pass_no++;
	const struct run_opts *opts = run->opts;
	uint64_t wanted = 0;
	bool mapping_ahead = false;
	struct event ev;
	struct rsample rs;
	int rc;

	run_record_fn on_record = fn ? opts->on_record : NULL;
	run_event_fn on_event = fn && !run->events_given ? opts->on_event :
							     NULL;

	sfilter_names_release(&run->names);
	while ((rc = source_next(rd, &ev)) > 0) {
		bool want;

		run_progress(run, &ev, false);
		if (on_event && ev.type != EVENT_SAMPLE &&
		    on_event(opts->event_ctx, &ev) < 0)
			goto oom;
		if (run->filtering && sfilter_names_event(&run->names, &ev) < 0)
			goto oom;
		if (!run_resolves(&ev)) {
			if (on_record && on_record(opts->record_ctx,
						   source_info(rd), &ev,
						   NULL) < 0)
				return -1;
			continue;
		}
		if (!run->res_ready &&
		    run_init_resolver(run, source_info(rd)) < 0)
			return -1;
		/* with workers, this thread is the one to spare */
		if (run->pool && !mapping_ahead && source_perfdata(rd)) {
			perfdata_map_ahead(source_perfdata(rd));
			mapping_ahead = true;
		}
		want = ev.type != EVENT_SAMPLE || run_want_sample(run, &ev);
		/* neither unwound nor written, of any event */
		if (ev.type == EVENT_SAMPLE && run->filtering &&
		    !sfilter_keep(&run->filter, &run->names, ev.pid, ev.tid,
				  ev.time)) {
			run->filtered += want;
			continue;
		}
		if (!want) {
			if (on_record && on_record(opts->record_ctx,
						   source_info(rd), &ev,
						   NULL) < 0)
				return -1;
			continue;
		}
		if (ev.type == EVENT_SAMPLE && opts->trace && fn)
			fprintf(stderr, "sample pid=%d tid=%d time=%llu\n",
				ev.pid, ev.tid, (unsigned long long)ev.time);
		if (ev.type == EVENT_SAMPLE)
			wanted++;
		if (run->pool) {
			if (pool_event(run->pool, &ev, &src) < 0)
				goto oom;
		} else {
			rc = resolve_event(&run->res, &ev, &rs);
			if (rc < 0)
				goto oom;
			if (rc > 0 && run_held_give(run, &rs) < 0)
				goto oom;
			if (on_record && on_record(opts->record_ctx,
						   source_info(rd), &ev,
						   rc > 0 ? &rs : NULL) < 0)
				return -1;
		}
		/* the rest of the input has nothing for this pass */
		if (run->stop_after && wanted == run->stop_after) {
			rc = 0;
			break;
		}
	}
	run_progress(run, NULL, true);
	if (rc < 0) {
		cmd_report_err(run->path, source_err(rd));
		run_pass_abandon(run);
		return -1;
	}
	if (run->pool && pool_drain(run->pool) < 0)
		goto oom;
	if (run_held_flush(run) < 0)
		goto oom;
	if (on_event)
		run->events_given = true;
	return 0;
oom:
	run_progress(run, NULL, true);
	cmd_error("%s: out of memory", run->path);
	run_pass_abandon(run);
	return -1;
}

/* Starts a pass on the resolver or on every worker's. */
static int run_begin_pass(struct run *run, enum resolve_pass pass)
{
	if (!run->pool) {
		resolve_begin_pass(&run->res, pass);
		return 0;
	}
	if (pool_begin_pass(run->pool, pass) < 0) {
		cmd_error("%s: out of memory", run->path);
		return -1;
	}
	return 0;
}

void run_retry_missed(struct err *e, const struct resolve *r)
{
	err_set(e, ERR_CORRUPT, ERR_NO_OFF,
		"the second pass did not find %zu of the %zu samples the "
		"first left for it (did the file change?)",
		resolve_nr_unretried(r), resolve_nr_deferred(r));
}

/* A RETRY pass's reader filter: the samples the FIRST pass deferred. */
static enum sample_verdict run_retry_keeps(void *ctx,
					   const struct sample_key *k)
{
	const struct run *run = ctx;

	return resolve_deferred_at(&run->res, k->order) ? SAMPLE_KEEP :
							   SAMPLE_DROP;
}

/* perfdata_visit_only()'s order */
static int run_visit_cmp(const void *a, const void *b)
{
	uint64_t x = perfdata_visit_off(*(const uint64_t *)a),
		 y = perfdata_visit_off(*(const uint64_t *)b);

	return x < y ? -1 : x > y;
}

bool run_retry_visits(const struct source *first_rd, struct source *rd,
		      struct resolve *res)
{
	struct perfdata_reader *first = source_perfdata(first_rd);
	const uint64_t *idx;
	uint64_t *offs;
	size_t n, i;

	if (!first || !source_perfdata(rd) ||
	    !perfdata_record_index(first, &idx, &n) ||
	    !resolve_retry_by_offset(res))
		return false;
	offs = mem_array(n + res->nr_deferred, sizeof(*offs));
	if (!offs)
		return true;    /* by offset still, every record read */
	memcpy(offs, idx, n * sizeof(*offs));
	for (i = 0; i < res->nr_deferred; i++)
		offs[n + i] = res->deferred[i].file_off;
	qsort(offs, n + res->nr_deferred, sizeof(*offs), run_visit_cmp);
	/* out of memory: every record read, as above */
	(void)perfdata_visit_only(source_perfdata(rd), offs,
				  n + res->nr_deferred);
	free(offs);
	return true;
}

/*
 * A further pass over a regular file, with its own reader: a PRESCAN
 * (fn NULL) or a RETRY.  Returns 0, or -1 after printing the error.
 */
static int run_extra_pass(struct run *run, enum resolve_pass pass,
			  run_sample_fn fn, void *ctx)
{
	uint64_t others = run->other_event_samples, filtered = run->filtered;
	struct source *rd;
	struct err err;
	int rc;

	rd = source_open(run->path, &err);
	if (!rd) {
		cmd_report_err(run->path, &err);
		return -1;
	}
	/* a resolver not yet set up is, at this pass's first sample, from
	 * what this reader read before it (a pipe-mode file's metadata
	 * comes as records), for run->first_pass */
	run->first_pass = pass;
	rc = run->res_ready ? run_begin_pass(run, pass) : 0;
	if (rc == 0 && pass == RESOLVE_RETRY && !run->pool &&
	    source_perfdata(rd)) {
		/* the reader skips the other samples undecoded, or all
		 * of the others when it knows where the deferred ones are */
		if (!run_retry_visits(run->rd, rd, &run->res)) {
			source_set_sample_filter(rd, run_retry_keeps, run,
						 SAMPLE_FILTER_DELIVERED);
			resolve_retry_by_order(&run->res);
		}
		run->stop_after = resolve_nr_deferred(&run->res);
	}
	if (rc == 0)
		rc = run_pass(run, rd, fn, ctx);
	if (rc == 0 && pass == RESOLVE_RETRY && !run->pool &&
	    resolve_nr_unretried(&run->res)) {
		run_retry_missed(&err, &run->res);
		cmd_report_err(run->path, &err);
		rc = -1;
	}
	source_close(rd);
	run->other_event_samples = others;   /* counted in one pass only */
	run->filtered = filtered;
	run->passes++;
	return rc;
}

/*
 * A note when stacks stop in JIT code without unwinding information (a
 * perf map names the code, nothing says where its caller is): how the
 * runtime can keep frame pointers, for Java its flag.  Said at 1% of the
 * samples or more.
 */
static void run_jit_note(const struct run *run, const char *path)
{
	const struct module *m;
	uint64_t n = 0, all = run->res.stats.samples;
	bool java = false;

	for (m = run->res.mc->all; m; m = m->next) {
		const char *base = strrchr(m->path, '/');

		if (locate_is_perf_map(m->path))
			n += m->no_cfi;
		else if (base && !strcmp(base, "/libjvm.so") &&
			 m->status != MODULE_PENDING)
			java = true;
	}
	if (!n || n * 100 < all)
		return;
	cmd_error("note: %s: %llu samples (%.1f%%) stop in JIT code without "
		  "unwinding information; %s", path, (unsigned long long)n,
		  100.0 * (double)n / (double)all,
		  java ? "run Java with -XX:+PreserveFramePointer (frame "
			 "pointers through compiled code)" :
			 "the runtime should keep frame pointers or write "
			 "its unwinding information to a jitdump");
}

/*
 * --time in percent: the capture's first and last sample times, from its
 * header as perf script takes them, else from a read of the file (a
 * stream cannot be read twice).  0, or -1 after printing the error.
 */
static int run_filter_span(struct sfilter *f, const char *path,
			   const struct perfdata_info *in, bool seekable)
{
	uint64_t first = UINT64_MAX, last = 0;
	struct source *src;
	struct event ev;
	struct err err;
	int rc;

	if (in->has_sample_time) {
		sfilter_set_span(f, in->first_sample_time,
				 in->last_sample_time);
		return 0;
	}
	if (!seekable) {
		cmd_error("%s: --time '%s' needs the first and last sample "
			  "times, which this stream's header does not give",
			  path, f->time_arg);
		return -1;
	}
	src = source_open(path, &err);
	if (!src) {
		cmd_report_err(path, &err);
		return -1;
	}
	while ((rc = source_next(src, &ev)) > 0) {
		if (ev.type != EVENT_SAMPLE || ev.time == EVENT_NO_TIME)
			continue;
		first = MIN(first, ev.time);
		last = MAX(last, ev.time);
	}
	if (rc < 0)
		cmd_report_err(path, source_err(src));
	source_close(src);
	if (rc < 0)
		return -1;
	sfilter_set_span(f, first == UINT64_MAX ? 0 : first, last);
	return 0;
}

int run_list_threads(const struct run_opts *opts, const char *path,
		     bool process, struct run_thread **out, size_t *nr)
{
	struct sfilter f = opts->filter;
	struct sfilter_names names;
	struct hashmap seen = HASHMAP_INIT;
	const struct perfdata_info *in;
	struct run_thread *t = NULL;
	size_t n = 0, alloc = 0;
	struct source *src;
	struct event ev;
	struct err err;
	int chosen = -1, rc;

	*out = NULL;
	*nr = 0;
	src = source_open(path, &err);
	if (!src) {
		cmd_report_err(path, &err);
		return -1;
	}
	in = source_info(src);
	f.split = false;
	if (sfilter_needs_span(&f) &&
	    run_filter_span(&f, path, in, in->file_size != UINT64_MAX) < 0) {
		source_close(src);
		return -1;
	}
	sfilter_names_init(&names);
	while ((rc = source_next(src, &ev)) > 0) {
		int idx = ev.attr ? (int)ev.attr->index : 0;
		const char *comm;
		uint64_t key;
		void *v;
		size_t i;

		if (sfilter_names_event(&names, &ev) < 0)
			goto oom;
		if (ev.type != EVENT_SAMPLE)
			continue;
		/* the event run_capture() would choose */
		if (chosen < 0 &&
		    run_event_named(opts, ev.attr ? ev.attr->name : NULL))
			chosen = idx;
		if (idx != chosen ||
		    !sfilter_keep(&f, &names, ev.pid, ev.tid, ev.time))
			continue;
		key = (uint64_t)(uint32_t)ev.pid << 32 |
		      (process ? 0 : (uint32_t)ev.tid);
		if (hashmap_get(&seen, key, &v)) {
			i = (size_t)(uintptr_t)v;
		} else {
			if (mem_grow(&t, &alloc, sizeof(*t), n + 1) < 0 ||
			    hashmap_put(&seen, key, (void *)(uintptr_t)n) < 0)
				goto oom;
			i = n++;
			t[i].pid = ev.pid;
			t[i].tid = ev.tid;
		}
		comm = sfilter_names_get(&names, ev.tid);
		if (comm)
			snprintf(t[i].comm, sizeof(t[i].comm), "%s", comm);
		else
			snprintf(t[i].comm, sizeof(t[i].comm), ":%d", ev.tid);
	}
	if (rc < 0)
		cmd_report_err(path, source_err(src));
	goto out;
oom:
	cmd_error("%s: out of memory", path);
	rc = -1;
out:
	hashmap_release(&seen);
	sfilter_names_release(&names);
	source_close(src);
	if (rc < 0) {
		free(t);
		return -1;
	}
	*out = t;
	*nr = n;
	return 0;
}

int run_capture(struct run *run, const struct run_opts *opts,
		const char *path, unsigned flags, run_sample_fn fn, void *ctx)
{
	const struct perfdata_info *in;
	struct err err;
	bool seekable, ordered;

	memset(run, 0, sizeof(*run));
	run->opts = opts;
	run->path = path;
	run->event_attr = -1;
	run->first_pass = RESOLVE_SINGLE;
	run->progress = !opts->quiet && !opts->trace && isatty(STDERR_FILENO);
	run->rd = source_open(path, &err);
	if (!run->rd) {
		cmd_report_err(path, &err);
		return -1;
	}
	in = source_info(run->rd);
	seekable = strcmp(path, "-") && in->file_size != UINT64_MAX;
	run->filter = opts->filter;
	run->filtering = !sfilter_empty(&run->filter);
	if (sfilter_needs_span(&run->filter) &&
	    run_filter_span(&run->filter, path, in, seekable) < 0)
		return -1;
	/*
	 * Two passes over a regular file, so that a stack cut short before
	 * the thread's outer frames were first seen is completed too: all
	 * samples twice when they must come out in order (or for the stitch
	 * self-check, which wants the caches complete); else only those the
	 * first pass could not complete.
	 */
	ordered = !opts->no_stitch && seekable &&
		  ((flags & RUN_ORDERED) || opts->validate_stitch);
	if (!opts->no_stitch && seekable)
		run->first_pass = ordered ? RESOLVE_PRESCAN : RESOLVE_FIRST;
	if (seekable && !in->pipe)
		run->auto_jobs = run_auto_workers(run, in);
	if (seekable && !in->pipe && run_workers(run, true) > 1) {
		/*
		 * Every worker reads the file for itself (a pipe-mode
		 * stream's metadata comes only while it is read).
		 */
		run->fn = fn;
		run->fn_ctx = ctx;
		if (run_capture_sharded(run, ordered) < 0)
			return -1;
		goto done;
	}
	if (ordered) {
		if (run_extra_pass(run, RESOLVE_PRESCAN, NULL, NULL) < 0 ||
		    run_begin_pass(run, RESOLVE_FINAL) < 0)
			return -1;
	} else if (run->first_pass == RESOLVE_FIRST && !opts->on_record &&
		   source_perfdata(run->rd)) {
		/* for a RETRY pass (run_retry_visits()) */
		perfdata_index_records(source_perfdata(run->rd));
	}
	run->passes++;
	if (run_pass(run, run->rd, fn, ctx) < 0)
		return -1;
	if (!run->res_ready &&
	    run_init_resolver(run, source_info(run->rd)) < 0)
		return -1;
	run->retried = run->pool ? pool_nr_deferred(run->pool) :
				   resolve_nr_deferred(&run->res);
	/* A RETRY pass reads up to the last deferred sample only. */
	run->stop_after = run->pool ? pool_last_deferred(run->pool) :
				      resolve_last_deferred(&run->res);
	if (run->retried && run_extra_pass(run, RESOLVE_RETRY, fn, ctx) < 0)
		return -1;
	run->stop_after = 0;
done:
	run_stop_loaders(run);
	/* what it did shows in the reports (the cache's counts) */
	run_stop_warmup(run);
	if (run->pool) {
		/* the workers' counts join the first resolver's */
		struct pool *pool = run->pool;

		run->pool = NULL;
		if (pool_finish(pool, run->worker_samples) < 0) {
			cmd_error("%s: out of memory", run->path);
			return -1;
		}
	}
	if (run->res.sym.kallsyms_tried &&
	    !symbolizer_has_kallsyms(&run->res.sym) && !opts->quiet)
		cmd_error("warning: cannot read kernel symbols from '%s'",
			  run_kallsyms_shown(run));
	if (!opts->quiet) {
		lookup_report(&run->lookup, run->res.mc);
		run_jit_note(run, path);
		if (source_late(run->rd))
			cmd_error("note: %s: %llu frames came after newer ones "
				  "had gone out (later than the reorder "
				  "window): delivered late, out of time order",
				  path, (unsigned long long)source_late(run->rd));
	}
	if (opts->event && run->event_attr < 0 && !opts->quiet)
		cmd_error("warning: %s: no samples of event '%s'", path,
			  opts->event);
	else if (run->other_event_samples && !opts->event && !opts->quiet &&
		 !opts->profile)
		cmd_error("note: %s: using event '%s'; %llu samples of other "
			  "events skipped (choose with --event)",
			  path, source_info(run->rd)->attrs[run->event_attr].name,
			  (unsigned long long)run->other_event_samples);
	return 0;
}

unsigned run_module_build_id(const struct run *run, const char *path,
			     uint8_t bid[20])
{
	const struct module *m;

	if (run->shard)
		return run_shard_build_id(run->shard, path, bid);
	if (!run->res_ready)
		return 0;
	for (m = run->res.mc->all; m; m = m->next) {
		/* one loading may learn its id on the loader's thread */
		if (m->status == MODULE_LOADING)
			continue;
		if (m->build_id_size && !strcmp(m->path, path)) {
			memcpy(bid, m->build_id, m->build_id_size);
			return m->build_id_size;
		}
	}
	return 0;
}

void run_free(struct run *run)
{
	run_stop_loaders(run);          /* before what they work on goes */
	if (run->pool)
		pool_finish(run->pool, NULL);
	run_stop_warmup(run);           /* before what it works on goes */
	run_warm_free(run);
	if (run->res_ready)
		resolve_release(&run->res);
	if (run->kallsyms_shared)
		kallsyms_once_release(&run->kallsyms_once);
	if (run->lookup_ready)
		lookup_release(&run->lookup);
	source_close(run->rd);
	perfdata_windows_free(run->windows); /* after its readers */
	if (run->kallsyms_temp && run->kallsyms_used)
		unlink(run->kallsyms_used);
	sigclean_del(run->kallsyms_clean);
	free(run->kallsyms_used);
	a2lstate_release(&run->a2l);
	free(run->a2l_frames);
	run_held_free(run);
	sfilter_names_release(&run->names);
	memset(run, 0, sizeof(*run));
}

static double run_pct(uint64_t n, uint64_t total)
{
	return total ? 100.0 * (double)n / (double)total : 0.0;
}

void run_print_stats(const struct run *run, FILE *f)
{
	const struct resolve_stats *st = &run->res.stats;
	const struct perfdata_info *in = source_info(run->rd);
	const struct module *m;
	uint64_t frames = 0;
	unsigned i;

	fprintf(f, "%s\n", run->path);
	fprintf(f, "  samples          %llu", (unsigned long long)st->samples);
	if (run->event_attr >= 0)
		fprintf(f, " (event %s)", in->attrs[run->event_attr].name ?
						  in->attrs[run->event_attr].name :
						  "?");
	fputc('\n', f);
	if (run->filtering)
		fprintf(f, "  filtered out     %llu samples of the event "
			   "(--pid, --tid, --comms, --time)\n",
			(unsigned long long)run->filtered);
	fprintf(f, "  reached root     %llu (%.2f%%)\n",
		(unsigned long long)st->end[END_ROOT],
		run_pct(st->end[END_ROOT], st->samples));
	fprintf(f, "  window full      %llu (%.2f%%) of samples had a full "
		   "stack copy\n",
		(unsigned long long)st->truncated,
		run_pct(st->truncated, st->samples));
	if (run->res.st) {
		struct stitch_counters c;

		stitcher_counters(run->res.st, &c);
		fprintf(f, "  stitched         %llu of %llu walks that ran out "
			   "of copied stack (%.2f%%), %llu to the root, %llu "
			   "through popped frames, %llu joined at another call "
			   "site; %s%s\n",
			(unsigned long long)st->stitched,
			(unsigned long long)st->window_ends,
			run_pct(st->stitched, st->window_ends),
			(unsigned long long)st->stitched_rooted,
			(unsigned long long)st->stitched_stale,
			(unsigned long long)st->stitched_joined,
			run->passes > 1 ? "two passes" : "one pass",
			run->retried ? " (the second for the samples cut "
				       "short)" : "");
		fprintf(f, "  root cache       %llu threads, %llu frames at most "
			   "(%.1f MiB), %llu evicted, %llu seen with several "
			   "callers\n",
			(unsigned long long)c.threads_seen,
			(unsigned long long)c.peak_nodes,
			(double)c.peak_nodes * (double)stitcher_node_bytes() /
				1048576,
			(unsigned long long)c.evicted,
			(unsigned long long)c.conflicts);
		if (run->res.opts.validate_stitch)
			fprintf(f, "  stitch check     %llu complete stacks cut "
				   "short: %llu exact (%.2f%%), %llu honest "
				   "(%.2f%%), %llu wrong (%.2f%%); %llu "
				   "ambiguous callers\n",
				(unsigned long long)st->validate_tried,
				(unsigned long long)st->validate_exact,
				run_pct(st->validate_exact,
					st->validate_tried),
				(unsigned long long)st->validate_honest,
				run_pct(st->validate_honest,
					st->validate_tried),
				(unsigned long long)st->validate_wrong,
				run_pct(st->validate_wrong,
					st->validate_tried),
				(unsigned long long)st->validate_ambiguous);
	} else {
		fprintf(f, "  stitched         off\n");
	}
	fprintf(f, "end reasons\n");
	for (i = 0; i < END_REASON__COUNT; i++)
		if (st->end[i])
			fprintf(f, "  %-18s %10llu %7.2f%%\n",
				end_reason_name(i),
				(unsigned long long)st->end[i],
				run_pct(st->end[i], st->samples));
	for (i = 0; i < FRAME_ORIGIN__COUNT; i++)
		frames += st->frames[i];
	fprintf(f, "frames by origin   %llu\n", (unsigned long long)frames);
	for (i = 0; i < FRAME_ORIGIN__COUNT; i++)
		if (st->frames[i])
			fprintf(f, "  %-18s %10llu %7.2f%%\n",
				frame_origin_name(i),
				(unsigned long long)st->frames[i],
				run_pct(st->frames[i], frames));
	fprintf(f, "kernel symbols     %s\n",
		symbolizer_has_kallsyms(&run->res.sym) ?
			run_kallsyms_shown(run) :
		run->res.sym.kallsyms_tried ? "unreadable ([kernel] frames)" :
		run->kallsyms_used ? "not needed" : "none ([kernel] frames)");
	fprintf(f, "modules            %u\n", run->res.mc->nr);
	fprintf(f, "  %-10s %-8s %-8s %-6s %-6s %-7s %-7s %-40s %s\n", "status",
		"samples", "frames", "no-cfi", "no-sym", "cfi", "symbols",
		"build-id", "path, where found");
	for (m = run->res.mc->all; m; m = m->next) {
		struct modinfo mi;

		if (m->status == MODULE_PENDING)
			continue;   /* mapped but never needed */
		modinfo_describe(m, &mi);
		fprintf(f, "  %-10s %-8llu %-8llu %-6llu %-6llu %-7s %-7s %-40s %s",
			mi.status, (unsigned long long)mi.samples,
			(unsigned long long)mi.frames,
			(unsigned long long)mi.no_cfi,
			(unsigned long long)mi.no_sym,
			mi.eh_frame && mi.debug_frame ? "eh+dbg" :
			mi.eh_frame ? "eh" : mi.debug_frame ? "debug" :
			mi.gopclntab ? "gopcln" : "-",
			!mi.symbols ? (mi.gopclntab ? "gopcln" : "-") :
			mi.dynsym_only ? "dynsym" :
			mi.dwarf ? "sym+dw" : "sym",
			mi.build_id[0] ? mi.build_id : "-", mi.path);
		if (mi.found_in)
			fprintf(f, " (%s%s%s)", mi.found_in,
				strcmp(mi.file, mi.path) ? ": " : "",
				strcmp(mi.file, mi.path) ? mi.file : "");
		if (mi.why_missing)
			fprintf(f, " (%s)", mi.why_missing);
		if (mi.debug_file)
			fprintf(f, " (debug from %s: %s)", mi.debug_found_in,
				mi.debug_file);
		if (m->eh_frame_refused)
			fprintf(f, " (.eh_frame refused: a register number "
				   "out of range)");
		fputc('\n', f);
	}
	if (run->lookup.dbgd && dbgd_summary(run->lookup.dbgd)->lookups) {
		const struct dbgd_summary *ds = dbgd_summary(run->lookup.dbgd);

		fprintf(f, "debuginfod         %u lookups: %u downloaded, %u "
			   "from the client cache, %u not found, %u failed\n",
			ds->lookups, ds->downloaded, ds->cached, ds->not_found,
			ds->failed);
	}
}

static void *run_folded_fork(void *ctx)
{
	return folded_new(folded_opts_of(ctx));
}

static int run_folded_add(void *sink, const struct rsample *s)
{
	return folded_add(sink, s);
}

static int run_folded_join(void *ctx, void *sink)
{
	int rc = folded_merge(ctx, sink);

	folded_free(sink);
	return rc;
}

static void run_folded_drop(void *sink)
{
	folded_free(sink);
}

const struct run_sinks run_folded_sinks = {
	.fork = run_folded_fork,
	.add = run_folded_add,
	.join = run_folded_join,
	.drop = run_folded_drop,
	.names = true,
};
