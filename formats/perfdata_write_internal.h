/*
 * perfdata_write_internal.h - what the perf.data writer's files share:
 * the writer's state, its output buffer (perfdata_write.c) and its
 * metadata: attrs, features, build-ids, the file-mode trailer
 * (perfdata_write_meta.c).
 */
#ifndef RESTACK_FORMATS_PERFDATA_WRITE_INTERNAL_H
#define RESTACK_FORMATS_PERFDATA_WRITE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "common/hashmap.h"
#include "common/strbuf.h"
#include "formats/perfdata_internal.h"
#include "formats/perfdata_write.h"

#define PW_HEADER_SIZE 104
#define PW_FLUSH_AT (1u << 20)
#define PW_NAME_ALIGN 64
#define PW_LAST_FEATURE 32      /* perf 6.1's HEADER_LAST_FEATURE */
#define PW_MISC_BUILD_ID_SIZE (1u << 15)
#define PW_ATTR_EXCL_CALLCHAIN_USER (1ull << 22)
#define PW_DWARF_BITS (PD_SAMPLE_REGS_USER | PD_SAMPLE_STACK_USER)
#define PW_MAX_ATTRS 4096
#define PW_MAX_IDS (1u << 20)

struct pw_attr {
	uint8_t *bytes;         /* the attr, slot bytes (rewritten) */
	uint32_t size;          /* bytes in the slot */
	uint64_t *ids;
	size_t nr_ids;
};

struct pw_feat {
	unsigned id;
	uint8_t *data;
	size_t size;
};

struct pw_bid {
	char *name;
	uint8_t bid[20];
	uint8_t size;
	uint8_t cpumode;
};

struct perfdata_writer {
	int fd;
	bool pipe;
	const char *in_path;
	struct err err;
	struct perfdata_write_stats st;
	bool begun;
	bool in_pipe;
	bool synth;             /* the input's records are not perf.data */
	bool kernel_mapped;     /* synth: the kernel MMAP is written */
	uint64_t kernel_text;   /* synth: the kernel's _text, 0 unknown */

	struct strbuf out;
	uint64_t pos;           /* output offset of out's first byte */
	uint64_t data_size;

	struct pw_attr *attrs;
	size_t nr_attrs, alloc_attrs;
	uint64_t in_attr_size;  /* file-mode input's attr stride */
	struct pw_feat *feats;
	size_t nr_feats, alloc_feats;

	struct hashmap seen;    /* module name hash -> struct pw_bid or NULL */
	struct hashmap seen_at; /* module name pointers (sym_loc.module)
				 * looked up in seen: a frame's costs no
				 * hash of its name */
	struct pw_bid **bids;   /* modules used that have a build-id */
	size_t nr_bids, alloc_bids;

	uint8_t *rec;           /* scratch for a rewritten sample */
	size_t rec_alloc;
	uint64_t *cc;           /* scratch for a callchain */
	size_t cc_alloc;
	struct strbuf syn;      /* a synthesized record */
};

static inline uint64_t pw_rd64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static inline uint32_t pw_rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static inline void pw_wr64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

/* perfdata_write.c: the output buffer (file offsets count from 0). */
int pw_flush(struct perfdata_writer *w);
int pw_put(struct perfdata_writer *w, const void *p, size_t len);
uint64_t pw_tell(const struct perfdata_writer *w);
int pw_record(struct perfdata_writer *w, uint32_t type, uint16_t misc,
	      const void *body, size_t len);
uint64_t pw_hash(const char *s);

/* perfdata_write_meta.c */
uint32_t pw_attr_size(const uint8_t *a, size_t slot);
int pw_add_attr(struct perfdata_writer *w, const uint8_t *a,
		size_t slot, const void *ids, size_t nr_ids);
int pw_add_feat(struct perfdata_writer *w, unsigned id, uint8_t *data,
		size_t size);
bool pw_feat_dropped(unsigned id);
void pw_fix_event_desc(uint8_t *p, size_t size);
int pw_read_file_meta(struct perfdata_writer *w,
		      const struct perfdata_info *in, int fd);
int pw_emit_attr(struct perfdata_writer *w, const struct pw_attr *a);
int pw_emit_feature(struct perfdata_writer *w, unsigned id,
		    const uint8_t *data, size_t size);
int pw_build_id_entry(struct perfdata_writer *w, uint32_t type,
		      const struct pw_bid *b, struct strbuf *sb);
int pw_emit_tracing(struct perfdata_writer *w, const uint8_t *data,
		    uint64_t size);
int pw_pipe_preamble(struct perfdata_writer *w,
		     const struct perfdata_info *in);
int pw_synth_meta(struct perfdata_writer *w,
		  const struct perfdata_info *in);
int pw_finish_file(struct perfdata_writer *w,
		   const struct perfdata_info *in);

#endif
