/*
 * script.c - perf-script-shaped text for resolved samples.
 */
#include "formats/script.h"

void script_format_sample(const struct rsample *s, struct strbuf *out)
{
	uint32_t i;
	int k;

	strbuf_addf(out, "%s %d/%d ", s->comm, s->pid, s->tid);
	/* perf script shows no CPU column when the capture has none */
	if (s->cpu >= 0)
		strbuf_addf(out, "[%03d] ", s->cpu);
	strbuf_addf(out, "%llu.%06llu: %llu %s:\n",
		    (unsigned long long)(s->time / 1000000000),
		    (unsigned long long)(s->time % 1000000000 / 1000),
		    (unsigned long long)s->period, s->event);
	for (i = 0; i < s->nr_frames; i++) {
		const struct rframe *f = &s->frames[i];
		const struct sym_loc *l = f->loc;

		for (k = 0; k < l->nr; k++) {
			const char *mod = l->e[k].inlined ? "inlined" :
					  l->module ? l->module : "[unknown]";

			strbuf_addf(out, "\t%16llx %s (%s) %s\n",
				    (unsigned long long)f->pc,
				    l->e[k].name ? l->e[k].name : "[unknown]",
				    mod, frame_origin_name(f->origin));
		}
	}
	if (rsample_marker(s))
		strbuf_addf(out, "\t%16llx %s ([unknown]) marker\n", 0ull,
			    rsample_marker(s));
	strbuf_addch(out, '\n');
}
