/*
 * warmup.h - what a run is going to need, made ahead on a thread of its
 * own while the run reads and unwinds: the kernel symbols and the
 * decompressed DWARF of each module as it is loaded (dwimage.h).  On a
 * first run, with no DWARF cache to map them from, these are most of the
 * extra time; on two cores the thread takes them off the critical path.
 *
 * Nothing here changes results: whoever needs the work first does it or
 * waits for it (kallsyms_once, dwimage_build() share and lock), so the
 * thread only starts it sooner.  Thread-safe: workers queue from their
 * own threads.
 *
 * The thread also writes what the run made into the DWARF cache (the
 * kernel symbols' index, every DWARF image built, by any thread: see
 * dwimage_defer_stores()), when no inflating or kernel symbols wait;
 * warmup_stop() finishes those writes, so a later run finds them all.
 */
#ifndef RESTACK_UNWIND_WARMUP_H
#define RESTACK_UNWIND_WARMUP_H

#include <stdbool.h>

#include "unwind/symbolize.h"

struct warmup;

/*
 * Starts the thread; NULL when this machine has one core (nothing to gain)
 * or the thread cannot start: callers then leave the work to its users.
 */
struct warmup *warmup_start(void);

/* Reads k's kernel symbols (kallsyms_once_load()); k outlives w. */
void warmup_kallsyms(struct warmup *w, struct kallsyms_once *k);

/*
 * Writes k's index into the DWARF cache (ksyms_store_index()) when
 * nothing else waits, by warmup_stop() at the latest; k must outlive w.
 */
void warmup_store_ksyms(struct warmup *w, struct ksyms *k);

/*
 * Builds the decompressed DWARF image of the ELF file at path (a module's
 * debug file, or its file when it has none), held until warmup_stop().
 * Files without a build-id are left alone (their images are not shared).
 */
void warmup_dwarf(struct warmup *w, const char *path);

/*
 * Runs fn(ctx, w) on the thread, in turn with the DWARF queued (after
 * what is queued now, before what is queued later); fn may queue more.
 * Dropped, not run, when the run stops first; ctx must outlive w.
 */
typedef void (*warmup_fn)(void *ctx, struct warmup *w);
void warmup_call(struct warmup *w, warmup_fn fn, void *ctx);

/* Whether warmup_stop() was called: long work of a warmup_fn ends then. */
bool warmup_stopping(struct warmup *w);

/*
 * Drops the work not started but the cache's writes, waits for the
 * thread and releases what it holds (images stay while their users hold
 * them).  NULL is fine.
 */
void warmup_stop(struct warmup *w);

#endif
