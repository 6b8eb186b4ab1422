/*
 * apk.c - find a stored entry of a zip file (an APK) by name or offset.
 *
 * The layout is PKWARE's APPNOTE.TXT: the end of central directory
 * record (signature 0x06054b50) within the last 64 KiB + 22 bytes, the
 * central directory's entries (0x02014b50: method, sizes, name, offset
 * of the local header), each entry's local header (0x04034b50: its own
 * name and extra lengths, after which the data start).  Zip64 is not
 * read (APKs stay under 4 GiB).  Everything is read with pread() and
 * bounds-checked against the file's size.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unwind/apk.h"

#define APK_EOCD_SIZE 22
#define APK_CDIR_SIZE 46
#define APK_LOCAL_SIZE 30
#define APK_COMMENT_MAX 65535u
#define APK_MAX_ENTRIES 1000000u

static uint16_t apk_u16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t apk_u32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static bool apk_read(int fd, uint64_t size, uint64_t off, void *buf,
		     size_t len)
{
	return off <= size && len <= size - off &&
	       pread(fd, buf, len, (off_t)off) == (ssize_t)len;
}

bool apk_split(const char *path, size_t *apk_len, const char **entry)
{
	const char *bang = strstr(path, ".apk!/");
	size_t n = strlen(path);

	if (bang) {
		*apk_len = (size_t)(bang - path) + 4;
		*entry = bang + 6;
		return **entry != '\0';
	}
	if (n > 4 && !strcmp(path + n - 4, ".apk")) {
		*apk_len = n;
		*entry = NULL;
		return true;
	}
	return false;
}

/* The end of central directory record: where the directory is. */
static int apk_eocd(int fd, uint64_t size, uint64_t *cd_off,
		    uint32_t *cd_size, uint32_t *nr)
{
	size_t tail = (size_t)(size < APK_EOCD_SIZE + APK_COMMENT_MAX ?
				       size :
				       APK_EOCD_SIZE + APK_COMMENT_MAX);
	uint8_t *buf;
	size_t i;
	int rc = -1;

	if (tail < APK_EOCD_SIZE)
		return -1;
	buf = malloc(tail);
	if (!buf)
		return -1;
	if (!apk_read(fd, size, size - tail, buf, tail))
		goto out;
	for (i = tail - APK_EOCD_SIZE + 1; i-- > 0;) {
		const uint8_t *e = buf + i;

		if (apk_u32(e) != 0x06054b50u ||
		    i + APK_EOCD_SIZE + apk_u16(e + 20) != tail)
			continue;
		*nr = apk_u16(e + 10);
		*cd_size = apk_u32(e + 12);
		*cd_off = apk_u32(e + 16);
		rc = *cd_off + *cd_size <= size - tail + i ? 0 : -1;
		break;
	}
out:
	free(buf);
	return rc;
}

int apk_find(int fd, uint64_t size, const char *entry, uint64_t off,
	     uint64_t *data_off, uint64_t *data_size)
{
	uint64_t cd_off, pos, end;
	uint32_t cd_size, nr, i;
	size_t want = entry ? strlen(entry) : 0;
	char name[4096];

	if (apk_eocd(fd, size, &cd_off, &cd_size, &nr) < 0 ||
	    nr > APK_MAX_ENTRIES)
		return -1;
	pos = cd_off;
	end = cd_off + cd_size;
	for (i = 0; i < nr; i++) {
		uint8_t h[APK_CDIR_SIZE], l[APK_LOCAL_SIZE];
		uint32_t csize, usize, local;
		uint16_t method, nlen, xlen, clen;
		uint64_t start;

		if (pos + APK_CDIR_SIZE > end ||
		    !apk_read(fd, size, pos, h, sizeof(h)) ||
		    apk_u32(h) != 0x02014b50u)
			return -1;
		method = apk_u16(h + 10);
		csize = apk_u32(h + 20);
		usize = apk_u32(h + 24);
		nlen = apk_u16(h + 28);
		xlen = apk_u16(h + 30);
		clen = apk_u16(h + 32);
		local = apk_u32(h + 42);
		pos += APK_CDIR_SIZE;
		if (pos + nlen + xlen + clen > end)
			return -1;
		if (entry && (nlen != want || nlen >= sizeof(name) ||
			      !apk_read(fd, size, pos, name, nlen) ||
			      memcmp(name, entry, nlen))) {
			pos += (uint64_t)nlen + xlen + clen;
			continue;
		}
		pos += (uint64_t)nlen + xlen + clen;
		if (!apk_read(fd, size, local, l, sizeof(l)) ||
		    apk_u32(l) != 0x04034b50u)
			return -1;
		start = (uint64_t)local + APK_LOCAL_SIZE + apk_u16(l + 26) +
			apk_u16(l + 28);
		if (start > size || usize > size - start)
			return -1;
		if (!entry && (off < start || off - start >= usize))
			continue;
		if (method != 0 || csize != usize)
			return -1;   /* compressed: never mapped */
		*data_off = start;
		*data_size = usize;
		return 0;
	}
	return -1;
}
