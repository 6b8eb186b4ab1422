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

/* DIR/<build-id>-<size>.dwimg in buf; false when it does not fit. */
static bool dwcache_path(const char *dir, const struct dwcache_key *key,
			 char *buf, size_t len)
{
	char hex[2 * sizeof(key->bid) + 1];
	int n;

	if (!key->bid_len || key->bid_len > sizeof(key->bid))
		return false;
	module_build_id_hex(key->bid, key->bid_len, hex);
	n = snprintf(buf, len, "%s/%s-%llu.dwimg", dir, hex,
		     (unsigned long long)key->raw_size);
	return n > 0 && (size_t)n < len;
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
	const char *dir = dwcache_dir();
	struct dwcache_tail want, got;
	uint64_t tail_off = dwcache_tail_off(prefix, size);
	char path[4096];
	struct stat st;
	void *p;
	int fd;

	if (!dir || size > DWCACHE_MAX_SIZE ||
	    !dwcache_path(dir, key, path, sizeof(path)))
		return NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
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
	dwcache_count(&dwcache_counts.loaded);
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

static bool dwcache_pwrite_all(int fd, const uint8_t *p, uint64_t len,
			       uint64_t off)
{
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

void dwcache_store(const struct dwcache_key *key, const uint8_t *image,
		   uint64_t size, size_t prefix,
		   const struct dwcache_range *ranges, size_t nr)
{
	const char *dir = dwcache_dir();
	struct dwcache_tail tail;
	char path[4096], tmp[4096];
	bool ok = true;
	size_t i;
	int fd, n;

	if (!dir || size > DWCACHE_MAX_SIZE ||
	    !dwcache_path(dir, key, path, sizeof(path)))
		return;
	n = snprintf(tmp, sizeof(tmp), "%s/.tmp-XXXXXX", dir);
	if (n < 0 || (size_t)n >= sizeof(tmp) || !dwcache_mkdirs(dir)) {
		dwcache_count(&dwcache_counts.failed);
		return;
	}
	fd = mkstemp(tmp);
	if (fd < 0) {
		dwcache_count(&dwcache_counts.failed);
		return;
	}
	for (i = 0; ok && i < nr; i++) {
		if (ranges[i].off > size || ranges[i].len > size - ranges[i].off)
			ok = false;
		else
			ok = dwcache_pwrite_all(fd, image + ranges[i].off,
						ranges[i].len,
						prefix + ranges[i].off);
	}
	dwcache_fill_tail(&tail, key, prefix, size);
	ok = ok && dwcache_pwrite_all(fd, (const uint8_t *)&tail, sizeof(tail),
				      dwcache_tail_off(prefix, size));
	ok = close(fd) == 0 && ok;
	if (ok && rename(tmp, path) == 0) {
		dwcache_count(&dwcache_counts.stored);
		return;
	}
	unlink(tmp);
	dwcache_count(&dwcache_counts.failed);
}
