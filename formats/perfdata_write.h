/*
 * perfdata_write.h - writes perf.data (file or pipe mode) from a capture's
 * events, with each DWARF sample's unwound user stack as a plain callchain.
 *
 * Records are carried over as the input has them (host byte order inputs
 * only), except:
 *  - a SAMPLE of an event with REGS_USER or STACK_USER (perf record
 *    --call-graph dwarf) loses both and gets the callchain: the recorded
 *    kernel part, then PERF_CONTEXT_USER, the sampled user ip and the
 *    callers, each a return address minus 1 (perf's own DWARF convention,
 *    so perf names the call site, inline chain included);
 *  - the attrs of those events (attrs section or HEADER_ATTR, and the
 *    EVENT_DESC feature) are rewritten to match: REGS_USER and STACK_USER
 *    cleared, CALLCHAIN set, exclude_callchain_user cleared;
 *  - COMPRESSED records are written decompressed, FINISHED_ROUND records
 *    are dropped (the records come out in time order), AUXTRACE data is
 *    dropped;
 *  - the BUILD_ID feature lists the input's build-ids and one for every
 *    module a written stack passes through (pipe mode: HEADER_BUILD_ID
 *    records before the first sample that needs them).
 */
#ifndef RESTACK_FORMATS_PERFDATA_WRITE_H
#define RESTACK_FORMATS_PERFDATA_WRITE_H

#include <stdbool.h>
#include <stdint.h>

#include "common/err.h"
#include "common/event.h"
#include "common/stack.h"
#include "formats/perfdata.h"

struct perfdata_writer;

struct perfdata_write_stats {
	uint64_t records;          /* written, header records included */
	uint64_t samples;          /* samples given a new callchain */
	uint64_t stripped;         /* samples of other DWARF events whose
				    * registers and stack were dropped */
	uint64_t dropped;          /* input records not carried over */
	uint64_t cut_callchains;   /* callchains cut to fit 64 KiB */
	uint64_t bytes;            /* output size */
};

/*
 * A writer to fd (kept open by the caller): pipe mode when pipe, else a
 * file-mode perf.data, which needs a seekable fd.  in_path names the
 * input (its attrs section and feature payloads are read from it when it
 * is a file-mode perf.data).  synth: the input is not perf.data (its
 * events' raw bytes are not records): attrs, the hostname, osrelease and
 * arch features and COMM, MMAP2, FORK, EXIT and SAMPLE records are made
 * from the events (formats/perfdata_synth.h).  Returns NULL with *err
 * filled.
 */
struct perfdata_writer *perfdata_writer_new(int fd, bool pipe,
					    const char *in_path, bool synth,
					    struct err *err);

/*
 * Takes the next event of the input, in order, with the resolved sample
 * when ev is a sample the unwinder resolved (else rs is NULL).  in is the
 * input's metadata.  Returns 0, or -1 with the error in
 * perfdata_writer_err().
 */
int perfdata_writer_event(struct perfdata_writer *w,
			  const struct perfdata_info *in,
			  const struct event *ev, const struct rsample *rs);

/*
 * For a synthesized output (synth): the kernel's _text address, so a
 * kernel mapping is written before the first record (none when 0).
 */
void perfdata_writer_set_kernel_text(struct perfdata_writer *w,
				     uint64_t text);

/* Writes what is left (file mode: features, attrs, the header). */
int perfdata_writer_finish(struct perfdata_writer *w,
			   const struct perfdata_info *in);

const struct err *perfdata_writer_err(const struct perfdata_writer *w);
const struct perfdata_write_stats *
perfdata_writer_stats(const struct perfdata_writer *w);

void perfdata_writer_free(struct perfdata_writer *w);

#endif
