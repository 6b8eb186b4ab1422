/*
 * regs.c - perf register numbers to DWARF register numbers.
 *
 * x86_64: perf AX BX CX DX SI DI BP SP IP (0-8), R8-R15 (16-23); DWARF
 * (SysV psABI) rax rdx rcx rbx rsi rdi rbp rsp (0-7), r8-r15 (8-15), RA 16.
 * i386: DWARF eax ecx edx ebx esp ebp esi edi (0-7), eip 8.
 * aarch64: perf X0-X30 (0-30), SP 31, PC 32; DWARF x0-x30 (0-30), sp 31;
 * the pc has no DWARF number, we keep it in slot 32.  aarch64's return
 * addresses lose the bits above the 48-bit user address space, where
 * pointer authentication signs them (regs_strip_ra()).
 */
#include <string.h>

#include "unwind/regs.h"

#include "common/base.h"

static const struct regs_arch regs_x86_64 = {
	.arch = EVENT_ARCH_X86_64,
	.name = "x86_64",
	.nr = 17,
	.sp = 7,
	.fp = 6,
	.ra = 16,
	.pc = 16,
	.word = 8,
	.ra_mask = ~0ull,
	.perf_to_dwarf = {
		[0] = 0, [1] = 3, [2] = 2, [3] = 1, [4] = 4, [5] = 5,
		[6] = 6, [7] = 7, [8] = 16,
		[9] = -1, [10] = -1, [11] = -1, [12] = -1, [13] = -1,
		[14] = -1, [15] = -1,
		[16] = 8, [17] = 9, [18] = 10, [19] = 11, [20] = 12,
		[21] = 13, [22] = 14, [23] = 15,
		[24 ... 63] = -1,
	},
};

static const struct regs_arch regs_i386 = {
	.arch = EVENT_ARCH_I386,
	.name = "i386",
	.nr = 9,
	.sp = 4,
	.fp = 5,
	.ra = 8,
	.pc = 8,
	.word = 4,
	.ra_mask = 0xffffffffull,
	.perf_to_dwarf = {
		[0] = 0, [1] = 3, [2] = 1, [3] = 2, [4] = 6, [5] = 7,
		[6] = 5, [7] = 4, [8] = 8,
		[9 ... 63] = -1,
	},
};

static const struct regs_arch regs_aarch64 = {
	.arch = EVENT_ARCH_AARCH64,
	.name = "aarch64",
	.nr = 33,
	.sp = 31,
	.fp = 29,
	.ra = 30,
	.pc = 32,
	.word = 8,
	.ra_mask = (1ull << 48) - 1,
	.perf_to_dwarf = {
		[0] = 0, [1] = 1, [2] = 2, [3] = 3, [4] = 4, [5] = 5,
		[6] = 6, [7] = 7, [8] = 8, [9] = 9, [10] = 10, [11] = 11,
		[12] = 12, [13] = 13, [14] = 14, [15] = 15, [16] = 16,
		[17] = 17, [18] = 18, [19] = 19, [20] = 20, [21] = 21,
		[22] = 22, [23] = 23, [24] = 24, [25] = 25, [26] = 26,
		[27] = 27, [28] = 28, [29] = 29, [30] = 30, [31] = 31,
		[32] = 32,
		[33 ... 63] = -1,
	},
};

const struct regs_arch *regs_arch_get(enum event_arch arch)
{
	switch (arch) {
	case EVENT_ARCH_X86_64:
		return &regs_x86_64;
	case EVENT_ARCH_AARCH64:
		return &regs_aarch64;
	case EVENT_ARCH_I386:
		return &regs_i386;
	default:
		return NULL;
	}
}

/*
 * What regs_from_perf() does with one (arch, mask): the ranks of the
 * values it keeps and their DWARF registers, in rank order.  Samples of
 * a capture share their mask: worked out once per thread, not per sample.
 */
struct regs_perf_plan {
	const struct regs_arch *a;
	uint64_t mask;
	unsigned nr;            /* values the mask gives: popcount */
	unsigned nr_kept;
	uint64_t valid;
	uint8_t rank[64], dw[64];
};

static void regs_plan(struct regs_perf_plan *p, const struct regs_arch *a,
		      uint64_t mask)
{
	unsigned rank = 0;
	uint64_t left;

	p->a = a;
	p->mask = mask;
	p->nr_kept = 0;
	p->valid = 0;
	for (left = mask; left; left &= left - 1, rank++) {
		int dw = a->perf_to_dwarf[__builtin_ctzll(left)];

		if (dw < 0 || dw >= REGS_MAX)
			continue;
		p->rank[p->nr_kept] = (uint8_t)rank;
		p->dw[p->nr_kept++] = (uint8_t)dw;
		p->valid |= 1ull << dw;
	}
	p->nr = rank;
}

int regs_from_perf(const struct regs_arch *a, uint64_t mask,
		   const uint64_t *vals, unsigned nr, struct regs *out)
{
	static _Thread_local struct regs_perf_plan plan;
	unsigned i;

	if (plan.a != a || plan.mask != mask)
		regs_plan(&plan, a, mask);
	memset(out, 0, sizeof(*out));
	if (plan.nr != nr)
		return -1;
	for (i = 0; i < plan.nr_kept; i++)
		out->r[plan.dw[i]] = vals[plan.rank[i]];
	out->valid = plan.valid;
	return (int)plan.nr_kept;
}

int regs_dwarf_to_perf(const struct regs_arch *a, unsigned dw)
{
	unsigned bit;

	for (bit = 0; bit < 64; bit++)
		if (a->perf_to_dwarf[bit] == (int)dw)
			return (int)bit;
	return -1;
}
