/*
 * warmup.c - work a run will need, done ahead on a thread (see warmup.h).
 *
 * One thread takes jobs from a queue: a module's DWARF, queued when the
 * run starts for the files it expects (cmd/run_warm.c, whose look at the
 * capture's first records is a job here too, warmup_call()) and when the
 * module is loaded, which happens on its first sample (the unwinder needs
 * its CFI), long before the run names a frame of it when a prescan goes
 * first; the kernel symbols, queued when the run starts, once no DWARF
 * waits: the run's own thread reads them itself when it needs them first
 * (kallsyms_once), meanwhile this one inflates libc's DWARF, the larger
 * job (90 M instructions against 63 M for a Debian kernel's kallsyms).
 */
#include <libelf.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/mem.h"
#include "common/regfile.h"
#include "unwind/a2l_index.h"
#include "unwind/dwimage.h"
#include "unwind/ksyms.h"
#include "unwind/module.h"
#include "unwind/warmup.h"

struct warmup_job {
	struct warmup_job *next;
	char *path;                     /* the ELF file to inflate, or: */
	warmup_fn fn;                   /* work of the caller's */
	void *ctx;
};

/* A store into the DWARF cache, done when nothing else waits. */
struct warmup_store {
	struct warmup_store *next;
	struct dwimage_store_job *image;  /* or: */
	struct ksyms *ksyms;
};

struct warmup {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t more;
	struct warmup_job *head, **tail;
	struct kallsyms_once *ks;       /* to read when no DWARF waits */
	struct warmup_store *stores, **stores_tail;
	bool stopping;
	void **images;                  /* held until warmup_stop() */
	size_t nr_images, alloc_images;
};

/*
 * The image of the file at path, held by w; none when addr2line's tables
 * of the file are stored (a2l_index.h): naming then reads no DWARF.
 */
static void warmup_do_dwarf(struct warmup *w, const char *path)
{
	struct a2l_index_src src = { 0 };
	size_t size;
	void *image = NULL;
	/* a FIFO named like a debug file would block open() for good */
	int fd = regfile_open(path, NULL);
	Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;

	if (elf) {
		src.bid_len = module_elf_build_id(elf, src.bid,
						  sizeof(src.bid));
		size = 0;
		(void)elf_rawfile(elf, &size);
		src.raw_size = size;
	}
	if (elf && src.bid_len && !a2l_index_present(&src) &&
	    mem_grow(&w->images, &w->alloc_images, sizeof(*w->images),
		     w->nr_images + 1) == 0)
		image = dwimage_build(elf, fd, &size);
	if (image)
		w->images[w->nr_images++] = image;
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
}

/* Queues the store of image or k; false when out of memory. */
static bool warmup_add_store(struct warmup *w, struct dwimage_store_job *image,
			     struct ksyms *k)
{
	struct warmup_store *st = mem_zalloc(1, sizeof(*st));

	if (!st)
		return false;
	st->image = image;
	st->ksyms = k;
	pthread_mutex_lock(&w->lock);
	*w->stores_tail = st;
	w->stores_tail = &st->next;
	pthread_cond_signal(&w->more);
	pthread_mutex_unlock(&w->lock);
	return true;
}

/* dwimage_defer_stores()'s function: builds' stores come here. */
static bool warmup_defer_image(void *ctx, struct dwimage_store_job *job)
{
	return warmup_add_store(ctx, job, NULL);
}

static void warmup_do_store(struct warmup_store *st)
{
	if (st->image)
		dwimage_store_job_run(st->image);
	ksyms_store_index(st->ksyms);
	free(st);
}

/*
 * DWARF to inflate first, then the kernel symbols, then the stores into
 * the cache, which no one waits for (all of them, when stopping).
 */
static void *warmup_main(void *arg)
{
	struct warmup *w = arg;
	struct warmup_store *st;
	struct warmup_job *j;
	struct kallsyms_once *ks;

	for (;;) {
		pthread_mutex_lock(&w->lock);
		while (!w->head && !w->ks && !w->stores && !w->stopping)
			pthread_cond_wait(&w->more, &w->lock);
		j = w->stopping ? NULL : w->head;
		ks = w->stopping || j ? NULL : w->ks;
		st = j || ks ? NULL : w->stores;
		if (j && !(w->head = j->next))
			w->tail = &w->head;
		if (ks)
			w->ks = NULL;
		if (st && !(w->stores = st->next))
			w->stores_tail = &w->stores;
		pthread_mutex_unlock(&w->lock);
		if (ks) {
			struct ksyms *made = kallsyms_once_load_unstored(ks);

			if (made)
				warmup_store_ksyms(w, made);
			continue;
		}
		if (st) {
			warmup_do_store(st);
			continue;
		}
		if (!j)
			return NULL;
		if (j->fn)
			j->fn(j->ctx, w);
		else
			warmup_do_dwarf(w, j->path);
		free(j->path);
		free(j);
	}
}

struct warmup *warmup_start(void)
{
	struct warmup *w;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		return NULL;
	w = mem_zalloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->tail = &w->head;
	w->stores_tail = &w->stores;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->more, NULL);
	(void)elf_version(EV_CURRENT);
	if (pthread_create(&w->thread, NULL, warmup_main, w)) {
		pthread_cond_destroy(&w->more);
		pthread_mutex_destroy(&w->lock);
		free(w);
		return NULL;
	}
	dwimage_defer_stores(warmup_defer_image, w);
	return w;
}

/* Queues j (or drops it when out of memory: the work is only ahead). */
static void warmup_queue(struct warmup *w, struct warmup_job *j)
{
	pthread_mutex_lock(&w->lock);
	*w->tail = j;
	w->tail = &j->next;
	pthread_cond_signal(&w->more);
	pthread_mutex_unlock(&w->lock);
}

void warmup_kallsyms(struct warmup *w, struct kallsyms_once *k)
{
	if (!w)
		return;
	pthread_mutex_lock(&w->lock);
	w->ks = k;
	pthread_cond_signal(&w->more);
	pthread_mutex_unlock(&w->lock);
}

void warmup_store_ksyms(struct warmup *w, struct ksyms *k)
{
	if (!warmup_add_store(w, NULL, k))
		ksyms_store_index(k);   /* now, then */
}

void warmup_dwarf(struct warmup *w, const char *path)
{
	struct warmup_job *j = w && path ? mem_zalloc(1, sizeof(*j)) : NULL;

	if (!j)
		return;
	j->path = mem_strdup(path);
	if (!j->path) {
		free(j);
		return;
	}
	warmup_queue(w, j);
}

void warmup_call(struct warmup *w, warmup_fn fn, void *ctx)
{
	struct warmup_job *j = w ? mem_zalloc(1, sizeof(*j)) : NULL;

	if (!j)
		return;
	j->fn = fn;
	j->ctx = ctx;
	warmup_queue(w, j);
}

bool warmup_stopping(struct warmup *w)
{
	bool stopping;

	pthread_mutex_lock(&w->lock);
	stopping = w->stopping;
	pthread_mutex_unlock(&w->lock);
	return stopping;
}

void warmup_stop(struct warmup *w)
{
	struct warmup_job *j;
	size_t i;

	if (!w)
		return;
	/* builds from now on store what they build themselves */
	dwimage_defer_stores(NULL, NULL);
	pthread_mutex_lock(&w->lock);
	w->stopping = true;
	pthread_cond_signal(&w->more);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	while ((j = w->head)) {
		w->head = j->next;
		free(j->path);
		free(j);
	}
	for (i = 0; i < w->nr_images; i++)
		dwimage_free(w->images[i]);
	free(w->images);
	pthread_cond_destroy(&w->more);
	pthread_mutex_destroy(&w->lock);
	free(w);
}
