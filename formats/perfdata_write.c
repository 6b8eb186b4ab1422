/*
 * perfdata_write.c - perf.data output: records carried over, DWARF samples
 * rewritten with callchains (see perfdata_write.h for the rules); the
 * metadata is perfdata_write_meta.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats/perfdata_write_internal.h"

#include "common/hashmap.h"
#include "common/mem.h"
#include "formats/fdout.h"
#include "formats/perfdata_synth.h"

int pw_flush(struct perfdata_writer *w)
{
	size_t len = w->out.len;

	if (fdout_flush(w->fd, &w->out, "perf.data output", &w->err) < 0)
		return -1;
	w->pos += len;
	return 0;
}

int pw_put(struct perfdata_writer *w, const void *p, size_t len)
{
	if (!len)
		return 0;
	strbuf_add(&w->out, p, len);
	if (w->out.len >= PW_FLUSH_AT)
		return pw_flush(w);
	return 0;
}

uint64_t pw_tell(const struct perfdata_writer *w)
{
	return w->pos + w->out.len;
}

/* A record: header, then len bytes of body. */
int pw_record(struct perfdata_writer *w, uint32_t type, uint16_t misc,
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

uint64_t pw_hash(const char *s)
{
	return hashmap_fnv_str(HASHMAP_FNV_SEED, s);
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

	for (i = rs->nr_kernel; i < rs->nr_frames; i++) {
		const struct sym_loc *loc = rs->frames[i].loc;
		struct pw_bid *b;
		uint64_t key;
		unsigned n;
		void *v;

		if (!loc || !loc->module || loc->kind != SYM_USER ||
		    hashmap_get(&w->seen_at, (uintptr_t)loc->module, NULL))
			continue;
		if (hashmap_put(&w->seen_at, (uintptr_t)loc->module, NULL) < 0)
			goto oom;
		key = pw_hash(loc->module);
		if (hashmap_get(&w->seen, key, &v))
			continue;
		/* the module's build-id, as the capture or its file gave it */
		n = loc->build_id ? loc->build_id_size : 0;
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
		memcpy(b->bid, loc->build_id, n);
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
	hashmap_release(&w->seen_at);
	free(w->rec);
	free(w->cc);
	strbuf_release(&w->syn);
	strbuf_release(&w->out);
	free(w);
}
