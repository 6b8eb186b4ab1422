/*
 * perfdata_tp.c - a capture's tracepoints: its TRACING_DATA parsed on
 * first need (formats/tracepoint.c), and names for tracepoint events the
 * capture left unnamed.
 */
#include "formats/perfdata_internal.h"
#include "formats/tracepoint.h"

#define PD_TYPE_TRACEPOINT 2    /* perf_event_attr.type */

struct tracepoint *perfdata_tracepoints(struct perfdata_reader *r,
					struct err *err)
{
	if (!r->tp && !r->tp_tried && r->info.tracing_data) {
		r->tp_tried = true;
		r->tp = tracepoint_new(r->info.tracing_data,
				       r->info.tracing_data_size, &r->tp_err);
	}
	if (!r->tp && err) {
		if (r->tp_tried)
			*err = r->tp_err;
		else
			err_set(err, ERR_FORMAT, ERR_NO_OFF,
				"the capture has no tracing data");
	}
	return r->tp;
}

void pd_tracepoint_reset(struct perfdata_reader *r)
{
	tracepoint_free(r->tp);
	r->tp = NULL;
	r->tp_tried = false;
}

int pd_tracepoint_names(struct perfdata_reader *r)
{
	struct tracepoint *tp;
	const char *name;
	unsigned i;

	for (i = 0; i < r->info.nr_attrs; i++) {
		const struct event_attr *a = &r->info.attrs[i];

		if (a->type != PD_TYPE_TRACEPOINT || a->name)
			continue;
		/* Unusable tracing data only leaves the events unnamed. */
		tp = perfdata_tracepoints(r, NULL);
		if (!tp)
			return 0;
		name = tracepoint_name(tp, a->config);
		if (name && pd_attr_set_name(r, i, name) < 0)
			return -1;
	}
	return 0;
}
