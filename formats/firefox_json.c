/*
 * firefox_json.c - the Firefox Profiler writer's output: the tables of
 * firefox.c as the processed profile's JSON, streamed out in 64 KiB
 * pieces (gzip-compressed on two cores by gzpar.c unless plain).
 */
#include <stdio.h>
#include <stdlib.h>

#include "formats/fdout.h"
#include "formats/firefox_internal.h"
#include "formats/gzpar.h"
#include "formats/textesc.h"

#include "common/mem.h"

#define FF_VERSION 70         /* preprocessedProfileVersion */
#define FF_FLUSH 65536        /* bytes buffered before they go out */

static const struct {
	const char *name, *color;
} ff_categories[] = {
	[FF_CAT_OTHER] = { "Other", "grey" },
	[FF_CAT_USER] = { "User", "blue" },
	[FF_CAT_KERNEL] = { "Kernel", "orange" },
	[FF_CAT_JIT] = { "JIT", "green" },
	[FF_CAT_STITCHED] = { "Stitched", "purple" },
	[FF_CAT_TRUNCATED] = { "Truncated", "red" },
};

/* The output: JSON text in out, sent through gz unless plain. */
struct ff_out {
	int fd;
	struct gzpar *gz;         /* NULL: plain */
	struct strbuf out;
	struct err *err;
	int rc;
	int64_t *mk;              /* scratch: a thread's markers in order */
	size_t mk_alloc;
};

/* Sends the text buffered (with gzip, once it makes a block). */
static int ff_out_send(struct ff_out *o)
{
	if (o->rc)
		return o->rc;
	o->rc = o->gz ? gzpar_write(o->gz, &o->out) :
			fdout_flush(o->fd, &o->out, "Firefox profile", o->err);
	return o->rc;
}

/* Sends the buffered text once there is enough of it. */
static int ff_out_maybe(struct ff_out *o)
{
	return o->out.len >= FF_FLUSH ? ff_out_send(o) : o->rc;
}

/* Appends ns nanoseconds as milliseconds, exactly, without trailing 0s. */
static void ff_ms(struct strbuf *sb, uint64_t ns)
{
	uint32_t rest = (uint32_t)(ns % 1000000);
	char frac[8];
	int n;

	strbuf_addu(sb, ns / 1000000);
	if (!rest)
		return;
	frac[0] = '.';
	for (n = 6; n > 0; n--, rest /= 10)
		frac[n] = (char)('0' + rest % 10);
	for (n = 6; frac[n] == '0'; n--)
		;
	strbuf_add(sb, frac, (size_t)n + 1);
}

/* Appends ,"NAME":[...] of column col of t's rows; FF_NONE is none. */
static void ff_column(struct ff_out *o, const char *name,
		      const struct ff_tab *t, unsigned col, const char *none)
{
	size_t i;

	strbuf_addf(&o->out, ",\"%s\":[", name);
	for (i = 0; i < t->nr && o->rc == 0; i++) {
		uint64_t v = ff_row(t, i)[col];

		if (i)
			strbuf_addch(&o->out, ',');
		if (v == FF_NONE)
			strbuf_addstr(&o->out, none);
		else
			strbuf_addu(&o->out, v);
		ff_out_maybe(o);
	}
	strbuf_addch(&o->out, ']');
}

/* Appends ,"NAME":[V,V,...] with V repeated n times. */
static void ff_repeat(struct ff_out *o, const char *name, size_t n,
		      const char *v)
{
	size_t i;

	strbuf_addf(&o->out, ",\"%s\":[", name);
	for (i = 0; i < n && o->rc == 0; i++) {
		strbuf_addstr(&o->out, i ? "," : "");
		strbuf_addstr(&o->out, v);
		ff_out_maybe(o);
	}
	strbuf_addch(&o->out, ']');
}

/*
 * The sampling interval in ms: the capture's, else the mean distance
 * between the samples of the thread with the most (1 without two).
 */
static double ff_interval(const struct firefox *ff)
{
	const struct ff_thread *busiest = NULL;
	size_t i;

	if (ff->meta.interval_ms > 0)
		return ff->meta.interval_ms;
	for (i = 0; i < ff->nr_threads; i++)
		if (!busiest || ff->threads[i]->nr > busiest->nr)
			busiest = ff->threads[i];
	if (!busiest || busiest->nr < 2 ||
	    busiest->v[busiest->nr - 1].time <= busiest->v[0].time)
		return 1.0;
	return (double)(busiest->v[busiest->nr - 1].time - busiest->v[0].time) /
	       1e6 / (double)(busiest->nr - 1);
}

static void ff_meta(struct firefox *ff, struct ff_out *o)
{
	const struct firefox_meta *m = &ff->meta;
	struct strbuf *b = &o->out;
	size_t i;

	strbuf_addstr(b, "{\"meta\":{\"interval\":");
	/* %g of a value from the capture: the same text every run */
	strbuf_addf(b, "%.9g", ff_interval(ff));
	strbuf_addstr(b, ",\"startTime\":");
	ff_ms(b, ff->t0);
	strbuf_addf(b, ",\"startTimeAsClockMonotonicNanosecondsSinceBoot\":"
		    "%llu,", (unsigned long long)ff->t0);
	/* the range shown: from the first to the last sample or event */
	strbuf_addstr(b, "\"profilingStartTime\":0,\"profilingEndTime\":");
	ff_ms(b, ff->t_end - ff->t0);
	strbuf_addch(b, ',');
	if (m->cpu_ns)
		strbuf_addstr(b, "\"sampleUnits\":{\"time\":\"ms\","
			      "\"eventDelay\":\"ms\","
			      "\"threadCPUDelta\":\"ns\"},");
	strbuf_addf(b, "\"processType\":0,\"product\":\"restack\","
		    "\"stackwalk\":1,\"version\":36,"
		    "\"preprocessedProfileVersion\":%d,\"symbolicated\":true,"
		    "\"usesOnlyOneStackType\":true,\"platform\":\"Linux\","
		    "\"keepProfileThreadOrder\":true",
		    FF_VERSION);
	if (m->osrelease) {
		strbuf_reset(&ff->buf);
		strbuf_addf(&ff->buf, "Linux %s", m->osrelease);
		strbuf_addstr(b, ",\"oscpu\":");
		textesc_json(b, strbuf_str(&ff->buf));
	}
	if (m->arch) {
		strbuf_addstr(b, ",\"abi\":");
		textesc_json(b, m->arch);
	}
	if (m->cpu) {
		strbuf_addstr(b, ",\"CPUName\":");
		textesc_json(b, m->cpu);
	}
	if (m->cpus)
		strbuf_addf(b, ",\"logicalCPUs\":%u", m->cpus);
	if (m->name) {
		strbuf_addstr(b, ",\"importedFrom\":");
		textesc_json(b, m->name);
	}
	strbuf_addstr(b, ",\"categories\":[");
	for (i = 0; i < ARRAY_SIZE(ff_categories); i++)
		strbuf_addf(b, "%s{\"name\":\"%s\",\"color\":\"%s\","
			    "\"subcategories\":[\"Other\"]}", i ? "," : "",
			    ff_categories[i].name, ff_categories[i].color);
	strbuf_addstr(b, "],\"markerSchema\":[{\"name\":\"TruncatedStacks\","
		      "\"tooltipLabel\":\"Truncated stacks: "
		      "{marker.data.reason}\","
		      "\"tableLabel\":\"{marker.data.reason}, "
		      "{marker.data.samples} samples\","
		      "\"chartLabel\":\"{marker.data.reason}\","
		      "\"display\":[\"marker-chart\",\"marker-table\","
		      "\"timeline-overview\"],"
		      "\"description\":\"Consecutive samples of the thread "
		      "whose stacks did not reach its root\","
		      "\"fields\":[{\"key\":\"reason\",\"label\":\"Reason\","
		      "\"format\":\"string\"},{\"key\":\"samples\","
		      "\"label\":\"Samples\",\"format\":\"integer\"}]},"
		      "{\"name\":\"Lost\","
		      "\"tooltipLabel\":\"Lost {marker.data.count} "
		      "{marker.data.what}\","
		      "\"tableLabel\":\"{marker.data.count} "
		      "{marker.data.what}\","
		      "\"chartLabel\":\"{marker.data.count}\","
		      "\"display\":[\"marker-chart\",\"marker-table\","
		      "\"timeline-overview\"],"
		      "\"description\":\"Samples or records the kernel dropped "
		      "(its ring buffer was full)\","
		      "\"fields\":[{\"key\":\"what\",\"label\":\"What\","
		      "\"format\":\"string\"},{\"key\":\"count\","
		      "\"label\":\"Count\",\"format\":\"integer\"}]}]},");
}

/* Breakpad's id of an ELF build-id: its first 16 bytes (zero-padded) as
 * a GUID, the first three fields byte-swapped, then the age, 0. */
static void ff_breakpad_id(struct strbuf *b, const struct ff_bid *bid)
{
	static const uint8_t order[16] = { 3, 2, 1, 0, 5, 4, 7, 6,
					   8, 9, 10, 11, 12, 13, 14, 15 };
	uint8_t g[16] = { 0 };
	unsigned i;

	memcpy(g, bid->b, MIN(bid->size, 16u));
	for (i = 0; i < 16; i++)
		strbuf_addf(b, "%02X", g[order[i]]);
	strbuf_addch(b, '0');
}

static void ff_libs(struct firefox *ff, struct ff_out *o)
{
	struct strbuf *b = &o->out;
	size_t i;
	unsigned k;

	strbuf_addstr(b, "\"libs\":[");
	for (i = 0; i < ff->libs.nr && o->rc == 0; i++) {
		uint64_t sid = ff_row(&ff->libs, i)[FF_LIB_PATH];
		const char *path = strtab_str(&ff->strs, (uint32_t)sid);
		const struct ff_bid *bid = &ff->bids[i];

		strbuf_addstr(b, i ? ",{\"arch\":" : "{\"arch\":");
		textesc_json(b, ff->meta.arch ? ff->meta.arch : "");
		strbuf_addstr(b, ",\"name\":");
		textesc_json(b, ff_basename(path));
		strbuf_addstr(b, ",\"path\":");
		textesc_json(b, path);
		strbuf_addstr(b, ",\"debugName\":");
		textesc_json(b, ff_basename(path));
		strbuf_addstr(b, ",\"debugPath\":");
		textesc_json(b, path);
		strbuf_addstr(b, ",\"breakpadId\":\"");
		if (bid->size)
			ff_breakpad_id(b, bid);
		strbuf_addstr(b, "\",\"codeId\":");
		if (bid->size) {
			strbuf_addch(b, '"');
			for (k = 0; k < bid->size; k++)
				strbuf_addf(b, "%02x", bid->b[k]);
			strbuf_addch(b, '"');
		} else {
			strbuf_addstr(b, "null");
		}
		strbuf_addch(b, '}');
		ff_out_maybe(o);
	}
	strbuf_addstr(b, "],");
}

static void ff_shared(struct firefox *ff, struct ff_out *o)
{
	struct strbuf *b = &o->out;
	const struct ff_tab *st = &ff->stacks, *fr = &ff->frames;
	size_t i;

	strbuf_addstr(b, "\"shared\":{\"stringArray\":[");
	for (i = 0; i < ff->strs.nr && o->rc == 0; i++) {
		strbuf_addstr(b, i ? "," : "");
		textesc_json(b, strtab_str(&ff->strs, (uint32_t)i));
		ff_out_maybe(o);
	}
	/* stacks: prefixOffset is the distance back to the prefix */
	strbuf_addstr(b, "],\"stackTable\":{\"length\":");
	strbuf_addf(b, "%zu", st->nr);
	ff_column(o, "frame", st, FF_STACK_FRAME, "null");
	strbuf_addstr(b, ",\"prefixOffset\":[");
	for (i = 0; i < st->nr && o->rc == 0; i++) {
		uint64_t p = ff_row(st, i)[FF_STACK_PREFIX];

		strbuf_addstr(b, i ? "," : "");
		strbuf_addu(b, p == FF_NONE ? 0 : i - p);
		ff_out_maybe(o);
	}
	strbuf_addf(b, "]},\"frameTable\":{\"length\":%zu", fr->nr);
	strbuf_addstr(b, ",\"address\":[");
	for (i = 0; i < fr->nr && o->rc == 0; i++) {
		strbuf_addstr(b, i ? "," : "");
		strbuf_addi(b, (int64_t)ff_row(fr, i)[FF_FRAME_ADDR]);
		ff_out_maybe(o);
	}
	strbuf_addch(b, ']');
	ff_column(o, "lib", fr, FF_FRAME_LIB, "-1");
	ff_column(o, "inlineDepth", fr, FF_FRAME_DEPTH, "0");
	ff_column(o, "category", fr, FF_FRAME_CAT, "null");
	ff_repeat(o, "subcategory", fr->nr, "0");
	ff_column(o, "func", fr, FF_FRAME_FUNC, "null");
	ff_repeat(o, "nativeSymbol", fr->nr, "null");
	ff_repeat(o, "innerWindowID", fr->nr, "null");
	strbuf_addstr(b, ",\"line\":[");
	for (i = 0; i < fr->nr && o->rc == 0; i++) {
		uint64_t line = ff_row(fr, i)[FF_FRAME_LINE];

		strbuf_addstr(b, i ? "," : "");
		if (line)
			strbuf_addu(b, line);
		else
			strbuf_addstr(b, "null");
		ff_out_maybe(o);
	}
	strbuf_addch(b, ']');
	ff_repeat(o, "column", fr->nr, "null");
	ff_repeat(o, "originalLocation", fr->nr, "null");

	strbuf_addf(b, "},\"funcTable\":{\"length\":%zu", ff->funcs.nr);
	ff_column(o, "name", &ff->funcs, FF_FUNC_NAME, "null");
	ff_repeat(o, "isJS", ff->funcs.nr, "false");
	ff_repeat(o, "relevantForJS", ff->funcs.nr, "false");
	ff_column(o, "resource", &ff->funcs, FF_FUNC_RES, "-1");
	strbuf_addstr(b, ",\"source\":[");
	for (i = 0; i < ff->funcs.nr && o->rc == 0; i++) {
		strbuf_addstr(b, i ? "," : "");
		if (ff->func_src[i] == FF_NONE)
			strbuf_addstr(b, "null");
		else
			strbuf_addu(b, ff->func_src[i]);
		ff_out_maybe(o);
	}
	strbuf_addch(b, ']');
	ff_repeat(o, "lineNumber", ff->funcs.nr, "null");
	ff_repeat(o, "columnNumber", ff->funcs.nr, "null");
	ff_repeat(o, "originalLocation", ff->funcs.nr, "null");

	strbuf_addf(b, "},\"resourceTable\":{\"length\":%zu", ff->res.nr);
	ff_column(o, "name", &ff->res, FF_RES_NAME, "null");
	ff_repeat(o, "host", ff->res.nr, "null");
	ff_repeat(o, "type", ff->res.nr, "1");

	strbuf_addstr(b, "},\"nativeSymbols\":{\"length\":0,\"libIndex\":[],"
		      "\"address\":[],\"name\":[],\"functionSize\":[]}");
	strbuf_addf(b, ",\"sources\":{\"length\":%zu", ff->srcs.nr);
	ff_repeat(o, "id", ff->srcs.nr, "null");
	ff_column(o, "filename", &ff->srcs, FF_SRC_FILE, "null");
	ff_repeat(o, "startLine", ff->srcs.nr, "1");
	ff_repeat(o, "startColumn", ff->srcs.nr, "1");
	ff_repeat(o, "sourceMapURL", ff->srcs.nr, "null");
	ff_repeat(o, "content", ff->srcs.nr, "null");
	strbuf_addstr(b, "},\"sourceLocationTable\":{\"length\":0,"
		      "\"source\":[],\"line\":[],\"column\":[]}},");
}

static int ff_thread_cmp(const void *a, const void *b)
{
	const struct ff_thread *x = *(const struct ff_thread *const *)a;
	const struct ff_thread *y = *(const struct ff_thread *const *)b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return 0;
}

/* Events by thread, then time; the ones left out last. */
static int ff_event_cmp(const void *a, const void *b)
{
	const struct ff_event *x = a, *y = b;

	if ((x->kind == FF_EV_NONE) != (y->kind == FF_EV_NONE))
		return x->kind == FF_EV_NONE ? 1 : -1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return x->count < y->count ? -1 : x->count > y->count;
}

/* The first of the sorted threads at or after (pid, tid). */
static size_t ff_lower(const struct firefox *ff, int32_t pid, int32_t tid)
{
	size_t lo = 0, hi = ff->nr_threads;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct ff_thread *t = ff->threads[mid];

		if (t->pid < pid || (t->pid == pid && t->tid < tid))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Gives every event its thread (or leaves it out), sorts them, and works
 * out each thread's events, start and end, and the profile's zero (the
 * earliest sample or event).  The threads are sorted.
 */
static void ff_prepare(struct firefox *ff)
{
	size_t i, k = 0;

	for (i = 0; i < ff->nr_ev; i++) {
		struct ff_event *e = &ff->ev[i];
		size_t at = ff_lower(ff, e->pid, e->tid);
		bool lost = e->kind == FIREFOX_LOST_SAMPLES ||
			    e->kind == FIREFOX_LOST_RECORDS;
		const struct ff_thread *t = NULL;

		if (at < ff->nr_threads && ff->threads[at]->pid == e->pid &&
		    ff->threads[at]->tid == e->tid)
			t = ff->threads[at];
		else if (lost && at < ff->nr_threads &&
			 ff->threads[at]->pid == e->pid)
			t = ff->threads[at];
		else if (lost && ff->nr_threads) {
			at = ff_lower(ff, e->pid, INT32_MIN);
			if (at >= ff->nr_threads ||
			    ff->threads[at]->pid != e->pid)
				at = 0;
			t = ff->threads[at];
		}
		if (!t) {
			e->kind = FF_EV_NONE;
			continue;
		}
		e->pid = t->pid;
		e->tid = t->tid;
		ff->t0 = MIN(ff->t0, e->time);
	}
	if (ff->nr_ev > 1)
		qsort(ff->ev, ff->nr_ev, sizeof(*ff->ev), ff_event_cmp);
	ff->t_end = ff->t0;
	for (i = 0; i < ff->nr_threads; i++) {
		struct ff_thread *t = ff->threads[i];

		t->start = t->v[0].time;
		t->end = t->v[t->nr - 1].time;
		t->ended = false;
		while (k < ff->nr_ev && ff->ev[k].kind != FF_EV_NONE &&
		       ff_event_cmp(&ff->ev[k], &(struct ff_event){
				.pid = t->pid, .tid = t->tid }) < 0)
			k++;
		t->ev_lo = k;
		for (; k < ff->nr_ev && ff->ev[k].kind != FF_EV_NONE &&
		     ff->ev[k].pid == t->pid && ff->ev[k].tid == t->tid; k++) {
			const struct ff_event *e = &ff->ev[k];

			if (e->kind == FIREFOX_THREAD_START)
				t->start = MIN(t->start, e->time);
			if (e->kind == FIREFOX_THREAD_END &&
			    e->time >= t->v[t->nr - 1].time) {
				t->end = e->time;
				t->ended = true;
			}
		}
		t->ev_hi = k;
		ff->t_end = MAX(ff->t_end, t->end);
		if (t->nr_m)
			ff->t_end = MAX(ff->t_end, t->m[t->nr_m - 1].end);
		if (t->ev_hi > t->ev_lo)
			ff->t_end = MAX(ff->t_end, ff->ev[t->ev_hi - 1].time);
	}
	ff->t_end += (uint64_t)(ff_interval(ff) * 1e6 + 0.5);
}

/*
 * The thread's markers in time order, into o->mk: i >= 0 its truncated
 * run t->m[i], -1 - j the event ff->ev[j].  Returns how many, or -1.
 */
static int64_t ff_marker_order(const struct firefox *ff, struct ff_out *o,
			       const struct ff_thread *t)
{
	size_t i = 0, j = t->ev_lo, n = 0;

	if (mem_grow(&o->mk, &o->mk_alloc, sizeof(*o->mk),
		     t->nr_m + (t->ev_hi - t->ev_lo)) < 0)
		return -1;
	while (i < t->nr_m || j < t->ev_hi) {
		if (j == t->ev_hi ||
		    (i < t->nr_m && t->m[i].start <= ff->ev[j].time))
			o->mk[n++] = (int64_t)i++;
		else
			o->mk[n++] = -1 - (int64_t)j++;
	}
	return (int64_t)n;
}

static void ff_markers(struct firefox *ff, struct ff_out *o,
		       const struct ff_thread *t)
{
	static const char *const what[FIREFOX_EVENT__COUNT] = {
		[FIREFOX_LOST_SAMPLES] = "samples",
		[FIREFOX_LOST_RECORDS] = "records",
	};
	int64_t n = ff_marker_order(ff, o, t), i;
	struct strbuf *b = &o->out;

	if (n < 0) {
		o->rc = err_set(o->err, ERR_NOMEM, ERR_NO_OFF,
				"Firefox profile");
		return;
	}
	strbuf_addf(b, "\"markers\":{\"length\":%lld,\"data\":[",
		    (long long)n);
	for (i = 0; i < n && o->rc == 0; i++) {
		const struct ff_marker *m = o->mk[i] >= 0 ? &t->m[o->mk[i]] :
					    NULL;
		const struct ff_event *e = m ? NULL : &ff->ev[-1 - o->mk[i]];

		strbuf_addstr(b, i ? "," : "");
		if (m) {
			strbuf_addstr(b, "{\"type\":\"TruncatedStacks\","
				      "\"reason\":");
			textesc_json(b, strtab_str(&ff->strs, m->reason));
			strbuf_addf(b, ",\"samples\":%u}", m->samples);
		} else if (what[e->kind]) {
			strbuf_addf(b, "{\"type\":\"Lost\",\"what\":\"%s\","
				    "\"count\":%llu}", what[e->kind],
				    (unsigned long long)e->count);
		} else {
			strbuf_addstr(b, "null");
		}
		ff_out_maybe(o);
	}
	strbuf_addstr(b, "],\"name\":[");
	for (i = 0; i < n; i++)
		strbuf_addf(b, i ? ",%u" : "%u", o->mk[i] >= 0 ?
			    ff->marker_name : ff->ev_name[ff->ev[-1 -
							   o->mk[i]].kind]);
	strbuf_addstr(b, "],\"startTime\":[");
	for (i = 0; i < n; i++) {
		strbuf_addstr(b, i ? "," : "");
		ff_ms(b, (o->mk[i] >= 0 ? t->m[o->mk[i]].start :
			  ff->ev[-1 - o->mk[i]].time) - ff->t0);
	}
	strbuf_addstr(b, "],\"endTime\":[");
	for (i = 0; i < n; i++) {
		strbuf_addstr(b, i ? "," : "");
		if (o->mk[i] >= 0)
			ff_ms(b, t->m[o->mk[i]].end - ff->t0);
		else
			strbuf_addstr(b, "null");
	}
	/* truncated runs are intervals (1), events instants (0) */
	strbuf_addstr(b, "],\"phase\":[");
	for (i = 0; i < n; i++)
		strbuf_addstr(b, o->mk[i] >= 0 ? (i ? ",1" : "1") :
				 (i ? ",0" : "0"));
	strbuf_addstr(b, "],\"category\":[");
	for (i = 0; i < n; i++)
		strbuf_addf(b, i ? ",%d" : "%d", o->mk[i] >= 0 ?
			    FF_CAT_TRUNCATED : FF_CAT_OTHER);
	strbuf_addstr(b, "]}");
}

/* The periods of t's samples, comma-separated. */
static void ff_periods(struct ff_out *o, const struct ff_thread *t)
{
	size_t i;

	for (i = 0; i < t->nr && o->rc == 0; i++) {
		strbuf_addstr(&o->out, i ? "," : "");
		strbuf_addu(&o->out, t->v[i].period);
		ff_out_maybe(o);
	}
}

/* A thread; its process started at pstart, ended at pend (UINT64_MAX:
 * unknown) and is named pname (NULL: no main thread). */
static void ff_thread_json(struct firefox *ff, struct ff_out *o,
			   const struct ff_thread *t, uint64_t pstart,
			   uint64_t pend, const char *pname)
{
	struct strbuf *b = &o->out;
	size_t i;

	strbuf_addstr(b, "{\"processType\":\"default\","
		      "\"processStartupTime\":");
	ff_ms(b, pstart - ff->t0);
	strbuf_addstr(b, ",\"processShutdownTime\":");
	if (pend != UINT64_MAX)
		ff_ms(b, pend - ff->t0);
	else
		strbuf_addstr(b, "null");
	strbuf_addstr(b, ",\"registerTime\":");
	ff_ms(b, t->start - ff->t0);
	strbuf_addstr(b, ",\"unregisterTime\":");
	ff_ms(b, t->end - ff->t0);
	strbuf_addstr(b, ",\"pausedRanges\":[],\"showMarkersInTimeline\":true,"
		      "\"name\":");
	textesc_json(b, strtab_str(&ff->strs, t->comm));
	if (pname) {
		strbuf_addstr(b, ",\"processName\":");
		textesc_json(b, pname);
	}
	strbuf_addf(b, ",\"isMainThread\":%s,\"pid\":\"%d\",\"tid\":\"%d\","
		    "\"samples\":{\"length\":%zu,\"weightType\":\"samples\","
		    "\"weight\":", t->pid == t->tid ? "true" : "false",
		    t->pid, t->tid, t->nr);
	if (ff->opts.period) {
		strbuf_addch(b, '[');
		ff_periods(o, t);
		strbuf_addch(b, ']');
	} else {
		strbuf_addstr(b, "null");
	}
	strbuf_addstr(b, ",\"stack\":[");
	for (i = 0; i < t->nr && o->rc == 0; i++) {
		strbuf_addstr(b, i ? "," : "");
		if (t->v[i].stack == FF_NONE)
			strbuf_addstr(b, "null");
		else
			strbuf_addu(b, t->v[i].stack);
		ff_out_maybe(o);
	}
	strbuf_addstr(b, "],\"time\":[");
	for (i = 0; i < t->nr && o->rc == 0; i++) {
		strbuf_addstr(b, i ? "," : "");
		ff_ms(b, t->v[i].time - ff->t0);
		ff_out_maybe(o);
	}
	/* a clock's period: the CPU time since the thread's last sample */
	if (ff->meta.cpu_ns) {
		strbuf_addstr(b, "],\"threadCPUDelta\":[");
		ff_periods(o, t);
	}
	strbuf_addstr(b, "]},");
	ff_markers(ff, o, t);
	strbuf_addch(b, '}');
}

int firefox_write(struct firefox *ff, int fd, struct err *err)
{
	struct ff_out o = { .fd = fd, .err = err };
	size_t i, j, end;

	strbuf_init(&o.out);
	/*
	 * zlib level 1 (gzpar.c): the default (6) took a third of the
	 * conversion's CPU time on make bench's large capture (0.36 s
	 * against 0.26), for a file 14% smaller (0.92 MB against 1.07).
	 */
	if (ff_settle(ff) < 0)
		return err_set(err, ERR_NOMEM, ERR_NO_OFF, "Firefox profile");
	if (!ff->opts.plain &&
	    !(o.gz = gzpar_open(fd, "Firefox profile", true, err)))
		return -1;
	if (ff->nr_threads > 1)
		qsort(ff->threads, ff->nr_threads, sizeof(*ff->threads),
		      ff_thread_cmp);
	ff_prepare(ff);
	ff_meta(ff, &o);
	ff_libs(ff, &o);
	ff_shared(ff, &o);
	strbuf_addstr(&o.out, "\"threads\":[");
	/* threads sorted by pid: a process at a time, which starts with
	 * its first thread, ends with its main thread's exit and is named
	 * after its main thread */
	for (i = 0; i < ff->nr_threads && o.rc == 0; i = end) {
		uint64_t pstart = UINT64_MAX, pend = UINT64_MAX;
		const char *pname = NULL;

		for (end = i; end < ff->nr_threads &&
		     ff->threads[end]->pid == ff->threads[i]->pid; end++) {
			const struct ff_thread *t = ff->threads[end];

			pstart = MIN(pstart, t->start);
			if (t->tid == t->pid) {
				pname = strtab_str(&ff->strs, t->comm);
				if (t->ended)
					pend = t->end;
			}
		}
		for (j = i; j < end && o.rc == 0; j++) {
			if (j)
				strbuf_addch(&o.out, ',');
			ff_thread_json(ff, &o, ff->threads[j], pstart, pend,
				       pname);
			ff_out_maybe(&o);
		}
	}
	strbuf_addstr(&o.out, "]}\n");
	if (o.gz) {
		/* after a failure too: it stops the thread, frees */
		int rc = gzpar_finish(o.gz, &o.out);

		if (!o.rc)
			o.rc = rc;
	} else {
		ff_out_send(&o);
	}
	strbuf_release(&o.out);
	free(o.mk);
	return o.rc;
}
