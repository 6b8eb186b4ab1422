/*
 * script.h - resolved samples as text in the shape of `perf script`
 * output: a header line per sample, then one line per frame, leaf first,
 * then a blank line.  stackcollapse-perf.pl reads it as it reads perf's.
 *
 *   comm  pid/tid [cpu] sec.usec: period event:
 *   \t        address function (module) origin
 *
 * Inline frames show "(inlined)" as their module, like perf; unknown
 * functions "[unknown]"; origin is how the frame was found (cfi-eh, fp,
 * stitched, kernel, ...).  A stack that did not reach its thread's root
 * ends with a pseudo-frame "[truncated: REASON]" of origin "marker".
 */
#ifndef RESTACK_FORMATS_SCRIPT_H
#define RESTACK_FORMATS_SCRIPT_H

#include "common/stack.h"
#include "common/strbuf.h"

/* Appends one sample's block to out. */
void script_format_sample(const struct rsample *s, struct strbuf *out);

#endif
