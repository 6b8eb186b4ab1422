/*
 * jit.h - names for JIT-compiled code: /tmp/perf-PID.map files and jitdump
 * files (jit-PID.dump), read lazily per process.
 *
 * A perf map ("START SIZE name" per line, hex) applies to the process's
 * anonymous executable memory; later lines win.  A jitdump's CODE_LOAD
 * records give a name and a load time per code range; for a sample, the
 * newest load at or before its time wins (the newest overall when the
 * clocks cannot be compared).  Format: shared/reference/stitching-jit.md
 * section 5 (perf's jitdump-specification.txt).
 */
#ifndef RESTACK_UNWIND_JIT_H
#define RESTACK_UNWIND_JIT_H

#include <stdbool.h>
#include <stdint.h>

#include "common/arena.h"
#include "common/hashmap.h"

struct module;

struct jit_sym {
	uint64_t start, end;
	uint64_t time;          /* load time (jitdump), or order (perf map) */
	const char *name;
	const char *module;     /* "/tmp/perf-PID.map": perf's name for the
				 * process's JIT code (the table's) */
	bool from_dump;
	/* jitdump UNWINDING_INFO for this code: .eh_frame bytes laid out
	 * as if at start + ALIGN8(size) (in the table's copy of the dump) */
	const uint8_t *eh_frame;
	uint64_t eh_frame_size;
	uint16_t e_machine;
	struct module *cfi;     /* made on first use by jit_cfi_module() */
	bool cfi_tried;
};

struct jit_index {
	const char *const *dirs; /* where else to look for the files */
	unsigned nr_dirs;
	struct hashmap by_pid;   /* pid -> struct jit_table (or absent) */
	struct hashmap dumps;    /* pid -> recorded jitdump path (arena) */
	struct arena arena;
	uint64_t maps_read, dumps_read, entries;
};

void jit_init(struct jit_index *j, const char *const *dirs, unsigned nr);
void jit_release(struct jit_index *j);

/*
 * An MMAP of path was seen for pid: when it names a jitdump
 * (".../jit-PID.dump"), remember where it is.
 */
int jit_note_mmap(struct jit_index *j, int32_t pid, const char *path);

/*
 * A symbol the input itself names (sysprof's JITMAP): [start, start +
 * len) of process pid is name, beside what its perf map and jitdump say.
 * Returns 0, or -1 when out of memory.
 */
int jit_add_symbol(struct jit_index *j, int32_t pid, uint64_t start,
		   uint64_t len, const char *name);

/*
 * The JIT symbol covering addr in process pid at the given time, or NULL.
 * The result lives as long as the index.
 */
struct jit_sym *jit_lookup(struct jit_index *j, int32_t pid, uint64_t addr,
			   uint64_t time);

/*
 * All of process pid's JIT symbols, sorted by start address (read on
 * first use); returns how many.  They live as long as the index.
 */
size_t jit_symbols(struct jit_index *j, int32_t pid, struct jit_sym **syms);

/*
 * A module holding the CFI a jitdump gave for sym's code (an in-memory
 * ELF with its .eh_frame at the address the writer laid it out for), or
 * NULL when there is none.  Owned by the index.
 */
struct module *jit_cfi_module(struct jit_index *j, struct jit_sym *sym);

#endif
