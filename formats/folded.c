/*
 * folded.c - the folded-stack writer.
 *
 * Distinct stacks are kept in a hash table (key: the whole line without
 * its count) and written sorted at the end.  In front of it, a table of
 * stacks as the resolver hands them (thread name, frames by symbol
 * location) points to their line, so a stack seen before is counted
 * without building its text again.  Symbol locations are unique per
 * (module, address) and live as long as their symbolizer, which outlives
 * the samples added here.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats/folded.h"
#include "formats/fdout.h"

#include "common/arena.h"
#include "common/hashmap.h"
#include "common/mem.h"
#include "common/strbuf.h"

struct folded_line {
	struct folded_line *next;   /* hash chain */
	uint64_t count;
	uint32_t len;
	char text[];
};

/* A resolved stack whose line is known. */
struct folded_raw {
	struct folded_raw *next;    /* hash chain */
	struct folded_line *line;
	const char *comm;           /* copy */
	const char *marker;         /* rsample_marker(), a constant */
	int32_t pid, tid;           /* 0 unless --pid / --tid */
	uint32_t nr, nr_kernel;
	struct folded_raw_frame {
		const struct sym_loc *loc;
		uint8_t origin;     /* 0 unless annotating */
	} f[];
};

/* Memory the table of resolved stacks may take; beyond, text only. */
#define FOLDED_RAW_MAX (32u << 20)

struct folded {
	struct folded_opts opts;
	struct hashmap raws;         /* hash -> first folded_raw */
	size_t raw_bytes;
	struct hashmap lines;        /* hash -> first folded_line */
	struct hashmap names;        /* folded_name_key() -> folded_name */
	struct arena arena;          /* the lines */
	struct arena by_loc;         /* raws and names: what is keyed by
				      * symbol locations */
	struct strbuf buf;
	uint64_t nr;
};

struct folded *folded_new(const struct folded_opts *opts)
{
	struct folded *f = mem_zalloc(1, sizeof(*f));

	if (f && opts)
		f->opts = *opts;
	return f;
}

void folded_free(struct folded *f)
{
	if (!f)
		return;
	hashmap_release(&f->lines);
	hashmap_release(&f->raws);
	hashmap_release(&f->names);
	arena_release(&f->arena);
	arena_release(&f->by_loc);
	strbuf_release(&f->buf);
	free(f);
}

int folded_each(const struct folded *f,
		int (*fn)(void *ctx, const char *text, size_t len,
			  uint64_t count), void *ctx)
{
	const struct folded_line *l;
	size_t pos = 0;
	void *v;
	int rc;

	while (hashmap_iter(&f->lines, &pos, NULL, &v))
		for (l = v; l; l = l->next)
			if ((rc = fn(ctx, l->text, l->len, l->count)))
				return rc;
	return 0;
}

void folded_forget_locs(struct folded *f)
{
	hashmap_release(&f->raws);
	hashmap_release(&f->names);
	arena_release(&f->by_loc);
	f->raw_bytes = 0;
}

const struct folded_opts *folded_opts_of(const struct folded *f)
{
	return &f->opts;
}

uint64_t folded_count(const struct folded *f)
{
	return f->nr;
}

/* Appends name, tidied the way stackcollapse-perf.pl does. */
/* Whether name has ".(...)." in it, as Go method names do. */
static bool folded_go_method(const char *name)
{
	const char *open = strstr(name, ".(");

	return open && strstr(open + 2, ").");
}

static void folded_name(struct strbuf *sb, const char *name)
{
	const char *end = name + strlen(name), *paren = name;

	/* Everything from the first '(' that does not open "(anonymous
	 * namespace)" is argument noise, except in Go method names. */
	if (!folded_go_method(name)) {
		while ((paren = strchr(paren, '('))) {
			if (strncmp(paren, "(anonymous namespace)", 21)) {
				end = paren;
				break;
			}
			paren++;
		}
	}
	for (; name < end; name++) {
		if (*name == '"' || *name == '\'')
			continue;
		strbuf_addch(sb, *name == ';' ? ':' : *name);
	}
}

static void folded_module(struct strbuf *sb, const char *module)
{
	const char *base = strrchr(module, '/');

	strbuf_addch(sb, '[');
	folded_name(sb, base ? base + 1 : module);
	strbuf_addch(sb, ']');
}

void folded_entry_name(struct strbuf *sb, const struct sym_loc *l,
		       unsigned i, bool kernel)
{
	if (l->e[i].name)
		folded_name(sb, l->e[i].name);
	else if (l->kind == SYM_UNKNOWN || !l->module)
		strbuf_addstr(sb, "[unknown]");
	else if (kernel)
		strbuf_addstr(sb, "[kernel]");
	else
		folded_module(sb, l->module);
}

/* The text folded_entry_name() gives an entry, kept once made. */
struct folded_name {
	uint32_t len;
	char text[];
};

/* Entries are unique by location, index (< 64) and kernel flag. */
static uint64_t folded_name_key(const struct sym_loc *l, unsigned i,
				bool kernel)
{
	return (uint64_t)(uintptr_t)l << 8 | (uint64_t)i << 1 | kernel;
}

/* Appends entry i of l, as folded_entry_name() would; -1: no memory. */
static int folded_add_entry(struct folded *f, const struct sym_loc *l,
			    unsigned i, bool kernel)
{
	uint64_t key = folded_name_key(l, i, kernel);
	struct folded_name *n;
	size_t start;
	void *v;

	if (hashmap_get(&f->names, key, &v)) {
		n = v;
		strbuf_add(&f->buf, n->text, n->len);
		return 0;
	}
	start = f->buf.len;
	folded_entry_name(&f->buf, l, i, kernel);
	if (f->buf.oom)
		return -1;
	n = arena_alloc(&f->by_loc, sizeof(*n) + f->buf.len - start);
	if (!n)
		return -1;
	n->len = (uint32_t)(f->buf.len - start);
	memcpy(n->text, f->buf.buf + start, n->len);
	return hashmap_put(&f->names, key, n);
}

static int folded_frame(struct folded *f, const struct rframe *fr,
			bool kernel)
{
	const struct sym_loc *l = fr->loc;
	int i;

	for (i = (int)l->nr - 1; i >= 0; i--) {
		strbuf_addch(&f->buf, ';');
		if (folded_add_entry(f, l, (unsigned)i, kernel) < 0)
			return -1;
		if (!f->opts.annotate)
			continue;
		if (kernel)
			strbuf_addstr(&f->buf, "_[k]");
		else if (l->e[i].inlined)
			strbuf_addstr(&f->buf, "_[i]");
		else if (l->kind == SYM_JIT)
			strbuf_addstr(&f->buf, "_[j]");
		else if (fr->origin == FRAME_FP)
			strbuf_addstr(&f->buf, "_[fp]");
		else if (fr->origin == FRAME_STITCHED)
			strbuf_addstr(&f->buf, "_[s]");
		else if (fr->origin == FRAME_SCAN)
			strbuf_addstr(&f->buf, "_[scan]");
		else if (fr->origin == FRAME_STUB)
			strbuf_addstr(&f->buf, "_[stub]");
		else if (fr->origin == FRAME_GOPCLNTAB)
			strbuf_addstr(&f->buf, "_[go]");
	}
	return 0;
}


/* The identity of s's folded line, as far as the raw table keeps it. */
static uint64_t folded_raw_hash(const struct folded *f,
				const struct rsample *s, int32_t pid,
				int32_t tid, const char *marker)
{
	uint64_t h = hashmap_fnv(HASHMAP_FNV_SEED, s->comm, strlen(s->comm));
	uint32_t i;

	h = hashmap_mix(h ^ (uint64_t)(uint32_t)pid ^
			((uint64_t)(uint32_t)tid << 32));
	h = hashmap_mix(h ^ (uintptr_t)marker ^ s->nr_kernel);
	/* one multiply per frame: the table mixes the result again */
	for (i = 0; i < s->nr_frames; i++) {
		h = (h ^ (uintptr_t)s->frames[i].loc ^
		     (f->opts.annotate ? s->frames[i].origin : 0)) *
		    0x9e3779b97f4a7c15ULL;
		h ^= h >> 29;
	}
	return h;
}

static bool folded_raw_same(const struct folded *f,
			    const struct folded_raw *r,
			    const struct rsample *s, int32_t pid, int32_t tid,
			    const char *marker)
{
	uint32_t i;

	if (r->nr != s->nr_frames || r->nr_kernel != s->nr_kernel ||
	    r->pid != pid || r->tid != tid || r->marker != marker ||
	    strcmp(r->comm, s->comm))
		return false;
	for (i = 0; i < r->nr; i++)
		if (r->f[i].loc != s->frames[i].loc ||
		    (f->opts.annotate && r->f[i].origin != s->frames[i].origin))
			return false;
	return true;
}

/* Remembers that s folds to line (unless the table is full). */
static int folded_raw_add(struct folded *f, const struct rsample *s,
			  uint64_t h, int32_t pid, int32_t tid,
			  const char *marker, struct folded_line *line)
{
	size_t comm = strlen(s->comm) + 1;
	size_t size = sizeof(struct folded_raw) +
		      s->nr_frames * sizeof(struct folded_raw_frame);
	struct folded_raw *r;
	uint32_t i;
	void *v;

	if (f->raw_bytes + size + comm > FOLDED_RAW_MAX)
		return 0;
	r = arena_alloc(&f->by_loc, size);
	if (!r)
		return -1;
	r->comm = arena_alloc(&f->by_loc, comm);
	if (!r->comm)
		return -1;
	memcpy((char *)r->comm, s->comm, comm);
	r->line = line;
	r->marker = marker;
	r->pid = pid;
	r->tid = tid;
	r->nr = s->nr_frames;
	r->nr_kernel = s->nr_kernel;
	for (i = 0; i < r->nr; i++) {
		r->f[i].loc = s->frames[i].loc;
		r->f[i].origin = f->opts.annotate ? s->frames[i].origin : 0;
	}
	r->next = hashmap_get(&f->raws, h, &v) ? v : NULL;
	if (hashmap_put(&f->raws, h, r) < 0)
		return -1;
	f->raw_bytes += size + comm;
	return 0;
}

/* The line for the text in f->buf, counted w more times. */
static struct folded_line *folded_line_add(struct folded *f, uint64_t w)
{
	struct folded_line *l, *first = NULL;
	uint64_t h = hashmap_fnv(HASHMAP_FNV_SEED, f->buf.buf, f->buf.len);
	void *v;

	if (hashmap_get(&f->lines, h, &v))
		first = v;
	for (l = first; l; l = l->next) {
		if (l->len == f->buf.len &&
		    !memcmp(l->text, f->buf.buf, f->buf.len)) {
			l->count += w;
			return l;
		}
	}
	l = arena_alloc(&f->arena, sizeof(*l) + f->buf.len + 1);
	if (!l)
		return NULL;
	memcpy(l->text, f->buf.buf, f->buf.len + 1);
	l->len = (uint32_t)f->buf.len;
	l->count = w;
	l->next = first;
	if (hashmap_put(&f->lines, h, l) < 0)
		return NULL;
	f->nr++;
	return l;
}

int folded_add(struct folded *f, const struct rsample *s)
{
	uint64_t w = f->opts.period ? s->period : rsample_count(s), rh;
	int32_t pid = f->opts.tid || f->opts.pid ? s->pid : 0;
	int32_t tid = f->opts.tid ? s->tid : 0;
	const char *marker = rsample_marker(s);
	struct folded_line *line;
	struct folded_raw *r;
	uint32_t i;
	void *v;

	rh = folded_raw_hash(f, s, pid, tid, marker);
	if (hashmap_get(&f->raws, rh, &v)) {
		for (r = v; r; r = r->next) {
			if (folded_raw_same(f, r, s, pid, tid, marker)) {
				r->line->count += w;
				return 0;
			}
		}
	}
	strbuf_reset(&f->buf);
	if (f->opts.tid)
		strbuf_addf(&f->buf, "%s-%d/%d", s->comm, s->pid, s->tid);
	else if (f->opts.pid)
		strbuf_addf(&f->buf, "%s-%d", s->comm, s->pid);
	else
		strbuf_addstr(&f->buf, s->comm);
	for (i = 0; i < f->buf.len; i++)
		if (f->buf.buf[i] == ' ')
			f->buf.buf[i] = '_';
	if (marker) {
		strbuf_addch(&f->buf, ';');
		strbuf_addstr(&f->buf, marker);
	}
	for (i = s->nr_frames; i-- > 0;)
		if (folded_frame(f, &s->frames[i], i < s->nr_kernel) < 0)
			return -1;
	if (f->buf.oom)
		return -1;
	line = folded_line_add(f, w);
	if (!line)
		return -1;
	return folded_raw_add(f, s, rh, pid, tid, marker, line);
}

int folded_merge(struct folded *f, const struct folded *src)
{
	const struct folded_line *l;
	size_t pos = 0;
	void *v;

	while (hashmap_iter(&src->lines, &pos, NULL, &v)) {
		for (l = v; l; l = l->next) {
			strbuf_reset(&f->buf);
			strbuf_add(&f->buf, l->text, l->len);
			if (f->buf.oom || !folded_line_add(f, l->count))
				return -1;
		}
	}
	return 0;
}

static int folded_line_cmp(const void *a, const void *b)
{
	const struct folded_line *x = *(const struct folded_line *const *)a;
	const struct folded_line *y = *(const struct folded_line *const *)b;
	size_t n = MIN(x->len, y->len);
	int c = memcmp(x->text, y->text, n);

	if (c)
		return c;
	return x->len < y->len ? -1 : x->len > y->len;
}


int folded_write(struct folded *f, int fd, struct err *err)
{
	struct folded_line **all, *l;
	size_t n = 0, pos = 0, i;
	void *v;
	int rc = 0;

	all = mem_zalloc(f->nr ? f->nr : 1, sizeof(*all));
	if (!all)
		return err_set(err, ERR_NOMEM, ERR_NO_OFF, "folded output");
	while (hashmap_iter(&f->lines, &pos, NULL, &v))
		for (l = v; l; l = l->next)
			all[n++] = l;
	qsort(all, n, sizeof(*all), folded_line_cmp);
	strbuf_reset(&f->buf);
	for (i = 0; i < n && rc == 0; i++) {
		strbuf_add(&f->buf, all[i]->text, all[i]->len);
		strbuf_addf(&f->buf, " %llu\n",
			    (unsigned long long)all[i]->count);
		if (f->buf.len >= 65536)
			rc = fdout_flush(fd, &f->buf, "folded stacks", err);
	}
	if (rc == 0)
		rc = fdout_flush(fd, &f->buf, "folded stacks", err);
	free(all);
	return rc;
}
