/*
 * regfile.h - opening files named by an input (a capture's mappings, a
 * build-id cache, JIT maps, kallsyms) for reading, only when they are
 * regular files: a FIFO blocks open() until a writer comes and read()
 * until it goes, a device or a socket may never end.
 */
#ifndef RESTACK_COMMON_REGFILE_H
#define RESTACK_COMMON_REGFILE_H

#include <stdbool.h>
#include <stdio.h>

/* What regfile_open() says of a path that is not a regular file. */
#define REGFILE_NOT_REGULAR "not a regular file"

/*
 * Opens path read-only (O_CLOEXEC) without blocking on it, and keeps it
 * only when it is a regular file (the descriptor then blocks as usual).
 * Returns the descriptor, which the caller closes, or -1: errno from
 * open() or fstat(), and *not_regular (when not NULL) true when path was
 * opened but is no regular file.
 */
int regfile_open(const char *path, bool *not_regular);

/* regfile_open() as a stdio stream ("re"), which the caller fcloses. */
FILE *regfile_fopen(const char *path, bool *not_regular);

#endif
