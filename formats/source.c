/*
 * source.c - the format-neutral reader front: sniffs the magic and
 * forwards to the reader of that format.
 */
#include <stdlib.h>

#include "formats/source.h"


struct source {
	enum source_format fmt;
	struct perfdata_reader *pd;
};

struct source *source_open(const char *path, struct err *err)
{
	struct source *s = calloc(1, sizeof(*s));

	if (!s) {
		err_set(err, ERR_NOMEM, ERR_NO_OFF, "out of memory");
		return NULL;
	}
	s->fmt = SOURCE_PERFDATA;
	s->pd = perfdata_open(path, NULL, err);
	if (!s->pd) {
		free(s);
		return NULL;
	}
	return s;
}

int source_next(struct source *s, struct event *ev)
{
	return perfdata_next(s->pd, ev);
}

enum source_format source_format(const struct source *s)
{
	return s->fmt;
}

const struct perfdata_info *source_info(const struct source *s)
{
	return perfdata_info(s->pd);
}

const struct err *source_err(const struct source *s)
{
	return perfdata_err(s->pd);
}

struct perfdata_reader *source_perfdata(const struct source *s)
{
	return s->pd;
}

void source_close(struct source *s)
{
	if (!s)
		return;
	perfdata_close(s->pd);
	free(s);
}
