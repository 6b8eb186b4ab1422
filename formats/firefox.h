/*
 * firefox.h - the Firefox Profiler writer: the profiler's processed
 * profile format, preprocessedProfileVersion 70 (the version of
 * firefox-devtools/profiler's src/types/profile.ts that this follows;
 * newer profilers upgrade it when loading), gzip-compressed or plain
 * JSON.
 *
 * One thread per capture thread (pid, tid), named after the comm of its
 * last sample, with its samples in input order (rsample.order, so that
 * samples a second pass completed, which come last, go back to their
 * places; arrival order among equal ones) and their times in
 * milliseconds after the
 * capture's first sample or event; registered from its start event or
 * first sample to its end event or last sample.  Weights are null (one
 * per sample) or the periods (--weight period), weightType "samples"
 * either way; the periods of a clock event are also threadCPUDelta.  The
 * frame, function, stack, resource and source tables are shared by the
 * threads (profile.shared), as the version requires.  Functions are
 * named as in folded output, one per name and module; inline frames are
 * frames of their own at the same address with their inlineDepth; a
 * frame's line is DWARF's.
 * Frames of a module carry its lib (path, build-id as codeId and as
 * breakpadId in Breakpad's byte order plus age 0) and their address in
 * the module's ELF (restack's "rel"; -1 when over 2^31 - 1, and for
 * kernel frames, whose addresses are not relative).  Categories: Other
 * (no module), User, Kernel, JIT, Stitched (a frame joined from the
 * thread's earlier samples) and Truncated (the "[truncated: REASON]"
 * frame a stack that did not reach its thread's root starts with).
 * Markers: one "Truncated stacks" interval per run of a thread's
 * consecutive samples truncated for the same reason, and the events of
 * firefox_add_event() ("Thread start", "Thread end", "Lost samples",
 * "Lost records").
 *
 * Memory: the shared tables grow with distinct frames and call paths;
 * each thread keeps 32 bytes per sample (stack, end reason, time, period,
 * order) and 24 per marker, and 32 bytes per event, until the profile is
 * written.  The
 * document is streamed out (through zlib when compressed); its bytes
 * depend only on the samples, events and their order.
 */
#ifndef RESTACK_FORMATS_FIREFOX_H
#define RESTACK_FORMATS_FIREFOX_H

#include <stdbool.h>
#include <stdint.h>

#include "common/err.h"
#include "common/stack.h"

struct firefox_opts {
	bool period;          /* weights are periods, not sample counts */
	bool plain;           /* plain JSON, not gzip-compressed */
};

/* What the capture says about itself (strings copied; NULL: unknown). */
struct firefox_meta {
	double interval_ms;   /* the sampling interval, 0: unknown */
	bool cpu_ns;          /* the periods are CPU time in ns (the clock
			       * events): written as threadCPUDelta */
	const char *arch;     /* "x86_64" */
	const char *osrelease;
	const char *cpu;      /* the CPU's description */
	unsigned cpus;        /* online CPUs, 0: unknown */
	const char *name;     /* the capture's name (meta.importedFrom) */
};

struct firefox;

struct firefox *firefox_new(const struct firefox_opts *opts);
void firefox_free(struct firefox *ff);

/* Adds one sample.  Returns 0, or -1 when out of memory. */
int firefox_add(struct firefox *ff, const struct rsample *s);

/* What the capture says happened besides samples (firefox_add_event). */
enum firefox_event {
	FIREFOX_THREAD_START,   /* the thread (pid, tid) was created */
	FIREFOX_THREAD_END,     /* it ended */
	FIREFOX_LOST_SAMPLES,   /* the kernel dropped count samples */
	FIREFOX_LOST_RECORDS,   /* ... count records */
	FIREFOX_EVENT__COUNT
};

/*
 * Adds an event at time (ns, on the samples' clock): an instant marker of
 * its thread, and for a start or end its registerTime or unregisterTime.
 * Events of threads without samples are left out, lost records or samples
 * of no such thread go to the process's first thread, else to the first.
 * It touches the events alone: it may run on another thread than
 * firefox_add(), never on two at once.  Returns 0, or -1 when out of
 * memory.
 */
int firefox_add_event(struct firefox *ff, enum firefox_event kind,
		      int32_t pid, int32_t tid, uint64_t time, uint64_t count);

/* Sets the capture's description.  Returns 0, or -1 out of memory. */
int firefox_set_meta(struct firefox *ff, const struct firefox_meta *m);

/* Writes the profile to fd.  Returns 0, or -1 with *err filled. */
int firefox_write(struct firefox *ff, int fd, struct err *err);

#endif
