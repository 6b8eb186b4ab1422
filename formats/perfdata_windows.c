/*
 * perfdata_windows.c - windows of one capture file mapped once for all the
 * readers of a process that read it at the same time (see perfdata.h).
 *
 * Each reader maps the file a window at a time (pd_map_base()); readers
 * that read the same file side by side, as the file workers of
 * cmd/run_shard.c do, would each map every window, and the kernel would
 * fill and clear the page tables of every window once per reader.  Here a
 * window is mapped by the first reader that needs it (with its page
 * tables filled, MADV_POPULATE_READ) and handed to the others while it is
 * still mapped.
 *
 * The first reader to take a window also maps the one after it
 * (pd_windows_ahead()), so that the others, close behind, find it ready
 * instead of waiting while it is mapped: two readers paced side by side
 * waited 4-10 ms in all on the bench's large capture.
 *
 * A window is unmapped when the last reference to it goes and every
 * expected reader has taken it, or, when readers fall behind or stop
 * early, once more than PD_WINDOWS_IDLE windows nobody holds are kept: the
 * oldest (lowest offset) go first, down to that many, whenever a window
 * is mapped or given back.  So memory stays bounded whatever the readers
 * do (the windows held, that many idle and one mapped ahead of each
 * reader); a reader that finds its window gone maps it again.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "formats/perfdata_internal.h"

#include "common/base.h"
#include "common/mem.h"

#define PD_WINDOWS_IDLE 4u      /* windows kept that nobody holds */
#define PD_WINDOWS_TRIM 4u      /* at most unmapped at once */

struct pd_window {
	uint64_t base;
	void *p;
	size_t len;
	unsigned refs;          /* readers holding it */
	unsigned takes;         /* times it was taken */
	bool mapping;           /* being mapped by a reader: wait */
};

struct perfdata_windows {
	pthread_mutex_t lock;
	pthread_cond_t mapped;
	unsigned readers;       /* expected to take every window */
	struct pd_window *w;
	size_t nr, alloc;
	struct perfdata_windows_stats stats;
};

struct perfdata_windows *perfdata_windows_new(unsigned readers)
{
	struct perfdata_windows *ws = mem_zalloc(1, sizeof(*ws));

	if (!ws)
		return NULL;
	ws->readers = readers ? readers : 1;
	pthread_mutex_init(&ws->lock, NULL);
	pthread_cond_init(&ws->mapped, NULL);
	return ws;
}

void perfdata_windows_free(struct perfdata_windows *ws)
{
	size_t i;

	if (!ws)
		return;
	for (i = 0; i < ws->nr; i++)
		if (ws->w[i].p)
			munmap(ws->w[i].p, ws->w[i].len);
	free(ws->w);
	pthread_cond_destroy(&ws->mapped);
	pthread_mutex_destroy(&ws->lock);
	free(ws);
}

void perfdata_windows_stats(struct perfdata_windows *ws,
			    struct perfdata_windows_stats *st)
{
	pthread_mutex_lock(&ws->lock);
	*st = ws->stats;
	pthread_mutex_unlock(&ws->lock);
}

static struct pd_window *pd_windows_find(struct perfdata_windows *ws,
					 uint64_t base)
{
	size_t i;

	for (i = 0; i < ws->nr; i++)
		if (ws->w[i].base == base)
			return &ws->w[i];
	return NULL;
}

static void pd_windows_remove(struct perfdata_windows *ws,
			      struct pd_window *w, struct pd_mapping *gone)
{
	*gone = (struct pd_mapping){ w->p, w->len };
	*w = ws->w[--ws->nr];
	ws->stats.unmaps++;
}

/*
 * Takes the oldest windows nobody holds off the table while more than
 * PD_WINDOWS_IDLE are idle, at most max of them (into gone, to unmap);
 * returns how many.  Every take, map ahead and put trims, and each adds
 * at most one idle window, so the idle ones stay PD_WINDOWS_IDLE however
 * far apart the readers are.
 */
static unsigned pd_windows_trim(struct perfdata_windows *ws,
				struct pd_mapping *gone, unsigned max)
{
	unsigned n = 0;

	while (n < max) {
		struct pd_window *old = NULL;
		unsigned idle = 0;
		size_t i;

		for (i = 0; i < ws->nr; i++) {
			struct pd_window *w = &ws->w[i];

			if (w->refs || w->mapping)
				continue;
			idle++;
			if (!old || w->base < old->base)
				old = w;
		}
		if (idle <= PD_WINDOWS_IDLE)
			break;
		pd_windows_remove(ws, old, &gone[n++]);
	}
	return n;
}

/*
 * Maps the window [base, +len), which is not in the table, with ws->lock
 * held on entry and released on return; the others wait for it meanwhile.
 * With hold, the caller takes it (a reference); else it waits for the
 * readers.  Returns the mapping or NULL.
 */
static void *pd_windows_map(struct perfdata_windows *ws, int fd,
			    uint64_t base, size_t len, bool hold)
{
	struct pd_mapping gone[PD_WINDOWS_TRIM];
	struct pd_window *w;
	unsigned n, i;
	void *p;

	if (mem_grow(&ws->w, &ws->alloc, sizeof(*ws->w), ws->nr + 1) < 0) {
		pthread_mutex_unlock(&ws->lock);
		return NULL;
	}
	w = &ws->w[ws->nr++];
	*w = (struct pd_window){ .base = base, .len = len, .mapping = true };
	pthread_mutex_unlock(&ws->lock);

	p = pd_map_window(fd, base, len, true);

	pthread_mutex_lock(&ws->lock);
	w = pd_windows_find(ws, base);
	w->mapping = false;
	if (p) {
		w->p = p;
		w->refs = w->takes = hold ? 1 : 0;
		ws->stats.maps++;
		ws->stats.ahead += !hold;
		ws->stats.peak = MAX(ws->stats.peak, ws->nr);
	} else {
		*w = ws->w[--ws->nr];
	}
	n = pd_windows_trim(ws, gone, PD_WINDOWS_TRIM);
	pthread_cond_broadcast(&ws->mapped);
	pthread_mutex_unlock(&ws->lock);
	for (i = 0; i < n; i++)
		munmap(gone[i].p, gone[i].len);
	return p;
}

void *pd_windows_take(struct perfdata_windows *ws, int fd, uint64_t base,
		      size_t len)
{
	struct pd_window *w;
	void *p;

	pthread_mutex_lock(&ws->lock);
	while ((w = pd_windows_find(ws, base)) && w->mapping)
		pthread_cond_wait(&ws->mapped, &ws->lock);
	if (w && w->len == len) {
		w->refs++;
		w->takes++;
		p = w->p;
		pthread_mutex_unlock(&ws->lock);
		return p;
	}
	if (w) {
		/* another length: the readers disagree on the end */
		pthread_mutex_unlock(&ws->lock);
		return NULL;
	}
	return pd_windows_map(ws, fd, base, len, true);
}

void pd_windows_ahead(struct perfdata_windows *ws, int fd, uint64_t base,
		      size_t len)
{
	pthread_mutex_lock(&ws->lock);
	if (pd_windows_find(ws, base))
		pthread_mutex_unlock(&ws->lock);
	else
		(void)pd_windows_map(ws, fd, base, len, false);
}

void pd_windows_put(struct perfdata_windows *ws, void *p, size_t len)
{
	struct pd_mapping gone[1 + PD_WINDOWS_TRIM];
	unsigned n = 0, i;
	size_t k;

	pthread_mutex_lock(&ws->lock);
	for (k = 0; k < ws->nr; k++)
		if (ws->w[k].p == p && !ws->w[k].mapping)
			break;
	if (k == ws->nr) {
		/* not shared: the reader's own */
		gone[n++] = (struct pd_mapping){ p, len };
		ws->stats.own_unmaps++;
	} else if (--ws->w[k].refs == 0 && ws->w[k].takes >= ws->readers) {
		pd_windows_remove(ws, &ws->w[k], &gone[n++]);
	}
	n += pd_windows_trim(ws, gone + n, PD_WINDOWS_TRIM);
	pthread_mutex_unlock(&ws->lock);
	for (i = 0; i < n; i++)
		munmap(gone[i].p, gone[i].len);
}
