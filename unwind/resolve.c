/*
 * resolve.c - from events to resolved samples: the process model, the
 * unwinder, the root caches and the symbolizer, driven per sample.
 */
#include <stdlib.h>
#include <string.h>

#include "unwind/resolve.h"

#include "common/base.h"
#include "common/mem.h"
#include "unwind/a2l.h"
#include "unwind/ehhdr.h"
#include "unwind/gopclntab.h"
#include "unwind/warmup.h"

/* The stitcher's test for one activation seen at two call sites: both
 * addresses in the same FDE of the same module. */
static bool resolve_same_function(void *ctx, struct module *a, uint64_t rel_a,
				  struct module *b, uint64_t rel_b)
{
	struct resolve *r = ctx;
	uint64_t fa = 0, fb = 0;


	return a == b && !a->is_jit && module_load(r->mc, a) &&
	       ehhdr_function_start(a, rel_a, &fa) &&
	       ehhdr_function_start(b, rel_b, &fb) && fa == fb;
}

/*
 * A module was found: its DWARF, which naming its frames reads, is
 * decompressed ahead (modcache_opts.loaded).
 */
static void resolve_loaded(void *ctx, const struct module *m)
{
	struct resolve *r = ctx;

	warmup_dwarf(r->opts.warmup, m->debug_file ? m->debug_file : m->file);
}

/*
 * A frame's symbol location by its module and address (fixed for the
 * symbolizer's life): symbolize_user()'s answer, remembered in front of
 * the module's cache, which costs a hash lookup more.
 */
#define RESOLVE_LOC_SLOTS 4096u

struct resolve_loc_slot {
	const struct module *mod;      /* NULL: empty */
	uint64_t rel;
	const struct sym_loc *loc;
};

int resolve_init(struct resolve *r, const struct resolve_opts *opts,
		 enum event_arch arch, struct err *err)
{
	struct modcache_opts mopts = { 0 };
	struct unwind_opts uopts = { 0 };

	memset(r, 0, sizeof(*r));
	if (opts)
		r->opts = *opts;
	r->arch = regs_arch_get(arch);
	mopts.buildid_dirs = r->opts.buildid_dirs;
	mopts.nr_buildid_dirs = r->opts.nr_buildid_dirs;
	mopts.locate = r->opts.locate;
	mopts.use_live_vdso = r->opts.use_live_vdso;
	if (r->opts.warmup && !r->opts.no_inline) {
		mopts.loaded = resolve_loaded;
		mopts.loaded_ctx = r;
	}
	mopts.e_machine = arch == EVENT_ARCH_X86_64 ? EM_X86_64 :
			  arch == EVENT_ARCH_AARCH64 ? EM_AARCH64 :
			  arch == EVENT_ARCH_I386 ? EM_386 : 0;
	if (r->opts.mc) {
		r->mc = r->opts.mc;
		modcache_begin_input(r->mc, &mopts);
	} else {
		r->mc = &r->own_mc;
		modcache_init(r->mc, &mopts);
	}
	aspace_init(&r->as, r->mc);
	symbolizer_init(&r->sym, !r->opts.no_inline);
	jit_init(&r->jit, r->opts.jit_dirs, r->opts.nr_jit_dirs);
	symbundle_init(&r->bundle);
	uopts.max_frames = r->opts.max_frames;
	uopts.no_fp = r->opts.no_fp;
	uopts.max_scan = r->opts.max_scan;
	if (unwinder_init(&r->uw, r->arch, r->mc, &uopts) < 0)
		return err_set(err, ERR_NOMEM, ERR_NO_OFF, "unwinder");
	r->sf = mem_zalloc(r->uw.opts.max_frames * 2, sizeof(*r->sf));
	r->sf2 = mem_zalloc(r->uw.opts.max_frames * 2, sizeof(*r->sf2));
	if (!r->sf || !r->sf2)
		return err_set(err, ERR_NOMEM, ERR_NO_OFF, "stitching");
	r->locs = mem_zalloc(RESOLVE_LOC_SLOTS, sizeof(*r->locs));
	if (!r->locs)
		return err_set(err, ERR_NOMEM, ERR_NO_OFF, "symbols");
	if (!r->opts.no_stitch) {
		struct stitch_opts so = r->opts.stitch;

		so.same_function = resolve_same_function;
		so.ctx = r;
		r->st = stitcher_new(&so);
		if (!r->st)
			return err_set(err, ERR_NOMEM, ERR_NO_OFF, "root cache");
	}
	if (r->opts.kallsyms_shared && !r->opts.no_kernel)
		symbolizer_share_kallsyms(&r->sym, r->opts.kallsyms_shared);
	else if (r->opts.kallsyms && !r->opts.no_kernel &&
		 symbolizer_set_kallsyms(&r->sym, r->opts.kallsyms) < 0)
		return err_set(err, ERR_NOMEM, ERR_NO_OFF, "kallsyms");
	return 0;
}

void resolve_release(struct resolve *r)
{
	unwinder_release(&r->uw);
	free(r->locs);
	r->locs = NULL;
	symbolizer_release(&r->sym);
	aspace_release(&r->as);
	stitcher_free(r->st);
	jit_release(&r->jit);
	symbundle_release(&r->bundle);
	/* last: the above point to modules */
	if (r->mc == &r->own_mc)
		modcache_release(r->mc);
	else if (r->mc)
		modcache_end_input(r->mc);
	hashmap_release(&r->lives);
	hashmap_release(&r->tseqs);
	hashmap_release(&r->pending);
	arena_release(&r->pending_arena);
	free(r->pending_mods);
	free(r->frames);
	free(r->sf);
	free(r->sf2);
	free(r->deferred);
	memset(r, 0, sizeof(*r));
}

void resolve_begin_pass(struct resolve *r, enum resolve_pass pass)
{
	if (pass == RESOLVE_FINAL || pass == RESOLVE_RETRY) {
		aspace_release(&r->as);
		aspace_init(&r->as, r->mc);
		hashmap_release(&r->lives);
	}
	hashmap_release(&r->tseqs);
	r->seq = 0;
	r->next_deferred = 0;
	r->retry_by_order = false;
	r->retry_by_offset = false;
	r->pass = pass;
	/*
	 * A pass that another follows learns a thread's walks only once it
	 * has one to stitch (stitch.h); --validate-stitch stitches every
	 * thread.
	 */
	if (r->st && (pass == RESOLVE_FIRST || pass == RESOLVE_PRESCAN))
		stitcher_set_lazy(r->st, !r->opts.validate_stitch);
	else if (r->st)
		stitcher_settle(r->st);
}

/* Whether the root caches still serve a later pass over the input. */
static bool resolve_more_passes(const struct resolve *r)
{
	return r->pass == RESOLVE_PRESCAN || r->pass == RESOLVE_FIRST;
}

/* The root-cache key of a thread's current life. */
static uint64_t resolve_thread_key(const struct resolve *r, int32_t tid)
{
	void *v = NULL;

	hashmap_get(&r->lives, (uint64_t)(uint32_t)tid, &v);
	return (uint64_t)(uint32_t)tid << 32 | (uint32_t)(uintptr_t)v;
}

/* A thread's life ends (exit, exec): a later thread of that tid is new. */
static int resolve_end_life(struct resolve *r, int32_t tid)
{
	void *v = NULL;

	/* The last pass has no use for the frames of a finished life. */
	if (r->st && !resolve_more_passes(r))
		stitcher_forget(r->st, resolve_thread_key(r, tid));
	hashmap_get(&r->lives, (uint64_t)(uint32_t)tid, &v);
	return hashmap_put(&r->lives, (uint64_t)(uint32_t)tid,
			   (void *)((uintptr_t)v + 1));
}

/*
 * Numbers the sample in its thread's life (r->tseq): a thread's samples
 * come in the same order in every pass and to whichever worker has the
 * thread, so its root cache sees the same numbers for every -j (the
 * worker's own count, r->seq, skips the other workers' samples).
 */
static int resolve_count_thread(struct resolve *r, int32_t tid)
{
	uint64_t key = resolve_thread_key(r, tid);
	void *v = NULL;

	hashmap_get(&r->tseqs, key, &v);
	r->tseq = (uint32_t)(uintptr_t)v + 1;
	return hashmap_put(&r->tseqs, key, (void *)(uintptr_t)r->tseq);
}

static int resolve_push(struct resolve *r, uint32_t *nr, uint64_t pc,
			enum frame_origin origin, const struct sym_loc *loc)
{
	struct rframe *f;

	if (!loc)
		return -1;
	if (mem_grow(&r->frames, &r->alloc_frames, sizeof(*r->frames),
		     (size_t)*nr + 1) < 0)
		return -1;
	f = &r->frames[(*nr)++];
	f->pc = pc;
	f->origin = (uint8_t)origin;
	f->loc = loc;
	return 0;
}

/*
 * Code outside any file (anonymous or no mapping): JIT code when the
 * process has a perf map or jitdump covering it.
 */
static const struct sym_loc *resolve_jit(struct resolve *r, int32_t pid,
					 uint64_t addr, uint64_t time)
{
	const struct jit_sym *js = jit_lookup(&r->jit, pid, addr, time);

	if (!js)
		return NULL;
	r->stats.jit_frames++;
	return symbolize_jit(&r->sym, js);
}

/*
 * A name the capture carries for addr of process pid (sysprof's
 * __symbols__), for code whose file is absent; NULL when there is none
 * (or no memory).
 */
static const struct sym_loc *resolve_bundled(struct resolve *r, int32_t pid,
					     uint64_t addr, const char *module,
					     uint64_t rel)
{
	const struct symbundle_sym *b = symbundle_lookup(&r->bundle, pid,
							 addr);

	return b ? symbolize_named(&r->sym, module, rel, b, b->name) : NULL;
}

/*
 * The symbols of a user address looked up in the process's mappings: addr
 * (a return address less 1) for the files, raw (the address as the sample
 * has it) for the names the capture carries.
 */
static const struct sym_loc *resolve_user_addr(struct resolve *r,
					       const struct event *ev,
					       const struct aspace_maps *maps,
					       uint64_t addr, uint64_t raw)
{
	const struct aspace_map *m = aspace_maps_find(maps, addr);
	const struct sym_loc *jl;
	uint64_t rel;

	if (!m || m->mod->status == MODULE_NO_FILE) {
		jl = resolve_jit(r, ev->pid, addr, ev->time);
		if (jl)
			return jl;
	}
	if (!m) {
		jl = resolve_bundled(r, ev->pid, raw, "[unknown]", addr);
		return jl ? jl : symbolize_unmapped(&r->sym);
	}
	rel = addr - m->start + m->pgoff;
	if (module_load(r->mc, m->mod))
		(void)module_offset_to_vaddr(m->mod, rel, &rel);
	else if ((jl = resolve_bundled(r, ev->pid, raw, m->mod->path, rel)))
		return jl;
	/* a module still loading is not to be read yet: named as one
	 * without a file, and not remembered so */
	return symbolize_user(&r->sym,
			      m->mod->status == MODULE_LOADING ? NULL : m->mod,
			      m->mod->path, rel);
}

static bool resolve_name_starts(const struct sym_loc *loc, const char *pfx)
{
	const char *name = loc && loc->nr ? loc->e[0].name : NULL;

	return name && !strncmp(name, pfx, strlen(pfx));
}

/*
 * Whether a kernel frame was an interrupt or exception entry (x86's
 * idtentry stubs, arm64's vectors for exceptions taken from the kernel).
 * The kernel's unwinder reports the address such an entry interrupted
 * next, an exact address, not a return address.
 */
static bool resolve_is_irq_entry(const struct sym_loc *loc)
{
	static const char *const entries[] = {
		"asm_exc_", "asm_sysvec_", "asm_common_interrupt",
		"asm_spurious_interrupt",
	};
	static const char *const arm64[] = {
		"el1h_64_sync", "el1h_64_irq", "el1h_64_fiq", "el1h_64_error",
	};
	const char *name = loc && loc->nr ? loc->e[0].name : NULL;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(entries); i++)
		if (resolve_name_starts(loc, entries[i]))
			return true;
	for (i = 0; name && i < ARRAY_SIZE(arm64); i++)
		if (!strcmp(name, arm64[i]))
			return true;
	return false;
}

/*
 * The symbols of kernel callchain entry ip.  Return addresses are looked
 * up one byte back, inside the call.  Exact addresses are not: the first
 * entry and the one after an interrupt entry.  A call is never in the
 * padding before a function (the __pfx_ symbols of kernels built with
 * function padding), so an entry that would land there is an address
 * interrupted at a function's first byte and is looked up as it is.
 */
static const struct sym_loc *resolve_kernel_addr(struct resolve *r,
						 uint64_t ip, bool exact)
{
	const struct sym_loc *loc;

	if (exact)
		return symbolize_kernel(&r->sym, ip);
	loc = symbolize_kernel(&r->sym, ip - 1);
	if (resolve_name_starts(loc, "__pfx_"))
		return symbolize_kernel(&r->sym, ip);
	return loc;
}

/* The pending location of kernel frames; NULL when out of memory. */
static const struct sym_loc *resolve_kernel_pending(struct resolve *r)
{
	struct sym_loc *l;

	if (r->kernel_pending)
		return r->kernel_pending;
	l = arena_alloc(&r->pending_arena, sizeof(*l));
	if (!l)
		return NULL;
	l->module = "[kernel.kallsyms]";
	l->kind = SYM_PENDING;
	r->kernel_pending = l;
	return l;
}

/*
 * Appends the recorded callchain's entries of one context (kernel or
 * user); returns the number appended or -1.  later: kernel entries get
 * the pending location, named by resolve_name_sample().
 */
static int resolve_callchain(struct resolve *r, const struct event *ev,
			     const struct aspace_maps *maps, bool kernel,
			     bool later, uint32_t *nr)
{
	const struct event_sample *s = &ev->sample;
	const struct sym_loc *loc = NULL;
	uint64_t ctx = 0, i;
	int n = 0;

	for (i = 0; i < s->callchain_nr; i++) {
		uint64_t ip = s->callchain[i];

		if (ip >= EVENT_CONTEXT_MAX) {
			ctx = ip;
			continue;
		}
		if (kernel ? ctx != EVENT_CONTEXT_KERNEL :
			     ctx != EVENT_CONTEXT_USER)
			continue;
		/* The first entry of a context is exact, the rest are
		 * return addresses (but see resolve_kernel_addr()). */
		if (kernel && later)
			loc = resolve_kernel_pending(r);
		else if (kernel)
			loc = resolve_kernel_addr(r, ip, n == 0 ||
						  resolve_is_irq_entry(loc));
		else
			loc = resolve_user_addr(r, ev, maps,
						n == 0 ? ip : ip - 1, ip);
		if (resolve_push(r, nr, ip, kernel ? FRAME_KERNEL :
					   n == 0 ? FRAME_SAMPLE :
						    FRAME_CALLCHAIN,
				 loc) < 0)
			return -1;
		n++;
	}
	return n;
}

/* Functions that are the outermost frame of a thread. */
static bool resolve_is_root(const struct sym_loc *loc)
{
	static const char *const roots[] = {
		"_start", "__libc_start_main", "start_thread", "clone",
		"clone3", "__clone", "__clone3", "thread_start",
		"_dl_start_user",
	};
	const char *name = loc && loc->nr ? loc->e[loc->nr - 1].name : NULL;
	size_t i;

	if (!name)
		return false;
	if (gopclntab_kind_of(name) == GOPCLNTAB_ROOT)
		return true;
	for (i = 0; i < ARRAY_SIZE(roots); i++)
		if (!strcmp(name, roots[i]))
			return true;
	return false;
}

/*
 * Whether a walk that read a zero return address in the function at loc
 * reached the thread's end: in its first function, or in Go's
 * runtime.clone, where a new thread runs on a stack still empty before
 * it calls runtime.mstart.  Elsewhere the zero is a word read where no
 * return address was.
 */
static bool resolve_is_zero_ra_root(const struct sym_loc *loc)
{
	const char *name = loc && loc->nr ? loc->e[loc->nr - 1].name : NULL;

	return resolve_is_root(loc) ||
	       (name && (!strcmp(name, "runtime.clone") ||
			 !strcmp(name, "runtime.clone.abi0")));
}

/*
 * Whether a walk that ended so (end, stitched or not) in the function at
 * last, its outermost user frame, reached its thread's root: a walk that
 * stops in a thread's first function is done, unless it ran out of
 * copied stack there (the first function's caller, clone3 for
 * start_thread, may be beyond the copy) or the root caches ended it.
 */
static bool resolve_ends_at_root(enum end_reason end,
				 const struct sym_loc *last)
{
	return end != END_ROOT && end != END_WINDOW && end != END_NO_COPY &&
	       end != END_AMBIGUOUS && resolve_is_root(last);
}

/*
 * A frame named later (resolve_opts.defer_names): a SYM_PENDING location
 * right after this, one per module and address.
 */
struct resolve_pending {
	struct module *mod;
	const char *map_path;
	uint64_t rel;
	const struct sym_loc *real;   /* once named */
};

static struct resolve_pending *resolve_pending_of(const struct sym_loc *l)
{
	return (struct resolve_pending *)((char *)(uintptr_t)l -
					  sizeof(struct resolve_pending));
}

/* The pending location of f; NULL when out of memory. */
static const struct sym_loc *resolve_pending_loc(struct resolve *r,
						 const struct stitch_frame *f)
{
	uint64_t key = hashmap_mix(f->rel ^ (uint64_t)(uintptr_t)f->mod *
						    0x9e3779b97f4a7c15ULL);
	struct resolve_pending *p;
	struct sym_loc *l;
	size_t i;
	void *v;

	if (hashmap_get(&r->pending, key, &v)) {
		p = resolve_pending_of(v);
		if (p->mod == f->mod && p->rel == f->rel)
			return v;
	}
	p = arena_alloc(&r->pending_arena, sizeof(*p) + sizeof(*l));
	if (!p)
		return NULL;
	l = (struct sym_loc *)(p + 1);
	p->mod = f->mod;
	p->map_path = f->map_path;
	p->rel = f->rel;
	l->module = f->map_path;
	l->rel = f->rel;
	l->kind = SYM_PENDING;
	if (hashmap_put(&r->pending, key, l) < 0)
		return NULL;
	for (i = 0; i < r->nr_pending_mods; i++)
		if (r->pending_mods[i] == f->mod)
			return l;
	if (mem_grow(&r->pending_mods, &r->alloc_pending_mods,
		     sizeof(*r->pending_mods), i + 1) < 0)
		return NULL;
	r->pending_mods[r->nr_pending_mods++] = f->mod;
	return l;
}

bool resolve_names_wait(struct resolve *r)
{
	size_t i;

	if (r->kernel_pending && symbolize_kernel_would_wait(&r->sym))
		return true;
	for (i = 0; i < r->nr_pending_mods; i++)
		if (a2l_would_wait(r->pending_mods[i]))
			return true;
	return false;
}

int resolve_name_sample(struct resolve *r, struct rsample *s)
{
	const struct sym_loc *last = NULL, *loc = NULL;
	bool kernel = s->nr_kernel && s->frames[0].loc == r->kernel_pending;
	uint32_t i;

	/* resolve_callchain()'s names, in its order */
	for (i = 0; kernel && i < s->nr_kernel; i++) {
		loc = resolve_kernel_addr(r, s->frames[i].pc,
					  i == 0 || resolve_is_irq_entry(loc));
		if (!loc)
			return -1;
		s->frames[i].loc = loc;
	}
	for (i = s->nr_kernel; i < s->nr_frames; i++) {
		struct rframe *f = &s->frames[i];
		struct resolve_pending *p;

		if (!f->loc || f->loc->kind != SYM_PENDING)
			continue;
		p = resolve_pending_of(f->loc);
		if (!p->real)
			p->real = symbolize_user(&r->sym, p->mod, p->map_path,
						 p->rel);
		if (!p->real)
			return -1;
		f->loc = p->real;
		if (i == s->nr_frames - 1)
			last = p->real;
	}
	/* resolve_unwound()'s last test, which a pending name failed */
	if (last && resolve_ends_at_root(s->end, last)) {
		r->stats.end[s->end]--;
		r->stats.end[END_ROOT]++;
		s->end = END_ROOT;
	}
	return 0;
}

/*
 * The location of frame f; with may_defer, a pending one when naming it
 * would wait (resolve_opts.defer_names).
 */
static const struct sym_loc *resolve_frame_loc(struct resolve *r,
					       const struct event *ev,
					       const struct stitch_frame *f,
					       bool may_defer)
{
	const struct sym_loc *jl, *l;
	struct resolve_loc_slot *s;

	if (!f->mod || f->mod->is_jit) {
		jl = resolve_jit(r, ev->pid, f->addr, ev->time);
		if (jl)
			return jl;
	}
	if (!f->map_path)
		return symbolize_unmapped(&r->sym);
	if (!f->mod)
		return symbolize_user(&r->sym, f->mod, f->map_path, f->rel);
	s = &r->locs[(size_t)(((f->rel ^ (uintptr_t)f->mod) *
			       0x9e3779b97f4a7c15ULL) >> 52) %
		     RESOLVE_LOC_SLOTS];
	if (s->mod != f->mod || s->rel != f->rel) {
		if (may_defer && r->opts.defer_names &&
		    symbolize_user_would_wait(&r->sym, f->mod, f->rel))
			return resolve_pending_loc(r, f);
		l = symbolize_user(&r->sym, f->mod, f->map_path, f->rel);
		if (!l)
			return NULL;
		s->mod = f->mod;
		s->rel = f->rel;
		s->loc = l;
	}
	return s->loc;
}

static void resolve_copy_frames(const struct unwind_result *ur,
				struct stitch_frame *sf)
{
	unsigned i;

	for (i = 0; i < ur->nr; i++) {
		sf[i].pc = ur->frames[i].pc;
		sf[i].sp = ur->frames[i].sp;
		sf[i].mod = ur->frames[i].mod;
		sf[i].map_path = ur->frames[i].map_path;
		sf[i].addr = ur->frames[i].addr;
		sf[i].rel = ur->frames[i].rel;
		sf[i].jit = !sf[i].mod || sf[i].mod->is_jit;
	}
}

/*
 * --validate-stitch: emulate a shorter stack copy on a sample whose copy
 * held its whole stack (keep the bytes up to its middle frame's sp),
 * unwind again, stitch from the caches as they would be without this
 * sample (stitcher_complete() never takes a caller only it showed), and
 * classify the result against the whole walk: exact (the whole stack, to
 * the root), honest (a leaf-side part of it, marked truncated) or wrong.
 * r->sf holds the complete walk's nr frames.
 */
static void resolve_validate(struct resolve *r, uint64_t key,
			     const struct aspace_maps *maps,
			     const struct event_sample *s, unsigned nr)
{
	struct event_sample cut = *s;
	struct unwind_result ur;
	struct stitch_walk w = { 0 };
	struct stitch_result res;
	uint64_t window;
	unsigned n, i, total;
	bool part;

	window = (r->sf[nr / 2].sp - r->sf[0].sp) & ~7ull;
	if (nr < 6 || !window || window >= s->stack_dyn_size)
		return;
	cut.stack_size = cut.stack_dyn_size = window;
	unwind_sample(&r->uw, maps, &cut, &ur);
	if (ur.end != END_WINDOW || ur.nr >= nr)
		return;
	r->stats.validate_tried++;
	resolve_copy_frames(&ur, r->sf2);
	w.f = r->sf2;
	w.nr = ur.nr;
	w.outer_cfa = ur.end_cfa;
	w.live_only = r->pass == RESOLVE_SINGLE;
	w.self = r->sf;
	w.nr_self = nr;
	w.self_rooted = true;
	n = stitcher_complete(r->st, key, r->tseq, &w, r->sf2 + ur.nr,
			      r->uw.opts.max_frames * 2 - ur.nr, &res);
	total = ur.nr + n;
	part = total <= nr;
	for (i = 0; part && i < total; i++)
		part = r->sf2[i].pc == r->sf[i].pc &&
		       r->sf2[i].sp == r->sf[i].sp;
	r->stats.validate_stitched += n > 0;
	r->stats.validate_ambiguous += res.ambiguous;
	if (res.rooted ? part && total == nr : false)
		r->stats.validate_exact++;
	else if (!res.rooted && part)
		r->stats.validate_honest++;
	else
		r->stats.validate_wrong++;
}

/* The unwinder's hook for JIT code: CFI from the process's jitdump. */
struct resolve_jit_ctx {
	struct resolve *r;
	int32_t pid;
	uint64_t time;
};

static struct module *resolve_jit_cfi(void *ctx, uint64_t addr)
{
	struct resolve_jit_ctx *c = ctx;
	struct jit_sym *js = jit_lookup(&c->r->jit, c->pid, addr, c->time);

	return js ? jit_cfi_module(&c->r->jit, js) : NULL;
}

/* Per-module counts for `restack stats`, once per sample handed out. */
static void resolve_count_modules(const struct unwind_result *ur)
{
	unsigned i;

	for (i = 0; i < ur->nr; i++) {
		const struct unwind_frame *f = &ur->frames[i];
		/* JIT code counts for its perf map module */
		struct module *m = f->mod && !f->mod->is_jit ? f->mod :
								f->map_mod;

		if (!m)
			continue;
		m->frames++;
		if (i == 0)
			m->samples++;
	}
	if (ur->end == END_NO_CFI && ur->end_mod)
		ur->end_mod->no_cfi++;
}

/* Remembers sample r->seq, ev, for the RETRY pass. */
static int resolve_defer(struct resolve *r, const struct event *ev)
{
	struct resolve_deferred *d;

	if (mem_grow(&r->deferred, &r->alloc_deferred, sizeof(*r->deferred),
		     r->nr_deferred + 1) < 0)
		return -1;
	d = &r->deferred[r->nr_deferred++];
	d->order = ev->order;
	d->file_off = ev->compressed ? UINT64_MAX : ev->file_off;
	d->time = ev->time;
	d->tid = ev->tid;
	d->seq = r->seq;
	d->tseq = r->tseq;
	return 0;
}

bool resolve_deferred_at(const struct resolve *r, uint64_t order)
{
	size_t lo = 0, hi = r->nr_deferred;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->deferred[mid].order < order)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < r->nr_deferred && r->deferred[lo].order == order;
}

void resolve_retry_by_order(struct resolve *r)
{
	r->retry_by_order = true;
}

bool resolve_retry_by_offset(struct resolve *r)
{
	size_t i;

	for (i = 0; i < r->nr_deferred; i++)
		if (r->deferred[i].file_off == UINT64_MAX)
			return false;
	r->retry_by_order = true;
	r->retry_by_offset = true;
	return true;
}

/*
 * The user part from the copied stack: unwind, stitch, name.  Sets
 * *deferred (and hands out nothing) when a FIRST pass leaves the sample
 * for the RETRY pass.
 */
static int resolve_unwound(struct resolve *r, const struct event *ev,
			   const struct aspace_maps *maps, uint32_t *nr,
			   struct rsample *out, bool *deferred)
{
	const struct event_sample *s = &ev->sample;
	uint64_t key = resolve_thread_key(r, ev->tid);
	struct resolve_jit_ctx jc = { r, ev->pid, ev->time };
	struct unwind_result ur;
	struct stitch_result res = { 0 };
	unsigned i, n = 0;

	r->uw.jit = resolve_jit_cfi;
	r->uw.jit_ctx = &jc;
	unwind_sample(&r->uw, maps, s, &ur);
	resolve_copy_frames(&ur, r->sf);
	if (ur.end == END_ROOT && ur.zero_ra && ur.nr &&
	    !resolve_is_zero_ra_root(
		    resolve_frame_loc(r, ev, &r->sf[ur.nr - 1], false))) {
		/* a word read where the return address was not */
		ur.end = END_BAD_RA;
		ur.end_addr = 0;
	}
	if (r->pass == RESOLVE_PRESCAN)
		return r->st ? stitcher_observe(r->st, key, r->tseq, r->sf,
						ur.nr, ur.end) :
			       0;
	if (ur.end == END_WINDOW && r->st) {
		struct stitch_walk w = { 0 };

		/*
		 * A caller is taken only where no sample showed another, so
		 * a FIRST pass leaves every cut walk to the RETRY pass, when
		 * the caches know every sample.  A single pass (a pipe)
		 * knows only the samples before: it never follows the
		 * caller of a frame they showed popped.
		 */
		if (r->pass == RESOLVE_FIRST) {
			*deferred = true;
			if (resolve_defer(r, ev) < 0)
				return -1;
			return stitcher_observe(r->st, key, r->tseq, r->sf,
						ur.nr, ur.end);
		}
		w.f = r->sf;
		w.nr = ur.nr;
		w.outer_cfa = ur.end_cfa;
		w.live_only = r->pass == RESOLVE_SINGLE;
		n = stitcher_complete(r->st, key, r->tseq, &w, r->sf + ur.nr,
				      r->uw.opts.max_frames * 2 - ur.nr, &res);
	}
	out->end = ur.end;
	if (s->stack_size && s->stack_dyn_size == s->stack_size)
		r->stats.truncated++;
	resolve_count_modules(&ur);
	for (i = 0; i < ur.nr; i++) {
		const struct unwind_frame *f = &ur.frames[i];

		if (resolve_push(r, nr, f->pc, f->origin,
				 resolve_frame_loc(r, ev, &r->sf[i], true)) < 0)
			return -1;
	}
	if (ur.end == END_WINDOW)
		r->stats.window_ends++;
	for (i = 0; i < n; i++)
		if (resolve_push(r, nr, r->sf[ur.nr + i].pc, FRAME_STITCHED,
				 resolve_frame_loc(r, ev, &r->sf[ur.nr + i],
						   true)) < 0)
			return -1;
	if (n) {
		r->stats.stitched++;
		r->stats.stitched_rooted += res.rooted;
		r->stats.stitched_stale += res.stale;
		r->stats.stitched_joined += res.joined;
	}
	if (res.rooted)
		out->end = END_ROOT;
	else if (res.ambiguous)
		out->end = END_AMBIGUOUS;
	/* (out->end is ur.end but where stitching, after END_WINDOW, set it) */
	if (*nr > out->nr_kernel &&
	    resolve_ends_at_root(out->end, r->frames[*nr - 1].loc))
		out->end = END_ROOT;
	if (!r->st)
		return 0;
	if (r->opts.validate_stitch && ur.end == END_ROOT)
		resolve_validate(r, key, maps, s, ur.nr);
	return stitcher_observe(r->st, key, r->tseq, r->sf, ur.nr, ur.end);
}

static int resolve_sample(struct resolve *r, const struct event *ev,
			  struct rsample *out)
{
	const struct event_sample *s = &ev->sample;
	struct aspace_thread *t;
	struct aspace_maps *maps;
	bool deferred = false;
	uint64_t order = ev->order;
	uint32_t nr = 0, i;
	int n;

	r->mc->sample_no++;     /* for the loader's count (modload.h) */
	if (r->pass == RESOLVE_RETRY && r->retry_by_order) {
		/*
		 * The deferred samples alone, with their numbers.  Another
		 * sample at a deferred one's order is not taken for it: the
		 * ones left unmet then fail the run (resolve_nr_unretried()).
		 */
		const struct resolve_deferred *d;

		if (r->next_deferred >= r->nr_deferred)
			return 0;
		d = &r->deferred[r->next_deferred];
		if ((r->retry_by_offset ? d->file_off != ev->file_off ||
					  ev->compressed :
					  d->order != ev->order) ||
		    d->time != ev->time || d->tid != ev->tid)
			return 0;
		order = d->order;
		r->next_deferred++;
		r->seq = d->seq;
		r->tseq = d->tseq;
	} else {
		r->seq++;
		if (resolve_count_thread(r, ev->tid) < 0)
			return -1;
		if (r->pass == RESOLVE_RETRY) {
			if (r->next_deferred >= r->nr_deferred ||
			    r->deferred[r->next_deferred].seq != r->seq)
				return 0;
			r->next_deferred++;
		}
	}
	t = aspace_thread(&r->as, ev->pid, ev->tid);
	maps = aspace_proc_maps(&r->as, ev->pid);
	if (!t || !maps)
		return -1;
	if (r->pass == RESOLVE_PRESCAN) {
		if (s->regs_user_abi && s->regs_user_nr &&
		    resolve_unwound(r, ev, maps, &nr, out, &deferred) < 0)
			return -1;
		return 0;
	}
	memset(out, 0, sizeof(*out));
	out->pid = ev->pid;
	out->tid = ev->tid;
	out->comm = t->comm;
	out->time = ev->time;
	out->order = order;
	out->cpu = ev->cpu;
	out->period = s->period;
	out->attr = ev->attr ? ev->attr->index : 0;
	out->event = ev->attr && ev->attr->name ? ev->attr->name : "?";

	/* Kernel part: the recorded callchain, or the sampled ip. */
	if (!r->opts.no_kernel) {
		bool later = r->opts.defer_names &&
			     symbolize_kernel_would_wait(&r->sym);

		n = resolve_callchain(r, ev, maps, true, later, &nr);
		if (n < 0)
			return -1;
		if (n == 0 && s->cpumode == EVENT_MODE_KERNEL &&
		    s->callchain_nr == 0 &&
		    resolve_push(r, &nr, s->ip, FRAME_KERNEL,
				 later ? resolve_kernel_pending(r) :
					 symbolize_kernel(&r->sym, s->ip)) < 0)
			return -1;
	}
	out->nr_kernel = nr;

	/* User part: unwind the stack copy, else the recorded chain. */
	if (s->regs_user_abi && s->regs_user_nr) {
		if (resolve_unwound(r, ev, maps, &nr, out, &deferred) < 0)
			return -1;
		if (deferred)
			return 0;   /* counted when retried */
	} else {
		n = resolve_callchain(r, ev, maps, false, false, &nr);
		if (n < 0)
			return -1;
		out->end = n > 0 ? END_CALLCHAIN : END_NO_USER;
		if (n == 0 && s->cpumode == EVENT_MODE_USER &&
		    resolve_push(r, &nr, s->ip, FRAME_SAMPLE,
				 resolve_user_addr(r, ev, maps, s->ip,
						   s->ip)) < 0)
			return -1;
		if (n > 0 && resolve_is_root(r->frames[nr - 1].loc))
			out->end = END_ROOT;
	}
	if (nr == out->nr_kernel)
		r->stats.kernel_only++;
	out->nr_frames = nr;
	out->frames = r->frames;
	for (i = 0; i < nr; i++)
		r->stats.frames[r->frames[i].origin]++;
	r->stats.samples++;
	r->stats.end[out->end]++;
	return 1;
}

int resolve_event(struct resolve *r, const struct event *ev,
		  struct rsample *out)
{
	switch (ev->type) {
	case EVENT_SAMPLE:
		return resolve_sample(r, ev, out);
	case EVENT_BUILD_ID:
		return modcache_note_build_id(r->mc, ev->build_id.filename,
					      ev->build_id.build_id,
					      ev->build_id.build_id_size);
	case EVENT_EXIT:
		if (resolve_end_life(r, ev->tid) < 0)
			return -1;
		break;
	case EVENT_COMM:
		if (ev->comm.exec && resolve_end_life(r, ev->tid) < 0)
			return -1;
		break;
	case EVENT_MMAP:
		if (jit_note_mmap(&r->jit, ev->pid, ev->mmap.filename) < 0)
			return -1;
		break;
	case EVENT_JIT:
		if (ev->jit.bundled)
			return symbundle_add(&r->bundle, ev->pid,
					     ev->jit.start, ev->jit.len,
					     ev->jit.name) < 0 ? -1 : 0;
		return jit_add_symbol(&r->jit, ev->pid, ev->jit.start,
				      ev->jit.len, ev->jit.name) < 0 ? -1 : 0;
	default:
		break;
	}
	return aspace_event(&r->as, ev) < 0 ? -1 : 0;
}

/*
 * dst's module for src's module m: the same path and the same build-id from
 * the capture (a build-id learned from the file is not part of the
 * identity), created when dst never met it.  NULL when out of memory.
 */
static struct module *resolve_same_module(struct modcache *mc,
					  const struct module *m)
{
	uint8_t size = m->build_id_learned ? 0 : m->build_id_size;
	struct module *d;

	for (d = mc->all; d; d = d->next) {
		uint8_t dsize = d->build_id_learned ? 0 : d->build_id_size;

		if (dsize == size && !memcmp(d->build_id, m->build_id, size) &&
		    !strcmp(d->path, m->path))
			return d;
	}
	return modcache_get(mc, m->path, m->build_id, size, 0, 0);
}

int resolve_add_counts(struct resolve *dst, struct resolve *src)
{
	const uint64_t *a = (const uint64_t *)&src->stats;
	uint64_t *b = (uint64_t *)&dst->stats;
	const struct module *m;
	size_t i;

	for (i = 0; i < sizeof(dst->stats) / sizeof(uint64_t); i++)
		b[i] += a[i];
	if (dst->st && src->st)
		stitcher_add_counters(dst->st, src->st);
	if (src->sym.kallsyms_tried && !dst->sym.kallsyms_tried) {
		dst->sym.kallsyms_tried = true;
		dst->sym.kallsyms = src->sym.kallsyms;
		if (!src->sym.shared)
			src->sym.kallsyms = NULL;   /* dst owns it now */
		else if (!dst->sym.shared)
			dst->sym.shared = src->sym.shared;
	}
	for (m = src->mc->all; m; m = m->next) {
		struct module *d;

		if (m->status == MODULE_PENDING)
			continue;
		d = resolve_same_module(dst->mc, m);
		if (!d)
			return -1;
		if (d->status == MODULE_PENDING)
			module_load(dst->mc, d);
		d->samples += m->samples;
		d->frames += m->frames;
		d->no_cfi += m->no_cfi;
		d->no_sym += m->no_sym;
		d->reused |= m->reused;
	}
	return 0;
}
