/*
 * folded.h - folded stacks ("comm;root;...;leaf count" lines), the input
 * of flamegraph.pl, inferno and speedscope.
 *
 * Frames are named as stackcollapse-perf.pl names perf script's frames:
 * function names, inline frames as frames of their own, "[module]" when
 * the function is unknown, ";" replaced by ":" and anything from "(" on
 * dropped.  A stack that did not reach its thread's root starts with a
 * marker frame, "[truncated: REASON]".  Lines are sorted (byte order), so
 * output is deterministic.
 */
#ifndef RESTACK_FORMATS_FOLDED_H
#define RESTACK_FORMATS_FOLDED_H

#include <stdbool.h>
#include <stdint.h>

#include "common/err.h"
#include "common/stack.h"
#include "common/strbuf.h"

struct folded_opts {
	bool pid;          /* "comm-pid" as the first frame */
	bool tid;          /* "comm-pid/tid" as the first frame */
	bool period;       /* weight by period instead of counting samples */
	bool annotate;     /* "_[k]" kernel, "_[i]" inlined, "_[j]" JIT,
			    * "_[fp]", "_[s]", "_[scan]", "_[stub]": how
			    * the frame was found */
};

struct folded;

struct folded *folded_new(const struct folded_opts *opts);
void folded_free(struct folded *f);

/* Adds one sample.  Returns 0, or -1 when out of memory. */
int folded_add(struct folded *f, const struct rsample *s);

/*
 * Adds src's lines and counts into f (made with the same options), as if
 * src's samples had been added to f; src is left as it was.  Lines are
 * written sorted, so f's output does not depend on the order.  Returns 0,
 * or -1 when out of memory.
 */
int folded_merge(struct folded *f, const struct folded *src);

/*
 * Writes the sorted lines to fd.  Returns 0, or -1 with *err filled.
 */
int folded_write(struct folded *f, int fd, struct err *err);

/*
 * Appends the folded name of l's entry i (a kernel frame when kernel):
 * the tidied function name, "[module]", "[kernel]" or "[unknown]", with
 * no annotation.  The other profile writers name frames with it, so their
 * stacks are the folded output's.
 */
void folded_entry_name(struct strbuf *sb, const struct sym_loc *l,
		       unsigned i, bool kernel);

/*
 * Forgets the symbol locations of the samples added so far (the lines
 * stay): call it before adding samples of another input, whose locations
 * may sit where freed ones were.
 */
void folded_forget_locs(struct folded *f);

/*
 * Calls fn with every line's text (without its count, not
 * NUL-terminated) and count, in no particular order, until fn returns
 * non-zero; returns that, or 0.
 */
int folded_each(const struct folded *f,
		int (*fn)(void *ctx, const char *text, size_t len,
			  uint64_t count), void *ctx);

/* The options f was made with. */
const struct folded_opts *folded_opts_of(const struct folded *f);

/* Lines (distinct stacks) so far. */
uint64_t folded_count(const struct folded *f);

#endif
