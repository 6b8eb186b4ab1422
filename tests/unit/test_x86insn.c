/*
 * test_x86insn.c - CALL recognition before return addresses and PLT entry
 * decoding, on byte sequences as gcc, clang and ld emit them.
 */
#include <string.h>

#include "tests/harness.h"
#include "unwind/x86insn.h"

/* Checks bytes (the code just before a candidate return address). */
static bool call_before(const uint8_t *b, size_t n, bool *direct)
{
	uint8_t buf[X86INSN_CALL_MAX + 4];
	int32_t rel = 0;

	/* Pad in front as the unwinder reads a fixed window. */
	memset(buf, 0xcc, sizeof(buf));
	memcpy(buf + sizeof(buf) - n, b, n);
	return x86insn_call_before(buf, sizeof(buf), direct, &rel);
}

static void test_calls(void)
{
	static const struct {
		uint8_t b[8];
		size_t n;
		bool call, direct;
		const char *what;
	} cases[] = {
		{ { 0xe8, 0x10, 0x00, 0x00, 0x00 }, 5, true, true,
		  "call rel32" },
		{ { 0xff, 0x15, 1, 2, 3, 4 }, 6, true, false,
		  "call *disp32(%rip)" },
		{ { 0xff, 0xd0 }, 2, true, false, "call *%rax" },
		{ { 0x41, 0xff, 0xd3 }, 3, true, false, "call *%r11" },
		{ { 0xff, 0x10 }, 2, true, false, "call *(%rax)" },
		{ { 0xff, 0x50, 0x18 }, 3, true, false, "call *0x18(%rax)" },
		{ { 0xff, 0x54, 0x24, 0x08 }, 4, true, false,
		  "call *0x8(%rsp)" },
		{ { 0xff, 0x90, 0, 1, 0, 0 }, 6, true, false,
		  "call *0x100(%rax)" },
		{ { 0xff, 0x94, 0x24, 0, 1, 0, 0 }, 7, true, false,
		  "call *0x100(%rsp)" },
		{ { 0xff, 0x14, 0xc5, 0, 0, 0, 0 }, 7, true, false,
		  "call *0x0(,%rax,8)" },
		{ { 0xc3, 0x90 }, 2, false, false, "ret; nop" },
		{ { 0x0f, 0x1f, 0x44, 0x00, 0x00 }, 5, false, false,
		  "nopl 0x0(%rax,%rax,1)" },
		{ { 0xff, 0xe0 }, 2, false, false, "jmp *%rax (FF /4)" },
		{ { 0xff, 0x30 }, 2, false, false, "push (%rax) (FF /6)" },
		{ { 0xff, 0x50 }, 2, false, false,
		  "FF 50 lacks its disp8 byte" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bool direct = false;
		bool got = call_before(cases[i].b, cases[i].n, &direct);

		CHECK(got == cases[i].call && direct == cases[i].direct,
		      "%s: %s", cases[i].what,
		      cases[i].call ? "a call" : "not a call");
	}
}

static void test_direct_target(void)
{
	const uint8_t b[] = { 0xe8, 0xf0, 0xff, 0xff, 0xff };
	int32_t rel = 0;
	bool direct;

	CHECK(x86insn_call_before(b, sizeof(b), &direct, &rel) && direct &&
		      rel == -16,
	      "call rel32 gives its displacement (-16)");
}

static void test_plt(void)
{
	/* ld's lazy PLT: PLT0, then entries of jmp *GOT; push n; jmp PLT0. */
	static const uint8_t plt0[16] = { 0xff, 0x35, 1, 2, 3, 4,
					  0xff, 0x25, 1, 2, 3, 4,
					  0x0f, 0x1f, 0x40, 0x00 };
	static const uint8_t entry[16] = { 0xff, 0x25, 1, 2, 3, 4,
					   0x68, 7, 0, 0, 0,
					   0xe9, 0xd0, 0xff, 0xff, 0xff };
	/* IBT PLT entry: endbr64; push n; bnd jmp PLT0; nop. */
	static const uint8_t ibt[16] = { 0xf3, 0x0f, 0x1e, 0xfa,
					 0x68, 1, 0, 0, 0,
					 0xf2, 0xe9, 0xe1, 0xff, 0xff, 0xff,
					 0x90 };
	/* .plt.sec / .plt.got: endbr64; bnd jmp *GOT. */
	static const uint8_t sec[16] = { 0xf3, 0x0f, 0x1e, 0xfa,
					 0xf2, 0xff, 0x25, 1, 2, 3, 4,
					 0x0f, 0x1f, 0x44, 0, 0 };

	/* the entry that jumped to PLT0 pushed its relocation index */
	CHECK_EQ_U64(x86insn_plt_pushed(plt0, 16, 0), 8, "PLT0 at its push");
	CHECK_EQ_U64(x86insn_plt_pushed(plt0, 16, 6), 16,
		     "PLT0 after its push");
	CHECK_EQ_U64(x86insn_plt_pushed(entry, 16, 0), 0, "entry at its jmp");
	CHECK_EQ_U64(x86insn_plt_pushed(entry, 16, 6), 0, "entry at its push");
	CHECK_EQ_U64(x86insn_plt_pushed(entry, 16, 11), 8,
		     "entry after its push");
	CHECK(x86insn_plt_pushed(entry, 16, 3) < 0,
	      "mid-instruction is not an instruction boundary");
	CHECK_EQ_U64(x86insn_plt_pushed(ibt, 16, 4), 0, "IBT entry at push");
	CHECK_EQ_U64(x86insn_plt_pushed(ibt, 16, 9), 8, "IBT entry after push");
	CHECK_EQ_U64(x86insn_plt_pushed(sec, 16, 4), 0, ".plt.sec at bnd jmp");
	CHECK(x86insn_plt_pushed(sec, 16, 13) < 0,
	      "the padding after a jmp is not decoded");
	CHECK(x86insn_plt_pushed(sec, 5, 11) < 0, "truncated bytes");
}

int main(void)
{
	test_calls();
	test_direct_target();
	test_plt();
	return done_testing();
}
