/*
 * a64insn.h - the little AArch64 (A64) instruction decoding the unwinder's
 * recovery steps need: "is the instruction before this address a call?"
 * (stack scanning), "where is the return address in this PLT stub?" (the
 * PLT rule) and "is this a system call?" (a sample's pc after SVC).  Pure
 * functions over little-endian instruction words; no state.
 */
#ifndef RESTACK_UNWIND_A64INSN_H
#define RESTACK_UNWIND_A64INSN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* An instruction word from 4 little-endian bytes. */
static inline uint32_t a64insn_word(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/* True for the calls that set x30 to the next instruction: BL, BLR and
 * the pointer-authenticated BLRAA, BLRAB, BLRAAZ, BLRABZ. */
bool a64insn_is_call(uint32_t insn);

/* True for ADD X29, SP, #imm (MOV X29, SP): a prologue's setting of the
 * frame pointer to the frame record it stored. */
bool a64insn_sets_fp(uint32_t insn);

/* True for SVC #0, Linux's system call. */
bool a64insn_is_svc(uint32_t insn);

#define A64INSN_PLT_HEADER 32  /* GNU ld's PLT header, in bytes */

/*
 * Where the return address is at the instruction insn at offset at of a
 * PLT section whose first A64INSN_PLT_HEADER bytes are header: 0 when it
 * is still in x30 (an entry, or the header before its store), 16 when
 * the header's STP X16, X30, [SP, #-16]! has run (the return address is
 * at sp + 8, the caller's sp is sp + 16), -1 when the instructions up to
 * at are no PLT code we know (BTI, ADRP, LDR, ADD, BR, NOP, AUTIA1716,
 * that STP).  An entry's instruction is recognised alone; the header is
 * decoded from its start.
 */
int a64insn_plt_saved(const uint8_t *header, uint32_t insn, uint64_t at);

#endif
