/*
 * lookup.h - setting up where convert and stats find binaries: the
 * build-id caches, an extracted `perf archive`, --symfs, the debuginfo
 * directories, and the debuginfod lookups done before unwinding; and the
 * notes on stderr about where modules came from.
 */
#ifndef RESTACK_CMD_LOOKUP_H
#define RESTACK_CMD_LOOKUP_H

#include <stdbool.h>

#include "formats/perfdata.h"
#include "unwind/dbgd.h"
#include "unwind/locate.h"
#include "unwind/module.h"
#include "unwind/perfarchive.h"

#define LOOKUP_MAX_DIRS 16

/* The options, as parsed (strings borrowed from argv). */
struct lookup_opts {
	const char *symfs;                          /* --symfs */
	const char *archive;                        /* --archive */
	uint64_t archive_max_file;                  /* bytes; 0: default */
	uint64_t archive_max_total;                 /* bytes; 0: default */
	uint64_t dbgd_maxsize;                      /* bytes; 0: default */
	const char *debug_dirs[LOOKUP_MAX_DIRS];    /* --debuginfo-dir */
	unsigned nr_debug_dirs;
	const char *urls[LOOKUP_MAX_DIRS];          /* --debuginfod */
	unsigned nr_urls;
	bool offline;                               /* --offline */
	bool quiet;
};

struct lookup {
	struct perfarchive *archive;                /* owned */
	struct dbgd *dbgd;                          /* owned, or NULL */
	struct locate_dir dirs[LOOKUP_MAX_DIRS + 1];
	const char *dir_paths[LOOKUP_MAX_DIRS + 1]; /* the same, paths only */
	unsigned nr_dirs;
	const char *debug_dirs[LOOKUP_MAX_DIRS + 1];
	char *urls;                                 /* owned, joined */
	struct locate_opts loc;                     /* points into the above */
	bool progress_shown;
};

/*
 * Builds the lookup chain for capture path (cache_dirs: the perf build-id
 * caches in use) and, unless offline, runs the debuginfod lookups for the
 * build-ids of in (and of the MMAP2 records of a regular file that has no
 * build-id list).  Returns 0, or -1 after printing the error (a bad
 * archive names the archive).
 */
int lookup_init(struct lookup *l, const struct lookup_opts *o,
		const char *path, const struct perfdata_info *in,
		const char *const *cache_dirs, unsigned nr_cache_dirs);
void lookup_release(struct lookup *l);

/*
 * Notes on stderr after a run: where the modules came from (when
 * anything but the recorded paths was involved) and every module that
 * was needed but not found, with why.
 */
void lookup_report(const struct lookup *l, const struct modcache *mc);

#endif
