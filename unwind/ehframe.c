/*
 * ehframe.c - .eh_frame structure and CFA instruction check (LSB 5.0
 * "Exception Frames", DWARF 5 section 6.4.2).
 */
#include <string.h>

#include "unwind/ehframe.h"

#include "common/cur.h"

#define EHF_MAX_CIES 64

struct ehf_cie {
	uint64_t off;            /* of its length field */
	uint8_t fde_enc;         /* 'R' augmentation, DW_EH_PE_* */
	bool has_z;              /* FDEs have augmentation data */
	bool unknown;            /* not understood: its FDEs are not read */
};

enum ehf_rc { EHF_OK, EHF_BAD, EHF_UNKNOWN };

/* Bytes of a pointer in encoding enc; 0 for encodings we do not take. */
static unsigned ehf_ptr_size(uint8_t enc)
{
	switch (enc & 0x0f) {
	case 0x00: return 8;                  /* absptr (64-bit) */
	case 0x02: case 0x0a: return 2;
	case 0x03: case 0x0b: return 4;
	case 0x04: case 0x0c: return 8;
	default: return 0;
	}
}

static bool ehf_reg(struct cur *c, unsigned max_reg)
{
	return cur_uleb(c) <= max_reg && !c->short_read;
}

/* A CFA instruction stream: the whole of c. */
static enum ehf_rc ehf_insns(struct cur *c, unsigned ptr_size,
			     unsigned max_reg)
{
	while (cur_left(c) && !c->short_read) {
		uint8_t op = cur_u8(c);

		switch (op >> 6) {
		case 1:                 /* advance_loc */
			continue;
		case 2:                 /* offset: reg in the low bits */
			(void)cur_uleb(c);
			continue;
		case 3:                 /* restore */
			continue;
		}
		switch (op) {
		case 0x00: case 0x0a: case 0x0b:   /* nop, remember/restore */
		case 0x2d:              /* GNU_window_save, negate_ra_state */
			break;
		case 0x01:                          /* set_loc */
			if (!ptr_size)
				return EHF_UNKNOWN;
			cur_skip(c, ptr_size);
			break;
		case 0x02: cur_skip(c, 1); break;   /* advance_loc1 */
		case 0x03: cur_skip(c, 2); break;   /* advance_loc2 */
		case 0x04: cur_skip(c, 4); break;   /* advance_loc4 */
		case 0x05: case 0x14: case 0x2f:    /* reg, uleb */
		case 0x0c:
			if (!ehf_reg(c, max_reg))
				return EHF_BAD;
			(void)cur_uleb(c);
			break;
		case 0x11: case 0x12: case 0x15:    /* reg, sleb */
			if (!ehf_reg(c, max_reg))
				return EHF_BAD;
			(void)cur_sleb(c);
			break;
		case 0x06: case 0x07: case 0x08:    /* reg */
		case 0x0d:
			if (!ehf_reg(c, max_reg))
				return EHF_BAD;
			break;
		case 0x09:                          /* register: reg, reg */
			if (!ehf_reg(c, max_reg) || !ehf_reg(c, max_reg))
				return EHF_BAD;
			break;
		case 0x0e: case 0x2e:               /* uleb */
			(void)cur_uleb(c);
			break;
		case 0x13:                          /* sleb */
			(void)cur_sleb(c);
			break;
		case 0x0f:                          /* block */
			cur_skip(c, (size_t)cur_uleb(c));
			break;
		case 0x10: case 0x16:               /* reg, block */
			if (!ehf_reg(c, max_reg))
				return EHF_BAD;
			cur_skip(c, (size_t)cur_uleb(c));
			break;
		default:
			return EHF_UNKNOWN;
		}
	}
	return c->short_read ? EHF_BAD : EHF_OK;
}

static enum ehf_rc ehf_cie(struct cur *c, struct ehf_cie *cie,
			   unsigned max_reg)
{
	uint8_t version = cur_u8(c);
	const char *aug = cur_cstr(c);
	size_t i;

	cie->fde_enc = 0;
	cie->has_z = false;
	cie->unknown = false;
	if (!aug)
		return EHF_BAD;
	if (version != 1 && version != 3 && version != 4)
		return EHF_UNKNOWN;
	if (version == 4)
		cur_skip(c, 2);             /* address and segment size */
	(void)cur_uleb(c);                  /* code alignment */
	(void)cur_sleb(c);                  /* data alignment */
	if ((version == 1 ? cur_u8(c) : cur_uleb(c)) > max_reg)
		return EHF_BAD;
	cie->has_z = aug[0] == 'z';
	if (aug[0] && !cie->has_z)
		return EHF_UNKNOWN;         /* pre-"z" augmentations */
	if (cie->has_z) {
		uint64_t n = cur_uleb(c);
		struct cur a;

		if (c->short_read || n > cur_left(c))
			return EHF_BAD;
		a = cur_sub(c, (size_t)n);
		for (i = 1; aug[i]; i++) {
			uint8_t enc;

			switch (aug[i]) {
			case 'R':
				cie->fde_enc = cur_u8(&a);
				break;
			case 'L':
				cur_skip(&a, 1);
				break;
			case 'P':
				enc = cur_u8(&a);
				if (!ehf_ptr_size(enc))
					return EHF_UNKNOWN;
				cur_skip(&a, ehf_ptr_size(enc));
				break;
			case 'S': case 'B': case 'G':
				break;
			default:
				return EHF_UNKNOWN;
			}
		}
		if (a.short_read)
			return EHF_BAD;
	}
	if (!ehf_ptr_size(cie->fde_enc))
		return EHF_UNKNOWN;
	return ehf_insns(c, ehf_ptr_size(cie->fde_enc), max_reg);
}

/* An FDE whose CIE is cie; c is past the CIE pointer. */
static enum ehf_rc ehf_fde(struct cur *c, const struct ehf_cie *cie,
			   unsigned max_reg)
{
	unsigned size = ehf_ptr_size(cie->fde_enc);

	cur_skip(c, 2 * size);              /* pc_begin, pc_range */
	if (cie->has_z)
		cur_skip(c, (size_t)cur_uleb(c));
	if (c->short_read)
		return EHF_BAD;
	return ehf_insns(c, size, max_reg);
}

bool ehframe_check(const uint8_t *data, size_t len, unsigned max_reg,
		   bool strict)
{
	struct ehf_cie cies[EHF_MAX_CIES];
	struct cur all = cur_make(data, len, 0, false);
	unsigned nr_cies = 0, i;
	enum ehf_rc rc;

	while (cur_left(&all) >= 4) {
		uint64_t off = cur_off(&all), length, id_off, id;
		bool wide = false;
		struct cur e;

		length = cur_u32(&all);
		if (length == 0)
			break;                  /* terminator */
		if (length == 0xffffffffu) {
			length = cur_u64(&all);
			wide = true;
		}
		if (all.short_read || length > cur_left(&all))
			return false;
		e = cur_sub(&all, (size_t)length);
		id_off = cur_off(&e);
		id = wide ? cur_u64(&e) : cur_u32(&e);
		if (e.short_read)
			return false;
		if (id == 0) {
			struct ehf_cie tmp, *cie = nr_cies < EHF_MAX_CIES ?
						      &cies[nr_cies] : &tmp;

			rc = ehf_cie(&e, cie, max_reg);
			cie->off = off;
			cie->unknown = rc == EHF_UNKNOWN;
			if (rc == EHF_BAD || (strict && rc != EHF_OK))
				return false;
			if (nr_cies < EHF_MAX_CIES)
				nr_cies++;
			else if (strict)
				return false;
			continue;
		}
		/* An FDE: id is the distance back to its CIE. */
		for (i = 0; i < nr_cies; i++)
			if (id <= id_off && cies[i].off == id_off - id)
				break;
		if (i == nr_cies || cies[i].unknown) {
			if (strict)
				return false;
			continue;       /* left to libdw */
		}
		rc = ehf_fde(&e, &cies[i], max_reg);
		if (rc == EHF_BAD || (strict && rc != EHF_OK))
			return false;
	}
	return !all.short_read;
}
