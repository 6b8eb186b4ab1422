/*
 * dwimage.c - decompressed DWARF for libdw (see dwimage.h).
 *
 * The image has the file's layout: its ELF and program headers and the
 * sections it keeps at their offsets (the compressed payloads and hidden
 * sections, which no one reads there, are not copied: those pages stay
 * untouched zeroes), then each decompressed section, then a new section
 * header table (the ELF header's e_shoff points to it).  Decompressed
 * sections get their new offset and size and lose SHF_COMPRESSED; hidden
 * ones become SHT_NOBITS and their name loses its leading dot, so libdw
 * does not recognise them.  The decompressed part starts on a huge page
 * of its own (mem_huge()) when it fills one.
 *
 * .debug_line, when the caller gives the file's descriptor, comes last,
 * on pages of its own without huge pages, and is inflated only when
 * dwimage_need_lines() asks: inline names read line tables only for
 * addresses without a function DIE, which most runs never meet (libc's
 * line tables are a sixth of its DWARF).  Its compressed bytes are read
 * from the image's own mapping of the file.
 */
#include <elf.h>
#include <gelf.h>
#include <libdeflate.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/base.h"
#include "common/hashmap.h"
#include "common/mem.h"
#include "unwind/dwcache.h"
#include "unwind/dwimage.h"
#include "unwind/module.h"

#define DWIMAGE_MAX_OUT (1ull << 32)  /* decompressed bytes at most */
#define DWIMAGE_HDR 64   /* before the image: the mapping's size and
			  * the lazy state (struct dwimage_hdr) */
/* Images with this many inflated bytes or more are kept in dwcache. */
#define DWIMAGE_CACHE_MIN ((uint64_t)256 << 10)
/* Changes whenever the layout below does: stored images then miss. */
#define DWIMAGE_LAYOUT_VERSION 1
/* .debug_line, inflated when first asked for. */
struct dwimage_lazy {
	pthread_mutex_t lock;
	const uint8_t *src;        /* the file, mapped by the image */
	size_t src_size;
	uint64_t in_off, in_size;  /* compressed bytes, in src */
	uint8_t *out;              /* where they go in the image */
	uint64_t out_size;
	bool done, failed;
};

/* The DWIMAGE_HDR bytes before an image. */
struct dwimage_hdr {
	size_t map_size;
	struct dwimage_lazy *lazy;  /* NULL: everything is inflated */
};

/* DWARF sections restack never reads: libdw need not see them. */
static bool dwimage_hidden(const char *name)
{
	static const char *const hide[] = {
		".debug_loc", ".debug_loclists", ".debug_macro",
		".debug_macinfo", ".debug_pubnames", ".debug_pubtypes",
		".debug_gnu_pubnames", ".debug_gnu_pubtypes",
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(hide); i++)
		if (!strcmp(name, hide[i]))
			return true;
	return false;
}

/* What to do with one section. */
struct dwimage_sec {
	enum { DWS_KEEP, DWS_INFLATE, DWS_HIDE, DWS_LAZY } what;
	uint64_t in_off, in_size;   /* compressed payload (after the chdr),
				     * or the bytes of a kept section */
	uint64_t out_size, align;
	uint64_t new_off;
};

/* Reads the compression header at off; false when it is not zlib's. */
static bool dwimage_chdr(const uint8_t *raw, size_t raw_size, bool is64,
			 uint64_t off, uint64_t size, struct dwimage_sec *s)
{
	size_t hsize = is64 ? sizeof(Elf64_Chdr) : sizeof(Elf32_Chdr);

	if (off > raw_size || size > raw_size - off || size < hsize)
		return false;
	if (is64) {
		Elf64_Chdr ch;

		memcpy(&ch, raw + off, sizeof(ch));
		if (ch.ch_type != ELFCOMPRESS_ZLIB)
			return false;
		s->out_size = ch.ch_size;
		s->align = ch.ch_addralign;
	} else {
		Elf32_Chdr ch;

		memcpy(&ch, raw + off, sizeof(ch));
		if (ch.ch_type != ELFCOMPRESS_ZLIB)
			return false;
		s->out_size = ch.ch_size;
		s->align = ch.ch_addralign;
	}
	s->in_off = off + hsize;
	s->in_size = size - hsize;
	return true;
}

/* Rewrites section header i of the table at tab for s. */
static void dwimage_shdr(uint8_t *tab, size_t entsize, bool is64, size_t i,
			 const struct dwimage_sec *s)
{
	if (is64) {
		Elf64_Shdr sh;

		memcpy(&sh, tab + i * entsize, sizeof(sh));
		sh.sh_flags &= ~(uint64_t)SHF_COMPRESSED;
		if (s->what == DWS_HIDE) {
			sh.sh_name++;
			sh.sh_type = SHT_NOBITS;
		} else {
			sh.sh_offset = s->new_off;
			sh.sh_size = s->out_size;
			sh.sh_addralign = s->align;
		}
		memcpy(tab + i * entsize, &sh, sizeof(sh));
	} else {
		Elf32_Shdr sh;

		memcpy(&sh, tab + i * entsize, sizeof(sh));
		sh.sh_flags &= ~(Elf32_Word)SHF_COMPRESSED;
		if (s->what == DWS_HIDE) {
			sh.sh_name++;
			sh.sh_type = SHT_NOBITS;
		} else {
			sh.sh_offset = (Elf32_Off)s->new_off;
			sh.sh_size = (Elf32_Word)s->out_size;
			sh.sh_addralign = (Elf32_Word)s->align;
		}
		memcpy(tab + i * entsize, &sh, sizeof(sh));
	}
}

/*
 * Decides per section (.debug_line lazy when lazy); returns the
 * decompressed bytes needed, 0: none.
 */
static uint64_t dwimage_plan(Elf *elf, const uint8_t *raw, size_t raw_size,
			     bool is64, struct dwimage_sec *secs,
			     size_t shnum, size_t shstrndx, bool lazy)
{
	uint64_t out = 0;
	size_t i;

	for (i = 1; i < shnum; i++) {
		Elf_Scn *scn = elf_getscn(elf, i);
		struct dwimage_sec *s = &secs[i];
		const char *name;
		GElf_Shdr sh;

		s->what = DWS_KEEP;
		if (!scn || !gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type != SHT_NOBITS && sh.sh_offset < raw_size) {
			s->in_off = sh.sh_offset;
			s->in_size = MIN(sh.sh_size, raw_size - sh.sh_offset);
		}
		if (!(sh.sh_flags & SHF_COMPRESSED) || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || strncmp(name, ".debug_", 7))
			continue;
		if (dwimage_hidden(name)) {
			s->what = DWS_HIDE;
			s->in_size = 0;
			continue;
		}
		if (!dwimage_chdr(raw, raw_size, is64, sh.sh_offset,
				  sh.sh_size, s) ||
		    s->out_size > DWIMAGE_MAX_OUT - out)
			return 0;   /* leave the file to libdw */
		s->what = lazy && !strcmp(name, ".debug_line") ? DWS_LAZY :
								  DWS_INFLATE;
		if (s->align > 4096 || (s->align & (s->align - 1)))
			return 0;
		out += s->out_size + 8;
	}
	return out;
}

/* Inflates zlib data in into exactly out_size bytes at out. */
static bool dwimage_inflate(struct libdeflate_decompressor *dec,
			    const uint8_t *in, uint64_t in_size, uint8_t *out,
			    uint64_t out_size)
{
	size_t got = 0;

	return dec &&
	       libdeflate_zlib_decompress(dec, in, (size_t)in_size, out,
					  (size_t)out_size, &got) ==
		       LIBDEFLATE_SUCCESS &&
	       got == out_size;
}

/* Inflates the lazy section unless that is done (or failed); its result. */
static bool dwimage_lazy_inflate(struct dwimage_lazy *lz)
{
	struct libdeflate_decompressor *dec;
	bool ok;

	pthread_mutex_lock(&lz->lock);
	if (!lz->done && !lz->failed) {
		dec = libdeflate_alloc_decompressor();
		lz->done = dwimage_inflate(dec, lz->src + lz->in_off,
					   lz->in_size, lz->out, lz->out_size);
		lz->failed = !lz->done;
		libdeflate_free_decompressor(dec);
	}
	ok = lz->done;
	pthread_mutex_unlock(&lz->lock);
	return ok;
}

/*
 * Copies the ELF and program headers, as far as the file has them;
 * returns how many bytes that is.
 */
static uint64_t dwimage_headers(Elf *elf, uint8_t *img, const uint8_t *raw,
				size_t raw_size, const GElf_Ehdr *eh)
{
	uint64_t end = eh->e_ehsize;
	size_t nph;

	if (elf_getphdrnum(elf, &nph) == 0 && nph && eh->e_phoff &&
	    eh->e_phoff < raw_size)
		end = MAX(end, eh->e_phoff + (uint64_t)nph * eh->e_phentsize);
	end = MIN(end, (uint64_t)raw_size);
	memcpy(img, raw, (size_t)end);
	return end;
}

/*
 * What a stored image of the file is found by, besides its build-id and
 * size: its ELF header and section header table, the layout's version
 * and whether .debug_line is lazy (it moves then).
 */
static uint64_t dwimage_header_hash(const uint8_t *raw, size_t raw_size,
				    const GElf_Ehdr *eh, uint64_t shoff,
				    uint64_t shtab_size, bool lazy)
{
	uint32_t v = DWIMAGE_LAYOUT_VERSION << 1 | lazy;
	uint64_t h = hashmap_fnv(HASHMAP_FNV_SEED, &v, sizeof(v));

	h = hashmap_fnv(h, raw, (size_t)MIN((uint64_t)eh->e_ehsize,
					   (uint64_t)raw_size));
	return hashmap_fnv(h, raw + shoff, (size_t)shtab_size);
}

/*
 * Stores a finished image in dwcache, .debug_line inflated: the headers
 * (hdr_end bytes), the sections and the section header table; the rest
 * of it is zeroes.
 */
static void dwimage_store(const struct dwcache_key *key, const uint8_t *img,
			  uint64_t total, uint64_t hdr_end,
			  const struct dwimage_sec *secs, size_t shnum,
			  uint64_t shoff, uint64_t shtab_size,
			  struct dwimage_lazy *lz)
{
	struct dwcache_range *ranges;
	size_t i, nr = 0;

	if (lz && lz->out && !dwimage_lazy_inflate(lz))
		return;
	ranges = mem_array(shnum + 2, sizeof(*ranges));
	if (!ranges)
		return;
	ranges[nr++] = (struct dwcache_range){ 0, hdr_end };
	for (i = 1; i < shnum; i++) {
		const struct dwimage_sec *s = &secs[i];

		if (s->what == DWS_KEEP && s->in_size)
			ranges[nr++] = (struct dwcache_range){ s->in_off,
							       s->in_size };
		else if (s->what == DWS_INFLATE || s->what == DWS_LAZY)
			ranges[nr++] = (struct dwcache_range){ s->new_off,
							       s->out_size };
	}
	ranges[nr++] = (struct dwcache_range){ shoff, shtab_size };
	dwcache_store(key, img, total, DWIMAGE_HDR, ranges, nr);
	free(ranges);
}

/* An image's store, left for after it is shared (dwimage_build()). */
struct dwimage_pending {
	struct dwcache_key key;
	const uint8_t *img;
	uint64_t total, hdr_end, shoff, shtab_size;
	struct dwimage_sec *secs;   /* owned */
	size_t shnum;
	struct dwimage_lazy *lz;    /* the image's */
};

/* Stores what p says and frees p; NULL is fine. */
static void dwimage_store_pending(struct dwimage_pending *p)
{
	if (!p)
		return;
	dwimage_store(&p->key, p->img, p->total, p->hdr_end, p->secs,
		      p->shnum, p->shoff, p->shtab_size, p->lz);
	free(p->secs);
	free(p);
}

/*
 * Maps the file behind fd for the lazy section of secs when it is the
 * one elf has read (same size, same compressed bytes); false: inflate it
 * now.
 */
static bool dwimage_map_source(int fd, const uint8_t *raw, size_t raw_size,
			       const struct dwimage_sec *secs, size_t shnum,
			       struct dwimage_lazy *lz)
{
	struct stat st;
	void *p;
	size_t i;

	for (i = 1; i < shnum && secs[i].what != DWS_LAZY; i++)
		;
	if (i == shnum)
		return false;   /* nothing to defer */
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size != raw_size)
		return false;
	p = mmap(NULL, raw_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		return false;
	for (i = 1; i < shnum; i++) {
		const struct dwimage_sec *s = &secs[i];

		if (s->what == DWS_LAZY &&
		    memcmp((const uint8_t *)p + s->in_off, raw + s->in_off,
			   (size_t)MIN(s->in_size, 64))) {
			munmap(p, raw_size);
			return false;
		}
	}
	lz->src = p;
	lz->src_size = raw_size;
	return true;
}

static void dwimage_lazy_free(struct dwimage_lazy *lz)
{
	if (!lz)
		return;
	if (lz->src)
		munmap((void *)lz->src, lz->src_size);
	pthread_mutex_destroy(&lz->lock);
	free(lz);
}

/*
 * Builds the image of elf (see dwimage_build()), for one owner.  With
 * key (its build-id and size filled in), the image is mapped from dwcache
 * when it is there; when it was built, *pending says how to store it
 * there (dwimage_store_pending(), while the image lives), else is NULL.
 */
static void *dwimage_make(Elf *elf, int fd, size_t *size,
			  struct dwcache_key *key,
			  struct dwimage_pending **pending)
{
	struct libdeflate_decompressor *dec = NULL;
	struct dwimage_sec *secs = NULL;
	struct dwimage_lazy *lz = NULL;
	struct dwimage_hdr hdr = { 0 };
	size_t raw_size, shnum, shstrndx, entsize, i, map_size = 0;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	const uint8_t *raw;
	uint64_t shoff, out, pos, start, new_shoff, eager_end, total, hdr_end;
	uint8_t *base = NULL, *img;
	GElf_Ehdr eh;
	bool is64;

	raw = (const uint8_t *)elf_rawfile(elf, &raw_size);
	if (!raw || !gelf_getehdr(elf, &eh) || !module_elf_host_order(elf) ||
	    elf_getshdrnum(elf, &shnum) < 0 ||
	    elf_getshdrstrndx(elf, &shstrndx) < 0 || shnum < 2)
		return NULL;
	is64 = gelf_getclass(elf) == ELFCLASS64;
	entsize = is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr);
	shoff = eh.e_shoff;
	if (eh.e_shentsize != entsize || shoff > raw_size ||
	    shnum > (raw_size - shoff) / entsize ||
	    raw_size < (is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr)))
		return NULL;
	secs = calloc(shnum, sizeof(*secs));
	if (!secs)
		return NULL;
	if (fd >= 0) {
		lz = mem_zalloc(1, sizeof(*lz));
		if (!lz)
			goto fail;
		pthread_mutex_init(&lz->lock, NULL);
	}
	out = dwimage_plan(elf, raw, raw_size, is64, secs, shnum, shstrndx,
			   lz != NULL);
	if (!out)
		goto fail;
	if (lz && !dwimage_map_source(fd, raw, raw_size, secs, shnum, lz)) {
		/* inflated now instead: the sizes stay */
		dwimage_lazy_free(lz);
		lz = NULL;
		for (i = 1; i < shnum; i++)
			if (secs[i].what == DWS_LAZY)
				secs[i].what = DWS_INFLATE;
	}
	/*
	 * The layout: the file, the inflated sections (from a huge page on),
	 * the section headers, then the lazy section, on pages of its own.
	 */
	pos = ALIGN_UP((uint64_t)raw_size, 8);
	if (out >= MEM_HUGE_PAGE)
		pos = ALIGN_UP(DWIMAGE_HDR + pos, MEM_HUGE_PAGE) - DWIMAGE_HDR;
	start = pos;
	for (i = 1; i < shnum; i++) {
		struct dwimage_sec *s = &secs[i];

		if (s->what != DWS_INFLATE)
			continue;
		if (s->align > 1)
			pos = ALIGN_UP(pos, s->align);
		s->new_off = pos;
		pos += s->out_size;
	}
	new_shoff = ALIGN_UP(pos, 8);
	eager_end = pos = new_shoff + shnum * entsize;
	for (i = 1; i < shnum; i++) {
		struct dwimage_sec *s = &secs[i];

		if (s->what != DWS_LAZY)
			continue;
		/* on a page of its own (the image starts DWIMAGE_HDR in) */
		pos = ALIGN_UP(DWIMAGE_HDR + pos, page) - DWIMAGE_HDR;
		s->new_off = pos;
		pos += s->out_size;
	}
	total = pos;
	if (total > SIZE_MAX - DWIMAGE_HDR - page)
		goto fail;
	/* too small to keep, or no cache: store nothing, inflate lazily */
	if (out < DWIMAGE_CACHE_MIN || !dwcache_dir())
		key = NULL;
	if (key) {
		key->header_hash = dwimage_header_hash(raw, raw_size, &eh, shoff,
						       shnum * entsize,
						       lz != NULL);
		base = dwcache_load(key, total, DWIMAGE_HDR, &map_size);
		if (base) {
			/* complete: nothing is lazy there */
			dwimage_lazy_free(lz);
			lz = NULL;
			goto done;
		}
	}
	base = mem_map(DWIMAGE_HDR + (size_t)total, &map_size);
	dec = libdeflate_alloc_decompressor();
	if (!base || !dec)
		goto fail;
	img = base + DWIMAGE_HDR;
	mem_huge(img + start, (size_t)(eager_end - start));
	if (lz) {
		uint64_t lazy_start = ALIGN_UP(DWIMAGE_HDR + eager_end, page);

		/* only the pages inflated into are ever touched */
		(void)madvise(base + lazy_start, map_size - lazy_start,
			      MADV_NOHUGEPAGE);
	}
	hdr_end = dwimage_headers(elf, img, raw, raw_size, &eh);
	for (i = 1; i < shnum; i++) {
		struct dwimage_sec *s = &secs[i];

		if (s->what == DWS_KEEP) {
			memcpy(img + s->in_off, raw + s->in_off,
			       (size_t)s->in_size);
			continue;
		}
		if (s->what == DWS_LAZY) {
			if (lz->out)   /* two sections of that name */
				goto fail;
			lz->in_off = s->in_off;
			lz->in_size = s->in_size;
			lz->out = img + s->new_off;
			lz->out_size = s->out_size;
			continue;
		}
		if (s->what != DWS_INFLATE)
			continue;
		if (!dwimage_inflate(dec, raw + s->in_off, s->in_size,
				     img + s->new_off, s->out_size))
			goto fail;
	}
	memcpy(img + new_shoff, raw + shoff, shnum * entsize);
	for (i = 1; i < shnum; i++)
		if (secs[i].what != DWS_KEEP)
			dwimage_shdr(img + new_shoff, entsize, is64, i,
				     &secs[i]);
	if (is64) {
		Elf64_Ehdr *h = (Elf64_Ehdr *)img;

		h->e_shoff = new_shoff;
	} else {
		Elf32_Ehdr *h = (Elf32_Ehdr *)img;

		if (new_shoff > UINT32_MAX)
			goto fail;
		h->e_shoff = (Elf32_Off)new_shoff;
	}
	if (key) {
		struct dwimage_pending *p = mem_zalloc(1, sizeof(*p));

		if (p) {
			p->key = *key;
			p->img = img;
			p->total = total;
			p->hdr_end = hdr_end;
			p->shoff = new_shoff;
			p->shtab_size = shnum * entsize;
			p->secs = secs;
			p->shnum = shnum;
			p->lz = lz;
			secs = NULL;    /* p's now */
			*pending = p;
		}
	}
done:
	hdr.map_size = map_size;
	hdr.lazy = lz;
	memcpy(base, &hdr, sizeof(hdr));
	*size = total;
	libdeflate_free_decompressor(dec);
	free(secs);
	return base + DWIMAGE_HDR;
fail:
	libdeflate_free_decompressor(dec);
	dwimage_lazy_free(lz);
	free(secs);
	mem_unmap(base, map_size);
	return NULL;
}

static struct dwimage_hdr dwimage_hdr_of(const void *image)
{
	struct dwimage_hdr hdr;

	memcpy(&hdr, (const uint8_t *)image - DWIMAGE_HDR, sizeof(hdr));
	return hdr;
}

/* Unmaps an image from dwimage_make(). */
static void dwimage_unmap(void *image)
{
	struct dwimage_hdr hdr = dwimage_hdr_of(image);

	dwimage_lazy_free(hdr.lazy);
	mem_unmap((uint8_t *)image - DWIMAGE_HDR, hdr.map_size);
}

/*
 * Makes an image from dwimage_make() read-only, but for its lazy section:
 * it is shared now.
 */
static void dwimage_seal(void *image)
{
	struct dwimage_hdr hdr = dwimage_hdr_of(image);
	uint8_t *base = (uint8_t *)image - DWIMAGE_HDR;
	size_t len = hdr.map_size;

	if (hdr.lazy && hdr.lazy->out)
		len = (size_t)(hdr.lazy->out - base);
	(void)mprotect(base, len, PROT_READ);
}

bool dwimage_need_lines(void *image)
{
	struct dwimage_lazy *lz = image ? dwimage_hdr_of(image).lazy : NULL;

	if (!lz || !lz->out)
		return true;
	return dwimage_lazy_inflate(lz);
}

/*
 * The images of the process, shared by every thread (each worker has its
 * own modules, with their own Elf and Dwarf handles, but the bytes libdw
 * reads are the same).  A file is known by its build-id and size: a
 * runtime file and its debug file share the build-id, not the size.
 */
struct dwimage_entry {
	struct dwimage_entry *next;
	uint8_t bid[64];
	unsigned bid_len;
	size_t raw_size;
	void *image;             /* NULL while being built, or if that failed */
	size_t size;
	unsigned refs;
	bool building;
};

static pthread_mutex_t dwimage_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t dwimage_built = PTHREAD_COND_INITIALIZER;
static struct dwimage_entry *dwimage_entries;
/* dwimage_defer_stores(), under dwimage_lock */
static bool (*dwimage_defer_fn)(void *ctx, struct dwimage_store_job *job);
static void *dwimage_defer_ctx;

struct dwimage_store_job {
	struct dwimage_pending *pending;
	void *image;             /* a reference, for the store */
};

void dwimage_defer_stores(bool (*fn)(void *ctx, struct dwimage_store_job *job),
			  void *ctx)
{
	pthread_mutex_lock(&dwimage_lock);
	dwimage_defer_fn = fn;
	dwimage_defer_ctx = ctx;
	pthread_mutex_unlock(&dwimage_lock);
}

void dwimage_store_job_run(struct dwimage_store_job *job)
{
	dwimage_store_pending(job->pending);
	dwimage_free(job->image);
	free(job);
}

static struct dwimage_entry *dwimage_find_locked(const uint8_t *bid,
						 unsigned bid_len,
						 size_t raw_size)
{
	struct dwimage_entry *e;

	for (e = dwimage_entries; e; e = e->next)
		if (e->bid_len == bid_len && e->raw_size == raw_size &&
		    !memcmp(e->bid, bid, bid_len))
			return e;
	return NULL;
}

void *dwimage_build(Elf *elf, int fd, size_t *size)
{
	struct dwimage_pending *pending = NULL;
	struct dwimage_store_job *job;
	struct dwimage_entry *e;
	struct dwcache_key key;
	uint8_t bid[64];
	unsigned bid_len = module_elf_build_id(elf, bid, sizeof(bid));
	size_t raw_size = 0;
	void *image;

	if (!bid_len || !elf_rawfile(elf, &raw_size))
		return dwimage_make(elf, fd, size, NULL, NULL); /* not shared */
	pthread_mutex_lock(&dwimage_lock);
	/* found again after each wait: its builder may have freed it */
	while ((e = dwimage_find_locked(bid, bid_len, raw_size)) &&
	       e->building)
		pthread_cond_wait(&dwimage_built, &dwimage_lock);
	if (e) {
		if (e->image)
			e->refs++;
		*size = e->size;
		image = e->image;
		pthread_mutex_unlock(&dwimage_lock);
		return image;
	}
	e = mem_zalloc(1, sizeof(*e));
	if (!e) {
		pthread_mutex_unlock(&dwimage_lock);
		return NULL;
	}
	memcpy(e->bid, bid, bid_len);
	e->bid_len = bid_len;
	e->raw_size = raw_size;
	e->building = true;
	e->next = dwimage_entries;
	dwimage_entries = e;
	pthread_mutex_unlock(&dwimage_lock);

	key = (struct dwcache_key){ .bid_len = bid_len, .raw_size = raw_size };
	memcpy(key.bid, bid, bid_len);
	image = dwimage_make(elf, fd, size, &key, &pending);
	if (image)
		dwimage_seal(image);
	pthread_mutex_lock(&dwimage_lock);
	e->building = false;
	e->image = image;
	e->size = image ? *size : 0;
	e->refs = image ? 1 : 0;
	pthread_cond_broadcast(&dwimage_built);
	/*
	 * Stored once those waiting for it have it: writing it takes as
	 * long as inflating it (and the store inflates the lazy section,
	 * under its lock, as a reader of lines would).  A reference keeps
	 * it mapped meanwhile: the caller's, or the job's.
	 */
	if (pending && dwimage_defer_fn &&
	    (job = mem_zalloc(1, sizeof(*job)))) {
		job->pending = pending;
		job->image = image;
		e->refs++;
		if (dwimage_defer_fn(dwimage_defer_ctx, job)) {
			pending = NULL;
		} else {
			e->refs--;      /* not taken: stored below */
			free(job);
		}
	}
	pthread_mutex_unlock(&dwimage_lock);
	dwimage_store_pending(pending);
	return image;
}

bool dwimage_building(const uint8_t *bid, unsigned bid_len, size_t raw_size)
{
	const struct dwimage_entry *e;
	bool building;

	pthread_mutex_lock(&dwimage_lock);
	e = dwimage_find_locked(bid, bid_len, raw_size);
	building = e && e->building;
	pthread_mutex_unlock(&dwimage_lock);
	return building;
}

void dwimage_free(void *image)
{
	struct dwimage_entry **pp, *e;

	if (!image)
		return;
	pthread_mutex_lock(&dwimage_lock);
	for (pp = &dwimage_entries; (e = *pp); pp = &e->next)
		if (e->image == image)
			break;
	if (e && --e->refs == 0)
		*pp = e->next;
	pthread_mutex_unlock(&dwimage_lock);
	if (!e) {
		dwimage_unmap(image);   /* not shared */
	} else if (!e->refs) {
		dwimage_unmap(image);
		free(e);
	}
}
