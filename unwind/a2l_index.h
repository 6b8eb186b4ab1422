/*
 * a2l_index.h - addr2line's function tables of a whole file, kept in the
 * DWARF cache's directory (dwcache.h) between runs.
 *
 * Finding an address's compile unit through libdw (dwarf_addrdie()) makes
 * libdw read every unit header of the file first, and libc's 2000 units
 * cost a short run 3 ms, and as much again to free; each unit's table is
 * then built by walking its DIEs.  So the first run that names inline
 * frames of a file with a build-id makes the map from addresses to units
 * that dwarf_addrdie() follows, builds the tables of the units it looks
 * addresses up in, and stores them with the map as
 * DIR/<build-id>-<size>.a2l (when the file's state is freed); a later run
 * maps that file and needs no libdw for the file, but for a unit with no
 * table yet, which it builds from the unit's DIE offset and stores again
 * with the others (or for an address in a unit with neither a function
 * nor a symbol for it: then only the line table tells whether addr2line
 * finds anything).  Building every unit's table instead took libc's
 * first run 500 M instructions for the few units a profile touches.
 * Workers that build units of one file each store what they built; the
 * last one's file stays, and the next run builds what it lacks.
 *
 * The map is exact: dwarf_addrdie() searches the sorted address ranges by
 * comparing an address with each range's start, start + 1 and end, so
 * its answer is the same between consecutive such points; the index asks
 * libdw once at each point and keeps the answers as intervals.
 *
 * An index carries its build-id, the size of the file it was made from
 * and the version of the rules that made it; a file that does not match
 * or is cut is not used, and every offset in it is checked before use.
 * Nothing here changes what a run outputs.
 *
 * Ownership: a2l_index_load() returns a mapping the caller frees with
 * a2l_index_free(); it is read-only.
 */
#ifndef RESTACK_UNWIND_A2L_INDEX_H
#define RESTACK_UNWIND_A2L_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "unwind/dwcache.h"

struct a2l_cu;
struct a2l_index;

/* What an index is found by: the file whose DWARF it was made from. */
struct a2l_index_src {
	uint8_t bid[64];
	uint32_t bid_len;
	uint64_t raw_size;
};

/* One interval of the address map: [start, next one's start) is in unit
 * cu (a number into the stored units), or in none (-1). */
struct a2l_index_ivl {
	uint64_t start;
	int64_t cu;
};

/* The stored index of src, or NULL. */
struct a2l_index *a2l_index_load(const struct a2l_index_src *src);

void a2l_index_free(struct a2l_index *x);

/* Whether the index of src is stored, by its header and size (so that its
 * DWARF need not be decompressed ahead: unwind/warmup.c). */
bool a2l_index_present(const struct a2l_index_src *src);

/* The unit number of address addr, or -1 when dwarf_addrdie() finds none. */
int64_t a2l_index_find(const struct a2l_index *x, uint64_t addr);
/* The same in a map of nr intervals. */
int64_t a2l_index_ivl_find(const struct a2l_index_ivl *ivl, size_t nr,
			   uint64_t addr);

/*
 * Unit cu's table into *out (arrays owned by *out, names in the index's
 * mapping); false when the stored unit is not whole or not built.
 */
bool a2l_index_unit(const struct a2l_index *x, int64_t cu,
		    struct a2l_cu *out);

/*
 * Whether unit's table is stored (runs store the tables of the units they
 * looked addresses up in, not all); *die_off is the offset of its unit's
 * DIE in .debug_info either way, where libdw finds it.
 */
bool a2l_index_has_unit(const struct a2l_index *x, int64_t unit,
			uint64_t *die_off);

/* The units of x, and its address map (nr intervals). */
size_t a2l_index_nr_units(const struct a2l_index *x);
const struct a2l_index_ivl *a2l_index_map(const struct a2l_index *x,
					  size_t *nr);

/*
 * Storing the index of src takes two steps: a2l_index_begin() creates its
 * file, false without a cache or when the file cannot be created (nothing
 * to finish then).  a2l_index_store() writes nr_ivl intervals (by start)
 * and nr_cus units, each with its DIE offset and its table, NULL when it
 * is not built, into f and finishes it; with ivl NULL it drops the file.
 * Failures only count (dwcache.h).
 */
bool a2l_index_begin(const struct a2l_index_src *src,
		     struct dwcache_file *f);
void a2l_index_store(struct dwcache_file *f, const struct a2l_index_src *src,
		     const struct a2l_index_ivl *ivl, size_t nr_ivl,
		     const struct a2l_cu *const *cus, const uint64_t *die_offs,
		     size_t nr_cus);

/* Whether an index of src could be stored: a cache directory exists. */
bool a2l_index_wanted(void);

#endif
