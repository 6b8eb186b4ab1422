/*
 * source.c - the format-neutral reader front: sniffs the magic and
 * forwards to the reader of that format.
 */
#include <stdlib.h>

#include "formats/source.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "formats/syscap.h"
#include "formats/syscap_read.h"


struct source {
	enum source_format fmt;
	struct perfdata_reader *pd;
	struct syscap_reader *sc;
	sample_filter_fn filter;        /* sysprof: applied here */
	void *filter_ctx;
	uint64_t order;                 /* sysprof: the next event.order */
};

enum source_format source_sniff(const char *path)
{
	uint8_t head[8];
	ssize_t n = 0;
	int fd;

	if (!strcmp(path, "-"))
		return SOURCE_PERFDATA;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, head, sizeof(head));
		close(fd);
	}
	if (n > 0 && syscap_probe(head, (size_t)n))
		return SOURCE_SYSPROF;
	return SOURCE_PERFDATA;
}

struct source *source_open(const char *path, struct err *err)
{
	struct source *s = calloc(1, sizeof(*s));

	if (!s) {
		err_set(err, ERR_NOMEM, ERR_NO_OFF, "out of memory");
		return NULL;
	}
	s->fmt = source_sniff(path);
	if (s->fmt == SOURCE_SYSPROF)
		s->sc = syscap_open(path, err);
	else
		s->pd = perfdata_open(path, NULL, err);
	if (!s->pd && !s->sc) {
		free(s);
		return NULL;
	}
	return s;
}

/* The sysprof reader's next event, numbered and filtered. */
static int source_next_syscap(struct source *s, struct event *ev)
{
	struct sample_key k;
	int rc;

	for (;;) {
		rc = syscap_next(s->sc, ev);
		if (rc <= 0)
			return rc;
		ev->order = s->order++;
		if (ev->type != EVENT_SAMPLE || !s->filter)
			return rc;
		k.attr = ev->attr ? ev->attr->index : 0;
		k.pid = ev->pid;
		k.tid = ev->tid;
		k.order = ev->order;
		k.as_read = false;
		if (s->filter(s->filter_ctx, &k) != SAMPLE_DROP)
			return rc;
	}
}

int source_next(struct source *s, struct event *ev)
{
	return s->sc ? source_next_syscap(s, ev) : perfdata_next(s->pd, ev);
}

void source_set_sample_filter(struct source *s, sample_filter_fn fn,
			      void *ctx, enum sample_filter_when when)
{
	if (s->pd) {
		perfdata_set_sample_filter(s->pd, fn, ctx, when);
		return;
	}
	s->filter = fn;
	s->filter_ctx = ctx;
}

enum source_format source_format(const struct source *s)
{
	return s->fmt;
}

const struct perfdata_info *source_info(const struct source *s)
{
	return s->sc ? syscap_info(s->sc) : perfdata_info(s->pd);
}

const struct err *source_err(const struct source *s)
{
	return s->sc ? syscap_err(s->sc) : perfdata_err(s->pd);
}

void *source_hold(struct source *s)
{
	return s->pd ? perfdata_hold(s->pd) : NULL;
}

void source_release(struct source *s, void *token)
{
	if (s->pd)
		perfdata_release(s->pd, token);
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
	syscap_close(s->sc);
	free(s);
}
