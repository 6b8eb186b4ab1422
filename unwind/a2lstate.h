/*
 * a2lstate.h - inline chains named as perf names them over a whole run:
 * perf asks one addr2line process per file about each address once, in
 * the order it prints samples (time order, each stack from the leaf), and
 * bfd remembers what earlier questions taught it (unwind/a2l.h, struct
 * a2l_deps).  The symbolizers, one per worker, name addresses as on their
 * functions' first lookups and say what the names depend on; handing the
 * samples out in order, a2lstate_loc() replays bfd's memory and gives each
 * address the names perf gave it the first time it asked.  The same
 * output whatever the number of workers.
 *
 * Ownership: the state owns the locations it makes (valid until
 * a2lstate_release()); their strings belong to the symbolizers' locations
 * they came from, which must live as long.  Not thread-safe: one caller
 * at a time, in output order.
 */
#ifndef RESTACK_UNWIND_A2LSTATE_H
#define RESTACK_UNWIND_A2LSTATE_H

#include "common/arena.h"
#include "common/hashmap.h"
#include "common/stack.h"

struct a2lstate {
	struct hashmap funcs;   /* function -> struct a2ls_func */
	struct hashmap locs;    /* (module, address) -> struct a2ls_loc */
	struct arena arena;
};

void a2lstate_init(struct a2lstate *st);
void a2lstate_release(struct a2lstate *st);

/*
 * The location to output for l, the next in output order: l itself when
 * its names depend on nothing earlier, else the names perf printed for
 * its address.  NULL when out of memory.
 */
const struct sym_loc *a2lstate_loc(struct a2lstate *st,
				   const struct sym_loc *l);

#endif
