/*
 * perfdata_write_meta.c - the perf.data writer's metadata: attrs (read
 * from the input, rewritten for callchains), feature sections (carried
 * over, EVENT_DESC rewritten, BUILD_ID made), build-id entries, the pipe
 * preamble and the file-mode trailer and header.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats/perfdata_write_internal.h"

#include "common/mem.h"
#include "formats/perfdata_synth.h"

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

uint32_t pw_attr_size(const uint8_t *a, size_t slot)
{
	uint32_t size = pw_rd32(a + 4);

	if (size == 0)
		size = PD_ATTR_VER0_SIZE;
	return size > slot ? (uint32_t)slot : size;
}

int pw_add_attr(struct perfdata_writer *w, const uint8_t *a,
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
int pw_add_feat(struct perfdata_writer *w, unsigned id, uint8_t *data,
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
bool pw_feat_dropped(unsigned id)
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
void pw_fix_event_desc(uint8_t *p, size_t size)
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
int pw_read_file_meta(struct perfdata_writer *w,
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

int pw_emit_attr(struct perfdata_writer *w, const struct pw_attr *a)
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

int pw_emit_feature(struct perfdata_writer *w, unsigned id,
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
int pw_build_id_entry(struct perfdata_writer *w, uint32_t type,
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

int pw_emit_tracing(struct perfdata_writer *w, const uint8_t *data,
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
int pw_pipe_preamble(struct perfdata_writer *w,
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
int pw_synth_meta(struct perfdata_writer *w,
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
	if (sb.len) /* no build-ids at all: sb.buf is NULL */
		memcpy(data, sb.buf, sb.len);
	i = sb.len;
	strbuf_release(&sb);
	return pw_add_feat(w, PD_FEAT_BUILD_ID, data, i);
}

int pw_finish_file(struct perfdata_writer *w,
		   const struct perfdata_info *in)
{
	uint8_t h[PW_HEADER_SIZE] = { 0 };
	uint64_t bits[4] = { 0 }, off, attr_size = 0, v;
	uint64_t *ids_off;
	size_t i;

	w->data_size = pw_tell(w) - PW_HEADER_SIZE;
	/* a pipe's come as records, so there may be none: readers need one */
	if (!w->nr_attrs)
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
