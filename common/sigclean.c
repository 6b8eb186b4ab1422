/*
 * sigclean.c - paths to remove when a signal kills restack (see
 * sigclean.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/sigclean.h"

/* Directory levels removed below a registered tree, and the getdents64()
 * buffer of each level (static: only one thread ever removes). */
#define SIGCLEAN_DEPTH 64
#define SIGCLEAN_DENTS 2048
/* Passes over a tree before giving up on removing it. */
#define SIGCLEAN_PASSES 64

struct sigclean_slot {
	bool used;
	bool tree;
	char path[PATH_MAX];
};

static struct sigclean_slot sigclean_slots[SIGCLEAN_SLOTS];
static atomic_flag sigclean_busy = ATOMIC_FLAG_INIT;
static atomic_int sigclean_running;
static atomic_int sigclean_owner;   /* pid that registered paths */
static char sigclean_dents[SIGCLEAN_DEPTH][SIGCLEAN_DENTS];
static unsigned long sigclean_removed;  /* entries, by the one remover */

void sigclean_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGHUP);
}

/* Takes the table with the signals blocked in this thread: the handler
 * never waits for a thread it interrupted. */
static void sigclean_lock(sigset_t *old)
{
	sigset_t set;

	sigclean_signals(&set);
	pthread_sigmask(SIG_BLOCK, &set, old);
	while (atomic_flag_test_and_set_explicit(&sigclean_busy,
						 memory_order_acquire))
		;
}

static void sigclean_unlock(const sigset_t *old)
{
	atomic_flag_clear_explicit(&sigclean_busy, memory_order_release);
	pthread_sigmask(SIG_SETMASK, old, NULL);
}

/* A free slot's index, or -1. */
static int sigclean_free_slot(void)
{
	int i;

	for (i = 0; i < SIGCLEAN_SLOTS; i++)
		if (!sigclean_slots[i].used)
			return i;
	return -1;
}

static void sigclean_fill(int i, const char *path, bool tree)
{
	strcpy(sigclean_slots[i].path, path);
	sigclean_slots[i].tree = tree;
	sigclean_slots[i].used = true;
	atomic_store(&sigclean_owner, (int)getpid());
}

int sigclean_mkstemp(char *tmpl, int *id)
{
	sigset_t old;
	int fd = -1, i, e;

	*id = 0;
	if (strlen(tmpl) >= PATH_MAX) {
		errno = ENAMETOOLONG;
		return -1;
	}
	sigclean_lock(&old);
	i = sigclean_free_slot();
	if (i < 0)
		errno = ENOSPC;
	else if ((fd = mkostemp(tmpl, O_CLOEXEC)) >= 0)
		sigclean_fill(i, tmpl, false);
	e = errno;
	sigclean_unlock(&old);
	errno = e;
	if (fd >= 0)
		*id = i + 1;
	return fd;
}

char *sigclean_mkdtemp(char *tmpl, int *id)
{
	char *dir = NULL;
	sigset_t old;
	int i, e;

	*id = 0;
	if (strlen(tmpl) >= PATH_MAX) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	sigclean_lock(&old);
	i = sigclean_free_slot();
	if (i < 0)
		errno = ENOSPC;
	else if ((dir = mkdtemp(tmpl)))
		sigclean_fill(i, tmpl, true);
	e = errno;
	sigclean_unlock(&old);
	errno = e;
	if (dir)
		*id = i + 1;
	return dir;
}

void sigclean_del(int id)
{
	sigset_t old;

	if (id <= 0 || id > SIGCLEAN_SLOTS)
		return;
	sigclean_lock(&old);
	sigclean_slots[id - 1].used = false;
	sigclean_unlock(&old);
}

/*
 * Removes name (relative to the directory parent) and, when it is a
 * directory, everything below it, depth levels down from the registered
 * path.  Only async-signal-safe calls; symbolic links are removed, never
 * followed.  Returns whether name is gone; counts what it removed.
 */
static bool sigclean_remove_at(int parent, const char *name, unsigned depth)
{
	char *buf = sigclean_dents[depth];
	ssize_t n, off;
	int fd;

	if (unlinkat(parent, name, 0) == 0) {
		sigclean_removed++;
		return true;
	}
	if (errno != EISDIR)
		return errno == ENOENT;
	fd = openat(parent, name,
		    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT;
	while ((n = getdents64(fd, buf, SIGCLEAN_DENTS)) > 0) {
		for (off = 0; off < n;) {
			struct dirent64 *d = (void *)(buf + off);

			off += d->d_reclen;
			if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, ".."))
				continue;
			if (depth + 1 < SIGCLEAN_DEPTH)
				sigclean_remove_at(fd, d->d_name, depth + 1);
			else if (unlinkat(fd, d->d_name, 0) == 0)
				sigclean_removed++;
		}
	}
	close(fd);
	if (unlinkat(parent, name, AT_REMOVEDIR) == 0) {
		sigclean_removed++;
		return true;
	}
	return errno == ENOENT;
}

/*
 * Removes the tree at path: again while a pass removes something but
 * leaves the tree (entries a listing missed, or that a thread still
 * extracting added meanwhile).
 */
static void sigclean_remove_tree(const char *path)
{
	unsigned long before;
	int pass;

	for (pass = 0; pass < SIGCLEAN_PASSES; pass++) {
		before = sigclean_removed;
		if (sigclean_remove_at(AT_FDCWD, path, 0) ||
		    sigclean_removed == before)
			break;
	}
}

void sigclean_run(void)
{
	int i;

	/* a forked child (debuginfod helpers) leaves its parent's paths */
	if ((int)getpid() != atomic_load(&sigclean_owner))
		return;
	if (atomic_exchange(&sigclean_running, 1))
		for (;;)
			pause();
	/* held briefly, by a thread that blocks these signals */
	while (atomic_flag_test_and_set_explicit(&sigclean_busy,
						 memory_order_acquire))
		;
	for (i = 0; i < SIGCLEAN_SLOTS; i++) {
		if (!sigclean_slots[i].used)
			continue;
		if (sigclean_slots[i].tree)
			sigclean_remove_tree(sigclean_slots[i].path);
		else
			unlink(sigclean_slots[i].path);
	}
}
