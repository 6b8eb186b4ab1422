/*
 * stack.h - resolved samples: what the unwinder hands to the writers.
 *
 * A resolved sample is a list of frames, leaf first, each with the address
 * it was found at, how it was found (its origin) and its symbol location.
 * Symbol locations are shared and immutable (one per distinct module and
 * address); they live as long as the symbolizer that made them.
 */
#ifndef RESTACK_COMMON_STACK_H
#define RESTACK_COMMON_STACK_H

#include <stdbool.h>
#include <stdint.h>

/* How a frame was found. */
enum frame_origin {
	FRAME_SAMPLE,     /* the sampled user ip (registers) */
	FRAME_KERNEL,     /* kernel callchain entry recorded by the kernel */
	FRAME_CALLCHAIN,  /* user callchain entry recorded by the kernel */
	FRAME_CFI_EH,     /* unwound with .eh_frame CFI */
	FRAME_CFI_DEBUG,  /* unwound with .debug_frame CFI */
	FRAME_FP,         /* unwound by a validated frame-pointer step */
	FRAME_STITCHED,   /* joined from the thread's earlier samples */
	FRAME_SCAN,       /* found by a validated stack scan */
	FRAME_JIT,        /* unwound with JIT-provided information */
	FRAME_STUB,       /* a rule for a stub without CFI (PLT entries) */
	FRAME_GOPCLNTAB,  /* unwound with a Go function table's SP delta */
	FRAME_ORIGIN__COUNT
};

/* Why a sample's walk ended. Exactly one per sample. */
enum end_reason {
	END_ROOT,         /* reached the thread's root (CFI end or root symbol) */
	END_WINDOW,       /* the copied stack window was full and ran out */
	END_NO_CFI,       /* no unwind information covered a pc */
	END_BAD_RA,       /* a return address pointed to no code, or
			   * read as 0 outside a thread's first function */
	END_BAD_STACK,    /* a read fell outside a complete stack copy, or sp
			   * did not grow */
	END_LOOP,         /* a (pc, sp) pair repeated */
	END_MAX_DEPTH,    /* the frame limit was reached */
	END_NO_MODULE,    /* the code's file was not found or did not match */
	END_NO_USER,      /* no user stack or registers (kernel thread,
			   * exclude_user, no dwarf data) */
	END_CALLCHAIN,    /* frames came from the recorded callchain, which
			   * stopped before a root */
	END_NO_COPY,      /* the walk needed stack bytes the kernel did not
			   * copy: its copy stopped short of the size asked
			   * for at a page it could not read (not in memory
			   * yet, as in that page's own fault) */
	END_AMBIGUOUS,    /* stitching reached a frame that samples showed
			   * with several callers: which one is unknown */
	END_STACK_SWITCH, /* a function that changed stacks (Go's systemstack,
			   * mcall, morestack, asmcgocall): its callers are
			   * on another stack, not in the copy */
	END_MODULE_LOADING, /* a stream's sample went on while the code's module
			   * was still loading (unwind/modload.h) */
	END_REASON__COUNT
};

const char *frame_origin_name(enum frame_origin o);
const char *end_reason_name(enum end_reason r);

struct rsample;

/*
 * The pseudo-frame writers put at the root end of a user stack that did not
 * reach its thread's root ("[truncated: window exhausted]", ...), or NULL
 * for complete stacks and samples without a user part.
 */
const char *rsample_marker(const struct rsample *s);

enum sym_kind {
	SYM_USER,
	SYM_KERNEL,
	SYM_JIT,
	SYM_UNKNOWN,      /* no module covers the address */
	SYM_PENDING,      /* not named yet (unwind/resolve.h,
			   * resolve_opts.defer_names): never written */
};

struct sym_entry {
	const char *name;     /* function name, or NULL when unknown */
	const char *file;     /* source file, or NULL */
	uint32_t line;        /* source line, 0 when unknown */
	bool inlined;         /* an inlined call, not a real frame */
};

/*
 * Names of an inline chain that depend on what addr2line was asked before
 * (unwind/a2l.h, struct a2l_deps), one entry per sym_entry; the names are
 * demangled.  A stateful entry is named dwarf, or the symbol its function
 * was renamed to; entry 0's function, on its first lookup, is named first.
 */
struct sym_a2l_entry {
	uint64_t low;         /* the function's identity in its module */
	uint32_t idx;
	bool stateful;        /* false: the sym_entry's name is final */
	const char *dwarf;
};

struct sym_a2l {
	uint64_t module;      /* the module's identity (path, build-id) */
	const char *real;     /* perf's symbol at the address: an entry
			       * with another name is inlined */
	const char *first;    /* entry 0 on its function's first lookup */
	bool renames;         /* ... which renames the function to it */
	struct sym_a2l_entry e[];
};

/*
 * The symbols at one address: nr entries, innermost (inlined) first, the
 * last one being the real function.  module is the mapping's path as the
 * capture names it ("[kernel.kallsyms]" for the kernel).
 */
struct sym_loc {
	const char *module;
	uint64_t rel;         /* address in the module's ELF (or kernel) */
	uint8_t kind;         /* enum sym_kind */
	uint16_t nr;
	uint8_t build_id_size; /* 0: no build-id known */
	const uint8_t *build_id; /* the module's, lives as long as loc */
	const struct sym_a2l *a2l; /* NULL, or the names' dependencies on
				    * earlier lookups (the names as on
				    * their functions' first lookups) */
	struct sym_entry e[];
};

struct rframe {
	uint64_t pc;          /* as found: sampled ip or return address */
	uint8_t origin;       /* enum frame_origin */
	const struct sym_loc *loc;
};

struct rsample {
	int32_t pid, tid;
	const char *comm;     /* thread name at sample time, never NULL */
	uint64_t time;
	uint64_t order;       /* the event's place in the input's delivery
			       * order (event.order): samples a second pass
			       * completed come after the others, and
			       * writers that keep input order sort by it;
			       * 0 for a profile input's */
	int32_t cpu;
	uint64_t period;
	uint64_t count;       /* samples it stands for: 0 means 1 (a
			       * capture's); a profile input's line or
			       * sample sums several (rsample_count()) */
	unsigned attr;        /* index of the event */
	const char *event;    /* event name */
	uint8_t end;          /* enum end_reason */
	bool off_cpu;         /* an off-CPU interval (--profile offcpu or
			       * wall): period is its length in ns */
	uint32_t nr_frames;
	uint32_t nr_kernel;   /* the first nr_kernel frames are kernel */
	struct rframe *frames;/* leaf first */
};

/* The samples s stands for: its count, 1 when that is 0. */
static inline uint64_t rsample_count(const struct rsample *s)
{
	return s->count ? s->count : 1;
}

#endif
