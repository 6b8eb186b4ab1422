/*
 * test_regs.c - perf sampled registers (packed by mask rank) to DWARF
 * register numbers, for x86_64, aarch64 and i386.
 */
#include "tests/harness.h"
#include "unwind/regs.h"

static void test_x86_64(void)
{
	const struct regs_arch *a = regs_arch_get(EVENT_ARCH_X86_64);
	uint64_t vals[20];
	struct regs r;
	unsigned i;

	/* perf --call-graph dwarf: AX..SS (0-11) and R8-R15 (16-23). */
	for (i = 0; i < 20; i++)
		vals[i] = 0x1000 + i;
	CHECK(a != NULL, "x86_64 is known");
	CHECK_EQ_U64(regs_from_perf(a, 0xff0fff, vals, 20, &r), 17,
		     "x86_64: 17 of the 20 sampled registers map to DWARF");
	CHECK_EQ_U64(r.r[0], 0x1000, "DWARF 0 (rax) = perf AX");
	CHECK_EQ_U64(r.r[1], 0x1003, "DWARF 1 (rdx) = perf DX");
	CHECK_EQ_U64(r.r[2], 0x1002, "DWARF 2 (rcx) = perf CX");
	CHECK_EQ_U64(r.r[3], 0x1001, "DWARF 3 (rbx) = perf BX");
	CHECK_EQ_U64(r.r[4], 0x1004, "DWARF 4 (rsi) = perf SI");
	CHECK_EQ_U64(r.r[5], 0x1005, "DWARF 5 (rdi) = perf DI");
	CHECK_EQ_U64(r.r[6], 0x1006, "DWARF 6 (rbp) = perf BP");
	CHECK_EQ_U64(r.r[7], 0x1007, "DWARF 7 (rsp) = perf SP");
	/* FLAGS, CS, SS are ranks 9-11; R8 is rank 12. */
	CHECK_EQ_U64(r.r[8], 0x100c, "DWARF 8 (r8) = perf R8 (rank 12)");
	CHECK_EQ_U64(r.r[15], 0x1013, "DWARF 15 (r15) = perf R15 (rank 19)");
	CHECK_EQ_U64(r.r[16], 0x1008, "DWARF 16 (return address) = perf IP");
	CHECK(regs_has(&r, a->sp) && regs_has(&r, a->pc), "sp and pc are set");
	CHECK_EQ_U64(regs_dwarf_to_perf(a, 3), 1, "rbx comes from perf BX");
	/* A sparse mask: only IP and SP. */
	vals[0] = 0x7ff0;
	vals[1] = 0x4000;
	CHECK_EQ_U64(regs_from_perf(a, (1 << 7) | (1 << 8), vals, 2, &r), 2,
		     "a sparse mask maps by rank");
	CHECK(r.r[7] == 0x7ff0 && r.r[16] == 0x4000 && !regs_has(&r, 6),
	      "sparse: SP rank 0, IP rank 1, rbp unknown");
	CHECK(regs_from_perf(a, 0xff0fff, vals, 19, &r) < 0,
	      "a register count that does not match the mask is refused");
}

static void test_aarch64(void)
{
	const struct regs_arch *a = regs_arch_get(EVENT_ARCH_AARCH64);
	uint64_t vals[34];
	struct regs r;
	unsigned i;

	for (i = 0; i < 34; i++)
		vals[i] = 0x2000 + i;
	CHECK(a != NULL, "aarch64 is known");
	CHECK_EQ_U64(regs_from_perf(a, (1ull << 33) - 1, vals, 33, &r), 33,
		     "aarch64: X0-X30, SP and PC map");
	CHECK_EQ_U64(r.r[0], 0x2000, "x0");
	CHECK_EQ_U64(r.r[29], 0x201d, "x29 (fp)");
	CHECK_EQ_U64(r.r[30], 0x201e, "x30 (lr)");
	CHECK_EQ_U64(r.r[31], 0x201f, "DWARF 31 = sp");
	CHECK_EQ_U64(r.r[a->pc], 0x2020, "pc slot = perf PC");
	CHECK(a->ra == 30 && a->fp == 29 && a->sp == 31,
	      "aarch64: RA column x30, fp x29, sp 31");
	/* SVE hosts add VG (bit 46): ranked after PC, not a DWARF register. */
	CHECK_EQ_U64(regs_from_perf(a, ((1ull << 33) - 1) | (1ull << 46),
				    vals, 34, &r),
		     33, "aarch64 with VG: VG is skipped by rank");
	CHECK_EQ_U64(r.r[a->pc], 0x2020, "pc still rank 32 with VG");
}

static void test_i386(void)
{
	const struct regs_arch *a = regs_arch_get(EVENT_ARCH_I386);
	uint64_t vals[9] = { 10, 11, 12, 13, 14, 15, 16, 17, 18 };
	struct regs r;

	CHECK(a != NULL, "i386 is known");
	regs_from_perf(a, 0x1ff, vals, 9, &r);
	CHECK(r.r[0] == 10 && r.r[3] == 11 && r.r[1] == 12 && r.r[2] == 13,
	      "i386: eax ecx edx ebx from AX CX DX BX");
	CHECK(r.r[4] == 17 && r.r[5] == 16 && r.r[6] == 14 && r.r[7] == 15,
	      "i386: esp ebp esi edi from SP BP SI DI");
	CHECK_EQ_U64(r.r[8], 18, "i386: eip from IP");
	CHECK(regs_arch_get(EVENT_ARCH_UNKNOWN) == NULL,
	      "an unknown architecture has no table");
}

int main(void)
{
	test_x86_64();
	test_aarch64();
	test_i386();
	return done_testing();
}
