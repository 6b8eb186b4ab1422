/*
 * test_a64insn.c - A64 call, SVC and PLT stub recognition, on instruction
 * words as gcc and GNU ld emit them for Debian's arm64 (checked against
 * objdump -d of testdata/arm64's binaries).
 */
#include <string.h>

#include "tests/harness.h"
#include "unwind/a64insn.h"

static void test_calls(void)
{
	static const struct {
		uint32_t insn;
		bool call;
		const char *what;
	} cases[] = {
		{ 0x94000010, true, "bl" },
		{ 0x97fffff0, true, "bl backwards" },
		{ 0xd63f0100, true, "blr x8" },
		{ 0xd63f0220, true, "blr x17" },
		{ 0xd63f091f, true, "blraaz x8" },
		{ 0xd63f0d1f, true, "blrabz x8" },
		{ 0xd73f0909, true, "blraa x8, x9" },
		{ 0xd73f0d09, true, "blrab x8, x9" },
		{ 0x14000010, false, "b" },
		{ 0xd61f0220, false, "br x17" },
		{ 0xd65f03c0, false, "ret" },
		{ 0xd65f0bff, false, "retaa" },
		{ 0xd503233f, false, "paciasp" },
		{ 0xa9bf7bfd, false, "stp x29, x30, [sp, #-16]!" },
		{ 0x00000000, false, "zeros" },
	};
	unsigned i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CHECK(a64insn_is_call(cases[i].insn) == cases[i].call, "%s",
		      cases[i].what);
	CHECK(a64insn_sets_fp(0x910003fd), "mov x29, sp");
	CHECK(a64insn_sets_fp(0x910043fd), "add x29, sp, #16");
	CHECK(!a64insn_sets_fp(0x910003fe), "mov x30, sp");
	CHECK(!a64insn_sets_fp(0xaa0103fd), "mov x29, x1");
	CHECK(a64insn_is_svc(0xd4000001), "svc #0");
	CHECK(!a64insn_is_svc(0xd4000021), "svc #1 is not Linux's");
	CHECK(!a64insn_is_svc(0xd65f03c0), "ret is no svc");
}

static void put(uint8_t *p, uint32_t w)
{
	p[0] = (uint8_t)w;
	p[1] = (uint8_t)(w >> 8);
	p[2] = (uint8_t)(w >> 16);
	p[3] = (uint8_t)(w >> 24);
}

static void test_plt(void)
{
	static const uint32_t hdr[8] = {
		0xa9bf7bf0, /* stp x16, x30, [sp, #-16]! */
		0x90000090, /* adrp x16, ... */
		0xf947fe11, /* ldr x17, [x16, #4088] */
		0x913fe210, /* add x16, x16, #0xff8 */
		0xd61f0220, /* br x17 */
		0xd503201f, 0xd503201f, 0xd503201f, /* nop */
	};
	static const uint32_t bti_hdr[8] = {
		0xd503245f, /* bti c */
		0xa9bf7bf0, 0x90000090, 0xf947fe11, 0x913fe210, 0xd61f0220,
		0xd503201f, 0xd503201f,
	};
	uint8_t h[A64INSN_PLT_HEADER], b[A64INSN_PLT_HEADER];
	unsigned i;

	for (i = 0; i < 8; i++) {
		put(h + 4 * i, hdr[i]);
		put(b + 4 * i, bti_hdr[i]);
	}
	CHECK_EQ_U64(a64insn_plt_saved(h, hdr[0], 0), 0,
		     "header at its stp: x30");
	CHECK_EQ_U64(a64insn_plt_saved(h, hdr[1], 4), 16,
		     "header after its stp: at sp + 8");
	CHECK_EQ_U64(a64insn_plt_saved(h, hdr[4], 16), 16, "header at br");
	CHECK_EQ_U64(a64insn_plt_saved(b, bti_hdr[1], 4), 0,
		     "BTI header at its stp");
	CHECK_EQ_U64(a64insn_plt_saved(b, bti_hdr[2], 8), 16,
		     "BTI header after its stp");
	CHECK_EQ_U64(a64insn_plt_saved(h, 0x90000090, 32), 0,
		     "entry at adrp: x30");
	CHECK_EQ_U64(a64insn_plt_saved(h, 0xf9400211, 36), 0, "entry at ldr");
	CHECK_EQ_U64(a64insn_plt_saved(h, 0xd61f0220, 44), 0, "entry at br");
	CHECK_EQ_U64(a64insn_plt_saved(h, 0xd503219f, 48), 0,
		     "entry at autia1716 (-z pac-plt)");
	CHECK(a64insn_plt_saved(h, 0xa9bf7bfd, 48) < 0,
	      "a function's prologue is no PLT entry");
	CHECK(a64insn_plt_saved(h, 0xa9bf7bf0, 48) < 0,
	      "the header's stp outside the header");
	CHECK(a64insn_plt_saved(h, 0x90000090, 34) < 0, "misaligned");
	put(h + 8, 0xd65f03c0);    /* ret: not PLT code */
	CHECK(a64insn_plt_saved(h, hdr[3], 12) < 0,
	      "a header with foreign code");
}

int main(void)
{
	test_calls();
	test_plt();
	return done_testing();
}
