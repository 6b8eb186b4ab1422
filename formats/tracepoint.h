/*
 * tracepoint.h - tracepoint events of a perf.data capture, named and
 * decoded with libtraceevent from the capture's TRACING_DATA (the
 * tracefs header_page, the event format files, printk formats and saved
 * command names that `perf record` copied).
 *
 * Built with libtraceevent (HAVE_TRACEEVENT); without it tracepoint_new()
 * fails with ERR_UNSUPPORTED.
 */
#ifndef RESTACK_FORMATS_TRACEPOINT_H
#define RESTACK_FORMATS_TRACEPOINT_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "common/strbuf.h"

struct tracepoint;

/*
 * Parses a TRACING_DATA blob (data, size; only borrowed during the
 * call).  Returns NULL with *err filled (offsets relative to the blob)
 * when it is malformed or libtraceevent rejects it.
 */
struct tracepoint *tracepoint_new(const uint8_t *data, uint64_t size,
				  struct err *err);
void tracepoint_free(struct tracepoint *tp);

/* "system:name" of the event with this id (the attr's config), or NULL. */
const char *tracepoint_name(struct tracepoint *tp, uint64_t id);

/*
 * Appends the decoded raw payload of a sample of event id:
 *   tp=system:name FIELD=VALUE ... trace="TEXT"
 * FIELD=VALUE for every field but the common_* ones (strings quoted with
 * C escapes, numbers in decimal, other arrays as {v,...}), TEXT the
 * event's print format applied as perf script prints it.  Appends
 * " tp=?" when the id is unknown or the payload is shorter than the
 * event's fields.  Returns 0, or -1 when the event is not known.
 */
int tracepoint_format(struct tracepoint *tp, uint64_t id, const void *raw,
		      size_t len, int cpu, struct strbuf *out);

/*
 * The number in field name of a sample of event id, sign-extended when
 * the field is signed.  Returns 0, or -1 when the event or the field is
 * unknown, not a number of 1, 2, 4 or 8 bytes, or outside the payload.
 */
int tracepoint_field(struct tracepoint *tp, uint64_t id, const void *raw,
		     size_t len, const char *name, int64_t *val);

#endif
