/*
 * syscap.h - the sysprof capture format (libsysprof-capture, sysprof 3.46
 * and current): what its reader and writer share.
 *
 * A 256-byte file header, then frames, each starting with a 24-byte frame
 * header whose u16 len is the whole frame's size, a multiple of 8.  Layouts:
 * ../shared/reference/sysprof-format.md, section (b).
 */
#ifndef RESTACK_FORMATS_SYSCAP_H
#define RESTACK_FORMATS_SYSCAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SYSCAP_MAGIC 0xFDCA975Eu        /* bytes 5E 97 CA FD */
#define SYSCAP_HEADER_SIZE 256
#define SYSCAP_FRAME_HEADER_SIZE 24
#define SYSCAP_FRAME_MAX 65528          /* u16 len, rounded down to 8 */
#define SYSCAP_JITMAP_MARK 0xE000000000000000ull
#define SYSCAP_INDEX_MAGIC 0x53504958u  /* padding2 of a frame-index
					 * TIMESTAMP */

enum syscap_frame_type {
	SYSCAP_TIMESTAMP = 1,
	SYSCAP_SAMPLE = 2,
	SYSCAP_MAP = 3,
	SYSCAP_PROCESS = 4,
	SYSCAP_FORK = 5,
	SYSCAP_EXIT = 6,
	SYSCAP_JITMAP = 7,
	SYSCAP_CTRDEF = 8,
	SYSCAP_CTRSET = 9,
	SYSCAP_MARK = 10,
	SYSCAP_METADATA = 11,
	SYSCAP_LOG = 12,
	SYSCAP_FILE_CHUNK = 13,
	SYSCAP_ALLOCATION = 14,
	SYSCAP_OVERLAY = 15,
	SYSCAP_TRACE = 16,
	SYSCAP_DBUS_MESSAGE = 17,
	SYSCAP_STACK_USER = 18,         /* eu-stacktrace's producer only */
};

/*
 * FILE_CHUNK (13): u32 bit-fields at 24 (is_last: bit 0, data length: the
 * upper 16 bits), path char[256] at 28, data at 284.  A file is the data
 * of its path's chunks in file order, up to the one marked last.
 */
#define SYSCAP_CHUNK_DATA 284
#define SYSCAP_CHUNK_PATH 256
#define SYSCAP_CHUNK_SIZE 16100         /* data per chunk, as sysprof's
					 * writer cuts a file */
#define SYSCAP_KALLSYMS_PATH "/proc/kallsyms"
#define SYSCAP_SYMBOLS_PATH "__symbols__"

/*
 * The __symbols__ file (sysprof 3.46 sysprof-symbol-map.c): records of
 * 32 bytes {u64 begin, u64 end (both inclusive), u32 pid, u32 name,
 * u32 tag, u32 padding} sorted by (pid, begin), ended by an all-zero
 * record, then NUL-terminated strings; name and tag are offsets from the
 * file's start (0: none), the tag is the mapped file's path.
 */
#define SYSCAP_SYM_RECORD 32

/* The newest frame type sysprof 3.46's reader accepts (it stops at 16). */
#define SYSCAP_LAST_TYPE_346 15

/* True when the first bytes (at least 8) look like a sysprof capture. */
bool syscap_probe(const void *head, size_t len);

#endif
