/*
 * aspace.c - threads, processes and copy-on-write mapping snapshots.
 *
 * Only executable mappings are kept (the unwinder needs code, not data),
 * but every mapping, data or not, removes what it overlaps: a region
 * remapped as data is no longer code.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/aspace.h"

#include "common/base.h"
#include "common/bsearch.h"
#include "common/mem.h"
#include "unwind/module.h"

/* PROT_EXEC as recorded in MMAP2 */
#define AS_PROT_EXEC 4

void aspace_init(struct aspace *as, struct modcache *mc)
{
	memset(as, 0, sizeof(*as));
	as->mc = mc;
}

static struct aspace_maps *maps_new(uint32_t nr)
{
	struct aspace_maps *m = mem_zalloc(1, sizeof(*m) +
					   (size_t)nr * sizeof(m->m[0]));

	if (m)
		m->refs = 1;
	return m;
}

void aspace_maps_get(struct aspace_maps *maps)
{
	if (maps)
		maps->refs++;
}

void aspace_maps_put(struct aspace_maps *maps)
{
	if (maps && --maps->refs == 0)
		free(maps);
}

void aspace_release(struct aspace *as)
{
	size_t pos = 0;
	void *v;

	while (hashmap_iter(&as->procs, &pos, NULL, &v)) {
		struct aspace_proc *p = v;

		aspace_maps_put(p->maps);
		free(p);
	}
	pos = 0;
	while (hashmap_iter(&as->threads, &pos, NULL, &v))
		free(v);
	hashmap_release(&as->procs);
	hashmap_release(&as->threads);
	arena_release(&as->arena);
}

static struct aspace_proc *aspace_proc(struct aspace *as, int32_t pid)
{
	struct aspace_proc *p;
	void *v;

	if (hashmap_get(&as->procs, (uint64_t)(uint32_t)pid, &v))
		return v;
	p = mem_zalloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	p->maps = maps_new(0);
	if (!p->maps ||
	    hashmap_put(&as->procs, (uint64_t)(uint32_t)pid, p) < 0) {
		free(p->maps);
		free(p);
		return NULL;
	}
	as->stats.procs++;
	return p;
}

struct aspace_maps *aspace_proc_maps(struct aspace *as, int32_t pid)
{
	struct aspace_proc *p = aspace_proc(as, pid);

	return p ? p->maps : NULL;
}

struct aspace_thread *aspace_thread(struct aspace *as, int32_t pid,
				    int32_t tid)
{
	struct aspace_thread *t;
	char name[24];
	void *v;

	if (hashmap_get(&as->threads, (uint64_t)(uint32_t)tid, &v)) {
		t = v;
		if (pid >= 0 && t->pid < 0)
			t->pid = pid;
		return t;
	}
	t = mem_zalloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->tid = tid;
	t->pid = pid;
	/* perf names a thread it never saw a COMM for ":tid". */
	snprintf(name, sizeof(name), ":%d", tid);
	t->comm = arena_strdup(&as->arena, name);
	if (!t->comm ||
	    hashmap_put(&as->threads, (uint64_t)(uint32_t)tid, t) < 0) {
		free(t);
		return NULL;
	}
	as->stats.threads++;
	return t;
}

/*
 * A copy of old with [start, end) removed and, when add is set, *add
 * inserted.  Returns NULL when out of memory.
 */
static struct aspace_maps *maps_replace(const struct aspace_maps *old,
					uint64_t start, uint64_t end,
					const struct aspace_map *add)
{
	struct aspace_maps *n = maps_new(old->nr + 2);
	uint32_t i, k = 0;
	bool added = false;

	if (!n)
		return NULL;
	for (i = 0; i < old->nr; i++) {
		struct aspace_map m = old->m[i];

		if (add && !added && add->start < m.start) {
			n->m[k++] = *add;
			added = true;
		}
		if (m.end <= start || m.start >= end) {
			n->m[k++] = m;
			continue;
		}
		if (m.start < start) {       /* keep the left part */
			struct aspace_map l = m;

			l.end = start;
			n->m[k++] = l;
		}
		if (add && !added && add->start < end) {
			n->m[k++] = *add;
			added = true;
		}
		if (m.end > end) {           /* keep the right part */
			struct aspace_map r = m;

			r.pgoff += end - m.start;
			r.start = end;
			n->m[k++] = r;
		}
	}
	if (add && !added)
		n->m[k++] = *add;
	n->nr = k;
	return n;
}

/*
 * The module name of an executable mapping: anonymous memory (JIT code)
 * is named "/tmp/perf-PID.map" after the perf map that names its code, as
 * perf does (its map__new(): "//anon", "/dev/zero", "/anon_hugepage",
 * "[stack...", "[heap]", "/SYSV..."), so a process's JIT code is one
 * module of its own.  buf holds the name made.
 */
static const char *aspace_map_name(const struct event *ev, char *buf,
				   size_t size)
{
	static const char *const anon[] = {
		"//anon", "/dev/zero", "/anon_hugepage", "[stack", "/SYSV",
	};
	const char *f = ev->mmap.filename;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(anon); i++)
		if (!strncmp(f, anon[i], strlen(anon[i])))
			break;
	if (i == ARRAY_SIZE(anon) && strcmp(f, "[heap]"))
		return f;
	snprintf(buf, size, "/tmp/perf-%d.map", (int)ev->pid);
	return buf;
}

static int aspace_mmap(struct aspace *as, const struct event *ev)
{
	char name[32];
	const struct event_mmap *mm = &ev->mmap;
	struct aspace_proc *p;
	struct aspace_maps *n;
	struct aspace_map add;
	bool exec;

	as->stats.mmaps++;
	if (mm->cpumode == EVENT_MODE_KERNEL || ev->pid < 0 || !mm->len ||
	    mm->start + mm->len < mm->start)
		return 0;
	exec = mm->is_mmap2 && mm->prot ? (mm->prot & AS_PROT_EXEC) != 0 :
					  mm->executable;
	p = aspace_proc(as, ev->pid);
	if (!p)
		return -1;
	memset(&add, 0, sizeof(add));
	if (exec) {
		add.start = mm->start;
		add.end = mm->start + mm->len;
		add.pgoff = mm->pgoff;
		add.mod = modcache_get(as->mc,
				       aspace_map_name(ev, name, sizeof(name)),
				       mm->build_id,
				       mm->build_id_size,
				       ((uint64_t)mm->maj << 32) | mm->min,
				       mm->ino);
		if (!add.mod)
			return -1;
		module_note_pgoff(add.mod, mm->pgoff);
		as->stats.mmaps_exec++;
	}
	n = maps_replace(p->maps, mm->start, mm->start + mm->len,
			 exec ? &add : NULL);
	if (!n)
		return -1;
	aspace_maps_put(p->maps);
	p->maps = n;
	return 0;
}

int aspace_event(struct aspace *as, const struct event *ev)
{
	struct aspace_thread *t, *parent;
	struct aspace_proc *p, *pp;

	switch (ev->type) {
	case EVENT_MMAP:
		return aspace_mmap(as, ev);
	case EVENT_COMM:
		as->stats.comms++;
		t = aspace_thread(as, ev->pid, ev->tid);
		if (!t)
			return -1;
		t->comm = arena_strdup(&as->arena, ev->comm.comm);
		if (!t->comm)
			return -1;
		if (ev->comm.exec) {
			/* exec: a new, empty address space */
			as->stats.execs++;
			p = aspace_proc(as, ev->pid);
			if (!p)
				return -1;
			aspace_maps_put(p->maps);
			p->maps = maps_new(0);
			if (!p->maps)
				return -1;
		}
		return 0;
	case EVENT_FORK:
		as->stats.forks++;
		parent = aspace_thread(as, ev->fork.ppid, ev->fork.ptid);
		t = aspace_thread(as, ev->pid, ev->tid);
		if (!parent || !t)
			return -1;
		t->pid = ev->pid;
		t->comm = parent->comm;
		t->exited = false;
		if (ev->pid != ev->fork.ppid) {
			/* a new process: it starts with the parent's maps */
			pp = aspace_proc(as, ev->fork.ppid);
			p = aspace_proc(as, ev->pid);
			if (!pp || !p)
				return -1;
			aspace_maps_put(p->maps);
			p->maps = pp->maps;
			aspace_maps_get(p->maps);
		}
		return 0;
	case EVENT_EXIT:
		as->stats.exits++;
		t = aspace_thread(as, ev->pid, ev->tid);
		if (!t)
			return -1;
		t->exited = true;
		return 0;
	default:
		return 0;
	}
}

#define ASPACE_MAP_START(m) ((m)->start)
UPPER_BOUND_DEFINE(aspace_upper, struct aspace_map, ASPACE_MAP_START)

const struct aspace_map *aspace_maps_find(const struct aspace_maps *maps,
					  uint64_t addr)
{
	size_t lo;

	if (!maps)
		return NULL;
	lo = aspace_upper(maps->m, maps->nr, addr);
	if (lo == 0 || addr >= maps->m[lo - 1].end)
		return NULL;
	return &maps->m[lo - 1];
}
