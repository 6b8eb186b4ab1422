/*
 * perfarchive.h - a `perf archive` tarball, extracted into a private
 * temporary directory so it can be searched as a perf build-id cache
 * (<dir>/.build-id/xx/rest -> ../../<path>/<build-id>/{elf,debug,kallsyms}).
 *
 * Any archive format and compression libarchive reads is accepted (perf
 * writes tar.bz2).  Only entries restack can use are extracted: the
 * .build-id/xx/rest links and <path>/<build-id>/{elf,debug,kallsyms,vdso}
 * (and an older perf's <path>/<build-id> file), of the capture's
 * build-ids when it lists them; everything else is skipped unread.  Only
 * directories, regular files and symbolic links are accepted; an entry
 * whose name or link target would reach outside the directory, or of
 * another type, fails the whole archive.
 *
 * Sizes are bounded: an entry restack would extract may not be larger
 * than max_file, and the entries of the archive, extracted or skipped,
 * may not add up to more than max_total (skipping costs decompressing);
 * either fails the archive before the entry is read.  Runs of zeros are
 * not written (sparse entries and zero-filled ones stay holes).
 */
#ifndef RESTACK_UNWIND_PERFARCHIVE_H
#define RESTACK_UNWIND_PERFARCHIVE_H

#include <stdint.h>

#include "common/err.h"

/*
 * Defaults: the largest debuginfo files are a few hundred MiB (Debian's
 * biggest -dbgsym packages); a perf archive holds a few files per binary.
 */
#define PERFARCHIVE_DEFAULT_MAX_FILE (1024ull << 20)
#define PERFARCHIVE_DEFAULT_MAX_TOTAL (4096ull << 20)

struct perfarchive_opts {
	const char (*build_ids)[41];  /* lowercase hex; NULL: every one */
	unsigned nr_build_ids;
	uint64_t max_file;            /* bytes; 0: the default */
	uint64_t max_total;           /* bytes; 0: the default */
};

struct perfarchive;

/*
 * Extracts what restack can use of path (see above) below $TMPDIR
 * (default /tmp); o may be NULL (every build-id, default limits).
 * Returns the handle, or NULL with *err filled (unreadable or corrupt
 * archive, an entry escaping the directory or over a limit, disk full);
 * the message names the entry.
 */
struct perfarchive *perfarchive_open(const char *path,
				     const struct perfarchive_opts *o,
				     struct err *err);

/* The directory the archive was extracted to; owned by a. */
const char *perfarchive_dir(const struct perfarchive *a);

/* Removes the extracted files and frees a (NULL is fine). */
void perfarchive_close(struct perfarchive *a);

#endif
