/*
 * outfile.h - opening an output file without harming what is there.
 *
 * A regular file, or a name not taken yet, is written to a temporary in
 * the same directory (NAME.tmp.XXXXXX, made by mkstemp(), registered
 * with common/sigclean.h so that a signal removes it) that replaces it
 * when complete; a symbolic link is followed, its target replaced so, the
 * link left as it is; a character or block device, FIFO or socket is
 * opened and written directly (no temporary, no rename).  Errors are
 * printed.
 */
#ifndef RESTACK_CMD_OUTFILE_H
#define RESTACK_CMD_OUTFILE_H

#include <limits.h>
#include <stdbool.h>

struct outfile {
	const char *path;       /* as given; not owned */
	char target[PATH_MAX];  /* path, its last component's links followed */
	char tmp[PATH_MAX];     /* the temporary, or "" when written directly */
	int fd;                 /* -1 when closed */
	int clean;              /* tmp's sigclean registration */
};

/*
 * Opens path for writing ("-": standard output).  Returns 0, or -1 after
 * printing the error.
 */
int outfile_open(struct outfile *o, const char *path);

/*
 * Opens path for writing where it is (created or truncated now, no
 * temporary): for output that must be seen growing while it is written
 * (a sysprof stream's).  A failed run leaves what was written.  "-" is
 * standard output.  Returns 0, or -1 after printing the error.
 */
int outfile_open_in_place(struct outfile *o, const char *path);

/* Whether o->fd can seek (a regular file, /dev/null), else a stream. */
bool outfile_seekable(const struct outfile *o);

/*
 * Finishes o: when ok, closes it and renames the temporary over the
 * target; else (or when that fails) removes the temporary.  Standard
 * output is left open.  Returns 0, or -1 (not ok, or an error printed).
 */
int outfile_close(struct outfile *o, bool ok);

/*
 * Whether out and in name the same file (device and inode; "-" is
 * standard output, respectively input).  A character device (/dev/null, a
 * terminal) is not the same file as anything.
 */
bool outfile_same(const char *out, const char *in);

/*
 * Whether out (what: "output", "--stats-json file") is one of the nr inputs:
 * writing it would replace a capture.  Prints "CMD: the output 'OUT' is
 * the input 'IN'" when it is.
 */
bool outfile_is_input(const char *cmd, const char *what, const char *out,
		      char *const *inputs, int nr);

#endif
