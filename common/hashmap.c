/*
 * hashmap.c - linear-probing u64 -> pointer map with backward-shift
 * deletion (no tombstones).
 */
#include <stdlib.h>

#include "common/hashmap.h"
#include "common/mem.h"

static void hm_insert(struct hashmap *m, uint64_t key, void *val)
{
	size_t i;

	for (i = hashmap_index(m, key);; i = (i + 1) & (m->cap - 1)) {
		struct hashmap_slot *s = &m->slots[i];

		if (!s->used) {
			s->used = true;
			s->key = key;
			s->val = val;
			m->nr++;
			return;
		}
		if (s->key == key) {
			s->val = val;
			return;
		}
	}
}

static int hm_resize(struct hashmap *m, size_t cap)
{
	struct hashmap_slot *old = m->slots;
	size_t old_cap = m->cap, i;

	m->slots = mem_zalloc(cap, sizeof(*m->slots));
	if (!m->slots) {
		m->slots = old;
		return -1;
	}
	m->cap = cap;
	m->shift = 64 - (unsigned)__builtin_ctzll((unsigned long long)cap);
	m->nr = 0;
	for (i = 0; i < old_cap; i++)
		if (old[i].used)
			hm_insert(m, old[i].key, old[i].val);
	free(old);
	return 0;
}

int hashmap_put(struct hashmap *m, uint64_t key, void *val)
{
	if ((m->nr + 1) * 4 > m->cap * 3 &&
	    hm_resize(m, m->cap ? m->cap * 2 : 16) < 0)
		return -1;
	hm_insert(m, key, val);
	return 0;
}

bool hashmap_del(struct hashmap *m, uint64_t key)
{
	size_t i, j, k;

	if (!m->cap)
		return false;
	for (i = hashmap_index(m, key);; i = (i + 1) & (m->cap - 1)) {
		if (!m->slots[i].used)
			return false;
		if (m->slots[i].key == key)
			break;
	}
	/* Shift later members of the probe run back into the hole. */
	for (j = i;;) {
		m->slots[i].used = false;
		for (;;) {
			j = (j + 1) & (m->cap - 1);
			if (!m->slots[j].used)
				goto done;
			k = hashmap_index(m, m->slots[j].key);
			if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
				continue;
			break;
		}
		m->slots[i] = m->slots[j];
		i = j;
	}
done:
	m->nr--;
	return true;
}

void hashmap_release(struct hashmap *m)
{
	free(m->slots);
	m->slots = NULL;
	m->cap = m->nr = 0;
	m->shift = 0;
}

bool hashmap_iter(const struct hashmap *m, size_t *pos, uint64_t *key,
		  void **val)
{
	while (*pos < m->cap) {
		const struct hashmap_slot *s = &m->slots[(*pos)++];

		if (s->used) {
			if (key)
				*key = s->key;
			if (val)
				*val = s->val;
			return true;
		}
	}
	return false;
}
