/*
 * source.c - the format-neutral reader front: sniffs the magic and
 * forwards to the reader of that format.
 */
#include <stdlib.h>

#include "formats/source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

#include "common/input.h"
#include "formats/syscap.h"
#include "formats/syscap_read.h"


struct source {
	enum source_format fmt;
	struct perfdata_reader *pd;
	struct syscap_reader *sc;
	sample_filter_fn filter;        /* sysprof: applied here */
	void *filter_ctx;
	uint64_t order;                 /* sysprof: the next event.order */
	int fd;                         /* a FIFO perf.data is read from, or
					 * -1 */
};

/*
 * A FIFO source_sniff() opened and peeked at: source_open() reads it from
 * there (opened again, the bytes peeked at would be gone).
 */
static char *source_fifo_path;
static int source_fifo_fd = -1;

bool source_is_stream(const char *path)
{
	struct stat st;

	if (!strcmp(path, "-"))
		return fstat(STDIN_FILENO, &st) < 0 || !S_ISREG(st.st_mode) ||
		       lseek(STDIN_FILENO, 0, SEEK_CUR) != 0;
	return stat(path, &st) == 0 && !S_ISREG(st.st_mode) &&
	       !S_ISDIR(st.st_mode);
}

enum source_format source_sniff(const char *path)
{
	uint8_t head[8];
	long long n = -1;
	struct err err;
	int fd;

	/* a stream's first bytes are kept for its reader (common/input.h) */
	if (!strcmp(path, "-")) {
		n = input_peek_fd(STDIN_FILENO, head, sizeof(head), &err);
	} else if (source_fifo_path && !strcmp(path, source_fifo_path)) {
		n = input_peek_fd(source_fifo_fd, head, sizeof(head), &err);
	} else if (source_is_stream(path)) {
		fd = source_fifo_path ? -1 : open(path, O_RDONLY | O_CLOEXEC);
		source_fifo_path = fd >= 0 ? strdup(path) : NULL;
		if (source_fifo_path) {
			source_fifo_fd = fd;
			n = input_peek_fd(fd, head, sizeof(head), &err);
		} else if (fd >= 0) {
			close(fd);
		}
	} else {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			n = read(fd, head, sizeof(head));
			close(fd);
		}
	}
	if (n > 0 && syscap_probe(head, (size_t)n))
		return SOURCE_SYSPROF;
	return SOURCE_PERFDATA;
}

/* The descriptor source_sniff() left open for path, or -1. */
static int source_take_fifo(const char *path)
{
	int fd = source_fifo_fd;

	if (!source_fifo_path || strcmp(path, source_fifo_path))
		return -1;
	free(source_fifo_path);
	source_fifo_path = NULL;
	source_fifo_fd = -1;
	return fd;
}

struct source *source_open(const char *path, struct err *err)
{
	struct source *s = calloc(1, sizeof(*s));
	int fd;

	if (!s) {
		err_set(err, ERR_NOMEM, ERR_NO_OFF, "out of memory");
		return NULL;
	}
	s->fd = -1;
	s->fmt = source_sniff(path);
	fd = source_take_fifo(path);
	if (s->fmt == SOURCE_SYSPROF && fd >= 0)
		s->sc = syscap_open_fd(fd, true, path, err);
	else if (s->fmt == SOURCE_SYSPROF)
		s->sc = syscap_open(path, err);
	else if (fd >= 0 && (s->pd = perfdata_open_fd(fd, path, NULL, err)))
		s->fd = fd;
	else if (fd >= 0)
		close(fd);
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

uint64_t source_late(const struct source *s)
{
	return s->sc ? syscap_late(s->sc) : 0;
}

const struct perfdata_info *source_info(const struct source *s)
{
	return s->sc ? syscap_info(s->sc) : perfdata_info(s->pd);
}

const struct err *source_err(const struct source *s)
{
	return s->sc ? syscap_err(s->sc) : perfdata_err(s->pd);
}

void source_set_idle(struct source *s, void (*fn)(void *ctx), void *ctx)
{
	if (s->sc)
		syscap_set_idle(s->sc, fn, ctx);
}

bool source_backlogged(struct source *s)
{
	return s->sc && syscap_backlogged(s->sc);
}

bool source_reads_ahead(const struct source *s)
{
	return s->sc && syscap_is_stream(s->sc);
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
	if (s->fd >= 0)
		close(s->fd);
	syscap_close(s->sc);
	free(s);
}
