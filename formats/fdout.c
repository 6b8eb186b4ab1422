/*
 * fdout.c - write a whole buffer (see fdout.h).
 */
#include <errno.h>
#include <unistd.h>

#include "formats/fdout.h"

int fdout_write(int fd, const void *buf, size_t len, const char *what,
		struct err *err)
{
	const char *p = buf;
	size_t off = 0;

	while (off < len) {
		ssize_t n = write(fd, p + off, len - off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return err_sys(err, errno, "cannot write %s", what);
		}
		off += (size_t)n;
	}
	return 0;
}
