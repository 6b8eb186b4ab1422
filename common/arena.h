/*
 * arena.h - a bump allocator for objects that live as long as the arena
 * (symbol names, paths, compiled unwind rules).  Nothing is freed singly.
 */
#ifndef RESTACK_COMMON_ARENA_H
#define RESTACK_COMMON_ARENA_H

#include <stddef.h>

struct arena_chunk;

struct arena {
	struct arena_chunk *head;
	size_t chunk_size;  /* default 64 KiB when 0 */
	size_t total;       /* bytes obtained from malloc */
};

#define ARENA_INIT { NULL, 0, 0 }

/* size bytes aligned to 8, zeroed; NULL when out of memory. */
void *arena_alloc(struct arena *a, size_t size);
/* A copy of s in the arena, or NULL. */
char *arena_strdup(struct arena *a, const char *s);
char *arena_strndup(struct arena *a, const char *s, size_t n);
/* Frees every chunk; the arena can be used again. */
void arena_release(struct arena *a);

#endif
