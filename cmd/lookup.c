/*
 * lookup.c - the lookup chain for convert and stats (see lookup.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/lookup.h"

#include "cmd/cmd.h"
#include "common/mem.h"
#include "unwind/modinfo.h"

static void lookup_progress(void *ctx, const struct dbgd_progress *p)
{
	struct lookup *l = ctx;

	if (p->finished && !l->progress_shown)
		return;
	fprintf(stderr, "\rrestack: debuginfod: %u of %u lookups done, %u "
			"running, %.1f KiB downloaded%s",
		p->done, p->total, p->running, (double)p->bytes / 1024,
		p->finished ? "\n" : " ");
	fflush(stderr);
	l->progress_shown = true;
}

/*
 * A regular file without a build-id list (perf record --buildid-mmap):
 * read it once for the build-ids of its MMAP2 records.
 */
static struct perfdata_reader *lookup_prescan(const char *path)
{
	struct perfdata_reader *rd;
	struct event ev;
	struct err err;
	int rc;

	rd = perfdata_open(path, NULL, &err);
	if (!rd)
		return NULL;
	while ((rc = perfdata_next(rd, &ev)) > 0)
		;
	if (rc < 0) {
		perfdata_close(rd);
		return NULL;
	}
	return rd;
}

/* What to fetch for one module of the capture. */
static void lookup_want(const struct locate_opts *loc,
			const struct perfdata_build_id *b,
			struct dbgd_want *w)
{
	struct locate_iter it = { 0 };
	char path[4096], exe[4096] = "";
	const char *from;

	memset(w, 0, sizeof(*w));
	memcpy(w->bid, b->build_id, b->size);
	w->size = b->size;
	w->name = b->filename;
	while (locate_next(loc, LOCATE_EXE, b->filename, b->build_id, b->size,
			   &it, path, sizeof(path), &from)) {
		if (locate_elf_matches(path, b->build_id, b->size) == 1) {
			strcpy(exe, path);
			break;
		}
	}
	if (!exe[0]) {
		w->exe = DBGD_NEED_ALWAYS;
		w->debug = DBGD_NEED_IF_LACKING;
		return;
	}
	if (!locate_elf_needs_debug(exe))
		return;
	memset(&it, 0, sizeof(it));
	while (locate_next(loc, LOCATE_DEBUG, b->filename, b->build_id,
			   b->size, &it, path, sizeof(path), &from))
		if (locate_elf_matches(path, b->build_id, b->size) == 1)
			return;
	w->debug = DBGD_NEED_ALWAYS;
}

static int lookup_fetch(struct lookup *l, const struct lookup_opts *o,
			const char *path, const struct perfdata_info *in)
{
	struct perfdata_reader *rd = NULL;
	struct dbgd_opts dopts = { .urls = l->urls,
				   .maxsize = o->dbgd_maxsize };
	struct dbgd_want *wants;
	unsigned i, nr = 0;
	struct err err;
	bool listed = false;
	int rc = 0;

	for (i = 0; i < in->nr_build_ids; i++)
		listed |= !in->build_ids[i].from_mmap;
	if (!listed && strcmp(path, "-") &&
	    in->file_size != UINT64_MAX && (rd = lookup_prescan(path)))
		in = perfdata_info(rd);
	wants = mem_zalloc(in->nr_build_ids ? in->nr_build_ids : 1,
			   sizeof(*wants));
	if (!wants) {
		cmd_error("out of memory");
		perfdata_close(rd);
		return -1;
	}
	for (i = 0; i < in->nr_build_ids; i++) {
		const struct perfdata_build_id *b = &in->build_ids[i];

		if (!b->size || locate_is_special(b->filename))
			continue;   /* kernel, [vdso], anonymous code */
		lookup_want(&l->loc, b, &wants[nr]);
		if (wants[nr].exe || wants[nr].debug)
			nr++;
	}
	if (!o->quiet && isatty(STDERR_FILENO)) {
		dopts.progress = lookup_progress;
		dopts.progress_ctx = l;
	}
	l->dbgd = dbgd_fetch(wants, nr, &dopts, &err);
	if (!l->dbgd) {
		cmd_report_err(path, &err);
		rc = -1;
	} else if (!o->quiet && dbgd_summary(l->dbgd)->lookups) {
		const struct dbgd_summary *s = dbgd_summary(l->dbgd);

		cmd_error("debuginfod: %u lookups: %u downloaded (%.1f KiB), "
			  "%u from the client cache, %u not found, %u failed",
			  s->lookups, s->downloaded, (double)s->bytes / 1024,
			  s->cached, s->not_found, s->failed);
	}
	free(wants);
	perfdata_close(rd);
	return rc;
}

/*
 * Extracts the archive: of a capture with a build-id list, only its
 * build-ids' files (without one, a pipe or --buildid-mmap, every
 * build-id's).
 */
static struct perfarchive *lookup_archive(const struct lookup_opts *o,
					  const struct perfdata_info *in,
					  struct err *err)
{
	struct perfarchive_opts ao = {
		.max_file = o->archive_max_file,
		.max_total = o->archive_max_total,
	};
	struct perfarchive *a;
	char (*hex)[41] = NULL;
	unsigned i, n = 0;

	for (i = 0; in && i < in->nr_build_ids; i++)
		n += !in->build_ids[i].from_mmap;
	if (n && !(hex = mem_zalloc(in->nr_build_ids, sizeof(*hex)))) {
		err_set(err, ERR_NOMEM, ERR_NO_OFF, "archive");
		return NULL;
	}
	for (i = 0; hex && i < in->nr_build_ids; i++)
		module_build_id_hex(in->build_ids[i].build_id,
				    MIN(in->build_ids[i].size, 20),
				    hex[ao.nr_build_ids++]);
	ao.build_ids = (const char (*)[41])hex;
	a = perfarchive_open(o->archive, &ao, err);
	free(hex);
	return a;
}

int lookup_init(struct lookup *l, const struct lookup_opts *o,
		const char *path, const struct perfdata_info *in,
		const char *const *cache_dirs, unsigned nr_cache_dirs)
{
	struct err err;
	unsigned i;

	memset(l, 0, sizeof(*l));
	for (i = 0; i < nr_cache_dirs && i < LOOKUP_MAX_DIRS; i++) {
		l->dirs[l->nr_dirs].path = cache_dirs[i];
		l->dirs[l->nr_dirs++].label = "build-id cache";
	}
	if (o->archive) {
		l->archive = lookup_archive(o, in, &err);
		if (!l->archive) {
			cmd_report_err(o->archive, &err);
			return -1;
		}
		l->dirs[l->nr_dirs].path = perfarchive_dir(l->archive);
		l->dirs[l->nr_dirs++].label = "perf archive";
	}
	for (i = 0; i < l->nr_dirs; i++)
		l->dir_paths[i] = l->dirs[i].path;
	for (i = 0; i < o->nr_debug_dirs; i++)
		l->debug_dirs[i] = o->debug_dirs[i];
	l->debug_dirs[i++] = "/usr/lib/debug";
	l->loc.symfs = o->symfs;
	l->loc.buildid_dirs = l->dirs;
	l->loc.nr_buildid_dirs = l->nr_dirs;
	l->loc.debug_dirs = l->debug_dirs;
	l->loc.nr_debug_dirs = i;
	if (o->nr_urls) {
		size_t len = 1;

		for (i = 0; i < o->nr_urls; i++)
			len += strlen(o->urls[i]) + 1;
		l->urls = mem_zalloc(1, len);
		if (!l->urls) {
			cmd_error("out of memory");
			return -1;
		}
		for (i = 0; i < o->nr_urls; i++) {
			if (i)
				strcat(l->urls, " ");
			strcat(l->urls, o->urls[i]);
		}
	}
	if (o->offline || !dbgd_configured(l->urls))
		return 0;
	if (lookup_fetch(l, o, path, in) < 0)
		return -1;
	l->loc.dbgd = l->dbgd;
	return 0;
}

void lookup_release(struct lookup *l)
{
	dbgd_free(l->dbgd);
	perfarchive_close(l->archive);
	free(l->urls);
	memset(l, 0, sizeof(*l));
}

/* One "N from WHERE" per source, in order of first appearance. */
void lookup_report(const struct lookup *l, const struct modcache *mc)
{
	const char *where[16];
	unsigned count[16], nr = 0, i, missing = 0;
	bool notable = l->archive || l->dbgd || l->loc.symfs;
	const struct module *m;
	char line[1024];
	size_t len = 0;

	for (m = mc->all; m; m = m->next) {
		struct modinfo mi;
		const char *w;

		if (m->status == MODULE_PENDING || m->status == MODULE_NO_FILE)
			continue;
		modinfo_describe(m, &mi);
		w = mi.found_in ? mi.found_in : "not found";
		if (!mi.found_in) {
			missing++;
			notable = true;
		}
		for (i = 0; i < nr && strcmp(where[i], w); i++)
			;
		if (i == nr && nr < 16) {
			where[nr] = w;
			count[nr++] = 0;
		}
		if (i < nr)
			count[i]++;
	}
	if (!notable || !nr)
		return;
	for (i = 0; i < nr && len < sizeof(line); i++)
		len += (size_t)snprintf(line + len, sizeof(line) - len,
					"%s%u %s", i ? ", " : "", count[i],
					where[i]);
	cmd_error("modules: %s", line);
	if (!missing)
		return;
	for (m = mc->all; m; m = m->next) {
		struct modinfo mi;

		if (m->status == MODULE_PENDING || m->status == MODULE_NO_FILE)
			continue;
		modinfo_describe(m, &mi);
		if (!mi.found_in)
			cmd_error("warning: module %s (build-id %s) not found: "
				  "%s", mi.path,
				  mi.build_id[0] ? mi.build_id : "unknown",
				  mi.why_missing ? mi.why_missing : mi.status);
	}
}
