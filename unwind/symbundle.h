/*
 * symbundle.h - names a capture carries for addresses of its processes'
 * file mappings (sysprof's __symbols__ bundle), used for a frame whose
 * file restack cannot find: the capture was made on another machine.
 *
 * Ownership: the bundle copies the names; lookups return entries that
 * live until symbundle_release().
 */
#ifndef RESTACK_UNWIND_SYMBUNDLE_H
#define RESTACK_UNWIND_SYMBUNDLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/arena.h"
#include "common/hashmap.h"

struct symbundle_sym {
	uint64_t start, end;    /* [start, end) of the process */
	const char *name;
};

struct symbundle {
	struct hashmap by_pid;  /* pid -> struct symbundle_table */
	struct arena arena;     /* the names */
	uint64_t entries;
};

void symbundle_init(struct symbundle *b);
void symbundle_release(struct symbundle *b);

/*
 * [start, start + len) of process pid is name.  Returns 0, or -1 when out
 * of memory.
 */
int symbundle_add(struct symbundle *b, int32_t pid, uint64_t start,
		  uint64_t len, const char *name);

/*
 * The entry covering addr in process pid, or NULL: the last one starting
 * at or below addr, if it reaches addr (the bundle's ranges do not
 * overlap).
 */
const struct symbundle_sym *symbundle_lookup(struct symbundle *b,
					     int32_t pid, uint64_t addr);

#endif
