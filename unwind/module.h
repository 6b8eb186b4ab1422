/*
 * module.h - the module cache: one entry per ELF file the capture's
 * mappings refer to, loaded once per run and shared by every process.
 * In batch mode one cache serves several captures in turn, and modules
 * whose files fit every capture stay loaded from one to the next
 * (modcache_end_input()).
 *
 * An entry is keyed by build-id when the capture gives one, else by path
 * and inode.  The file is found at the recorded path only when its build-id
 * matches (a mismatching file is never used), else in perf's build-id
 * caches.  Separate debuginfo (/usr/lib/debug/.build-id, .gnu_debuglink,
 * the cache's "debug" file) supplies symbols, inline chains and, where the
 * executable has no .eh_frame, CFI.
 */
#ifndef RESTACK_UNWIND_MODULE_H
#define RESTACK_UNWIND_MODULE_H

#include <elfutils/libdw.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/arena.h"
#include "common/hashmap.h"

struct a2l;
struct cfi_cache;
struct gopclntab;
struct modload;
struct locate_opts;
struct symtab;

/* Why a module has no usable file (or how it was found). */
enum module_status {
	MODULE_PENDING,       /* not looked up yet */
	MODULE_OK,            /* found, build-id verified */
	MODULE_UNVERIFIED,    /* found at the recorded path; the capture has
			       * no build-id to check it against */
	MODULE_NOT_FOUND,     /* no file anywhere */
	MODULE_MISMATCH,      /* only files with another build-id found */
	MODULE_BAD_ELF,       /* found, but not a usable ELF file */
	MODULE_NO_FILE,       /* anonymous or special mapping ([heap], ...) */
	MODULE_LOADING,       /* being looked up on the loader's thread
			       * (modcache.loader): none of its fields but
			       * the identity, the counts and the load_*
			       * ones may be read until it is done */
	MODULE_STATUS__COUNT
};

const char *module_status_name(enum module_status s);

#define MODULE_NO_SEG UINT32_MAX

struct module_seg {       /* a PT_LOAD segment */
	uint64_t vaddr, memsz, offset, filesz;
};

struct module_dwimage {   /* a decompressed copy of a file, or none */
	void *image;
	Elf *elf;
};

struct module_plt {       /* a PLT section: [lo, hi), entries of entsize */
	uint64_t lo, hi, entsize;
};

#define MODULE_PLT_MAX 3  /* .plt, .plt.sec, .plt.got */

struct module {
	/* Identity, from the capture. */
	char *path;               /* as recorded */
	uint8_t build_id[20];
	uint8_t build_id_size;    /* 0: neither the capture nor the file
				   * gave one */
	bool other_arch;          /* a candidate was of another machine */
	bool build_id_learned;    /* read from the file found at the
				   * recorded path, not given by the
				   * capture (so not the module's key) */

	enum module_status status; /* written and read on the cache's
				    * thread only */
	uint8_t found_status;     /* the lookup's: OK, UNVERIFIED or BAD_ELF
				   * for the last file it accepted */
	char *file;               /* the file used, or NULL */
	const char *found_in;     /* "recorded path", "build-id cache", ... */
	const char *why_missing;  /* when not found: the last lookup's
				   * answer ("not found on the debuginfod
				   * servers", ...), or NULL */
	char *debug_file;         /* separate debuginfo used, or NULL */
	const char *debug_found_in; /* like found_in, for debug_file */

	int fd, debug_fd;
	Elf *elf;                 /* runtime file (NULL when not found) */
	Elf *debug_elf;           /* separate debuginfo, or NULL */
	void *image;              /* in-memory image behind elf (vdso) */
	size_t image_size;
	struct module_dwimage dwimg_rt, dwimg_dbg; /* what libdw reads when
				   * the DWARF was compressed (dwimage.c) */
	Dwarf *dwarf_rt;          /* DWARF of elf (lazily) */
	Dwarf *dwarf_dbg;         /* DWARF of debug_elf (lazily) */
	bool dwarf_rt_tried, dwarf_dbg_tried;
	Elf *syms_elf;            /* the file symbols come from (symtab.c) */
	struct a2l *a2l;          /* addr2line emulation state (a2l.c) */
	bool names_ready;         /* a2l_would_wait() said no once */
	Dwarf_CFI *eh_cfi;        /* .eh_frame of elf */
	Dwarf_CFI *debug_cfi;     /* .debug_frame of either file */
	bool cfi_tried;
	bool eh_frame_refused;    /* .eh_frame failed ehframe_check() */
	uint16_t e_machine;
	bool is_exec;             /* ET_EXEC (absolute addresses) */
	uint64_t entry;           /* e_entry: where the process or the
				   * dynamic linker starts, 0 if none */
	bool is_jit;              /* CFI of JIT code, from a jitdump */
	uint64_t embed_off;       /* where the ELF starts in the recorded
				   * file: a library inside an APK (apk.h),
				   * else 0; file offsets count from it */
	uint64_t apk_pgoff;       /* the first executable mapping's file
				   * offset, for a library inside an APK */
	bool apk_pgoff_set;

	struct module_seg *segs;
	unsigned nr_segs;
	unsigned code_seg;          /* the executable segment that
				     * module_offset_to_vaddr() tries first,
				     * or MODULE_NO_SEG */
	struct module_plt plt[MODULE_PLT_MAX];
	uint8_t nr_plt;
	bool plt_tried;
	const uint8_t *ehhdr_table; /* .eh_frame_hdr search table (ehhdr.c),
				     * in elf's data */
	uint32_t ehhdr_count;
	uint64_t ehhdr_addr;
	bool ehhdr_tried;

	struct cfi_cache *cfi;    /* compiled CFI rows (unwind/cfi.c) */
	struct symtab *symtab;    /* function symbols (unwind/symtab.c) */
	bool symtab_tried;
	struct gopclntab *gopcln; /* Go's function table (gopclntab.c) */
	bool gopcln_tried;
	struct hashmap symcache;  /* rel address -> struct sym_loc */

	/* Per-run counts for `restack stats` (kept by resolve.c). */
	uint64_t samples;         /* samples whose user leaf is in it */
	uint64_t frames;
	uint64_t no_cfi;          /* walks that stopped here for lack of CFI */
	uint64_t no_sym;          /* frames without a symbol */

	/* Batch mode (modcache_end_input()). */
	bool kept;                /* loaded for an earlier input and not yet
				   * used by this one (status PENDING):
				   * module_load() takes it as it is */
	bool reused;              /* this input took it so */

	/* The loader's thread (unwind/modload.h), under its lock. */
	bool load_done;           /* looked up and prepared */
	uint8_t load_status;      /* what the lookup found */
	struct module *load_next; /* in the loader's queue */

	struct module *next_hash; /* chain in the cache's table */
	struct module *next;      /* all modules, in creation order */
};

struct modcache_opts {
	const char *const *buildid_dirs; /* perf build-id caches, in order */
	unsigned nr_buildid_dirs;
	const char *debug_dir;    /* "/usr/lib/debug" unless set */
	const struct locate_opts *locate; /* the whole lookup chain
				   * (unwind/locate.h), borrowed; NULL: the
				   * build-id caches above and debug_dir */
	bool use_live_vdso;       /* the vdso of this process may stand in */
	/* optional: told of each module found, from module_load() */
	void (*loaded)(void *ctx, const struct module *m);
	void *loaded_ctx;
	uint16_t e_machine;       /* the capture's architecture (EM_*): a
				   * file of another is never used; 0: any */
};

struct modcache {
	struct modcache_opts opts;
	struct locate_opts *locate_own; /* built when opts.locate is NULL */
	struct hashmap by_key;    /* hash of identity -> first module */
	struct hashmap known;     /* hash of path -> struct modcache_known */
	struct module *all, **tail;
	unsigned nr;
	struct module *kept;      /* loaded for earlier inputs and not mapped
				   * by this one yet (chained by next), the
				   * most recently used first */
	unsigned max_kept;        /* modcache_end_input() keeps at most this
				   * many (each holds up to two file
				   * descriptors); 0: none */
	struct arena arena;
	/* Loading on a thread of its own (unwind/modload.h), or NULL. */
	struct modload *loader;
	uint64_t sample_no;       /* counted by the resolver, a sample each */
	uint64_t missed_no;       /* the last sample that went on without a
				   * module still loading */
	uint64_t missed;          /* samples that did so */
};

void modcache_init(struct modcache *mc, const struct modcache_opts *opts);
void modcache_release(struct modcache *mc);

/*
 * Batch mode: one cache for several captures in turn, the modules of one
 * capture (all, by_key, nr), its build-id notes and lookup chain at a
 * time.  modcache_end_input() closes a capture: its modules are freed,
 * except those whose files fit any capture (the capture gave the build-id
 * and the file was verified against it, found where every capture looks:
 * the recorded path, --symfs, the build-id caches, the debuginfo
 * directories; not [vdso], not in a perf archive or from debuginfod),
 * which are kept loaded (ELF files, DWARF, symbol table, compiled CFI)
 * with the capture's counts and symbol cache cleared, up to max_kept of
 * them, those the capture used first.
 * modcache_begin_input() starts the next capture with its options.  A kept
 * module returns when the capture maps the same path with the same
 * build-id, and counts as used by it (listed in reports) once
 * module_load() takes it, as a new one would once looked up.
 */
void modcache_begin_input(struct modcache *mc,
			  const struct modcache_opts *opts);
void modcache_end_input(struct modcache *mc);

/*
 * The module for a mapping of path with the given build-id (size 0 if
 * unknown) and inode identity.  Creates the entry on first use; the file is
 * looked up lazily by module_load().  Returns NULL when out of memory.
 */
struct module *modcache_get(struct modcache *mc, const char *path,
			    const uint8_t *build_id, uint8_t build_id_size,
			    uint64_t dev, uint64_t ino);

/*
 * Records that the capture names build-id bid for path (BUILD_ID feature
 * or records).  Mappings of path without a build-id of their own get it;
 * so do modules of path not looked up yet.  Returns 0 or -1 (no memory).
 */
int modcache_note_build_id(struct modcache *mc, const char *path,
			   const uint8_t *bid, uint8_t size);

/*
 * Finds and opens the module's files (once; a kept module's are there
 * already).  Returns true when the module has a usable ELF (status OK or
 * UNVERIFIED).  module_load() answers from the status once it is known;
 * module_load_slow() does the first call's work.  With a loader
 * (mc->loader), the work is done on the loader's thread while this one
 * waits, as long as modload_wait() lets it: false, status LOADING, when it
 * gave up (counted in mc->missed, a sample once).
 */
bool module_load_slow(struct modcache *mc, struct module *m);

static inline bool module_load(struct modcache *mc, struct module *m)
{
	if (m->status != MODULE_PENDING && m->status != MODULE_LOADING)
		return m->status == MODULE_OK || m->status == MODULE_UNVERIFIED;
	return module_load_slow(mc, m);
}

/*
 * The lookup module_load_slow() makes for a module of status PENDING (not
 * kept, not special): opens its files and returns the status it is to
 * have, which it does not set.  It touches m and reads mc's options only
 * (mod_locate() is built already), so it may run on another thread while
 * the cache's thread works on other modules.
 */
enum module_status module_lookup(struct modcache *mc, struct module *m);

/*
 * Waits for every module the loader has been given and sets their
 * statuses: after it, no module is LOADING.  No loader: nothing.
 */
void modcache_settle(struct modcache *mc);

/* Uses path as m's separate debuginfo (build-id checked if known). */
bool module_use_debug_file(struct module *m, const char *path);

/*
 * The ELF virtual address for file offset off (from a mapping's pgoff),
 * using the PT_LOAD segments.  Returns false when no segment holds it.
 */
bool module_offset_to_vaddr(const struct module *m, uint64_t off,
			    uint64_t *vaddr);

/* The DWARF of elf, which is m->elf or m->debug_elf (opened once). */
Dwarf *module_dwarf(struct module *m, Elf *elf);

/*
 * The dwimage libdw reads for module_dwarf(m, elf) (called before), or
 * NULL when libdw reads elf itself.  Owned by the module.
 */
void *module_dwarf_image(struct module *m, Elf *elf);

/* Whether elf's data is in this machine's byte order. */
bool module_elf_host_order(Elf *elf);

/* The section named name, or NULL; *sh receives its header. */
Elf_Scn *module_elf_section(Elf *elf, const char *name, GElf_Shdr *sh);

/*
 * Reads len bytes of the module's file contents at ELF address vaddr
 * (for CFI expressions that read memory outside the stack copy).
 */
bool module_read(struct module *m, uint64_t vaddr, void *buf, size_t len);

/*
 * The PLT section holding ELF address rel, or NULL (sections are read
 * from the loaded runtime file on first use).
 */
const struct module_plt *module_plt_find(struct module *m, uint64_t rel);

/* Reads the GNU build-id note of an ELF; returns its size or 0. */
unsigned module_elf_build_id(Elf *elf, uint8_t *out, unsigned max);

/*
 * Notes the file offset an executable mapping of m starts at (the first
 * one counts): where a library inside an APK starts in it is worked out
 * from it when the library is found extracted, not in its APK.
 */
void module_note_pgoff(struct module *m, uint64_t pgoff);

/*
 * Whether a file's build-id (have, have_size bytes) is the one a capture
 * names (want): the same bytes, or, as perf's build_id rules allow, a
 * shorter id (a 16-byte md5 or uuid one) stored zero-padded to 20 bytes
 * by a writer that gives no size (simpleperf, perf before 5.11).
 */
bool module_build_id_match(const uint8_t *want, unsigned want_size,
			   const uint8_t *have, unsigned have_size);

/*
 * The size a capture's build-id is named by in .build-id directories: a
 * 20-byte id whose last 4 bytes are zero is a padded 16-byte one.
 */
unsigned module_build_id_name_size(const uint8_t *id, unsigned size);

/* Hex form of a build-id into out (at least 2*size+1 bytes). */
void module_build_id_hex(const uint8_t *id, unsigned size, char *out);

#endif
