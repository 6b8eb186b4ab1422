/*
 * aspace.h - the process model: threads, processes and their address
 * spaces over time, built from COMM, FORK, EXIT and MMAP/MMAP2 events
 * delivered in time order.
 *
 * A process's code mappings form an immutable, refcounted snapshot; an
 * MMAP makes a new one (copy on write), FORK shares the parent's, exec
 * (COMM with the exec flag) starts an empty one.  A sample looks up its
 * process's current snapshot, which stays valid for as long as the caller
 * holds a reference (aspace_maps_get/_put), even while later events change
 * the process.
 */
#ifndef RESTACK_UNWIND_ASPACE_H
#define RESTACK_UNWIND_ASPACE_H

#include <stdbool.h>
#include <stdint.h>

#include "common/arena.h"
#include "common/event.h"
#include "common/hashmap.h"

struct module;
struct modcache;

struct aspace_map {
	uint64_t start, end;    /* [start, end) */
	uint64_t pgoff;         /* file offset of start */
	struct module *mod;     /* from the module cache (not yet loaded) */
};

struct aspace_maps {
	uint32_t refs;
	uint32_t nr;
	struct aspace_map m[];  /* sorted by start, not overlapping */
};

struct aspace_thread {
	int32_t tid, pid;
	const char *comm;       /* in the aspace's arena */
	bool exited;
};

struct aspace_proc {
	int32_t pid;
	struct aspace_maps *maps;
};

struct aspace_stats {
	uint64_t mmaps, mmaps_exec, execs, forks, exits, comms;
	uint64_t procs, threads;
};

struct aspace {
	struct modcache *mc;
	struct hashmap procs;    /* pid -> struct aspace_proc */
	struct hashmap threads;  /* tid -> struct aspace_thread */
	struct arena arena;      /* thread names */
	struct aspace_stats stats;
};

void aspace_init(struct aspace *as, struct modcache *mc);
void aspace_release(struct aspace *as);

/* Applies a COMM, FORK, EXIT or MMAP event; others are ignored. */
int aspace_event(struct aspace *as, const struct event *ev);

/* The thread's record (created on demand, name ":tid"); NULL on OOM. */
struct aspace_thread *aspace_thread(struct aspace *as, int32_t pid,
				    int32_t tid);

/* The process's current mappings (never NULL unless out of memory). */
struct aspace_maps *aspace_proc_maps(struct aspace *as, int32_t pid);

/* The mapping holding addr, or NULL. */
const struct aspace_map *aspace_maps_find(const struct aspace_maps *maps,
					  uint64_t addr);

void aspace_maps_get(struct aspace_maps *maps);
void aspace_maps_put(struct aspace_maps *maps);

#endif
