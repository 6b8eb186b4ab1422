/*
 * run_warm.c - which debug files a run gives its warmup thread before its
 * first sample (see unwind/warmup.h and run_internal.h).
 *
 * A first run's thread needs the kernel's symbols and libc's DWARF within
 * its first samples, and each takes longer than most of the run.  With
 * both known at the start, the warmup thread inflates the DWARF while the
 * run's thread reads the kernel's symbols; found only when the first
 * frame in libc is named, the two come one after the other.  perf lists
 * by build-id only the files that samples' own addresses hit, so libc,
 * whose start functions are the outermost frames of every thread's stack
 * but which is seldom sampled in, is often not listed: the C library the
 * capture maps is found by reading its first records.  Not the other
 * files it maps: most have no frame on any stack (a run inflated libm's
 * DWARF for nothing on the python3 capture), and their first frames are
 * seen early enough (each module's DWARF is queued when it is loaded).
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/run_internal.h"

#include "common/mem.h"
#include "common/regfile.h"
#include "unwind/locate.h"
#include "unwind/warmup.h"

/* How far into its data a capture is read for the files it maps. */
#define RUN_WARM_SCAN_BYTES ((uint64_t)2 << 20)
/* The most files taken from there. */
#define RUN_WARM_MAX_FILES 256

/* The recorded names done with, so each file is looked for once. */
struct run_warm_seen {
	const char *names[RUN_WARM_MAX_FILES];
	unsigned nr;
};

/*
 * What the warmup thread's job works with, made on the run's thread: the
 * reader there adds to its build-id list as it reads (MMAP2 records with
 * build-ids), so the job never looks at it.
 */
struct run_warm {
	struct run *run;
	uint64_t data_offset;
	struct run_warm_seen seen;
};

/* Whether name was seen; notes it if not (false when full: stop). */
static bool run_warm_seen(struct run_warm_seen *seen, const char *name,
			  bool *full)
{
	unsigned i;

	for (i = 0; i < seen->nr; i++)
		if (!strcmp(seen->names[i], name))
			return true;
	*full = seen->nr == RUN_WARM_MAX_FILES ||
		!(seen->names[seen->nr] = mem_strdup(name));
	if (!*full)
		seen->nr++;
	return false;
}

/* The first candidate of kind (locate.h) that is a regular file. */
static bool run_warm_locate(const struct locate_opts *loc,
			    enum locate_kind kind, const char *recorded,
			    const uint8_t *bid, unsigned n, char *path,
			    size_t size)
{
	struct locate_iter it = { 0 };
	const char *from;
	struct stat st;

	while (locate_next(loc, kind, recorded, bid, n, &it, path, size,
			   &from))
		if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
			return true;
	return false;
}

/* Queues the debug file of the module recorded at name with build-id bid. */
static void run_warm_debug(struct run *run, struct warmup *w,
			   const char *name, const uint8_t *bid, unsigned n)
{
	char path[PATH_MAX];

	if (run_warm_locate(&run->lookup.loc, LOCATE_DEBUG, name, bid, n,
			    path, sizeof(path)))
		warmup_dwarf(w, path);
}

void run_warm_listed(struct run *run, const struct perfdata_info *in)
{
	unsigned i;

	if (!run->warmup)
		return;
	for (i = 0; i < in->nr_build_ids; i++) {
		const struct perfdata_build_id *b = &in->build_ids[i];

		/* PERF_RECORD_MISC_USER */
		if ((b->cpumode & 7) == 2 && b->size && b->filename &&
		    !locate_is_special(b->filename))
			run_warm_debug(run, run->warmup, b->filename,
				       b->build_id, b->size);
	}
}

/* Whether the file recorded at path is the C library (libc.so.6). */
static bool run_warm_is_libc(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strncmp(base, "libc.so", 7) || !strncmp(base, "libc-", 5);
}

/*
 * One mapping of the capture's: the debug file of what it maps, when it
 * maps user code of the C library not seen yet.  The build-id is the
 * record's, or that of the file at the recorded path when the file is
 * the one mapped (same inode): another version's DWARF would only cost
 * time and memory.  Returns false when no more files are taken.
 */
static bool run_warm_map(struct run *run, struct warmup *w,
			 const struct event_mmap *m,
			 struct run_warm_seen *seen)
{
	char exe[PATH_MAX];
	uint8_t bid[20];
	struct stat st;
	bool full = false;
	int n;

	if ((m->cpumode & 7) != 2 || !m->executable || !m->filename ||
	    !run_warm_is_libc(m->filename) ||
	    run_warm_seen(seen, m->filename, &full))
		return !full;
	if (m->build_id_size) {
		run_warm_debug(run, w, m->filename, m->build_id,
			       m->build_id_size);
		return true;
	}
	if (!run_warm_locate(&run->lookup.loc, LOCATE_EXE, m->filename, NULL,
			     0, exe, sizeof(exe)))
		return true;
	if (m->has_inode && !strcmp(exe, m->filename) &&
	    (stat(exe, &st) || st.st_ino != m->ino))
		return true;
	n = locate_elf_build_id(exe, bid, sizeof(bid));
	if (n > 0)
		run_warm_debug(run, w, m->filename, bid, (unsigned)n);
	return true;
}

/* The warmup thread's job (warmup_fn): run_warm_map() on the first maps. */
static void run_warm_mapped_job(void *ctx, struct warmup *w)
{
	struct run_warm *rw = ctx;
	struct run *run = rw->run;
	const struct perfdata_opts po = { .file_order = true };
	struct perfdata_reader *rd = NULL;
	struct event ev;
	struct err err;
	/* never a FIFO put in the file's place since: open() would wait */
	int fd = regfile_open(run->path, NULL);

	if (fd >= 0)
		rd = perfdata_open_fd(fd, run->path, &po, &err);
	while (rd && !warmup_stopping(w) && perfdata_next(rd, &ev) > 0 &&
	       ev.file_off < rw->data_offset + RUN_WARM_SCAN_BYTES)
		if (ev.type == EVENT_MMAP &&
		    !run_warm_map(run, w, &ev.mmap, &rw->seen))
			break;
	if (rd)
		perfdata_close(rd);
	if (fd >= 0)
		close(fd);
}

void run_warm_mapped(struct run *run, const struct perfdata_info *in)
{
	struct run_warm *rw;
	unsigned i;
	bool full = false;

	if (!run->warmup || source_format(run->rd) != SOURCE_PERFDATA ||
	    in->pipe || in->file_size == UINT64_MAX || !strcmp(run->path, "-"))
		return;
	rw = run->warm = mem_zalloc(1, sizeof(*rw));
	if (!rw)
		return;
	rw->run = run;
	rw->data_offset = in->data_offset;
	/* the listed ones are queued already (run_warm_listed()) */
	for (i = 0; i < in->nr_build_ids && !full; i++)
		if ((in->build_ids[i].cpumode & 7) == 2 &&
		    in->build_ids[i].filename)
			(void)run_warm_seen(&rw->seen,
					    in->build_ids[i].filename, &full);
	warmup_call(run->warmup, run_warm_mapped_job, rw);
}

void run_warm_free(struct run *run)
{
	unsigned i;

	if (!run->warm)
		return;
	for (i = 0; i < run->warm->seen.nr; i++)
		free((char *)run->warm->seen.names[i]);
	free(run->warm);
	run->warm = NULL;
}
