/*
 * syscap_write.h - writes a sysprof capture from a capture's events and
 * resolved samples.
 *
 * Frames (types 1-15 only, so sysprof 3.46 opens the file): METADATA
 * (hostname, uname.release, uname.machine, as current sysprof names them),
 * PROCESS for a
 * process's name (COMM of a thread whose tid is its pid), FORK (frame pid =
 * parent tid, child = new tid), EXIT (processes only), MAP for executable
 * user mappings (with "@build-id" after the name's NUL, as sysprof 45 and
 * newer write it; 3.46's reader ignores what follows the NUL, and the
 * "3.46" target leaves it out), SAMPLE with the resolved stack, leaf first:
 * PERF_CONTEXT_KERNEL and the kernel frames, then PERF_CONTEXT_USER, the
 * sampled ip and the return addresses as found; frames named from JIT
 * maps become JITMAP keys (0xE000000000000000 | n), their names in a
 * JITMAP frame written before the first sample that uses them.  A sample
 * with more addresses than a frame holds (8187) keeps its leaf end and is
 * counted.  Samples of events other than the resolved one are not
 * written.  At the end, FILE_CHUNKs name the frames where the binaries
 * and the kernel are not at hand: "/proc/kallsyms" (the kernel symbols
 * the samples use) and "__symbols__" (each address's function).
 * Byte order: the host's.
 */
#ifndef RESTACK_FORMATS_SYSCAP_WRITE_H
#define RESTACK_FORMATS_SYSCAP_WRITE_H

#include <stdbool.h>
#include <stdint.h>

#include "common/err.h"
#include "common/event.h"
#include "common/stack.h"
#include "formats/perfdata.h"

struct syscap_writer;

struct syscap_write_opts {
	unsigned version;       /* target sysprof: 0 (default: what 3.46
				 * reads, with MAP build-ids), 3 (exactly
				 * what 3.46 writes) or a major >= 45 */
};

struct syscap_write_stats {
	uint64_t frames;        /* frames written */
	uint64_t samples;
	uint64_t cut_samples;   /* stacks cut to fit a frame */
	uint64_t jit_symbols;   /* JITMAP entries */
	uint64_t bytes;
};

/*
 * The build-id of a mapped file (by its path), copied to bid; returns the
 * size, 0 when none is known.
 */
typedef unsigned (*syscap_bid_fn)(void *ctx, const char *path,
				  uint8_t bid[20]);

/*
 * A writer to fd (kept open by the caller; when seekable the header's
 * times are filled in at the end).  bid_fn may be NULL.  Returns NULL
 * with *err filled.
 */
struct syscap_writer *syscap_writer_new(int fd,
					const struct syscap_write_opts *opts,
					syscap_bid_fn bid_fn, void *ctx,
					struct err *err);

/*
 * Takes the next event, in time order, with its resolved sample when it
 * is one (else rs is NULL).  in is the input's metadata (its hostname, OS
 * release and architecture go to METADATA frames first, so kernel symbols
 * are chosen the same way when the capture is read back).  Returns 0, or
 * -1 (syscap_writer_err()).
 */
int syscap_writer_event(struct syscap_writer *w,
			const struct perfdata_info *in,
			const struct event *ev, const struct rsample *rs);

/*
 * From now on (before the first event) the input is a sysprof capture in
 * the host's byte order whose frames are passed through: each event's
 * frame (ev->raw) is written as it is, in the order given, but for raw
 * user stacks (type 18), which become SAMPLE frames with the resolved
 * stack (PERF_CONTEXT_USER, the sampled ip, the return addresses: type 18
 * has no kernel part).  No METADATA of the writer's own (the input's come
 * through), nor /proc/kallsyms or __symbols__ when the input had its own
 * (two copies of a file would be read as one); JITMAP keys of the
 * writer's own start at 2^40, above the input's.
 */
void syscap_writer_passthrough(struct syscap_writer *w);

/* Writes what is buffered now (a stream's reader waits).  0 or -1. */
int syscap_writer_flush(struct syscap_writer *w);

/*
 * Embeds the lines of a kallsyms file (text, len bytes) that the samples'
 * kernel frames are named from, each with the next line at a higher
 * address (where the symbol ends), and _text's (where the kernel is), as
 * a /proc/kallsyms FILE_CHUNK: what
 * sysprof and restack name kernel frames from on another machine.  Call
 * after the last event, before syscap_writer_finish().  Returns 0 or -1.
 */
int syscap_writer_kallsyms(struct syscap_writer *w, const char *text,
			   size_t len);

/* Whether a sample had a named kernel frame (syscap_writer_kallsyms()
 * has something to embed). */
bool syscap_writer_has_kernel(const struct syscap_writer *w);

/*
 * Writes the __symbols__ FILE_CHUNK (the samples' named addresses, user
 * and kernel, by process: sysprof 3.46's layout, see syscap.h), flushes
 * and fills in the header.
 * Returns 0 or -1.
 */
int syscap_writer_finish(struct syscap_writer *w);

const struct err *syscap_writer_err(const struct syscap_writer *w);
const struct syscap_write_stats *
syscap_writer_stats(const struct syscap_writer *w);
void syscap_writer_free(struct syscap_writer *w);

#endif
