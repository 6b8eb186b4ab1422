/*
 * dwcache.h - decompressed DWARF images kept on disk between runs.
 *
 * Inflating a Debian debug file's DWARF (libc's: 8 MB out of 3) is most
 * of a short run's fixed cost, paid again by every run.  The first run
 * that builds an image (dwimage.c) stores it here; later runs map the
 * stored file: its page-cache pages, nothing inflated, no new memory.
 *
 * A stored image is one file, DIR/<build-id>-<size>.dwimg, written to a
 * temporary name and renamed into place, so a reader sees a whole file or
 * none.  It is found again by the key of the file it was made from: its
 * build-id, its size and a hash of its ELF and section headers (which
 * change when the same build is compressed differently).  A file that
 * does not match its key, or is cut, is not used (and is replaced).
 *
 * The directory: dwcache_set_dir(), else $XDG_CACHE_HOME/restack/dwarf,
 * else $HOME/.cache/restack/dwarf; created (mode 0700) on the first
 * store.  When it cannot be written, images are built each run as before.
 * Nothing here changes what a run outputs.  ksyms.c keeps its kernel
 * symbol indexes in the same directory, through the same calls.
 */
#ifndef RESTACK_UNWIND_DWCACHE_H
#define RESTACK_UNWIND_DWCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a stored image is found by. */
struct dwcache_key {
	uint8_t bid[64];
	unsigned bid_len;
	uint64_t raw_size;     /* the source file's size */
	uint64_t header_hash;  /* its ELF and section headers */
};

/* Bytes of the image to write: the rest of it is zeroes (file holes). */
struct dwcache_range {
	uint64_t off, len;
};

/*
 * Where images are kept: dir, or with dir NULL no cache at all (neither
 * read nor written).  Not calling it means the default directory.  Call
 * before any thread builds images; dir must outlive them.
 */
void dwcache_set_dir(const char *dir);

/*
 * Maps the stored image of key, size bytes expected, with prefix bytes
 * before it (zeroes, writable: the caller's own header).  The mapping is
 * private and writable; returns its start (the image is prefix bytes in)
 * and sets *map_size for munmap(), or NULL when there is none that
 * matches.  Thread-safe.
 */
void *dwcache_load(const struct dwcache_key *key, uint64_t size,
		   size_t prefix, size_t *map_size);

/*
 * Stores image (size bytes, prefix bytes of zeroes before it in the file,
 * as dwcache_load() will ask) under key: the nr ranges of it, the rest
 * zeroes.  Failures only count (the cache is an optimisation).
 * Thread-safe.
 */
void dwcache_store(const struct dwcache_key *key, const uint8_t *image,
		   uint64_t size, size_t prefix,
		   const struct dwcache_range *ranges, size_t nr);

/*
 * Other files kept in the same directory (ksyms.c's kernel symbol
 * indexes), written the same way: dwcache_create() opens a temporary file
 * in the directory (made if missing) to become NAME, dwcache_write()
 * writes into it at an offset, dwcache_finish() closes it and renames it
 * into place if every step worked (else removes it); a failure anywhere
 * counts as a failed store.  dwcache_create() is false without a cache or
 * when it cannot create the file (f->ok false: the other calls do
 * nothing).  The temporary is registered with common/sigclean.h until
 * dwcache_finish(), so a run killed by a signal does not leave it in the
 * cache (unregistered only when every slot is taken).
 */
struct dwcache_file {
	int fd;
	bool ok;
	int clean_id;           /* the temporary's sigclean.h registration */
	char tmp[4096], path[4096];
};

bool dwcache_create(struct dwcache_file *f, const char *name);
void dwcache_write(struct dwcache_file *f, const void *p, uint64_t len,
		   uint64_t off);
void dwcache_finish(struct dwcache_file *f);

/*
 * <build-id in hex>-<size>.<ext> in buf, the name of a file kept for the
 * file with that build-id (at most 64 bytes) and size; false when it does
 * not fit.
 */
bool dwcache_bid_name(const uint8_t *bid, unsigned bid_len, uint64_t size,
		      const char *ext, char *buf, size_t len);

/* NAME in the directory opened read-only, when it is a regular file: a
 * descriptor the caller closes, or -1. */
int dwcache_open(const char *name);

/* Counts a file the caller mapped from the directory (for --stats). */
void dwcache_count_loaded(void);

/* What this process did with the cache (for --stats). */
struct dwcache_counters {
	unsigned loaded;     /* files mapped from it (images, ksyms.c indexes) */
	unsigned stored;     /* files written to it */
	unsigned failed;     /* stores that failed */
};

void dwcache_get_counters(struct dwcache_counters *out);

/* The directory in use (NULL: no cache), as the first use found it. */
const char *dwcache_dir(void);

#endif
