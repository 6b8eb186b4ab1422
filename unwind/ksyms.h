/*
 * ksyms.h - the kernel's symbols, for naming kernel frames: a kallsyms
 * file read as perf reads it (symtab_load_kallsyms()), with an index of
 * the result kept on disk between runs.
 *
 * Reading a kallsyms file (5 MB and 120000 lines for a Debian kernel)
 * costs a short run 4-5 ms, most of it the kernel zeroing the 4 MB table
 * it fills.  So the first run that reads a regular file (perf's build-id
 * cache copy, --kallsyms FILE; not /proc/kallsyms, whose size and times
 * say nothing) stores the finished table in the DWARF cache's directory
 * (dwcache.h) as kallsyms-<hash>.ksyms, and later runs map that: no
 * parsing, no new memory.  An index is found by what identifies the file
 * it was made from: device, inode, size, modification and change times
 * and a hash of its first and last 4 KiB.  A file changed since gets a
 * new index; one rewritten in place within a tick of the file system's
 * clock, to the same size and ends, would not, so a file changed less
 * than 2 s ago, or while it was read, is not indexed.  The index carries
 * the version of the rules that made it.  The names are the same either
 * way; nothing here changes what a run outputs.
 *
 * Ownership: ksyms_load() returns a table the caller frees with
 * ksyms_free(); it is read-only afterwards, so threads share it without
 * locks.
 */
#ifndef RESTACK_UNWIND_KSYMS_H
#define RESTACK_UNWIND_KSYMS_H

#include <stddef.h>
#include <stdint.h>

struct ksyms;

/* The kernel's symbols from a kallsyms file; NULL when it cannot be read. */
struct ksyms *ksyms_load(const char *path);

/*
 * ksyms_load() less storing the index it made: ksyms_store_index() does
 * that, once the table is in use (it only reads the table, so lookups
 * may run beside it on other threads).  NULL k is fine.
 */
struct ksyms *ksyms_load_unstored(const char *path);
void ksyms_store_index(struct ksyms *k);

/*
 * The name perf gives kernel address addr: *len bytes (not NUL-terminated,
 * valid until ksyms_free()), or NULL when no symbol covers it.
 */
const char *ksyms_lookup(const struct ksyms *k, uint64_t addr, size_t *len);

void ksyms_free(struct ksyms *k);

#endif
