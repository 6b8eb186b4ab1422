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

/* The newest frame type sysprof 3.46's reader accepts (it stops at 16). */
#define SYSCAP_LAST_TYPE_346 15

/* True when the first bytes (at least 8) look like a sysprof capture. */
bool syscap_probe(const void *head, size_t len);

#endif
