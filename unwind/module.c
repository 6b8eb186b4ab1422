/*
 * module.c - find, verify and open the ELF files behind the capture's
 * mappings, once per run.
 *
 * Lookup order (unwind/locate.h): for the runtime file --symfs, the
 * recorded path, the perf build-id caches and an extracted perf archive,
 * the debuginfo directories, for [vdso] this process's own vdso, then what
 * debuginfod fetched up front; for separate debuginfo the build-id
 * directories, then .gnu_debuglink targets, then debuginfod.  Every file is
 * accepted only with the capture's build-id (a file at the recorded path
 * is used unverified only when the capture has no build-id for it).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unwind/module.h"

#include "common/base.h"
#include "common/mem.h"
#include "common/regfile.h"
#include "unwind/a2l.h"
#include "unwind/apk.h"
#include "unwind/cfi.h"
#include "unwind/dbgd.h"
#include "unwind/locate.h"
#include "unwind/dwimage.h"
#include "unwind/gopclntab.h"
#include "unwind/modload.h"
#include "unwind/symtab.h"

const char *module_status_name(enum module_status s)
{
	static const char *const names[] = {
		[MODULE_PENDING] = "not looked up",
		[MODULE_OK] = "ok",
		[MODULE_UNVERIFIED] = "ok (no build-id to verify)",
		[MODULE_NOT_FOUND] = "no file",
		[MODULE_MISMATCH] = "build-id mismatch",
		[MODULE_BAD_ELF] = "not a usable ELF file",
		[MODULE_NO_FILE] = "no file (special mapping)",
		[MODULE_LOADING] = "still loading",
	};

	return (unsigned)s < ARRAY_SIZE(names) ? names[s] : "?";
}

void module_build_id_hex(const uint8_t *id, unsigned size, char *out)
{
	static const char hex[] = "0123456789abcdef";
	unsigned i;

	for (i = 0; i < size; i++) {
		out[2 * i] = hex[id[i] >> 4];
		out[2 * i + 1] = hex[id[i] & 15];
	}
	out[2 * size] = '\0';
}

void modcache_init(struct modcache *mc, const struct modcache_opts *opts)
{
	memset(mc, 0, sizeof(*mc));
	(void)elf_version(EV_CURRENT);
	mc->tail = &mc->all;
	modcache_begin_input(mc, opts);
}

/* The lookup chain: the caller's, else one built from the options. */
static const struct locate_opts *mod_locate(struct modcache *mc)
{
	struct locate_dir *dirs;
	unsigned i;

	if (mc->opts.locate)
		return mc->opts.locate;
	if (mc->locate_own)
		return mc->locate_own;
	mc->locate_own = arena_alloc(&mc->arena, sizeof(*mc->locate_own));
	dirs = arena_alloc(&mc->arena, sizeof(*dirs) *
					       (mc->opts.nr_buildid_dirs + 1));
	if (!mc->locate_own || !dirs)
		return NULL;
	memset(mc->locate_own, 0, sizeof(*mc->locate_own));
	for (i = 0; i < mc->opts.nr_buildid_dirs; i++) {
		dirs[i].path = mc->opts.buildid_dirs[i];
		dirs[i].label = "build-id cache";
	}
	mc->locate_own->buildid_dirs = dirs;
	mc->locate_own->nr_buildid_dirs = mc->opts.nr_buildid_dirs;
	mc->locate_own->debug_dirs = &mc->opts.debug_dir;
	mc->locate_own->nr_debug_dirs = 1;
	return mc->locate_own;
}

static void module_dwimage_free(struct module_dwimage *img)
{
	if (img->elf)
		elf_end(img->elf);
	dwimage_free(img->image);
	img->elf = NULL;
	img->image = NULL;
}

static void module_close_files(struct module *m)
{
	if (m->eh_cfi)
		dwarf_cfi_end(m->eh_cfi);
	if (m->dwarf_rt)
		dwarf_end(m->dwarf_rt);
	if (m->dwarf_dbg)
		dwarf_end(m->dwarf_dbg);
	module_dwimage_free(&m->dwimg_rt);
	module_dwimage_free(&m->dwimg_dbg);
	if (m->debug_elf)
		elf_end(m->debug_elf);
	if (m->elf)
		elf_end(m->elf);
	if (m->debug_fd >= 0)
		close(m->debug_fd);
	if (m->fd >= 0)
		close(m->fd);
	free(m->image);
	m->eh_cfi = NULL;
	m->debug_cfi = NULL;
	m->dwarf_rt = m->dwarf_dbg = NULL;
	m->elf = m->debug_elf = NULL;
	m->fd = m->debug_fd = -1;
	m->image = NULL;
	m->ehhdr_table = NULL;
	m->ehhdr_tried = false;
}

static void mod_free(struct module *m)
{
	a2l_free(m->a2l);       /* may store names libdw's DWARF holds */
	module_close_files(m);
	cfi_cache_free(m->cfi);
	symtab_free(m->symtab);
	gopclntab_free(m->gopcln);
	hashmap_release(&m->symcache);
	free(m->segs);
	free(m->path);
	free(m->file);
	free(m->debug_file);
	free(m);
}

static void mod_free_list(struct module *m)
{
	struct module *n;

	for (; m; m = n) {
		n = m->next;
		mod_free(m);
	}
}

void modcache_release(struct modcache *mc)
{
	modcache_settle(mc);
	mod_free_list(mc->all);
	mod_free_list(mc->kept);
	hashmap_release(&mc->by_key);
	hashmap_release(&mc->known);
	arena_release(&mc->arena);
	memset(mc, 0, sizeof(*mc));
}

struct modcache_known {
	struct modcache_known *next;
	const char *path;
	uint8_t bid[20];
	uint8_t size;
};

static uint64_t mod_path_hash(const char *path)
{
	return hashmap_fnv_str(HASHMAP_FNV_SEED, path);
}

static const struct modcache_known *mod_known(struct modcache *mc,
					      const char *path)
{
	struct modcache_known *k;
	void *v;

	if (!hashmap_get(&mc->known, mod_path_hash(path), &v))
		return NULL;
	for (k = v; k; k = k->next)
		if (!strcmp(k->path, path))
			return k;
	return NULL;
}

int modcache_note_build_id(struct modcache *mc, const char *path,
			   const uint8_t *bid, uint8_t size)
{
	struct modcache_known *k, *first = NULL;
	struct module *m;
	uint64_t h = mod_path_hash(path);
	void *v;

	if (!size || size > 20 || mod_known(mc, path))
		return 0;
	if (hashmap_get(&mc->known, h, &v))
		first = v;
	k = arena_alloc(&mc->arena, sizeof(*k));
	if (!k || !(k->path = arena_strdup(&mc->arena, path)))
		return -1;
	memcpy(k->bid, bid, size);
	k->size = size;
	k->next = first;
	if (hashmap_put(&mc->known, h, k) < 0)
		return -1;
	/* Modules made before we knew: they have not been looked up yet. */
	for (m = mc->all; m; m = m->next) {
		if (m->status == MODULE_PENDING && !m->build_id_size &&
		    !strcmp(m->path, path)) {
			memcpy(m->build_id, bid, size);
			m->build_id_size = size;
		}
	}
	return 0;
}

static uint64_t modcache_key(const char *path, const uint8_t *bid,
			     uint8_t bid_size, uint64_t dev, uint64_t ino)
{
	uint64_t h;

	if (bid_size)
		return hashmap_fnv(HASHMAP_FNV_SEED, bid, bid_size);
	h = hashmap_fnv_str(HASHMAP_FNV_SEED, path);
	return hashmap_mix(h ^ hashmap_mix(dev) ^ (ino * 31));
}

/* A new module, not looked up yet; NULL when out of memory. */
static struct module *mod_new(const char *path, const uint8_t *build_id,
			      uint8_t build_id_size)
{
	struct module *m = mem_zalloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->path = mem_strdup(path);
	if (!m->path) {
		free(m);
		return NULL;
	}
	if (build_id_size)
		memcpy(m->build_id, build_id, MIN(build_id_size, 20));
	m->build_id_size = MIN(build_id_size, 20);
	m->fd = m->debug_fd = -1;
	return m;
}

/*
 * The module an earlier input kept for path with the capture's build-id
 * bid, taken off the kept list; NULL when there is none.  The path must
 * match too: it names the module's frames and report lines.  A linear
 * search: it runs once per module an input maps, and the list holds the
 * distinct modules of the batch.
 */
static struct module *mod_unkeep(struct modcache *mc, const char *path,
				 const uint8_t *bid, uint8_t size)
{
	struct module **pm, *m;

	if (!size)
		return NULL;
	for (pm = &mc->kept; (m = *pm); pm = &m->next) {
		if (m->build_id_size == size && !memcmp(m->build_id, bid, size) &&
		    !strcmp(m->path, path)) {
			*pm = m->next;
			m->next = NULL;
			return m;
		}
	}
	return NULL;
}

struct module *modcache_get(struct modcache *mc, const char *path,
			    const uint8_t *build_id, uint8_t build_id_size,
			    uint64_t dev, uint64_t ino)
{
	const struct modcache_known *known;
	struct module *first = NULL, *m;
	uint64_t key;
	void *v;

	if (!build_id_size && (known = mod_known(mc, path))) {
		build_id = known->bid;
		build_id_size = known->size;
	}
	key = modcache_key(path, build_id, build_id_size, dev, ino);
	if (hashmap_get(&mc->by_key, key, &v))
		first = v;
	for (m = first; m; m = m->next_hash) {
		if ((m->build_id_learned ? 0 : m->build_id_size) !=
		    build_id_size)
			continue;
		if (build_id_size &&
		    !memcmp(m->build_id, build_id, build_id_size))
			return m;
		if (!build_id_size && !strcmp(m->path, path))
			return m;
	}
	m = mod_unkeep(mc, path, build_id, build_id_size);
	if (!m)
		m = mod_new(path, build_id, build_id_size);
	if (!m)
		return NULL;
	m->next_hash = first;
	if (hashmap_put(&mc->by_key, key, m) < 0) {
		mod_free(m);
		return NULL;
	}
	*mc->tail = m;
	mc->tail = &m->next;
	mc->nr++;
	return m;
}

/* The GNU build-id note in d, copied to out; its size or 0. */
static unsigned mod_note_build_id(Elf_Data *d, uint8_t *out, unsigned max)
{
	size_t off = 0, name_off, desc_off;
	GElf_Nhdr nh;

	if (!d || !d->d_buf)
		return 0;
	while ((off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    !memcmp((char *)d->d_buf + name_off, "GNU", 4) &&
		    nh.n_descsz > 0) {
			unsigned n = MIN((unsigned)nh.n_descsz, max);

			memcpy(out, (char *)d->d_buf + desc_off, n);
			return n;
		}
	}
	return 0;
}

unsigned module_elf_build_id(Elf *elf, uint8_t *out, unsigned max)
{
	Elf_Scn *scn = NULL;
	size_t nphdr, i;
	unsigned n;

	/* Sections first (present in debug files too), then PT_NOTE. */
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		n = mod_note_build_id(elf_getdata(scn, NULL), out, max);
		if (n)
			return n;
	}
	if (elf_getphdrnum(elf, &nphdr) < 0)
		return 0;
	for (i = 0; i < nphdr; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_NOTE)
			continue;
		n = mod_note_build_id(elf_getdata_rawchunk(elf,
							   (int64_t)ph.p_offset,
							   ph.p_filesz,
							   ELF_T_NHDR),
				      out, max);
		if (n)
			return n;
	}
	return 0;
}

/* Result of trying one candidate file. */
enum mod_try {
	MOD_TRY_ABSENT,
	MOD_TRY_NOT_REGULAR,    /* a FIFO, device, socket or directory */
	MOD_TRY_MISMATCH,
	MOD_TRY_OTHER_ARCH,     /* an ELF file of another machine */
	MOD_TRY_BAD,
	MOD_TRY_OK,
};

/*
 * Opens path as an ELF and checks its build-id against want (when
 * want_size > 0).  On success *fd and *elf are set.
 */
bool module_build_id_match(const uint8_t *want, unsigned want_size,
			   const uint8_t *have, unsigned have_size)
{
	unsigned i;

	if (!have_size || have_size > want_size ||
	    memcmp(want, have, have_size))
		return false;
	if (have_size == want_size)
		return true;
	if (want_size != 20)
		return false;
	for (i = have_size; i < want_size; i++)
		if (want[i])
			return false;
	return true;
}

unsigned module_build_id_name_size(const uint8_t *id, unsigned size)
{
	if (size == 20 && !id[16] && !id[17] && !id[18] && !id[19])
		return 16;
	return size;
}

static enum mod_try mod_open_elf(const char *path, const uint8_t *want,
				 unsigned want_size, uint16_t machine, int *fd,
				 Elf **elf)
{
	GElf_Ehdr eh;
	uint8_t bid[20];
	unsigned n;
	bool not_regular;

	*elf = NULL;
	*fd = regfile_open(path, &not_regular);
	if (*fd < 0)
		return not_regular ? MOD_TRY_NOT_REGULAR : MOD_TRY_ABSENT;
	*elf = elf_begin(*fd, ELF_C_READ_MMAP, NULL);
	if (!*elf)
		goto bad;
	if (elf_kind(*elf) != ELF_K_ELF) {
		elf_end(*elf);
		goto bad;
	}
	/* another architecture's file: never this capture's */
	if (machine && (!gelf_getehdr(*elf, &eh) || eh.e_machine != machine)) {
		elf_end(*elf);
		*elf = NULL;
		close(*fd);
		*fd = -1;
		return MOD_TRY_OTHER_ARCH;
	}
	if (want_size) {
		n = module_elf_build_id(*elf, bid, sizeof(bid));
		if (!module_build_id_match(want, want_size, bid, n)) {
			elf_end(*elf);
			*elf = NULL;
			close(*fd);
			*fd = -1;
			return MOD_TRY_MISMATCH;
		}
	}
	return MOD_TRY_OK;
bad:
	*elf = NULL;
	close(*fd);
	*fd = -1;
	return MOD_TRY_BAD;
}

/* A segment's file bytes, as module_offset_to_vaddr() matches them. */
static bool mod_seg_has(const struct module_seg *s, uint64_t off)
{
	return off >= s->offset && off - s->offset < MAX(s->filesz, 1);
}

/*
 * Whether no segment before segs[i] has file bytes of segs[i]: then
 * module_offset_to_vaddr() may try segs[i] first and get what trying
 * them in order gives.
 */
static bool mod_seg_first(const struct module *m, unsigned i)
{
	const struct module_seg *s = &m->segs[i];
	uint64_t end = s->offset + MAX(s->filesz, 1);
	unsigned j;

	if (end < s->offset)
		return false;
	for (j = 0; j < i; j++) {
		const struct module_seg *o = &m->segs[j];
		uint64_t o_end = o->offset + MAX(o->filesz, 1);

		if (o_end < o->offset ||
		    (o->offset < end && s->offset < o_end))
			return false;
	}
	return true;
}

static int mod_read_segments(struct module *m)
{
	GElf_Ehdr eh;
	size_t nphdr, i;

	if (!gelf_getehdr(m->elf, &eh) || elf_getphdrnum(m->elf, &nphdr) < 0)
		return -1;
	m->e_machine = eh.e_machine;
	m->is_exec = eh.e_type == ET_EXEC;
	m->entry = eh.e_entry;
	m->segs = mem_zalloc(nphdr ? nphdr : 1, sizeof(*m->segs));
	if (!m->segs)
		return -1;
	m->code_seg = MODULE_NO_SEG;
	for (i = 0; i < nphdr; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(m->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		m->segs[m->nr_segs].vaddr = ph.p_vaddr;
		m->segs[m->nr_segs].memsz = ph.p_memsz;
		m->segs[m->nr_segs].offset = ph.p_offset;
		m->segs[m->nr_segs].filesz = ph.p_filesz;
		if (m->code_seg == MODULE_NO_SEG && (ph.p_flags & PF_X) &&
		    mod_seg_first(m, m->nr_segs))
			m->code_seg = m->nr_segs;
		m->nr_segs++;
	}
	return m->nr_segs ? 0 : -1;
}

/* Accepts an opened runtime file for m. */
static bool mod_accept(struct module *m, const char *path, int fd, Elf *elf,
		       const char *found_in, bool verified)
{
	m->fd = fd;
	m->elf = elf;
	m->file = mem_strdup(path);
	m->found_in = found_in;
	if (!m->file || mod_read_segments(m) < 0) {
		module_close_files(m);
		free(m->file);
		m->file = NULL;
		m->found_status = MODULE_BAD_ELF;
		return false;
	}
	m->found_status = verified ? MODULE_OK : MODULE_UNVERIFIED;
	if (!m->build_id_size) {
		uint8_t bid[20];
		unsigned n = module_elf_build_id(elf, bid, sizeof(bid));

		/* Learn the id for debuginfo lookups (still unverified). */
		memcpy(m->build_id, bid, n);
		m->build_id_size = (uint8_t)n;
		m->build_id_learned = n > 0;
	}
	return true;
}

/* The live vdso of this process, copied, when its build-id matches. */
static bool mod_try_live_vdso(struct module *m)
{
	const unsigned char *base = (const void *)getauxval(AT_SYSINFO_EHDR);
	GElf_Ehdr eh;
	Elf *probe, *elf;
	size_t size;
	uint8_t bid[20];
	unsigned n;
	char *img;

	if (!base || !m->build_id_size)
		return false;
	/* The image ends with its section headers. */
	probe = elf_memory((char *)base, 64);
	if (!probe)
		return false;
	if (!gelf_getehdr(probe, &eh)) {
		elf_end(probe);
		return false;
	}
	elf_end(probe);
	size = eh.e_shoff + (size_t)eh.e_shnum * eh.e_shentsize;
	if (size < 64 || size > (1u << 20))
		return false;
	img = malloc(size);
	if (!img)
		return false;
	memcpy(img, base, size);
	elf = elf_memory(img, size);
	if (!elf) {
		free(img);
		return false;
	}
	n = module_elf_build_id(elf, bid, sizeof(bid));
	if (!module_build_id_match(m->build_id, m->build_id_size, bid, n)) {
		elf_end(elf);
		free(img);
		return false;
	}
	m->image = img;
	m->image_size = size;
	return mod_accept(m, "[vdso] of this process", -1, elf,
			  "this process's vdso", true);
}

/*
 * Opens path as m's file when it fits; *mismatch or *not_regular become
 * true when it had another build-id or was no regular file.
 */
static bool mod_try_file(struct modcache *mc, struct module *m,
			 const char *path, const char *found_in,
			 bool *mismatch, bool *not_regular)
{
	enum mod_try t;
	int fd;
	Elf *elf;

	t = mod_open_elf(path, m->build_id, m->build_id_size,
			 mc->opts.e_machine, &fd, &elf);
	if (t == MOD_TRY_MISMATCH || t == MOD_TRY_OTHER_ARCH)
		*mismatch = true;
	if (t == MOD_TRY_OTHER_ARCH)
		m->other_arch = true;
	if (t == MOD_TRY_NOT_REGULAR)
		*not_regular = true;
	if (t != MOD_TRY_OK)
		return false;
	return mod_accept(m, path, fd, elf, found_in, m->build_id_size > 0);
}

static bool mod_is_special(const char *path)
{
	if (path[0] == '[')
		return strcmp(path, "[vdso]") != 0;
	return path[0] != '/' || !strncmp(path, "//anon", 6) ||
	       locate_is_perf_map(path) ||
	       !strncmp(path, "/dev/", 5) || !strncmp(path, "/memfd:", 7) ||
	       !strncmp(path, "/SYSV", 5) || strstr(path, " (deleted)");
}

/* Opens a separate debuginfo file whose build-id matches m's. */
static bool mod_try_debug(struct module *m, const char *path,
			  const char *found_in)
{
	int fd;
	Elf *elf;

	if (m->file && !strcmp(path, m->file))
		return false;
	if (mod_open_elf(path, m->build_id, m->build_id_size, 0, &fd, &elf) !=
	    MOD_TRY_OK)
		return false;
	m->debug_file = mem_strdup(path);
	if (!m->debug_file) {
		elf_end(elf);
		close(fd);
		return false;
	}
	m->debug_fd = fd;
	m->debug_elf = elf;
	m->debug_found_in = found_in;
	return true;
}

static const char *mod_debuglink(Elf *elf)
{
	GElf_Shdr sh;
	Elf_Scn *scn = module_elf_section(elf, ".gnu_debuglink", &sh);
	Elf_Data *d = scn ? elf_getdata(scn, NULL) : NULL;

	if (!d || !d->d_buf || !d->d_size ||
	    !memchr(d->d_buf, '\0', d->d_size))
		return NULL;
	return d->d_buf;
}

/* Formats a path; false when it does not fit. */
static bool PRINTF_LIKE(3, 4) mod_path(char *out, size_t size,
				       const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(out, size, fmt, ap);
	va_end(ap);
	return n >= 0 && (size_t)n < size;
}

static void mod_find_debug(struct modcache *mc, struct module *m)
{
	const struct locate_opts *loc = mod_locate(mc);
	struct locate_iter it = { 0 };
	char path[PATH_MAX], dir[PATH_MAX];
	const char *link, *slash, *from;

	if (!m->build_id_size || !loc)
		return;
	while (locate_next(loc, LOCATE_DEBUG, m->path, m->build_id,
			   m->build_id_size, &it, path, sizeof(path), &from))
		if (mod_try_debug(m, path, from))
			return;
	link = m->elf ? mod_debuglink(m->elf) : NULL;
	if (link && m->file && !strchr(link, '/') &&
	    (slash = strrchr(m->file, '/')) &&
	    mod_path(dir, sizeof(dir), "%.*s", (int)(slash - m->file),
		     m->file)) {
		if (mod_path(path, sizeof(path), "%s/%s", dir, link) &&
		    mod_try_debug(m, path, ".gnu_debuglink"))
			return;
		if (mod_path(path, sizeof(path), "%s/.debug/%s", dir, link) &&
		    mod_try_debug(m, path, ".gnu_debuglink"))
			return;
		if (mod_path(path, sizeof(path), "%s%s/%s", mc->opts.debug_dir,
			     dir, link) &&
		    mod_try_debug(m, path, ".gnu_debuglink"))
			return;
	}
	from = dbgd_result(loc->dbgd, m->build_id, m->build_id_size,
			   DBGD_DEBUGINFO, NULL);
	if (from)
		(void)mod_try_debug(m, from, "debuginfod");
}

bool module_use_debug_file(struct module *m, const char *path)
{
	if (m->debug_file && !strcmp(m->debug_file, path))
		return true;
	if (m->debug_elf) {
		/* Replace what the lookup found (nothing uses it yet). */
		if (m->dwarf_dbg)
			dwarf_end(m->dwarf_dbg);
		elf_end(m->debug_elf);
		close(m->debug_fd);
		free(m->debug_file);
		m->dwarf_dbg = NULL;
		m->dwarf_dbg_tried = false;
		m->debug_elf = NULL;
		m->debug_fd = -1;
		m->debug_file = NULL;
	}
	return mod_try_debug(m, path, "--debug");
}

void module_note_pgoff(struct module *m, uint64_t pgoff)
{
	size_t len;
	const char *entry;

	if (!m->apk_pgoff_set && apk_split(m->path, &len, &entry)) {
		m->apk_pgoff = pgoff;
		m->apk_pgoff_set = true;
	}
}

/*
 * A library inside an APK, found extracted (--symfs, a build-id
 * directory): where it starts in the APK, from the first executable
 * mapping's offset and the library's executable segment, whose offset
 * the mapping rounded down to a page (4 KiB: Linux/arm64's and
 * Android's usual page size).
 */
static void mod_apk_embed(struct module *m)
{
	size_t nphdr, i, len;
	const char *entry;
	GElf_Phdr ph;

	if (m->embed_off || !m->apk_pgoff_set ||
	    !apk_split(m->path, &len, &entry) ||
	    elf_getphdrnum(m->elf, &nphdr) < 0)
		return;
	for (i = 0; i < nphdr; i++) {
		uint64_t seg;

		if (!gelf_getphdr(m->elf, (int)i, &ph) ||
		    ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		seg = ph.p_offset & ~(uint64_t)4095;
		if (m->apk_pgoff >= seg)
			m->embed_off = m->apk_pgoff - seg;
		return;
	}
}

/*
 * A library inside an APK read from the APK itself (under --symfs, else
 * at its recorded path): the stored entry named after "!/", or the one
 * holding the first executable mapping's offset, copied into memory.
 */
static bool mod_try_apk(struct modcache *mc, const struct locate_opts *loc,
			struct module *m, bool *mismatch)
{
	GElf_Ehdr eh;
	char path[PATH_MAX];
	const char *entry;
	uint64_t off, size;
	bool other;
	size_t len;
	struct stat st;
	unsigned pass;
	uint8_t bid[20];
	unsigned n;
	Elf *elf;
	void *img;
	int fd;

	if (!apk_split(m->path, &len, &entry) || (!entry && !m->apk_pgoff_set))
		return false;
	for (pass = 0; pass < 2; pass++) {
		const char *root = pass == 0 ? loc->symfs : "";

		if (!root || (pass == 0 && !*root))
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s%.*s", root,
				     (int)len, m->path) >= sizeof(path))
			continue;
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
		    apk_find(fd, (uint64_t)st.st_size, entry, m->apk_pgoff,
			     &off, &size) < 0 ||
		    size > ((uint64_t)1 << 31) ||
		    !(img = malloc(size ? size : 1))) {
			close(fd);
			continue;
		}
		if (pread(fd, img, size, (off_t)off) != (ssize_t)size) {
			free(img);
			close(fd);
			continue;
		}
		close(fd);
		elf = elf_memory(img, size);
		if (!elf || elf_kind(elf) != ELF_K_ELF) {
			if (elf)
				elf_end(elf);
			free(img);
			continue;
		}
		n = module_elf_build_id(elf, bid, sizeof(bid));
		other = mc->opts.e_machine &&
			(!gelf_getehdr(elf, &eh) ||
			 eh.e_machine != mc->opts.e_machine);
		if (other || (m->build_id_size &&
			      !module_build_id_match(m->build_id,
						     m->build_id_size, bid,
						     n))) {
			*mismatch = true;
			m->other_arch |= other;
			elf_end(elf);
			free(img);
			continue;
		}
		m->image = img;
		m->image_size = size;
		m->embed_off = off;
		if (mod_accept(m, path, -1, elf, pass == 0 ? "--symfs APK" :
					       "APK at the recorded path",
			       m->build_id_size > 0))
			return true;
		m->embed_off = 0;
	}
	return false;
}

enum module_status module_lookup(struct modcache *mc, struct module *m)
{
	const struct locate_opts *loc = mod_locate(mc);
	struct locate_iter it = { 0 };
	char path[PATH_MAX];
	const char *from, *fetched;
	bool mismatch = false, not_regular = false;

	if (!loc)
		return MODULE_NOT_FOUND;
	while (locate_next(loc, LOCATE_EXE, m->path, m->build_id,
			   m->build_id_size, &it, path, sizeof(path), &from))
		if (mod_try_file(mc, m, path, from, &mismatch, &not_regular))
			goto found;
	if (!strcmp(m->path, "[vdso]") && mc->opts.use_live_vdso &&
	    mod_try_live_vdso(m))
		goto found;
	if (mod_try_apk(mc, loc, m, &mismatch))
		goto found;
	fetched = dbgd_result(loc->dbgd, m->build_id, m->build_id_size,
			      DBGD_EXECUTABLE, &m->why_missing);
	if (fetched && mod_try_file(mc, m, fetched, "debuginfod", &mismatch,
				    &not_regular))
		goto found;
	if (!loc->dbgd)
		m->why_missing = NULL;
	/* a FIFO where the file should be: say so, not "no file" */
	if (not_regular)
		m->why_missing = REGFILE_NOT_REGULAR;
	return mismatch ? MODULE_MISMATCH : MODULE_NOT_FOUND;
found:
	m->why_missing = NULL;
	mod_apk_embed(m);
	mod_find_debug(mc, m);
	if (mc->opts.loaded)
		mc->opts.loaded(mc->opts.loaded_ctx, m);
	return (enum module_status)m->found_status;
}

/* Waits for a module on the loader; false when the wait gave up. */
static bool mod_wait_loader(struct modcache *mc, struct module *m)
{
	if (modload_wait(mc->loader, m)) {
		m->status = (enum module_status)m->load_status;
		return m->status == MODULE_OK ||
		       m->status == MODULE_UNVERIFIED;
	}
	if (mc->missed_no != mc->sample_no || !mc->missed) {
		mc->missed_no = mc->sample_no;
		mc->missed++;
	}
	return false;
}

bool module_load_slow(struct modcache *mc, struct module *m)
{
	if (m->status == MODULE_LOADING)
		return mod_wait_loader(mc, m);
	if (m->status != MODULE_PENDING)
		return m->status == MODULE_OK || m->status == MODULE_UNVERIFIED;
	if (m->kept) {
		/* verified for an earlier input: nothing to look up */
		m->kept = false;
		m->reused = true;
		m->status = MODULE_OK;
		return true;
	}
	if (mod_is_special(m->path)) {
		m->status = MODULE_NO_FILE;
		return false;
	}
	/* the lookup chain is built here, never on the loader's thread */
	if (mc->loader && mod_locate(mc)) {
		m->status = MODULE_LOADING;
		modload_queue(mc->loader, m);
		return mod_wait_loader(mc, m);
	}
	m->status = module_lookup(mc, m);
	return m->status == MODULE_OK || m->status == MODULE_UNVERIFIED;
}

void modcache_settle(struct modcache *mc)
{
	struct module *m;

	if (!mc->loader)
		return;
	modload_drain(mc->loader);
	for (m = mc->all; m; m = m->next)
		if (m->status == MODULE_LOADING)
			m->status = (enum module_status)m->load_status;
}

/* Lookup sources whose answer is the same for every capture of a batch. */
static bool mod_source_stable(const char *from)
{
	static const char *const stable[] = {
		"--symfs", "recorded path", "build-id cache",
		"debuginfo directory", ".gnu_debuglink",
	};
	size_t i;

	for (i = 0; from && i < ARRAY_SIZE(stable); i++)
		if (!strcmp(from, stable[i]))
			return true;
	return false;
}

/*
 * Whether m's files fit any capture that maps its path with its build-id,
 * found and described as a lookup for that capture would: the capture
 * gave the build-id and the file matched it, both files came from places
 * every capture searches alike (not a capture's perf archive or
 * debuginfod lookups, not this process's vdso), and nothing about them
 * depends on what the capture happened to use (a refused .eh_frame is
 * only noticed when its CFI is read).
 */
static bool mod_keepable(const struct module *m)
{
	if (m->kept)
		return true;
	return m->status == MODULE_OK && m->build_id_size &&
	       !m->build_id_learned && !m->is_jit && m->path[0] != '[' &&
	       !m->eh_frame_refused && mod_source_stable(m->found_in) &&
	       (!m->debug_file || mod_source_stable(m->debug_found_in));
}

/* Clears what m holds for the capture that used it. */
static void mod_reset_input(struct module *m)
{
	m->samples = m->frames = m->no_cfi = m->no_sym = 0;
	/* its struct sym_loc values live in the capture's symbolizer */
	hashmap_release(&m->symcache);
	m->status = MODULE_PENDING;
	m->kept = true;
	m->reused = false;
	m->next_hash = NULL;
}

/* Frees the kept modules after the first max (the least recently used). */
static void mod_trim_kept(struct modcache *mc)
{
	struct module **pm = &mc->kept;
	unsigned n = 0;

	while (*pm && n < mc->max_kept) {
		pm = &(*pm)->next;
		n++;
	}
	mod_free_list(*pm);
	*pm = NULL;
}

void modcache_end_input(struct modcache *mc)
{
	struct module *m, *n, *keep = NULL, **tail = &keep;

	modcache_settle(mc);
	/* this input's, in the order it used them, before older ones */
	for (m = mc->all; m; m = n) {
		n = m->next;
		if (!mc->max_kept || !mod_keepable(m)) {
			mod_free(m);
			continue;
		}
		mod_reset_input(m);
		*tail = m;
		tail = &m->next;
	}
	*tail = mc->kept;
	mc->kept = keep;
	mod_trim_kept(mc);
	mc->all = NULL;
	mc->tail = &mc->all;
	mc->nr = 0;
	hashmap_release(&mc->by_key);
	hashmap_release(&mc->known);
	arena_release(&mc->arena);  /* the notes, locate_own */
	mc->locate_own = NULL;
}

void modcache_begin_input(struct modcache *mc,
			  const struct modcache_opts *opts)
{
	memset(&mc->opts, 0, sizeof(mc->opts));
	if (opts)
		mc->opts = *opts;
	if (!mc->opts.debug_dir)
		mc->opts.debug_dir = "/usr/lib/debug";
}

bool module_offset_to_vaddr(const struct module *m, uint64_t off,
			    uint64_t *vaddr)
{
	unsigned i;

	if (off < m->embed_off)
		return false;
	off -= m->embed_off;
	/* code, the usual question, first */
	if (m->code_seg < m->nr_segs &&
	    mod_seg_has(&m->segs[m->code_seg], off)) {
		*vaddr = off - m->segs[m->code_seg].offset +
			 m->segs[m->code_seg].vaddr;
		return true;
	}
	for (i = 0; i < m->nr_segs; i++) {
		const struct module_seg *s = &m->segs[i];

		if (mod_seg_has(s, off)) {
			*vaddr = off - s->offset + s->vaddr;
			return true;
		}
	}
	return false;
}

/*
 * libdw's view of elf: through a copy with the DWARF decompressed
 * (dwimage.c) when it has compressed sections, else elf itself.
 */
static Dwarf *module_dwarf_open(Elf *elf, int fd, struct module_dwimage *img)
{
	Dwarf *dw;
	size_t size;

	img->image = dwimage_build(elf, fd, &size);
	if (img->image) {
		img->elf = elf_memory(img->image, size);
		if (img->elf) {
			dw = dwarf_begin_elf(img->elf, DWARF_C_READ, NULL);
			if (dw)
				return dw;
			elf_end(img->elf);
			img->elf = NULL;
		}
		dwimage_free(img->image);
		img->image = NULL;
	}
	return dwarf_begin_elf(elf, DWARF_C_READ, NULL);
}

Dwarf *module_dwarf(struct module *m, Elf *elf)
{
	if (!elf)
		return NULL;
	if (elf == m->debug_elf) {
		if (!m->dwarf_dbg_tried)
			m->dwarf_dbg = module_dwarf_open(elf, m->debug_fd,
							&m->dwimg_dbg);
		m->dwarf_dbg_tried = true;
		return m->dwarf_dbg;
	}
	if (elf != m->elf)
		return NULL;
	if (!m->dwarf_rt_tried)
		m->dwarf_rt = module_dwarf_open(elf, m->fd, &m->dwimg_rt);
	m->dwarf_rt_tried = true;
	return m->dwarf_rt;
}

void *module_dwarf_image(struct module *m, Elf *elf)
{
	if (!elf)
		return NULL;
	if (elf == m->debug_elf)
		return m->dwarf_dbg_tried ? m->dwimg_dbg.image : NULL;
	if (elf == m->elf)
		return m->dwarf_rt_tried ? m->dwimg_rt.image : NULL;
	return NULL;
}

bool module_elf_host_order(Elf *elf)
{
	static const union { uint16_t u; uint8_t b[2]; } host = { 1 };
	const char *ident = elf ? elf_getident(elf, NULL) : NULL;

	return ident && (ident[EI_DATA] == ELFDATA2LSB) == (host.b[0] == 1);
}

Elf_Scn *module_elf_section(Elf *elf, const char *name, GElf_Shdr *sh)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (!elf || elf_getshdrstrndx(elf, &shstrndx) < 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, sh))
			continue;
		n = elf_strptr(elf, shstrndx, sh->sh_name);
		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

const struct module_plt *module_plt_find(struct module *m, uint64_t rel)
{
	static const char *const names[MODULE_PLT_MAX] = {
		".plt", ".plt.sec", ".plt.got",
	};
	unsigned i;

	if (!m->plt_tried) {
		m->plt_tried = true;
		for (i = 0; i < MODULE_PLT_MAX; i++) {
			GElf_Shdr sh;

			if (!module_elf_section(m->elf, names[i], &sh) ||
			    !sh.sh_size || !(sh.sh_flags & SHF_EXECINSTR))
				continue;
			m->plt[m->nr_plt].lo = sh.sh_addr;
			m->plt[m->nr_plt].hi = sh.sh_addr + sh.sh_size;
			m->plt[m->nr_plt].entsize = sh.sh_entsize ?
							    sh.sh_entsize : 16;
			m->nr_plt++;
		}
	}
	for (i = 0; i < m->nr_plt; i++)
		if (rel >= m->plt[i].lo && rel < m->plt[i].hi)
			return &m->plt[i];
	return NULL;
}

bool module_read(struct module *m, uint64_t vaddr, void *buf, size_t len)
{
	unsigned i;

	for (i = 0; i < m->nr_segs; i++) {
		const struct module_seg *s = &m->segs[i];
		uint64_t off;

		if (vaddr < s->vaddr || vaddr - s->vaddr >= s->filesz ||
		    s->filesz - (vaddr - s->vaddr) < len)
			continue;
		off = s->offset + (vaddr - s->vaddr);
		if (m->image) {
			if (off > m->image_size || m->image_size - off < len)
				return false;
			memcpy(buf, (char *)m->image + off, len);
			return true;
		}
		return m->fd >= 0 &&
		       pread(m->fd, buf, len, (off_t)off) == (ssize_t)len;
	}
	return false;
}
