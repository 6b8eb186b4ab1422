/*
 * dbgd.h - debuginfod lookups, all done up front, before any unwinding,
 * from the capture's build-id list.
 *
 * libdebuginfod 0.188 is not safe in threads, not even with one client per
 * thread: every query closes one of its file descriptors twice, which can
 * close a descriptor another thread has just opened, and a completed
 * download briefly leaves an empty placeholder that a concurrent lookup of
 * the same file takes for "not found".  So the lookups run in helper
 * processes (fork, no exec; each has its own descriptor table and client),
 * several at once, each (build-id, kind) in exactly one of them, driven by
 * one poll() loop here.  The unwinder then only opens the files found.
 *
 * libdebuginfod remembers a failed lookup as an empty cache file for ten
 * minutes (even a server error, or a query sent while the server was
 * still indexing).  dbgd keeps its own record of misses for the run and
 * removes such entries, before a lookup and after a failed one, so a miss
 * never decides a later run.
 */
#ifndef RESTACK_UNWIND_DBGD_H
#define RESTACK_UNWIND_DBGD_H

#include <stdbool.h>
#include <stdint.h>

#include "common/err.h"

enum dbgd_kind {
	DBGD_EXECUTABLE,
	DBGD_DEBUGINFO,
	DBGD_KIND__COUNT,
};

/* What to fetch for one build-id. */
enum dbgd_need {
	DBGD_NEED_NONE,
	DBGD_NEED_ALWAYS,
	DBGD_NEED_IF_LACKING,    /* debuginfo: only if the fetched executable
				  * lacks .symtab or DWARF */
};

struct dbgd_want {
	uint8_t bid[20];
	uint8_t size;
	const char *name;        /* recorded path, for messages; borrowed */
	enum dbgd_need exe, debug;
};

/* Progress of the lookups, for a progress line. */
struct dbgd_progress {
	unsigned done, total;    /* lookups */
	unsigned running;
	uint64_t bytes;          /* downloaded so far, all lookups */
	bool finished;           /* the last call */
};

typedef void (*dbgd_progress_fn)(void *ctx, const struct dbgd_progress *p);

struct dbgd_opts {
	const char *urls;        /* space-separated; NULL: $DEBUGINFOD_URLS */
	unsigned jobs;           /* helper processes; 0: 4 */
	unsigned timeout;        /* seconds without progress that fail a
				  * lookup; 0: $DEBUGINFOD_TIMEOUT, else 30 */
	uint64_t maxsize;        /* bytes a download may have; 0:
				  * $DEBUGINFOD_MAXSIZE, else
				  * DBGD_DEFAULT_MAXSIZE */
	dbgd_progress_fn progress;  /* or NULL */
	void *progress_ctx;
};

/* Counts for the summary line, by outcome. */
struct dbgd_summary {
	unsigned lookups;
	unsigned downloaded;     /* fetched from a server */
	unsigned cached;         /* already in the debuginfod client cache */
	unsigned not_found;      /* the servers do not have it */
	unsigned failed;         /* timeout, connection refused, ... */
	uint64_t bytes;
	char *cache_dir;         /* the client cache used; owned */
};

/*
 * The default download limit: a little over the largest debuginfo files
 * Debian ships (a few hundred MiB), far below what fills a disk.
 */
#define DBGD_DEFAULT_MAXSIZE (1024ull << 20)

struct dbgd;

/* Whether debuginfod lookups are configured (urls or $DEBUGINFOD_URLS). */
bool dbgd_configured(const char *urls);

/*
 * Runs the lookups the wants ask for and returns their results, or NULL
 * with *err filled (out of memory, no processes).  Lookups that fail are
 * results too (dbgd_result()).  A download over the size limit fails as
 * "too large" (the client refuses a Content-Length over it; an answer
 * without one is cut off there), and an answer that is not an ELF file
 * fails saying what it starts with and is removed from the client cache.
 * Sets SIGPIPE to ignored while it runs.
 * dbgd_free() releases everything (and a private cache directory made
 * because the client cache was not writable).
 */
struct dbgd *dbgd_fetch(const struct dbgd_want *wants, unsigned nr,
			const struct dbgd_opts *opts, struct err *err);
void dbgd_free(struct dbgd *d);

/*
 * The file fetched for bid and kind, or NULL; *why (when not NULL)
 * receives "not looked up", "not found on the servers", "timed out",
 * "too large", "not an ELF file" ...  The path and *why are owned by d.
 */
const char *dbgd_result(const struct dbgd *d, const uint8_t *bid,
			unsigned n, enum dbgd_kind kind, const char **why);

const struct dbgd_summary *dbgd_summary(const struct dbgd *d);

#endif
