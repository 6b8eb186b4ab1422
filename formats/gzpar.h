/*
 * gzpar.h - a gzip file written from text that comes in pieces, compressed
 * on two cores: the text is cut into blocks of GZPAR_BLOCK bytes, each
 * deflated on its own with the 32 KiB of text before it as its
 * dictionary and ended with a sync flush (the last with the final block),
 * as pigz does, so the blocks' outputs joined are one deflate stream of
 * one gzip member.  A thread of the writer's own deflates blocks while
 * the caller makes the next ones (and the caller deflates too when the
 * blocks in flight are all taken); on one core the caller does it all.
 * The bytes depend only on the text and on where the caller's pieces
 * cut it (zlib level 1, no time or name in the header), not on the
 * threads.
 *
 * Memory: GZPAR_RING blocks of text, output and dictionary (about 2.5
 * MiB), whatever the size of the text.
 */
#ifndef RESTACK_FORMATS_GZPAR_H
#define RESTACK_FORMATS_GZPAR_H

#include "common/err.h"
#include "common/strbuf.h"

#define GZPAR_BLOCK (256 * 1024)

struct gzpar;

/*
 * Starts a gzip file on fd (what names it in errors, e.g. "Firefox
 * profile"), with the thread when thread and this machine has two cores
 * or more (the same bytes either way).  Returns NULL with *err set when
 * out of memory.
 */
struct gzpar *gzpar_open(int fd, const char *what, bool thread,
			 struct err *err);

/*
 * Takes sb's text once it holds a block's worth (sb is then empty, its
 * buffer swapped with a free block's); else leaves it to grow.  Returns
 * 0, or -1 with the open's err set (a failed write, out of memory); the
 * first failure sticks.
 */
int gzpar_write(struct gzpar *g, struct strbuf *sb);

/*
 * Compresses what sb holds as the end of the text, writes everything and
 * the trailer, stops the thread and frees g.  Returns 0 or -1 as
 * gzpar_write(), for the whole file.
 */
int gzpar_finish(struct gzpar *g, struct strbuf *sb);

#endif
