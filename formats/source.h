/*
 * source.h - one reader for every capture format: opens a path, tells the
 * format from its first bytes and delivers the format-neutral events of
 * common/event.h in time order.
 *
 * Formats: perf.data (file and pipe mode) and sysprof captures (files,
 * and streams from standard input or a FIFO: syscap_read.h), told apart
 * by their first bytes.  The capture's metadata comes as a struct
 * perfdata_info
 * whatever the format (fields a format does not have are zero or NULL).
 */
#ifndef RESTACK_FORMATS_SOURCE_H
#define RESTACK_FORMATS_SOURCE_H

#include <stdbool.h>

#include "common/err.h"
#include "common/event.h"
#include "formats/perfdata.h"

enum source_format {
	SOURCE_PERFDATA,
	SOURCE_SYSPROF,
};

struct source;

/*
 * Opens path ("-" = standard input).  path must outlive the source.
 * Returns NULL with *err filled on failure.
 */
struct source *source_open(const char *path, struct err *err);

/*
 * Delivers the next event; pointers in *ev stay valid until the next call
 * or source_close().  Returns 1, 0 at end of input, -1 on error
 * (source_err()).
 */
int source_next(struct source *s, struct event *ev);

/*
 * From now on fn decides which samples source_next() delivers (NULL: all):
 * it is asked about every sample, once, at the time when says (see
 * enum sample_filter_when; for sysprof captures, read in file order, the
 * two are the same).
 */
void source_set_sample_filter(struct source *s, sample_filter_fn fn,
			      void *ctx, enum sample_filter_when when);

enum source_format source_format(const struct source *s);

/*
 * sysprof captures: frames delivered after a newer one, having come more
 * than the reorder window late (syscap_read.h); perf.data: 0.
 */
uint64_t source_late(const struct source *s);

/*
 * The format path's first bytes name (perf.data when unreadable or
 * unknown: its reader then says why).  Standard input's and a FIFO's
 * first bytes are kept for source_open() (a FIFO stays open for it: one
 * at a time).
 */
enum source_format source_sniff(const char *path);

/* Whether path ("-": standard input) is read as a stream: not a regular
 * file (or standard input not at its start). */
bool source_is_stream(const char *path);

/*
 * A stream calls fn(ctx) before it waits for more input (sysprof
 * streams; perf.data: never).
 */
void source_set_idle(struct source *s, void (*fn)(void *ctx), void *ctx);

/*
 * Whether the writer of a stream waits for restack now: a sysprof
 * stream's read-ahead queue is full (perf.data and files: never).
 */
bool source_backlogged(struct source *s);

/* Whether source_backlogged() can ever be true: a sysprof stream. */
bool source_reads_ahead(const struct source *s);
const struct perfdata_info *source_info(const struct source *s);
const struct err *source_err(const struct source *s);

/*
 * Keeps the bytes of the event source_next() returned last valid until
 * source_release(); NULL when this input cannot (copy them instead).  See
 * perfdata_hold().
 */
void *source_hold(struct source *s);
void source_release(struct source *s, void *token);

/* The underlying perf.data reader, or NULL for other formats. */
struct perfdata_reader *source_perfdata(const struct source *s);

/* Closes the input and frees everything; NULL is fine. */
void source_close(struct source *s);

#endif
