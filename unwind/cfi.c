/*
 * cfi.c - compile libdw CFI rows into struct cfi_row and evaluate them.
 *
 * libdw describes every register rule as a DWARF expression
 * (dwarf_frame_cfa, dwarf_frame_register); the common shapes (CFA = reg +
 * off, saved at CFA + n, value CFA + n, in register r) become plain rules,
 * anything else is kept as an expression and run by a small evaluator.
 * Expressions only read memory through struct cfi_mem: the sample's stack
 * copy and the module files, never this process.
 */
#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/cfi.h"

#include "common/arena.h"
#include "common/base.h"
#include "common/bsearch.h"
#include "common/hashmap.h"
#include "common/mem.h"
#include "unwind/ehframe.h"
#include "unwind/module.h"

struct cfi_expr {
	uint32_t n;
	Dwarf_Op ops[];
};

struct cfi_cache {
	struct hashmap by_pc;      /* module address -> row (or &cfi_none) */
	struct cfi_row **rows;     /* sorted by start, non-overlapping */
	size_t nr_rows, alloc_rows;
	struct arena arena;
	struct cfi_counters counters;
};

/* Marks "no CFI here" in by_pc. */
static const struct cfi_row cfi_none;

void cfi_cache_free(struct cfi_cache *c)
{
	if (!c)
		return;
	hashmap_release(&c->by_pc);
	free(c->rows);
	arena_release(&c->arena);
	free(c);
}

void cfi_cache_counters(const struct cfi_cache *c, struct cfi_counters *out)
{
	if (c)
		*out = c->counters;
	else
		memset(out, 0, sizeof(*out));
}

static const struct cfi_expr *cfi_copy_expr(struct cfi_cache *c,
					    const Dwarf_Op *ops, size_t n)
{
	struct cfi_expr *e = arena_alloc(&c->arena,
					 sizeof(*e) + n * sizeof(Dwarf_Op));

	if (!e)
		return NULL;
	e->n = (uint32_t)n;
	memcpy(e->ops, ops, n * sizeof(Dwarf_Op));
	return e;
}

static bool cfi_is_breg(const Dwarf_Op *op, uint8_t *reg, int64_t *off)
{
	if (op->atom >= DW_OP_breg0 && op->atom <= DW_OP_breg31) {
		*reg = (uint8_t)(op->atom - DW_OP_breg0);
		*off = (int64_t)op->number;
		return true;
	}
	if (op->atom == DW_OP_bregx && op->number < 256) {
		*reg = (uint8_t)op->number;
		*off = (int64_t)op->number2;
		return true;
	}
	return false;
}

/* Turns one register's description into a rule; false: same value. */
static bool cfi_compile_reg(struct cfi_cache *c, int reg, Dwarf_Op *mem,
			    Dwarf_Op *ops, size_t nops, struct cfi_rule *r)
{
	bool val = nops && ops[nops - 1].atom == DW_OP_stack_value;
	size_t n = val ? nops - 1 : nops;
	int64_t off;
	uint8_t breg;

	r->reg = (uint8_t)reg;
	r->off = 0;
	r->expr = NULL;
	if (nops == 0) {
		if (ops == NULL)
			return false;    /* same_value */
		r->kind = CFI_UNDEF;
		return true;
	}
	if (ops == mem) {
		/* DW_CFA_register: the caller's value is in another one */
		if (!val && n == 1 && ops[0].atom == DW_OP_regx) {
			r->kind = CFI_REGISTER;
			r->off = (int64_t)ops[0].number;
			return true;
		}
		if (n >= 1 && ops[0].atom == DW_OP_call_frame_cfa &&
		    (n == 1 || (n == 2 && ops[1].atom == DW_OP_plus_uconst))) {
			r->kind = val ? CFI_VAL_OFFSET : CFI_OFFSET;
			r->off = n == 2 ? (int64_t)ops[1].number : 0;
			return true;
		}
		if (val && n == 1 && cfi_is_breg(&ops[0], &breg, &off) &&
		    off == 0) {
			r->kind = CFI_REGISTER;
			r->off = breg;
			return true;
		}
	}
	r->kind = val ? CFI_VAL_EXPR : CFI_EXPR;
	r->expr = cfi_copy_expr(c, ops, n);
	if (!r->expr)
		r->kind = CFI_UNDEF;
	return true;
}

/*
 * elfutils' x86_64 ABI defaults (backends/x86_64_cfi.c, 0.188 and later)
 * name register 0 (%rax) where %rbx (3) is meant, so a register no CFI
 * instruction mentions comes back as undefined for %rbx and as the same
 * value for %rax.  The psABI has it the other way round: %rbx is
 * callee-saved, %rax is not.  Compilers never mark %rbx undefined
 * explicitly, so an undefined %rbx is taken as the same value; %rax gets
 * the undefined rule.  Without this, a caller whose CFA is %rbx-based
 * (functions that realign the stack, such as the dynamic linker's
 * _dl_runtime_resolve) cannot be stepped through.  Returns whether
 * *r is a rule, as cfi_compile_reg() does.
 */
static bool cfi_x86_64_abi(unsigned reg, bool is_rule, struct cfi_rule *r)
{
	if (reg == 3 && is_rule && r->kind == CFI_UNDEF)
		return false;
	if (reg == 0 && !is_rule) {
		r->reg = 0;
		r->kind = CFI_UNDEF;
		r->off = 0;
		r->expr = NULL;
		return true;
	}
	return is_rule;
}

/*
 * Whether every live rule of row saves its register at CFA + off or sets
 * it to CFA + off, and the span of the saved words (cfi_row.offsets_only).
 */
static void cfi_plan_offsets(struct cfi_row *row)
{
	unsigned i;

	row->offsets_only = row->nr_live > 0;
	row->ra_live = false;
	row->live_mask = 0;
	row->off_lo = INT64_MAX;
	row->off_hi = INT64_MIN;
	for (i = 0; i < row->nr_live; i++) {
		const struct cfi_rule *r = &row->live[i];

		if ((r->kind != CFI_OFFSET && r->kind != CFI_VAL_OFFSET) ||
		    r->reg >= REGS_MAX || r->off < -(1ll << 40) ||
		    r->off > (1ll << 40)) {
			row->offsets_only = false;
			return;
		}
		row->live_mask |= 1ull << r->reg;
		if (r->kind == CFI_VAL_OFFSET)
			continue;
		row->ra_live |= r->reg == row->ra;
		row->off_lo = MIN(row->off_lo, r->off);
		row->off_hi = MAX(row->off_hi, r->off + 8);
	}
}

static struct cfi_row *cfi_compile(struct cfi_cache *c,
				   const struct regs_arch *a,
				   Dwarf_Frame *frame, uint8_t source)
{
	struct cfi_rule rules[REGS_MAX];
	Dwarf_Addr start, end;
	Dwarf_Op mem[3], *ops;
	struct cfi_row *row;
	size_t nops;
	unsigned nr = 0, reg;
	bool signal = false, is_rule;
	int ra;

	ra = dwarf_frame_info(frame, &start, &end, &signal);
	if (ra < 0 || ra >= REGS_MAX)
		return NULL;
	if (dwarf_frame_cfa(frame, &ops, &nops) != 0 || nops == 0)
		return NULL;
	for (reg = 0; reg < a->nr; reg++) {
		if (reg == a->pc && a->pc != a->ra)
			continue;   /* not a DWARF register (aarch64 pc) */
		if (dwarf_frame_register(frame, (int)reg, mem, &ops, &nops))
			continue;
		is_rule = cfi_compile_reg(c, (int)reg, mem, ops, nops,
					  &rules[nr]);
		if (a->arch == EVENT_ARCH_X86_64)
			is_rule = cfi_x86_64_abi(reg, is_rule, &rules[nr]);
		if (is_rule)
			nr++;
	}
	/* rules[], then live[]: what cfi_apply() evaluates */
	row = arena_alloc(&c->arena, sizeof(*row) + 2 * nr * sizeof(rules[0]));
	if (!row)
		return NULL;
	row->start = start;
	row->end = end;
	row->source = source;
	row->signal = signal;
	row->ra = (uint8_t)ra;
	row->nr = (uint8_t)nr;
	memcpy(row->rules, rules, nr * sizeof(rules[0]));
	row->ra_undef = false;
	row->undef_mask = 0;
	row->nr_live = 0;
	row->live = row->rules + nr;
	for (reg = 0; reg < nr; reg++) {
		if (rules[reg].kind != CFI_UNDEF)
			row->rules[nr + row->nr_live++] = rules[reg];
		else if (rules[reg].reg == ra)
			row->ra_undef = true;
		else
			row->undef_mask |= 1ull << rules[reg].reg;
	}
	cfi_plan_offsets(row);
	/* The CFA, described again now that ops no longer alias mem. */
	dwarf_frame_cfa(frame, &ops, &nops);
	if (nops == 1 && cfi_is_breg(&ops[0], &row->cfa_reg, &row->cfa_off)) {
		row->cfa_expr = NULL;
	} else {
		row->cfa_expr = cfi_copy_expr(c, ops, nops);
		if (!row->cfa_expr)
			return NULL;
	}
	return row;
}

/* The module's .eh_frame names no absurd register (ehframe.h). */
static bool cfi_eh_frame_sane(struct module *m)
{
	GElf_Shdr sh;
	Elf_Scn *scn = module_elf_section(m->elf, ".eh_frame", &sh);
	Elf_Data *d;

	/* The check reads 64-bit, host-order data only. */
	if (!scn || sh.sh_type == SHT_NOBITS ||
	    gelf_getclass(m->elf) != ELFCLASS64 ||
	    !module_elf_host_order(m->elf))
		return true;
	d = elf_getdata(scn, NULL);
	if (!d || !d->d_buf)
		return true;
	if (ehframe_check(d->d_buf, d->d_size, EHFRAME_MAX_REG, false))
		return true;
	m->eh_frame_refused = true;
	return false;
}

static void cfi_open(struct module *m)
{
	GElf_Shdr sh;
	Dwarf *d;

	m->cfi_tried = true;
	if (m->elf && cfi_eh_frame_sane(m))
		m->eh_cfi = dwarf_getcfi_elf(m->elf);
	/* .debug_frame: the executable's own, else the debuginfo's. */
	if (module_elf_section(m->elf, ".debug_frame", &sh) &&
	    sh.sh_type != SHT_NOBITS) {
		d = module_dwarf(m, m->elf);
		if (d)
			m->debug_cfi = dwarf_getcfi(d);
	}
	if (!m->debug_cfi &&
	    module_elf_section(m->debug_elf, ".debug_frame", &sh) &&
	    sh.sh_type != SHT_NOBITS) {
		d = module_dwarf(m, m->debug_elf);
		if (d)
			m->debug_cfi = dwarf_getcfi(d);
	}
}

static int cfi_insert_row(struct cfi_cache *c, struct cfi_row *row)
{
	size_t lo = 0, hi = c->nr_rows;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (c->rows[mid]->start < row->start)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < c->nr_rows && c->rows[lo]->start == row->start)
		return 0;   /* same row seen through another address */
	if (mem_grow(&c->rows, &c->alloc_rows, sizeof(*c->rows),
		     c->nr_rows + 1) < 0)
		return -1;
	memmove(&c->rows[lo + 1], &c->rows[lo],
		(c->nr_rows - lo) * sizeof(*c->rows));
	c->rows[lo] = row;
	c->nr_rows++;
	c->counters.rows++;
	return 0;
}

/* rows holds pointers to the rows */
#define CFI_ROW_START(r) ((*(r))->start)
UPPER_BOUND_DEFINE(cfi_upper, struct cfi_row *, CFI_ROW_START)

static const struct cfi_row *cfi_range_lookup(const struct cfi_cache *c,
					      uint64_t rel)
{
	size_t lo = cfi_upper(c->rows, c->nr_rows, rel);

	if (lo == 0)
		return NULL;
	if (rel < c->rows[lo - 1]->end)
		return c->rows[lo - 1];
	return NULL;
}

void cfi_prepare(struct module *m)
{
	if (!m->cfi_tried)
		cfi_open(m);
}

const struct cfi_row *cfi_find(struct module *m, const struct regs_arch *a,
			       uint64_t rel)
{
	struct cfi_cache *c = m->cfi;
	const struct cfi_row *row;
	Dwarf_Frame *frame = NULL;
	struct cfi_row *nrow = NULL;
	void *v;

	if (!c) {
		c = mem_zalloc(1, sizeof(*c));
		if (!c)
			return NULL;
		m->cfi = c;
	}
	if (hashmap_get(&c->by_pc, rel, &v)) {
		c->counters.cache_hits++;
		return v == &cfi_none ? NULL : v;
	}
	row = cfi_range_lookup(c, rel);
	if (row) {
		c->counters.cache_hits++;
		(void)hashmap_put(&c->by_pc, rel, (void *)row);
		return row;
	}
	if (!m->cfi_tried)
		cfi_open(m);
	c->counters.libdw_lookups++;
	if (m->eh_cfi && dwarf_cfi_addrframe(m->eh_cfi, rel, &frame) == 0) {
		nrow = cfi_compile(c, a, frame, CFI_SRC_EH);
		free(frame);
	}
	if (!nrow && m->debug_cfi &&
	    dwarf_cfi_addrframe(m->debug_cfi, rel, &frame) == 0) {
		nrow = cfi_compile(c, a, frame, CFI_SRC_DEBUG);
		free(frame);
	}
	if (nrow && (rel < nrow->start || rel >= nrow->end))
		nrow = NULL;
	/*
	 * elfutils 0.188 reports a stale start after DW_CFA_restore_state
	 * (the start of the remembered row); the end is right.  Trust the
	 * range only from the address we asked for.
	 */
	if (nrow)
		nrow->start = rel;
	if (nrow && cfi_insert_row(c, nrow) < 0)
		nrow = NULL;
	(void)hashmap_put(&c->by_pc, rel, nrow ? (void *)nrow :
						(void *)&cfi_none);
	return nrow;
}

/* --- evaluation ---------------------------------------------------- */

/* Reads the word at addr; false when it cannot be read. */
static inline bool cfi_read(const struct cfi_mem *mem, uint64_t addr,
			    uint64_t *val)
{
	if (addr >= mem->lo && addr < mem->hi && mem->hi - addr >= 8) {
		memcpy(val, mem->stack + (addr - mem->lo), 8);
		return true;
	}
	return mem->read(mem->ctx, addr, val);
}

#define CFI_STACK_MAX 64

enum cfi_eval_rc { EVAL_OK, EVAL_READ_FAIL, EVAL_BAD };

static enum cfi_eval_rc cfi_eval(const struct cfi_expr *e,
				 const struct regs *in, const uint64_t *cfa,
				 const struct cfi_mem *mem, uint64_t *result,
				 uint64_t *fail_addr)
{
	uint64_t st[CFI_STACK_MAX];
	unsigned sp = 0, i;

#define PUSH(v)                                    \
	do {                                       \
		uint64_t pv_ = (v);                \
		if (sp >= CFI_STACK_MAX)           \
			return EVAL_BAD;           \
		st[sp++] = pv_;                    \
	} while (0)
#define NEED(k)                                    \
	do {                                       \
		if (sp < (k))                      \
			return EVAL_BAD;           \
	} while (0)

	for (i = 0; i < e->n; i++) {
		const Dwarf_Op *op = &e->ops[i];
		uint8_t reg;
		int64_t off;
		uint64_t a, b;

		if (cfi_is_breg(op, &reg, &off)) {
			if (!regs_has(in, reg))
				return EVAL_BAD;
			PUSH(in->r[reg] + (uint64_t)off);
			continue;
		}
		if (op->atom >= DW_OP_lit0 && op->atom <= DW_OP_lit31) {
			PUSH((uint64_t)(op->atom - DW_OP_lit0));
			continue;
		}
		switch (op->atom) {
		case DW_OP_call_frame_cfa:
			if (!cfa)
				return EVAL_BAD;
			PUSH(*cfa);
			break;
		case DW_OP_addr:
		case DW_OP_const1u: case DW_OP_const1s:
		case DW_OP_const2u: case DW_OP_const2s:
		case DW_OP_const4u: case DW_OP_const4s:
		case DW_OP_const8u: case DW_OP_const8s:
		case DW_OP_constu: case DW_OP_consts:
			PUSH(op->number);
			break;
		case DW_OP_plus_uconst:
			NEED(1);
			st[sp - 1] += op->number;
			break;
		case DW_OP_deref:
		case DW_OP_deref_size: {
			uint64_t v;
			unsigned size = op->atom == DW_OP_deref ?
						8 : (unsigned)op->number;

			NEED(1);
			if (size == 0 || size > 8)
				return EVAL_BAD;
			if (!cfi_read(mem, st[sp - 1], &v)) {
				*fail_addr = st[sp - 1];
				return EVAL_READ_FAIL;
			}
			if (size < 8)
				v &= (1ull << (8 * size)) - 1;
			st[sp - 1] = v;
			break;
		}
		case DW_OP_dup:
			NEED(1);
			PUSH(st[sp - 1]);
			break;
		case DW_OP_drop:
			NEED(1);
			sp--;
			break;
		case DW_OP_over:
			NEED(2);
			PUSH(st[sp - 2]);
			break;
		case DW_OP_pick:
			if (op->number >= sp)
				return EVAL_BAD;
			PUSH(st[sp - 1 - op->number]);
			break;
		case DW_OP_swap:
			NEED(2);
			a = st[sp - 1];
			st[sp - 1] = st[sp - 2];
			st[sp - 2] = a;
			break;
		case DW_OP_rot:
			NEED(3);
			a = st[sp - 1];
			st[sp - 1] = st[sp - 2];
			st[sp - 2] = st[sp - 3];
			st[sp - 3] = a;
			break;
		case DW_OP_neg:
			NEED(1);
			st[sp - 1] = -st[sp - 1];
			break;
		case DW_OP_not:
			NEED(1);
			st[sp - 1] = ~st[sp - 1];
			break;
		case DW_OP_abs:
			NEED(1);
			if ((int64_t)st[sp - 1] < 0)
				st[sp - 1] = -st[sp - 1];
			break;
		case DW_OP_nop:
			break;
		case DW_OP_plus: case DW_OP_minus: case DW_OP_mul:
		case DW_OP_and: case DW_OP_or: case DW_OP_xor:
		case DW_OP_shl: case DW_OP_shr: case DW_OP_shra:
		case DW_OP_div: case DW_OP_mod:
		case DW_OP_eq: case DW_OP_ne: case DW_OP_lt:
		case DW_OP_gt: case DW_OP_le: case DW_OP_ge:
			NEED(2);
			b = st[--sp];
			a = st[sp - 1];
			switch (op->atom) {
			case DW_OP_plus: a += b; break;
			case DW_OP_minus: a -= b; break;
			case DW_OP_mul: a *= b; break;
			case DW_OP_and: a &= b; break;
			case DW_OP_or: a |= b; break;
			case DW_OP_xor: a ^= b; break;
			case DW_OP_shl: a = b < 64 ? a << b : 0; break;
			case DW_OP_shr: a = b < 64 ? a >> b : 0; break;
			case DW_OP_shra:
				a = (uint64_t)((int64_t)a >> (b < 63 ? b : 63));
				break;
			case DW_OP_div:
				if (b == 0 || ((int64_t)b == -1 &&
					       a == (1ull << 63)))
					return EVAL_BAD;
				a = (uint64_t)((int64_t)a / (int64_t)b);
				break;
			case DW_OP_mod:
				if (b == 0)
					return EVAL_BAD;
				a %= b;
				break;
			case DW_OP_eq: a = a == b; break;
			case DW_OP_ne: a = a != b; break;
			case DW_OP_lt: a = (int64_t)a < (int64_t)b; break;
			case DW_OP_gt: a = (int64_t)a > (int64_t)b; break;
			case DW_OP_le: a = (int64_t)a <= (int64_t)b; break;
			case DW_OP_ge: a = (int64_t)a >= (int64_t)b; break;
			}
			st[sp - 1] = a;
			break;
		default:
			/* Branches, register locations, TLS, ...: no. */
			return EVAL_BAD;
		}
	}
#undef PUSH
#undef NEED
	if (sp == 0)
		return EVAL_BAD;
	*result = st[sp - 1];
	return EVAL_OK;
}

/* The caller's value of one register; false when it cannot be known. */
static enum cfi_eval_rc cfi_rule_value(const struct cfi_rule *r,
				       const struct regs *in, uint64_t cfa,
				       const struct cfi_mem *mem, uint64_t *val,
				       uint64_t *fail_addr)
{
	enum cfi_eval_rc rc;
	uint64_t addr;

	switch (r->kind) {
	case CFI_OFFSET:
		addr = cfa + (uint64_t)r->off;
		if (!cfi_read(mem, addr, val)) {
			*fail_addr = addr;
			return EVAL_READ_FAIL;
		}
		return EVAL_OK;
	case CFI_VAL_OFFSET:
		*val = cfa + (uint64_t)r->off;
		return EVAL_OK;
	case CFI_REGISTER:
		if (!regs_has(in, (unsigned)r->off))
			return EVAL_BAD;
		*val = in->r[r->off];
		return EVAL_OK;
	case CFI_EXPR:
		rc = cfi_eval(r->expr, in, &cfa, mem, &addr, fail_addr);
		if (rc != EVAL_OK)
			return rc;
		if (!cfi_read(mem, addr, val)) {
			*fail_addr = addr;
			return EVAL_READ_FAIL;
		}
		return EVAL_OK;
	case CFI_VAL_EXPR:
		return cfi_eval(r->expr, in, &cfa, mem, val, fail_addr);
	default:
		return EVAL_BAD;
	}
}

enum cfi_step cfi_apply_row(const struct regs_arch *a,
			    const struct cfi_row *row, const struct regs *in,
			    struct regs *out, uint64_t *cfa,
			    const struct cfi_mem *mem, uint64_t *fail_addr)
{
	bool ra_set = false;
	enum cfi_eval_rc rc;
	unsigned i;

	if (row->cfa_expr) {
		rc = cfi_eval(row->cfa_expr, in, NULL, mem, cfa, fail_addr);
		if (rc != EVAL_OK)
			return rc == EVAL_READ_FAIL ? CFI_STEP_READ_FAIL :
						      CFI_STEP_BAD;
	} else {
		if (!regs_has(in, row->cfa_reg))
			return CFI_STEP_BAD;
		*cfa = in->r[row->cfa_reg] + (uint64_t)row->cfa_off;
	}
	if (row->ra_undef)
		return CFI_STEP_ROOT;
	/* Registers the row does not mention keep their values. */
	regs_copy(out, in);
	out->valid &= ~((1ull << a->pc) | row->undef_mask);
	for (i = 0; i < row->nr_live; i++) {
		const struct cfi_rule *r = &row->live[i];
		uint64_t v, fa = 0;

		rc = cfi_rule_value(r, in, *cfa, mem, &v, &fa);
		if (rc == EVAL_OK) {
			regs_set(out, r->reg, v);
			if (r->reg == row->ra)
				ra_set = true;
			continue;
		}
		/* Only the return address is essential. */
		if (r->reg == row->ra) {
			*fail_addr = fa;
			return rc == EVAL_READ_FAIL ? CFI_STEP_READ_FAIL :
						      CFI_STEP_BAD;
		}
		/*
		 * Saved below the stack pointer: an epilogue popped it
		 * already (GCC leaves the save rule in place after the pop),
		 * so the register holds the caller's value.
		 */
		if (rc == EVAL_READ_FAIL && r->kind == CFI_OFFSET &&
		    regs_has(in, a->sp) && fa < in->r[a->sp] &&
		    regs_has(in, r->reg))
			continue;
		out->valid &= ~(1ull << r->reg);
	}
	/*
	 * "Same value" for the RA: no caller, where the RA column is no
	 * register (x86_64's 16); on aarch64 the link register still holds
	 * it (a leaf, a function before its prologue stored it) when its
	 * value is known (unwind.c forgets it in callers).
	 */
	if (!ra_set && (a->ra == a->pc || row->ra != a->ra ||
			!regs_has(in, row->ra)))
		return CFI_STEP_BAD;
	regs_set(out, a->sp, *cfa);
	regs_set(out, a->pc, regs_strip_ra(a, out->r[row->ra]));
	return CFI_STEP_OK;
}
