/*
 * test_ehframe.c - the .eh_frame check run before libdw: well-formed
 * CIE + FDE pass; huge register numbers, unknown opcodes (strictly), FDEs
 * without their CIE (strictly) and cut entries fail.
 */
#include <string.h>

#include "tests/harness.h"
#include "unwind/ehframe.h"

struct buf {
	uint8_t b[256];
	size_t n;
};

static void put(struct buf *o, const void *p, size_t n)
{
	memcpy(o->b + o->n, p, n);
	o->n += n;
}

static void put32(struct buf *o, uint32_t v)
{
	put(o, &v, 4);
}

/* CIE (zR, pcrel sdata4) + one FDE whose instructions are insns. */
static size_t build(uint8_t *out, const uint8_t *insns, size_t ninsns)
{
	static const uint8_t cie[] = {
		0, 0, 0, 0, 1, 'z', 'R', 0, 0x01, 0x78, 0x10, 0x01, 0x1b,
		0x0c, 0x07, 0x08, 0x90, 0x01, 0, 0,
	};
	struct buf o = { .n = 0 };
	size_t fde_len = 4 + 4 + 4 + 1 + ninsns;

	fde_len += (4 - (fde_len + 4) % 4) % 4;
	put32(&o, sizeof(cie));
	put(&o, cie, sizeof(cie));
	put32(&o, (uint32_t)fde_len);
	put32(&o, (uint32_t)o.n);             /* back to the CIE */
	put32(&o, 0x1000);                     /* pc_begin */
	put32(&o, 0x40);                       /* pc_range */
	put(&o, "\0", 1);                      /* augmentation data */
	put(&o, insns, ninsns);
	while (o.n % 4)
		put(&o, "\0", 1);              /* DW_CFA_nop */
	put32(&o, 0);                          /* terminator */
	memcpy(out, o.b, o.n);
	return o.n;
}

int main(void)
{
	static const uint8_t good[] = { 0x41, 0x0e, 0x10, 0x86, 0x02,
					0x43, 0x0d, 0x06 };
	static const uint8_t big_reg[] = { 0x41, 0x0d, 0xc0, 0x84, 0x3d };
	static const uint8_t big_off[] = { 0x05, 0xff, 0x7f, 0x01 };
	static const uint8_t bad_op[] = { 0x41, 0x3f };
	static const uint8_t expr[] = { 0x0f, 0x02, 0x77, 0x08, 0x10, 0x06,
					0x01, 0x90 };
	uint8_t b[256];
	size_t n;

	n = build(b, good, sizeof(good));
	CHECK(ehframe_check(b, n, EHFRAME_MAX_REG, true),
	      "a CIE and an FDE for push rbp; mov rbp, rsp pass");
	CHECK(!ehframe_check(b, n - 8, EHFRAME_MAX_REG, true),
	      "an FDE cut short fails");
	CHECK(ehframe_check(b, 24, EHFRAME_MAX_REG, true),
	      "a CIE alone passes");
	CHECK(!ehframe_check(b + 24, n - 24, EHFRAME_MAX_REG, true),
	      "an FDE without its CIE fails");
	n = build(b, big_reg, sizeof(big_reg));
	CHECK(!ehframe_check(b, n, EHFRAME_MAX_REG, true),
	      "def_cfa_register 1000000 fails");
	n = build(b, big_off, sizeof(big_off));
	CHECK(!ehframe_check(b, n, EHFRAME_MAX_REG, true),
	      "offset_extended of register 16383 fails");
	CHECK(ehframe_check(b, n, 20000, true),
	      "... and passes when the limit allows it");
	n = build(b, bad_op, sizeof(bad_op));
	CHECK(!ehframe_check(b, n, EHFRAME_MAX_REG, true),
	      "an unknown opcode fails a strict check");
	CHECK(ehframe_check(b, n, EHFRAME_MAX_REG, false),
	      "... and is left to libdw by a lenient one");
	n = build(b, big_reg, sizeof(big_reg));
	CHECK(!ehframe_check(b, n, EHFRAME_MAX_REG, false),
	      "a huge register fails a lenient check too");
	n = build(b, expr, sizeof(expr));
	CHECK(ehframe_check(b, n, EHFRAME_MAX_REG, true),
	      "expression blocks are skipped by their length");
	return done_testing();
}
