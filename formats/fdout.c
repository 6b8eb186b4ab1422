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

int fdout_flush(int fd, struct strbuf *sb, const char *what, struct err *err)
{
	if (sb->oom)
		return err_set(err, ERR_NOMEM, ERR_NO_OFF, "%s", what);
	if (fdout_write(fd, sb->buf, sb->len, what, err) < 0)
		return -1;
	strbuf_reset(sb);
	return 0;
}
