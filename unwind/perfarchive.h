/*
 * perfarchive.h - a `perf archive` tarball, extracted into a private
 * temporary directory so it can be searched as a perf build-id cache
 * (<dir>/.build-id/xx/rest -> ../../<path>/<build-id>/{elf,debug,kallsyms}).
 *
 * Any archive format and compression libarchive reads is accepted (perf
 * writes tar.bz2).  Only directories, regular files and symbolic links are
 * extracted; an entry whose name or link target would reach outside the
 * directory, or of another type, fails the whole archive.
 */
#ifndef RESTACK_UNWIND_PERFARCHIVE_H
#define RESTACK_UNWIND_PERFARCHIVE_H

#include "common/err.h"

struct perfarchive;

/*
 * Extracts path below $TMPDIR (default /tmp).  Returns the handle, or
 * NULL with *err filled (unreadable or corrupt archive, an entry escaping
 * the directory, disk full); the message names the entry.
 */
struct perfarchive *perfarchive_open(const char *path, struct err *err);

/* The directory the archive was extracted to; owned by a. */
const char *perfarchive_dir(const struct perfarchive *a);

/* Removes the extracted files and frees a (NULL is fine). */
void perfarchive_close(struct perfarchive *a);

#endif
