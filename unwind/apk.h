/*
 * apk.h - libraries mapped straight out of an Android APK (a zip file):
 * Android maps a library stored uncompressed in the APK at its offset in
 * the APK, so a capture names the APK (simpleperf: "base.apk!/lib/...
 * /libfoo.so") with file offsets into it.
 */
#ifndef RESTACK_UNWIND_APK_H
#define RESTACK_UNWIND_APK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Splits a recorded path at ".apk!/": *apk_len receives the length of the
 * APK's path and *entry the entry name after "!/".  For a path that ends
 * in ".apk", *entry is NULL.  False when path names no APK.
 */
bool apk_split(const char *path, size_t *apk_len, const char **entry);

/*
 * Finds the entry of the zip file fd (size bytes) named entry, or, when
 * entry is NULL, the one whose data hold file offset off.  Only entries
 * stored uncompressed can be mapped; *data_off and *data_size receive
 * where its bytes are.  Returns 0, or -1 when there is no such stored
 * entry or the zip's directory is damaged (every offset bounds-checked).
 */
int apk_find(int fd, uint64_t size, const char *entry, uint64_t off,
	     uint64_t *data_off, uint64_t *data_size);

#endif
