/*
 * strtab.h - interned strings with stable ids.
 *
 * Each distinct string (bytes, NUL allowed only as terminator) gets the
 * next id, 0, 1, 2, ... in the order strings are first added, and one
 * copy owned by the table.  Profile writers use it for their frame and
 * string tables.
 */
#ifndef RESTACK_COMMON_STRTAB_H
#define RESTACK_COMMON_STRTAB_H

#include <stddef.h>
#include <stdint.h>

#include "common/arena.h"
#include "common/hashmap.h"

struct strtab {
	struct hashmap map;      /* hash -> first entry with that hash */
	struct arena arena;      /* the entries and their text */
	const char **str;        /* id -> text */
	size_t nr, alloc;
};

#define STRTAB_INIT { HASHMAP_INIT, ARENA_INIT, NULL, 0, 0 }

void strtab_init(struct strtab *t);
/* Frees the contents; the table can be used again. */
void strtab_release(struct strtab *t);

/* The id of s (added when new), or -1 when out of memory. */
int64_t strtab_add(struct strtab *t, const char *s);
int64_t strtab_addn(struct strtab *t, const char *s, size_t len);

/* The text of id (< t->nr); lives as long as the table. */
static inline const char *strtab_str(const struct strtab *t, uint32_t id)
{
	return t->str[id];
}

#endif
