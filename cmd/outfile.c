/*
 * outfile.c - opening an output file without harming what is there (see
 * outfile.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/outfile.h"

#include "cmd/cmd.h"
#include "common/sigclean.h"

/* Symbolic links followed before giving up (as the kernel's ELOOP). */
#define OUTFILE_MAX_LINKS 40

/*
 * out = path with the symbolic links of its last component followed (a
 * relative target is relative to the link's directory).  A dangling
 * link's target is what will be created.  0, or -1 with errno set.
 */
static int outfile_follow(const char *path, char *out, size_t size)
{
	char link[PATH_MAX], next[PATH_MAX];
	struct stat st;
	int hops;

	if ((size_t)snprintf(out, size, "%s", path) >= size)
		goto too_long;
	for (hops = 0; hops < OUTFILE_MAX_LINKS; hops++) {
		const char *slash;
		ssize_t n;
		int dir;

		if (lstat(out, &st) < 0 || !S_ISLNK(st.st_mode))
			return 0;   /* a missing file is created; other
				     * errors are mkstemp()'s to report */
		n = readlink(out, link, sizeof(link) - 1);
		if (n < 0)
			return -1;
		link[n] = '\0';
		slash = strrchr(out, '/');
		dir = link[0] == '/' || !slash ? 0 : (int)(slash - out + 1);
		if ((size_t)snprintf(next, sizeof(next), "%.*s%s", dir, out,
				     link) >= sizeof(next) ||
		    strlen(next) >= size)
			goto too_long;
		strcpy(out, next);
	}
	errno = ELOOP;
	return -1;
too_long:
	errno = ENAMETOOLONG;
	return -1;
}

/* The temporary's permissions: the replaced file's, else 0644 less the
 * umask (read once, before any worker thread exists). */
static mode_t outfile_mode(const struct stat *old)
{
	static mode_t mask = (mode_t)-1;

	if (old)
		return old->st_mode & 0777;
	if (mask == (mode_t)-1) {
		mask = umask(022);
		umask(mask);
	}
	return 0644 & ~mask;
}

int outfile_open_in_place(struct outfile *o, const char *path)
{
	o->path = path;
	o->target[0] = o->tmp[0] = '\0';
	o->clean = 0;
	if (!strcmp(path, "-")) {
		o->fd = STDOUT_FILENO;
		return 0;
	}
	o->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOCTTY |
		     O_CLOEXEC, 0666);
	if (o->fd < 0) {
		cmd_error("cannot open '%s': %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

int outfile_open(struct outfile *o, const char *path)
{
	struct stat st;
	bool exists;

	o->path = path;
	o->target[0] = o->tmp[0] = '\0';
	o->clean = 0;
	if (!strcmp(path, "-")) {
		o->fd = STDOUT_FILENO;
		return 0;
	}
	o->fd = -1;
	/* the kernel follows the links, /proc/self/fd/N's too */
	exists = stat(path, &st) == 0;
	if (exists && S_ISDIR(st.st_mode)) {
		cmd_error("cannot write '%s': %s", path, strerror(EISDIR));
		return -1;
	}
	if (exists && !S_ISREG(st.st_mode)) {
		/* a device, FIFO or socket is written where it is */
		o->fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
		if (o->fd < 0) {
			cmd_error("cannot open '%s': %s", path,
				  strerror(errno));
			return -1;
		}
		return 0;
	}
	/* a regular file is replaced in the directory it is in */
	if (outfile_follow(path, o->target, sizeof(o->target)) < 0) {
		cmd_error("cannot write '%s': %s", path, strerror(errno));
		return -1;
	}
	if ((size_t)snprintf(o->tmp, sizeof(o->tmp), "%s.tmp.XXXXXX",
			     o->target) >= sizeof(o->tmp)) {
		cmd_error("output name too long: '%s'", path);
		o->tmp[0] = '\0';
		return -1;
	}
	o->fd = sigclean_mkstemp(o->tmp, &o->clean);
	if (o->fd < 0) {
		cmd_error("cannot create '%s': %s", o->tmp, strerror(errno));
		o->tmp[0] = '\0';
		return -1;
	}
	if (fchmod(o->fd, outfile_mode(exists ? &st : NULL)) < 0) {
		cmd_error("cannot create '%s': %s", o->tmp, strerror(errno));
		outfile_close(o, false);
		return -1;
	}
	return 0;
}

bool outfile_seekable(const struct outfile *o)
{
	return lseek(o->fd, 0, SEEK_CUR) >= 0;
}

int outfile_close(struct outfile *o, bool ok)
{
	if (o->fd < 0 || o->fd == STDOUT_FILENO) {
		o->fd = -1;
		return ok ? 0 : -1;
	}
	if (close(o->fd) < 0 && ok) {
		cmd_error("cannot write '%s': %s", o->path, strerror(errno));
		ok = false;
	}
	o->fd = -1;
	if (!o->tmp[0])
		return ok ? 0 : -1;
	if (ok && rename(o->tmp, o->target) < 0) {
		cmd_error("cannot write '%s': %s", o->path, strerror(errno));
		ok = false;
	}
	if (!ok)
		unlink(o->tmp);
	sigclean_del(o->clean);
	o->clean = 0;
	o->tmp[0] = '\0';
	return ok ? 0 : -1;
}

bool outfile_same(const char *out, const char *in)
{
	struct stat so, si;

	if (!strcmp(out, "-") ? fstat(STDOUT_FILENO, &so) < 0 :
	    stat(out, &so) < 0)
		return false;
	if (!strcmp(in, "-") ? fstat(STDIN_FILENO, &si) < 0 :
	    stat(in, &si) < 0)
		return false;
	return so.st_dev == si.st_dev && so.st_ino == si.st_ino &&
	       !S_ISCHR(so.st_mode);
}

bool outfile_is_input(const char *cmd, const char *what, const char *out,
		      char *const *inputs, int nr)
{
	int i;

	for (i = 0; i < nr; i++) {
		if (outfile_same(out, inputs[i])) {
			cmd_error("%s: the %s '%s' is the input '%s'", cmd,
				  what, out, inputs[i]);
			return true;
		}
	}
	return false;
}
