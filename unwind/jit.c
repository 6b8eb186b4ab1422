/*
 * jit.c - perf map and jitdump readers (see jit.h).
 */
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unwind/jit.h"

#include "common/base.h"
#include "common/bsearch.h"
#include "common/cur.h"
#include "common/mem.h"
#include "common/regfile.h"
#include "unwind/cfi.h"
#include "unwind/ehframe.h"
#include "unwind/module.h"

#define JIT_DUMP_MAGIC 0x4A695444u
#define JIT_CODE_LOAD 0
#define JIT_CODE_MOVE 1
#define JIT_CODE_UNWINDING_INFO 4
#define JIT_SCAN_BACK 256

struct jit_table {
	struct jit_sym *syms;   /* sorted by start */
	size_t nr, alloc;
	uint64_t max_len;
	uint8_t *dump;          /* the jitdump's bytes (eh_frame data) */
	bool unsorted;          /* symbols added since the last sort */
	char module[32];        /* "/tmp/perf-PID.map", as perf names the
				 * process's JIT code */
};

static struct jit_table *jit_table_new(int32_t pid)
{
	struct jit_table *t = mem_zalloc(1, sizeof(*t));

	if (t)
		snprintf(t->module, sizeof(t->module), "/tmp/perf-%d.map",
			 (int)pid);
	return t;
}

void jit_init(struct jit_index *j, const char *const *dirs, unsigned nr)
{
	memset(j, 0, sizeof(*j));
	j->dirs = dirs;
	j->nr_dirs = nr;
}

static void jit_module_free(struct module *m)
{
	if (m->eh_cfi)
		dwarf_cfi_end(m->eh_cfi);
	elf_end(m->elf);
	cfi_cache_free(m->cfi);
	free(m->image);
	free(m->path);
	free(m);
}

void jit_release(struct jit_index *j)
{
	size_t pos = 0;
	void *v;

	while (hashmap_iter(&j->by_pid, &pos, NULL, &v)) {
		struct jit_table *t = v;

		if (t) {
			size_t i;

			for (i = 0; i < t->nr; i++)
				if (t->syms[i].cfi)
					jit_module_free(t->syms[i].cfi);
			free(t->syms);
			free(t->dump);
			free(t);
		}
	}
	hashmap_release(&j->by_pid);
	hashmap_release(&j->dumps);
	arena_release(&j->arena);
}

int jit_note_mmap(struct jit_index *j, int32_t pid, const char *path)
{
	const char *base = strrchr(path, '/');
	char want[32];
	char *copy;

	base = base ? base + 1 : path;
	snprintf(want, sizeof(want), "jit-%d.dump", pid);
	if (strcmp(base, want) || hashmap_get(&j->dumps, (uint32_t)pid, NULL))
		return 0;
	copy = arena_strdup(&j->arena, path);
	if (!copy)
		return -1;
	return hashmap_put(&j->dumps, (uint32_t)pid, copy);
}

/* Adds a symbol: 1, or 0 when the range is empty, -1 out of memory. */
static int jit_add(struct jit_index *j, struct jit_table *t, uint64_t start,
		   uint64_t len, uint64_t time, const char *name, size_t nlen,
		   bool from_dump)
{
	struct jit_sym *s;

	if (!len || start + len < start)
		return 0;   /* nothing to name */
	if (mem_grow(&t->syms, &t->alloc, sizeof(*t->syms), t->nr + 1) < 0)
		return -1;
	s = &t->syms[t->nr];
	s->name = arena_strndup(&j->arena, name, nlen);
	if (!s->name)
		return -1;
	s->module = t->module;
	s->start = start;
	s->end = start + len;
	s->time = time;
	s->from_dump = from_dump;
	t->nr++;
	t->max_len = MAX(t->max_len, len);
	j->entries++;
	return 1;
}

/* "START SIZE name" lines, hex without 0x. */
static int jit_read_map(struct jit_index *j, struct jit_table *t, FILE *f)
{
	char line[4096];
	uint64_t order = 0;

	while (fgets(line, sizeof(line), f)) {
		char *p = line, *end;
		uint64_t start, len;
		size_t n;

		start = strtoull(p, &end, 16);
		if (end == p || *end != ' ')
			continue;
		p = end + 1;
		len = strtoull(p, &end, 16);
		if (end == p || *end != ' ')
			continue;
		p = end + 1;
		n = strcspn(p, "\r\n");
		if (jit_add(j, t, start, len, ++order, p, n, false) < 0)
			return -1;
	}
	return 0;
}

/*
 * CODE_MOVE: the newest load at old_addr, again at new_addr from time on.
 * Its unwinding info moves along (it lies after the code, pc-relative)
 * when the size is unchanged.  Returns 0, or -1 when out of memory.
 */
static int jit_move(struct jit_index *j, struct jit_table *t,
		    uint64_t old_addr, uint64_t new_addr, uint64_t size,
		    uint64_t time)
{
	struct jit_sym *o, *m;
	size_t i;
	int added;

	for (i = t->nr; i-- > 0;)
		if (t->syms[i].start == old_addr && t->syms[i].from_dump)
			break;
	if (i == (size_t)-1)
		return 0;
	added = jit_add(j, t, new_addr, size, time, t->syms[i].name,
			strlen(t->syms[i].name), true);
	if (added <= 0)
		return added;
	o = &t->syms[i];          /* after jit_add: the array may move */
	m = &t->syms[t->nr - 1];
	if (size == o->end - o->start) {
		m->eh_frame = o->eh_frame;
		m->eh_frame_size = o->eh_frame_size;
		m->e_machine = o->e_machine;
	}
	return 0;
}

/*
 * jitdump: header, then records {id, total_size, timestamp, payload}.
 * CODE_LOAD gives names; CODE_MOVE moves a loaded body.
 */
static int jit_read_dump(struct jit_index *j, struct jit_table *t, FILE *f)
{
	size_t len;
	uint8_t *buf = (uint8_t *)mem_slurp(f, (size_t)1 << 31, &len);
	const uint8_t *eh = NULL;
	uint64_t eh_size = 0;
	struct cur c, h;
	uint32_t magic, hsize, mach;
	int rc = 0, added;

	if (!buf)
		return -1;
	c = cur_make(buf, len, 0, false);
	magic = cur_u32(&c);
	if (magic != JIT_DUMP_MAGIC) {
		c = cur_make(buf, len, 0, true);
		if (cur_u32(&c) != JIT_DUMP_MAGIC)
			goto out;
	}
	(void)cur_u32(&c);        /* version */
	hsize = cur_u32(&c);
	mach = cur_u32(&c);
	if (c.short_read || hsize < 12 || hsize > len)
		goto out;
	c = cur_make(buf + hsize, len - hsize, hsize, c.swap);
	while (cur_left(&c) >= 16) {
		uint32_t id = cur_u32(&c), size = cur_u32(&c);
		uint64_t time = cur_u64(&c);

		if (size < 16 || size - 16 > cur_left(&c))
			break;     /* a dump cut short while writing */
		h = cur_sub(&c, size - 16);
		if (id == JIT_CODE_LOAD) {
			uint64_t vma, addr, csize;
			const char *name;

			cur_skip(&h, 8);      /* pid, tid */
			vma = cur_u64(&h);
			addr = cur_u64(&h);
			csize = cur_u64(&h);
			cur_skip(&h, 8);      /* code_index */
			name = cur_cstr(&h);
			(void)vma;
			added = !h.short_read && name ?
					jit_add(j, t, addr, csize, time, name,
						strlen(name), true) :
					0;
			if (added < 0) {
				rc = -1;
				goto out;
			}
			/* A pending UNWINDING_INFO belongs to this load. */
			if (added && eh_size) {
				t->syms[t->nr - 1].eh_frame = eh;
				t->syms[t->nr - 1].eh_frame_size = eh_size;
				t->syms[t->nr - 1].e_machine = (uint16_t)mach;
			}
			eh = NULL;
			eh_size = 0;
		} else if (id == JIT_CODE_UNWINDING_INFO) {
			uint64_t usize = cur_u64(&h), hdr = cur_u64(&h);

			cur_skip(&h, 8);      /* mapped_size */
			/* perf's genelf: .eh_frame first, the header last */
			if (!h.short_read && usize <= cur_left(&h) &&
			    hdr < usize) {
				eh = h.p;
				eh_size = usize - hdr;
			}
		} else if (id == JIT_CODE_MOVE) {
			uint64_t old_addr, new_addr, csize;

			cur_skip(&h, 16);     /* pid, tid, vma */
			old_addr = cur_u64(&h);
			new_addr = cur_u64(&h);
			csize = cur_u64(&h);
			if (!h.short_read &&
			    jit_move(j, t, old_addr, new_addr, csize, time) < 0) {
				rc = -1;
				goto out;
			}
		}
	}
out:
	if (rc == 0 && !t->dump)
		t->dump = buf;   /* eh_frame pointers point into it */
	else
		free(buf);
	return rc;
}

/*
 * An ELF image in memory: header, .eh_frame (its bytes at the address the
 * jitdump writer laid them out for), .shstrtab, section headers.
 */
static char *jit_elf_image(const struct jit_sym *s, uint64_t eh_addr,
			   size_t *size)
{
	static const char names[] = "\0.eh_frame\0.shstrtab";
	size_t eh_off = sizeof(Elf64_Ehdr), str_off, sh_off;
	Elf64_Ehdr *eh;
	Elf64_Shdr *sh;
	char *img;

	str_off = eh_off + (size_t)s->eh_frame_size;
	sh_off = ALIGN_UP(str_off + sizeof(names), (size_t)8);
	*size = sh_off + 3 * sizeof(Elf64_Shdr);
	img = calloc(1, *size);
	if (!img)
		return NULL;
	eh = (Elf64_Ehdr *)img;
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_DYN;
	eh->e_machine = s->e_machine ? s->e_machine : EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_ehsize = sizeof(Elf64_Ehdr);
	eh->e_shoff = sh_off;
	eh->e_shentsize = sizeof(Elf64_Shdr);
	eh->e_shnum = 3;
	eh->e_shstrndx = 2;
	memcpy(img + eh_off, s->eh_frame, (size_t)s->eh_frame_size);
	memcpy(img + str_off, names, sizeof(names));
	sh = (Elf64_Shdr *)(img + sh_off);
	sh[1].sh_name = 1;
	sh[1].sh_type = SHT_PROGBITS;
	sh[1].sh_flags = SHF_ALLOC;
	sh[1].sh_addr = eh_addr;
	sh[1].sh_offset = eh_off;
	sh[1].sh_size = s->eh_frame_size;
	sh[1].sh_addralign = 8;
	sh[2].sh_name = 11;
	sh[2].sh_type = SHT_STRTAB;
	sh[2].sh_offset = str_off;
	sh[2].sh_size = sizeof(names);
	sh[2].sh_addralign = 1;
	return img;
}

struct module *jit_cfi_module(struct jit_index *j, struct jit_sym *s)
{
	struct module *m;
	size_t size;
	char *img;

	(void)j;
	if (s->cfi_tried)
		return s->cfi;
	s->cfi_tried = true;
	/* libdw trusts register numbers; a jitdump is checked first. */
	if (!s->eh_frame || !s->eh_frame_size ||
	    !ehframe_check(s->eh_frame, (size_t)s->eh_frame_size,
			   EHFRAME_MAX_REG, true))
		return NULL;
	m = mem_zalloc(1, sizeof(*m));
	if (!m)
		return NULL;
	img = jit_elf_image(s, s->start + ALIGN_UP(s->end - s->start, 8ull),
			    &size);
	if (img)
		m->elf = elf_memory(img, size);
	if (!m->elf) {
		free(img);
		free(m);
		return NULL;
	}
	m->image = img;
	m->image_size = size;
	m->path = mem_strdup(s->module);
	m->status = MODULE_OK;
	m->is_jit = true;
	m->fd = m->debug_fd = -1;
	s->cfi = m;
	return m;
}

static FILE *jit_open_in(const struct jit_index *j, const char *name)
{
	char path[4096];
	unsigned i;
	FILE *f;

	for (i = 0; i < j->nr_dirs; i++) {
		snprintf(path, sizeof(path), "%s/%s", j->dirs[i], name);
		f = regfile_fopen(path, NULL);
		if (f)
			return f;
	}
	return NULL;
}

static int jit_sym_cmp(const void *a, const void *b)
{
	const struct jit_sym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->from_dump != y->from_dump)
		return x->from_dump ? 1 : -1;
	return x->time < y->time ? -1 : x->time > y->time;
}

static struct jit_table *jit_load(struct jit_index *j, int32_t pid)
{
	struct jit_table *t = jit_table_new(pid);
	char name[64];
	FILE *f;
	void *v;

	if (!t)
		return NULL;
	snprintf(name, sizeof(name), "perf-%d.map", pid);
	f = jit_open_in(j, name);
	if (!f) {
		snprintf(name, sizeof(name), "/tmp/perf-%d.map", pid);
		f = regfile_fopen(name, NULL);
	}
	if (f) {
		j->maps_read++;
		if (jit_read_map(j, t, f) < 0)
			goto fail;
		fclose(f);
		f = NULL;
	}
	snprintf(name, sizeof(name), "jit-%d.dump", pid);
	f = hashmap_get(&j->dumps, (uint32_t)pid, &v) ?
		    regfile_fopen(v, NULL) : NULL;
	if (!f)
		f = jit_open_in(j, name);
	if (f) {
		j->dumps_read++;
		if (jit_read_dump(j, t, f) < 0)
			goto fail;
		fclose(f);
		f = NULL;
	}
	if (t->nr)
		qsort(t->syms, t->nr, sizeof(*t->syms), jit_sym_cmp);
	return t;
fail:
	if (f)
		fclose(f);
	free(t->syms);
	free(t);
	return NULL;
}

/* The process's table, read on first use; NULL when it has none. */
static struct jit_table *jit_table_get(struct jit_index *j, int32_t pid)
{
	struct jit_table *t;
	void *v;

	if (hashmap_get(&j->by_pid, (uint32_t)pid, &v))
		return v;
	t = jit_load(j, pid);
	if (hashmap_put(&j->by_pid, (uint32_t)pid, t) < 0) {
		if (t) {
			free(t->syms);
			free(t->dump);
			free(t);
		}
		return NULL;
	}
	return t;
}

/* Sorts what jit_add_symbol() added. */
static void jit_table_sort(struct jit_table *t)
{
	if (t && t->unsorted) {
		qsort(t->syms, t->nr, sizeof(*t->syms), jit_sym_cmp);
		t->unsorted = false;
	}
}

int jit_add_symbol(struct jit_index *j, int32_t pid, uint64_t start,
		   uint64_t len, const char *name)
{
	struct jit_table *t = jit_table_get(j, pid);

	if (!t) {   /* no files: a table of its own */
		t = jit_table_new(pid);
		if (!t || hashmap_put(&j->by_pid, (uint32_t)pid, t) < 0) {
			free(t);
			return -1;
		}
	}
	if (jit_add(j, t, start, len, 0, name, strlen(name), false) < 0)
		return -1;
	t->unsorted = true;
	return 0;
}

size_t jit_symbols(struct jit_index *j, int32_t pid, struct jit_sym **syms)
{
	struct jit_table *t = jit_table_get(j, pid);

	jit_table_sort(t);

	*syms = t ? t->syms : NULL;
	return t ? t->nr : 0;
}

#define JIT_SYM_START(s) ((s)->start)
UPPER_BOUND_DEFINE(jit_upper, struct jit_sym, JIT_SYM_START)

struct jit_sym *jit_lookup(struct jit_index *j, int32_t pid, uint64_t addr,
			   uint64_t time)
{
	struct jit_sym *best = NULL, *newest = NULL;
	struct jit_table *t = jit_table_get(j, pid);
	size_t lo, k;

	if (!t || !t->nr)
		return NULL;
	jit_table_sort(t);
	lo = jit_upper(t->syms, t->nr, addr);
	/* Candidates start at or below addr; overlaps are few. */
	for (k = 0; lo > 0 && k < JIT_SCAN_BACK; k++) {
		struct jit_sym *s = &t->syms[--lo];

		if (addr - s->start >= t->max_len)
			break;
		if (addr >= s->end)
			continue;
		/* jitdump loads beat perf-map lines; later beats earlier. */
		if (!newest || s->from_dump > newest->from_dump ||
		    (s->from_dump == newest->from_dump &&
		     s->time > newest->time))
			newest = s;
		if (s->from_dump && s->time <= time &&
		    (!best || s->time > best->time))
			best = s;
	}
	return best ? best : newest;
}
