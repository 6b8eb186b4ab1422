/*
 * modload.h - modules looked up and prepared on a thread of their own, for
 * a stream whose writer must not be kept waiting (a live profiler writing
 * into a pipe loses samples when it blocks).
 *
 * With a loader set on a module cache (modcache.loader), the first sample
 * that needs a module not looked up yet hands it to the loader's thread,
 * which finds its files (module_lookup()) and reads what naming and
 * unwinding its frames first read: symbol table, CFI, addr2line state.
 * The sample waits for it while the input's queue has room
 * (modload_opts.full says when it has none); the samples after it wait in
 * that queue.  When the queue is full, the sample goes on without the
 * module: its walk ends there (END_MODULE_LOADING, "[truncated: module
 * loading]"), its frame there is named as a module without a file, and it
 * is counted (modcache.missed); the module keeps loading, and the first
 * sample to need it after the load finished uses it.  Nothing is dropped.
 * With a queue that never fills (a file, or a fast enough loader) the
 * results are those of loading on the cache's thread.
 *
 * Threads: the cache's thread calls everything here; the loader's thread
 * touches only the modules it was given, until each is done (under the
 * lock, as module.load_done).  modcache_settle() waits for all of them.
 *
 * A test hook: RESTACK_TEST_SLOW_LOAD=TEXT:MS makes the loader wait MS
 * milliseconds before it looks up a module whose path has TEXT in it (a
 * debuginfod download or a large DWARF file, made to take that long).
 */
#ifndef RESTACK_UNWIND_MODLOAD_H
#define RESTACK_UNWIND_MODLOAD_H

#include <stdbool.h>

#include "common/err.h"
#include "unwind/module.h"

struct modload_opts {
	bool (*full)(void *ctx);  /* the input's queue is full: stop waiting */
	void *ctx;
	bool inline_names;        /* prepare the addr2line state too */
	unsigned threads;         /* loading at once; 0: 4 */
};

struct modload;

/*
 * Starts the loader for mc (which must outlive it) and sets mc->loader.
 * NULL with *err filled when the thread cannot start.
 */
struct modload *modload_start(struct modcache *mc,
			      const struct modload_opts *opts, struct err *err);

/* Settles mc (modcache_settle()), stops the thread, clears mc->loader.
 * NULL is fine. */
void modload_stop(struct modload *l);

/* Samples that went on without a module still loading (modcache.missed). */
uint64_t modload_missed(const struct modload *l);

/* For module.c: m (status LOADING) to the queue. */
void modload_queue(struct modload *l, struct module *m);

/*
 * For module.c: waits until m is done (true) or the input's queue is full
 * (false).
 */
bool modload_wait(struct modload *l, struct module *m);

/* For module.c: waits until every module given is done. */
void modload_drain(struct modload *l);

#endif
