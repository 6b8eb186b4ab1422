/*
 * input.c - reading inputs by offset, from files or pipes.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/input.h"

/* A stream's first bytes, read by input_peek_fd(), and its descriptor. */
static unsigned char input_head[INPUT_PEEK_MAX];
static size_t input_head_len;
static int input_head_fd = -1;

static void input_probe(struct input *in)
{
	struct stat st;

	in->seekable = fstat(in->fd, &st) == 0 && S_ISREG(st.st_mode) &&
		       lseek(in->fd, 0, SEEK_CUR) >= 0;
	in->size = in->seekable ? (uint64_t)st.st_size : UINT64_MAX;
	in->stream_pos = 0;
	if (in->seekable)
		(void)posix_fadvise(in->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
}

int input_open(struct input *in, const char *path, struct err *err)
{
	memset(in, 0, sizeof(*in));
	in->name = path;
	if (strcmp(path, "-") == 0) {
		in->fd = STDIN_FILENO;
		in->own_fd = false;
	} else {
		in->fd = open(path, O_RDONLY | O_CLOEXEC);
		if (in->fd < 0)
			return err_sys(err, errno, "cannot open '%s'", path);
		in->own_fd = true;
	}
	input_probe(in);
	/* stdin redirected from a file is seekable only from its start. */
	if (in->seekable && !in->own_fd && lseek(in->fd, 0, SEEK_CUR) != 0)
		in->seekable = false, in->size = UINT64_MAX;
	return 0;
}

void input_from_fd(struct input *in, int fd, const char *name)
{
	memset(in, 0, sizeof(*in));
	in->fd = fd;
	in->name = name;
	input_probe(in);
}

void input_close(struct input *in)
{
	if (in && in->fd >= 0 && in->fd == input_head_fd)
		input_head_fd = -1;     /* the number may be used again */
	if (in && in->own_fd && in->fd >= 0)
		close(in->fd);
	if (in)
		in->fd = -1;
}

long long input_peek_fd(int fd, void *buf, size_t len, struct err *err)
{
	struct stat st;
	size_t got;

	if (len > INPUT_PEEK_MAX)
		len = INPUT_PEEK_MAX;
	/* a regular file at its start is read again with pread() */
	if (fd != input_head_fd && fstat(fd, &st) == 0 &&
	    S_ISREG(st.st_mode) && lseek(fd, 0, SEEK_CUR) == 0) {
		ssize_t n;

		do
			n = pread(fd, buf, len, 0);
		while (n < 0 && errno == EINTR);
		if (n < 0)
			return err_sys(err, errno, "cannot read the input");
		return n;
	}
	if (fd != input_head_fd) {
		if (input_head_fd >= 0)
			return err_set(err, ERR_UNSUPPORTED, ERR_NO_OFF,
				       "one stream only can be peeked at");
		input_head_fd = fd;
		input_head_len = 0;
		while (input_head_len < INPUT_PEEK_MAX) {
			ssize_t n = read(fd, input_head + input_head_len,
					 INPUT_PEEK_MAX - input_head_len);

			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0)
				return err_sys(err, errno,
					       "cannot read the input");
			if (n == 0)
				break;
			input_head_len += (size_t)n;
		}
	}
	got = len < input_head_len ? len : input_head_len;
	memcpy(buf, input_head, got);
	return (long long)got;
}

bool input_has_peeked(const struct input *in)
{
	return in->fd == input_head_fd && in->stream_pos < input_head_len;
}

static long long input_read_stream(struct input *in, void *buf, size_t len,
				   struct err *err)
{
	size_t got = 0;

	/* what input_peek_stdin() took from the pipe comes first */
	if (in->fd == input_head_fd && in->stream_pos < input_head_len) {
		got = input_head_len - (size_t)in->stream_pos;
		if (got > len)
			got = len;
		memcpy(buf, input_head + in->stream_pos, got);
		in->stream_pos += got;
	}
	while (got < len) {
		ssize_t n = read(in->fd, (char *)buf + got, len - got);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return err_sys(err, errno, "cannot read '%s'",
				       in->name);
		}
		if (n == 0)
			break;
		got += (size_t)n;
		in->stream_pos += (uint64_t)n;
	}
	return (long long)got;
}

long long input_read_at(struct input *in, void *buf, size_t len, uint64_t off,
			struct err *err)
{
	size_t got = 0;

	if (!in->seekable) {
		if (off != in->stream_pos)
			return err_set(err, ERR_UNSUPPORTED, off,
				       "input is not seekable and this data is "
				       "not at the stream position 0x%llx",
				       (unsigned long long)in->stream_pos);
		return input_read_stream(in, buf, len, err);
	}
	while (got < len) {
		ssize_t n = pread(in->fd, (char *)buf + got, len - got,
				  (off_t)(off + got));

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return err_sys(err, errno, "cannot read '%s'",
				       in->name);
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (long long)got;
}

long long input_read_some(struct input *in, void *buf, size_t len,
			  struct err *err)
{
	ssize_t n;

	if (in->fd == input_head_fd && in->stream_pos < input_head_len)
		return input_read_stream(in, buf, len < input_head_len -
					 in->stream_pos ? len :
					 input_head_len - in->stream_pos, err);
	do
		n = read(in->fd, buf, len);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return err_sys(err, errno, "cannot read '%s'", in->name);
	in->stream_pos += (uint64_t)n;
	return n;
}

int input_skip_to(struct input *in, uint64_t off, struct err *err)
{
	char buf[65536];

	if (in->seekable)
		return 0;
	if (off < in->stream_pos)
		return err_set(err, ERR_UNSUPPORTED, off,
			       "cannot go back in a stream");
	while (in->stream_pos < off) {
		uint64_t want = off - in->stream_pos;
		long long n = input_read_stream(
			in, buf, want < sizeof(buf) ? (size_t)want : sizeof(buf),
			err);

		if (n < 0)
			return -1;
		if (n == 0)
			return err_set(err, ERR_TRUNCATED, in->stream_pos,
				       "input ends at 0x%llx, before 0x%llx",
				       (unsigned long long)in->stream_pos,
				       (unsigned long long)off);
	}
	return 0;
}
