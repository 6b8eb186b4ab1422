/*
 * dwimage.h - an in-memory copy of an ELF file for libdw, with its
 * compressed DWARF sections already decompressed.
 *
 * libdw (elfutils 0.188) decompresses, with zlib, every DWARF section it
 * knows as soon as a file is opened, location lists and macros included,
 * which restack never reads.  Debian's debug files compress them all: for
 * libc that is most of a short run's time.  This copy decompresses only
 * what inline names, lines and .debug_frame need, with libdeflate, and
 * hides the rest from libdw.
 */
#ifndef RESTACK_UNWIND_DWIMAGE_H
#define RESTACK_UNWIND_DWIMAGE_H

#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The copy of elf (a file in this machine's byte order), or NULL when elf
 * has no zlib-compressed DWARF section (or is not usable that way, or
 * memory ran out): then give elf to libdw as it is.  With fd, the file
 * elf reads (the image maps it itself), .debug_line is inflated only when
 * dwimage_need_lines() asks, which whoever hands the image to libdw must
 * do before libdw reads line tables.  On success *size is the image's
 * size; the caller holds a reference to the image (dwimage_free() drops
 * it) and must keep it as long as an Elf made from it with elf_memory()
 * lives.  Thread-safe: the image of a file with a build-id is built once
 * and shared, read-only but for .debug_line, by every caller (each worker
 * thread opens the same libc debug file; one decompresses it).
 */
void *dwimage_build(Elf *elf, int fd, size_t *size);

/*
 * Whether another caller is building the image of the file with build-id
 * bid and raw_size bytes now (dwimage_build() would wait for it): those
 * who have other work may do it first.
 */
bool dwimage_building(const uint8_t *bid, unsigned bid_len, size_t raw_size);

/* Drops a reference from dwimage_build(); NULL is allowed. */
void dwimage_free(void *image);

/*
 * Storing an image dwimage_build() built in the DWARF cache (dwcache.h)
 * takes about as long as building it.  By default the builder stores it
 * before it returns (after those waiting for it have it).  With fn set,
 * builds hand the store to fn(ctx, job) instead, called under the images'
 * lock (fn only queues it; false: it could not, the builder stores), to
 * run later with dwimage_store_job_run(), which stores, drops the
 * reference the job holds and frees it.  fn NULL goes back to the
 * default; a job handed over must still be run.
 */
struct dwimage_store_job;
void dwimage_defer_stores(bool (*fn)(void *ctx, struct dwimage_store_job *job),
			  void *ctx);
void dwimage_store_job_run(struct dwimage_store_job *job);

/*
 * Makes image's .debug_line readable (NULL, or an image without a lazy
 * one, is fine).  False when its compressed data is bad: then it reads
 * as zeroes (libdw finds no line table).  Thread-safe.
 */
bool dwimage_need_lines(void *image);

#endif
