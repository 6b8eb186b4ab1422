/*
 * perfdata_sample.c - decode kernel records, PERF_RECORD_SAMPLE bodies and
 * sample_id trailers into struct event.
 *
 * Sample field order follows perf_output_sample() in kernel/events/core.c
 * (not the bit order: CGROUP and the page sizes come before AUX).
 */
#include <stddef.h>
#include <string.h>

#include "formats/perfdata_internal.h"

#include "common/mem.h"

unsigned pd_sample_id_trailer_size(uint64_t st)
{
	unsigned n = 0;

	n += !!(st & PD_SAMPLE_TID);
	n += !!(st & PD_SAMPLE_TIME);
	n += !!(st & PD_SAMPLE_ID);
	n += !!(st & PD_SAMPLE_STREAM_ID);
	n += !!(st & PD_SAMPLE_CPU);
	n += !!(st & PD_SAMPLE_IDENTIFIER);
	return n * 8;
}

static bool pd_is_kernel_record(uint32_t type)
{
	return type >= 1 && type <= PD_REC_KERNEL_MAX;
}

/*
 * Finds the attr a kernel record belongs to.  rec spans the whole record
 * body (after the 8-byte header).
 */
int pd_record_attr(struct perfdata_reader *r, struct cur *rec, uint32_t type,
		   unsigned *attr)
{
	const struct event_attr *first;
	struct cur c = *rec;
	uint64_t id;

	*attr = 0;
	if (r->info.nr_attrs == 0)
		return err_set(&r->err, ERR_CORRUPT, cur_off(rec) - 8,
			       "record before any event attribute");
	if (r->info.nr_attrs == 1)
		return 0;
	first = &r->info.attrs[0];
	if (type == PD_REC_SAMPLE) {
		if (r->sample_id_pos < 0)
			return 0;
		cur_skip(&c, (size_t)r->sample_id_pos * 8);
	} else {
		if (!first->sample_id_all || r->trailer_id_pos < 0)
			return 0;
		if (cur_left(&c) < (size_t)(r->trailer_id_pos + 1) * 8)
			return err_set(&r->err, ERR_CORRUPT, cur_off(rec) - 8,
				       "%s record of %zu bytes has no room "
				       "for its sample_id",
				       perfdata_record_name(type),
				       cur_left(&c) + 8);
		cur_skip(&c, cur_left(&c) - (size_t)(r->trailer_id_pos + 1) * 8);
	}
	id = cur_u64(&c);
	if (c.short_read)
		return err_set(&r->err, ERR_TRUNCATED, cur_off(rec) - 8,
			       "%s record too short for its event id",
			       perfdata_record_name(type));
	/* Synthesized records use id 0, meaning the first event. */
	if (id == 0 && type != PD_REC_SAMPLE)
		return 0;
	if (pd_attr_by_id(r, id, attr) < 0)
		return err_set(&r->err, ERR_CORRUPT, cur_off(rec) - 8,
			       "%s record: event id %llu matches no event",
			       perfdata_record_name(type),
			       (unsigned long long)id);
	return 0;
}

struct pd_trailer {
	int32_t pid, tid;
	uint64_t time, id, stream_id;
	int32_t cpu;
	bool has_tid, has_time, has_id, has_cpu;
};

/*
 * Parses the sample_id trailer from the end of body and shortens body so
 * that it covers the record's own fields only.
 */
static int pd_parse_trailer(struct perfdata_reader *r,
			    const struct event_attr *a, struct cur *body,
			    uint32_t type, struct pd_trailer *t)
{
	uint64_t st = a->sample_type;
	unsigned size = pd_sample_id_trailer_size(st);
	struct cur c;

	memset(t, 0, sizeof(*t));
	t->pid = t->tid = -1;
	t->cpu = -1;
	t->time = EVENT_NO_TIME;
	if (!a->sample_id_all || size == 0)
		return 0;
	if (cur_left(body) < size)
		return err_set(&r->err, ERR_CORRUPT, body->file_off - 8,
			       "%s record of %zu bytes is shorter than its "
			       "%u-byte sample_id trailer",
			       perfdata_record_name(type), cur_left(body) + 8,
			       size);
	body->end -= size;
	c = cur_make(body->end, size, body->file_off + (uint64_t)(body->end - body->start), body->swap);
	if (st & PD_SAMPLE_TID) {
		t->pid = (int32_t)cur_u32(&c);
		t->tid = (int32_t)cur_u32(&c);
		t->has_tid = true;
	}
	if (st & PD_SAMPLE_TIME) {
		t->time = cur_u64(&c);
		t->has_time = true;
	}
	if (st & PD_SAMPLE_ID) {
		t->id = cur_u64(&c);
		t->has_id = true;
	}
	if (st & PD_SAMPLE_STREAM_ID)
		t->stream_id = cur_u64(&c);
	if (st & PD_SAMPLE_CPU) {
		t->cpu = (int32_t)cur_u32(&c);
		(void)cur_u32(&c);
		t->has_cpu = true;
	}
	if (st & PD_SAMPLE_IDENTIFIER) {
		t->id = cur_u64(&c);
		t->has_id = true;
	}
	return 0;
}

int pd_record_time(struct perfdata_reader *r, struct pd_qent *q)
{
	struct cur body = cur_make(q->rec + 8, q->len - 8, q->file_off + 8,
				   r->info.swap);
	struct cur hc = cur_make(q->rec, 8, q->file_off, r->info.swap);
	uint32_t type = cur_u32(&hc);
	const struct event_attr *a;
	unsigned idx;
	uint64_t st;

	q->time = EVENT_NO_TIME;
	q->attr = PD_QENT_NO_ATTR;
	q->has_key = false;
	if (!pd_is_kernel_record(type))
		return 0;
	if (pd_record_attr(r, &body, type, &idx) < 0)
		return -1;
	a = &r->info.attrs[idx];
	st = a->sample_type;
	if (idx < PD_QENT_NO_ATTR)
		q->attr = (uint16_t)idx;
	if (type == PD_REC_SAMPLE) {
		/* what a sample filter is told (pd_sample_key()) */
		cur_skip(&body, 8 * (!!(st & PD_SAMPLE_IDENTIFIER) +
				     !!(st & PD_SAMPLE_IP)));
		q->pid = q->tid = -1;
		if (st & PD_SAMPLE_TID) {
			q->pid = (int32_t)cur_u32(&body);
			q->tid = (int32_t)cur_u32(&body);
		}
		q->has_key = !body.short_read && idx < PD_QENT_NO_ATTR;
		if (!(st & PD_SAMPLE_TIME))
			return 0;
		q->time = cur_u64(&body);
		if (body.short_read)
			return err_set(&r->err, ERR_TRUNCATED, q->file_off,
				       "SAMPLE record of %u bytes too short "
				       "for its time field", q->len);
	} else if (st & PD_SAMPLE_TIME) {
		struct pd_trailer t;

		if (pd_parse_trailer(r, a, &body, type, &t) < 0)
			return -1;
		q->time = t.time;
	}
	return 0;
}

bool pd_sample_key(struct perfdata_reader *r, const struct pd_qent *q,
		   struct sample_key *k)
{
	if (q->type != PD_REC_SAMPLE || !q->has_key ||
	    q->attr >= r->info.nr_attrs)
		return false;
	k->attr = q->attr;
	k->pid = q->pid;
	k->tid = q->tid;
	return true;
}

/* Lines of a sample's user stack copy worth loading ahead. */
#define PD_PREFETCH_STACK_LINES 8

/*
 * The counts of a's sample layout, cached for the last attr asked about
 * (popcount is a library call on baseline x86-64).
 */
static const struct pd_layout *pd_layout(struct perfdata_reader *r,
					 unsigned idx)
{
	const uint64_t after_stack = PD_SAMPLE_WEIGHT | PD_SAMPLE_DATA_SRC |
				     PD_SAMPLE_TRANSACTION |
				     PD_SAMPLE_PHYS_ADDR | PD_SAMPLE_CGROUP |
				     PD_SAMPLE_DATA_PAGE_SIZE |
				     PD_SAMPLE_CODE_PAGE_SIZE;
	const struct event_attr *a = &r->info.attrs[idx];
	struct pd_layout *l = &r->layout;
	uint64_t st = a->sample_type;

	if (l->attr == idx)
		return l;
	l->attr = idx;
	l->nr_regs_user = (unsigned)__builtin_popcountll(a->sample_regs_user);
	l->nr_regs_intr = (unsigned)__builtin_popcountll(a->sample_regs_intr);
	/* from the end: dyn_size and the fields after it */
	l->tail = 0;
	if ((st & PD_SAMPLE_STACK_USER) &&
	    !(st & (PD_SAMPLE_REGS_INTR | PD_SAMPLE_AUX))) {
		l->tail = 8 * (size_t)__builtin_popcountll(st & after_stack) +
			  8;
		if (st & PD_SAMPLE_WEIGHT_STRUCT && !(st & PD_SAMPLE_WEIGHT))
			l->tail += 8;
	}
	/* before the stack copy: its size, the registers and their abi */
	l->head = 8;
	if (st & PD_SAMPLE_REGS_USER)
		l->head += 8 * ((size_t)l->nr_regs_user + 1);
	return l;
}

void pd_prefetch_record(struct perfdata_reader *r, const struct pd_qent *q)
{
	const uint8_t *p = q->rec;
	const struct pd_layout *l;
	size_t len = q->len, dyn, stack, o, ssize;
	unsigned i;

	__builtin_prefetch(p);
	__builtin_prefetch(p + len - 1);
	if (q->type != PD_REC_SAMPLE || q->attr >= r->info.nr_attrs)
		return;
	if (len > 64)
		__builtin_prefetch(p + 64);   /* the callchain */
	l = pd_layout(r, q->attr);
	/*
	 * The stack copy is as large as the attr asks unless the kernel cut
	 * it: then these are only useless loads.
	 */
	ssize = r->info.attrs[q->attr].sample_stack_user;
	if (!l->tail || l->tail + ssize + l->head > len)
		return;
	dyn = len - l->tail;
	stack = dyn - ssize;
	__builtin_prefetch(p + dyn);
	__builtin_prefetch(p + stack - 1);
	/*
	 * Registers and stack: for this thread's unwinder.  With workers
	 * (a mapper too) another core reads them: fetching them here would
	 * only make that core get them from this one.
	 */
	if (r->mapper) {
		__builtin_prefetch(p + stack - l->head);
		return;
	}
	for (o = stack - l->head; o < stack; o += 64)
		__builtin_prefetch(p + o);
	for (i = 0; i < PD_PREFETCH_STACK_LINES && i * 64 < ssize; i++)
		__builtin_prefetch(p + stack + i * 64);
}

/* Takes n u64 slots from the event's scratch array. */
static uint64_t *pd_scratch(struct perfdata_reader *r, size_t n)
{
	uint64_t *p;

	if (n > r->scratch_alloc - r->scratch_used)
		return NULL;
	p = r->scratch_u64 + r->scratch_used;
	r->scratch_used += n;
	return p;
}

/*
 * A stack copy of the other byte order, as perf reads it: swapped as
 * 64-bit words (the whole sample is, RAW data aside), so that the words
 * the unwinder loads are the target's values; in the event's scratch.
 * NULL when it does not fit (the scratch holds a record's length).
 */
static const uint8_t *pd_swap_words(struct perfdata_reader *r,
				    const uint8_t *p, size_t size)
{
	uint64_t *out = pd_scratch(r, size / 8 + 1);
	size_t i;

	if (!out)
		return NULL;
	memcpy(out, p, size);
	for (i = 0; i < size / 8; i++)
		out[i] = bswap_64(out[i]);
	return (const uint8_t *)out;
}

/* Reads a register block of n registers (the popcount of its mask). */
static int pd_read_regs(struct perfdata_reader *r, struct cur *c,
			unsigned n, uint64_t *abi, const uint64_t **regs,
			unsigned *nr, const char *what)
{
	uint64_t *out;
	unsigned i;

	*abi = cur_u64(c);
	*regs = NULL;
	*nr = 0;
	if (c->short_read || *abi == 0)
		return 0;
	if (n > cur_left(c) / 8)
		return err_set(&r->err, ERR_CORRUPT, cur_off(c),
			       "%s: %u registers do not fit in the record",
			       what, n);
	if (!c->swap && (uintptr_t)c->p % 8 == 0) {
		/* in place: the record outlives the event */
		*regs = (const uint64_t *)cur_bytes(c, (size_t)n * 8);
		*nr = n;
		return 0;
	}
	out = pd_scratch(r, n);
	if (!out)
		return err_set(&r->err, ERR_CORRUPT, cur_off(c),
			       "%s: register block exceeds the record", what);
	/* n * 8 bytes are there (checked above): one copy, then swap */
	memcpy(out, cur_bytes(c, (size_t)n * 8), (size_t)n * 8);
	if (c->swap)
		for (i = 0; i < n; i++)
			out[i] = bswap_64(out[i]);
	*regs = out;
	*nr = n;
	return 0;
}

static int pd_read_read_values(struct perfdata_reader *r, struct cur *c,
			       const struct event_attr *a,
			       struct event_sample *s)
{
	uint64_t rf = a->read_format, nr = 1, per, total, i;
	uint64_t *out;

	per = 1 + !!(rf & PD_READ_ID) + !!(rf & PD_READ_LOST);
	if (rf & PD_READ_GROUP) {
		nr = cur_u64(c);
		if (c->short_read)
			return 0;
		total = 1 + !!(rf & PD_READ_TOTAL_TIME_ENABLED) +
			!!(rf & PD_READ_TOTAL_TIME_RUNNING);
		if (nr > cur_left(c) / 8 / per)
			return err_set(&r->err, ERR_CORRUPT, cur_off(c) - 8,
				       "read group of %llu entries exceeds the "
				       "record", (unsigned long long)nr);
		total += nr * per;
		c->p -= 8;  /* store nr as the first value */
	} else {
		total = per + !!(rf & PD_READ_TOTAL_TIME_ENABLED) +
			!!(rf & PD_READ_TOTAL_TIME_RUNNING);
	}
	out = pd_scratch(r, total);
	if (!out)
		return err_set(&r->err, ERR_CORRUPT, cur_off(c),
			       "read values exceed the record");
	for (i = 0; i < total; i++)
		out[i] = cur_u64(c);
	s->read_values = out;
	s->read_nr = (unsigned)total;
	return 0;
}

static int pd_decode_sample(struct perfdata_reader *r,
			    const struct event_attr *a, struct cur *c,
			    struct event *ev)
{
	struct event_sample *s = &ev->sample;
	uint64_t st = a->sample_type;
	uint64_t off0 = c->file_off - 8;

	/* the only clearing of the event's union (see pd_decode_event) */
	memset(s, 0, sizeof(*s));
	s->cpumode = ev->misc & PD_MISC_CPUMODE_MASK;
	s->exact_ip = ev->misc & PD_MISC_EXACT_IP;
	if (st & PD_SAMPLE_IDENTIFIER)
		s->id = cur_u64(c);
	if (st & PD_SAMPLE_IP)
		s->ip = cur_u64(c);
	if (st & PD_SAMPLE_TID) {
		ev->pid = (int32_t)cur_u32(c);
		ev->tid = (int32_t)cur_u32(c);
	}
	if (st & PD_SAMPLE_TIME)
		ev->time = cur_u64(c);
	if (st & PD_SAMPLE_ADDR)
		s->addr = cur_u64(c);
	if (st & PD_SAMPLE_ID)
		s->id = cur_u64(c);
	if (st & PD_SAMPLE_STREAM_ID)
		s->stream_id = cur_u64(c);
	if (st & PD_SAMPLE_CPU) {
		ev->cpu = (int32_t)cur_u32(c);
		(void)cur_u32(c);
	}
	if (st & PD_SAMPLE_PERIOD)
		s->period = cur_u64(c);
	else if (!a->freq)
		s->period = a->sample_period;   /* fixed (-c): as perf says */
	if ((st & PD_SAMPLE_READ) && pd_read_read_values(r, c, a, s) < 0)
		return -1;
	if (st & PD_SAMPLE_CALLCHAIN) {
		uint64_t nr = cur_u64(c), i;
		uint64_t *out;

		if (!c->short_read && nr > cur_left(c) / 8)
			return err_set(&r->err, ERR_CORRUPT, cur_off(c) - 8,
				       "callchain of %llu entries exceeds the "
				       "%zu bytes left in the record",
				       (unsigned long long)nr, cur_left(c));
		if (!c->short_read && !c->swap && (uintptr_t)c->p % 8 == 0) {
			/* in place: the record outlives the event */
			s->callchain = (const uint64_t *)cur_bytes(
				c, (size_t)nr * 8);
			s->callchain_nr = nr;
		} else if (!c->short_read) {
			out = pd_scratch(r, (size_t)nr);
			if (!out)
				return err_set(&r->err, ERR_CORRUPT,
					       cur_off(c), "callchain too long");
			for (i = 0; i < nr; i++)
				out[i] = cur_u64(c);
			s->callchain = out;
			s->callchain_nr = nr;
		}
	}
	if (st & PD_SAMPLE_RAW) {
		uint32_t size = cur_u32(c);

		if (!c->short_read && size > cur_left(c))
			return err_set(&r->err, ERR_CORRUPT, cur_off(c) - 4,
				       "raw data of %u bytes exceeds the %zu "
				       "bytes left in the record",
				       size, cur_left(c));
		s->raw = cur_bytes(c, size);
		s->raw_size = s->raw ? size : 0;
	}
	if (st & PD_SAMPLE_BRANCH_STACK) {
		uint64_t nr = cur_u64(c), i, per = 3;

		if (a->branch_sample_type & PD_BRANCH_HW_INDEX) {
			s->branch_hw_idx = cur_u64(c);
			s->has_branch_hw_idx = true;
		}
		if (a->branch_sample_type & PD_BRANCH_COUNTERS)
			per = 4;
		if (!c->short_read && nr > cur_left(c) / 8 / per)
			return err_set(&r->err, ERR_CORRUPT, cur_off(c),
				       "branch stack of %llu entries exceeds "
				       "the record", (unsigned long long)nr);
		if (!c->short_read && nr) {
			if (mem_grow(&r->branches, &r->branches_alloc,
				     sizeof(*r->branches), (size_t)nr) < 0)
				return err_set(&r->err, ERR_NOMEM, ERR_NO_OFF,
					       "branch stack");
			for (i = 0; i < nr; i++) {
				r->branches[i].from = cur_u64(c);
				r->branches[i].to = cur_u64(c);
				r->branches[i].flags = cur_u64(c);
			}
			if (per == 4)
				cur_skip(c, (size_t)nr * 8);
			s->branches = r->branches;
			s->branch_nr = nr;
		}
	}
	if ((st & PD_SAMPLE_REGS_USER) &&
	    pd_read_regs(r, c, pd_layout(r, a->index)->nr_regs_user,
			 &s->regs_user_abi,
			 &s->regs_user, &s->regs_user_nr, "user registers") < 0)
		return -1;
	s->regs_user_mask = s->regs_user_abi ? a->sample_regs_user : 0;
	if (st & PD_SAMPLE_STACK_USER) {
		uint64_t size = cur_u64(c);

		if (!c->short_read && size) {
			if (size > cur_left(c))
				return err_set(&r->err, ERR_CORRUPT,
					       cur_off(c) - 8,
					       "user stack of %llu bytes exceeds "
					       "the %zu bytes left in the record",
					       (unsigned long long)size,
					       cur_left(c));
			s->stack = cur_bytes(c, (size_t)size);
			if (c->swap && s->stack &&
			    !(s->stack = pd_swap_words(r, s->stack,
						       (size_t)size)))
				return err_set(&r->err, ERR_CORRUPT,
					       cur_off(c) - size,
					       "user stack exceeds the record");
			s->stack_size = size;
			s->stack_dyn_size = cur_u64(c);
			if (!c->short_read && s->stack_dyn_size > size)
				return err_set(&r->err, ERR_CORRUPT,
					       cur_off(c) - 8,
					       "user stack dyn_size %llu is "
					       "larger than its size %llu",
					       (unsigned long long)
						       s->stack_dyn_size,
					       (unsigned long long)size);
		}
	}
	if (st & (PD_SAMPLE_WEIGHT | PD_SAMPLE_WEIGHT_STRUCT))
		s->weight = cur_u64(c);
	if (st & PD_SAMPLE_DATA_SRC)
		s->data_src = cur_u64(c);
	if (st & PD_SAMPLE_TRANSACTION)
		s->transaction = cur_u64(c);
	if ((st & PD_SAMPLE_REGS_INTR) &&
	    pd_read_regs(r, c, pd_layout(r, a->index)->nr_regs_intr,
			 &s->regs_intr_abi,
			 &s->regs_intr, &s->regs_intr_nr,
			 "interrupt registers") < 0)
		return -1;
	s->regs_intr_mask = s->regs_intr_abi ? a->sample_regs_intr : 0;
	if (st & PD_SAMPLE_PHYS_ADDR)
		s->phys_addr = cur_u64(c);
	if (st & PD_SAMPLE_CGROUP)
		s->cgroup = cur_u64(c);
	if (st & PD_SAMPLE_DATA_PAGE_SIZE)
		s->data_page_size = cur_u64(c);
	if (st & PD_SAMPLE_CODE_PAGE_SIZE)
		s->code_page_size = cur_u64(c);
	if (st & PD_SAMPLE_AUX) {
		uint64_t size = cur_u64(c);

		if (!c->short_read && size > cur_left(c))
			return err_set(&r->err, ERR_CORRUPT, cur_off(c) - 8,
				       "aux data of %llu bytes exceeds the "
				       "record", (unsigned long long)size);
		cur_skip(c, (size_t)size);
		s->aux_size = size;
	}
	if (c->short_read)
		return err_set(&r->err, ERR_TRUNCATED, off0,
			       "SAMPLE record of %u bytes is too short for "
			       "sample_type 0x%llx",
			       (unsigned)ev->raw_len,
			       (unsigned long long)st);
	ev->id = s->id;
	return 0;
}

static int pd_string(struct perfdata_reader *r, struct cur *c,
		     const char **out, uint32_t type, const char *what)
{
	*out = cur_cstr(c);
	if (!*out)
		return err_set(&r->err, ERR_CORRUPT, c->file_off - 8,
			       "%s record: %s is not NUL-terminated",
			       perfdata_record_name(type), what);
	return 0;
}

static int pd_decode_mmap(struct perfdata_reader *r, struct cur *c,
			  struct event *ev, uint32_t type)
{
	struct event_mmap *m = &ev->mmap;

	/* the union is clear (pd_decode_event) */
	ev->pid = (int32_t)cur_u32(c);
	ev->tid = (int32_t)cur_u32(c);
	m->start = cur_u64(c);
	m->len = cur_u64(c);
	m->pgoff = cur_u64(c);
	m->cpumode = ev->misc & PD_MISC_CPUMODE_MASK;
	m->executable = !(ev->misc & PD_MISC_MMAP_DATA);
	if (type == PD_REC_MMAP2) {
		m->is_mmap2 = true;
		if (ev->misc & PD_MISC_MMAP_BUILD_ID) {
			const uint8_t *bid;

			m->build_id_size = cur_u8(c);
			cur_skip(c, 3);
			bid = cur_bytes(c, 20);
			if (bid)
				memcpy(m->build_id, bid, 20);
			if (m->build_id_size > 20)
				return err_set(&r->err, ERR_CORRUPT,
					       c->file_off - 8,
					       "MMAP2 record: build-id size "
					       "%u is larger than 20",
					       m->build_id_size);
		} else {
			m->maj = cur_u32(c);
			m->min = cur_u32(c);
			m->ino = cur_u64(c);
			m->ino_generation = cur_u64(c);
			m->has_inode = true;
		}
		m->prot = cur_u32(c);
		m->flags = cur_u32(c);
	}
	if (c->short_read)
		return err_set(&r->err, ERR_TRUNCATED, c->file_off - 8,
			       "%s record of %zu bytes is too short",
			       perfdata_record_name(type), ev->raw_len);
	return pd_string(r, c, &m->filename, type, "file name");
}

/* Clearing the sample clears the whole union of struct event. */
_Static_assert(sizeof(((struct event *)0)->sample) ==
		       offsetof(struct event, raw) -
			       offsetof(struct event, sample),
	       "event_sample is not the largest member of the event union");

/* Decodes the queued record q into *ev. */
int pd_decode_event(struct perfdata_reader *r, const struct pd_qent *q,
		    struct event *ev)
{
	struct cur hc = cur_make(q->rec, 8, q->file_off, r->info.swap);
	struct cur body;
	struct pd_trailer t;
	const struct event_attr *a;
	unsigned idx = 0;
	uint32_t type;

	/*
	 * Every field outside the union is set here; the union is cleared
	 * once, by pd_decode_sample() for samples (its largest member) and
	 * below for the rest.
	 */
	type = cur_u32(&hc);
	ev->type = EVENT_OTHER;
	ev->rec_type = type;
	ev->misc = cur_u16(&hc);
	ev->file_off = q->file_off;
	ev->compressed = q->compressed;
	ev->attr = NULL;
	ev->pid = ev->tid = -1;
	ev->time = EVENT_NO_TIME;
	ev->cpu = -1;
	ev->id = 0;
	ev->raw = q->rec;
	ev->raw_len = q->len;
	r->scratch_used = 0;
	body = cur_make(q->rec + 8, q->len - 8, q->file_off + 8, r->info.swap);
	if (type != PD_REC_SAMPLE)
		memset(&ev->sample, 0,
		       offsetof(struct event, raw) -
			       offsetof(struct event, sample));
	if (!pd_is_kernel_record(type))
		return 0;

	if (pd_record_attr(r, &body, type, &idx) < 0)
		return -1;
	a = &r->info.attrs[idx];
	ev->attr = a;
	if (type == PD_REC_SAMPLE) {
		size_t need = q->len / 8 + 8;

		if (need > r->scratch_alloc &&
		    mem_grow(&r->scratch_u64, &r->scratch_alloc,
			     sizeof(uint64_t), need) < 0)
			return err_set(&r->err, ERR_NOMEM, ERR_NO_OFF,
				       "sample scratch");
		ev->type = EVENT_SAMPLE;
		if (pd_decode_sample(r, a, &body, ev) < 0)
			return -1;
		return 0;
	}

	if (pd_parse_trailer(r, a, &body, type, &t) < 0)
		return -1;
	ev->pid = t.pid;
	ev->tid = t.tid;
	ev->time = t.time;
	ev->cpu = t.cpu;
	ev->id = t.id;

	switch (type) {
	case PD_REC_MMAP:
	case PD_REC_MMAP2:
		ev->type = EVENT_MMAP;
		return pd_decode_mmap(r, &body, ev, type);
	case PD_REC_COMM:
		ev->type = EVENT_COMM;
		ev->pid = (int32_t)cur_u32(&body);
		ev->tid = (int32_t)cur_u32(&body);
		ev->comm.exec = ev->misc & PD_MISC_COMM_EXEC;
		if (body.short_read)
			break;
		return pd_string(r, &body, &ev->comm.comm, type, "name");
	case PD_REC_FORK:
	case PD_REC_EXIT:
		ev->type = type == PD_REC_FORK ? EVENT_FORK : EVENT_EXIT;
		ev->pid = (int32_t)cur_u32(&body);
		ev->fork.ppid = (int32_t)cur_u32(&body);
		ev->tid = (int32_t)cur_u32(&body);
		ev->fork.ptid = (int32_t)cur_u32(&body);
		ev->fork.time = cur_u64(&body);
		if (ev->time == EVENT_NO_TIME)
			ev->time = ev->fork.time;
		break;
	case PD_REC_LOST:
		ev->type = EVENT_LOST;
		ev->lost.id = cur_u64(&body);
		ev->lost.lost = cur_u64(&body);
		break;
	case PD_REC_LOST_SAMPLES:
		ev->type = EVENT_LOST;
		ev->lost.samples = true;
		ev->lost.lost = cur_u64(&body);
		ev->lost.id = ev->id;
		break;
	default:
		break;
	}
	if (body.short_read)
		return err_set(&r->err, ERR_TRUNCATED, q->file_off,
			       "%s record of %u bytes is too short",
			       perfdata_record_name(type), q->len);
	return 0;
}
