/*
 * resolve.h - turn the event stream into resolved samples: process model,
 * module cache, unwinder and symbolizer driven together.
 *
 * Feed every event in time order to resolve_event(); for each sample it
 * fills a struct rsample (kernel frames from the recorded callchain, then
 * the user frames the unwinder found or the recorded user callchain),
 * valid until the next call.
 */
#ifndef RESTACK_UNWIND_RESOLVE_H
#define RESTACK_UNWIND_RESOLVE_H

#include <stdbool.h>
#include <stdint.h>

#include "common/err.h"
#include "common/event.h"
#include "common/stack.h"
#include "unwind/aspace.h"
#include "unwind/module.h"
#include "unwind/symbolize.h"
#include "unwind/unwind.h"

struct resolve_opts {
	bool no_inline;          /* one frame per function, no inline chain */
	bool no_kernel;          /* drop kernel frames */
	bool no_fp;              /* no frame-pointer fallback */
	unsigned max_frames;     /* 0: 1024 */
	const char *kallsyms;    /* kernel symbols file, or NULL for none */
	const char *const *buildid_dirs;
	unsigned nr_buildid_dirs;
	bool use_live_vdso;      /* this machine's vdso may stand in */
};

struct resolve_stats {
	uint64_t samples;
	uint64_t end[END_REASON__COUNT];
	uint64_t frames[FRAME_ORIGIN__COUNT];
	uint64_t kernel_only;     /* samples with no user part at all */
	uint64_t truncated;       /* dyn_size == size: the window was full */
};

struct resolve {
	struct resolve_opts opts;
	const struct regs_arch *arch;
	struct modcache mc;
	struct aspace as;
	struct symbolizer sym;
	struct unwinder uw;
	struct rframe *frames;   /* output scratch */
	size_t alloc_frames;
	struct resolve_stats stats;
};

/*
 * Sets up for a capture recorded on arch.  Returns 0, or -1 with *err
 * filled (unknown architecture, out of memory).
 */
int resolve_init(struct resolve *r, const struct resolve_opts *opts,
		 enum event_arch arch, struct err *err);
void resolve_release(struct resolve *r);

/*
 * Takes one event.  Returns 1 with *out filled for a sample, 0 for any
 * other event, -1 when out of memory.
 */
int resolve_event(struct resolve *r, const struct event *ev,
		  struct rsample *out);

#endif
