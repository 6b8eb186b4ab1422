/*
 * tracepoint.c - libtraceevent over a capture's TRACING_DATA (see
 * tracepoint.h).
 *
 * TRACING_DATA, as perf's trace-event-info.c writes it (numbers in the
 * byte order named by its endian byte):
 *   "\x17\x08\x44tracing" version\0 endian(u8) long_size(u8) page_size(u32)
 *   "header_page\0" size(u64) text     "header_event\0" size(u64) text
 *   count(u32) { size(u64) format }                 ftrace formats
 *   systems(u32) { name\0 count(u32) { size(u64) format } }
 *   size(u32) kallsyms   size(u32) printk formats
 *   version >= 0.6: size(u64) saved cmdlines
 */
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "formats/tracepoint.h"

#include "common/cur.h"
#include "common/mem.h"

#ifdef HAVE_TRACEEVENT
#include <traceevent/event-parse.h>
#include <traceevent/trace-seq.h>

struct tracepoint {
	struct tep_handle *tep;
	struct strbuf name;          /* scratch for tracepoint_name() */
};

static bool tp_host_big(void)
{
	const uint16_t one = 1;

	return *(const uint8_t *)&one == 0;
}

/* A NUL-terminated copy of n bytes (libtraceevent parses C strings). */
static char *tp_strndup(const uint8_t *p, size_t n)
{
	char *s = malloc(n + 1);

	if (s) {
		memcpy(s, p, n);
		s[n] = '\0';
	}
	return s;
}

static int tp_fail(struct cur *c, struct err *err, const char *what)
{
	if (c->short_read)
		return err_set(err, ERR_TRUNCATED, cur_off(c),
			       "tracing data ends in %s", what);
	return err_set(err, ERR_CORRUPT, cur_off(c), "tracing data: bad %s",
		       what);
}

/* count event format files of one system. */
static int tp_formats(struct tracepoint *tp, struct cur *c, uint32_t count,
		      const char *sys, struct err *err)
{
	uint32_t i;

	for (i = 0; i < count; i++) {
		uint64_t size = cur_u64(c);
		const uint8_t *fmt;

		if (c->short_read || size > cur_left(c))
			return tp_fail(c, err, "an event format");
		fmt = cur_bytes(c, size);
		if (tep_parse_event(tp->tep, (const char *)fmt, size, sys) != 0)
			return err_set(err, ERR_CORRUPT, cur_off(c) - size,
				       "tracing data: event format of %s "
				       "rejected by libtraceevent", sys);
	}
	return 0;
}

/* A u32- or u64-sized text section handed to parse (NULL: skipped). */
static int tp_text(struct tracepoint *tp, struct cur *c, bool wide,
		   int (*parse)(struct tep_handle *, const char *),
		   const char *what, struct err *err)
{
	uint64_t size = wide ? cur_u64(c) : cur_u32(c);
	char *text;
	int rc = 0;

	if (c->short_read || size > cur_left(c))
		return tp_fail(c, err, what);
	if (!parse || size == 0) {
		cur_skip(c, size);
		return 0;
	}
	text = tp_strndup(cur_bytes(c, size), size);
	if (!text)
		return err_set(err, ERR_NOMEM, ERR_NO_OFF, "tracing data");
	/* Names only make output nicer: a bad table is not fatal. */
	(void)parse(tp->tep, text);
	free(text);
	return rc;
}

static int tp_parse(struct tracepoint *tp, struct cur *c, struct err *err)
{
	static const char magic[] = "\x17\x08\x44tracing";
	const char *version, *section;
	uint32_t n, i, page_size;
	uint64_t size;
	uint8_t big, long_size;
	double v;

	if (cur_left(c) < 10 || memcmp(cur_bytes(c, 10), magic, 10))
		return err_set(err, ERR_FORMAT, 0, "tracing data: bad magic");
	version = cur_cstr(c);
	big = cur_u8(c);
	long_size = cur_u8(c);
	if (!version || c->short_read || big > 1 ||
	    (long_size != 4 && long_size != 8))
		return tp_fail(c, err, "header");
	c->swap = (big != 0) != tp_host_big();
	page_size = cur_u32(c);
	v = strtod(version, NULL);
	tep_set_file_bigendian(tp->tep, big ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
	tep_set_local_bigendian(tp->tep, tp_host_big() ? TEP_BIG_ENDIAN :
						     TEP_LITTLE_ENDIAN);
	tep_set_long_size(tp->tep, long_size);
	tep_set_page_size(tp->tep, (int)page_size);

	section = cur_fixed_str(c, 12);
	size = cur_u64(c);
	if (!section || strcmp(section, "header_page") || c->short_read ||
	    size > cur_left(c))
		return tp_fail(c, err, "header_page");
	{
		char *text = tp_strndup(cur_bytes(c, size), size);

		if (!text)
			return err_set(err, ERR_NOMEM, ERR_NO_OFF, "tracing data");
		tep_parse_header_page(tp->tep, text, size, long_size);
		free(text);
	}
	section = cur_fixed_str(c, 13);
	size = cur_u64(c);
	if (!section || strcmp(section, "header_event") || c->short_read ||
	    size > cur_left(c))
		return tp_fail(c, err, "header_event");
	cur_skip(c, size);

	n = cur_u32(c);
	if (c->short_read)
		return tp_fail(c, err, "ftrace formats");
	if (tp_formats(tp, c, n, "ftrace", err) < 0)
		return -1;
	n = cur_u32(c);
	if (c->short_read)
		return tp_fail(c, err, "event systems");
	for (i = 0; i < n; i++) {
		const char *sys = cur_cstr(c);
		uint32_t count = cur_u32(c);

		if (!sys || c->short_read)
			return tp_fail(c, err, "event system");
		if (tp_formats(tp, c, count, sys, err) < 0)
			return -1;
	}
	if (tp_text(tp, c, false, tep_parse_kallsyms, "kallsyms", err) < 0 ||
	    tp_text(tp, c, false, tep_parse_printk_formats, "printk formats",
		    err) < 0)
		return -1;
	if (v >= 0.6 && cur_left(c) &&
	    tp_text(tp, c, true, tep_parse_saved_cmdlines, "saved cmdlines",
		    err) < 0)
		return -1;
	return 0;
}

struct tracepoint *tracepoint_new(const uint8_t *data, uint64_t size,
				  struct err *err)
{
	struct tracepoint *tp = mem_zalloc(1, sizeof(*tp));
	struct cur c = cur_make(data, size, 0, false);

	if (!tp || !(tp->tep = tep_alloc())) {
		free(tp);
		err_set(err, ERR_NOMEM, ERR_NO_OFF, "tracing data");
		return NULL;
	}
	if (tp_parse(tp, &c, err) < 0) {
		tracepoint_free(tp);
		return NULL;
	}
	return tp;
}

void tracepoint_free(struct tracepoint *tp)
{
	if (!tp)
		return;
	tep_free(tp->tep);
	strbuf_release(&tp->name);
	free(tp);
}

static struct tep_event *tp_event(struct tracepoint *tp, uint64_t id)
{
	return id <= INT32_MAX ? tep_find_event(tp->tep, (int)id) : NULL;
}

const char *tracepoint_name(struct tracepoint *tp, uint64_t id)
{
	struct tep_event *e = tp_event(tp, id);

	if (!e)
		return NULL;
	strbuf_reset(&tp->name);
	strbuf_addf(&tp->name, "%s:%s", e->system, e->name);
	return tp->name.oom ? NULL : tp->name.buf;
}

/* Appends s (at most n bytes, up to a NUL) quoted with C escapes. */
static void tp_quote(struct strbuf *out, const char *s, size_t n)
{
	size_t i;

	strbuf_addch(out, '"');
	for (i = 0; i < n && s[i]; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (ch == '"' || ch == '\\')
			strbuf_addf(out, "\\%c", ch);
		else if (ch == '\n')
			strbuf_addstr(out, "\\n");
		else if (ch == '\t')
			strbuf_addstr(out, "\\t");
		else if (ch < 0x20 || ch >= 0x7f)
			strbuf_addf(out, "\\x%02x", ch);
		else
			strbuf_addch(out, (char)ch);
	}
	strbuf_addch(out, '"');
}

static void tp_number(struct tracepoint *tp, struct strbuf *out,
		      const uint8_t *p, unsigned size, bool is_signed)
{
	unsigned long long v = tep_read_number(tp->tep, p, (int)size);

	if (is_signed && size < 8 && (v >> (size * 8 - 1)) & 1)
		v |= ~0ULL << (size * 8);
	if (is_signed)
		strbuf_addf(out, "%lld", (long long)v);
	else
		strbuf_addf(out, "%llu", v);
}

static bool tp_is_char(const struct tep_format_field *f)
{
	return strstr(f->type, "char") != NULL;
}

/* FIELD=VALUE for f, or FIELD=? when it lies outside the payload. */
static void tp_field(struct tracepoint *tp, struct strbuf *out,
		     const struct tep_format_field *f, const uint8_t *raw,
		     size_t len)
{
	size_t off = (size_t)f->offset, size = (size_t)f->size, i, el;
	bool is_signed = f->flags & TEP_FIELD_IS_SIGNED;

	strbuf_addf(out, " %s=", f->name);
	if (f->offset < 0 || f->size < 0 || off > len || size > len - off) {
		strbuf_addch(out, '?');
		return;
	}
	if (f->flags & TEP_FIELD_IS_DYNAMIC) {
		/* __data_loc: offset in the low 16 bits, length above */
		uint32_t loc = (uint32_t)tep_read_number(tp->tep, raw + off, 4);

		off = loc & 0xffff;
		size = loc >> 16;
		if (f->flags & TEP_FIELD_IS_RELATIVE)
			off += (size_t)f->offset + 4;
		if (off > len || size > len - off) {
			strbuf_addch(out, '?');
			return;
		}
	}
	if ((f->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_DYNAMIC)) &&
	    tp_is_char(f)) {
		tp_quote(out, (const char *)raw + off, size);
		return;
	}
	if (f->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_DYNAMIC)) {
		el = f->elementsize && f->elementsize <= 8 ? f->elementsize : 1;
		strbuf_addch(out, '{');
		for (i = 0; i + el <= size; i += el) {
			if (i)
				strbuf_addch(out, ',');
			tp_number(tp, out, raw + off + i, (unsigned)el, is_signed);
		}
		strbuf_addch(out, '}');
		return;
	}
	if (size == 1 || size == 2 || size == 4 || size == 8)
		tp_number(tp, out, raw + off, (unsigned)size, is_signed);
	else
		strbuf_addch(out, '?');
}

int tracepoint_format(struct tracepoint *tp, uint64_t id, const void *raw,
		      size_t len, int cpu, struct strbuf *out)
{
	struct tep_event *e = tp_event(tp, id);
	const struct tep_format_field *f;
	struct tep_record rec;
	struct trace_seq seq;
	size_t need = 0;

	if (!e) {
		strbuf_addstr(out, " tp=?");
		return -1;
	}
	strbuf_addf(out, " tp=%s:%s", e->system, e->name);
	for (f = e->format.common_fields; f; f = f->next)
		need = MAX(need, (size_t)f->offset + (size_t)f->size);
	for (f = e->format.fields; f; f = f->next) {
		if (!(f->flags & TEP_FIELD_IS_DYNAMIC))
			need = MAX(need, (size_t)f->offset + (size_t)f->size);
		tp_field(tp, out, f, raw, len);
	}
	/* The print format reads fields without bounds checks. */
	if (len < need || len > INT32_MAX) {
		strbuf_addstr(out, " trace=?");
		return 0;
	}
	memset(&rec, 0, sizeof(rec));
	rec.data = (void *)raw;
	rec.size = (int)len;
	rec.cpu = cpu;
	trace_seq_init(&seq);
	tep_print_event(tp->tep, &seq, &rec, "%s", TEP_PRINT_INFO);
	trace_seq_terminate(&seq);
	strbuf_addstr(out, " trace=");
	tp_quote(out, seq.buffer, seq.len);
	trace_seq_destroy(&seq);
	return 0;
}

int tracepoint_field(struct tracepoint *tp, uint64_t id, const void *raw,
		     size_t len, const char *name, int64_t *val)
{
	struct tep_event *e = tp_event(tp, id);
	const struct tep_format_field *f;
	unsigned long long v;
	size_t off, size;

	f = e ? tep_find_field(e, name) : NULL;
	if (!f || f->offset < 0 || f->size < 0 ||
	    (f->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_DYNAMIC)))
		return -1;
	off = (size_t)f->offset;
	size = (size_t)f->size;
	if ((size != 1 && size != 2 && size != 4 && size != 8) ||
	    off > len || size > len - off)
		return -1;
	v = tep_read_number(tp->tep, (const uint8_t *)raw + off, (int)size);
	if ((f->flags & TEP_FIELD_IS_SIGNED) && size < 8 &&
	    (v >> (size * 8 - 1)) & 1)
		v |= ~0ULL << (size * 8);
	*val = (int64_t)v;
	return 0;
}

#else /* !HAVE_TRACEEVENT */

struct tracepoint *tracepoint_new(const uint8_t *data, uint64_t size,
				  struct err *err)
{
	(void)data;
	(void)size;
	err_set(err, ERR_UNSUPPORTED, ERR_NO_OFF,
		"tracepoints: restack was built without libtraceevent");
	return NULL;
}

void tracepoint_free(struct tracepoint *tp)
{
	(void)tp;
}

const char *tracepoint_name(struct tracepoint *tp, uint64_t id)
{
	(void)tp;
	(void)id;
	return NULL;
}

int tracepoint_format(struct tracepoint *tp, uint64_t id, const void *raw,
		      size_t len, int cpu, struct strbuf *out)
{
	(void)tp;
	(void)id;
	(void)raw;
	(void)len;
	(void)cpu;
	strbuf_addstr(out, " tp=?");
	return -1;
}

int tracepoint_field(struct tracepoint *tp, uint64_t id, const void *raw,
		     size_t len, const char *name, int64_t *val)
{
	(void)tp;
	(void)id;
	(void)raw;
	(void)len;
	(void)name;
	(void)val;
	return -1;
}

#endif
