/*
 * x86insn.c - CALL recognition and PLT stub decoding for x86-64.
 *
 * Encodings from the Intel SDM, volume 2 (CALL: E8 cd, FF /2; PUSH: 68 id,
 * FF /6; JMP: E9 cd, FF /4; ENDBR64: F3 0F 1E FA; BND: F2 prefix).
 */
#include <string.h>

#include "unwind/x86insn.h"

/* Length of an FF /r instruction from its ModRM byte onwards (1 + SIB +
 * displacement), not counting the FF opcode byte. */
static size_t x86insn_modrm_len(const uint8_t *p, size_t n)
{
	unsigned mod, rm;
	size_t len = 1;

	if (n < 1)
		return 0;
	mod = p[0] >> 6;
	rm = p[0] & 7;
	if (mod == 3)
		return 1;
	if (rm == 4) {          /* SIB byte follows */
		if (n < 2)
			return 0;
		len++;
		if (mod == 0 && (p[1] & 7) == 5)
			return len + 4;    /* no base: disp32 */
	} else if (mod == 0 && rm == 5) {
		return len + 4;            /* RIP-relative disp32 */
	}
	if (mod == 1)
		len += 1;
	else if (mod == 2)
		len += 4;
	return len;
}

bool x86insn_call_before(const uint8_t *before, size_t n, bool *direct,
			 int32_t *rel32)
{
	size_t k;

	*direct = false;
	if (n >= 5 && before[n - 5] == 0xe8) {
		*direct = true;
		memcpy(rel32, before + n - 4, 4);
		return true;
	}
	/* FF /2: the opcode k bytes back, ModRM reg field 2, and exactly k
	 * bytes long. */
	for (k = 2; k <= X86INSN_CALL_MAX && k <= n; k++) {
		const uint8_t *op = before + n - k;

		if (op[0] == 0xff && (op[1] & 0x38) == 0x10 &&
		    1 + x86insn_modrm_len(op + 1, k - 1) == k)
			return true;
	}
	return false;
}

int x86insn_plt_pushed(const uint8_t *code, size_t n, size_t at)
{
	static const uint8_t endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa };
	size_t pos = 0, first = n >= 4 && !memcmp(code, endbr64, 4) ? 4 : 0;
	/* PLT0 (push GOT[1] first): the entry that jumped there pushed its
	 * relocation index on top of the return address */
	int pushed = n >= first + 2 && code[first] == 0xff &&
				     code[first + 1] == 0x35 ? 8 : 0;

	while (pos < at) {
		const uint8_t *p = code + pos;
		size_t left = n - pos;
		size_t bnd = left >= 1 && p[0] == 0xf2;

		if (left >= 4 && !memcmp(p, endbr64, 4)) {
			pos += 4;
		} else if (left >= 5 && p[0] == 0x68) {
			pos += 5;
			pushed += 8;
		} else if (left >= 6 && p[0] == 0xff && p[1] == 0x35) {
			pos += 6;
			pushed += 8;
		} else if (left >= 6 + bnd && p[bnd] == 0xff &&
			   p[bnd + 1] == 0x25) {
			pos += 6 + bnd;
		} else if (left >= 5 + bnd && p[bnd] == 0xe9) {
			pos += 5 + bnd;
		} else {
			return -1;
		}
	}
	return pos == at ? pushed : -1;
}
