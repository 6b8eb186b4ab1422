/*
 * perfdata_synth.h - perf.data records made from format-neutral events,
 * for perf.data output from inputs that are not perf.data (sysprof).
 *
 * The event gets one attr: the input's event as a software event (type
 * and config kept), sample_type IP|TID|TIME|CPU|PERIOD|CALLCHAIN,
 * sample_id_all, mmap, mmap2, comm and task set; the records' sample_id
 * trailers carry pid/tid, time and cpu.  Everything is host byte order.
 */
#ifndef RESTACK_FORMATS_PERFDATA_SYNTH_H
#define RESTACK_FORMATS_PERFDATA_SYNTH_H

#include <stddef.h>
#include <stdint.h>

#include "common/event.h"
#include "common/strbuf.h"

#define PERFDATA_SYNTH_ATTR_SIZE 128   /* perf 6.1's attr (VER7) */

/* The attr for a, in out (PERFDATA_SYNTH_ATTR_SIZE bytes). */
void perfdata_synth_attr(const struct event_attr *a, uint8_t *out);

/*
 * Appends the record for ev (COMM, MMAP2, FORK or EXIT) to out; returns
 * its size, or 0 when ev has no perf.data record here.
 */
size_t perfdata_synth_record(const struct event *ev, struct strbuf *out);

/*
 * Appends perf's kernel text mapping: an MMAP of "[kernel.kallsyms]_text"
 * from start (the kernel's _text) to the end of the address space, with
 * pgoff start, as perf record writes it, so perf names kernel addresses
 * from its kernel symbols; returns the size.
 */
size_t perfdata_synth_kernel_mmap(uint64_t start, struct strbuf *out);

/* Appends a SAMPLE of ev with the callchain cc[0..nr) to out. */
size_t perfdata_synth_sample(const struct event *ev, const uint64_t *cc,
			     size_t nr, struct strbuf *out);

/*
 * A string feature's payload (HOSTNAME, OSRELEASE, ARCH): u32 length,
 * then the string padded with NULs to a multiple of 64.  Appended to out.
 */
void perfdata_synth_string(const char *s, struct strbuf *out);

#endif
