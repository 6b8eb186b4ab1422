/*
 * dwcache.c - decompressed DWARF images kept on disk (see dwcache.h).
 *
 * A stored file: prefix bytes of zeroes, the image, zeroes up to a
 * multiple of 8, then a struct dwcache_tail saying what it is.  Ranges of
 * the image that are zeroes (the payloads of compressed sections, hidden
 * sections) are holes, written by no one.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/base.h"
#include "common/hashmap.h"
#include "common/mem.h"
#include "common/regfile.h"
#include "common/sigclean.h"
#include "unwind/dwcache.h"
#include "unwind/module.h"

#define DWCACHE_MAGIC "RSTKDWI1"
#define DWCACHE_VERSION 1
#define DWCACHE_MAX_SIZE (1ull << 34)   /* larger images are not stored */

struct dwcache_tail {
	char magic[8];
	uint32_t version;
	uint32_t bid_len;
	uint8_t bid[64];
	uint64_t raw_size;
	uint64_t header_hash;
	uint64_t prefix;      /* the image starts here in the file */
	uint64_t size;        /* its bytes */
	uint64_t tail_hash;   /* hashmap_fnv() of the bytes above */
};

static pthread_mutex_t dwcache_lock = PTHREAD_MUTEX_INITIALIZER;
static bool dwcache_configured;      /* dwcache_set_dir() was called */
static const char *dwcache_set;      /* its dir, NULL: no cache */
static char *dwcache_default;        /* from the environment */
static bool dwcache_default_done;
static struct dwcache_counters dwcache_counts;

void dwcache_set_dir(const char *dir)
{
	pthread_mutex_lock(&dwcache_lock);
	dwcache_configured = true;
	dwcache_set = dir;
	pthread_mutex_unlock(&dwcache_lock);
}

/* $XDG_CACHE_HOME/restack/dwarf, else $HOME/.cache/restack/dwarf. */
static char *dwcache_default_dir(void)
{
	const char *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	char buf[4096];
	int n;

	if (xdg && xdg[0] == '/')
		n = snprintf(buf, sizeof(buf), "%s/restack/dwarf", xdg);
	else if (home && home[0] == '/')
		n = snprintf(buf, sizeof(buf), "%s/.cache/restack/dwarf",
			     home);
	else
		return NULL;
	if (n < 0 || (size_t)n >= sizeof(buf))
		return NULL;
	return mem_strdup(buf);
}

const char *dwcache_dir(void)
{
	const char *dir;

	pthread_mutex_lock(&dwcache_lock);
	if (dwcache_configured) {
		dir = dwcache_set;
	} else {
		if (!dwcache_default_done)
			dwcache_default = dwcache_default_dir();
		dwcache_default_done = true;
		dir = dwcache_default;
	}
	pthread_mutex_unlock(&dwcache_lock);
	return dir;
}

void dwcache_get_counters(struct dwcache_counters *out)
{
	pthread_mutex_lock(&dwcache_lock);
	*out = dwcache_counts;
	pthread_mutex_unlock(&dwcache_lock);
}

static void dwcache_count(unsigned *counter)
{
	pthread_mutex_lock(&dwcache_lock);
	(*counter)++;
	pthread_mutex_unlock(&dwcache_lock);
}

bool dwcache_bid_name(const uint8_t *bid, unsigned bid_len, uint64_t size,
		      const char *ext, char *buf, size_t len)
{
	char hex[2 * 64 + 1];
	int n;

	if (!bid_len || bid_len > 64)
		return false;
	module_build_id_hex(bid, bid_len, hex);
	n = snprintf(buf, len, "%s-%llu.%s", hex, (unsigned long long)size,
		     ext);
	return n > 0 && (size_t)n < len;
}

/* <build-id>-<size>.dwimg in buf; false when it does not fit. */
static bool dwcache_name(const struct dwcache_key *key, char *buf, size_t len)
{
	return dwcache_bid_name(key->bid, key->bid_len, key->raw_size,
				"dwimg", buf, len);
}

/* DIR/name in buf; false without a cache or when it does not fit. */
static bool dwcache_path(const char *name, char *buf, size_t len)
{
	const char *dir = dwcache_dir();
	int n;

	if (!dir)
		return false;
	n = snprintf(buf, len, "%s/%s", dir, name);
	return n > 0 && (size_t)n < len;
}

int dwcache_open(const char *name)
{
	char path[4096];

	if (!dwcache_path(name, path, sizeof(path)))
		return -1;
	/* a FIFO of that name would block open() */
	return regfile_open(path, NULL);
}

void dwcache_count_loaded(void)
{
	dwcache_count(&dwcache_counts.loaded);
}

static void dwcache_fill_tail(struct dwcache_tail *t,
			      const struct dwcache_key *key, uint64_t prefix,
			      uint64_t size)
{
	memset(t, 0, sizeof(*t));
	memcpy(t->magic, DWCACHE_MAGIC, sizeof(t->magic));
	t->version = DWCACHE_VERSION;
	t->bid_len = key->bid_len;
	memcpy(t->bid, key->bid, key->bid_len);
	t->raw_size = key->raw_size;
	t->header_hash = key->header_hash;
	t->prefix = prefix;
	t->size = size;
	t->tail_hash = hashmap_fnv(HASHMAP_FNV_SEED, t,
				   offsetof(struct dwcache_tail, tail_hash));
}

static uint64_t dwcache_tail_off(uint64_t prefix, uint64_t size)
{
	return ALIGN_UP(prefix + size, 8);
}

void *dwcache_load(const struct dwcache_key *key, uint64_t size,
		   size_t prefix, size_t *map_size)
{
	struct dwcache_tail want, got;
	uint64_t tail_off = dwcache_tail_off(prefix, size);
	char name[256];
	struct stat st;
	void *p;
	int fd;

	if (size > DWCACHE_MAX_SIZE || !dwcache_name(key, name, sizeof(name)))
		return NULL;
	fd = dwcache_open(name);
	if (fd < 0)
		return NULL;
	dwcache_fill_tail(&want, key, prefix, size);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size != tail_off + sizeof(got) ||
	    pread(fd, &got, sizeof(got), (off_t)tail_off) !=
		    (ssize_t)sizeof(got) ||
	    memcmp(&got, &want, sizeof(got))) {
		close(fd);
		return NULL;
	}
	p = mmap(NULL, (size_t)(prefix + size), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return NULL;
	*map_size = (size_t)(prefix + size);
	dwcache_count_loaded();
	return p;
}

/* mkdir -p path (mode 0700 for what it creates); false on failure. */
static bool dwcache_mkdirs(const char *path)
{
	char buf[4096];
	size_t i, len = strlen(path);

	if (len == 0 || len >= sizeof(buf))
		return false;
	memcpy(buf, path, len + 1);
	for (i = 1; i <= len; i++) {
		if (buf[i] != '/' && buf[i] != '\0')
			continue;
		buf[i] = '\0';
		if (mkdir(buf, 0700) < 0 && errno != EEXIST)
			return false;
		buf[i] = i == len ? '\0' : '/';
	}
	return true;
}

static bool dwcache_pwrite_all(int fd, const void *buf, uint64_t len,
			       uint64_t off)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = pwrite(fd, p, (size_t)MIN(len, 1u << 30),
				   (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		p += n;
		off += (uint64_t)n;
		len -= (uint64_t)n;
	}
	return true;
}

bool dwcache_create(struct dwcache_file *f, const char *name)
{
	const char *dir = dwcache_dir();
	int n;

	f->fd = -1;
	f->ok = false;
	f->clean_id = 0;
	if (!dir || !dwcache_path(name, f->path, sizeof(f->path)))
		return false;
	n = snprintf(f->tmp, sizeof(f->tmp), "%s/.tmp-XXXXXX", dir);
	if (n < 0 || (size_t)n >= sizeof(f->tmp) || !dwcache_mkdirs(dir)) {
		dwcache_count(&dwcache_counts.failed);
		return false;
	}
	f->fd = sigclean_mkstemp(f->tmp, &f->clean_id);
	if (f->fd < 0 && errno == ENOSPC) {
		/* every slot taken (many workers storing at once) */
		f->clean_id = 0;
		f->fd = mkostemp(f->tmp, O_CLOEXEC);
	}
	if (f->fd < 0) {
		dwcache_count(&dwcache_counts.failed);
		return false;
	}
	f->ok = true;
	return true;
}

void dwcache_write(struct dwcache_file *f, const void *p, uint64_t len,
		   uint64_t off)
{
	f->ok = f->ok && dwcache_pwrite_all(f->fd, p, len, off);
}

void dwcache_finish(struct dwcache_file *f)
{
	if (f->fd < 0)
		return;
	f->ok = close(f->fd) == 0 && f->ok;
	f->fd = -1;
	if (f->ok && rename(f->tmp, f->path) == 0) {
		sigclean_del(f->clean_id);
		dwcache_count(&dwcache_counts.stored);
		return;
	}
	f->ok = false;
	unlink(f->tmp);
	sigclean_del(f->clean_id);
	dwcache_count(&dwcache_counts.failed);
}

void dwcache_store(const struct dwcache_key *key, const uint8_t *image,
		   uint64_t size, size_t prefix,
		   const struct dwcache_range *ranges, size_t nr)
{
	struct dwcache_tail tail;
	struct dwcache_file f;
	char name[256];
	size_t i;

	if (size > DWCACHE_MAX_SIZE || !dwcache_name(key, name, sizeof(name)) ||
	    !dwcache_create(&f, name))
		return;
	for (i = 0; f.ok && i < nr; i++) {
		if (ranges[i].off > size || ranges[i].len > size - ranges[i].off)
			f.ok = false;
		else
			dwcache_write(&f, image + ranges[i].off, ranges[i].len,
				      prefix + ranges[i].off);
	}
	dwcache_fill_tail(&tail, key, prefix, size);
	dwcache_write(&f, &tail, sizeof(tail), dwcache_tail_off(prefix, size));
	dwcache_finish(&f);
}
