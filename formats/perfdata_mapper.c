/*
 * perfdata_mapper.c - map the input's windows ahead on a thread of their
 * own (see perfdata_internal.h).
 *
 * Mapping a window costs the kernel about as much as everything the
 * reading thread does with its records: populating the page tables, and
 * clearing them again at munmap().  With worker threads resolving the
 * samples, the reading thread is the pipeline's bottleneck, so that cost
 * moves here: while the reader parses window k, this thread maps window
 * k + 1 with MAP_POPULATE and unmaps the windows the reader is done with.
 *
 * Window k + 1 is the one that holds the first record window k cuts,
 * which starts at most a record's size (PD_MAP_SLACK) before its end (see
 * pd_map_base()).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "formats/perfdata_internal.h"

#include "common/base.h"
#include "common/mem.h"

#define PD_MAPPER_UNMAPS 16u

struct pd_mapper {
	pthread_mutex_t lock;
	pthread_cond_t wake;     /* to the thread: work or stop */
	pthread_cond_t done;     /* to the reader: a window is ready */
	pthread_t thread;
	int fd;
	uint64_t data_end;       /* file offset where the records end */
	bool stop;
	bool want;               /* a window at want_base is wanted */
	uint64_t want_base;
	bool busy;               /* mapping want_base now */
	bool ready;              /* ready_map holds [ready_base, +len) */
	uint64_t ready_base;
	struct pd_mapping ready_map;
	struct pd_mapping unmaps[PD_MAPPER_UNMAPS];
	unsigned nr_unmaps;
};

void *pd_map_window(int fd, uint64_t base, size_t len, bool populate)
{
	void *p = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, (off_t)base);

	if (p == MAP_FAILED)
		return NULL;
	(void)madvise(p, len, MADV_HUGEPAGE);
	(void)madvise(p, len, MADV_SEQUENTIAL);
#ifdef MADV_POPULATE_READ
	if (populate)
		(void)madvise(p, len, MADV_POPULATE_READ);
#endif
	return p;
}

/* Maps [base, base + len) of the file with its page tables filled. */
static void *pd_mapper_map(const struct pd_mapper *m, uint64_t base,
			   size_t len)
{
	return pd_map_window(m->fd, base, len, true);
}

static void *pd_mapper_main(void *arg)
{
	struct pd_mapper *m = arg;
	struct pd_mapping gone[PD_MAPPER_UNMAPS];
	unsigned n, i;

	pthread_mutex_lock(&m->lock);
	for (;;) {
		while (!m->stop && !m->nr_unmaps && !(m->want && !m->ready))
			pthread_cond_wait(&m->wake, &m->lock);
		if (m->stop)
			break;
		n = m->nr_unmaps;
		memcpy(gone, m->unmaps, n * sizeof(gone[0]));
		m->nr_unmaps = 0;
		if (m->want && !m->ready) {
			uint64_t base = m->want_base;
			size_t len = (size_t)pd_map_len(base, m->data_end);
			void *p;

			m->want = false;
			m->busy = true;
			pthread_mutex_unlock(&m->lock);
			/* the reader waits for this; the unmaps come after */
			p = pd_mapper_map(m, base, len);
			pthread_mutex_lock(&m->lock);
			m->busy = false;
			if (p) {
				m->ready = true;
				m->ready_base = base;
				m->ready_map.p = p;
				m->ready_map.len = len;
			}
			pthread_cond_broadcast(&m->done);
		}
		if (n) {
			pthread_mutex_unlock(&m->lock);
			for (i = 0; i < n; i++)
				munmap(gone[i].p, gone[i].len);
			pthread_mutex_lock(&m->lock);
		}
	}
	pthread_mutex_unlock(&m->lock);
	return NULL;
}

struct pd_mapper *pd_mapper_start(int fd, uint64_t data_end)
{
	struct pd_mapper *m = mem_zalloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->fd = fd;
	m->data_end = data_end;
	pthread_mutex_init(&m->lock, NULL);
	pthread_cond_init(&m->wake, NULL);
	pthread_cond_init(&m->done, NULL);
	if (pthread_create(&m->thread, NULL, pd_mapper_main, m)) {
		pthread_cond_destroy(&m->done);
		pthread_cond_destroy(&m->wake);
		pthread_mutex_destroy(&m->lock);
		free(m);
		return NULL;
	}
	return m;
}

/*
 * Asks for the window after one that ends at file offset end: the one
 * holding the record that end cuts, which starts less than a record
 * before end.  Called with the lock held.
 */
static void pd_mapper_want_next_locked(struct pd_mapper *m, uint64_t end)
{
	if (end >= m->data_end)
		return;
	m->want = true;
	m->want_base = pd_map_base(end > PD_MAP_SLACK ? end - PD_MAP_SLACK : 0);
	pthread_cond_signal(&m->wake);
}

void *pd_mapper_take(struct pd_mapper *m, uint64_t base, uint64_t len,
		     void **map, size_t *map_len)
{
	uint64_t end = base + len;
	void *p = NULL;

	pthread_mutex_lock(&m->lock);
	/* the window asked for or being mapped is most likely this: wait */
	while ((m->busy || (m->want && m->want_base <= base)) && !m->ready)
		pthread_cond_wait(&m->done, &m->lock);
	if (m->ready && m->ready_base <= base &&
	    base + len <= m->ready_base + m->ready_map.len) {
		*map = m->ready_map.p;
		*map_len = m->ready_map.len;
		p = (uint8_t *)m->ready_map.p + (base - m->ready_base);
		end = m->ready_base + m->ready_map.len;
		m->ready = false;
	} else if (m->ready) {
		/* a wrong guess: the thread unmaps it */
		if (m->nr_unmaps < PD_MAPPER_UNMAPS)
			m->unmaps[m->nr_unmaps++] = m->ready_map;
		else
			munmap(m->ready_map.p, m->ready_map.len);
		m->ready = false;
	}
	pd_mapper_want_next_locked(m, end);
	pthread_mutex_unlock(&m->lock);
	return p;
}

void pd_mapper_unmap(struct pd_mapper *m, void *p, size_t len)
{
	pthread_mutex_lock(&m->lock);
	if (m->nr_unmaps < PD_MAPPER_UNMAPS) {
		m->unmaps[m->nr_unmaps++] = (struct pd_mapping){ p, len };
		pthread_cond_signal(&m->wake);
		p = NULL;
	}
	pthread_mutex_unlock(&m->lock);
	if (p)
		munmap(p, len);
}

void pd_mapper_stop(struct pd_mapper *m)
{
	unsigned i;

	if (!m)
		return;
	pthread_mutex_lock(&m->lock);
	m->stop = true;
	pthread_cond_signal(&m->wake);
	pthread_mutex_unlock(&m->lock);
	pthread_join(m->thread, NULL);
	for (i = 0; i < m->nr_unmaps; i++)
		munmap(m->unmaps[i].p, m->unmaps[i].len);
	if (m->ready)
		munmap(m->ready_map.p, m->ready_map.len);
	pthread_cond_destroy(&m->done);
	pthread_cond_destroy(&m->wake);
	pthread_mutex_destroy(&m->lock);
	free(m);
}
