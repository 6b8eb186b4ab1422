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
static const void *ec_put(struct ec_cur *c, const void *p, size_t n)
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

static const char *ec_str(struct ec_cur *c, const char *s)
{
	return s ? ec_put(c, s, strlen(s) + 1) : NULL;
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

/* Fills d's pointers (d: a copy of ev) and counts c->pos. */
static void ec_walk(struct ec_cur *c, struct event *d, const struct event *ev)
{
	const struct event_sample *o = &ev->sample;
	struct event_sample *s = &d->sample;

	if (c->raw) {
		if (c->buf)
			ec_raw(c, ev->attr && ev->attr->file_swap);
		d->raw = c->buf;
		d->raw_len = c->raw_len - c->removed;
		c->pos = ec_align(d->raw_len);
	}
	switch (ev->type) {
	case EVENT_SAMPLE:
		s->callchain = ec_put(c, o->callchain,
				      (size_t)o->callchain_nr * 8);
		s->regs_user = ec_put(c, o->regs_user,
				      (size_t)o->regs_user_nr * 8);
		s->regs_intr = ec_put(c, o->regs_intr,
				      (size_t)o->regs_intr_nr * 8);
		if (c->removed) {
			s->stack = NULL;
			s->stack_size = s->stack_dyn_size = 0;
		} else {
			s->stack = ec_put(c, o->stack, (size_t)o->stack_size);
		}
		s->raw = ec_put(c, o->raw, o->raw_size);
		s->branches = ec_put(c, o->branches,
				     (size_t)o->branch_nr * sizeof(*o->branches));
		s->read_values = ec_put(c, o->read_values,
					(size_t)o->read_nr * 8);
		break;
	case EVENT_MMAP:
		d->mmap.filename = ec_str(c, ev->mmap.filename);
		break;
	case EVENT_COMM:
		d->comm.comm = ec_str(c, ev->comm.comm);
		break;
	case EVENT_JIT:
		d->jit.name = ec_str(c, ev->jit.name);
		break;
	case EVENT_BUILD_ID:
		d->build_id.filename = ec_str(c, ev->build_id.filename);
		break;
	default:
		break;
	}
}

static void ec_init(struct ec_cur *c, void *buf, const struct event *ev,
		    unsigned flags)
{
	memset(c, 0, sizeof(*c));
	c->buf = buf;
	c->raw = ev->raw;
	c->raw_len = ev->raw ? ev->raw_len : 0;
	if ((flags & EVENT_COPY_NO_STACK) &&
	    !ec_stack_cut(ev, &c->cut, &c->removed))
		c->cut = c->removed = 0;
}

size_t event_copy_size(const struct event *ev, unsigned flags)
{
	struct ec_cur c;
	struct event d = *ev;

	ec_init(&c, NULL, ev, flags);
	ec_walk(&c, &d, ev);
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
