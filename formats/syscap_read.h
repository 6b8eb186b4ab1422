/*
 * syscap_read.h - reader for sysprof captures (sysprof 3.46 and current,
 * either byte order) producing the events of common/event.h in time
 * order.
 *
 * Frames become events: PROCESS -> COMM (the name as it is when it fits a
 * comm's 15 characters, else the basename of the command line's first
 * word; a thread seen first in a sample takes its process's), FORK (frame pid
 * = parent tid, child = new tid) -> FORK, EXIT -> EXIT, MAP -> MMAP (with
 * the "@build-id" suffix when present), SAMPLE -> a sample with the
 * frame's addresses as its callchain (a USER context first when the list
 * starts without one, as eu-stacktrace writes them), type 18
 * (eu-stacktrace's raw user stacks) -> a sample with user registers and
 * stack bytes, to be unwound like perf's DWARF samples.  JITMAP frames are
 * read when a file is opened (they often come after the samples that use
 * them), a stream's when they come: each name is delivered first as an
 * EVENT_JIT of 16 bytes at a private address, which replaces its key in
 * the samples.
 * METADATA "hostname", "uname.release" and "uname.machine" fill the info.
 * FILE_CHUNK files: "/proc/kallsyms" becomes the info's kallsyms text;
 * "__symbols__" (sysprof 3.46's symbol bundle, syscap.h) is delivered
 * after the JIT names, each record an EVENT_JIT marked bundled for its
 * process's [begin, end].  Embedded files over 64 MiB, with a chunk that
 * does not fit its frame or without their last chunk are ignored, and so
 * are __symbols__ records naming no string or a reversed range.
 * Other frames of the types sysprof knows (TIMESTAMP, JITMAP, counters,
 * marks, logs, FILE_CHUNK...) are delivered as EVENT_OTHER with their raw
 * bytes, for a writer to pass them on; unknown frame types and
 * frame-index TIMESTAMPs are skipped; both are counted (syscap_skipped()).
 *
 * A regular file: MAP and PROCESS frames are delivered first (sysprof
 * builds a process's address space from all of them: /proc scans are
 * often written after the samples), then the others by time (file order
 * for equal times), each through a reorder window of 8 MiB of the file
 * (syscap_order.h): a frame more than that far behind its place is
 * delivered when it is read, and counted (syscap_late()).  The file is
 * mapped and read three times (checked when opened, then the two walks)
 * with memory bounded whatever its size.
 *
 * A stream (standard input, a pipe, a FIFO) is read once, front to back:
 * each frame is checked, and its metadata, JIT names (copied) and
 * embedded files taken, when read.  MAP and PROCESS frames are
 * delivered when read (a file's come first); the others go through one
 * reorder window of 8 MiB of the stream, and also go once a frame 500 ms
 * newer has been read, or when the stream has brought nothing for 100 ms
 * (a profiler that pauses is not kept waiting for).  A frame older than
 * one already delivered goes out at once and is counted late, never
 * dropped.  A thread reads the stream ahead, up to 32 MiB
 * (common/readahead.h), so the writer goes on while restack is busy.
 * Memory: the read-ahead, the window's frames' bytes (8 MiB and a
 * frame), their entries, the JIT names and embedded files (64 MiB each
 * at most).  A stream that ends inside a frame delivers every frame
 * before it, then fails (ERR_TRUNCATED at the frame's offset).
 */
#ifndef RESTACK_FORMATS_SYSCAP_READ_H
#define RESTACK_FORMATS_SYSCAP_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "common/event.h"
#include "formats/perfdata.h"

struct syscap_reader;

/*
 * Opens path ("-": standard input): a regular file is indexed now, any
 * other input (a pipe, a FIFO) is read as a stream.  Returns NULL with
 * *err filled.
 */
struct syscap_reader *syscap_open(const char *path, struct err *err);

/* Like syscap_open() on fd, closed by the reader when own (also when
 * it fails). */
struct syscap_reader *syscap_open_fd(int fd, bool own, const char *name,
				     struct err *err);

/* Whether r reads a stream (see above). */
bool syscap_is_stream(const struct syscap_reader *r);

/*
 * Whether a stream's read-ahead queue is full (its writer about to wait
 * for restack); a file's: never.
 */
bool syscap_backlogged(struct syscap_reader *r);

/*
 * A stream calls fn(ctx) each time it is about to wait for input (when
 * what came so far is all there is: a writer may flush its output).
 */
typedef void (*syscap_idle_fn)(void *ctx);
void syscap_set_idle(struct syscap_reader *r, syscap_idle_fn fn, void *ctx);

/*
 * Like syscap_open() over bytes in memory (which must outlive the
 * reader); name is used in messages.
 */
struct syscap_reader *syscap_open_mem(const void *data, size_t size,
				      const char *name, struct err *err);

/* 1 with *ev filled, 0 at the end, -1 on error (syscap_err()). */
int syscap_next(struct syscap_reader *r, struct event *ev);

const struct err *syscap_err(const struct syscap_reader *r);
const struct perfdata_info *syscap_info(const struct syscap_reader *r);
/* Frames skipped: unknown types, frame indexes, types restack ignores. */
uint64_t syscap_skipped(const struct syscap_reader *r);
/* Frames delivered after a newer one of their walk (see above). */
uint64_t syscap_late(const struct syscap_reader *r);

/*
 * The reorder window's size in file bytes (default 8 MiB); only before
 * the first syscap_next().
 */
void syscap_set_window(struct syscap_reader *r, uint64_t bytes);

void syscap_close(struct syscap_reader *r);

#endif
