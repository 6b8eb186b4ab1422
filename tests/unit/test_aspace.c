/*
 * test_aspace.c - the process model: mappings over time from MMAP, FORK,
 * COMM (exec) and EXIT events.
 */
#include <string.h>

#include "tests/harness.h"
#include "unwind/aspace.h"
#include "unwind/module.h"

static struct event ev_mmap(int pid, uint64_t start, uint64_t len,
			    uint64_t pgoff, uint32_t prot, const char *file)
{
	struct event ev;

	memset(&ev, 0, sizeof(ev));
	ev.type = EVENT_MMAP;
	ev.pid = ev.tid = pid;
	ev.mmap.start = start;
	ev.mmap.len = len;
	ev.mmap.pgoff = pgoff;
	ev.mmap.prot = prot;
	ev.mmap.is_mmap2 = true;
	ev.mmap.executable = prot & 4;
	ev.mmap.cpumode = EVENT_MODE_USER;
	ev.mmap.filename = file;
	return ev;
}

static struct event ev_task(enum event_type type, int pid, int tid, int ppid,
			    int ptid)
{
	struct event ev;

	memset(&ev, 0, sizeof(ev));
	ev.type = type;
	ev.pid = pid;
	ev.tid = tid;
	ev.fork.ppid = ppid;
	ev.fork.ptid = ptid;
	return ev;
}

static struct event ev_comm(int pid, int tid, const char *comm, bool exec)
{
	struct event ev;

	memset(&ev, 0, sizeof(ev));
	ev.type = EVENT_COMM;
	ev.pid = pid;
	ev.tid = tid;
	ev.comm.comm = comm;
	ev.comm.exec = exec;
	return ev;
}

static const char *path_at(struct aspace *as, int pid, uint64_t addr)
{
	const struct aspace_map *m =
		aspace_maps_find(aspace_proc_maps(as, pid), addr);

	return m ? m->mod->path : "(none)";
}

int main(void)
{
	struct modcache mc;
	struct aspace as;
	struct event ev;
	struct aspace_maps *snap;
	const struct aspace_map *m;

	modcache_init(&mc, NULL);
	aspace_init(&as, &mc);

	ev = ev_mmap(100, 0x1000, 0x3000, 0, 5, "/bin/a");
	CHECK(aspace_event(&as, &ev) == 0, "mmap accepted");
	ev = ev_mmap(100, 0x10000, 0x1000, 0x2000, 5, "/lib/b.so");
	aspace_event(&as, &ev);
	CHECK_STR(path_at(&as, 100, 0x1000), "/bin/a", "start of a mapping");
	CHECK_STR(path_at(&as, 100, 0x3fff), "/bin/a", "last byte");
	CHECK_STR(path_at(&as, 100, 0x4000), "(none)", "end is exclusive");
	CHECK_STR(path_at(&as, 100, 0x10800), "/lib/b.so", "second mapping");
	m = aspace_maps_find(aspace_proc_maps(&as, 100), 0x10800);
	CHECK_EQ_U64(m->pgoff, 0x2000, "pgoff kept");

	/* A data mapping over the middle of /bin/a splits it. */
	ev = ev_mmap(100, 0x2000, 0x1000, 0, 3, "//anon");
	aspace_event(&as, &ev);
	CHECK_STR(path_at(&as, 100, 0x1fff), "/bin/a", "left part kept");
	CHECK_STR(path_at(&as, 100, 0x2000), "(none)", "data mapping is no code");
	CHECK_STR(path_at(&as, 100, 0x3000), "/bin/a", "right part kept");
	m = aspace_maps_find(aspace_proc_maps(&as, 100), 0x3000);
	CHECK_EQ_U64(m->pgoff, 0x2000, "right part's pgoff moves with it");

	/* A process forks: the child sees the parent's maps, then diverges. */
	snap = aspace_proc_maps(&as, 100);
	aspace_maps_get(snap);
	ev = ev_task(EVENT_FORK, 200, 200, 100, 100);
	aspace_event(&as, &ev);
	CHECK_STR(path_at(&as, 200, 0x1000), "/bin/a", "child inherits maps");
	ev = ev_mmap(200, 0x1000, 0x1000, 0, 5, "/bin/c");
	aspace_event(&as, &ev);
	CHECK_STR(path_at(&as, 200, 0x1000), "/bin/c", "child's new mapping");
	CHECK_STR(path_at(&as, 100, 0x1000), "/bin/a", "parent unchanged");
	CHECK(aspace_maps_find(snap, 0x1000) &&
	      !strcmp(aspace_maps_find(snap, 0x1000)->mod->path, "/bin/a"),
	      "a held snapshot does not change");
	aspace_maps_put(snap);

	/* exec: a new, empty address space; the name follows. */
	ev = ev_comm(200, 200, "newprog", true);
	aspace_event(&as, &ev);
	CHECK_STR(path_at(&as, 200, 0x1000), "(none)", "exec empties the maps");
	CHECK_STR(aspace_thread(&as, 200, 200)->comm, "newprog",
		  "exec sets the name");

	/* A thread: same process, inherits the parent thread's name. */
	ev = ev_comm(100, 100, "main", false);
	aspace_event(&as, &ev);
	ev = ev_task(EVENT_FORK, 100, 101, 100, 100);
	aspace_event(&as, &ev);
	CHECK_STR(aspace_thread(&as, 100, 101)->comm, "main",
		  "a new thread has its parent's name");
	CHECK_STR(path_at(&as, 100, 0x1000), "/bin/a",
		  "a thread does not change the maps");
	CHECK_STR(aspace_thread(&as, 300, 301)->comm, ":301",
		  "an unknown thread is named :tid, as perf does");
	ev = ev_task(EVENT_EXIT, 100, 101, 100, 100);
	aspace_event(&as, &ev);
	CHECK(aspace_thread(&as, 100, 101)->exited, "exit is recorded");

	/* The same file maps to one module entry. */
	ev = ev_mmap(300, 0x5000, 0x1000, 0, 5, "/lib/b.so");
	aspace_event(&as, &ev);
	CHECK(aspace_maps_find(aspace_proc_maps(&as, 300), 0x5000)->mod ==
		      aspace_maps_find(aspace_proc_maps(&as, 100), 0x10000)->mod,
	      "one module per file, shared by processes");

	aspace_release(&as);
	modcache_release(&mc);
	return done_testing();
}
