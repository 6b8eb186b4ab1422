/*
 * svg.h - the flame graph writer: one self-contained interactive SVG, as
 * flamegraph.pl draws them (root at the bottom, callers below callees,
 * siblings sorted by name, widths proportional to samples or periods).
 *
 * Frames are named as in folded output (the thread's command name is the
 * bottom frame, a "[truncated: REASON]" frame above it for stacks that
 * did not reach their thread's root) and merged by name.  Colours are
 * deterministic: the palette says what a frame is (user code, kernel, JIT
 * code, inlined call, stitched from the root cache, truncation marker or
 * unknown), the shade comes from a hash of the name.  Frames narrower
 * than 0.1 pixel are not drawn (their parent's width still counts them),
 * so huge profiles stay small; labels are drawn where they fit.
 *
 * The embedded script (no external resources) shows a frame's details on
 * hover (and the <title> tooltip), zooms into a frame on click (a click
 * on the bottom frame or "Reset zoom" zooms out), and highlights the
 * frames matching a regular expression ("Search", or Ctrl-F) with the
 * matched share of the total.
 */
#ifndef RESTACK_FORMATS_SVG_H
#define RESTACK_FORMATS_SVG_H

#include <stdbool.h>

#include "common/err.h"
#include "common/stack.h"

struct svg_opts {
	bool period;          /* widths from periods instead of samples */
	const char *title;    /* heading; NULL: "Flame Graph" (copied) */
	bool diff;            /* a differential flame graph (svg_add_base) */
	bool absolute;        /* ... comparing raw weights, not shares */
};

struct svg;

struct svg *svg_new(const struct svg_opts *opts);
void svg_free(struct svg *g);

/* Adds one sample.  Returns 0, or -1 when out of memory. */
int svg_add(struct svg *g, const struct rsample *s);

/*
 * Adds one sample of the base profile of a differential flame graph
 * (opts.diff): widths stay those of the samples svg_add() adds, the new
 * profile's; a frame is red by how much its share of the total grew from
 * the base's to the new's (or its weight, opts.absolute), blue by how
 * much it shrank, white when the same.  0, or -1 when out of memory.
 */
int svg_add_base(struct svg *g, const struct rsample *s);

/* Writes the SVG document to fd.  Returns 0, or -1 with *err filled. */
int svg_write(struct svg *g, int fd, struct err *err);

#endif
