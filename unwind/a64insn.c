/*
 * a64insn.c - A64 call, system call and PLT stub recognition.
 *
 * Encodings from the Arm Architecture Reference Manual for A-profile
 * (DDI 0487), section C6: BL imm26, BLR/BLRAA/BLRAB/BLRAAZ/BLRABZ Xn,
 * SVC #imm16, STP (pre-index), ADRP, LDR (immediate, unsigned offset),
 * ADD (immediate), BR, and the hint space (NOP, BTI, AUTIA1716).  GNU
 * ld's AArch64 PLT (bfd/elfnn-aarch64.c) is a 32-byte header
 * (STP X16, X30, [SP, #-16]!; ADRP; LDR; ADD; BR X17; NOPs) and entries
 * of ADRP X16; LDR X17; ADD X16; BR X17, with BTI C and AUTIA1716 added
 * for -z force-bti and -z pac-plt.
 */
#include "unwind/a64insn.h"

#define A64_STP_X16_X30 0xa9bf7bf0u   /* stp x16, x30, [sp, #-16]! */

bool a64insn_is_call(uint32_t insn)
{
	if ((insn & 0xfc000000u) == 0x94000000u)        /* BL */
		return true;
	if ((insn & 0xfffffc1fu) == 0xd63f0000u)        /* BLR */
		return true;
	if ((insn & 0xfffff81fu) == 0xd63f081fu)        /* BLRAAZ/BLRABZ */
		return true;
	return (insn & 0xfffff800u) == 0xd73f0800u;     /* BLRAA/BLRAB */
}

bool a64insn_sets_fp(uint32_t insn)
{
	return (insn & 0xffc003ffu) == 0x910003fdu;
}

bool a64insn_is_svc(uint32_t insn)
{
	return insn == 0xd4000001u;
}

/* An instruction a PLT stub may hold, besides the header's STP. */
static bool a64insn_plt_insn(uint32_t insn)
{
	return (insn & 0x9f000000u) == 0x90000000u ||   /* ADRP */
	       (insn & 0xffc00000u) == 0xf9400000u ||   /* LDR Xt, [Xn, #] */
	       (insn & 0xff800000u) == 0x91000000u ||   /* ADD Xd, Xn, # */
	       (insn & 0xfffffc1fu) == 0xd61f0000u ||   /* BR */
	       insn == 0xd503201fu ||                   /* NOP */
	       insn == 0xd503245fu ||                   /* BTI C */
	       insn == 0xd503219fu;                     /* AUTIA1716 */
}

int a64insn_plt_saved(const uint8_t *header, uint32_t insn, uint64_t at)
{
	int saved = 0;
	uint64_t i;

	if (at & 3)
		return -1;
	for (i = 0; i < at && at < A64INSN_PLT_HEADER; i += 4) {
		uint32_t w = a64insn_word(header + i);

		if (w == A64_STP_X16_X30)
			saved = 16;
		else if (!a64insn_plt_insn(w))
			return -1;
	}
	if (insn == A64_STP_X16_X30 && at < A64INSN_PLT_HEADER)
		return saved;
	return a64insn_plt_insn(insn) ? saved : -1;
}
