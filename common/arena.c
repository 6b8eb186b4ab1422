/*
 * arena.c - bump allocation in malloc'd chunks.
 */
#include <stdlib.h>
#include <string.h>

#include "common/arena.h"
#include "common/base.h"

struct arena_chunk {
	struct arena_chunk *next;
	size_t used, size;
	_Alignas(8) unsigned char data[];
};

void *arena_alloc(struct arena *a, size_t size)
{
	struct arena_chunk *c = a->head;
	size_t want = ALIGN_UP(size ? size : 1, (size_t)8);
	void *p;

	if (want < size)
		return NULL;
	if (!c || c->size - c->used < want) {
		size_t csize = a->chunk_size ? a->chunk_size : 65536;

		if (want > csize / 4)
			csize = want;
		c = malloc(sizeof(*c) + csize);
		if (!c)
			return NULL;
		c->size = csize;
		c->used = 0;
		a->total += sizeof(*c) + csize;
		if (want == csize && a->head) {
			/* Big object: keep the current chunk for small ones. */
			c->next = a->head->next;
			a->head->next = c;
		} else {
			c->next = a->head;
			a->head = c;
		}
	}
	p = c->data + c->used;
	c->used += want;
	memset(p, 0, want);
	return p;
}

char *arena_strndup(struct arena *a, const char *s, size_t n)
{
	char *d = arena_alloc(a, n + 1);

	if (d) {
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

char *arena_strdup(struct arena *a, const char *s)
{
	return arena_strndup(a, s, strlen(s));
}

void arena_release(struct arena *a)
{
	struct arena_chunk *c = a->head, *n;

	for (; c; c = n) {
		n = c->next;
		free(c);
	}
	a->head = NULL;
	a->total = 0;
}
