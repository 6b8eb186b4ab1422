/*
 * a2lstate.c - bfd's memory of function names, replayed in output order
 * (a2lstate.h).
 */
#include <string.h>

#include "unwind/a2lstate.h"

/* What bfd knows of one function without a DWARF linkage name. */
struct a2ls_func {
	uint64_t module, low;
	uint32_t idx;
	bool looked_up;         /* it was the function found at an address */
	const char *renamed;    /* the symbol it was renamed to, or NULL */
};

/* The names perf gave one address. */
struct a2ls_loc {
	uint64_t module, rel;
	const struct sym_loc *loc;
};

void a2lstate_init(struct a2lstate *st)
{
	memset(st, 0, sizeof(*st));
}

void a2lstate_release(struct a2lstate *st)
{
	hashmap_release(&st->funcs);
	hashmap_release(&st->locs);
	arena_release(&st->arena);
	memset(st, 0, sizeof(*st));
}

/*
 * The entry of a function (module, low, idx), made on first use; keys
 * that collide are told apart by the fields and probed linearly.  NULL
 * when out of memory.
 */
static struct a2ls_func *a2ls_func(struct a2lstate *st, uint64_t module,
				   uint64_t low, uint32_t idx)
{
	uint64_t key = hashmap_mix(module ^ hashmap_mix(low ^
							hashmap_mix(idx)));
	struct a2ls_func *f;
	void *v;

	for (;; key++) {
		if (!hashmap_get(&st->funcs, key, &v))
			break;
		f = v;
		if (f->module == module && f->low == low && f->idx == idx)
			return f;
	}
	f = arena_alloc(&st->arena, sizeof(*f));
	if (!f)
		return NULL;
	memset(f, 0, sizeof(*f));
	f->module = module;
	f->low = low;
	f->idx = idx;
	return hashmap_put(&st->funcs, key, f) < 0 ? NULL : f;
}

/* The names for l's address, as perf's first question about it got. */
static const struct sym_loc *a2ls_make(struct a2lstate *st,
				       const struct sym_loc *l)
{
	const struct sym_a2l *d = l->a2l;
	struct sym_loc *c;
	unsigned i;

	c = arena_alloc(&st->arena, sizeof(*c) + l->nr * sizeof(c->e[0]));
	if (!c)
		return NULL;
	memcpy(c, l, sizeof(*c) + l->nr * sizeof(c->e[0]));
	c->a2l = NULL;
	for (i = 0; i < l->nr; i++) {
		struct a2ls_func *f;

		if (!d->e[i].stateful)
			continue;
		f = a2ls_func(st, d->module, d->e[i].low, d->e[i].idx);
		if (!f)
			return NULL;
		if (i == 0 && !f->looked_up) {
			/* its first lookup: the symbol table's name */
			c->e[0].name = d->first;
			f->looked_up = true;
			f->renamed = d->renames ? d->first : NULL;
		} else {
			c->e[i].name = f->renamed ? f->renamed : d->e[i].dwarf;
		}
		c->e[i].inlined = strcmp(c->e[i].name, d->real) != 0;
	}
	return c;
}

const struct sym_loc *a2lstate_loc(struct a2lstate *st,
				   const struct sym_loc *l)
{
	uint64_t module, key;
	struct a2ls_loc *s;
	void *v;

	if (!l || !l->a2l)
		return l;
	module = l->a2l->module;
	key = hashmap_mix(module ^ hashmap_mix(l->rel));
	for (;; key++) {
		if (!hashmap_get(&st->locs, key, &v))
			break;
		s = v;
		if (s->module == module && s->rel == l->rel)
			return s->loc;
	}
	s = arena_alloc(&st->arena, sizeof(*s));
	if (!s)
		return NULL;
	s->module = module;
	s->rel = l->rel;
	s->loc = a2ls_make(st, l);
	if (!s->loc || hashmap_put(&st->locs, key, s) < 0)
		return NULL;
	return s->loc;
}
