/*
 * symbolize.h - addresses to function names (with inline chains), each
 * distinct (module, address) resolved once.
 *
 * Names follow `perf script` (perf 6.1 with addr2line-based inline
 * expansion): the ELF symbol perf picks; with inline frames on, the chain
 * addr2line reports when DWARF has a line for the address.  Results are
 * shared struct sym_loc objects that live as long as the symbolizer.
 */
#ifndef RESTACK_UNWIND_SYMBOLIZE_H
#define RESTACK_UNWIND_SYMBOLIZE_H

#include <stdbool.h>
#include <stdint.h>

#include "common/arena.h"
#include "common/hashmap.h"
#include "common/stack.h"

#include <pthread.h>

struct ksyms;
struct module;

/*
 * A kernel symbol table several symbolizers (worker threads) share: read
 * once, by the first that needs it, under the lock; read-only afterwards.
 * The owner initialises it before and releases it after its users.
 */
struct warmup;

struct kallsyms_once {
	pthread_mutex_t lock;
	bool tried;
	struct ksyms *tab;        /* owned */
	char *path;               /* owned */
	/* when set, kallsyms_once_load() leaves storing the index to it
	 * (cleared before it stops) */
	struct warmup *warmup;
};

/* Returns 0, or -1 when out of memory. */
int kallsyms_once_init(struct kallsyms_once *k, const char *path);
void kallsyms_once_release(struct kallsyms_once *k);
/* Reads k's file unless it was: what its first user does.  Thread-safe. */
void kallsyms_once_load(struct kallsyms_once *k);

/*
 * kallsyms_once_load() but for storing the index of the table it read:
 * returns that table when this call read it (the caller then owes it a
 * ksyms_store_index() before kallsyms_once_release()), else NULL.
 */
struct ksyms *kallsyms_once_load_unstored(struct kallsyms_once *k);

struct symbolizer {
	bool inline_frames;
	struct ksyms *kallsyms;     /* owned unless shared; NULL: kernel
				     * frames unnamed */
	struct kallsyms_once *shared; /* where kallsyms comes from, or NULL */
	char *kallsyms_path;        /* read on the first kernel address */
	bool kallsyms_tried;
	struct arena arena;         /* the sym_loc objects */
	struct hashmap kernel;      /* address -> sym_loc */
	struct hashmap other;       /* hash of a path -> unknown sym_loc */
	struct hashmap jit;         /* struct jit_sym -> sym_loc */
	struct hashmap demangled;   /* raw name pointer -> shown name */
	uint64_t lookups;           /* distinct addresses resolved */
};

/*
 * The name perf 6.1 shows for the symbol raw (Rust v0 and legacy, C++),
 * in a string the caller frees, or NULL when raw is not a mangled name
 * (or restack was built without libiberty): then perf shows raw.
 */
char *symbolize_demangle(const char *raw);

void symbolizer_init(struct symbolizer *s, bool inline_frames);
void symbolizer_release(struct symbolizer *s);

/*
 * Names kernel addresses from a kallsyms file, read when the first kernel
 * address needs a name.  Returns 0, or -1 when out of memory.
 */
int symbolizer_set_kallsyms(struct symbolizer *s, const char *path);

/* Takes kernel symbols from k (instead of symbolizer_set_kallsyms). */
void symbolizer_share_kallsyms(struct symbolizer *s, struct kallsyms_once *k);

/* True when the kallsyms file was read (it is read lazily). */
bool symbolizer_has_kallsyms(const struct symbolizer *s);

/*
 * The symbols at ELF address rel of module m (loaded, or not: then the
 * location only names the mapping).  map_path names the mapping.
 * Returns NULL only when out of memory.
 */
const struct sym_loc *symbolize_user(struct symbolizer *s, struct module *m,
				     const char *map_path, uint64_t rel);

/*
 * Whether symbolize_user(s, m, ..., rel) would now wait for another
 * thread to decompress m's DWARF (a2l_would_wait()).
 */
bool symbolize_user_would_wait(struct symbolizer *s, struct module *m,
			       uint64_t rel);

/*
 * Whether symbolize_kernel() would now wait for the kernel symbols: they
 * are shared and another thread reads them, or will (warmup.h).
 */
bool symbolize_kernel_would_wait(struct symbolizer *s);

/* A kernel address. */
const struct sym_loc *symbolize_kernel(struct symbolizer *s, uint64_t addr);

/* An address in no mapping at all. */
const struct sym_loc *symbolize_unmapped(struct symbolizer *s);

/*
 * A frame the input names itself (sysprof's __symbols__), in the mapping
 * of module (which lives for the run) at rel; one location per key.
 */
const struct sym_loc *symbolize_named(struct symbolizer *s,
				      const char *module, uint64_t rel,
				      const void *key, const char *name);

struct jit_sym;

/* A JIT-compiled function (one location per JIT symbol). */
const struct sym_loc *symbolize_jit(struct symbolizer *s,
				    const struct jit_sym *sym);

#endif
