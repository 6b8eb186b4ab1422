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
	unsigned shift; /* 64 - log2(cap): the hash's top bits index */
};

#define HASHMAP_INIT { NULL, 0, 0, 0 }

static inline uint64_t hashmap_mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

/* FNV-1a: HASHMAP_FNV_SEED, then hashmap_fnv() over each piece of a key. */
#define HASHMAP_FNV_SEED 0xcbf29ce484222325ULL

static inline uint64_t hashmap_fnv(uint64_t h, const void *data, size_t n)
{
	const uint8_t *p = data;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return h;
}

/* hashmap_fnv() of a NUL-terminated string (without the NUL). */
static inline uint64_t hashmap_fnv_str(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 0x100000001b3ULL;
	return h;
}

/* The home slot of key: Fibonacci hashing, one multiply. */
static inline size_t hashmap_index(const struct hashmap *m, uint64_t key)
{
	return (size_t)((key * 0x9e3779b97f4a7c15ULL) >> m->shift);
}

/* Finds key; returns true and sets *val when present. */
static inline bool hashmap_get(const struct hashmap *m, uint64_t key,
			       void **val)
{
	size_t i;

	if (!m->cap)
		return false;
	for (i = hashmap_index(m, key);; i = (i + 1) & (m->cap - 1)) {
		const struct hashmap_slot *s = &m->slots[i];

		if (!s->used)
			return false;
		if (s->key == key) {
			if (val)
				*val = s->val;
			return true;
		}
	}
}

/* Inserts or replaces; returns 0, or -1 when out of memory. */
int hashmap_put(struct hashmap *m, uint64_t key, void *val);
/* Removes key if present; returns true when it was. */
bool hashmap_del(struct hashmap *m, uint64_t key);
void hashmap_release(struct hashmap *m);

/* Iteration: for (i = 0; hashmap_iter(m, &i, &key, &val);) ... */
bool hashmap_iter(const struct hashmap *m, size_t *pos, uint64_t *key,
		  void **val);

#endif
