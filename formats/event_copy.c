/*
 * event_copy.c - an event copied into one buffer (see event_copy.h).
 *
 * One walk over the event's pointers serves both to measure and to copy:
 * with no buffer it only counts.  The record's bytes come first; a
 * pointer into them points into their copy (past the stack copy left out,
 * shifted by its length), any other is followed by a copy of what it
 * points to, 8-byte aligned.
 */
#include <string.h>

#include "formats/event_copy.h"

struct ec_cur {
	uint8_t *buf;           /* NULL: only measuring */
	size_t pos;             /* bytes taken so far */
	const uint8_t *raw;     /* the record copied */
	size_t raw_len;
	size_t cut, removed;    /* its bytes [cut, cut + removed) left out */
};

static size_t ec_align(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/* Where n bytes at p are in the copy. */
static inline const void *ec_put(struct ec_cur *c, const void *p, size_t n)
{
	const uint8_t *b = p;
	size_t off;
	void *at;

	if (!p)
		return NULL;
	if (c->raw && b >= c->raw && b < c->raw + c->raw_len &&
	    n <= (size_t)(c->raw + c->raw_len - b)) {
		off = (size_t)(b - c->raw);
		if (c->removed && off >= c->cut)
			off -= c->removed;
		return c->buf ? c->buf + off : NULL;
	}
	at = c->buf ? c->buf + c->pos : NULL;
	if (at && n)
		memcpy(at, p, n);
	c->pos += ec_align(n);
	return at;
}

/*
 * Where a perf.data sample's stack copy is in its record: the bytes from
 * its data to its dyn_size, whose size field (just before) says
 * stack_size.  False when the record is not laid out so.
 */
static bool ec_stack_cut(const struct event *ev, size_t *cut, size_t *len)
{
	const struct event_sample *s = &ev->sample;
	uint64_t size;
	size_t off;

	if (ev->type != EVENT_SAMPLE || !ev->attr || !s->stack ||
	    !s->stack_size || !ev->raw || s->stack < ev->raw)
		return false;
	off = (size_t)(s->stack - ev->raw);
	if (off < 16 || off > ev->raw_len ||
	    s->stack_size > ev->raw_len - off ||
	    ev->raw_len - off - s->stack_size < 8)
		return false;
	memcpy(&size, s->stack - 8, 8);
	if (ev->attr->file_swap)
		size = __builtin_bswap64(size);
	if (size != s->stack_size)
		return false;
	*cut = off;
	*len = (size_t)s->stack_size + 8;
	return true;
}

/* The record's bytes, less the cut, with its sizes made to match. */
static void ec_raw(struct ec_cur *c, bool swap)
{
	uint64_t zero = 0;
	uint16_t size;

	if (!c->removed) {
		memcpy(c->buf, c->raw, c->raw_len);
		return;
	}
	memcpy(c->buf, c->raw, c->cut);
	memcpy(c->buf + c->cut, c->raw + c->cut + c->removed,
	       c->raw_len - c->cut - c->removed);
	memcpy(c->buf + c->cut - 8, &zero, 8);          /* STACK_USER size */
	size = (uint16_t)(c->raw_len - c->removed);
	if (swap)
		size = __builtin_bswap16(size);
	memcpy(c->buf + 6, &size, 2);                   /* the header's */
}

/* Sets d's field (d NULL: only measuring) to where p's n bytes go. */
#define EC_PUT(field, p, n)                                                   \
	do {                                                                  \
		const void *at_ = ec_put(c, (p), (n));                        \
		if (d)                                                        \
			d->field = at_;                                       \
	} while (0)
#define EC_STR(field, p) EC_PUT(field, (p), (p) ? strlen(p) + 1 : 0)

/* Fills d's pointers (d: a copy of ev, or NULL) and counts c->pos. */
static void ec_walk(struct ec_cur *c, struct event *d, const struct event *ev)
{
	const struct event_sample *o = &ev->sample;

	if (c->raw) {
		if (c->buf)
			ec_raw(c, ev->attr && ev->attr->file_swap);
		c->pos = ec_align(c->raw_len - c->removed);
		if (d) {
			d->raw = c->buf;
			d->raw_len = c->raw_len - c->removed;
		}
	}
	switch (ev->type) {
	case EVENT_SAMPLE:
		EC_PUT(sample.callchain, o->callchain,
		       (size_t)o->callchain_nr * 8);
		EC_PUT(sample.regs_user, o->regs_user,
		       (size_t)o->regs_user_nr * 8);
		EC_PUT(sample.regs_intr, o->regs_intr,
		       (size_t)o->regs_intr_nr * 8);
		if (!c->removed)
			EC_PUT(sample.stack, o->stack, (size_t)o->stack_size);
		else if (d) {
			d->sample.stack = NULL;
			d->sample.stack_size = d->sample.stack_dyn_size = 0;
		}
		EC_PUT(sample.raw, o->raw, o->raw_size);
		EC_PUT(sample.branches, o->branches,
		       (size_t)o->branch_nr * sizeof(*o->branches));
		EC_PUT(sample.read_values, o->read_values,
		       (size_t)o->read_nr * 8);
		break;
	case EVENT_MMAP:
		EC_STR(mmap.filename, ev->mmap.filename);
		break;
	case EVENT_COMM:
		EC_STR(comm.comm, ev->comm.comm);
		break;
	case EVENT_JIT:
		EC_STR(jit.name, ev->jit.name);
		break;
	case EVENT_BUILD_ID:
		EC_STR(build_id.filename, ev->build_id.filename);
		break;
	default:
		break;
	}
}

#undef EC_STR
#undef EC_PUT

static void ec_init(struct ec_cur *c, void *buf, const struct event *ev,
		    unsigned flags)
{
	c->buf = buf;
	c->pos = 0;
	c->raw = ev->raw;
	c->raw_len = ev->raw ? ev->raw_len : 0;
	if (!(flags & EVENT_COPY_NO_STACK) ||
	    !ec_stack_cut(ev, &c->cut, &c->removed))
		c->cut = c->removed = 0;
}

size_t event_copy_size(const struct event *ev, unsigned flags)
{
	struct ec_cur c;

	ec_init(&c, NULL, ev, flags);
	ec_walk(&c, NULL, ev);
	return c.pos;
}

void event_copy(struct event *dst, void *buf, const struct event *ev,
		unsigned flags)
{
	struct ec_cur c;

	*dst = *ev;
	ec_init(&c, buf, ev, flags);
	ec_walk(&c, dst, ev);
}
