/*
 * perfdata_write.c - perf.data output: records carried over, DWARF samples
 * rewritten with callchains, attrs and features fixed up (see
 * perfdata_write.h for the rules).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats/perfdata_write.h"

#include "common/hashmap.h"
#include "common/mem.h"
#include "common/strbuf.h"
#include "formats/perfdata_internal.h"
#include "formats/perfdata_synth.h"

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
	perfdata_bid_fn bid_fn;
	void *bid_ctx;
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
	struct pw_bid **bids;   /* modules used that have a build-id */
	size_t nr_bids, alloc_bids;

	uint8_t *rec;           /* scratch for a rewritten sample */
	size_t rec_alloc;
	uint64_t *cc;           /* scratch for a callchain */
	size_t cc_alloc;
	struct strbuf syn;      /* a synthesized record */
};

static uint64_t pw_rd64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static uint32_t pw_rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static void pw_wr64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

static int pw_flush(struct perfdata_writer *w)
{
	size_t off = 0;

	if (w->out.oom)
		return err_set(&w->err, ERR_NOMEM, ERR_NO_OFF,
			       "output buffer");
	while (off < w->out.len) {
		ssize_t n = write(w->fd, w->out.buf + off, w->out.len - off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return err_sys(&w->err, errno, "cannot write");
		}
		off += (size_t)n;
	}
	w->pos += w->out.len;
	strbuf_reset(&w->out);
	return 0;
}

static int pw_put(struct perfdata_writer *w, const void *p, size_t len)
{
	if (!len)
		return 0;
	strbuf_add(&w->out, p, len);
	if (w->out.len >= PW_FLUSH_AT)
		return pw_flush(w);
	return 0;
}

static uint64_t pw_tell(const struct perfdata_writer *w)
{
	return w->pos + w->out.len;
}

/* A record: header, then len bytes of body. */
static int pw_record(struct perfdata_writer *w, uint32_t type, uint16_t misc,
		     const void *body, size_t len)
{
	uint8_t h[8];
	uint16_t size = (uint16_t)(len + 8);

	if (len + 8 > 0xffff)
		return err_set(&w->err, ERR_UNSUPPORTED, ERR_NO_OFF,
			       "a record of %zu bytes does not fit", len + 8);
	memcpy(h, &type, 4);
	memcpy(h + 4, &misc, 2);
	memcpy(h + 6, &size, 2);
	w->st.records++;
	if (pw_put(w, h, 8) < 0)
		return -1;
	return pw_put(w, body, len);
}

static int pw_raw(struct perfdata_writer *w, const struct event *ev)
{
	w->st.records++;
	return pw_put(w, ev->raw, ev->raw_len);
}

static uint64_t pw_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	while (*s)
		h = (h ^ (uint8_t)*s++) * 0x100000001b3ull;
	return h;
}

/* Rewrites one attr (size bytes valid) for a callchain instead of DWARF. */
static void pw_fix_attr(uint8_t *a, size_t size)
{
	uint64_t st, fl;

	if (size < PD_ATTR_VER0_SIZE)
		return;
	st = pw_rd64(a + 24);
	if (!(st & PW_DWARF_BITS))
		return;
	pw_wr64(a + 24, (st & ~PW_DWARF_BITS) | PD_SAMPLE_CALLCHAIN);
	fl = pw_rd64(a + 40);
	pw_wr64(a + 40, fl & ~PW_ATTR_EXCL_CALLCHAIN_USER);
	if (size >= 96) {
		pw_wr64(a + 80, 0);
		memset(a + 88, 0, 4);
	}
}

static uint32_t pw_attr_size(const uint8_t *a, size_t slot)
{
	uint32_t size = pw_rd32(a + 4);

	if (size == 0)
		size = PD_ATTR_VER0_SIZE;
	return size > slot ? (uint32_t)slot : size;
}

static int pw_add_attr(struct perfdata_writer *w, const uint8_t *a,
		       size_t slot, const void *ids, size_t nr_ids)
{
	struct pw_attr *pa;

	if (w->nr_attrs >= PW_MAX_ATTRS || slot < PD_ATTR_VER0_SIZE)
		return err_set(&w->err, ERR_UNSUPPORTED, ERR_NO_OFF,
			       "bad or too many attrs");
	if (mem_grow(&w->attrs, &w->alloc_attrs, sizeof(*w->attrs),
		     w->nr_attrs + 1) < 0)
		goto oom;
	pa = &w->attrs[w->nr_attrs];
	memset(pa, 0, sizeof(*pa));
	pa->bytes = malloc(slot);
	pa->ids = malloc(nr_ids ? nr_ids * 8 : 1);
	if (!pa->bytes || !pa->ids) {
		free(pa->bytes);
		free(pa->ids);
		goto oom;
	}
	memcpy(pa->bytes, a, slot);
	if (nr_ids)
		memcpy(pa->ids, ids, nr_ids * 8);
	pa->size = (uint32_t)slot;
	pa->nr_ids = nr_ids;
	pw_fix_attr(pa->bytes, pw_attr_size(pa->bytes, slot));
	w->nr_attrs++;
	return 0;
oom:
	return err_set(&w->err, ERR_NOMEM, ERR_NO_OFF, "attrs");
}

/* Takes ownership of data. */
static int pw_add_feat(struct perfdata_writer *w, unsigned id, uint8_t *data,
		       size_t size)
{
	if (mem_grow(&w->feats, &w->alloc_feats, sizeof(*w->feats),
		     w->nr_feats + 1) < 0) {
		free(data);
		return err_set(&w->err, ERR_NOMEM, ERR_NO_OFF, "features");
	}
	w->feats[w->nr_feats].id = id;
	w->feats[w->nr_feats].data = data;
	w->feats[w->nr_feats].size = size;
	w->nr_feats++;
	return 0;
}

/* Features not carried over (they describe the input's data layout). */
static bool pw_feat_dropped(unsigned id)
{
	return id == PD_FEAT_BUILD_ID || id == PD_FEAT_AUXTRACE ||
	       id == PD_FEAT_DIR_FORMAT || id == PD_FEAT_COMPRESSED ||
	       id == 0 || id >= PERFDATA_FEAT_MAX;
}

/* Features perf never sends in a pipe (its FEAT_OPN entries). */
static bool pw_feat_not_in_pipe(unsigned id)
{
	return id == PD_FEAT_TRACING_DATA || id == PD_FEAT_BRANCH_STACK ||
	       id == PD_FEAT_STAT || id == PD_FEAT_CACHE ||
	       id == PD_FEAT_HYBRID_TOPOLOGY || id >= PW_LAST_FEATURE;
}

/* EVENT_DESC: nr, attr_size, then {attr, nr_ids, string, ids} each. */
static void pw_fix_event_desc(uint8_t *p, size_t size)
{
	size_t off = 8;
	uint32_t nr, asz, i;

	if (size < 8)
		return;
	nr = pw_rd32(p);
	asz = pw_rd32(p + 4);
	for (i = 0; i < nr; i++) {
		uint32_t nr_ids, len;

		if (asz > size - off || size - off - asz < 8)
			return;
		pw_fix_attr(p + off, pw_attr_size(p + off, asz));
		off += asz;
		nr_ids = pw_rd32(p + off);
		len = pw_rd32(p + off + 4);
		off += 8;
		if (len > size - off)
			return;
		off += len;
		if ((uint64_t)nr_ids * 8 > size - off)
			return;
		off += (size_t)nr_ids * 8;
	}
}

static int pw_pread(struct perfdata_writer *w, int fd, void *buf, size_t len,
		    uint64_t off)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = pread(fd, (uint8_t *)buf + got, len - got,
				  (off_t)(off + got));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return err_sys(&w->err, errno, "%s: cannot read",
				       w->in_path);
		if (n == 0)
			return err_set(&w->err, ERR_TRUNCATED, off + got,
				       "%s: ends early", w->in_path);
		got += (size_t)n;
	}
	return 0;
}

/* File-mode input: its attrs (with ids) and feature payloads. */
static int pw_read_file_meta(struct perfdata_writer *w,
			     const struct perfdata_info *in, int fd)
{
	uint8_t h[PW_HEADER_SIZE], *slot = NULL;
	uint64_t asz, aoff, asize, n, i;
	uint64_t *ids = NULL;
	int rc = -1;

	if (pw_pread(w, fd, h, sizeof(h), 0) < 0)
		return -1;
	asz = pw_rd64(h + 16);
	aoff = pw_rd64(h + 24);
	asize = pw_rd64(h + 32);
	if (asz < PD_ATTR_VER0_SIZE + 16 || asz > 4096 ||
	    asize / asz > PW_MAX_ATTRS)
		return err_set(&w->err, ERR_CORRUPT, 16,
			       "%s: bad attrs section", w->in_path);
	w->in_attr_size = asz;
	n = asize / asz;
	slot = malloc(asz);
	if (!slot)
		goto oom;
	for (i = 0; i < n; i++) {
		uint64_t ioff, isize;

		if (pw_pread(w, fd, slot, asz, aoff + i * asz) < 0)
			goto out;
		ioff = pw_rd64(slot + asz - 16);
		isize = pw_rd64(slot + asz - 8);
		if (isize / 8 > PW_MAX_IDS)
			goto bad;
		free(ids);
		ids = malloc(isize ? isize : 1);
		if (!ids)
			goto oom;
		if (isize && pw_pread(w, fd, ids, isize, ioff) < 0)
			goto out;
		if (pw_add_attr(w, slot, asz - 16, ids, isize / 8) < 0)
			goto out;
	}
	for (i = 0; i < in->nr_feats; i++) {
		const struct perfdata_feature *f = &in->feats[i];
		uint8_t *data;

		if (pw_feat_dropped(f->id))
			continue;
		if (f->size > (1ull << 30))
			goto bad;
		data = malloc(f->size ? f->size : 1);
		if (!data)
			goto oom;
		if (pw_pread(w, fd, data, f->size, f->offset) < 0) {
			free(data);
			goto out;
		}
		if (f->id == PD_FEAT_EVENT_DESC)
			pw_fix_event_desc(data, f->size);
		if (pw_add_feat(w, f->id, data, f->size) < 0)
			goto out;
	}
	rc = 0;
	goto out;
bad:
	err_set(&w->err, ERR_CORRUPT, ERR_NO_OFF, "%s: bad attr ids or "
		"feature section", w->in_path);
	goto out;
oom:
	err_set(&w->err, ERR_NOMEM, ERR_NO_OFF, "input metadata");
out:
	free(slot);
	free(ids);
	return rc;
}

static int pw_emit_attr(struct perfdata_writer *w, const struct pw_attr *a)
{
	uint32_t size = pw_attr_size(a->bytes, a->size);
	uint8_t *body = malloc(size + a->nr_ids * 8);
	int rc;

	if (!body)
		return err_set(&w->err, ERR_NOMEM, ERR_NO_OFF, "attr");
	memcpy(body, a->bytes, size);
	memcpy(body + size, a->ids, a->nr_ids * 8);
	rc = pw_record(w, PD_REC_HEADER_ATTR, 0, body, size + a->nr_ids * 8);
	free(body);
	return rc;
}

static int pw_emit_feature(struct perfdata_writer *w, unsigned id,
			   const uint8_t *data, size_t size)
{
	uint8_t h[16];
	uint32_t type = PD_REC_HEADER_FEATURE;
	uint16_t misc = 0, rsize = (uint16_t)(size + 16);
	uint64_t fid = id;

	if (size + 16 > 0xffff)
		return 0;   /* does not fit a record: perf drops it too */
	memcpy(h, &type, 4);
	memcpy(h + 4, &misc, 2);
	memcpy(h + 6, &rsize, 2);
	memcpy(h + 8, &fid, 8);
	w->st.records++;
	if (pw_put(w, h, 16) < 0)
		return -1;
	return pw_put(w, data, size);
}

/* A build-id entry; type 0 in the feature section, 67 as a record. */
static int pw_build_id_entry(struct perfdata_writer *w, uint32_t type,
			     const struct pw_bid *b, struct strbuf *sb)
{
	size_t nlen = strlen(b->name) + 1;
	size_t padded = (nlen + PW_NAME_ALIGN - 1) / PW_NAME_ALIGN *
			PW_NAME_ALIGN;
	uint8_t e[36] = { 0 };
	uint16_t misc = b->cpumode | PW_MISC_BUILD_ID_SIZE;
	uint16_t size = (uint16_t)(36 + padded);
	int32_t pid = -1;
	static const uint8_t zeros[PW_NAME_ALIGN];

	if (36 + padded > 0xffff)
		return 0;
	memcpy(e, &type, 4);
	memcpy(e + 4, &misc, 2);
	memcpy(e + 6, &size, 2);
	memcpy(e + 8, &pid, 4);
	memcpy(e + 12, b->bid, b->size);
	e[32] = b->size;
	if (sb) {
		strbuf_add(sb, e, 36);
		strbuf_add(sb, b->name, nlen);
		strbuf_add(sb, zeros, padded - nlen);
		return 0;
	}
	w->st.records++;
	if (pw_put(w, e, 36) < 0 || pw_put(w, b->name, nlen) < 0)
		return -1;
	return pw_put(w, zeros, padded - nlen);
}

static int pw_emit_tracing(struct perfdata_writer *w, const uint8_t *data,
			   uint64_t size)
{
	uint8_t body[8] = { 0 };
	uint32_t asize = (uint32_t)((size + 7) & ~7ull);
	static const uint8_t zeros[8];

	memcpy(body, &asize, 4);
	if (pw_record(w, PD_REC_HEADER_TRACING_DATA, 0, body, 8) < 0 ||
	    pw_put(w, data, size) < 0)
		return -1;
	return pw_put(w, zeros, asize - size);
}

/* Pipe output from a file-mode input: its header records first. */
static int pw_pipe_preamble(struct perfdata_writer *w,
			    const struct perfdata_info *in)
{
	size_t i;

	for (i = 0; i < w->nr_attrs; i++)
		if (pw_emit_attr(w, &w->attrs[i]) < 0)
			return -1;
	for (i = 0; i < w->nr_feats; i++) {
		const struct pw_feat *f = &w->feats[i];

		if (f->id == PD_FEAT_TRACING_DATA) {
			if (pw_emit_tracing(w, f->data, f->size) < 0)
				return -1;
			continue;
		}
		if (!pw_feat_not_in_pipe(f->id) &&
		    pw_emit_feature(w, f->id, f->data, f->size) < 0)
			return -1;
	}
	if (pw_emit_feature(w, PW_LAST_FEATURE, NULL, 0) < 0)
		return -1;
	for (i = 0; i < in->nr_build_ids; i++) {
		const struct perfdata_build_id *b = &in->build_ids[i];
		struct pw_bid pb = { .name = b->filename, .size = b->size,
				     .cpumode = b->cpumode };

		memcpy(pb.bid, b->build_id, sizeof(pb.bid));
		if (pw_build_id_entry(w, PD_REC_HEADER_BUILD_ID, &pb, NULL) < 0)
			return -1;
		hashmap_put(&w->seen, pw_hash(b->filename), NULL);
	}
	return 0;
}

/* Attrs and string features for an input that is not perf.data. */
static int pw_synth_meta(struct perfdata_writer *w,
			 const struct perfdata_info *in)
{
	const char *strs[3] = { in->hostname, in->osrelease, in->arch };
	static const unsigned ids[3] = { PD_FEAT_HOSTNAME, PD_FEAT_OSRELEASE,
					 PD_FEAT_ARCH };
	uint8_t attr[PERFDATA_SYNTH_ATTR_SIZE];
	unsigned i;

	for (i = 0; i < in->nr_attrs; i++) {
		perfdata_synth_attr(&in->attrs[i], attr);
		if (pw_add_attr(w, attr, sizeof(attr), NULL, 0) < 0)
			return -1;
	}
	for (i = 0; i < 3; i++) {
		struct strbuf sb;
		uint8_t *data;

		if (!strs[i])
			continue;
		strbuf_init(&sb);
		perfdata_synth_string(strs[i], &sb);
		data = malloc(sb.len);
		if (!data || sb.oom) {
			free(data);
			strbuf_release(&sb);
			return err_set(&w->err, ERR_NOMEM, ERR_NO_OFF,
				       "features");
		}
		memcpy(data, sb.buf, sb.len);
		if (pw_add_feat(w, ids[i], data, sb.len) < 0) {
			strbuf_release(&sb);
			return -1;
		}
		strbuf_release(&sb);
	}
	return 0;
}

static int pw_begin(struct perfdata_writer *w, const struct perfdata_info *in)
{
	static const char magic[8] = "PERFILE2";
	uint8_t h[PW_HEADER_SIZE] = { 0 };
	int fd, rc = 0;

	w->begun = true;
	w->in_pipe = in->pipe;
	if (in->swap)
		return err_set(&w->err, ERR_UNSUPPORTED, ERR_NO_OFF,
			       "%s: perf.data output from an input in the "
			       "other byte order is not supported",
			       w->in_path);
	if (w->synth) {
		if (pw_synth_meta(w, in) < 0)
			return -1;
	} else if (!in->pipe) {
		fd = strcmp(w->in_path, "-") ?
			     open(w->in_path, O_RDONLY | O_CLOEXEC) : 0;
		if (fd < 0)
			return err_sys(&w->err, errno, "cannot open '%s'",
				       w->in_path);
		rc = pw_read_file_meta(w, in, fd);
		if (fd > 0)
			close(fd);
		if (rc < 0)
			return -1;
	}
	memcpy(h, magic, 8);
	if (w->pipe) {
		uint64_t sixteen = 16;

		memcpy(h + 8, &sixteen, 8);
		if (pw_put(w, h, 16) < 0)
			return -1;
		return in->pipe && !w->synth ? 0 : pw_pipe_preamble(w, in);
	}
	/* File mode: the header is written again at the end. */
	return pw_put(w, h, sizeof(h));
}

/* Notes the modules a resolved sample passes through. */
static int pw_note_modules(struct perfdata_writer *w, const struct rsample *rs)
{
	uint32_t i;

	if (!w->bid_fn)
		return 0;
	for (i = rs->nr_kernel; i < rs->nr_frames; i++) {
		const struct sym_loc *loc = rs->frames[i].loc;
		struct pw_bid *b;
		uint64_t key;
		uint8_t bid[20];
		unsigned n;
		void *v;

		if (!loc || !loc->module || loc->kind != SYM_USER)
			continue;
		key = pw_hash(loc->module);
		if (hashmap_get(&w->seen, key, &v))
			continue;
		n = w->bid_fn(w->bid_ctx, loc->module, bid);
		if (n == 0 || n > 20) {
			if (hashmap_put(&w->seen, key, NULL) < 0)
				goto oom;
			continue;
		}
		b = calloc(1, sizeof(*b));
		if (!b || !(b->name = mem_strdup(loc->module))) {
			free(b);
			goto oom;
		}
		memcpy(b->bid, bid, n);
		b->size = (uint8_t)n;
		b->cpumode = EVENT_MODE_USER;
		if (mem_grow(&w->bids, &w->alloc_bids, sizeof(*w->bids),
			     w->nr_bids + 1) < 0 ||
		    hashmap_put(&w->seen, key, b) < 0) {
			free(b->name);
			free(b);
			goto oom;
		}
		w->bids[w->nr_bids++] = b;
		if (w->pipe &&
		    pw_build_id_entry(w, PD_REC_HEADER_BUILD_ID, b, NULL) < 0)
			return -1;
	}
	return 0;
oom:
	return err_set(&w->err, ERR_NOMEM, ERR_NO_OFF, "build-ids");
}

/*
 * Where a sample's fields sit (from the record start): the callchain (or
 * where it goes), and REGS_USER + STACK_USER.  Returns -1 when the record
 * does not match its sample_type.
 */
struct pw_layout {
	size_t cc, cc_end, us, us_end;
};

static int pw_sample_layout(const uint8_t *rec, size_t len,
			    const struct event_attr *a, struct pw_layout *l)
{
	uint64_t st = a->sample_type, rf = a->read_format, v;
	size_t off = 8;
	unsigned k;

#define NEED(n) do { if ((n) > len - off) return -1; } while (0)
#define SKIP(n) do { NEED(n); off += (n); } while (0)
	static const uint64_t fixed[] = {
		PD_SAMPLE_IDENTIFIER, PD_SAMPLE_IP, PD_SAMPLE_TID,
		PD_SAMPLE_TIME, PD_SAMPLE_ADDR, PD_SAMPLE_ID,
		PD_SAMPLE_STREAM_ID, PD_SAMPLE_CPU, PD_SAMPLE_PERIOD,
	};

	if (len < 8)
		return -1;
	for (k = 0; k < ARRAY_SIZE(fixed); k++)
		if (st & fixed[k])
			SKIP(8);
	if (st & PD_SAMPLE_READ) {
		uint64_t per = 1 + !!(rf & PD_READ_ID) + !!(rf & PD_READ_LOST);
		uint64_t times = !!(rf & PD_READ_TOTAL_TIME_ENABLED) +
				 !!(rf & PD_READ_TOTAL_TIME_RUNNING);

		if (rf & PD_READ_GROUP) {
			NEED(8);
			v = pw_rd64(rec + off);
			if (v > len / 8)
				return -1;
			SKIP((size_t)(8 * (1 + times + v * per)));
		} else {
			SKIP((size_t)(8 * (per + times)));
		}
	}
	l->cc = l->cc_end = off;
	if (st & PD_SAMPLE_CALLCHAIN) {
		NEED(8);
		v = pw_rd64(rec + off);
		if (v > len / 8)
			return -1;
		SKIP((size_t)(8 + 8 * v));
		l->cc_end = off;
	}
	if (st & PD_SAMPLE_RAW) {
		NEED(4);
		SKIP(4 + (size_t)pw_rd32(rec + off));
	}
	if (st & PD_SAMPLE_BRANCH_STACK) {
		uint64_t per = a->branch_sample_type & PD_BRANCH_COUNTERS ?
				       4 : 3;

		NEED(8);
		v = pw_rd64(rec + off);
		if (v > len / 8)
			return -1;
		SKIP(8);
		if (a->branch_sample_type & PD_BRANCH_HW_INDEX)
			SKIP(8);
		SKIP((size_t)(8 * per * v));
	}
	l->us = off;
	if (st & PD_SAMPLE_REGS_USER) {
		NEED(8);
		v = pw_rd64(rec + off);
		SKIP(8);
		if (v)
			SKIP(8 * (size_t)__builtin_popcountll(
					 a->sample_regs_user));
	}
	if (st & PD_SAMPLE_STACK_USER) {
		NEED(8);
		v = pw_rd64(rec + off);
		SKIP(8);
		if (v) {
			if (v > len)
				return -1;
			SKIP((size_t)v + 8);
		}
	}
	l->us_end = off;
	return 0;
#undef NEED
#undef SKIP
}

/*
 * The callchain of a written sample, in w->cc: the recorded kernel part
 * (entries before any user context), then PERF_CONTEXT_USER, the ip and
 * the callers of rs (none when rs is NULL), at most room entries (the
 * user part is cut, and counted, to fit).  Returns the count, or -1.
 */
static int64_t pw_callchain(struct perfdata_writer *w, const struct event *ev,
			    const struct rsample *rs, uint64_t room)
{
	const struct event_sample *s = &ev->sample;
	uint64_t nk, nu = 0, i, n = 0;

	for (nk = 0; nk < s->callchain_nr; nk++) {
		uint64_t ip = s->callchain[nk];

		if (ip == EVENT_CONTEXT_USER || ip == EVENT_CONTEXT_GUEST_USER)
			break;
	}
	if (nk > room)
		return err_set(&w->err, ERR_UNSUPPORTED, ev->file_off,
			       "SAMPLE callchain does not fit");
	if (rs)
		nu = rs->nr_frames - rs->nr_kernel;
	if (nu && nk + nu + 1 > room) {
		w->st.cut_callchains++;
		nu = room - nk > 1 ? room - nk - 1 : 0;
	}
	if (mem_grow(&w->cc, &w->cc_alloc, sizeof(*w->cc),
		     (size_t)(nk + nu + 1)) < 0)
		return err_set(&w->err, ERR_NOMEM, ERR_NO_OFF, "callchain");
	for (i = 0; i < nk; i++)
		w->cc[n++] = s->callchain[i];
	if (nu) {
		w->cc[n++] = EVENT_CONTEXT_USER;
		for (i = 0; i < nu; i++) {
			uint64_t pc = rs->frames[rs->nr_kernel + i].pc;

			/* Callers: the call instruction, as perf's DWARF
			 * unwinder reports them. */
			w->cc[n++] = i == 0 || pc == 0 ? pc : pc - 1;
		}
	}
	return (int64_t)n;
}

/*
 * A DWARF sample with the callchain of pw_callchain(), without REGS_USER
 * and STACK_USER; the rest of the record as it was.
 */
static int pw_sample(struct perfdata_writer *w, const struct event *ev,
		     const struct rsample *rs)
{
	const uint8_t *rec = ev->raw;
	struct pw_layout l;
	int64_t nr;
	size_t len, off;
	uint8_t *p;

	if (pw_sample_layout(rec, ev->raw_len, ev->attr, &l) < 0)
		return err_set(&w->err, ERR_CORRUPT, ev->file_off,
			       "SAMPLE does not match its sample_type");
	len = l.cc + 8 + (l.us - l.cc_end) + (ev->raw_len - l.us_end);
	nr = pw_callchain(w, ev, rs, len < 0xffff ? (0xffff - len) / 8 : 0);
	if (nr < 0)
		return -1;
	len += 8 * (size_t)nr;
	if (mem_grow(&w->rec, &w->rec_alloc, 1, len) < 0)
		return err_set(&w->err, ERR_NOMEM, ERR_NO_OFF, "sample");
	p = w->rec;
	memcpy(p, rec, l.cc);
	off = l.cc;
	pw_wr64(p + off, (uint64_t)nr);
	off += 8;
	memcpy(p + off, w->cc, 8 * (size_t)nr);
	off += 8 * (size_t)nr;
	memcpy(p + off, rec + l.cc_end, l.us - l.cc_end);
	off += l.us - l.cc_end;
	memcpy(p + off, rec + l.us_end, ev->raw_len - l.us_end);
	off += ev->raw_len - l.us_end;
	{
		uint16_t size = (uint16_t)off;

		memcpy(p + 6, &size, 2);
	}
	if (rs)
		w->st.samples++;
	else
		w->st.stripped++;
	w->st.records++;
	return pw_put(w, p, off);
}

/* An input that is not perf.data: records made from the events. */
static int pw_synth_event(struct perfdata_writer *w, const struct event *ev,
			  const struct rsample *rs)
{
	int64_t nr;

	strbuf_reset(&w->syn);
	if (!w->kernel_mapped && w->kernel_text) {
		w->kernel_mapped = true;
		perfdata_synth_kernel_mmap(w->kernel_text, &w->syn);
	}
	if (ev->type == EVENT_SAMPLE) {
		if (rs && pw_note_modules(w, rs) < 0)
			return -1;
		nr = pw_callchain(w, ev, rs, (0xffff - 56) / 8);
		if (nr < 0)
			return -1;
		perfdata_synth_sample(ev, w->cc, (size_t)nr, &w->syn);
		w->st.samples++;
	} else if (!perfdata_synth_record(ev, &w->syn) && !w->syn.len) {
		return 0;
	}
	if (w->syn.oom)
		return err_set(&w->err, ERR_NOMEM, ERR_NO_OFF, "record");
	w->st.records++;
	return pw_put(w, w->syn.buf, w->syn.len);
}

int perfdata_writer_event(struct perfdata_writer *w,
			  const struct perfdata_info *in,
			  const struct event *ev, const struct rsample *rs)
{
	if (!w->begun && pw_begin(w, in) < 0)
		return -1;
	if (w->synth)
		return pw_synth_event(w, ev, rs);
	switch (ev->rec_type) {
	case PD_REC_HEADER_ATTR: {
		uint32_t size;

		if (ev->raw_len < 8 + PD_ATTR_VER0_SIZE)
			return 0;
		size = pw_attr_size(ev->raw + 8, ev->raw_len - 8);
		if (pw_add_attr(w, ev->raw + 8, size, ev->raw + 8 + size,
				(ev->raw_len - 8 - size) / 8) < 0)
			return -1;
		return w->pipe ? pw_emit_attr(w, &w->attrs[w->nr_attrs - 1]) :
				 0;
	}
	case PD_REC_HEADER_FEATURE: {
		uint64_t id;
		size_t size;
		uint8_t *data;

		if (ev->raw_len < 16)
			return 0;
		id = pw_rd64(ev->raw + 8);
		size = ev->raw_len - 16;
		if (size == 0)  /* the sentinel */
			return w->pipe ? pw_emit_feature(w, PW_LAST_FEATURE,
							 NULL, 0) : 0;
		if (id >= PERFDATA_FEAT_MAX || pw_feat_dropped((unsigned)id))
			return 0;
		data = malloc(size);
		if (!data)
			return err_set(&w->err, ERR_NOMEM, ERR_NO_OFF,
				       "feature");
		memcpy(data, ev->raw + 16, size);
		if (id == PD_FEAT_EVENT_DESC)
			pw_fix_event_desc(data, size);
		if (w->pipe && pw_emit_feature(w, (unsigned)id, data, size) < 0) {
			free(data);
			return -1;
		}
		return pw_add_feat(w, (unsigned)id, data, size);
	}
	case PD_REC_HEADER_TRACING_DATA:
		if (w->pipe && in->tracing_data)
			return pw_emit_tracing(w, in->tracing_data,
					       in->tracing_data_size);
		return 0;
	case PD_REC_HEADER_BUILD_ID:
		if (!w->pipe)
			return 0;   /* in the input's list, for the feature */
		if (ev->build_id.filename)
			hashmap_put(&w->seen, pw_hash(ev->build_id.filename),
				    NULL);
		return pw_raw(w, ev);
	case PD_REC_FINISHED_ROUND:
	case PD_REC_COMPRESSED:
	case PD_REC_COMPRESSED2:
		return 0;
	case PD_REC_AUXTRACE:
	case PD_REC_AUXTRACE_INFO:
	case PD_REC_AUXTRACE_ERROR:
		w->st.dropped++;
		return 0;
	default:
		break;
	}
	if (ev->type == EVENT_SAMPLE && ev->attr &&
	    (ev->attr->sample_type & PW_DWARF_BITS)) {
		if (rs && pw_note_modules(w, rs) < 0)
			return -1;
		return pw_sample(w, ev, rs);
	}
	return pw_raw(w, ev);
}

static int pw_feat_cmp(const void *a, const void *b)
{
	const struct pw_feat *x = a, *y = b;

	return (x->id > y->id) - (x->id < y->id);
}

/* The BUILD_ID feature: the input's build-ids and the modules used. */
static int pw_build_id_feature(struct perfdata_writer *w,
			       const struct perfdata_info *in)
{
	struct strbuf sb;
	size_t i, k;
	uint8_t *data;

	strbuf_init(&sb);
	for (i = 0; i < in->nr_build_ids; i++) {
		const struct perfdata_build_id *b = &in->build_ids[i];
		struct pw_bid pb = { .name = b->filename, .size = b->size,
				     .cpumode = b->cpumode };

		memcpy(pb.bid, b->build_id, sizeof(pb.bid));
		pw_build_id_entry(w, 0, &pb, &sb);
	}
	for (k = 0; k < w->nr_bids; k++) {
		const struct pw_bid *b = w->bids[k];
		bool dup = false;

		for (i = 0; i < in->nr_build_ids && !dup; i++)
			dup = !strcmp(in->build_ids[i].filename, b->name) &&
			      in->build_ids[i].size == b->size &&
			      !memcmp(in->build_ids[i].build_id, b->bid,
				      b->size);
		if (!dup)
			pw_build_id_entry(w, 0, b, &sb);
	}
	if (sb.oom) {
		strbuf_release(&sb);
		return err_set(&w->err, ERR_NOMEM, ERR_NO_OFF, "build-ids");
	}
	data = malloc(sb.len ? sb.len : 1);
	if (!data) {
		strbuf_release(&sb);
		return err_set(&w->err, ERR_NOMEM, ERR_NO_OFF, "build-ids");
	}
	memcpy(data, sb.buf, sb.len);
	i = sb.len;
	strbuf_release(&sb);
	return pw_add_feat(w, PD_FEAT_BUILD_ID, data, i);
}

static int pw_finish_file(struct perfdata_writer *w,
			  const struct perfdata_info *in)
{
	uint8_t h[PW_HEADER_SIZE] = { 0 };
	uint64_t bits[4] = { 0 }, off, attr_size = 0, v;
	uint64_t *ids_off;
	size_t i;

	w->data_size = pw_tell(w) - PW_HEADER_SIZE;
	if (!in->pipe && !w->nr_attrs)
		return err_set(&w->err, ERR_CORRUPT, ERR_NO_OFF,
			       "%s: no attrs", w->in_path);
	if (in->pipe && in->tracing_data) {
		uint8_t *t = malloc(in->tracing_data_size + 1);

		if (!t)
			return err_set(&w->err, ERR_NOMEM, ERR_NO_OFF,
				       "tracing data");
		memcpy(t, in->tracing_data, in->tracing_data_size);
		if (pw_add_feat(w, PD_FEAT_TRACING_DATA, t,
				in->tracing_data_size) < 0)
			return -1;
	}
	if (pw_build_id_feature(w, in) < 0)
		return -1;
	qsort(w->feats, w->nr_feats, sizeof(*w->feats), pw_feat_cmp);
	/* The table, then the payloads. */
	off = pw_tell(w) + 16 * w->nr_feats;
	for (i = 0; i < w->nr_feats; i++) {
		uint64_t e[2] = { off, w->feats[i].size };

		bits[w->feats[i].id / 64] |= 1ull << (w->feats[i].id % 64);
		if (pw_put(w, e, 16) < 0)
			return -1;
		off += w->feats[i].size;
	}
	for (i = 0; i < w->nr_feats; i++)
		if (pw_put(w, w->feats[i].data, w->feats[i].size) < 0)
			return -1;
	/* The ids arrays, then the attrs section. */
	ids_off = calloc(w->nr_attrs + 1, sizeof(*ids_off));
	if (!ids_off)
		return err_set(&w->err, ERR_NOMEM, ERR_NO_OFF, "attrs");
	for (i = 0; i < w->nr_attrs; i++) {
		ids_off[i] = pw_tell(w);
		attr_size = MAX(attr_size, (uint64_t)w->attrs[i].size);
		if (pw_put(w, w->attrs[i].ids, w->attrs[i].nr_ids * 8) < 0)
			goto fail;
	}
	if (w->in_attr_size)
		attr_size = MAX(attr_size, w->in_attr_size - 16);
	attr_size = (attr_size + 7) & ~7ull;
	off = pw_tell(w);
	for (i = 0; i < w->nr_attrs; i++) {
		static const uint8_t zeros[4096];
		uint64_t sec[2] = { ids_off[i], w->attrs[i].nr_ids * 8 };

		if (pw_put(w, w->attrs[i].bytes, w->attrs[i].size) < 0 ||
		    pw_put(w, zeros, attr_size - w->attrs[i].size) < 0 ||
		    pw_put(w, sec, 16) < 0)
			goto fail;
	}
	free(ids_off);
	if (pw_flush(w) < 0)
		return -1;
	memcpy(h, "PERFILE2", 8);
	v = PW_HEADER_SIZE;
	memcpy(h + 8, &v, 8);
	v = attr_size + 16;
	memcpy(h + 16, &v, 8);
	memcpy(h + 24, &off, 8);
	v = w->nr_attrs * (attr_size + 16);
	memcpy(h + 32, &v, 8);
	v = PW_HEADER_SIZE;
	memcpy(h + 40, &v, 8);
	memcpy(h + 48, &w->data_size, 8);
	memcpy(h + 72, bits, 32);
	if (pwrite(w->fd, h, sizeof(h), 0) != (ssize_t)sizeof(h))
		return err_sys(&w->err, errno, "cannot write the header");
	return 0;
fail:
	free(ids_off);
	return -1;
}

int perfdata_writer_finish(struct perfdata_writer *w,
			   const struct perfdata_info *in)
{
	if (!w->begun && pw_begin(w, in) < 0)
		return -1;
	if (!w->pipe && pw_finish_file(w, in) < 0)
		return -1;
	if (pw_flush(w) < 0)
		return -1;
	w->st.bytes = w->pos;
	return 0;
}

struct perfdata_writer *perfdata_writer_new(int fd, bool pipe,
					    const char *in_path, bool synth,
					    perfdata_bid_fn bid_fn, void *ctx,
					    struct err *err)
{
	struct perfdata_writer *w = calloc(1, sizeof(*w));

	if (!w) {
		err_set(err, ERR_NOMEM, ERR_NO_OFF, "out of memory");
		return NULL;
	}
	if (!pipe && lseek(fd, 0, SEEK_CUR) < 0) {
		err_set(err, ERR_USAGE, ERR_NO_OFF,
			"file-mode perf.data needs a seekable output");
		free(w);
		return NULL;
	}
	w->fd = fd;
	w->pipe = pipe;
	w->in_path = in_path;
	w->synth = synth;
	w->bid_fn = bid_fn;
	w->bid_ctx = ctx;
	strbuf_init(&w->out);
	strbuf_init(&w->syn);
	return w;
}

void perfdata_writer_set_kernel_text(struct perfdata_writer *w,
				     uint64_t text)
{
	w->kernel_text = text;
}

const struct err *perfdata_writer_err(const struct perfdata_writer *w)
{
	return &w->err;
}

const struct perfdata_write_stats *
perfdata_writer_stats(const struct perfdata_writer *w)
{
	return &w->st;
}

void perfdata_writer_free(struct perfdata_writer *w)
{
	size_t i;

	if (!w)
		return;
	for (i = 0; i < w->nr_attrs; i++) {
		free(w->attrs[i].bytes);
		free(w->attrs[i].ids);
	}
	free(w->attrs);
	for (i = 0; i < w->nr_feats; i++)
		free(w->feats[i].data);
	free(w->feats);
	for (i = 0; i < w->nr_bids; i++) {
		free(w->bids[i]->name);
		free(w->bids[i]);
	}
	free(w->bids);
	hashmap_release(&w->seen);
	free(w->rec);
	free(w->cc);
	strbuf_release(&w->syn);
	strbuf_release(&w->out);
	free(w);
}
