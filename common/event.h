/*
 * event.h - the format-neutral event stream every reader produces and the
 * unwinder consumes (see DESIGN.md, "Data flow").
 *
 * Readers deliver one struct event at a time.  Unless a field says
 * otherwise, pointers inside an event (strings, stack bytes, callchain,
 * registers, raw payloads) belong to the reader and stay valid until the
 * reader's next "next" call or its close.  Numbers are in host byte order;
 * only user stack bytes (event_sample.stack, the recording machine's
 * memory) and tracepoint payloads (event_attr.file_swap says whether the
 * input's byte order differs from the host's) are left as recorded.
 *
 * event.attr points into the reader's attribute table, which may move when
 * a pipe-mode stream declares another event: keep attr->index, not the
 * pointer, beyond the next call.
 */
#ifndef RESTACK_COMMON_EVENT_H
#define RESTACK_COMMON_EVENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum event_type {
	EVENT_SAMPLE,     /* a profiling sample */
	EVENT_MMAP,       /* a mapping appeared (MMAP and MMAP2) */
	EVENT_COMM,       /* a thread's name changed, or it exec'd */
	EVENT_FORK,       /* a process or thread was created */
	EVENT_EXIT,       /* a process or thread ended */
	EVENT_LOST,       /* the kernel dropped records */
	EVENT_BUILD_ID,   /* a build-id for a path, from the input's metadata */
	EVENT_OTHER,      /* any other record; see event.rec_type and raw */
	EVENT_JIT,        /* a name for JIT code, from the input (sysprof's
			   * JITMAP): event.jit, for process event.pid */
	EVENT__COUNT
};

/* Where a record's timestamp came from. */
#define EVENT_NO_TIME UINT64_MAX

/* cpumode of a sample or mapping (perf's PERF_RECORD_MISC_* values). */
enum event_cpumode {
	EVENT_MODE_UNKNOWN = 0,
	EVENT_MODE_KERNEL = 1,
	EVENT_MODE_USER = 2,
	EVENT_MODE_HV = 3,
	EVENT_MODE_GUEST_KERNEL = 4,
	EVENT_MODE_GUEST_USER = 5,
};

/* Callchain context markers, as in linux/perf_event.h. */
#define EVENT_CONTEXT_HV ((uint64_t)-32)
#define EVENT_CONTEXT_KERNEL ((uint64_t)-128)
#define EVENT_CONTEXT_USER ((uint64_t)-512)
#define EVENT_CONTEXT_USER_DEFERRED ((uint64_t)-640)
#define EVENT_CONTEXT_GUEST ((uint64_t)-2048)
#define EVENT_CONTEXT_GUEST_KERNEL ((uint64_t)-2176)
#define EVENT_CONTEXT_GUEST_USER ((uint64_t)-2560)
#define EVENT_CONTEXT_MAX ((uint64_t)-4095)

/* Architectures whose registers and stacks the unwinder understands. */
enum event_arch {
	EVENT_ARCH_UNKNOWN,
	EVENT_ARCH_X86_64,
	EVENT_ARCH_AARCH64,
	EVENT_ARCH_I386,
};

/*
 * One profiling event (perf "evsel", a perf_event_attr).  Owned by the
 * reader, valid until it is closed.
 */
struct event_attr {
	unsigned index;         /* 0-based, in input order */
	const char *name;       /* "cpu-clock", "sched:sched_switch", ... */
	uint32_t type;          /* perf attr.type (0 for non-perf inputs) */
	uint64_t config;
	uint64_t sample_type;   /* PERF_SAMPLE_* bits */
	uint64_t read_format;
	uint64_t flags;         /* the attr flag bitfield word */
	uint64_t sample_period; /* period, or frequency when freq is set */
	bool freq;
	bool sample_id_all;
	uint64_t sample_regs_user;
	uint32_t sample_stack_user;
	uint64_t sample_regs_intr;
	uint64_t branch_sample_type;
	int32_t clockid;
	bool use_clockid;
	bool file_swap;         /* the file is in the other byte order */
};

/* perf's attr.type PERF_TYPE_SOFTWARE and its config PERF_COUNT_SW_DUMMY */
#define EVENT_TYPE_SOFTWARE 1u
#define EVENT_SW_DUMMY 9u

/* Whether a is perf's dummy event, which never samples (side-band only). */
static inline bool event_attr_is_dummy(const struct event_attr *a)
{
	return a->type == EVENT_TYPE_SOFTWARE && a->config == EVENT_SW_DUMMY;
}

struct event_branch {
	uint64_t from, to, flags;
};

struct event_sample {
	uint8_t cpumode;        /* enum event_cpumode */
	bool exact_ip;
	uint64_t ip;
	uint64_t addr;
	uint64_t id;
	uint64_t stream_id;
	uint64_t period;
	uint64_t weight;        /* WEIGHT or WEIGHT_STRUCT's u64 */
	uint64_t data_src;
	uint64_t transaction;
	uint64_t phys_addr;
	uint64_t cgroup;
	uint64_t data_page_size;
	uint64_t code_page_size;

	/* CALLCHAIN: nr entries including context markers, host order. */
	const uint64_t *callchain;
	uint64_t callchain_nr;

	/* REGS_USER: abi 0 means none; regs packed in mask bit order. */
	uint64_t regs_user_abi;
	uint64_t regs_user_mask;
	const uint64_t *regs_user;
	unsigned regs_user_nr;

	/* REGS_INTR, the same way. */
	uint64_t regs_intr_abi;
	uint64_t regs_intr_mask;
	const uint64_t *regs_intr;
	unsigned regs_intr_nr;

	/*
	 * STACK_USER: stack_size bytes were reserved, only stack_dyn_size of
	 * them (from the sampled sp upwards) are valid.  Target byte order.
	 */
	const uint8_t *stack;
	uint64_t stack_size;
	uint64_t stack_dyn_size;

	/* RAW: tracepoint payload in target byte order. */
	const uint8_t *raw;
	uint32_t raw_size;

	/* BRANCH_STACK */
	const struct event_branch *branches;
	uint64_t branch_nr;
	uint64_t branch_hw_idx;
	bool has_branch_hw_idx;

	/* READ: values as read_format lays them out, host order. */
	const uint64_t *read_values;
	unsigned read_nr;
	uint64_t aux_size;
};

struct event_mmap {
	uint64_t start, len, pgoff;
	const char *filename;
	uint8_t cpumode;
	bool executable;        /* not a data mapping (misc MMAP_DATA clear) */
	bool has_inode;         /* MMAP2 with maj/min/ino */
	uint32_t maj, min;
	uint64_t ino, ino_generation;
	uint32_t prot, flags;   /* MMAP2 only, else 0 */
	uint8_t build_id[20];   /* MMAP2 with a build-id, else size 0 */
	uint8_t build_id_size;
	bool is_mmap2;
};

struct event_comm {
	const char *comm;
	bool exec;              /* COMM_EXEC: the thread exec'd */
};

struct event_fork {
	int32_t ppid, ptid;     /* parent (FORK) or parent of the dying task */
	uint64_t time;          /* the record's own time field */
};

struct event_lost {
	uint64_t id;            /* LOST: id of the event that lost records */
	uint64_t lost;          /* how many records (LOST) or samples */
	bool samples;           /* LOST_SAMPLES (true) or LOST (false) */
};

struct event_jit {
	uint64_t start, len;    /* the code's addresses as samples name them */
	const char *name;
	bool bundled;           /* not JIT code: a name the input carries for
				 * addresses of a file mapping (sysprof's
				 * __symbols__), for when the file is absent */
};

struct event_build_id {
	int32_t pid;            /* machine pid, -1 for the host */
	uint8_t cpumode;
	uint8_t build_id[20];
	uint8_t build_id_size;
	const char *filename;
};

struct event {
	enum event_type type;
	uint32_t rec_type;      /* the input's own record type */
	uint16_t misc;
	uint64_t file_off;      /* where the record starts in the input */
	bool compressed;        /* it came out of a compressed block at file_off */
	/*
	 * Its place in the reader's delivery order, from 0, counting the
	 * samples a sample filter took out too: the same for a record in
	 * every reader of the input, whatever their filters.
	 */
	uint64_t order;
	const struct event_attr *attr; /* the event it belongs to, or NULL */

	/* From the sample or the sample_id trailer; -1 / EVENT_NO_TIME absent. */
	int32_t pid, tid;
	uint64_t time;
	int32_t cpu;
	uint64_t id;

	union {
		struct event_sample sample;
		struct event_mmap mmap;
		struct event_comm comm;
		struct event_fork fork;     /* EVENT_FORK and EVENT_EXIT */
		struct event_lost lost;
		struct event_build_id build_id;
		struct event_jit jit;
	};

	/* The whole record, as in the input (its byte order). */
	const uint8_t *raw;
	size_t raw_len;
};

/*
 * A reader's sample filter (see source_set_sample_filter()) is asked about
 * every sample record, before it is decoded; it sees only what locating
 * the record reveals.
 */
struct sample_key {
	unsigned attr;          /* index of the event */
	int32_t pid, tid;       /* -1 when the samples do not say */
	uint64_t order;         /* as event.order */
	/*
	 * Asked as the sample is read (SAMPLE_FILTER_READ) and queued for
	 * time order: the filter may put off its answer (SAMPLE_ASK_AGAIN).
	 */
	bool as_read;
};

/* What a sample filter answers. */
enum sample_verdict {
	SAMPLE_DROP,
	SAMPLE_KEEP,
	/*
	 * Only when k->as_read: keep the sample for now and ask again, with
	 * as_read false, when it is next to be delivered (in time order);
	 * then it must decide.  Elsewhere it means SAMPLE_KEEP.
	 */
	SAMPLE_ASK_AGAIN,
};

typedef enum sample_verdict (*sample_filter_fn)(void *ctx,
						const struct sample_key *k);

/*
 * When a filter is asked about a sample:
 * SAMPLE_FILTER_DELIVERED: in delivery order, just before the sample
 *   would be delivered; order is its event.order, and every reader of an
 *   input numbers its events alike, whatever its filter drops.
 * SAMPLE_FILTER_READ: as the sample is read (file order), before the
 *   reader puts records in time order, which then keeps only what the
 *   filter wants: cheaper, when most samples are dropped.  order then
 *   counts records as they are read, and the event.order of what is
 *   delivered matches no other reader's; the events delivered, and their
 *   sequence, are still those of a reader without the filter, less the
 *   samples dropped.  A sample the filter puts off is asked about again
 *   in delivery order (and those a reader does not queue, which come in
 *   file order, are asked once, with as_read false).
 */
enum sample_filter_when {
	SAMPLE_FILTER_DELIVERED,
	SAMPLE_FILTER_READ,
};

#endif
