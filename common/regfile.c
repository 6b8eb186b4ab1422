/*
 * regfile.c - opening regular files only, without blocking on the others
 * (see regfile.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/regfile.h"

int regfile_open(const char *path, bool *not_regular)
{
	struct stat st;
	int fd, flags;

	if (not_regular)
		*not_regular = false;
	/* O_NONBLOCK: opening a FIFO without a writer returns at once */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0)
		goto fail;
	if (!S_ISREG(st.st_mode)) {
		if (not_regular)
			*not_regular = true;
		errno = EINVAL;
		goto fail;
	}
	flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0)
		goto fail;
	return fd;
fail:
	{
		int saved = errno;

		close(fd);
		errno = saved;
	}
	return -1;
}

FILE *regfile_fopen(const char *path, bool *not_regular)
{
	int fd = regfile_open(path, not_regular);
	FILE *f;

	if (fd < 0)
		return NULL;
	f = fdopen(fd, "re");
	if (!f)
		close(fd);
	return f;
}
