/*
 * cfi.h - DWARF call frame information, compiled once per row and
 * evaluated by restack over a sample's stack copy.
 *
 * libdw (dwarf_cfi_addrframe) finds the row for an address in .eh_frame or
 * .debug_frame; cfi.c turns it into a struct cfi_row (CFA rule plus the
 * rules of the registers the row changes) and keeps it, so an address, or
 * any address in a row's range, is never looked up in libdw twice.
 */
#ifndef RESTACK_UNWIND_CFI_H
#define RESTACK_UNWIND_CFI_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "unwind/regs.h"

struct module;
struct cfi_cache;

enum cfi_source {
	CFI_SRC_NONE,
	CFI_SRC_EH,     /* .eh_frame */
	CFI_SRC_DEBUG,  /* .debug_frame */
};

enum cfi_rule_kind {
	CFI_SAME,       /* caller's value = this frame's */
	CFI_UNDEF,      /* cannot be recovered (RA: outermost frame) */
	CFI_OFFSET,     /* saved at CFA + off */
	CFI_VAL_OFFSET, /* value is CFA + off */
	CFI_REGISTER,   /* value is in register off */
	CFI_EXPR,       /* saved at the address the expression yields */
	CFI_VAL_EXPR,   /* value is what the expression yields */
};

struct cfi_expr;

struct cfi_rule {
	uint8_t reg;
	uint8_t kind;           /* enum cfi_rule_kind */
	int64_t off;
	const struct cfi_expr *expr;
};

struct cfi_row {
	uint64_t start, end;    /* [start, end) module addresses it covers */
	uint8_t source;         /* enum cfi_source */
	uint8_t cfa_reg;        /* CFA = reg + off, unless cfa_expr */
	bool signal;            /* a signal frame: caller pc is exact */
	uint8_t ra;             /* return-address column */
	uint8_t nr;             /* rules[] entries */
	bool ra_undef;          /* the RA's rule is CFI_UNDEF: outermost */
	uint8_t nr_live;        /* live[] entries */
	int64_t cfa_off;
	const struct cfi_expr *cfa_expr;
	uint64_t undef_mask;    /* registers other than the RA with CFI_UNDEF */
	/*
	 * Every live rule CFI_OFFSET or CFI_VAL_OFFSET (the usual row):
	 * cfi_apply() reads the saved words from the stack copy at once
	 * when [CFA + off_lo, CFA + off_hi) lies in it; live_mask has the
	 * rules' registers.
	 */
	bool offsets_only;
	bool ra_live;           /* ... and the RA is one of them */
	int64_t off_lo, off_hi;
	uint64_t live_mask;
	const struct cfi_rule *live; /* the other rules (in rules[] order),
				      * in the same allocation */
	struct cfi_rule rules[];
};

/*
 * Memory the evaluator may read: the stack copy, then module files.  Words
 * inside [lo, hi) are read from stack directly; others through read().
 */
struct cfi_mem {
	bool (*read)(void *ctx, uint64_t addr, uint64_t *val);
	void *ctx;
	const uint8_t *stack;   /* may be NULL (lo == hi) */
	uint64_t lo, hi;
};

enum cfi_step {
	CFI_STEP_OK,
	CFI_STEP_ROOT,          /* the return address is undefined */
	CFI_STEP_READ_FAIL,     /* a read failed; *fail_addr says where */
	CFI_STEP_BAD,           /* the rule needs a register we lack, or an
				 * expression we cannot evaluate */
};

/*
 * The compiled row covering module address rel, or NULL when neither
 * .eh_frame nor .debug_frame covers it (or the module has no CFI).
 * The row lives as long as the module.
 */
const struct cfi_row *cfi_find(struct module *m, const struct regs_arch *a,
			       uint64_t rel);

/* Opens m's .eh_frame and .debug_frame, which cfi_find() does on first
 * use, ahead (unwind/modload.h). */
void cfi_prepare(struct module *m);

/*
 * Computes the caller's registers from this frame's: *cfa receives the
 * CFA (the caller's sp), out the caller's register file with the return
 * address in a->pc (regs_strip_ra()).  Where the RA column is a register
 * (aarch64's x30) and the row keeps its value, its value in "in" is the
 * return address.
 */
enum cfi_step cfi_apply_row(const struct regs_arch *a,
			    const struct cfi_row *row, const struct regs *in,
			    struct regs *out, uint64_t *cfa,
			    const struct cfi_mem *mem, uint64_t *fail_addr);

/*
 * cfi_apply_row(), with the usual case inline: a row of register saves
 * (offsets_only, the RA among them) whose saved words all lie in the
 * stack copy, applied without a call or a rule-by-rule switch (always
 * inlined: gcc would not, for its two callers).
 */
static inline __attribute__((always_inline)) enum cfi_step
cfi_apply(const struct regs_arch *a, const struct cfi_row *row,
	  const struct regs *in, struct regs *out, uint64_t *cfa,
	  const struct cfi_mem *mem, uint64_t *fail_addr)
{
	uint64_t c, lo, hi;
	const uint8_t *at;
	unsigned i;

	if (!row->offsets_only || !row->ra_live || row->cfa_expr ||
	    row->ra_undef || !regs_has(in, row->cfa_reg))
		return cfi_apply_row(a, row, in, out, cfa, mem, fail_addr);
	c = in->r[row->cfa_reg] + (uint64_t)row->cfa_off;
	lo = c + (uint64_t)row->off_lo;
	hi = c + (uint64_t)row->off_hi;
	if (lo < mem->lo || hi > mem->hi || lo >= hi)
		return cfi_apply_row(a, row, in, out, cfa, mem, fail_addr);
	*cfa = c;
	/* registers the row does not mention keep their values */
	regs_copy(out, in);
	out->valid &= ~((1ull << a->pc) | row->undef_mask);
	at = mem->stack + (c - mem->lo);
	for (i = 0; i < row->nr_live; i++) {
		const struct cfi_rule *r = &row->live[i];

		if (r->kind == CFI_OFFSET)
			memcpy(&out->r[r->reg], at + r->off, 8);
		else
			out->r[r->reg] = c + (uint64_t)r->off;
	}
	out->valid |= row->live_mask;
	regs_set(out, a->sp, c);
	regs_set(out, a->pc, regs_strip_ra(a, out->r[row->ra]));
	return CFI_STEP_OK;
}

void cfi_cache_free(struct cfi_cache *c);

/* Counters for statistics: libdw lookups, and hits in the row cache. */
struct cfi_counters {
	uint64_t libdw_lookups;
	uint64_t cache_hits;
	uint64_t rows;
};
void cfi_cache_counters(const struct cfi_cache *c, struct cfi_counters *out);

#endif
