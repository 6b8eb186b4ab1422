/*
 * speedscope.c - the speedscope writer (see speedscope.h).
 *
 * Frames and stacks are interned (a stack is its list of frame ids, root
 * first); each thread keeps its (stack, weight) samples in arrival order.
 */
#include <stdlib.h>
#include <string.h>

#include "formats/fdout.h"
#include "formats/folded.h"
#include "formats/speedscope.h"
#include "formats/textesc.h"

#include "common/arena.h"
#include "common/hashmap.h"
#include "common/mem.h"
#include "common/msort.h"
#include "common/strbuf.h"
#include "common/strtab.h"

struct ss_stack {
	struct ss_stack *next;    /* same hash */
	uint32_t id, nr;
	uint32_t frames[];        /* root first */
};

struct ss_sample {
	uint32_t stack;
	uint64_t weight;
	uint64_t order;           /* rsample.order */
} __attribute__((packed));

struct ss_thread {
	int32_t pid, tid;
	uint32_t comm;            /* names id */
	uint64_t first_time, total;
	uint64_t first_order;     /* the order of first_time's sample */
	struct ss_sample *v;      /* as they came; when written in order,
				   * consecutive identical stacks merged */
	size_t nr, alloc;
	bool unsorted;            /* some came after one of a later order */
};

struct speedscope {
	struct speedscope_opts opts;
	char *name;
	struct strtab frames;     /* "name\0module" -> frame id */
	struct strtab names;      /* comm and event names */
	struct arena arena;       /* stacks */
	struct hashmap stack_map; /* hash -> ss_stack chain */
	struct ss_stack **stacks; /* id -> stack */
	size_t nr_stacks, stacks_alloc;
	struct hashmap thread_map;/* hash of (pid, tid, comm) -> ss_thread */
	struct ss_thread **threads;
	size_t nr_threads, threads_alloc;
	uint32_t *cur;            /* scratch: the sample's frame ids */
	size_t cur_alloc;
	struct strbuf buf;
	uint32_t event;
	bool any;
	uint64_t t0;              /* first sample's time */
};

struct speedscope *speedscope_new(const struct speedscope_opts *opts)
{
	struct speedscope *ss = mem_zalloc(1, sizeof(*ss));

	if (!ss)
		return NULL;
	if (opts)
		ss->opts = *opts;
	ss->name = mem_strdup(ss->opts.name ? ss->opts.name : "restack");
	ss->opts.name = ss->name;
	if (!ss->name) {
		free(ss);
		return NULL;
	}
	return ss;
}

void speedscope_free(struct speedscope *ss)
{
	size_t i;

	if (!ss)
		return;
	for (i = 0; i < ss->nr_threads; i++) {
		free(ss->threads[i]->v);
		free(ss->threads[i]);
	}
	free(ss->threads);
	free(ss->stacks);
	free(ss->cur);
	free(ss->name);
	strtab_release(&ss->frames);
	strtab_release(&ss->names);
	arena_release(&ss->arena);
	hashmap_release(&ss->stack_map);
	hashmap_release(&ss->thread_map);
	strbuf_release(&ss->buf);
	free(ss);
}

/* Appends frame "name\0module" (module may be NULL) to ss->cur[*n]. */
static int ss_frame(struct speedscope *ss, size_t *n, const char *module)
{
	int64_t id;

	strbuf_addch(&ss->buf, '\0');
	if (module)
		strbuf_addstr(&ss->buf, module);
	if (ss->buf.oom ||
	    mem_grow(&ss->cur, &ss->cur_alloc, sizeof(*ss->cur), *n + 1) < 0)
		return -1;
	id = strtab_addn(&ss->frames, ss->buf.buf, ss->buf.len);
	if (id < 0)
		return -1;
	ss->cur[(*n)++] = (uint32_t)id;
	strbuf_reset(&ss->buf);
	return 0;
}

/* The id of the stack ss->cur[0..n), interned. */
static int64_t ss_stack(struct speedscope *ss, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ n;
	struct ss_stack *st, *first = NULL;
	size_t i;
	void *v;

	for (i = 0; i < n; i++)
		h = hashmap_mix(h ^ ss->cur[i]);
	if (hashmap_get(&ss->stack_map, h, &v))
		first = v;
	for (st = first; st; st = st->next)
		if (st->nr == n &&
		    (!n || !memcmp(st->frames, ss->cur, n * sizeof(*ss->cur))))
			return st->id;
	if (ss->nr_stacks >= UINT32_MAX ||
	    mem_grow(&ss->stacks, &ss->stacks_alloc, sizeof(*ss->stacks),
		     ss->nr_stacks + 1) < 0)
		return -1;
	st = arena_alloc(&ss->arena, sizeof(*st) + n * sizeof(st->frames[0]));
	if (!st)
		return -1;
	st->id = (uint32_t)ss->nr_stacks;
	st->nr = (uint32_t)n;
	if (n)
		memcpy(st->frames, ss->cur, n * sizeof(*ss->cur));
	st->next = first;
	if (hashmap_put(&ss->stack_map, h, st) < 0)
		return -1;
	ss->stacks[ss->nr_stacks] = st;
	return (int64_t)ss->nr_stacks++;
}

static struct ss_thread *ss_thread(struct speedscope *ss,
				   const struct rsample *s)
{
	int64_t comm = strtab_add(&ss->names, s->comm);
	struct ss_thread *t;
	uint64_t key;
	void *v;

	if (comm < 0)
		return NULL;
	key = hashmap_mix((uint64_t)(uint32_t)s->pid << 32 |
			  (uint32_t)s->tid) ^ (uint64_t)comm;
	/* Keys are hashes: check the thread is this one; on a clash
	 * probe the next key. */
	while (hashmap_get(&ss->thread_map, key, &v)) {
		t = v;
		if (t->pid == s->pid && t->tid == s->tid &&
		    t->comm == (uint32_t)comm)
			return t;
		key++;
	}
	t = mem_zalloc(1, sizeof(*t));
	if (!t || mem_grow(&ss->threads, &ss->threads_alloc,
			   sizeof(*ss->threads), ss->nr_threads + 1) < 0 ||
	    hashmap_put(&ss->thread_map, key, t) < 0) {
		free(t);
		return NULL;
	}
	t->pid = s->pid;
	t->tid = s->tid;
	t->comm = (uint32_t)comm;
	t->first_time = s->time;
	t->first_order = s->order;
	ss->threads[ss->nr_threads++] = t;
	return t;
}

int speedscope_add(struct speedscope *ss, const struct rsample *s)
{
	uint64_t w = ss->opts.period ? s->period : rsample_count(s);
	const char *marker = rsample_marker(s);
	struct ss_thread *t;
	size_t n = 0;
	int64_t stack;
	uint32_t i;

	if (!ss->any) {
		int64_t ev = strtab_add(&ss->names, s->event ? s->event : "");

		if (ev < 0)
			return -1;
		ss->event = (uint32_t)ev;
		ss->t0 = s->time;
		ss->any = true;
	}
	ss->t0 = MIN(ss->t0, s->time);
	t = ss_thread(ss, s);
	if (!t)
		return -1;
	strbuf_reset(&ss->buf);
	if (marker) {
		strbuf_addstr(&ss->buf, marker);
		if (ss_frame(ss, &n, NULL) < 0)
			return -1;
	}
	for (i = s->nr_frames; i-- > 0;) {
		const struct sym_loc *l = s->frames[i].loc;
		bool kernel = i < s->nr_kernel;
		int e;

		for (e = (int)l->nr - 1; e >= 0; e--) {
			folded_entry_name(&ss->buf, l, (unsigned)e, kernel);
			if (ss_frame(ss, &n, l->kind == SYM_UNKNOWN ? NULL :
					     l->module) < 0)
				return -1;
		}
	}
	stack = ss_stack(ss, n);
	if (stack < 0)
		return -1;
	t->total += w;
	if (s->order < t->first_order) {
		t->first_time = s->time;
		t->first_order = s->order;
	}
	if (t->nr && s->order < t->v[t->nr - 1].order)
		t->unsorted = true;
	/*
	 * The same stack right after (no sample of the input between: none
	 * that comes late can go between them) is merged at once; others
	 * when written.
	 */
	if (t->nr && s->order == t->v[t->nr - 1].order + 1 &&
	    t->v[t->nr - 1].stack == (uint32_t)stack) {
		t->v[t->nr - 1].weight += w;
		t->v[t->nr - 1].order = s->order;
		return 0;
	}
	if (mem_grow(&t->v, &t->alloc, sizeof(*t->v), t->nr + 1) < 0)
		return -1;
	t->v[t->nr].stack = (uint32_t)stack;
	t->v[t->nr].weight = w;
	t->v[t->nr++].order = s->order;
	return 0;
}

static bool ss_sample_before(const struct ss_sample *a,
			     const struct ss_sample *b)
{
	return a->order < b->order;
}

MSORT_DEFINE(ss_sort_samples, struct ss_sample, ss_sample_before)

/*
 * A thread's samples in order (those a second pass completed came last),
 * consecutive identical stacks merged.  0, or -1 when out of memory.
 */
static int ss_settle(struct ss_thread *t)
{
	struct ss_sample *tmp;
	size_t i, n = 0;

	if (t->unsorted) {
		tmp = mem_zalloc(t->nr / 2 + 1, sizeof(*tmp));
		if (!tmp)
			return -1;
		ss_sort_samples(t->v, t->nr, tmp);
		free(tmp);
		t->unsorted = false;
	}
	for (i = 0; i < t->nr; i++) {
		if (n && t->v[n - 1].stack == t->v[i].stack)
			t->v[n - 1].weight += t->v[i].weight;
		else
			t->v[n++] = t->v[i];
	}
	t->nr = n;
	return 0;
}

static int ss_thread_cmp(const void *a, const void *b, void *names)
{
	const struct ss_thread *x = *(const struct ss_thread *const *)a;
	const struct ss_thread *y = *(const struct ss_thread *const *)b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return strcmp(strtab_str(names, x->comm), strtab_str(names, y->comm));
}

static bool ss_clock_event(const char *event)
{
	size_t n = strcspn(event, ":");

	return (n == 9 && !strncmp(event, "cpu-clock", n)) ||
	       (n == 10 && !strncmp(event, "task-clock", n));
}

static int ss_flush(struct strbuf *out, int fd, struct err *err)
{
	int rc;

	if (out->oom)
		return err_set(err, ERR_NOMEM, ERR_NO_OFF, "speedscope profile");
	rc = fdout_write(fd, out->buf, out->len, "speedscope profile", err);
	strbuf_reset(out);
	return rc;
}

static void ss_profile(struct speedscope *ss, struct strbuf *out,
		       const struct ss_thread *t, bool ns)
{
	uint64_t start = ns ? t->first_time - ss->t0 : 0;
	size_t i, j;

	strbuf_addstr(out, "{\"type\":\"sampled\",\"name\":");
	strbuf_reset(&ss->buf);
	strbuf_addf(&ss->buf, "%s %d/%d", strtab_str(&ss->names, t->comm),
		    t->pid, t->tid);
	textesc_json(out, strbuf_str(&ss->buf));
	strbuf_addf(out, ",\"unit\":\"%s\",\"startValue\":%llu,"
		    "\"endValue\":%llu,\"samples\":[", ns ? "nanoseconds" : "none",
		    (unsigned long long)start,
		    (unsigned long long)(start + t->total));
	for (i = 0; i < t->nr; i++) {
		const struct ss_stack *st = ss->stacks[t->v[i].stack];

		strbuf_addstr(out, i ? ",[" : "[");
		for (j = 0; j < st->nr; j++)
			strbuf_addf(out, j ? ",%u" : "%u", st->frames[j]);
		strbuf_addch(out, ']');
	}
	strbuf_addstr(out, "],\"weights\":[");
	for (i = 0; i < t->nr; i++)
		strbuf_addf(out, i ? ",%llu" : "%llu",
			    (unsigned long long)t->v[i].weight);
	strbuf_addstr(out, "]}");
}

int speedscope_write(struct speedscope *ss, int fd, struct err *err)
{
	struct strbuf out = STRBUF_INIT;
	const char *event = ss->any ? strtab_str(&ss->names, ss->event) : "";
	bool ns = ss->opts.period && (ss->opts.ns || ss_clock_event(event));
	size_t i, heaviest = 0;
	int rc = 0;

	for (i = 0; i < ss->nr_threads; i++)
		if (ss_settle(ss->threads[i]) < 0)
			return err_set(err, ERR_NOMEM, ERR_NO_OFF,
				       "speedscope profile");
	if (ss->nr_threads > 1)
		qsort_r(ss->threads, ss->nr_threads, sizeof(*ss->threads),
			ss_thread_cmp, &ss->names);
	for (i = 1; i < ss->nr_threads; i++)
		if (ss->threads[i]->total > ss->threads[heaviest]->total)
			heaviest = i;
	strbuf_addstr(&out, "{\"$schema\":\"https://www.speedscope.app/"
		      "file-format-schema.json\",\"exporter\":\"restack\","
		      "\"name\":");
	textesc_json(&out, ss->name);
	strbuf_addf(&out, ",\"activeProfileIndex\":%zu,\"shared\":{\"frames\":[",
		    heaviest);
	for (i = 0; i < ss->frames.nr && rc == 0; i++) {
		const char *name = strtab_str(&ss->frames, (uint32_t)i);
		const char *module = name + strlen(name) + 1;

		strbuf_addstr(&out, i ? ",{\"name\":" : "{\"name\":");
		textesc_json(&out, name);
		if (*module) {
			strbuf_addstr(&out, ",\"file\":");
			textesc_json(&out, module);
		}
		strbuf_addch(&out, '}');
		if (out.len >= 65536)
			rc = ss_flush(&out, fd, err);
	}
	strbuf_addstr(&out, "]},\"profiles\":[");
	for (i = 0; i < ss->nr_threads && rc == 0; i++) {
		if (i)
			strbuf_addch(&out, ',');
		ss_profile(ss, &out, ss->threads[i], ns);
		if (out.len >= 65536)
			rc = ss_flush(&out, fd, err);
	}
	strbuf_addstr(&out, "]}\n");
	if (rc == 0)
		rc = ss_flush(&out, fd, err);
	strbuf_release(&out);
	return rc;
}
