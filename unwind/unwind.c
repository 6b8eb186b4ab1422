/*
 * unwind.c - the per-sample stack walk.
 *
 * Strategy per frame (shared/reference/stitching-jit.md section 7.2):
 * module CFI (.eh_frame, then .debug_frame) or a jitdump's CFI, evaluated
 * by cfi_apply(); where none covers the pc, the PLT rule for stubs, a
 * validated frame-pointer step (7.3), then a bounded, validated stack
 * scan; else stop.  Every frame records how it was found; every walk ends
 * with one reason (7.4).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/unwind.h"

#include "common/base.h"
#include "common/mem.h"
#include "unwind/a64insn.h"
#include "unwind/aspace.h"
#include "unwind/cfi.h"
#include "unwind/ehhdr.h"
#include "unwind/gopclntab.h"
#include "unwind/locate.h"
#include "unwind/module.h"
#include "unwind/symtab.h"
#include "unwind/x86insn.h"

static void PRINTF_LIKE(2, 3) uw_trace_line(struct unwinder *u,
					    const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	u->trace(u->trace_ctx, line);
}

/* A trace line, its arguments evaluated only when tracing. */
#define uw_trace(u, ...)                                \
	do {                                            \
		if ((u)->trace)                         \
			uw_trace_line((u), __VA_ARGS__); \
	} while (0)

/* One trace line with the row's register rules ("r6=u": undefined). */
static void uw_trace_rules(struct unwinder *u, const struct cfi_row *row)
{
	static const char kinds[] = "suoOrEe";  /* enum cfi_rule_kind order */
	char line[400];
	size_t n = 0;
	unsigned i;

	for (i = 0; i < row->nr && n + 32 < sizeof(line); i++) {
		const struct cfi_rule *r = &row->rules[i];

		n += (size_t)snprintf(line + n, sizeof(line) - n, " r%u=%c%+lld",
				      r->reg,
				      r->kind < sizeof(kinds) - 1 ?
					      kinds[r->kind] : '?',
				      (long long)r->off);
	}
	line[n] = '\0';
	uw_trace(u, "  rules:%s", line);
}

/*
 * A frame's module address and CFI row by the module and file offset of
 * its pc (both fixed once the module is loaded): the same code addresses
 * come back sample after sample, and this spares their lookups.
 */
#define UW_PC_SLOTS 1024u
/*
 * Stack bytes fetched ahead of the walk, above each frame's CFA: the
 * frames a few calls out.  The copy sits in pages of the file no core
 * has touched, and loading the saved registers was a fifth of xz's
 * conversion (bench, 8 KiB copies); 512 bytes ahead took it 4% faster,
 * 256 3%, 1024 4% slower; shallow stacks (the large capture) unchanged.
 */
#define UW_PREFETCH_AHEAD 512u

struct uw_pc_slot {
	const struct module *mod;      /* NULL: empty */
	uint64_t off;
	uint64_t rel;
	const struct cfi_row *row;
};

int unwinder_init(struct unwinder *u, const struct regs_arch *arch,
		  struct modcache *mc, const struct unwind_opts *opts)
{
	memset(u, 0, sizeof(*u));
	u->arch = arch;
	u->mc = mc;
	if (opts)
		u->opts = *opts;
	if (!u->opts.max_frames)
		u->opts.max_frames = UNWIND_MAX_FRAMES_DEFAULT;
	u->frames = mem_zalloc(u->opts.max_frames, sizeof(*u->frames));
	u->pcs = mem_zalloc(UW_PC_SLOTS, sizeof(*u->pcs));
	return u->frames && u->pcs ? 0 : -1;
}

void unwinder_release(struct unwinder *u)
{
	free(u->frames);
	free(u->pcs);
	u->frames = NULL;
	u->pcs = NULL;
}

/* What a walk may read: the stack copy, then module files. */
struct uw_mem {
	const uint8_t *stack;
	uint64_t lo, hi;               /* [lo, hi) is the copied window */
	uint64_t asked_hi;             /* lo + the size perf asked for */
	bool full;                     /* the window was filled: truncated */
	const struct aspace_maps *maps;
	struct modcache *mc;
};

/* A read outside the stack copy (cfi_read() serves those inside it). */
static bool uw_read(void *ctx, uint64_t addr, uint64_t *val)
{
	struct uw_mem *m = ctx;
	const struct aspace_map *map;
	uint64_t vaddr;

	map = aspace_maps_find(m->maps, addr);
	if (!map || !module_load(m->mc, map->mod) ||
	    !module_offset_to_vaddr(map->mod, addr - map->start + map->pgoff,
				    &vaddr))
		return false;
	return module_read(map->mod, vaddr, val, 8);
}

/* What the CFI evaluator reads for a walk over mem. */
static struct cfi_mem uw_cfi_mem(struct uw_mem *mem)
{
	return (struct cfi_mem){ uw_read, mem, mem->stack, mem->lo, mem->hi };
}

/* Why a read at addr failed. */
static enum end_reason uw_read_failure(const struct uw_mem *m, uint64_t addr)
{
	if (addr >= m->lo && m->full)
		return END_WINDOW;
	/*
	 * The kernel stops copying at the first page it cannot read without
	 * faulting: one not yet in memory (a sample in that page's own
	 * fault, a big frame never touched), or past the stack's top.  An
	 * empty copy is never the top: sp's own page could not be read.
	 */
	if (addr >= m->hi && (m->hi == m->lo || addr < m->asked_hi))
		return END_NO_COPY;
	return END_BAD_STACK;
}

/* A validated frame-pointer step (section 7.3 of stitching-jit.md). */
static bool uw_fp_step(struct unwinder *u, const struct uw_mem *mem,
		       const struct regs *in, struct regs *out,
		       enum end_reason *why)
{
	const struct regs_arch *a = u->arch;
	uint64_t fp, saved_fp, ra, sp, w = a->word;
	const struct aspace_map *map;

	*why = END_NO_CFI;
	if (!regs_has(in, a->fp) || !regs_has(in, a->sp))
		return false;
	fp = in->r[a->fp];
	sp = in->r[a->sp];
	if (fp == 0 || (fp & (w - 1)) || fp < sp)
		return false;
	if (fp + 2 * w > mem->hi) {
		if (mem->full && fp >= mem->lo)
			*why = END_WINDOW;
		return false;
	}
	memcpy(&saved_fp, mem->stack + (fp - mem->lo), 8);
	memcpy(&ra, mem->stack + (fp + w - mem->lo), 8);
	ra = regs_strip_ra(a, ra);
	if (saved_fp != 0 && saved_fp <= fp)
		return false;
	/* The return address must be code: any executable mapping, JIT
	 * code in anonymous memory included. */
	map = aspace_maps_find(mem->maps, ra - 1);
	if (!map)
		return false;
	*out = *in;
	out->valid = 0;
	regs_set(out, a->fp, saved_fp);
	regs_set(out, a->sp, fp + 2 * w);
	regs_set(out, a->pc, ra);
	return true;
}

/*
 * A step whose return address is the word at slot of the copied stack:
 * out is in with sp just above that word and pc the address.  False when
 * the word is not in the copy (*why END_WINDOW when the copy was full and
 * ran out) or is no code address (a damaged table, a stale word: let the
 * frame pointer try).
 */
static bool uw_return_at(struct unwinder *u, const struct uw_mem *mem,
			 uint64_t slot, const struct regs *in,
			 struct regs *out, enum end_reason *why)
{
	const struct regs_arch *a = u->arch;
	uint64_t ra;

	if (slot < mem->lo || slot + 8 > mem->hi) {
		if (mem->full && slot >= mem->lo)
			*why = END_WINDOW;
		return false;
	}
	memcpy(&ra, mem->stack + (slot - mem->lo), 8);
	ra = regs_strip_ra(a, ra);
	if (ra && !aspace_maps_find(mem->maps, ra - 1))
		return false;
	*out = *in;
	regs_set(out, a->sp, slot + 8);
	regs_set(out, a->pc, ra);
	return true;
}

/*
 * A step by a Go function table's SP delta (gopclntab.h) where no CFI
 * covers f: on x86-64 the return address sits right above the bytes the
 * function pushed, the caller's sp right above it.  A return address
 * outside every code mapping is refused (the frame-pointer step, which
 * comes next, may do better).  Go saves the caller's
 * frame pointer in the word below the return address and points rbp
 * there; a function that has not (yet), a leaf without a frame, keeps
 * the caller's.
 */
static bool uw_go_step(struct unwinder *u, const struct uw_mem *mem,
		       const struct unwind_frame *f, const struct regs *in,
		       struct regs *out, enum end_reason *why)
{
	const struct regs_arch *a = u->arch;
	const struct gopclntab *t;
	struct gopclntab_func fn;
	uint64_t sp, slot, fp;
	int32_t delta;

	if (a->arch != EVENT_ARCH_X86_64 || !f->mod || f->mod->is_jit ||
	    !(t = gopclntab_load(f->mod)) ||
	    !gopclntab_find(t, f->rel, &fn) ||
	    !gopclntab_spdelta(t, &fn, f->rel, &delta) || delta < 0 ||
	    (delta & 7))
		return false;
	sp = in->r[a->sp];
	slot = sp + (uint64_t)delta;
	if (slot < sp || !uw_return_at(u, mem, slot, in, out, why))
		return false;
	if (delta >= 8 && regs_has(in, a->fp) && in->r[a->fp] == slot - 8) {
		memcpy(&fp, mem->stack + (slot - 8 - mem->lo), 8);
		regs_set(out, a->fp, fp);
	}
	return true;
}

/*
 * The PLT rule on aarch64: a stub leaves sp and x30 alone, but for the
 * header's store of x30 (a64insn.h).  x30 is only known in the sampled
 * frame, the only one a stub can be in (stubs make no calls).
 */
static bool uw_a64_plt_step(struct unwinder *u, const struct uw_mem *mem,
			    struct module *m, const struct module_plt *plt,
			    uint64_t rel, const struct regs *in,
			    struct regs *out, enum end_reason *why)
{
	const struct regs_arch *a = u->arch;
	uint8_t header[A64INSN_PLT_HEADER], insn[4];
	int saved;

	if (!module_read(m, plt->lo, header, sizeof(header)) ||
	    !module_read(m, rel, insn, sizeof(insn)))
		return false;
	saved = a64insn_plt_saved(header, a64insn_word(insn), rel - plt->lo);
	if (saved > 0) {
		if (!uw_return_at(u, mem, in->r[a->sp] + 8, in, out, why))
			return false;
		regs_set(out, a->sp, in->r[a->sp] + 16);
		return true;
	}
	if (saved < 0 || !regs_has(in, a->ra))
		return false;
	*out = *in;
	regs_set(out, a->pc, regs_strip_ra(a, in->r[a->ra]));
	return true;
}

/* The PLT rule: pc (module m, ELF address rel) lies in a PLT entry, which
 * has pushed a known number of words on top of its return address. */
static bool uw_plt_step(struct unwinder *u, const struct uw_mem *mem,
			struct module *m, uint64_t rel, const struct regs *in,
			struct regs *out, enum end_reason *why)
{
	const struct regs_arch *a = u->arch;
	const struct module_plt *plt;
	uint8_t code[32];
	uint64_t entry, sp, slot;
	size_t len;
	int pushed;

	if (!m || m->is_jit || !(plt = module_plt_find(m, rel)))
		return false;
	if (a->arch == EVENT_ARCH_AARCH64)
		return uw_a64_plt_step(u, mem, m, plt, rel, in, out, why);
	if (a->arch != EVENT_ARCH_X86_64)
		return false;
	entry = plt->lo + (rel - plt->lo) / plt->entsize * plt->entsize;
	len = plt->hi - entry < sizeof(code) ? plt->hi - entry : sizeof(code);
	if (plt->entsize > len || !module_read(m, entry, code, len))
		return false;
	pushed = x86insn_plt_pushed(code, len, rel - entry);
	if (pushed < 0)
		return false;
	sp = in->r[a->sp];
	slot = sp + (uint64_t)pushed;
	return uw_return_at(u, mem, slot, in, out, why);
}

/* True when addr looks like a return address: in a file-backed code
 * mapping, right after a call instruction (x86_64's CALL, aarch64's BL
 * and BLR forms). */
static bool uw_is_return_address(struct unwinder *u,
				 const struct aspace_maps *maps, uint64_t addr)
{
	const struct aspace_map *map = aspace_maps_find(maps, addr - 1);
	uint8_t before[X86INSN_CALL_MAX];
	uint64_t rel;
	int32_t rel32;
	bool direct;

	if (u->arch->arch == EVENT_ARCH_AARCH64) {
		if (!map || (addr & 3) || !module_load(u->mc, map->mod) ||
		    map->mod->status == MODULE_NO_FILE ||
		    !module_offset_to_vaddr(map->mod,
					    addr - map->start + map->pgoff,
					    &rel) ||
		    rel < 4 || !module_read(map->mod, rel - 4, before, 4))
			return false;
		return a64insn_is_call(a64insn_word(before));
	}
	if (!map || addr < 4096 || !module_load(u->mc, map->mod) ||
	    map->mod->status == MODULE_NO_FILE ||
	    !module_offset_to_vaddr(map->mod, addr - map->start + map->pgoff,
				    &rel) ||
	    rel < sizeof(before) ||
	    !module_read(map->mod, rel - sizeof(before), before,
			 sizeof(before)))
		return false;
	return x86insn_call_before(before, sizeof(before), &direct, &rel32);
}

/*
 * Whether return address ra (in map) lies in the function of frame f, by
 * the module's symbols; true when either has none (nothing to tell).
 */
static bool uw_same_function(struct unwinder *u,
			     const struct aspace_maps *maps,
			     const struct unwind_frame *f, uint64_t ra)
{
	const struct aspace_map *map = aspace_maps_find(maps, ra - 1);
	const struct symtab_sym *a, *b;
	const struct symtab *t;
	uint64_t rel;

	if (!map || map->mod != f->mod)
		return false;
	if (!f->mod || !module_load(u->mc, f->mod) ||
	    !module_offset_to_vaddr(f->mod, ra - 1 - map->start + map->pgoff,
				    &rel) ||
	    !(t = symtab_load(f->mod)))
		return true;
	a = symtab_lookup(t, f->rel);
	b = symtab_lookup(t, rel);
	return !a || !b || a->start == b->start;
}

/*
 * Whether the function of frame f set x29 to a frame record of its own
 * before f's pc (a64insn_sets_fp() between the function's symbol and the
 * pc); -1 when its symbol or code is unknown.
 */
static int uw_a64_set_fp(struct unwinder *u, const struct unwind_frame *f)
{
	const struct symtab_sym *sym;
	const struct symtab *t;
	uint8_t code[4 * 256];
	uint64_t at, len;

	if (!f->mod || f->mod->is_jit || !module_load(u->mc, f->mod) ||
	    !(t = symtab_load(f->mod)) || !(sym = symtab_lookup(t, f->rel)) ||
	    f->rel < sym->start || f->rel - sym->start > sizeof(code))
		return -1;
	len = (f->rel - sym->start) & ~3ull;
	if (len && !module_read(f->mod, sym->start, code, len))
		return -1;
	for (at = 0; at < len; at += 4)
		if (a64insn_sets_fp(a64insn_word(code + at)))
			return 1;
	return 0;
}

/*
 * aarch64's sampled frame without CFI: a leaf (GCC omits leaves' frame
 * records) or a function before its prologue has its caller in x30, and
 * x29 still points at its caller's record, whose return address is one
 * frame further.  x30 is taken when it is a return address (after a BL
 * or BLR) outside the function (one that made a call has x30 pointing
 * into itself), and the function has not set x29 to a record of its own
 * (its code up to the pc; where that is unknown, when x29's record holds
 * another return address).
 */
static bool uw_a64_lr_step(struct unwinder *u, const struct aspace_maps *maps,
			   const struct uw_mem *mem,
			   const struct unwind_frame *f, const struct regs *in,
			   struct regs *out)
{
	const struct regs_arch *a = u->arch;
	uint64_t lr, fp, rec;
	int own;

	if (a->arch != EVENT_ARCH_AARCH64 || !regs_has(in, a->ra))
		return false;
	lr = regs_strip_ra(a, in->r[a->ra]);
	if (!uw_is_return_address(u, maps, lr) ||
	    uw_same_function(u, maps, f, lr))
		return false;
	own = uw_a64_set_fp(u, f);
	if (own > 0)
		return false;
	if (own < 0 && regs_has(in, a->fp)) {
		fp = in->r[a->fp];
		if (!(fp & 7) && fp >= mem->lo && fp + 16 <= mem->hi) {
			memcpy(&rec, mem->stack + (fp + 8 - mem->lo), 8);
			if (regs_strip_ra(a, rec) == lr)
				return false;
		}
	}
	*out = *in;
	regs_set(out, a->pc, lr);
	return true;
}

/*
 * V8's unwinding info (jitdump, --perf-prof) claims rbp saved at CFA - 16
 * from a function's first instruction on, before the push.  A save slot
 * below the frame's stack pointer cannot hold a saved value yet, so the
 * register still has the caller's value.
 */
static void uw_jit_fp_fixup(const struct regs_arch *a,
			    const struct cfi_row *row, uint64_t cfa,
			    const struct regs *cur, struct regs *next)
{
	unsigned i;

	if (regs_has(next, a->fp) || !regs_has(cur, a->fp))
		return;
	for (i = 0; i < row->nr; i++) {
		const struct cfi_rule *r = &row->rules[i];

		if (r->reg == a->fp && r->kind == CFI_OFFSET &&
		    cfa + (uint64_t)r->off < cur->r[a->sp])
			regs_set(next, a->fp, cur->r[a->fp]);
	}
}

/*
 * Fills frame f for pc, whose mapping (looked up at lookup_pc) is map;
 * the caller has looked it up.
 */
static void uw_locate_in(struct unwinder *u, const struct aspace_map *map,
			 struct unwind_frame *f, uint64_t pc,
			 uint64_t lookup_pc)
{

	f->pc = pc;
	f->addr = lookup_pc;
	f->mod = NULL;
	f->map_mod = map ? map->mod : NULL;
	f->map_path = NULL;
	f->rel = lookup_pc;
	if (!map || map->mod->status == MODULE_NO_FILE) {
		/* JIT code: CFI from a jitdump, when there is some */
		struct module *jm = u->jit ? u->jit(u->jit_ctx, lookup_pc) :
					     NULL;

		if (jm) {
			f->mod = jm;
			f->map_path = jm->path;
			return;
		}
	}
	if (!map)
		return;
	f->map_path = map->mod->path;
	if (!module_load(u->mc, map->mod) ||
	    !module_offset_to_vaddr(map->mod,
				    lookup_pc - map->start + map->pgoff,
				    &f->rel)) {
		f->rel = lookup_pc - map->start + map->pgoff;
		return;
	}
	f->mod = map->mod;
}

/*
 * uw_locate_in(), then the frame's CFI row (NULL: none), remembered by
 * module and file offset for a frame in its mapping's module.
 */
static const struct cfi_row *uw_locate_row(struct unwinder *u,
					   const struct aspace_map *map,
					   struct unwind_frame *f, uint64_t pc,
					   uint64_t lookup_pc)
{
	const struct cfi_row *row;
	struct uw_pc_slot *s;
	uint64_t off;

	if (!map || map->mod->status == MODULE_NO_FILE) {
		uw_locate_in(u, map, f, pc, lookup_pc);
		return f->mod ? cfi_find(f->mod, u->arch, f->rel) : NULL;
	}
	off = lookup_pc - map->start + map->pgoff;
	s = &u->pcs[(size_t)(((off ^ (uintptr_t)map->mod) *
			      0x9e3779b97f4a7c15ULL) >> 54) %
		    UW_PC_SLOTS];
	if (s->mod == map->mod && s->off == off) {
		f->pc = pc;
		f->addr = lookup_pc;
		f->mod = map->mod;
		f->map_mod = map->mod;
		f->map_path = map->mod->path;
		f->rel = s->rel;
		return s->row;
	}
	uw_locate_in(u, map, f, pc, lookup_pc);
	row = f->mod ? cfi_find(f->mod, u->arch, f->rel) : NULL;
	if (f->mod == map->mod) {
		s->mod = map->mod;
		s->off = off;
		s->rel = f->rel;
		s->row = row;
	}
	return row;
}

/* Whether frame f is in JIT code: anonymous executable memory. */
static bool uw_is_jit_code(const struct unwind_frame *f)
{
	return f->map_mod && locate_is_perf_map(f->map_mod->path);
}

/*
 * Why a walk stopped at frame f, which has no module: JIT code has no file
 * to find but lacks unwinding information; a module may be loading still
 * (unwind/modload.h); others were not found.
 */
static enum end_reason uw_no_module_reason(const struct unwind_frame *f)
{
	if (uw_is_jit_code(f))
		return END_NO_CFI;
	if (f->map_mod && f->map_mod->status == MODULE_LOADING)
		return END_MODULE_LOADING;
	return END_NO_MODULE;
}

/* Fills frame f for pc; the mapping is looked up at lookup_pc. */
static void uw_locate(struct unwinder *u, const struct aspace_maps *maps,
		      struct unwind_frame *f, uint64_t pc, uint64_t lookup_pc)
{
	uw_locate_in(u, aspace_maps_find(maps, lookup_pc), f, pc, lookup_pc);
}

/*
 * The two-frame confirmation of a scan candidate: one more step from it,
 * by CFI or a validated frame pointer, must reach the root or another
 * return address above it.
 */
static bool uw_scan_confirm(struct unwinder *u, const struct aspace_maps *maps,
			    struct uw_mem *mem, const struct regs *cand)
{
	const struct regs_arch *a = u->arch;
	struct cfi_mem cmem = uw_cfi_mem(mem);
	struct unwind_frame f;
	const struct cfi_row *row;
	struct regs next;
	enum end_reason why;
	uint64_t cfa, fa;

	uw_locate(u, maps, &f, cand->r[a->pc], cand->r[a->pc] - 1);
	row = f.mod ? cfi_find(f.mod, a, f.rel) : NULL;
	if (row) {
		enum cfi_step st = cfi_apply(a, row, cand, &next, &cfa, &cmem,
					     &fa);

		if (st == CFI_STEP_ROOT)
			return true;
		if (st != CFI_STEP_OK)
			return false;
	} else if (u->opts.no_fp || !uw_fp_step(u, mem, cand, &next, &why)) {
		return false;
	}
	return next.r[a->pc] == 0 ||
	       (regs_has(&next, a->sp) && next.r[a->sp] > cand->r[a->sp] &&
		uw_is_return_address(u, maps, next.r[a->pc]));
}

/*
 * A bounded stack scan (section 7.2, step 6): the first word above sp that
 * is a return address after a CALL and whose own frame checks out.  The
 * frame pointer is recovered as Breakpad does: the word below the slot
 * when the callee's rbp pointed there, else the callee's rbp if it still
 * lies above the new sp.
 */
static bool uw_scan_step(struct unwinder *u, const struct aspace_maps *maps,
			 struct uw_mem *mem, const struct regs *in,
			 struct regs *out, bool leaf)
{
	const struct regs_arch *a = u->arch;
	unsigned words = leaf ? UNWIND_SCAN_WORDS_LEAF : UNWIND_SCAN_WORDS, i;
	uint64_t sp = in->r[a->sp];

	if ((a->arch != EVENT_ARCH_X86_64 && a->arch != EVENT_ARCH_AARCH64) ||
	    sp < mem->lo)
		return false;
	for (i = 0; i < words; i++) {
		uint64_t slot = sp + 8ull * i, cand, fp;
		struct regs trial;

		if (slot + 8 > mem->hi)
			break;
		memcpy(&cand, mem->stack + (slot - mem->lo), 8);
		cand = regs_strip_ra(a, cand);
		if (!uw_is_return_address(u, maps, cand))
			continue;
		trial = *in;
		if (a->ra != a->pc)    /* aarch64's x30: the callee's */
			trial.valid &= ~(1ull << a->ra);
		regs_set(&trial, a->sp, slot + 8);
		regs_set(&trial, a->pc, cand);
		if (regs_has(in, a->fp) && in->r[a->fp] == slot - 8 &&
		    slot - 8 >= mem->lo) {
			memcpy(&fp, mem->stack + (slot - 8 - mem->lo), 8);
			regs_set(&trial, a->fp, fp);
		} else if (!regs_has(in, a->fp) || in->r[a->fp] < slot + 8) {
			trial.valid &= ~(1ull << a->fp);
		}
		uw_trace(u, "  scan: candidate %#llx at sp+%u",
			 (unsigned long long)cand, 8 * i);
		if (uw_scan_confirm(u, maps, mem, &trial)) {
			*out = trial;
			return true;
		}
	}
	return false;
}

/*
 * The row for a sampled pc no CFI covers that directly follows a SYSCALL
 * instruction (0f 05; aarch64's SVC #0): a sample taken in a system call
 * has the next instruction as its pc, and where the call ends the
 * function's CFI (rt_sigreturn in __restore_rt, which never returns) that
 * pc lies past the function.  The thread is still at the SYSCALL: its
 * row holds.
 */
static const struct cfi_row *uw_after_syscall_row(struct unwinder *u,
						  struct module *m,
						  uint64_t rel)
{
	uint8_t insn[4];

	if (u->arch->arch == EVENT_ARCH_AARCH64) {
		if (m->is_jit || rel < 4 || !module_read(m, rel - 4, insn, 4) ||
		    !a64insn_is_svc(a64insn_word(insn)))
			return NULL;
		return cfi_find(m, u->arch, rel - 4);
	}
	if (u->arch->arch != EVENT_ARCH_X86_64 || m->is_jit || rel < 2 ||
	    !module_read(m, rel - 2, insn, 2) ||
	    insn[0] != 0x0f || insn[1] != 0x05)
		return NULL;
	return cfi_find(m, u->arch, rel - 2);
}

/*
 * Whether module address rel, which no CFI covers, is in the code the
 * module's entry point begins when no CFI covers that either: the
 * dynamic linker's _start and _dl_start_user, the outermost frame of a
 * process whose walk reaches them (nothing called them).
 */
static bool uw_entry_code(struct unwinder *u, struct module *m, uint64_t rel)
{
	return m && !m->is_jit && m->entry &&
	       !cfi_find(m, u->arch, m->entry) &&
	       ehhdr_same_gap(m, rel, m->entry);
}

/*
 * Where no CFI covers frame f: the PLT rule, a frame-pointer step, a scan.
 * Returns the origin of the caller frame, or -1 with *why set.
 */
static int uw_recover(struct unwinder *u, const struct aspace_maps *maps,
		      struct uw_mem *mem, const struct unwind_frame *f,
		      const struct regs *cur, struct regs *next, bool leaf,
		      unsigned *scans, enum end_reason *why)
{
	*why = END_NO_CFI;
	if (uw_plt_step(u, mem, f->mod, f->rel, cur, next, why)) {
		u->stub_steps++;
		return FRAME_STUB;
	}
	if (*why == END_WINDOW)
		return -1;
	if (uw_go_step(u, mem, f, cur, next, why)) {
		u->go_steps++;
		return FRAME_GOPCLNTAB;
	}
	if (*why == END_WINDOW)
		return -1;
	if (!u->opts.no_fp) {
		if (leaf && uw_a64_lr_step(u, maps, mem, f, cur, next)) {
			u->fp_steps++;
			return FRAME_FP;
		}
		if (uw_fp_step(u, mem, cur, next, why)) {
			u->fp_steps++;
			return FRAME_FP;
		}
		u->fp_rejected++;
		if (*why == END_WINDOW)
			return -1;
	}
	if (*scans < u->opts.max_scan && f->mod && !f->mod->is_jit) {
		if (uw_scan_step(u, maps, mem, cur, next, leaf)) {
			(*scans)++;
			u->scan_steps++;
			return FRAME_SCAN;
		}
		u->scan_rejected++;
	}
	return -1;
}

/*
 * Go functions that end a walk (gopclntab.h): a goroutine's or thread's
 * first function is the root; a function that switched stacks has its
 * callers on the stack it left, which the copy does not hold: what lies
 * above it on this stack is a stale word (0 on a thread's g0 stack, or a
 * return address an earlier call left), never its caller.
 */
static bool uw_go_special(struct unwinder *u, const struct unwind_frame *f,
			  struct unwind_result *res)
{
	if (f->mod->gopcln_tried && !f->mod->gopcln)
		return false;   /* not Go: the usual case, without a call */
	switch (gopclntab_kind_at(f->mod, f->rel)) {
	case GOPCLNTAB_ROOT:
		res->end = END_ROOT;
		return true;
	case GOPCLNTAB_SWITCH:
		uw_trace(u, "  Go stack switch");
		res->end = END_STACK_SWITCH;
		res->end_mod = f->mod;
		res->end_addr = f->pc;
		return true;
	default:
		return false;
	}
}

void unwind_sample(struct unwinder *u, const struct aspace_maps *maps,
		   const struct event_sample *s, struct unwind_result *res)
{
	const struct regs_arch *a = u->arch;
	struct regs rb[2], *cur = &rb[0], *next = &rb[1], *tmp;
	const struct aspace_map *map;
	struct uw_mem mem;
	struct cfi_mem cmem;
	bool activation = true;
	bool sp_guessed = false;
	unsigned nr = 0, scans = 0;

	memset(res, 0, sizeof(*res));
	res->frames = u->frames;
	res->end = END_NO_USER;
	if (!a || s->regs_user_abi == 0 || !s->regs_user_nr ||
	    regs_from_perf(a, s->regs_user_mask, s->regs_user,
			   s->regs_user_nr, cur) < 0 ||
	    !regs_has(cur, a->pc) || !regs_has(cur, a->sp))
		return;
	mem.stack = s->stack;
	mem.lo = cur->r[a->sp];
	mem.hi = mem.lo + (s->stack ? s->stack_dyn_size : 0);
	mem.asked_hi = mem.lo + (s->stack ? s->stack_size : 0);
	mem.full = s->stack_size && s->stack_dyn_size == s->stack_size;
	mem.maps = maps;
	mem.mc = u->mc;
	cmem = uw_cfi_mem(&mem);
	memset(next, 0, sizeof(*next));
	map = aspace_maps_find(maps, cur->r[a->pc]);

	for (;;) {
		struct unwind_frame *f = &u->frames[nr];
		uint64_t pc = cur->r[a->pc], sp = cur->r[a->sp], cfa = 0, fa = 0;
		uint64_t at;
		const struct cfi_row *row = NULL;
		enum end_reason why;

		row = uw_locate_row(u, map, f, pc, activation ? pc : pc - 1);
		f->sp = sp;
		f->origin = nr == 0 ? FRAME_SAMPLE : f->origin;
		nr++;
		if (!row && f->mod && nr == 1)
			row = uw_after_syscall_row(u, f->mod, f->rel);
		/*
		 * After a frame-pointer or scan step on aarch64 the caller's
		 * sp is only known to lie above the frame record (compilers
		 * put it at the bottom of the frame): a CFA computed from sp
		 * would be wrong, so the walk goes on by the x29 chain.  A
		 * row that ends the walk (RA undefined: _start) still does.
		 */
		if (row && sp_guessed && !row->ra_undef &&
		    (row->cfa_expr || row->cfa_reg == a->sp)) {
			uw_trace(u, "  sp unknown after a frame-pointer step");
			row = NULL;
		}
		uw_trace(u, "frame %u pc=%#llx sp=%#llx %s rel=%#llx row=%s",
			 nr - 1, (unsigned long long)pc,
			 (unsigned long long)sp,
			 f->map_path ? f->map_path : "(no mapping)",
			 (unsigned long long)f->rel,
			 !f->mod ? "no module" : row ? "cfi" : "none");
		if (row)
			uw_trace(u, "  row [%#llx,%#llx) cfa=r%u%+lld%s ra=r%u rules=%u",
				 (unsigned long long)row->start,
				 (unsigned long long)row->end, row->cfa_reg,
				 (long long)row->cfa_off,
				 row->cfa_expr ? " (expr)" : "", row->ra, row->nr);
		if (row && u->trace)
			uw_trace_rules(u, row);
		if (nr >= u->opts.max_frames) {
			res->end = END_MAX_DEPTH;
			break;
		}
		if (f->mod && !f->mod->is_jit && uw_go_special(u, f, res))
			break;
		if (row) {
			enum cfi_step st = cfi_apply(a, row, cur, next, &cfa,
						     &cmem, &fa);

			if (cfa >= mem.lo && cfa + UW_PREFETCH_AHEAD < mem.hi)
				__builtin_prefetch(mem.stack + (cfa - mem.lo) +
						   UW_PREFETCH_AHEAD);

			if (st == CFI_STEP_ROOT) {
				res->end = END_ROOT;
				break;
			}
			if (st == CFI_STEP_READ_FAIL) {
				res->end = uw_read_failure(&mem, fa);
				res->end_addr = fa;
				if (res->end == END_WINDOW && cfa > sp)
					res->end_cfa = cfa;
				break;
			}
			if (st != CFI_STEP_OK)
				uw_trace(u, "  cfi step %d, failed read at %#llx",
					 (int)st, (unsigned long long)fa);
			if (st == CFI_STEP_BAD) {
				u->cfi_rows_bad++;
				res->end = END_NO_CFI;
				res->end_mod = f->mod->is_jit ? f->map_mod :
								f->mod;
				res->end_addr = pc;
				break;
			}
			if (f->mod->is_jit)
				uw_jit_fp_fixup(a, row, cfa, cur, next);
			u->frames[nr].origin = f->mod->is_jit ? FRAME_JIT :
					       row->source == CFI_SRC_EH ?
						       FRAME_CFI_EH :
						       FRAME_CFI_DEBUG;
			/* A signal frame's caller pc is exact. */
			activation = row->signal;
			sp_guessed = false;
		} else if (uw_entry_code(u, f->mod, f->rel)) {
			res->end = END_ROOT;
			break;
		} else {
			int origin = uw_recover(u, maps, &mem, f, cur, next,
						nr == 1, &scans, &why);

			if (origin < 0) {
				/*
				 * No file behind the code: say so, but JIT
				 * code (anonymous memory) has no file to
				 * find; it lacks unwinding information.
				 */
				if (!f->mod && why != END_WINDOW)
					why = uw_no_module_reason(f);
				res->end = why;
				res->end_mod = f->mod && !f->mod->is_jit ?
						       f->mod :
						       f->map_mod;
				res->end_addr = pc;
				break;
			}
			u->frames[nr].origin = (uint8_t)origin;
			activation = false;
			sp_guessed = a->arch == EVENT_ARCH_AARCH64 &&
				     (origin == FRAME_FP ||
				      origin == FRAME_SCAN);
		}
		/*
		 * aarch64's x30 in a caller is the return address into it
		 * (or unknown): never its own return address.  Only a
		 * signal frame's caller, interrupted anywhere, has its own.
		 */
		if (a->ra != a->pc && !activation)
			next->valid &= ~(1ull << a->ra);
		if (next->r[a->pc] == 0) {
			res->end = END_ROOT;   /* a zero return address */
			res->zero_ra = true;
			break;
		}
		/*
		 * The stack pointer grows toward the root; only a leaf that
		 * popped its return address (vfork keeps it in a register)
		 * has its caller at the same sp.
		 */
		if (!regs_has(next, a->sp) || next->r[a->sp] < sp ||
		    (next->r[a->sp] == sp &&
		     (nr != 1 || next->r[a->pc] == pc))) {
			res->end = next->r[a->sp] == sp &&
						   next->r[a->pc] == pc ?
					   END_LOOP :
					   END_BAD_STACK;
			break;
		}
		uw_trace(u, "  -> pc=%#llx sp=%#llx",
			 (unsigned long long)next->r[a->pc],
			 (unsigned long long)next->r[a->sp]);
		/* the caller's mapping, which its frame starts from (most
		 * often this frame's) */
		at = activation ? next->r[a->pc] : next->r[a->pc] - 1;
		if (!map || at < map->start || at >= map->end)
			map = aspace_maps_find(maps, at);
		if (!map) {
			res->end = END_BAD_RA;
			res->end_addr = next->r[a->pc];
			break;
		}
		tmp = cur;
		cur = next;
		next = tmp;
	}
	res->nr = nr;
	uw_trace(u, "end: %s after %u frames (%#llx)", end_reason_name(res->end),
		 nr, (unsigned long long)res->end_addr);
}
