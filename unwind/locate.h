/*
 * locate.h - where to look for a module's files, in order, each candidate
 * to be verified by build-id by the caller (module.c).
 *
 * Runtime file (the executable or library, whose .eh_frame has the CFI):
 *   1. <symfs>/<recorded path>           (--symfs ROOT)
 *   2. the recorded path
 *   3. each perf-style build-id directory, in order: the build-id caches
 *      (--buildid-dir, ~/.debug), then an extracted `perf archive`:
 *      <dir>/.build-id/xx/rest/{elf,vdso} and <dir>/.build-id/xx/rest
 *   4. each debuginfo directory (--debuginfo-dir, then /usr/lib/debug):
 *      <dir>/.build-id/xx/rest
 *   5. debuginfod (only what dbgd.c fetched up front)
 * Separate debuginfo (symbols, inline chains, .debug_frame):
 *   1. <dir>/.build-id/xx/rest/debug for each build-id directory
 *   2. <dir>/.build-id/xx/rest.debug for each debuginfo directory
 *   then module.c's .gnu_debuglink search, then debuginfod.
 * Steps 3 onwards need the build-id.  Nothing here opens files except
 * locate_elf_*(), which read an ELF's section table.
 */
#ifndef RESTACK_UNWIND_LOCATE_H
#define RESTACK_UNWIND_LOCATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dbgd;

/* A perf-style build-id directory and how to name it in reports. */
struct locate_dir {
	const char *path;
	const char *label;        /* "build-id cache", "perf archive" */
};

struct locate_opts {
	const char *symfs;                     /* or NULL */
	const struct locate_dir *buildid_dirs; /* borrowed */
	unsigned nr_buildid_dirs;
	const char *const *debug_dirs;         /* borrowed; /usr/lib/debug last */
	unsigned nr_debug_dirs;
	const struct dbgd *dbgd;               /* prefetched, or NULL */
};

enum locate_kind {
	LOCATE_EXE,
	LOCATE_DEBUG,
};

/* Iteration state for locate_next(); start with all zero. */
struct locate_iter {
	unsigned step, i, k;
};

/*
 * The next local candidate of kind for a module recorded at recorded with
 * build-id bid (n bytes, 0 if unknown): writes its path to path (size
 * bytes) and a constant description to *from.  Returns false after the
 * last one.  Candidates too long for path are skipped.
 */
bool locate_next(const struct locate_opts *o, enum locate_kind kind,
		 const char *recorded, const uint8_t *bid, unsigned n,
		 struct locate_iter *it, char *path, size_t size,
		 const char **from);

/*
 * Whether the file at path is an ELF with build-id bid (n bytes).
 * Returns 1 yes, 0 no file or not an ELF, -1 an ELF with another id.
 */
int locate_elf_matches(const char *path, const uint8_t *bid, unsigned n);

/*
 * The build-id of the ELF file at path, into bid (size bytes): its
 * length, 0 when it has none, -1 no file or not an ELF.
 */
int locate_elf_build_id(const char *path, uint8_t *bid, unsigned size);

/*
 * Whether a runtime file leaves work for separate debuginfo: it has no
 * .symtab or no .debug_info (so no inline chains, and no .debug_frame for
 * code without .eh_frame).  True when it cannot be read.
 */
bool locate_elf_needs_debug(const char *path);

/* Module names that are never files ("[kernel.kallsyms]", "//anon"...). */
bool locate_is_special(const char *recorded);

/*
 * Whether path is "/tmp/perf-PID.map": the name perf gives a process's
 * anonymous executable memory (JIT code), whose symbols a perf map holds;
 * never a file to load as a module.
 */
bool locate_is_perf_map(const char *path);

/*
 * Removes dir and everything below it, never following symbolic links
 * (private temporary directories: an extracted archive, a client cache).
 */
void locate_remove_tree(const char *dir);

#endif
