/*
 * hashmap.h - an open-addressing map from u64 keys to pointers.
 *
 * Keys are arbitrary u64 values (the caller mixes composite keys into one,
 * e.g. with hashmap_mix()); NULL values are allowed and distinguishable
 * from absence.  The map owns only its table, not the values.
 */
#ifndef RESTACK_COMMON_HASHMAP_H
#define RESTACK_COMMON_HASHMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hashmap_slot {
	uint64_t key;
	void *val;
	bool used;
};

struct hashmap {
	struct hashmap_slot *slots;
	size_t cap;     /* a power of two, or 0 */
	size_t nr;
};

#define HASHMAP_INIT { NULL, 0, 0 }

static inline uint64_t hashmap_mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

/* Finds key; returns true and sets *val when present. */
bool hashmap_get(const struct hashmap *m, uint64_t key, void **val);
/* Inserts or replaces; returns 0, or -1 when out of memory. */
int hashmap_put(struct hashmap *m, uint64_t key, void *val);
/* Removes key if present; returns true when it was. */
bool hashmap_del(struct hashmap *m, uint64_t key);
void hashmap_release(struct hashmap *m);

/* Iteration: for (i = 0; hashmap_iter(m, &i, &key, &val);) ... */
bool hashmap_iter(const struct hashmap *m, size_t *pos, uint64_t *key,
		  void **val);

#endif
