/*
 * regs.h - register files for unwinding: perf's sampled registers (packed
 * by mask rank, numbered as in arch/<arch>/include/uapi/asm/perf_regs.h)
 * mapped to DWARF register numbers.
 */
#ifndef RESTACK_UNWIND_REGS_H
#define RESTACK_UNWIND_REGS_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "common/event.h"

#define REGS_MAX 33     /* DWARF 0..32: aarch64 x0-x30, sp, and pc */

struct regs_arch {
	enum event_arch arch;
	const char *name;
	unsigned nr;            /* DWARF registers tracked: 0..nr-1 */
	unsigned sp;            /* DWARF number of the stack pointer */
	unsigned fp;            /* DWARF number of the frame pointer */
	unsigned ra;            /* default return-address column */
	unsigned pc;            /* slot holding the pc (may be == ra) */
	unsigned word;          /* pointer size in bytes */
	uint64_t ra_mask;       /* the address bits of a return address */
	signed char perf_to_dwarf[64]; /* -1: not tracked */
};

/* A register file in DWARF numbering. */
struct regs {
	uint64_t r[REGS_MAX];
	uint64_t valid;         /* bit n: r[n] is known */
};

/* The description of arch, or NULL when the unwinder does not know it. */
const struct regs_arch *regs_arch_get(enum event_arch arch);

/*
 * Fills *out from a sample's registers: vals holds popcount(mask) values
 * in ascending perf register order.  Returns the number of registers
 * mapped, or -1 when nr does not match the mask.
 */
int regs_from_perf(const struct regs_arch *a, uint64_t mask,
		   const uint64_t *vals, unsigned nr, struct regs *out);

/* The perf register number that DWARF register dw comes from, or -1. */
int regs_dwarf_to_perf(const struct regs_arch *a, unsigned dw);

/*
 * A return address as code: aarch64's pointer authentication (PAC) signs
 * return addresses in the bits above the virtual address (48 bits: the
 * user address space of Linux/arm64 with 4 KiB pages, Debian's), which a
 * return (RETAA, AUTIASP) strips; libdw and libunwind strip them alike.
 */
static inline uint64_t regs_strip_ra(const struct regs_arch *a, uint64_t ra)
{
	return ra & a->ra_mask;
}

static inline bool regs_has(const struct regs *r, unsigned n)
{
	return n < REGS_MAX && (r->valid >> n) & 1;
}

static inline void regs_set(struct regs *r, unsigned n, uint64_t v)
{
	if (n < REGS_MAX) {
		r->r[n] = v;
		r->valid |= 1ull << n;
	}
}

#define REGS_COPY_SHORT 17  /* x86_64's DWARF registers 0..16 */

/*
 * *out = *in, as far as the valid registers go.  Copies of a constant
 * size (x86_64's registers, or all) compile to a few vector moves; a
 * variable one would be a slow "rep movs".
 */
static inline void regs_copy(struct regs *out, const struct regs *in)
{
	if (!(in->valid >> REGS_COPY_SHORT))
		memcpy(out->r, in->r, REGS_COPY_SHORT * sizeof(in->r[0]));
	else
		memcpy(out->r, in->r, sizeof(in->r));
	out->valid = in->valid;
}

#endif
