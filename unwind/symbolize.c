/*
 * symbolize.c - names for addresses, the way perf script prints them.
 *
 * perf 6.1 (machine.c append_inlines, srcline.c addr2line) asks addr2line
 * for the inline chain of an address that has an ELF symbol; an answer of
 * "??:0" means no chain, and the ELF symbol is used.  Each chain entry
 * whose name differs from the ELF symbol is an "(inlined)" frame.  a2l.c
 * reproduces addr2line's answer; symtab.c perf's ELF symbols.
 */
#include "config.h"
#ifdef HAVE_LIBIBERTY
#include <libiberty/demangle.h>
#endif
#include <stdlib.h>
#include <string.h>

#include "unwind/symbolize.h"

#include "common/base.h"
#include "common/mem.h"
#include "unwind/a2l.h"
#include "unwind/jit.h"
#include "unwind/ksyms.h"
#include "unwind/module.h"
#include "unwind/symtab.h"
#include "unwind/warmup.h"

void symbolizer_init(struct symbolizer *s, bool inline_frames)
{
	memset(s, 0, sizeof(*s));
	s->inline_frames = inline_frames;
}

int kallsyms_once_init(struct kallsyms_once *k, const char *path)
{
	memset(k, 0, sizeof(*k));
	pthread_mutex_init(&k->lock, NULL);
	k->path = mem_strdup(path);
	return k->path ? 0 : -1;
}

void kallsyms_once_release(struct kallsyms_once *k)
{
	ksyms_free(k->tab);
	free(k->path);
	pthread_mutex_destroy(&k->lock);
	memset(k, 0, sizeof(*k));
}

struct ksyms *kallsyms_once_load_unstored(struct kallsyms_once *k)
{
	struct ksyms *made = NULL;

	pthread_mutex_lock(&k->lock);
	if (!k->tried) {
		k->tried = true;
		k->tab = made = ksyms_load_unstored(k->path);
	}
	pthread_mutex_unlock(&k->lock);
	return made;
}

void kallsyms_once_load(struct kallsyms_once *k)
{
	struct ksyms *made = kallsyms_once_load_unstored(k);

	/* those waiting for the table use it while its index is written */
	if (made && k->warmup)
		warmup_store_ksyms(k->warmup, made);
	else
		ksyms_store_index(made);
}

void symbolizer_share_kallsyms(struct symbolizer *s, struct kallsyms_once *k)
{
	s->shared = k;
}

/* Reads the kernel symbols on first use (once for all sharers). */
static void symbolizer_load_kallsyms(struct symbolizer *s)
{
	struct kallsyms_once *k = s->shared;

	s->kallsyms_tried = true;
	if (!k) {
		if (s->kallsyms_path)
			s->kallsyms = ksyms_load(s->kallsyms_path);
		return;
	}
	kallsyms_once_load(k);
	pthread_mutex_lock(&k->lock);
	s->kallsyms = k->tab;
	pthread_mutex_unlock(&k->lock);
}

void symbolizer_release(struct symbolizer *s)
{
	if (!s->shared)
		ksyms_free(s->kallsyms);
	free(s->kallsyms_path);
	hashmap_release(&s->kernel);
	hashmap_release(&s->other);
	hashmap_release(&s->jit);
	hashmap_release(&s->demangled);
	arena_release(&s->arena);
	memset(s, 0, sizeof(*s));
}

int symbolizer_set_kallsyms(struct symbolizer *s, const char *path)
{
	free(s->kallsyms_path);
	s->kallsyms_path = mem_strdup(path);
	return s->kallsyms_path ? 0 : -1;
}

bool symbolizer_has_kallsyms(const struct symbolizer *s)
{
	return s->kallsyms != NULL;
}

/*
 * perf 6.1 (symbol-elf.c demangle_sym) passes every ELF symbol to
 * libiberty's cplus_demangle() with DMGL_NO_OPTS in its default (auto)
 * style, which tries Rust first (v0 "_R..." and legacy "_ZN...17h<hash>E",
 * the hash dropped), then the C++ ABI ("_Z...", "_GLOBAL__sub_I_...").
 * Every such name starts with '_'.
 */
char *symbolize_demangle(const char *raw)
{
	if (!raw || raw[0] != '_')
		return NULL;
#ifdef HAVE_LIBIBERTY
	return cplus_demangle(raw, DMGL_NO_OPTS);
#else
	return NULL;
#endif
}

static struct sym_loc *sym_new(struct symbolizer *s, const char *module,
			       uint64_t rel, enum sym_kind kind, unsigned nr)
{
	struct sym_loc *l = arena_alloc(&s->arena, sizeof(*l) +
					nr * sizeof(l->e[0]));

	if (!l)
		return NULL;
	l->module = module;
	l->a2l = NULL;
	l->rel = rel;
	l->kind = (uint8_t)kind;
	l->nr = (uint16_t)nr;
	return l;
}

/*
 * The name perf shows for a symbol (see symbolize_demangle()).  Names are
 * ELF or DWARF strings that live for the run, so the result is cached by
 * pointer.
 */
static const char *sym_demangle(struct symbolizer *s, const char *raw)
{
	const char *name = raw;
	char *d;
	void *v;

	if (!raw || raw[0] != '_')
		return raw;
	if (hashmap_get(&s->demangled, (uint64_t)(uintptr_t)raw, &v))
		return v;
	d = symbolize_demangle(raw);
	if (d) {
		name = arena_strdup(&s->arena, d);
		free(d);
		if (!name)
			name = raw;
	}
	(void)hashmap_put(&s->demangled, (uint64_t)(uintptr_t)raw,
			  (void *)name);
	return name;
}

/*
 * Keeps what loc l's names (from a2l_lookup_deps(), n of them) depend on
 * besides the address, when any does.  Returns 0, or -1 when out of
 * memory.
 */
static int sym_a2l_deps(struct symbolizer *s, const struct module *m,
			struct sym_loc *l, const char *real,
			const struct a2l_deps *deps)
{
	struct sym_a2l *d;
	unsigned i;

	for (i = 0; i < l->nr && !deps->stateful[i]; i++)
		;
	if (i == l->nr)
		return 0;
	d = arena_alloc(&s->arena, sizeof(*d) + l->nr * sizeof(d->e[0]));
	if (!d)
		return -1;
	d->module = hashmap_fnv(hashmap_fnv_str(HASHMAP_FNV_SEED, m->path),
				m->build_id, m->build_id_size);
	d->real = real;
	d->first = l->e[0].name;
	d->renames = deps->renames;
	for (i = 0; i < l->nr; i++) {
		d->e[i].stateful = deps->stateful[i];
		d->e[i].low = deps->low[i];
		d->e[i].idx = deps->idx[i];
		d->e[i].dwarf = deps->dwarf[i] ?
					sym_demangle(s, deps->dwarf[i]) :
					"??";
	}
	l->a2l = d;
	return 0;
}

const struct sym_loc *symbolize_user(struct symbolizer *s, struct module *m,
				     const char *map_path, uint64_t rel)
{
	struct a2l_deps deps;
	const char *chain[A2L_CHAIN_MAX];
	const struct symtab_sym *sym;
	const struct symtab *t;
	struct sym_loc *l;
	unsigned n = 0, i;
	void *v;

	if (!m || (!m->elf && !m->debug_elf)) {
		/* No file: one unknown frame per mapping name. */
		uint64_t key = hashmap_fnv_str(HASHMAP_FNV_SEED, map_path);

		if (hashmap_get(&s->other, key, &v) &&
		    !strcmp(((struct sym_loc *)v)->module, map_path))
			return v;
		l = sym_new(s, map_path, rel, SYM_USER, 1);
		if (!l)
			return NULL;
		l->module = arena_strdup(&s->arena, map_path);
		if (!l->module || hashmap_put(&s->other, key, l) < 0)
			return NULL;
		return l;
	}
	if (hashmap_get(&m->symcache, rel, &v))
		return v;
	s->lookups++;
	t = symtab_load(m);
	sym = symtab_lookup(t, rel);
	/* perf runs no addr2line on "[vdso]"-style modules (dso__name()). */
	if (sym && s->inline_frames && m->path[0] != '[')
		n = a2l_lookup_deps(m, rel, chain, &deps);
	if (n == 0) {
		l = sym_new(s, m->path, rel, SYM_USER, 1);
		if (!l)
			return NULL;
		l->e[0].name = sym ? sym_demangle(s, sym->name) : NULL;
	} else {
		const char *real = sym_demangle(s, sym->name);

		l = sym_new(s, m->path, rel, SYM_USER, n);
		if (!l)
			return NULL;
		for (i = 0; i < n; i++) {
			l->e[i].name = chain[i] ? sym_demangle(s, chain[i]) :
						  "??";
			l->e[i].inlined = strcmp(l->e[i].name, real) != 0;
		}
		if (sym_a2l_deps(s, m, l, real, &deps) < 0)
			return NULL;
	}
	l->build_id = m->build_id;
	l->build_id_size = m->build_id_size;
	if (!l->e[0].name)
		m->no_sym++;
	if (hashmap_put(&m->symcache, rel, l) < 0)
		return NULL;
	return l;
}

bool symbolize_user_would_wait(struct symbolizer *s, struct module *m,
			       uint64_t rel)
{
	void *v;

	if (!s->inline_frames || !m || m->names_ready || m->a2l ||
	    (!m->elf && !m->debug_elf) || m->path[0] == '[' ||
	    hashmap_get(&m->symcache, rel, &v))
		return false;
	(void)symtab_load(m);
	return a2l_would_wait(m);
}

bool symbolize_kernel_would_wait(struct symbolizer *s)
{
	struct kallsyms_once *k = s->shared;
	bool wait;

	if (s->kallsyms_tried || !k)
		return false;
	if (pthread_mutex_trylock(&k->lock))
		return true;            /* being read */
	wait = !k->tried;
	pthread_mutex_unlock(&k->lock);
	if (!wait)      /* read: take it, so that later calls ask nothing */
		symbolizer_load_kallsyms(s);
	return wait;
}

const struct sym_loc *symbolize_kernel(struct symbolizer *s, uint64_t addr)
{
	const char *name;
	struct sym_loc *l;
	size_t len;
	void *v;

	if (hashmap_get(&s->kernel, addr, &v))
		return v;
	if (!s->kallsyms_tried && (s->kallsyms_path || s->shared))
		symbolizer_load_kallsyms(s);
	name = ksyms_lookup(s->kallsyms, addr, &len);
	l = sym_new(s, "[kernel.kallsyms]", addr, SYM_KERNEL, 1);
	if (!l)
		return NULL;
	if (name) {
		l->e[0].name = arena_strndup(&s->arena, name, len);
		if (!l->e[0].name)
			return NULL;
	}
	if (hashmap_put(&s->kernel, addr, l) < 0)
		return NULL;
	return l;
}

const struct sym_loc *symbolize_unmapped(struct symbolizer *s)
{
	void *v;
	struct sym_loc *l;

	if (hashmap_get(&s->other, 0, &v))
		return v;
	l = sym_new(s, "[unknown]", 0, SYM_UNKNOWN, 1);
	if (!l || hashmap_put(&s->other, 0, l) < 0)
		return NULL;
	return l;
}

const struct sym_loc *symbolize_named(struct symbolizer *s,
				      const char *module, uint64_t rel,
				      const void *key, const char *name)
{
	struct sym_loc *l;
	void *v;

	/* the JIT table's keys are jit_sym pointers: no clash */
	if (hashmap_get(&s->jit, (uint64_t)(uintptr_t)key, &v))
		return v;
	l = sym_new(s, module, rel, SYM_USER, 1);
	if (!l)
		return NULL;
	l->e[0].name = name;
	if (hashmap_put(&s->jit, (uint64_t)(uintptr_t)key, l) < 0)
		return NULL;
	return l;
}

const struct sym_loc *symbolize_jit(struct symbolizer *s,
				    const struct jit_sym *sym)
{
	struct sym_loc *l;
	void *v;

	if (hashmap_get(&s->jit, (uint64_t)(uintptr_t)sym, &v))
		return v;
	l = sym_new(s, sym->module, sym->start, SYM_JIT, 1);
	if (!l)
		return NULL;
	l->e[0].name = sym->name;
	if (hashmap_put(&s->jit, (uint64_t)(uintptr_t)sym, l) < 0)
		return NULL;
	return l;
}
