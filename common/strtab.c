/*
 * strtab.c - interned strings (see strtab.h).
 */
#include <stdlib.h>
#include <string.h>

#include "common/hashmap.h"
#include "common/mem.h"
#include "common/strtab.h"

struct strtab_entry {
	struct strtab_entry *next;   /* same hash */
	uint32_t id;
	size_t len;
	char text[];
};

void strtab_init(struct strtab *t)
{
	memset(t, 0, sizeof(*t));
}

void strtab_release(struct strtab *t)
{
	hashmap_release(&t->map);
	arena_release(&t->arena);
	free(t->str);
	strtab_init(t);
}


int64_t strtab_addn(struct strtab *t, const char *s, size_t len)
{
	struct strtab_entry *e, *first = NULL;
	uint64_t h = hashmap_fnv(HASHMAP_FNV_SEED, s, len);
	void *v;

	if (hashmap_get(&t->map, h, &v))
		first = v;
	for (e = first; e; e = e->next)
		if (e->len == len && !memcmp(e->text, s, len))
			return e->id;
	if (t->nr >= UINT32_MAX ||
	    mem_grow(&t->str, &t->alloc, sizeof(*t->str), t->nr + 1) < 0)
		return -1;
	e = arena_alloc(&t->arena, sizeof(*e) + len + 1);
	if (!e)
		return -1;
	memcpy(e->text, s, len);
	e->text[len] = '\0';
	e->len = len;
	e->id = (uint32_t)t->nr;
	e->next = first;
	if (hashmap_put(&t->map, h, e) < 0)
		return -1;
	t->str[t->nr] = e->text;
	return (int64_t)t->nr++;
}

int64_t strtab_add(struct strtab *t, const char *s)
{
	return strtab_addn(t, s, strlen(s));
}
