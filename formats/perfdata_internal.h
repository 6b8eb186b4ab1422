/*
 * perfdata_internal.h - perf.data on-disk constants and the reader's
 * private state, shared by the formats/perfdata_*.c files.
 *
 * Sources of truth: include/uapi/linux/perf_event.h (kernel records,
 * sample layout) and tools/perf/util/{header,event,session}.[ch] (file
 * layout, synthesized records, features); see
 * shared/reference/perfdata-format.md for the byte-level walk-through.
 */
#ifndef RESTACK_FORMATS_PERFDATA_INTERNAL_H
#define RESTACK_FORMATS_PERFDATA_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <zstd.h>

#include "common/cur.h"
#include "common/hashmap.h"
#include "common/input.h"
#include "formats/perfdata.h"

/* "PERFILE2" read as a little-endian u64. */
#define PD_MAGIC 0x32454c4946524550ULL
#define PD_MAGIC_SWAPPED 0x50455246494c4532ULL

#define PD_FILE_HEADER_SIZE 104   /* with the 256-bit feature bitmap */
#define PD_FILE_HEADER_V1_SIZE 72 /* no feature bitmap */
#define PD_PIPE_HEADER_SIZE 16
#define PD_ATTR_VER0_SIZE 64
#define PD_REC_HEADER_SIZE 8

/* Kernel record types (enum perf_event_type). */
enum {
	PD_REC_MMAP = 1,
	PD_REC_LOST = 2,
	PD_REC_COMM = 3,
	PD_REC_EXIT = 4,
	PD_REC_THROTTLE = 5,
	PD_REC_UNTHROTTLE = 6,
	PD_REC_FORK = 7,
	PD_REC_READ = 8,
	PD_REC_SAMPLE = 9,
	PD_REC_MMAP2 = 10,
	PD_REC_AUX = 11,
	PD_REC_ITRACE_START = 12,
	PD_REC_LOST_SAMPLES = 13,
	PD_REC_SWITCH = 14,
	PD_REC_SWITCH_CPU_WIDE = 15,
	PD_REC_NAMESPACES = 16,
	PD_REC_KSYMBOL = 17,
	PD_REC_BPF_EVENT = 18,
	PD_REC_CGROUP = 19,
	PD_REC_TEXT_POKE = 20,
	PD_REC_AUX_OUTPUT_HW_ID = 21,
	PD_REC_CALLCHAIN_DEFERRED = 22,
	PD_REC_KERNEL_MAX = 22,

	/* Records perf itself writes (enum perf_user_event_type). */
	PD_REC_HEADER_ATTR = 64,
	PD_REC_HEADER_EVENT_TYPE = 65,
	PD_REC_HEADER_TRACING_DATA = 66,
	PD_REC_HEADER_BUILD_ID = 67,
	PD_REC_FINISHED_ROUND = 68,
	PD_REC_ID_INDEX = 69,
	PD_REC_AUXTRACE_INFO = 70,
	PD_REC_AUXTRACE = 71,
	PD_REC_AUXTRACE_ERROR = 72,
	PD_REC_THREAD_MAP = 73,
	PD_REC_CPU_MAP = 74,
	PD_REC_STAT_CONFIG = 75,
	PD_REC_STAT = 76,
	PD_REC_STAT_ROUND = 77,
	PD_REC_EVENT_UPDATE = 78,
	PD_REC_TIME_CONV = 79,
	PD_REC_HEADER_FEATURE = 80,
	PD_REC_COMPRESSED = 81,
	PD_REC_FINISHED_INIT = 82,
	PD_REC_COMPRESSED2 = 83,
	PD_REC_BPF_METADATA = 84,
	PD_REC_SCHEDSTAT_CPU = 85,
	PD_REC_SCHEDSTAT_DOMAIN = 86,
	PD_REC_USER_MAX = 86,
};

/* header.misc bits. */
#define PD_MISC_CPUMODE_MASK 0x7
#define PD_MISC_MMAP_DATA (1u << 13)
#define PD_MISC_COMM_EXEC (1u << 13)
#define PD_MISC_SWITCH_OUT (1u << 13)
#define PD_MISC_EXACT_IP (1u << 14)
#define PD_MISC_MMAP_BUILD_ID (1u << 14)
#define PD_MISC_SWITCH_OUT_PREEMPT (1u << 14)
#define PD_MISC_BUILD_ID_SIZE (1u << 15)

/* sample_type bits (enum perf_event_sample_format). */
#define PD_SAMPLE_IP (1ULL << 0)
#define PD_SAMPLE_TID (1ULL << 1)
#define PD_SAMPLE_TIME (1ULL << 2)
#define PD_SAMPLE_ADDR (1ULL << 3)
#define PD_SAMPLE_READ (1ULL << 4)
#define PD_SAMPLE_CALLCHAIN (1ULL << 5)
#define PD_SAMPLE_ID (1ULL << 6)
#define PD_SAMPLE_CPU (1ULL << 7)
#define PD_SAMPLE_PERIOD (1ULL << 8)
#define PD_SAMPLE_STREAM_ID (1ULL << 9)
#define PD_SAMPLE_RAW (1ULL << 10)
#define PD_SAMPLE_BRANCH_STACK (1ULL << 11)
#define PD_SAMPLE_REGS_USER (1ULL << 12)
#define PD_SAMPLE_STACK_USER (1ULL << 13)
#define PD_SAMPLE_WEIGHT (1ULL << 14)
#define PD_SAMPLE_DATA_SRC (1ULL << 15)
#define PD_SAMPLE_IDENTIFIER (1ULL << 16)
#define PD_SAMPLE_TRANSACTION (1ULL << 17)
#define PD_SAMPLE_REGS_INTR (1ULL << 18)
#define PD_SAMPLE_PHYS_ADDR (1ULL << 19)
#define PD_SAMPLE_AUX (1ULL << 20)
#define PD_SAMPLE_CGROUP (1ULL << 21)
#define PD_SAMPLE_DATA_PAGE_SIZE (1ULL << 22)
#define PD_SAMPLE_CODE_PAGE_SIZE (1ULL << 23)
#define PD_SAMPLE_WEIGHT_STRUCT (1ULL << 24)
#define PD_SAMPLE_MAX_BIT 25

/* read_format bits. */
#define PD_READ_TOTAL_TIME_ENABLED (1ULL << 0)
#define PD_READ_TOTAL_TIME_RUNNING (1ULL << 1)
#define PD_READ_ID (1ULL << 2)
#define PD_READ_GROUP (1ULL << 3)
#define PD_READ_LOST (1ULL << 4)

/* attr flag word bits (offset 40 of perf_event_attr). */
#define PD_ATTR_FREQ (1ULL << 10)
#define PD_ATTR_SAMPLE_ID_ALL (1ULL << 18)
#define PD_ATTR_USE_CLOCKID (1ULL << 25)

/* branch_sample_type bits that change the sample layout. */
#define PD_BRANCH_HW_INDEX (1ULL << 17)
#define PD_BRANCH_COUNTERS (1ULL << 19)

/* Feature ids (HEADER_*). */
enum {
	PD_FEAT_TRACING_DATA = 1,
	PD_FEAT_BUILD_ID = 2,
	PD_FEAT_HOSTNAME = 3,
	PD_FEAT_OSRELEASE = 4,
	PD_FEAT_VERSION = 5,
	PD_FEAT_ARCH = 6,
	PD_FEAT_NRCPUS = 7,
	PD_FEAT_CPUDESC = 8,
	PD_FEAT_CPUID = 9,
	PD_FEAT_TOTAL_MEM = 10,
	PD_FEAT_CMDLINE = 11,
	PD_FEAT_EVENT_DESC = 12,
	PD_FEAT_CPU_TOPOLOGY = 13,
	PD_FEAT_NUMA_TOPOLOGY = 14,
	PD_FEAT_BRANCH_STACK = 15,
	PD_FEAT_PMU_MAPPINGS = 16,
	PD_FEAT_GROUP_DESC = 17,
	PD_FEAT_AUXTRACE = 18,
	PD_FEAT_STAT = 19,
	PD_FEAT_CACHE = 20,
	PD_FEAT_SAMPLE_TIME = 21,
	PD_FEAT_MEM_TOPOLOGY = 22,
	PD_FEAT_CLOCKID = 23,
	PD_FEAT_DIR_FORMAT = 24,
	PD_FEAT_BPF_PROG_INFO = 25,
	PD_FEAT_BPF_BTF = 26,
	PD_FEAT_COMPRESSED = 27,
	PD_FEAT_CPU_PMU_CAPS = 28,
	PD_FEAT_CLOCK_DATA = 29,
	PD_FEAT_HYBRID_TOPOLOGY = 30,
	PD_FEAT_PMU_CAPS = 31,
	PD_FEAT_CPU_DOMAIN_INFO = 32,
	PD_FEAT_E_MACHINE = 33,
	PD_FEAT_CLN_SIZE = 34,
	PD_FEAT_KNOWN_MAX = 34,
};

/*
 * A refcounted chunk of input or decompressed bytes.  Records handed to the
 * ordering queue point into a block and hold a reference, so a block lives
 * until every record in it was delivered.
 */
struct pd_block {
	uint32_t refs;
	size_t len, cap;
	uint8_t *data;          /* storage[] or the mapping */
	void *map;              /* a window of the input file, or NULL */
	struct pd_block *next_free;
	uint8_t storage[];
};

/* A sequential source of records over blocks. */
struct pd_src {
	struct pd_block *blk;   /* current block; the source holds one ref */
	size_t pos;             /* next unread byte in blk */
	uint64_t blk_off;       /* input offset of blk->data[0] (plain data) */
};

/* A record waiting in the ordering queue. */
struct pd_qent {
	uint64_t time;
	uint64_t seq;
	struct pd_block *blk;
	const uint8_t *rec;
	uint64_t file_off;
	uint32_t len;
	uint8_t type;           /* record type, 0 when it is above 255 */
	bool compressed;
	uint16_t attr;          /* attr index, for prefetching; or
				 * PD_QENT_NO_ATTR */
	bool has_key;           /* a sample, and pid and tid are known */
	bool ask_again;         /* the filter put its answer off until
				 * delivery (SAMPLE_ASK_AGAIN) */
	int32_t pid, tid;       /* a sample's, -1 when it has none */
};

#define PD_QENT_NO_ATTR UINT16_MAX

/*
 * A run of queued records in ascending (time, seq) order: q->ents[head]
 * up to q->ents[end], time and seq those of ents[head] (the heap's key).
 */
struct pd_run {
	uint64_t time;
	uint64_t seq;
	size_t head, end;
};

/* The ordering queue (perfdata_order.c). */
struct pd_queue {
	struct pd_qent *ents;   /* records in arrival order, with holes */
	size_t nr_ents, alloc_ents;
	size_t nr_live;         /* records queued */
	struct pd_run *runs;    /* binary heap of the runs by (time, seq) */
	size_t nr_runs, alloc_runs;
	size_t open;            /* heap slot of the run ending at nr_ents, to
				 * which newer records are appended, or
				 * SIZE_MAX */
	uint64_t bytes;         /* record bytes held */
	uint64_t max_bytes;     /* the budget: a record waits for at most
				 * this many bytes of timed records read
				 * after it */
	uint64_t read_bytes;    /* of timed records read, queued or not */
	uint64_t next_mark;     /* read_bytes of the next mark */
	uint64_t mark_time;     /* max_time at the last mark */
	uint64_t force_limit;   /* deliver entries with time <= this too:
				 * max_time at the mark before */
	uint64_t next_flush;    /* FINISHED_ROUND: deliver up to this time */
	uint64_t flush_limit;   /* deliver entries with time <= flush_limit */
	uint64_t max_time;      /* newest timestamp queued so far */
	uint64_t last_delivered;
	bool draining;          /* end of input: deliver everything */
};

/* Counts of one attr's sample layout (perfdata_sample.c). */
struct pd_layout {
	unsigned attr;          /* the attr's index, or UINT_MAX: none yet */
	unsigned nr_regs_user, nr_regs_intr;
	size_t tail;            /* bytes from dyn_size to the end of a sample,
				 * 0 when that is not fixed */
	size_t head;            /* bytes from REGS_USER's abi to the stack */
};

/* id -> attr index */
struct pd_id {
	uint64_t id;
	unsigned attr;
};

struct perfdata_reader {
	struct input in;
	struct perfdata_opts opts;
	struct err err;
	struct perfdata_info info;
	struct perfdata_stats stats;

	/* Per-attr state parallel to info.attrs. */
	struct pd_id *ids;
	size_t nr_ids, alloc_ids;
	bool ids_sorted;
	size_t attrs_alloc;         /* of info.attrs and attr_names */
	char **attr_names;          /* owned names, parallel to attrs */
	size_t samples_alloc;       /* of stats.samples_by_attr */

	/* Where the id sits, from the first attr (perf requires all agree). */
	int sample_id_pos;          /* u64 index in SAMPLE, or -1 */
	int trailer_id_pos;         /* u64 index from the end, or -1 */

	/* The record stream. */
	uint64_t data_end;          /* input offset where records end */
	uint64_t in_off;            /* next input offset to read */
	bool use_mmap;              /* map windows of a regular file */
	struct pd_mapper *mapper;   /* maps them ahead, or NULL */
	struct perfdata_windows *windows; /* shares them, or NULL */
	struct pd_src src;
	bool src_done;

	/*
	 * zstd stream across COMPRESSED records.  A record is decompressed
	 * as its records are read (pd_inflate()), so a record that inflates
	 * to much costs that many bytes read, never that much memory.
	 */
	ZSTD_DStream *zstd;
	struct pd_src dsrc;         /* decompressed records */
	bool in_dsrc;               /* reading records out of dsrc */
	uint64_t dsrc_file_off;     /* COMPRESSED record they came from */
	struct pd_block *zblk;      /* its block (a ref) while zin has bytes
				     * or zstd output to give, else NULL */
	ZSTD_inBuffer zin;          /* its zstd data, into zblk */
	uint64_t zout;              /* bytes it gave so far */
	uint64_t zlimit;            /* the most it may give */

	struct pd_block *free_blocks;
	uint64_t seq;

	struct pd_queue q;
	struct pd_qent cur;         /* the record being delivered */
	uint64_t order;             /* event.order of the next record */
	sample_filter_fn filter;    /* perfdata_set_sample_filter() */
	bool filter_as_read;        /* SAMPLE_FILTER_READ */
	void *filter_ctx;
	uint64_t judged_seq;        /* the queued record the filter was */
	bool judged, judged_keep;   /* asked about last, and its answer */
	struct pd_layout layout;    /* of the attr last decoded or prefetched */
	bool cur_held;              /* cur.blk holds a ref to drop */

	/* Scratch arrays for the event being delivered (host byte order). */
	uint64_t *scratch_u64;
	size_t scratch_alloc;
	size_t scratch_used;
	struct event_branch *branches;
	size_t branches_alloc;

	/* Copies of trailing payloads we keep. */
	uint8_t *tracing_data;
	/* The tracing data parsed (perfdata_tp.c), on first need. */
	struct tracepoint *tp;
	bool tp_tried;
	struct err tp_err;

	bool saw_last_feature;

	/* build-id list: (build-id, name) -> index + 1, and its capacity */
	struct hashmap bid_index;
	size_t bid_alloc;

	/* perfdata_index_records(): where the records but samples are */
	uint64_t *index;
	size_t nr_index, alloc_index;
	bool indexing, index_bad;
	/* perfdata_visit_only(): the only records read, ascending */
	uint64_t *visit;
	size_t nr_visit, next_visit;
	uint64_t visit_from;     /* the next may start here, no sooner */
	uint64_t visit_round_off; /* the round pd_visit_next() took */
	struct pd_block *round_blk; /* a FINISHED_ROUND record's bytes,
				  * the reader's reference held */
};

/* perfdata_visit.c */
void pd_index_note(struct perfdata_reader *r, const struct pd_qent *q,
		   uint32_t type);
/*
 * Moves a visiting reader to its next record: 1 (the source is there),
 * 2 (a round taken as read, at r->visit_round_off: pd_visit_round()
 * makes it), 0 when no record is left, -1 when the list goes back.
 */
int pd_visit_next(struct perfdata_reader *r);
void pd_visit_round(struct perfdata_reader *r, struct pd_qent *q);

/* perfdata_read.c */
int pd_attr_add(struct perfdata_reader *r, struct cur *c, size_t attr_bytes,
		const char *what);
int pd_id_add(struct perfdata_reader *r, uint64_t id, unsigned attr);
int pd_attr_by_id(struct perfdata_reader *r, uint64_t id, unsigned *attr);
void pd_block_put(struct perfdata_reader *r, struct pd_block *b);
/* Lets go of s's block: s has none after. */
void pd_src_release(struct perfdata_reader *r, struct pd_src *s);

/*
 * Regular files are read through mappings of windows of the data section:
 * PD_MAP_WINDOW bytes from a multiple of PD_MAP_ALIGN in the file, and
 * PD_MAP_SLACK (the most a record can take) more, so that the record a
 * window's end cuts lies whole in the next window, which starts
 * PD_MAP_WINDOW after it.  Aligned windows let the kernel map the page
 * cache's 2 MiB folios (those of a file read from disk on kernels with
 * large folios) with one page-table entry each instead of 512: mapping the
 * 224 MB bench capture read back from disk takes 4-5 ms instead of 8-9
 * (19-21 ms when the cache holds it in single pages, as we found captures
 * cached for hours; perf record's writes leave folios of 4-128 KiB; the
 * folio sizes are nothing a reader can change).  pd_map_base() is the
 * start of the window that holds file offset off; pd_map_len() its length
 * when the data ends at data_end.
 */
#define PD_MAP_WINDOW (4u << 20)
#define PD_MAP_ALIGN (2u << 20)
#define PD_MAP_SLACK (64u << 10)

static inline uint64_t pd_map_base(uint64_t off)
{
	return off - off % PD_MAP_ALIGN;
}

static inline uint64_t pd_map_len(uint64_t base, uint64_t data_end)
{
	uint64_t len = PD_MAP_WINDOW + PD_MAP_SLACK;

	return data_end - base < len ? data_end - base : len;
}

/*
 * Maps [base, base + len) of fd read-only, for reading front to back
 * (perfdata_mapper.c); populate fills its page tables now.  Pages the
 * cache lacks are read in as 2 MiB folios (MADV_HUGEPAGE): the readahead
 * of a mapping's faults otherwise brought them in as single pages (all of
 * them, for restack's access pattern), which this and every later mapping
 * of the file then paid for page by page: 25-28 ms to map the 224 MB
 * bench capture instead of 2-3.  Returns NULL when fd cannot be mapped.
 */
void *pd_map_window(int fd, uint64_t base, size_t len, bool populate);

/*
 * perfdata_mapper.c: a thread that maps the input's next window ahead of
 * the reader (MAP_POPULATE) and unmaps the windows it is done with.
 * pd_mapper_take() returns the address of file offset base when the
 * window mapped ahead covers [base, base + len), setting *map / *map_len
 * to the whole mapping (the caller's to give back with
 * pd_mapper_unmap()), else NULL (the caller maps it); either way it asks
 * for the window after it.  pd_mapper_stop() joins the thread and unmaps
 * what it still holds.
 */
struct pd_mapper;
struct pd_mapping {
	void *p;
	size_t len;
};
struct pd_mapper *pd_mapper_start(int fd, uint64_t data_end);
void *pd_mapper_take(struct pd_mapper *m, uint64_t base, uint64_t len,
		     void **map, size_t *map_len);
void pd_mapper_unmap(struct pd_mapper *m, void *p, size_t len);
void pd_mapper_stop(struct pd_mapper *m);

/*
 * perfdata_windows.c: pd_windows_take() returns the window [base, +len) of
 * the file open as fd, shared with the other readers (a reference held),
 * or NULL (the caller maps it itself).  pd_windows_ahead() maps the
 * window [base, +len) for the readers to take unless it is mapped or being
 * mapped already.  pd_windows_put() gives back a mapping of len bytes at
 * p: one taken, or one the caller mapped.
 */
void *pd_windows_take(struct perfdata_windows *ws, int fd, uint64_t base,
		      size_t len);
void pd_windows_ahead(struct perfdata_windows *ws, int fd, uint64_t base,
		      size_t len);
void pd_windows_put(struct perfdata_windows *ws, void *p, size_t len);

/* perfdata_tp.c: names tracepoint events that have none from the
 * tracing data; forgets the parsed tracing data when it is replaced. */
int pd_tracepoint_names(struct perfdata_reader *r);
void pd_tracepoint_reset(struct perfdata_reader *r);
int pd_attr_set_name(struct perfdata_reader *r, unsigned idx,
		     const char *name);

/* perfdata_feature.c: decode one feature payload into r->info. */
int pd_feature_parse(struct perfdata_reader *r, unsigned id, struct cur *c);
void pd_info_release(struct perfdata_info *info);
int pd_build_id_add(struct perfdata_reader *r, int32_t pid, uint8_t cpumode,
		    const uint8_t *bid, uint8_t size, const char *filename,
		    bool from_mmap);
enum event_arch pd_arch_from_name(const char *name);
/* Parses a build-id entry (feature section or HEADER_BUILD_ID record). */
int pd_build_id_record(struct perfdata_reader *r, struct cur *c,
		       struct event_build_id *out);

/* perfdata_sample.c */
unsigned pd_sample_id_trailer_size(uint64_t sample_type);
int pd_record_attr(struct perfdata_reader *r, struct cur *rec, uint32_t type,
		   unsigned *attr);
/*
 * Sets q->time to the time of the record q holds (EVENT_NO_TIME when it
 * has none) and q->attr to the index of its attr (PD_QENT_NO_ATTR for
 * records other than the kernel's); and for a sample, what a sample filter
 * is told of it.
 */
int pd_record_time(struct perfdata_reader *r, struct pd_qent *q);
/*
 * What a sample filter is told about record q (but order), from
 * pd_record_time(); false when q is no sample, or one too broken to say
 * (it is delivered, and decoding it reports the damage).
 */
bool pd_sample_key(struct perfdata_reader *r, const struct pd_qent *q,
		   struct sample_key *k);
/*
 * Starts loading the cache lines of the queued record q that decoding it
 * and unwinding its sample will read.  Only a hint: reads nothing.
 */
void pd_prefetch_record(struct perfdata_reader *r, const struct pd_qent *q);
int pd_decode_event(struct perfdata_reader *r, const struct pd_qent *q,
		    struct event *ev);

/* perfdata_order.c */
void pd_queue_init(struct pd_queue *q, uint64_t max_bytes);
int pd_queue_push(struct pd_queue *q, const struct pd_qent *e);
/* Counts timed record e, read but not queued, as pushing it would. */
void pd_queue_pass(struct pd_queue *q, const struct pd_qent *e);
bool pd_queue_pop_ready(struct pd_queue *q, struct pd_qent *e);
/* The record the queue would deliver next (pointer valid until the next
 * push or pop), or NULL when it is empty. */
const struct pd_qent *pd_queue_peek(const struct pd_queue *q);
/*
 * The same when pd_queue_pop_ready() would pop it now (nothing read later
 * can then come before it), else NULL.
 */
const struct pd_qent *pd_queue_peek_ready(const struct pd_queue *q);
void pd_queue_round(struct pd_queue *q);
void pd_queue_release(struct perfdata_reader *r, struct pd_queue *q);

#endif
