/*
 * event_copy.h - an event a reader delivered, copied into one buffer of
 * the caller's, so that it outlives the reader's next call (for writers
 * that take the records of several readers in one order: run_shard.c).
 *
 * The copy holds the record's bytes (event.raw) and everything the
 * event's pointers reach: its arrays (callchain, registers, branches,
 * read values, a tracepoint's payload) and strings (a mapping's file
 * name, a thread's name, a JIT name, a build-id's file name).  The attr
 * is not copied: it stays the reader's, valid until the reader is closed.
 *
 * EVENT_COPY_NO_STACK leaves a perf.data sample's user stack copy out:
 * the copy's record has an empty STACK_USER field (size 0, no dyn_size,
 * the header's size shortened to match) and event.sample.stack is NULL
 * with stack_size and stack_dyn_size 0.  That is most of a DWARF
 * sample's bytes, and what a writer that replaces the stack copy with a
 * callchain (perfdata_write.c) drops anyway.  A record whose stack copy
 * is not where perf.data's layout puts it, or whose stack the reader gave
 * from a buffer of its own (swapped: a capture in the other byte order),
 * is copied whole.
 */
#ifndef RESTACK_FORMATS_EVENT_COPY_H
#define RESTACK_FORMATS_EVENT_COPY_H

#include <stddef.h>

#include "common/event.h"

/* Leave a perf.data sample's user stack copy out (see the top). */
#define EVENT_COPY_NO_STACK 1u

/* The bytes event_copy() writes for ev with flags, a multiple of 8. */
size_t event_copy_size(const struct event *ev, unsigned flags);

/*
 * Copies ev into *dst, whose pointers then point into buf (8-byte
 * aligned, event_copy_size() bytes, the caller's).
 */
void event_copy(struct event *dst, void *buf, const struct event *ev,
		unsigned flags);

#endif
