/*
 * x86insn.h - the little x86-64 instruction decoding the unwinder's
 * recovery steps need: "do the bytes before this address end in a CALL?"
 * (stack scanning) and "how much did this PLT stub push so far?" (the PLT
 * rule).  Pure functions over byte buffers; no state.
 */
#ifndef RESTACK_UNWIND_X86INSN_H
#define RESTACK_UNWIND_X86INSN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define X86INSN_CALL_MAX 7     /* longest CALL encoding we recognise */

/*
 * True when the n bytes before a candidate return address (before[n - 1]
 * is the byte just before it) end with a CALL instruction: E8 rel32, or
 * FF /2 in any register, memory, disp8, disp32 or RIP-relative form.
 * When it is a direct E8 call, *rel32 receives its displacement (the
 * target is the return address + *rel32) and *direct is set.
 */
bool x86insn_call_before(const uint8_t *before, size_t n, bool *direct,
			 int32_t *rel32);

/*
 * Bytes on top of the return address at offset at of a PLT entry (it
 * starts at code[0]; n bytes are available): what its instructions pushed
 * before at, and in PLT0 (the lazy-binding stub, which pushes GOT[1]
 * first) the relocation index pushed by the entry that jumped there.
 * endbr64, push imm32, push m64, jmp forms and bnd prefixes are
 * understood.  Returns -1 when the bytes are not a PLT entry we know or
 * at is not an instruction boundary.
 */
int x86insn_plt_pushed(const uint8_t *code, size_t n, size_t at);

#endif
