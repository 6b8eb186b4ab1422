/*
 * perfdata_read.c - open perf.data (file or pipe mode), read its attrs and
 * features, and stream its records in time order.
 *
 * Layout: tools/perf/util/header.c (perf_file_header, perf_file_attr,
 * feature table at data.offset + data.size) and session.c (record stream,
 * trailing payloads of TRACING_DATA and AUXTRACE, COMPRESSED records).
 * Records are read into refcounted blocks; records waiting in the ordering
 * queue keep their block alive, so memory is bounded by what one round of
 * the recording holds, not by the file size.
 */
#include <limits.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "formats/perfdata_internal.h"

#include "common/mem.h"

#define PD_BLOCK_SIZE (4u << 20)
#define PD_DBLOCK_SIZE (1u << 20)
#define PD_DEFAULT_QUEUE_BYTES (64ull << 20)
/*
 * Most bytes one compressed record may yield when mmap_len is smaller, and
 * whatever mmap_len says (docs/formats.md, the inputs).
 */
#define PD_MIN_DECOMPRESSED (4ull << 20)
#define PD_MAX_DECOMPRESSED (64ull << 20)
#define PD_FREE_BLOCKS_MAX 8

/* --- blocks -------------------------------------------------------- */

static struct pd_block *pd_block_get(struct perfdata_reader *r, size_t cap)
{
	struct pd_block *b = NULL, **pp;

	for (pp = &r->free_blocks; *pp; pp = &(*pp)->next_free) {
		if ((*pp)->cap >= cap) {
			b = *pp;
			*pp = b->next_free;
			break;
		}
	}
	if (!b) {
		if (cap > SIZE_MAX - sizeof(*b))
			return NULL;
		b = malloc(sizeof(*b) + cap);
		if (!b)
			return NULL;
		b->cap = cap;
		b->data = b->storage;
		b->map = NULL;
	}
	b->refs = 1;
	b->len = 0;
	b->next_free = NULL;
	return b;
}

void pd_block_put(struct perfdata_reader *r, struct pd_block *b)
{
	struct pd_block *f;
	unsigned n = 0;

	if (!b || --b->refs > 0)
		return;
	if (b->map) {
		if (r->windows)
			pd_windows_put(r->windows, b->map, b->cap);
		else if (r->mapper)
			pd_mapper_unmap(r->mapper, b->map, b->cap);
		else
			munmap(b->map, b->cap);
		free(b);
		return;
	}
	for (f = r->free_blocks; f; f = f->next_free)
		n++;
	if (n < PD_FREE_BLOCKS_MAX && b->cap <= PD_BLOCK_SIZE) {
		b->next_free = r->free_blocks;
		r->free_blocks = b;
		return;
	}
	free(b);
}

void pd_src_release(struct perfdata_reader *r, struct pd_src *s)
{
	pd_block_put(r, s->blk);
	s->blk = NULL;
	s->pos = 0;
}

static size_t pd_src_avail(const struct pd_src *s)
{
	return s->blk ? s->blk->len - s->pos : 0;
}

/*
 * Replaces s's block by a new one of at least cap bytes that starts with
 * the unread bytes of the old one.  Returns 0 or -1 (out of memory).
 */
static int pd_src_rebase(struct perfdata_reader *r, struct pd_src *s,
			 size_t cap)
{
	size_t avail = pd_src_avail(s);
	struct pd_block *nb = pd_block_get(r, MAX(cap, avail));

	if (!nb)
		return err_set(&r->err, ERR_NOMEM, ERR_NO_OFF,
			       "input block of %zu bytes", cap);
	if (avail)
		memcpy(nb->data, s->blk->data + s->pos, avail);
	nb->len = avail;
	s->blk_off += s->pos;
	pd_src_release(r, s);
	s->blk = nb;
	s->pos = 0;
	return 0;
}

/*
 * Maps the window of the input that holds the next unread byte (see
 * pd_map_base()), so a record is never split; the old window stays mapped
 * while records in it wait in the ordering queue.  A window shared with
 * other readers comes with the next one mapped for them too, unless it is
 * already.  Returns 1, 0 when the input cannot be mapped (the caller falls
 * back to reading).
 */
static int pd_src_map(struct perfdata_reader *r, uint64_t *in_off)
{
	struct pd_src *s = &r->src;
	uint64_t cur = s->blk ? s->blk_off + s->pos : *in_off;
	uint64_t base = pd_map_base(cur);
	uint64_t len = pd_map_len(base, r->data_end);
	struct pd_block *b;
	void *p;

	b = calloc(1, sizeof(*b));
	if (!b)
		return 0;
	b->refs = 1;
	p = r->mapper ? pd_mapper_take(r->mapper, base, len, &b->map,
				       &b->cap) :
			NULL;
	if (p) {
		/* all of the mapping from base on */
		len = (uint8_t *)b->map + b->cap - (uint8_t *)p;
	} else {
		p = r->windows ? pd_windows_take(r->windows, r->in.fd, base,
						 (size_t)len) :
				 NULL;
		if (p && base + len < r->data_end)
			pd_windows_ahead(r->windows, r->in.fd,
					 base + PD_MAP_WINDOW,
					 (size_t)pd_map_len(base + PD_MAP_WINDOW,
							    r->data_end));
		if (!p)
			p = pd_map_window(r->in.fd, base, (size_t)len, false);
		if (!p) {
			free(b);
			return 0;
		}
		b->map = p;
		b->cap = (size_t)len;
	}
	b->data = p;
	b->len = (size_t)len;
	pd_src_release(r, s);
	s->blk = b;
	s->blk_off = base;
	s->pos = (size_t)(cur - base);
	*in_off = base + len;
	return 1;
}

/*
 * Makes need bytes of the data section available at r->src.  Returns 1
 * when they are, 0 at a clean end of data (no byte left), -1 on error or
 * when the data ends inside them.
 */
static int pd_src_fill(struct perfdata_reader *r, size_t need,
		       uint64_t *in_off)
{
	struct pd_src *s = &r->src;
	size_t avail = pd_src_avail(s);
	uint64_t remain;
	long long n;
	size_t want;

	if (avail >= need)
		return 1;
	remain = r->data_end > *in_off ? r->data_end - *in_off : 0;
	if (avail == 0 && remain == 0)
		return 0;
	if (r->use_mmap) {
		if (avail + remain < need)
			goto truncated;
		if (pd_src_map(r, in_off))
			return 1;
		r->use_mmap = false;  /* read() from here on */
	}
	if (pd_src_rebase(r, s, MAX((size_t)PD_BLOCK_SIZE, need)) < 0)
		return -1;
	want = s->blk->cap - s->blk->len;
	if (want > remain)
		want = (size_t)remain;
	if (want) {
		n = input_read_at(&r->in, s->blk->data + s->blk->len, want,
				  *in_off, &r->err);
		if (n < 0)
			return -1;
		s->blk->len += (size_t)n;
		*in_off += (uint64_t)n;
		if ((size_t)n < want)
			r->data_end = *in_off; /* end of the stream */
	}
	avail = pd_src_avail(s);
	if (avail >= need)
		return 1;
	if (avail == 0)
		return 0;
truncated:
	return err_set(&r->err, ERR_TRUNCATED, s->blk_off + s->pos,
		       "data ends at 0x%llx inside a record that needs %zu "
		       "bytes, %zu present",
		       (unsigned long long)(s->blk_off + s->pos + avail), need,
		       avail);
}

/* --- attrs and ids --------------------------------------------------- */

static int pd_id_cmp(const void *a, const void *b)
{
	uint64_t x = ((const struct pd_id *)a)->id;
	uint64_t y = ((const struct pd_id *)b)->id;

	return x < y ? -1 : x > y;
}

int pd_id_add(struct perfdata_reader *r, uint64_t id, unsigned attr)
{
	if (mem_grow(&r->ids, &r->alloc_ids, sizeof(*r->ids), r->nr_ids + 1) <
	    0)
		return err_set(&r->err, ERR_NOMEM, ERR_NO_OFF, "event ids");
	r->ids[r->nr_ids].id = id;
	r->ids[r->nr_ids].attr = attr;
	r->nr_ids++;
	r->ids_sorted = false;
	return 0;
}

int pd_attr_by_id(struct perfdata_reader *r, uint64_t id, unsigned *attr)
{
	struct pd_id key = { .id = id }, *hit;

	if (r->nr_ids == 0) /* qsort and bsearch must not see NULL */
		return -1;
	if (!r->ids_sorted) {
		qsort(r->ids, r->nr_ids, sizeof(*r->ids), pd_id_cmp);
		r->ids_sorted = true;
	}
	hit = bsearch(&key, r->ids, r->nr_ids, sizeof(*r->ids), pd_id_cmp);
	if (!hit)
		return -1;
	*attr = hit->attr;
	return 0;
}

/* Reverses the bits of a byte (attr flag bitfields of swapped files). */
static uint8_t pd_revbyte(uint8_t b)
{
	b = (uint8_t)((b & 0xf0) >> 4 | (b & 0x0f) << 4);
	b = (uint8_t)((b & 0xcc) >> 2 | (b & 0x33) << 2);
	b = (uint8_t)((b & 0xaa) >> 1 | (b & 0x55) << 1);
	return b;
}

static const char *pd_default_event_name(uint32_t type, uint64_t config)
{
	static const char *const sw[] = {
		"cpu-clock", "task-clock", "page-faults",
		"context-switches", "cpu-migrations", "minor-faults",
		"major-faults", "alignment-faults", "emulation-faults",
		"dummy", "bpf-output", "cgroup-switches",
	};
	static const char *const hw[] = {
		"cycles", "instructions", "cache-references",
		"cache-misses", "branches", "branch-misses",
		"bus-cycles", "stalled-cycles-frontend",
		"stalled-cycles-backend", "ref-cycles",
	};

	if (type == EVENT_TYPE_SOFTWARE && config < ARRAY_SIZE(sw))
		return sw[config];
	if (type == 0 && (config & 0xffffffff) < ARRAY_SIZE(hw))
		return hw[config & 0xffffffff];
	return NULL;
}

static int pd_update_id_pos(struct perfdata_reader *r)
{
	const struct event_attr *a = &r->info.attrs[0];
	uint64_t st = a->sample_type;
	unsigned i;
	int spos = -1, tpos = -1;

	if (st & PD_SAMPLE_IDENTIFIER) {
		spos = 0;
		tpos = 0;
	} else if (st & PD_SAMPLE_ID) {
		spos = !!(st & PD_SAMPLE_IP) + !!(st & PD_SAMPLE_TID) +
		       !!(st & PD_SAMPLE_TIME) + !!(st & PD_SAMPLE_ADDR);
		tpos = !!(st & PD_SAMPLE_CPU) + !!(st & PD_SAMPLE_STREAM_ID);
	}
	r->sample_id_pos = spos;
	r->trailer_id_pos = tpos;
	if (r->info.nr_attrs < 2)
		return 0;
	for (i = 1; i < r->info.nr_attrs; i++) {
		uint64_t o = r->info.attrs[i].sample_type;
		bool same;

		if (st & PD_SAMPLE_IDENTIFIER)
			same = o & PD_SAMPLE_IDENTIFIER;
		else
			same = (o & (PD_SAMPLE_ID | PD_SAMPLE_IP |
				     PD_SAMPLE_TID | PD_SAMPLE_TIME |
				     PD_SAMPLE_ADDR | PD_SAMPLE_CPU |
				     PD_SAMPLE_STREAM_ID)) ==
			       (st & (PD_SAMPLE_ID | PD_SAMPLE_IP |
				      PD_SAMPLE_TID | PD_SAMPLE_TIME |
				      PD_SAMPLE_ADDR | PD_SAMPLE_CPU |
				      PD_SAMPLE_STREAM_ID));
		if (!same || spos < 0)
			return err_set(&r->err, ERR_UNSUPPORTED, ERR_NO_OFF,
				       "events %u and %u place their sample id "
				       "differently (sample_type 0x%llx and "
				       "0x%llx)",
				       0, i, (unsigned long long)st,
				       (unsigned long long)o);
		if (r->info.attrs[i].sample_id_all != a->sample_id_all)
			return err_set(&r->err, ERR_UNSUPPORTED, ERR_NO_OFF,
				       "events disagree on sample_id_all");
	}
	return 0;
}

/* Makes room for need attrs in info.attrs and attr_names. */
static int pd_attrs_reserve(struct perfdata_reader *r, size_t need)
{
	size_t a1 = r->attrs_alloc, a2 = r->attrs_alloc;

	if (need <= r->attrs_alloc)
		return 0;
	if (mem_grow(&r->info.attrs, &a1, sizeof(*r->info.attrs), need) < 0 ||
	    mem_grow(&r->attr_names, &a2, sizeof(*r->attr_names), need) < 0)
		return -1;
	r->attrs_alloc = MIN(a1, a2);
	return 0;
}

/*
 * Decodes one perf_event_attr of attr_bytes bytes (its own size field says
 * how much of it is valid) and appends it to r->info.attrs.
 */
int pd_attr_add(struct perfdata_reader *r, struct cur *c, size_t attr_bytes,
		const char *what)
{
	uint8_t buf[160];
	uint64_t off = cur_off(c);
	const uint8_t *p = cur_bytes(c, attr_bytes);
	struct event_attr *a;
	struct cur ac;
	uint32_t size;
	uint8_t flags[8];
	uint64_t fl;
	size_t n;
	unsigned i;

	if (!p)
		return err_set(&r->err, ERR_TRUNCATED, off,
			       "%s: attribute of %zu bytes is truncated", what,
			       attr_bytes);
	if (attr_bytes < PD_ATTR_VER0_SIZE)
		return err_set(&r->err, ERR_CORRUPT, off,
			       "%s: attribute of %zu bytes is smaller than "
			       "the first ABI's 64", what, attr_bytes);
	ac = cur_make(p, attr_bytes, off, c->swap);
	cur_skip(&ac, 4);
	size = cur_u32(&ac);
	if (size == 0)
		size = PD_ATTR_VER0_SIZE;
	if (size < PD_ATTR_VER0_SIZE || size > attr_bytes)
		return err_set(&r->err, ERR_CORRUPT, off + 4,
			       "%s: attr.size %u does not fit its %zu-byte slot",
			       what, size, attr_bytes);
	memset(buf, 0, sizeof(buf));
	n = MIN((size_t)size, sizeof(buf));
	memcpy(buf, p, n);

	if (pd_attrs_reserve(r, r->info.nr_attrs + 1) < 0)
		return err_set(&r->err, ERR_NOMEM, ERR_NO_OFF, "attrs");
	a = &r->info.attrs[r->info.nr_attrs];
	memset(a, 0, sizeof(*a));
	a->index = r->info.nr_attrs;

	ac = cur_make(buf, sizeof(buf), off, c->swap);
	a->type = cur_u32(&ac);
	(void)cur_u32(&ac);
	a->config = cur_u64(&ac);
	a->sample_period = cur_u64(&ac);
	a->sample_type = cur_u64(&ac);
	a->read_format = cur_u64(&ac);
	memcpy(flags, ac.p, 8);
	cur_skip(&ac, 8);
	if (c->swap)
		for (i = 0; i < 8; i++)
			flags[i] = pd_revbyte(flags[i]);
	/* The bitfield word is little-endian after the per-byte reversal. */
	fl = 0;
	for (i = 0; i < 8; i++)
		fl |= (uint64_t)flags[i] << (8 * i);
	a->flags = fl;
	a->freq = fl & PD_ATTR_FREQ;
	a->sample_id_all = fl & PD_ATTR_SAMPLE_ID_ALL;
	a->use_clockid = fl & PD_ATTR_USE_CLOCKID;
	cur_skip(&ac, 8);  /* wakeup, bp_type */
	cur_skip(&ac, 16); /* config1, config2 */
	a->branch_sample_type = cur_u64(&ac);
	a->sample_regs_user = cur_u64(&ac);
	a->sample_stack_user = cur_u32(&ac);
	a->clockid = (int32_t)cur_u32(&ac);
	a->sample_regs_intr = cur_u64(&ac);
	a->file_swap = c->swap;
	a->name = pd_default_event_name(a->type, a->config);

	if (a->sample_type >> PD_SAMPLE_MAX_BIT)
		return err_set(&r->err, ERR_UNSUPPORTED, off + 24,
			       "%s: sample_type 0x%llx has bits this reader "
			       "does not know", what,
			       (unsigned long long)a->sample_type);
	r->attr_names[r->info.nr_attrs] = NULL;
	r->info.nr_attrs++;
	return pd_update_id_pos(r);
}

int pd_attr_set_name(struct perfdata_reader *r, unsigned idx,
		     const char *name)
{
	char *copy = mem_strdup(name);

	if (!copy)
		return err_set(&r->err, ERR_NOMEM, ERR_NO_OFF, "event name");
	free(r->attr_names[idx]);
	r->attr_names[idx] = copy;
	r->info.attrs[idx].name = copy;
	return 0;
}

/* --- file-mode header ---------------------------------------------- */

static int pd_check_range(struct perfdata_reader *r, uint64_t off,
			  uint64_t size, uint64_t where, const char *what)
{
	uint64_t end;

	if (__builtin_add_overflow(off, size, &end) || end > r->info.file_size)
		return err_set(&r->err, ERR_CORRUPT, where,
			       "%s at 0x%llx + 0x%llx runs past the end of the "
			       "file (0x%llx bytes)",
			       what, (unsigned long long)off,
			       (unsigned long long)size,
			       (unsigned long long)r->info.file_size);
	return 0;
}

/* Reads size bytes at off into new memory the caller frees. */
static uint8_t *pd_read_section(struct perfdata_reader *r, uint64_t off,
				uint64_t size)
{
	uint8_t *buf;
	long long n;

	buf = malloc(size ? (size_t)size : 1);
	if (!buf) {
		err_set(&r->err, ERR_NOMEM, ERR_NO_OFF,
			"section of %llu bytes", (unsigned long long)size);
		return NULL;
	}
	n = input_read_at(&r->in, buf, (size_t)size, off, &r->err);
	if (n < 0 || (uint64_t)n != size) {
		if (n >= 0)
			err_set(&r->err, ERR_TRUNCATED, off,
				"section of %llu bytes is truncated",
				(unsigned long long)size);
		free(buf);
		return NULL;
	}
	return buf;
}

static int pd_read_file_attrs(struct perfdata_reader *r, uint64_t attrs_off,
			      uint64_t attrs_size)
{
	uint64_t nr, i;
	uint8_t *buf;
	struct cur c;

	if (r->info.attr_size < PD_ATTR_VER0_SIZE + 16)
		return err_set(&r->err, ERR_CORRUPT, 16,
			       "attr_size %llu is smaller than the minimum 80",
			       (unsigned long long)r->info.attr_size);
	if (attrs_size % r->info.attr_size)
		return err_set(&r->err, ERR_CORRUPT, 32,
			       "attrs section of %llu bytes is not a multiple "
			       "of attr_size %llu",
			       (unsigned long long)attrs_size,
			       (unsigned long long)r->info.attr_size);
	if (pd_check_range(r, attrs_off, attrs_size, 24, "attrs section") < 0)
		return -1;
	nr = attrs_size / r->info.attr_size;
	if (nr == 0)
		return err_set(&r->err, ERR_CORRUPT, 32,
			       "the file has no event attributes");
	buf = pd_read_section(r, attrs_off, attrs_size);
	if (!buf)
		return -1;
	c = cur_make(buf, (size_t)attrs_size, attrs_off, r->info.swap);
	for (i = 0; i < nr; i++) {
		uint64_t ids_off, ids_size, k, entry = cur_off(&c);
		uint8_t *ids;
		struct cur ic;

		if (pd_attr_add(r, &c, (size_t)r->info.attr_size - 16,
				"attrs section") < 0)
			goto fail;
		ids_off = cur_u64(&c);
		ids_size = cur_u64(&c);
		if (ids_size % 8)
			goto bad_ids;
		if (pd_check_range(r, ids_off, ids_size, cur_off(&c) - 16,
				   "event id array") < 0)
			goto fail;
		ids = pd_read_section(r, ids_off, ids_size);
		if (!ids)
			goto fail;
		ic = cur_make(ids, (size_t)ids_size, ids_off, r->info.swap);
		for (k = 0; k < ids_size / 8; k++) {
			if (pd_id_add(r, cur_u64(&ic), (unsigned)i) < 0) {
				free(ids);
				goto fail;
			}
		}
		free(ids);
		continue;
bad_ids:
		err_set(&r->err, ERR_CORRUPT, entry,
			"attr %llu: id array size %llu is not a multiple of 8",
			(unsigned long long)i, (unsigned long long)ids_size);
		goto fail;
	}
	free(buf);
	return 0;
fail:
	free(buf);
	return -1;
}

static int pd_read_file_features(struct perfdata_reader *r)
{
	struct perfdata_info *in = &r->info;
	uint64_t table_off = in->data_offset + in->data_size;
	unsigned nr = 0, bit, k = 0;
	uint8_t *table;
	struct cur c;

	for (bit = 0; bit < PERFDATA_FEAT_MAX; bit++)
		nr += (in->features[bit / 64] >> (bit % 64)) & 1;
	if (nr == 0)
		return 0;
	if (pd_check_range(r, table_off, (uint64_t)nr * 16, 40,
			   "feature table") < 0)
		return -1;
	in->feats = mem_zalloc(nr, sizeof(*in->feats));
	table = pd_read_section(r, table_off, (uint64_t)nr * 16);
	if (!in->feats || !table) {
		free(table);
		return table ? err_set(&r->err, ERR_NOMEM, ERR_NO_OFF,
				       "feature table") : -1;
	}
	c = cur_make(table, (size_t)nr * 16, table_off, in->swap);
	for (bit = 0; bit < PERFDATA_FEAT_MAX; bit++) {
		struct perfdata_feature *f;
		uint64_t where;
		uint8_t *payload;
		struct cur pc;
		int rc;

		if (!((in->features[bit / 64] >> (bit % 64)) & 1))
			continue;
		f = &in->feats[k++];
		where = cur_off(&c);
		f->id = bit;
		f->offset = cur_u64(&c);
		f->size = cur_u64(&c);
		in->nr_feats = k;
		if (pd_check_range(r, f->offset, f->size, where,
				   perfdata_feature_name(bit) ?
					   perfdata_feature_name(bit) :
					   "feature section") < 0)
			goto fail;
		/* Only decode what we use; skip big unknown sections. */
		if (bit > PD_FEAT_KNOWN_MAX || bit == PD_FEAT_BPF_BTF ||
		    bit == PD_FEAT_BPF_PROG_INFO || bit == PD_FEAT_AUXTRACE)
			continue;
		payload = pd_read_section(r, f->offset, f->size);
		if (!payload)
			goto fail;
		pc = cur_make(payload, (size_t)f->size, f->offset, in->swap);
		rc = pd_feature_parse(r, bit, &pc);
		free(payload);
		if (rc < 0)
			goto fail;
	}
	free(table);
	return 0;
fail:
	free(table);
	return -1;
}

static int pd_open_file_mode(struct perfdata_reader *r, const uint8_t *hdr,
			     size_t hdr_len)
{
	struct perfdata_info *in = &r->info;
	struct cur c = cur_make(hdr, hdr_len, 0, in->swap);
	uint64_t attrs_off, attrs_size;
	unsigned i;

	if (!r->in.seekable)
		return err_set(&r->err, ERR_UNSUPPORTED, 8,
			       "a file-mode perf.data cannot be read from a "
			       "pipe (record with -o - for pipe mode)");
	in->file_size = r->in.size;
	cur_skip(&c, 8);
	in->header_size = cur_u64(&c);
	in->attr_size = cur_u64(&c);
	attrs_off = cur_u64(&c);
	attrs_size = cur_u64(&c);
	in->data_offset = cur_u64(&c);
	in->data_size = cur_u64(&c);
	cur_skip(&c, 16); /* event_types */
	if (in->header_size == PD_FILE_HEADER_SIZE)
		for (i = 0; i < 4; i++)
			in->features[i] = cur_u64(&c);
	if (c.short_read)
		return err_set(&r->err, ERR_TRUNCATED, 0,
			       "file header needs %llu bytes, the file has %llu",
			       (unsigned long long)in->header_size,
			       (unsigned long long)in->file_size);
	if (pd_read_file_attrs(r, attrs_off, attrs_size) < 0)
		return -1;
	if (in->data_size == 0) {
		/* perf was killed before it rewrote the header. */
		if (in->data_offset > in->file_size)
			return err_set(&r->err, ERR_CORRUPT, 40,
				       "data section starts at 0x%llx, after "
				       "the end of the file",
				       (unsigned long long)in->data_offset);
		memset(in->features, 0, sizeof(in->features));
		r->data_end = in->file_size;
	} else {
		if (pd_check_range(r, in->data_offset, in->data_size, 40,
				   "data section") < 0)
			return -1;
		r->data_end = in->data_offset + in->data_size;
		if (pd_read_file_features(r) < 0 ||
		    pd_tracepoint_names(r) < 0)
			return -1;
	}
	r->src.blk_off = in->data_offset;
	r->in_off = in->data_offset;
	/* Regular files are mapped in windows: no copy of the records. */
	r->use_mmap = r->in.seekable && r->in.fd >= 0;
	return 0;
}

/* --- open/close ---------------------------------------------------- */

bool perfdata_probe(const void *head, size_t len)
{
	uint64_t magic;

	if (len < 8)
		return false;
	memcpy(&magic, head, 8);
	return magic == PD_MAGIC || magic == PD_MAGIC_SWAPPED;
}

/* Allocates a reader with its options applied; the input is not open. */
static struct perfdata_reader *pd_new(const struct perfdata_opts *opts,
				      struct err *err)
{
	struct perfdata_reader *r = mem_zalloc(1, sizeof(*r));

	if (!r) {
		err_set(err, ERR_NOMEM, ERR_NO_OFF, "reader");
		return NULL;
	}
	err_clear(&r->err);
	if (opts)
		r->opts = *opts;
	if (!r->opts.max_queue_bytes)
		r->opts.max_queue_bytes = PD_DEFAULT_QUEUE_BYTES;
	pd_queue_init(&r->q, r->opts.max_queue_bytes);
	r->sample_id_pos = r->trailer_id_pos = -1;
	r->layout.attr = UINT_MAX;
	r->stats.time_min = UINT64_MAX;
	r->in.fd = -1;
	return r;
}

/* Reads the header of r's open input.  Returns 0, or -1 with r->err set. */
static int pd_read_header(struct perfdata_reader *r)
{
	uint8_t hdr[PD_FILE_HEADER_SIZE];
	uint64_t magic, size;
	long long n;
	size_t hdr_len;

	r->info.file_size = r->in.size;
	n = input_read_at(&r->in, hdr, PD_PIPE_HEADER_SIZE, 0, &r->err);
	if (n < 0)
		return -1;
	if (n < 8 || !perfdata_probe(hdr, (size_t)n))
		return err_set(&r->err, ERR_FORMAT, 0,
			       "not a perf.data file (no PERFILE2 magic)");
	memcpy(&magic, hdr, 8);
	r->info.swap = magic == PD_MAGIC_SWAPPED;
	if (n < PD_PIPE_HEADER_SIZE)
		return err_set(&r->err, ERR_TRUNCATED, 8,
			       "file ends inside the header (%lld bytes)", n);
	memcpy(&size, hdr + 8, 8);
	if (r->info.swap)
		size = bswap_64(size);
	if (size == PD_PIPE_HEADER_SIZE) {
		r->info.pipe = true;
		r->info.header_size = size;
		r->data_end = UINT64_MAX;
		r->src.blk_off = PD_PIPE_HEADER_SIZE;
		r->in_off = PD_PIPE_HEADER_SIZE;
		r->info.data_offset = PD_PIPE_HEADER_SIZE;
		return 0;
	}
	if (size != PD_FILE_HEADER_SIZE && size != PD_FILE_HEADER_V1_SIZE)
		return err_set(&r->err, ERR_CORRUPT, 8,
			       "header size %llu is none of 16 (pipe), 72 or 104",
			       (unsigned long long)size);
	hdr_len = (size_t)size;
	n = input_read_at(&r->in, hdr + PD_PIPE_HEADER_SIZE,
			  hdr_len - PD_PIPE_HEADER_SIZE, PD_PIPE_HEADER_SIZE,
			  &r->err);
	if (n < 0)
		return -1;
	if ((size_t)n < hdr_len - PD_PIPE_HEADER_SIZE)
		return err_set(&r->err, ERR_TRUNCATED,
			       PD_PIPE_HEADER_SIZE + (uint64_t)n,
			       "file ends inside the %zu-byte header", hdr_len);
	return pd_open_file_mode(r, hdr, hdr_len);
}

struct perfdata_reader *perfdata_open(const char *path,
				      const struct perfdata_opts *opts,
				      struct err *err)
{
	struct perfdata_reader *r = pd_new(opts, err);

	if (!r)
		return NULL;
	if (input_open(&r->in, path, &r->err) < 0 || pd_read_header(r) < 0) {
		if (err)
			*err = r->err;
		perfdata_close(r);
		return NULL;
	}
	return r;
}

struct perfdata_reader *perfdata_open_fd(int fd, const char *name,
					 const struct perfdata_opts *opts,
					 struct err *err)
{
	struct perfdata_reader *r = pd_new(opts, err);

	if (!r)
		return NULL;
	input_from_fd(&r->in, fd, name);
	if (pd_read_header(r) < 0) {
		if (err)
			*err = r->err;
		perfdata_close(r);
		return NULL;
	}
	return r;
}

void perfdata_map_ahead(struct perfdata_reader *r)
{
	if (r->use_mmap && !r->mapper && !r->windows)
		r->mapper = pd_mapper_start(r->in.fd, r->data_end);
}

void perfdata_share_windows(struct perfdata_reader *r,
			    struct perfdata_windows *ws)
{
	if (r->use_mmap && !r->mapper)
		r->windows = ws;
}

void perfdata_close(struct perfdata_reader *r)
{
	struct pd_block *b;
	unsigned i;

	if (!r)
		return;
	if (r->cur_held)
		pd_block_put(r, r->cur.blk);
	pd_queue_release(r, &r->q);
	pd_src_release(r, &r->src);
	pd_src_release(r, &r->dsrc);
	pd_block_put(r, r->zblk);
	while ((b = r->free_blocks)) {
		r->free_blocks = b->next_free;
		free(b);
	}
	pd_mapper_stop(r->mapper);
	if (r->zstd)
		ZSTD_freeDStream(r->zstd);
	for (i = 0; i < r->info.nr_attrs; i++)
		free(r->attr_names[i]);
	free(r->attr_names);
	free(r->ids);
	free(r->index);
	free(r->visit);
	free(r->round_blk);
	free(r->scratch_u64);
	free(r->branches);
	pd_tracepoint_reset(r);
	free(r->tracing_data);
	free(r->stats.samples_by_attr);
	hashmap_release(&r->bid_index);
	pd_info_release(&r->info);
	input_close(&r->in);
	free(r);
}

const struct err *perfdata_err(const struct perfdata_reader *r)
{
	return &r->err;
}

const struct perfdata_info *perfdata_info(const struct perfdata_reader *r)
{
	return &r->info;
}

const struct perfdata_stats *perfdata_stats(const struct perfdata_reader *r)
{
	return &r->stats;
}

/* --- the record stream --------------------------------------------- */

/*
 * Consumes n payload bytes that follow a record outside its size
 * (TRACING_DATA, AUXTRACE).  Copies them to dst unless dst is NULL.
 */
static int pd_take_payload(struct perfdata_reader *r, uint8_t *dst,
			   uint64_t n, uint64_t rec_off)
{
	struct pd_src *s = &r->src;
	size_t avail = pd_src_avail(s);
	size_t first = avail < n ? avail : (size_t)n;
	uint64_t rest = n - first;

	if (r->in_dsrc)
		return err_set(&r->err, ERR_UNSUPPORTED, rec_off,
			       "record with a trailing payload inside "
			       "compressed data");
	if (dst && first)
		memcpy(dst, s->blk->data + s->pos, first);
	s->pos += first;
	if (!rest)
		return 0;
	/* rest comes from the file: in_off + rest must not wrap around */
	if (rest > UINT64_MAX - r->in_off ||
	    (r->data_end != UINT64_MAX && r->data_end - r->in_off < rest))
		goto truncated;
	if (dst) {
		long long got = input_read_at(&r->in, dst + first, (size_t)rest,
					      r->in_off, &r->err);

		if (got < 0)
			return -1;
		if ((uint64_t)got < rest)
			goto truncated;
	} else if (!r->in.seekable) {
		if (input_skip_to(&r->in, r->in_off + rest, &r->err) < 0)
			goto truncated;
	} else if (r->in_off > r->in.size || rest > r->in.size - r->in_off) {
		goto truncated;
	}
	r->in_off += rest;
	/* The block is used up (pos == len): the next fill starts at in_off. */
	s->blk_off = r->in_off - s->pos;
	return 0;
truncated:
	return err_set(&r->err, ERR_TRUNCATED, rec_off,
		       "%llu bytes of payload after this record run past "
		       "the end of the input", (unsigned long long)n);
}

/*
 * Like pd_take_payload() into new memory the caller frees, grown as the
 * bytes arrive: a size field that lies costs an error, not a huge
 * allocation.  Returns NULL with r->err set on failure.
 */
static uint8_t *pd_take_payload_copy(struct perfdata_reader *r, uint64_t n,
				     uint64_t rec_off)
{
	const size_t step = PD_BLOCK_SIZE;
	uint8_t *buf = NULL;
	size_t alloc = 0, have = 0;

	do {
		size_t chunk = n - have < step ? (size_t)(n - have) : step;

		if (mem_grow(&buf, &alloc, 1, have + chunk + 1) < 0) {
			free(buf);
			err_set(&r->err, ERR_NOMEM, ERR_NO_OFF,
				"payload of %llu bytes", (unsigned long long)n);
			return NULL;
		}
		if (pd_take_payload(r, buf + have, chunk, rec_off) < 0) {
			free(buf);
			if (r->err.code == ERR_TRUNCATED)
				err_set(&r->err, ERR_TRUNCATED, rec_off,
					"%llu bytes of payload after this "
					"record run past the end of the input",
					(unsigned long long)n);
			return NULL;
		}
		have += chunk;
	} while (have < n);
	return buf;
}

/*
 * Decompresses more of the COMPRESSED record being read (r->zblk) until
 * dsrc holds need unread bytes or the record has given all it holds (then
 * its block is let go).  Only what the next record needs is decompressed,
 * so dsrc's block never holds more than a record's tail and one step of
 * output, and a bomb of records each read and dropped costs no memory.
 * Returns 0, or -1 with r->err set.
 */
static int pd_inflate(struct perfdata_reader *r, size_t need)
{
	struct pd_src *d = &r->dsrc;

	while (r->zblk && pd_src_avail(d) < need) {
		ZSTD_outBuffer zout;
		size_t ret;

		/*
		 * Appending is safe: queued records never reach past len.
		 * The unread bytes moved are less than one record.
		 */
		if ((!d->blk || d->blk->cap - d->blk->len < 65536) &&
		    pd_src_rebase(r, d, PD_DBLOCK_SIZE + pd_src_avail(d)) < 0)
			return -1;
		zout.dst = d->blk->data + d->blk->len;
		zout.size = d->blk->cap - d->blk->len;
		zout.pos = 0;
		ret = ZSTD_decompressStream(r->zstd, &zout, &r->zin);
		if (ZSTD_isError(ret))
			return err_set(&r->err, ERR_CORRUPT, r->dsrc_file_off,
				       "compressed record: zstd: %s",
				       ZSTD_getErrorName(ret));
		d->blk->len += zout.pos;
		r->stats.compressed_bytes_out += zout.pos;
		r->zout += zout.pos;
		if (r->zout > r->zlimit)
			return err_set(&r->err, ERR_CORRUPT, r->dsrc_file_off,
				       "compressed record decompresses to more "
				       "than %llu bytes",
				       (unsigned long long)r->zlimit);
		if (r->zin.pos == r->zin.size && zout.pos < zout.size) {
			pd_block_put(r, r->zblk);
			r->zblk = NULL;
		}
	}
	return 0;
}

/*
 * Starts reading the records of the COMPRESSED record q, whose zstd data
 * are the len bytes at p, after the tail the record before left.
 */
static int pd_decompress(struct perfdata_reader *r, const struct pd_qent *q,
			 const uint8_t *p, size_t len)
{
	/*
	 * perf decompresses each record into a buffer of the compressed
	 * feature's mmap_len bytes, so no valid record yields more, and
	 * perf writes at most 64 KiB of zstd data per record; one that
	 * yields more than PD_MAX_DECOMPRESSED is a zstd bomb (64 KiB of
	 * zstd data can expand to 2 GiB), whatever mmap_len says.
	 */
	r->zlimit = MIN(MAX((uint64_t)r->info.comp_mmap_len,
			    PD_MIN_DECOMPRESSED), PD_MAX_DECOMPRESSED);
	if (!r->zstd) {
		r->zstd = ZSTD_createDStream();
		if (!r->zstd || ZSTD_isError(ZSTD_initDStream(r->zstd)))
			return err_set(&r->err, ERR_NOMEM, ERR_NO_OFF,
				       "zstd stream");
	}
	r->stats.compressed_bytes_in += len;
	q->blk->refs++;
	r->zblk = q->blk;
	r->zin = (ZSTD_inBuffer){ p, len, 0 };
	r->zout = 0;
	r->in_dsrc = true;
	r->dsrc_file_off = q->file_off;
	return 0;
}

/*
 * Reading records is a chain of dependent loads, each header saying where
 * the next one is, which the hardware cannot run ahead of.  Records of a
 * capture are mostly samples of about the same size, so the headers after
 * the next are likely about size bytes apart: start loading there, for
 * the record after the next and for one far enough ahead to arrive in
 * time when records are only skipped (a worker's share of the others'
 * samples: PD_PREFETCH_AHEAD of 4 cut a reader that drops every sample of
 * the bench's large capture from 11.5-13.4 ms to 10.2-11.3).
 */
#define PD_PREFETCH_AHEAD 4u

static void pd_src_prefetch(const struct pd_src *s, size_t size)
{
	size_t left = s->blk->len - s->pos;

	if (left > size)
		__builtin_prefetch(s->blk->data + s->pos + size);
	if (left > PD_PREFETCH_AHEAD * size)
		__builtin_prefetch(s->blk->data + s->pos +
				   PD_PREFETCH_AHEAD * size);
}

/*
 * Reads the next raw record, in file order, from the decompressed stream
 * or the data section.  Returns 1 with *q filled (its block is not yet
 * referenced), 0 at end of data, -1 on error.
 */
static int pd_read_raw(struct perfdata_reader *r, struct pd_qent *q)
{
	struct pd_src *s;
	struct cur hc;
	uint32_t type;
	uint16_t size16;
	size_t size;
	int rc;

	for (;;) {
		if (r->in_dsrc) {
			s = &r->dsrc;
			if (pd_inflate(r, PD_REC_HEADER_SIZE) < 0)
				return -1;
			if (pd_src_avail(s) >= PD_REC_HEADER_SIZE) {
				hc = cur_make(s->blk->data + s->pos, 8,
					      r->dsrc_file_off, r->info.swap);
				type = cur_u32(&hc);
				(void)cur_u16(&hc);
				size16 = cur_u16(&hc);
				if (size16 < PD_REC_HEADER_SIZE)
					return err_set(&r->err, ERR_CORRUPT,
						       r->dsrc_file_off,
						       "record of size %u inside "
						       "compressed data is "
						       "smaller than its header",
						       size16);
				/*
				 * perf never nests them; decompressing them
				 * again multiplies the ratios of the levels
				 * (a 1 KiB file can ask for 100 GiB).
				 */
				if (type == PD_REC_COMPRESSED ||
				    type == PD_REC_COMPRESSED2)
					return err_set(&r->err, ERR_CORRUPT,
						       r->dsrc_file_off,
						       "%s record inside "
						       "compressed data",
						       perfdata_record_name(
							       type));
				if (pd_inflate(r, size16) < 0)
					return -1;
				if (pd_src_avail(s) >= size16) {
					q->blk = s->blk;
					q->rec = s->blk->data + s->pos;
					q->len = size16;
					q->file_off = r->dsrc_file_off;
					q->compressed = true;
					s->pos += size16;
					return 1;
				}
			}
			r->in_dsrc = false;
		}
		s = &r->src;
		if (r->visit) {
			rc = pd_visit_next(r);
			if (rc <= 0)
				return rc;
			if (rc == 2) {
				pd_visit_round(r, q);
				return 1;
			}
		}
		rc = pd_src_fill(r, PD_REC_HEADER_SIZE, &r->in_off);
		if (rc <= 0)
			return rc;
		hc = cur_make(s->blk->data + s->pos, 8, s->blk_off + s->pos,
			      r->info.swap);
		type = cur_u32(&hc);
		(void)cur_u16(&hc);
		size16 = cur_u16(&hc);
		size = size16;
		if (type == PD_REC_COMPRESSED2) {
			/* header.size can be wrong (u16 overflow in 6.16+). */
			uint64_t dsize;
			struct cur dc;

			rc = pd_src_fill(r, 16, &r->in_off);
			if (rc <= 0)
				return rc < 0 ? -1 :
				       err_set(&r->err, ERR_TRUNCATED,
					       s->blk_off + s->pos,
					       "COMPRESSED2 record is cut");
			dc = cur_make(s->blk->data + s->pos + 8, 8,
				      s->blk_off + s->pos + 8, r->info.swap);
			dsize = cur_u64(&dc);
			if (dsize > 65536)
				return err_set(&r->err, ERR_CORRUPT,
					       s->blk_off + s->pos + 8,
					       "COMPRESSED2 data_size %llu is "
					       "larger than a record can be",
					       (unsigned long long)dsize);
			if (ALIGN_UP(16 + dsize, 8) <= size16)
				size = size16;
			else
				size = (size_t)(16 + dsize);
		}
		if (size < PD_REC_HEADER_SIZE)
			return err_set(&r->err, ERR_CORRUPT,
				       s->blk_off + s->pos,
				       "record size %zu is smaller than its "
				       "8-byte header", size);
		rc = pd_src_fill(r, size, &r->in_off);
		if (rc < 0)
			return -1;
		if (rc == 0)
			return err_set(&r->err, ERR_TRUNCATED,
				       s->blk_off + s->pos,
				       "data ends inside a record");
		q->blk = s->blk;
		q->rec = s->blk->data + s->pos;
		q->len = (uint32_t)size;
		q->file_off = s->blk_off + s->pos;
		q->compressed = false;
		s->pos += size;
		pd_src_prefetch(s, size);
		return 1;
	}
}

/* Handles records perf itself writes, before they are delivered. */
static int pd_handle_user_record(struct perfdata_reader *r,
				 struct pd_qent *q, uint32_t type)
{
	struct cur c = cur_make(q->rec + 8, q->len - 8, q->file_off + 8,
				r->info.swap);

	switch (type) {
	case PD_REC_HEADER_ATTR: {
		uint64_t off = cur_off(&c);
		struct cur sc = c;
		uint32_t asize;
		unsigned idx = r->info.nr_attrs;

		cur_skip(&sc, 4);
		asize = cur_u32(&sc);
		if (asize == 0)
			asize = PD_ATTR_VER0_SIZE;
		if (sc.short_read || asize > cur_left(&c))
			return err_set(&r->err, ERR_CORRUPT, off,
				       "HEADER_ATTR: attr.size %u exceeds the "
				       "record", asize);
		if (pd_attr_add(r, &c, asize, "HEADER_ATTR") < 0)
			return -1;
		while (cur_left(&c) >= 8)
			if (pd_id_add(r, cur_u64(&c), idx) < 0)
				return -1;
		return 0;
	}
	case PD_REC_HEADER_FEATURE: {
		uint64_t id = cur_u64(&c);

		if (c.short_read)
			return err_set(&r->err, ERR_TRUNCATED, q->file_off,
				       "HEADER_FEATURE record is too short");
		if (cur_left(&c) == 0) {
			/* The writer's HEADER_LAST_FEATURE sentinel. */
			r->saw_last_feature = true;
			return 0;
		}
		if (id < PERFDATA_FEAT_MAX)
			r->info.features[id / 64] |= 1ull << (id % 64);
		if (id > PD_FEAT_KNOWN_MAX)
			return 0;
		return pd_feature_parse(r, (unsigned)id, &c);
	}
	case PD_REC_HEADER_TRACING_DATA: {
		uint32_t size = cur_u32(&c);
		uint8_t *copy;

		if (c.short_read)
			return err_set(&r->err, ERR_TRUNCATED, q->file_off,
				       "TRACING_DATA record is too short");
		copy = pd_take_payload_copy(r, size, q->file_off);
		if (!copy)
			return -1;
		pd_tracepoint_reset(r);
		free(r->tracing_data);
		r->tracing_data = copy;
		r->info.tracing_data = copy;
		r->info.tracing_data_size = size;
		r->info.features[0] |= 1ull << PD_FEAT_TRACING_DATA;
		return pd_tracepoint_names(r);
	}
	case PD_REC_AUXTRACE: {
		uint64_t size = cur_u64(&c);

		if (c.short_read)
			return err_set(&r->err, ERR_TRUNCATED, q->file_off,
				       "AUXTRACE record is too short");
		return pd_take_payload(r, NULL, size, q->file_off);
	}
	case PD_REC_FINISHED_ROUND:
		pd_queue_round(&r->q);
		r->stats.rounds++;
		return 0;
	case PD_REC_EVENT_UPDATE: {
		uint64_t utype = cur_u64(&c), id = cur_u64(&c);
		unsigned idx;
		const char *name;

		if (c.short_read || utype != 2 || pd_attr_by_id(r, id, &idx))
			return 0;
		name = cur_fixed_str(&c, cur_left(&c));
		if (name)
			return pd_attr_set_name(r, idx, name);
		return 0;
	}
	case PD_REC_COMPRESSED:
		return pd_decompress(r, q, q->rec + 8, q->len - 8);
	case PD_REC_COMPRESSED2: {
		uint64_t dsize = cur_u64(&c);

		if (c.short_read || dsize > cur_left(&c))
			return err_set(&r->err, ERR_CORRUPT, q->file_off,
				       "COMPRESSED2 data_size %llu exceeds the "
				       "record", (unsigned long long)dsize);
		return pd_decompress(r, q, c.p, (size_t)dsize);
	}
	default:
		return 0;
	}
}

void *perfdata_hold(struct perfdata_reader *r)
{
	if (!r->cur_held)
		return NULL;
	r->cur.blk->refs++;
	return r->cur.blk;
}

void perfdata_release(struct perfdata_reader *r, void *token)
{
	pd_block_put(r, token);
}

static void pd_hold(struct perfdata_reader *r, const struct pd_qent *q)
{
	r->cur = *q;
	r->cur.blk->refs++;
	r->cur_held = true;
}

static int pd_deliver(struct perfdata_reader *r, const struct pd_qent *q,
		      uint64_t order, struct event *ev)
{
	struct perfdata_stats *st = &r->stats;

	if (pd_decode_event(r, q, ev) < 0)
		return -1;
	ev->order = order;
	if (ev->time != EVENT_NO_TIME && q->time != EVENT_NO_TIME) {
		if (ev->time < r->q.last_delivered)
			st->out_of_order++;
		else
			r->q.last_delivered = ev->time;
	}
	if (ev->type == EVENT_SAMPLE && ev->attr) {
		if (ev->time != EVENT_NO_TIME) {
			st->time_min = MIN(st->time_min, ev->time);
			st->time_max = MAX(st->time_max, ev->time);
		}
		if (!st->samples_by_attr ||
		    ev->attr->index >= r->samples_alloc) {
			size_t alloc = r->samples_alloc;

			if (mem_grow(&st->samples_by_attr, &alloc,
				     sizeof(uint64_t), r->info.nr_attrs) < 0)
				return err_set(&r->err, ERR_NOMEM, ERR_NO_OFF,
					       "sample counts");
			r->samples_alloc = alloc;
		}
		st->samples_by_attr[ev->attr->index]++;
	}
	if (ev->type == EVENT_MMAP && ev->mmap.build_id_size &&
	    pd_build_id_add(r, ev->pid, ev->mmap.cpumode, ev->mmap.build_id,
			    ev->mmap.build_id_size, ev->mmap.filename,
			    true) < 0)
		return -1;
	if (ev->type == EVENT_LOST) {
		if (ev->lost.samples)
			st->lost_samples += ev->lost.lost;
		else
			st->lost_records += ev->lost.lost;
	}
	return 1;
}

void perfdata_set_sample_filter(struct perfdata_reader *r,
				sample_filter_fn fn, void *ctx,
				enum sample_filter_when when)
{
	r->filter = fn;
	r->filter_ctx = ctx;
	r->filter_as_read = when == SAMPLE_FILTER_READ;
	r->judged = false;
}

/*
 * SAMPLE_FILTER_READ: whether the filter keeps q, just read; queued: it
 * goes to the ordering queue, so the filter may put its answer off until
 * q is delivered (q->ask_again).
 */
static bool pd_filter_keeps_read(struct perfdata_reader *r,
				 struct pd_qent *q, bool queued)
{
	struct sample_key k;
	enum sample_verdict v;

	if (!r->filter_as_read || !r->filter || !pd_sample_key(r, q, &k))
		return true;
	k.order = r->order;
	k.as_read = queued;
	v = r->filter(r->filter_ctx, &k);
	q->ask_again = queued && v == SAMPLE_ASK_AGAIN;
	return v != SAMPLE_DROP;
}

/*
 * Whether the filter keeps q, the queue's next record, ready to be
 * delivered (so its order is r->order): asked here with
 * SAMPLE_FILTER_DELIVERED, and for the samples a SAMPLE_FILTER_READ filter
 * put off.  Asks once per record: the record after the one delivered is
 * asked about in advance (see perfdata_next()).
 */
static bool pd_filter_keeps(struct perfdata_reader *r, const struct pd_qent *q)
{
	struct sample_key k;

	if (!r->filter || (r->filter_as_read && !q->ask_again) ||
	    !pd_sample_key(r, q, &k))
		return true;
	if (r->judged && r->judged_seq == q->seq)
		return r->judged_keep;
	k.order = r->order;
	k.as_read = false;
	r->judged = true;
	r->judged_seq = q->seq;
	r->judged_keep = r->filter(r->filter_ctx, &k) != SAMPLE_DROP;
	return r->judged_keep;
}

/*
 * Takes the samples the filter does not want off the head of the queue
 * while they are ready to go; returns the ready record left at the head,
 * or NULL.
 */
static const struct pd_qent *pd_drop_unwanted(struct perfdata_reader *r)
{
	const struct pd_qent *next;
	struct pd_qent q;

	while ((next = pd_queue_peek_ready(&r->q)) &&
	       !pd_filter_keeps(r, next)) {
		(void)pd_queue_pop_ready(&r->q, &q);
		r->order++;
		pd_block_put(r, q.blk);
	}
	return next;
}

int perfdata_next(struct perfdata_reader *r, struct event *ev)
{
	struct pd_qent q;
	int rc;

	if (r->cur_held) {
		pd_block_put(r, r->cur.blk);
		r->cur_held = false;
	}
	for (;;) {
		const struct pd_qent *next;
		uint32_t type;
		struct cur hc;
		bool queued;

		(void)pd_drop_unwanted(r);
		if (pd_queue_pop_ready(&r->q, &q)) {
			uint64_t order = r->order++;

			/*
			 * Drop the samples the filter does not want right
			 * behind it too, so that the next record, read while
			 * the caller works, is one to be delivered.
			 */
			next = pd_drop_unwanted(r);
			if (!next)
				next = pd_queue_peek(&r->q);
			if (next)
				pd_prefetch_record(r, next);
			if (!r->q.draining && q.time > r->q.flush_limit)
				r->stats.forced_flushes++;
			r->cur = q;
			r->cur_held = true; /* the queue's reference */
			return pd_deliver(r, &q, order, ev);
		}
		if (r->src_done)
			return 0;
		rc = pd_read_raw(r, &q);
		if (rc < 0)
			return -1;
		if (rc == 0) {
			if (r->in_dsrc || pd_src_avail(&r->dsrc))
				return err_set(&r->err, ERR_TRUNCATED,
					       r->dsrc_file_off,
					       "compressed data ends inside a "
					       "record");
			r->src_done = true;
			r->q.draining = true;
			continue;
		}
		hc = cur_make(q.rec, 4, q.file_off, r->info.swap);
		type = cur_u32(&hc);
		if (type < ARRAY_SIZE(r->stats.records))
			r->stats.records[type]++;
		if (!perfdata_record_name(type)) {
			r->stats.unknown_records++;
			r->stats.unknown_bytes += q.len;
		}
		r->stats.ends_with_round = type == PD_REC_FINISHED_ROUND;
		q.seq = r->seq++;
		q.time = EVENT_NO_TIME;
		q.type = type <= UINT8_MAX ? (uint8_t)type : 0;
		q.attr = PD_QENT_NO_ATTR;
		q.has_key = false;
		q.ask_again = false;
		if (r->visit && (type == PD_REC_COMPRESSED ||
				 type == PD_REC_COMPRESSED2))
			return err_set(&r->err, ERR_CORRUPT, q.file_off,
				       "compressed data where the index had "
				       "none (did the file change?)");
		if (r->indexing)
			pd_index_note(r, &q, type);

		if (type > PD_REC_KERNEL_MAX) {
			if (pd_handle_user_record(r, &q, type) < 0)
				return -1;
			pd_hold(r, &q);
			if (pd_decode_event(r, &q, ev) < 0)
				return -1;
			ev->order = r->order++;
			if (type == PD_REC_HEADER_BUILD_ID) {
				struct cur bc = cur_make(q.rec, q.len,
							 q.file_off,
							 r->info.swap);

				ev->type = EVENT_BUILD_ID;
				if (pd_build_id_record(r, &bc, &ev->build_id) <
				    0)
					return -1;
			}
			return 1;
		}
		if (type == 0)
			goto immediate;
		if (pd_record_time(r, &q) < 0)
			return -1;
		queued = !r->opts.file_order && q.time != EVENT_NO_TIME;
		if (!pd_filter_keeps_read(r, &q, queued)) {
			if (queued)
				pd_queue_pass(&r->q, &q);
			r->order++;
			continue;
		}
		if (!queued) {
			/* its place among the queued ones is the reading's */
			r->index_bad |= !r->opts.file_order;
			goto immediate;
		}
		q.blk->refs++;
		if (pd_queue_push(&r->q, &q) < 0) {
			pd_block_put(r, q.blk);
			return err_set(&r->err, ERR_NOMEM, ERR_NO_OFF,
				       "ordering queue");
		}
		if (r->q.bytes > r->stats.queue_peak_bytes)
			r->stats.queue_peak_bytes = r->q.bytes;
		continue;
immediate:
		if (!pd_filter_keeps(r, &q)) {
			r->order++;
			continue;
		}
		pd_hold(r, &q);
		return pd_deliver(r, &q, r->order++, ev);
	}
}
