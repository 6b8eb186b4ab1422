/*
 * unwind.h - walk one sample's user stack offline: registers and the
 * copied stack bytes from the capture, CFI from the module files.
 *
 * Memory is read only from the copied window [sp, sp + dyn_size) and from
 * the modules' files.  Each caller frame is looked up at its return
 * address - 1 (except after a signal frame).  Where no CFI covers the pc
 * the walk tries, in order, the PLT rule, a Go function table's SP delta,
 * a validated frame-pointer step and a budgeted stack scan
 * (stitching-jit.md sections 7.2 and 7.3).
 */
#ifndef RESTACK_UNWIND_UNWIND_H
#define RESTACK_UNWIND_UNWIND_H

#include <stdbool.h>
#include <stdint.h>

#include "common/event.h"
#include "common/stack.h"
#include "unwind/regs.h"

struct aspace_maps;
struct modcache;
struct module;

#define UNWIND_MAX_FRAMES_DEFAULT 1024
#define UNWIND_SCAN_DEFAULT 2      /* scanned frames per sample */
#define UNWIND_SCAN_WORDS 40       /* words a scan examines */
#define UNWIND_SCAN_WORDS_LEAF 160 /* ... when scanning from the leaf */

struct unwind_opts {
	unsigned max_frames;    /* 0: UNWIND_MAX_FRAMES_DEFAULT */
	unsigned max_scan;      /* frames found by scanning per sample;
				 * 0: never scan */
	bool no_fp;             /* never use frame-pointer steps */
};

struct unwind_frame {
	uint64_t pc;            /* sampled ip or return address */
	uint64_t sp;            /* stack pointer in this frame */
	uint64_t addr;          /* address to name: pc, or pc - 1 for callers */
	uint64_t rel;           /* the same in the module's ELF addresses */
	struct module *mod;     /* NULL: no mapping or no file */
	struct module *map_mod; /* the mapping's module, file or not (JIT
				 * code's "/tmp/perf-PID.map"), or NULL */
	const char *map_path;   /* the mapping's path, or NULL */
	uint8_t origin;         /* enum frame_origin */
};

/* Receives one line per unwinding decision when set (debugging aid). */
typedef void (*unwind_trace_fn)(void *ctx, const char *line);

/* A module with CFI for JIT code at addr (outside any file), or NULL. */
typedef struct module *(*unwind_jit_fn)(void *ctx, uint64_t addr);

struct uw_pc_slot;

struct unwinder {
	const struct regs_arch *arch;
	unwind_trace_fn trace;
	void *trace_ctx;
	unwind_jit_fn jit;        /* set by the caller for each sample */
	void *jit_ctx;
	struct modcache *mc;
	struct unwind_opts opts;
	struct unwind_frame *frames;   /* scratch, max_frames entries */
	struct uw_pc_slot *pcs;        /* what a module's code address
					* gave (unwind.c), owned */
	/* counts over all walks */
	uint64_t cfi_rows_bad;         /* rows we could not evaluate */
	uint64_t fp_steps, fp_rejected;
	uint64_t stub_steps;
	uint64_t go_steps;             /* by a Go function table's SP delta */
	uint64_t scan_steps, scan_rejected; /* scans that found a frame,
					     * scans that found none */
};

/* Returns 0, or -1 when out of memory. */
int unwinder_init(struct unwinder *u, const struct regs_arch *arch,
		  struct modcache *mc, const struct unwind_opts *opts);
void unwinder_release(struct unwinder *u);

struct unwind_result {
	struct unwind_frame *frames;   /* u->frames, leaf first */
	unsigned nr;
	uint8_t end;                   /* enum end_reason */
	struct module *end_mod;        /* where NO_CFI / NO_MODULE happened
					* (JIT code: its perf map module) */
	uint64_t end_addr;             /* a failed read, or the bad pc */
	uint64_t end_cfa;              /* END_WINDOW: the outermost frame's
					* CFA (its caller's sp) when known,
					* else 0 */
	bool zero_ra;                  /* END_ROOT: the outermost frame's
					* return address read as 0, the end
					* of a thread's stack only in its
					* first function (the caller says) */
};

/*
 * Unwinds the user part of sample s of a process whose code mappings are
 * maps.  Fills *res (frames valid until the next call).
 */
void unwind_sample(struct unwinder *u, const struct aspace_maps *maps,
		   const struct event_sample *s, struct unwind_result *res);

#endif
