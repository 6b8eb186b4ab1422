/*
 * symbundle.c - names carried by the capture (see symbundle.h).
 */
#include <stdlib.h>
#include <string.h>

#include "unwind/symbundle.h"

#include "common/bsearch.h"
#include "common/mem.h"

struct symbundle_table {
	struct symbundle_sym *syms;
	size_t nr, alloc;
	bool unsorted;
};

void symbundle_init(struct symbundle *b)
{
	memset(b, 0, sizeof(*b));
}

void symbundle_release(struct symbundle *b)
{
	size_t pos = 0;
	uint64_t key;
	void *v;

	while (hashmap_iter(&b->by_pid, &pos, &key, &v)) {
		struct symbundle_table *t = v;

		free(t->syms);
		free(t);
	}
	hashmap_release(&b->by_pid);
	arena_release(&b->arena);
}

int symbundle_add(struct symbundle *b, int32_t pid, uint64_t start,
		  uint64_t len, const char *name)
{
	struct symbundle_table *t;
	struct symbundle_sym *s;
	void *v;

	if (!len || start + len < start)
		return 0;
	if (hashmap_get(&b->by_pid, (uint32_t)pid, &v)) {
		t = v;
	} else {
		t = calloc(1, sizeof(*t));
		if (!t || hashmap_put(&b->by_pid, (uint32_t)pid, t) < 0) {
			free(t);
			return -1;
		}
	}
	if (mem_grow(&t->syms, &t->alloc, sizeof(*t->syms), t->nr + 1) < 0)
		return -1;
	s = &t->syms[t->nr];
	s->start = start;
	s->end = start + len;
	s->name = arena_strdup(&b->arena, name);
	if (!s->name)
		return -1;
	if (t->nr && start < t->syms[t->nr - 1].start)
		t->unsorted = true;
	t->nr++;
	b->entries++;
	return 0;
}

static int symbundle_cmp(const void *a, const void *b)
{
	const struct symbundle_sym *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

#define SYMBUNDLE_START(s) ((s)->start)
UPPER_BOUND_DEFINE(symbundle_upper, struct symbundle_sym, SYMBUNDLE_START)

const struct symbundle_sym *symbundle_lookup(struct symbundle *b,
					     int32_t pid, uint64_t addr)
{
	struct symbundle_table *t;
	size_t k;
	void *v;

	if (!hashmap_get(&b->by_pid, (uint32_t)pid, &v))
		return NULL;
	t = v;
	if (t->unsorted) {
		/* stable for equal starts is not needed: the bundle's
		 * records do not overlap */
		qsort(t->syms, t->nr, sizeof(*t->syms), symbundle_cmp);
		t->unsorted = false;
	}
	k = symbundle_upper(t->syms, t->nr, addr);
	if (!k || addr >= t->syms[k - 1].end)
		return NULL;
	return &t->syms[k - 1];
}
