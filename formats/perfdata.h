/*
 * perfdata.h - reader for Linux perf.data files (file mode, pipe mode,
 * zstd-compressed records, either byte order).
 *
 * The reader turns the input into the format-neutral events of
 * common/event.h, in timestamp order (perf's FINISHED_ROUND rule, with
 * bounded buffering), and collects the header metadata in a
 * struct perfdata_info.
 */
#ifndef RESTACK_FORMATS_PERFDATA_H
#define RESTACK_FORMATS_PERFDATA_H

#include <stdbool.h>
#include <stdint.h>

#include "common/err.h"
#include "common/event.h"
#include "common/strbuf.h"

struct perfdata_reader;

struct perfdata_opts {
	/* Deliver records in file order instead of time order. */
	bool file_order;
	/*
	 * Most bytes of records held back for sorting before the oldest are
	 * delivered anyway (each such delivery counts as a forced flush).
	 * 0 means the default, 64 MiB.
	 */
	uint64_t max_queue_bytes;
};

/* Number of perf.data feature ids the reader names (HEADER_*). */
#define PERFDATA_FEAT_MAX 256

struct perfdata_feature {
	unsigned id;
	uint64_t offset, size;  /* file mode: where the payload is */
};

struct perfdata_build_id {
	int32_t pid;
	uint8_t cpumode;
	uint8_t build_id[20];
	uint8_t size;
	char *filename;         /* owned by the reader */
	bool from_mmap;         /* seen on an MMAP2 record, not in metadata */
};

/*
 * Everything the input says about itself.  Owned by the reader; strings
 * are NULL when absent.  In pipe mode the fields fill in while records are
 * read, so they are complete only at end of input.
 */
struct perfdata_info {
	bool pipe;              /* pipe-mode stream */
	bool swap;              /* written in the other byte order */
	uint64_t file_size;     /* UINT64_MAX for streams */
	uint64_t header_size;
	uint64_t attr_size;
	uint64_t data_offset, data_size;

	struct event_attr *attrs;
	unsigned nr_attrs;

	uint64_t features[4];   /* the feature bitmap */
	struct perfdata_feature *feats; /* set bits, in ascending order */
	unsigned nr_feats;

	char *hostname, *osrelease, *version, *arch, *cpudesc, *cpuid;
	char **cmdline;
	unsigned nr_cmdline;
	uint32_t nr_cpus_avail, nr_cpus_online;
	bool has_nrcpus;
	uint64_t total_mem_kb;
	uint64_t first_sample_time, last_sample_time;
	bool has_sample_time;
	uint64_t clockid_res_ns;
	bool has_clockid_res;
	uint32_t comp_version, comp_type, comp_level, comp_ratio, comp_mmap_len;
	bool has_compressed;
	enum event_arch arch_id;

	struct perfdata_build_id *build_ids;
	unsigned nr_build_ids;

	/* TRACING_DATA blob, when present (copied into reader memory). */
	const uint8_t *tracing_data;
	uint64_t tracing_data_size;

	/* Kernel symbols the input carries in kallsyms' text format (a
	 * sysprof capture's /proc/kallsyms), or NULL; reader memory. */
	const char *kallsyms;
	size_t kallsyms_size;
};

/* Counts collected while reading; complete at end of input. */
struct perfdata_stats {
	uint64_t records[256];  /* by record type; types >= 256 in unknown */
	uint64_t unknown_records;   /* types the reader does not know */
	uint64_t unknown_bytes;
	uint64_t compressed_bytes_in, compressed_bytes_out;
	uint64_t *samples_by_attr;  /* nr_attrs entries */
	uint64_t lost_records;      /* sum of LOST.lost */
	uint64_t lost_samples;      /* sum of LOST_SAMPLES.lost */
	uint64_t time_min, time_max;/* over records that carry a time */
	uint64_t out_of_order;      /* delivered after a later timestamp */
	uint64_t forced_flushes;    /* queue limit reached before a round */
	uint64_t queue_peak_bytes;
	uint64_t rounds;
	bool ends_with_round;       /* last record read was FINISHED_ROUND */
};

/*
 * Opens path ("-" = stdin) and reads its header.  name must outlive the
 * reader.  opts may be NULL.  Returns NULL with *err filled on failure.
 */
struct perfdata_reader *perfdata_open(const char *path,
				      const struct perfdata_opts *opts,
				      struct err *err);

/*
 * Like perfdata_open() on an open descriptor, which the caller keeps
 * owning and closes after perfdata_close().  A regular file is read from
 * offset 0 whatever its position; anything else is read as a stream.
 * name (for messages) must outlive the reader.
 */
struct perfdata_reader *perfdata_open_fd(int fd, const char *name,
					 const struct perfdata_opts *opts,
					 struct err *err);

/*
 * Delivers the next event.  Pointers inside *ev belong to the reader and
 * stay valid until the next perfdata_next() or perfdata_close().  Returns
 * 1 with *ev filled, 0 at end of input, -1 on error (perfdata_err()).
 */
int perfdata_next(struct perfdata_reader *r, struct event *ev);

/*
 * Keeps the bytes of the event perfdata_next() returned last (the record:
 * stack copy, raw payload, strings) valid beyond the next call, until
 * perfdata_release(token).  Returns the token, or NULL when the event's
 * bytes cannot be kept (copy them instead).  Arrays the reader converted
 * (registers, callchain) are not covered.  Not thread-safe: call both on
 * the reading thread, and release every token before perfdata_close().
 */
void *perfdata_hold(struct perfdata_reader *r);
void perfdata_release(struct perfdata_reader *r, void *token);

const struct err *perfdata_err(const struct perfdata_reader *r);
const struct perfdata_info *perfdata_info(const struct perfdata_reader *r);
const struct perfdata_stats *perfdata_stats(const struct perfdata_reader *r);

/*
 * From now on a thread of the reader's own maps the input's windows
 * ahead of the reading and unmaps the finished ones, so that the reading
 * thread does not pay for the page tables (for when other threads do the
 * rest of the work).  Does nothing for inputs that are read, not mapped.
 */
void perfdata_map_ahead(struct perfdata_reader *r);

/*
 * Windows of one file mapped once for the readers that read it side by
 * side in this process (perfdata_windows.c): readers expected to read
 * every window, for when to unmap one.  perfdata_share_windows() makes r
 * take its windows from ws (r must be closed before ws is freed); it does
 * nothing for inputs that are read, not mapped, or mapped ahead.
 * Thread-safe: each reader on a thread of its own.
 */
struct perfdata_windows;
struct perfdata_windows *perfdata_windows_new(unsigned readers);
void perfdata_windows_free(struct perfdata_windows *ws);
void perfdata_share_windows(struct perfdata_reader *r,
			    struct perfdata_windows *ws);
/* What ws did so far (for tests). */
struct perfdata_windows_stats {
	uint64_t maps;          /* windows mapped */
	uint64_t ahead;         /* of them, mapped before a reader took them */
	uint64_t unmaps;        /* windows unmapped (not counting the end) */
	uint64_t own_unmaps;    /* mappings of a reader's own unmapped */
	size_t peak;            /* most windows mapped at once */
};
void perfdata_windows_stats(struct perfdata_windows *ws,
			    struct perfdata_windows_stats *st);

/*
 * From now on fn decides which samples are delivered (NULL: all), asked
 * when says; see struct sample_key.  Samples it drops are neither decoded
 * nor counted in the reader's statistics, but take their place in
 * event.order.
 */
void perfdata_set_sample_filter(struct perfdata_reader *r,
				sample_filter_fn fn, void *ctx,
				enum sample_filter_when when);

/*
 * A second reading of a file that needs a few samples again (restack's
 * RETRY pass: the samples the first left for it) reads them and the
 * records that are not samples, no other: jumping from one to the next
 * instead of walking the whole file, whose every record header costs a
 * page fault now and then and a load from memory.
 *
 * perfdata_index_records(), before the first record is read, has the
 * reader note the offsets of all records but samples (FINISHED_ROUND
 * too: without its flushes the queue would hold every window);
 * perfdata_record_index() then gives them in file order (*offs, the
 * reader's, and *n; a FINISHED_ROUND's offset has PERFDATA_VISIT_ROUND
 * set, perfdata_visit_off() is the offset), or false when a reading of
 * those records and some
 * samples alone might not deliver them in the order this reader did:
 * records in compressed data (whose offsets are not theirs), records
 * delivered unsorted (no timestamp), out of time order or by a full
 * queue, or more than 2^20 of them (the bound on the index's memory).
 *
 * perfdata_visit_only() has a fresh reader of the same file read the
 * records at offs alone (n of them, ascending by perfdata_visit_off(),
 * each where a record starts), copied; those not samples are delivered as
 * without it, the samples in the order of a full reading.  An entry with
 * PERFDATA_VISIT_ROUND is a FINISHED_ROUND taken as read, its page not
 * touched: the rounds were most of the records such a reading visited
 * (3843 of 3845 on the bench's large capture), and a page fault each.
 * event.order then counts what is read, as with SAMPLE_FILTER_READ.
 * Returns 0, or -1 out of memory.
 */
#define PERFDATA_VISIT_ROUND (1ull << 63)

static inline uint64_t perfdata_visit_off(uint64_t v)
{
	return v & ~PERFDATA_VISIT_ROUND;
}

void perfdata_index_records(struct perfdata_reader *r);
bool perfdata_record_index(const struct perfdata_reader *r,
			   const uint64_t **offs, size_t *n);
int perfdata_visit_only(struct perfdata_reader *r, const uint64_t *offs,
			size_t n);

void perfdata_close(struct perfdata_reader *r);

struct tracepoint;

/*
 * The capture's tracing data parsed with libtraceevent
 * (formats/tracepoint.h), to decode tracepoint samples; made on first
 * call, owned by the reader.  NULL, with *err (may be NULL) saying why,
 * when the capture has no tracing data (yet: in pipe mode it is a
 * record) or it cannot be used.  Tracepoint events the capture does not
 * name (no event_desc) are named from it as SYSTEM:EVENT.
 */
struct tracepoint *perfdata_tracepoints(struct perfdata_reader *r,
					struct err *err);

/* True when the first bytes (at least 16) look like perf.data. */
bool perfdata_probe(const void *head, size_t len);

/* Constant names: "SAMPLE", "MMAP2", "HEADER_ATTR", ...; NULL if unknown. */
const char *perfdata_record_name(uint32_t type);
/* "hostname", "build_id", ...; NULL if unknown. */
const char *perfdata_feature_name(unsigned id);
/* "IP|TID|TIME|..." for sample_type bits, appended to out. */
void perfdata_sample_type_str(uint64_t sample_type, struct strbuf *out);

/*
 * Appends one line describing ev (without a newline) to out, in the
 * format documented in docs/usage.md ("restack dump").
 */
void perfdata_format_event(const struct perfdata_reader *r,
			   const struct event *ev, struct strbuf *out);

#endif
