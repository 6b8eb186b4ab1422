/*
 * ksyms.c - kernel symbols with an on-disk index (see ksyms.h).
 *
 * A stored index: a struct ksyms_hdr, nr struct ksyms_ent sorted by start
 * (symtab.c's table after its fixups: one symbol per start, ends set),
 * then the names, each ksyms_ent naming its bytes there.
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/base.h"
#include "common/bsearch.h"
#include "common/hashmap.h"
#include "common/mem.h"
#include "common/regfile.h"
#include "unwind/dwcache.h"
#include "unwind/ksyms.h"
#include "unwind/symtab.h"

#define KSYMS_MAGIC "RSTKKSY1"
/*
 * The layout of a stored index and the rules that made its table: bump it
 * when either changes (symtab.c's kallsyms parsing or its fixups too), so
 * that no run takes names from an index older rules made.
 */
#define KSYMS_VERSION 2
/* Files changed this recently are not indexed: a rewrite within the same
 * tick of the file system's clock keeps their times (git's racy-clean
 * rule). */
#define KSYMS_SETTLE_NS 2000000000ull

/* What identifies the kallsyms file an index was made from. */
struct ksyms_src {
	uint64_t dev, ino, size;
	uint64_t mtime_ns, ctime_ns;
	uint64_t ends_hash;   /* of its first and last KSYMS_END_BYTES */
};

#define KSYMS_END_BYTES 4096

struct ksyms_hdr {
	char magic[8];
	uint32_t version, pad;
	struct ksyms_src src;
	uint64_t nr;          /* entries after the header */
	uint64_t names_len;   /* name bytes after them */
	uint64_t hash;        /* hashmap_fnv() of the fields above */
};

struct ksyms_ent {
	uint64_t start, end;  /* [start, end), as symtab_lookup() tests */
	uint32_t name_off;    /* in the names */
	uint32_t name_len;
};

#define KSYMS_ENT_START(e) ((e)->start)
UPPER_BOUND_DEFINE(ksyms_upper, struct ksyms_ent, KSYMS_ENT_START)

struct ksyms {
	struct symtab *tab;           /* parsed this run, or NULL: */
	const struct ksyms_ent *ent;  /* the stored index, mapped */
	size_t nr;
	const char *names;
	uint64_t names_len;
	void *map;
	size_t map_size;
	bool store_pending;           /* ksyms_store_index() has to */
	struct ksyms_src src;         /* ... the identity it was made from */
	char name[64];                /* ... and its index's file name */
};

/*
 * The identity of path in *src; false when it is no regular file with
 * contents (procfs files have size 0).  The hash of its ends catches a
 * file rewritten in place within one tick of the file system's clock with
 * the same size (a kallsyms file of another boot differs at its start).
 */
static bool ksyms_identify(const char *path, struct ksyms_src *src)
{
	uint8_t buf[KSYMS_END_BYTES];
	struct stat st;
	ssize_t n;
	int fd = regfile_open(path, NULL);

	if (fd < 0)
		return false;
	if (fstat(fd, &st) < 0 || st.st_size <= 0) {
		close(fd);
		return false;
	}
	memset(src, 0, sizeof(*src));
	src->ends_hash = HASHMAP_FNV_SEED;
	n = pread(fd, buf, sizeof(buf), 0);
	if (n > 0)
		src->ends_hash = hashmap_fnv(src->ends_hash, buf, (size_t)n);
	n = pread(fd, buf, sizeof(buf),
		  st.st_size > (off_t)sizeof(buf) ?
			  st.st_size - (off_t)sizeof(buf) : 0);
	if (n > 0)
		src->ends_hash = hashmap_fnv(src->ends_hash, buf, (size_t)n);
	close(fd);
	src->dev = (uint64_t)st.st_dev;
	src->ino = (uint64_t)st.st_ino;
	src->size = (uint64_t)st.st_size;
	src->mtime_ns = (uint64_t)st.st_mtim.tv_sec * 1000000000ull +
			(uint64_t)st.st_mtim.tv_nsec;
	src->ctime_ns = (uint64_t)st.st_ctim.tv_sec * 1000000000ull +
			(uint64_t)st.st_ctim.tv_nsec;
	return true;
}

/* Whether src's times are far enough in the past (KSYMS_SETTLE_NS). */
static bool ksyms_settled(const struct ksyms_src *src)
{
	struct timespec now;
	uint64_t t;

	if (clock_gettime(CLOCK_REALTIME, &now) < 0)
		return false;
	t = (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
	return t > src->mtime_ns + KSYMS_SETTLE_NS &&
	       t > src->ctime_ns + KSYMS_SETTLE_NS;
}

static void ksyms_name(const struct ksyms_src *src, char *buf, size_t len)
{
	snprintf(buf, len, "kallsyms-%016llx.ksyms",
		 (unsigned long long)hashmap_fnv(HASHMAP_FNV_SEED, src,
						 sizeof(*src)));
}

static void ksyms_fill_hdr(struct ksyms_hdr *h, const struct ksyms_src *src,
			   uint64_t nr, uint64_t names_len)
{
	memset(h, 0, sizeof(*h));
	memcpy(h->magic, KSYMS_MAGIC, sizeof(h->magic));
	h->version = KSYMS_VERSION;
	h->src = *src;
	h->nr = nr;
	h->names_len = names_len;
	h->hash = hashmap_fnv(HASHMAP_FNV_SEED, h,
			      offsetof(struct ksyms_hdr, hash));
}

/* Maps the stored index of src into k; false when there is none whole. */
static bool ksyms_map(struct ksyms *k, const char *name,
		      const struct ksyms_src *src)
{
	struct ksyms_hdr got, want;
	struct stat st;
	uint64_t ents;
	void *p;
	int fd = dwcache_open(name);

	if (fd < 0)
		return false;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    pread(fd, &got, sizeof(got), 0) != (ssize_t)sizeof(got))
		goto fail;
	ksyms_fill_hdr(&want, src, got.nr, got.names_len);
	ents = got.nr * sizeof(struct ksyms_ent);
	if (memcmp(&got, &want, sizeof(got)) || got.nr > SIZE_MAX / 64 ||
	    got.names_len > SIZE_MAX / 2 ||
	    (uint64_t)st.st_size != sizeof(got) + ents + got.names_len)
		goto fail;
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		goto fail;
	close(fd);
	k->map = p;
	k->map_size = (size_t)st.st_size;
	k->ent = (const struct ksyms_ent *)((const char *)p + sizeof(got));
	k->nr = (size_t)got.nr;
	k->names = (const char *)p + sizeof(got) + ents;
	k->names_len = got.names_len;
	dwcache_count_loaded();
	return true;
fail:
	close(fd);
	return false;
}

/* Writes an index file in order through a buffer. */
struct ksyms_writer {
	struct dwcache_file f;
	uint64_t off;
	size_t used;
	uint8_t buf[1 << 16];
};

static void ksyms_put(struct ksyms_writer *w, const void *p, size_t len)
{
	const uint8_t *b = p;

	while (len) {
		size_t n = MIN(len, sizeof(w->buf) - w->used);

		memcpy(w->buf + w->used, b, n);
		w->used += n;
		b += n;
		len -= n;
		if (w->used == sizeof(w->buf)) {
			dwcache_write(&w->f, w->buf, w->used, w->off);
			w->off += w->used;
			w->used = 0;
		}
	}
}

/* Stores t as the index of src (failures only count: dwcache.h). */
static void ksyms_write_index(const struct symtab *t, const char *name,
			      const struct ksyms_src *src)
{
	struct ksyms_writer *w = malloc(sizeof(*w));
	struct ksyms_hdr h;
	uint64_t names_len = 0;
	size_t i, nr;
	const struct symtab_sym *syms = symtab_syms(t, &nr);

	if (!w || !dwcache_create(&w->f, name)) {
		free(w);
		return;
	}
	w->off = sizeof(h);
	w->used = 0;
	for (i = 0; i < nr; i++) {
		size_t len = symtab_name_len(&syms[i]);
		struct ksyms_ent e = { syms[i].start, syms[i].end,
				       (uint32_t)names_len, (uint32_t)len };

		if (names_len + len > UINT32_MAX) {
			w->f.ok = false;
			break;
		}
		ksyms_put(w, &e, sizeof(e));
		names_len += len;
	}
	for (i = 0; w->f.ok && i < nr; i++)
		ksyms_put(w, syms[i].name, symtab_name_len(&syms[i]));
	dwcache_write(&w->f, w->buf, w->used, w->off);
	ksyms_fill_hdr(&h, src, nr, names_len);
	dwcache_write(&w->f, &h, sizeof(h), 0);
	dwcache_finish(&w->f);
	free(w);
}

struct ksyms *ksyms_load(const char *path)
{
	struct ksyms *k = ksyms_load_unstored(path);

	ksyms_store_index(k);
	return k;
}

void ksyms_store_index(struct ksyms *k)
{
	if (!k || !k->store_pending)
		return;
	ksyms_write_index(k->tab, k->name, &k->src);
	k->store_pending = false;
}

struct ksyms *ksyms_load_unstored(const char *path)
{
	struct ksyms *k = mem_zalloc(1, sizeof(*k));
	struct ksyms_src src, again;
	bool known;
	char name[64];
	int fd;

	if (!k)
		return NULL;
	/* a FIFO or device would block reading it (procfs files are regular) */
	fd = regfile_open(path, NULL);
	if (fd < 0) {
		free(k);
		return NULL;
	}
	close(fd);
	known = dwcache_dir() && ksyms_identify(path, &src);
	if (known) {
		ksyms_name(&src, name, sizeof(name));
		if (ksyms_map(k, name, &src))
			return k;
	}
	k->tab = symtab_load_kallsyms(path);
	if (!k->tab) {
		free(k);
		return NULL;
	}
	/* stored only when the file stayed the same while it was read */
	if (known && ksyms_settled(&src) && ksyms_identify(path, &again) &&
	    !memcmp(&src, &again, sizeof(src))) {
		k->store_pending = true;
		k->src = src;
		memcpy(k->name, name, sizeof(k->name));
	}
	return k;
}

const char *ksyms_lookup(const struct ksyms *k, uint64_t addr, size_t *len)
{
	const struct ksyms_ent *e;
	size_t lo;

	if (!k)
		return NULL;
	if (k->tab) {
		const struct symtab_sym *s = symtab_lookup(k->tab, addr);

		if (!s)
			return NULL;
		*len = symtab_name_len(s);
		return s->name;
	}
	lo = ksyms_upper(k->ent, k->nr, addr);
	if (lo == 0)
		return NULL;
	e = &k->ent[lo - 1];
	if (!symtab_range_has(e->start, e->end, addr))
		return NULL;
	/* the index is trusted like the cache's other files, but bounded */
	if (e->name_off > k->names_len ||
	    e->name_len > k->names_len - e->name_off)
		return NULL;
	*len = e->name_len;
	return k->names + e->name_off;
}

void ksyms_free(struct ksyms *k)
{
	if (!k)
		return;
	symtab_free(k->tab);
	if (k->map)
		munmap(k->map, k->map_size);
	free(k);
}
