/*
 * ehhdr.c - FDE lookup through .eh_frame_hdr (LSB 5.0, "Exception Frame
 * Header"): version 1, the encodings of eh_frame_ptr, fde_count and the
 * table, then the sorted table of (initial location, FDE address) pairs.
 * Only the table encoding binary search needs, DW_EH_PE_datarel |
 * DW_EH_PE_sdata4 (0x3b, what every linker writes), is accepted.
 */
#include <string.h>

#include "unwind/ehhdr.h"

#include "unwind/module.h"

#define EH_PE_OMIT 0xff
#define EH_TABLE_ENC 0x3b        /* datarel | sdata4 */

/* Size of a fixed-size pointer encoding, 0 when variable or unknown. */
static unsigned ehhdr_enc_size(uint8_t enc)
{
	switch (enc & 0x0f) {
	case 0x02: case 0x0a: return 2;     /* udata2, sdata2 */
	case 0x03: case 0x0b: return 4;     /* udata4, sdata4 */
	case 0x04: case 0x0c: return 8;     /* udata8, sdata8 */
	default: return 0;
	}
}

static bool ehhdr_load(struct module *m)
{
	const uint8_t *d;
	GElf_Shdr sh;
	Elf_Scn *scn;
	Elf_Data *data;
	unsigned psize, csize;
	uint32_t count;

	if (m->ehhdr_tried)
		return m->ehhdr_table != NULL;
	m->ehhdr_tried = true;
	/* The table is read in host byte order. */
	if (!module_elf_host_order(m->elf))
		return false;
	scn = module_elf_section(m->elf, ".eh_frame_hdr", &sh);
	data = scn ? elf_getdata(scn, NULL) : NULL;
	if (!data || !data->d_buf || data->d_size < 4)
		return false;
	d = data->d_buf;
	psize = ehhdr_enc_size(d[1]);
	csize = ehhdr_enc_size(d[2]);
	if (d[0] != 1 || d[2] == EH_PE_OMIT || d[3] != EH_TABLE_ENC ||
	    !psize || csize != 4 || data->d_size < 4 + psize + csize)
		return false;
	memcpy(&count, d + 4 + psize, 4);
	if (!count || (data->d_size - 4 - psize - csize) / 8 < count)
		return false;
	m->ehhdr_table = d + 4 + psize + csize;
	m->ehhdr_count = count;
	m->ehhdr_addr = sh.sh_addr;
	return true;
}

/* How many table entries have an initial location <= rel. */
static size_t ehhdr_count_upto(const struct module *m, uint64_t rel)
{
	size_t lo = 0, hi = m->ehhdr_count;
	int32_t loc;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		memcpy(&loc, m->ehhdr_table + 8 * mid, 4);
		if (m->ehhdr_addr + (uint64_t)(int64_t)loc <= rel)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

bool ehhdr_function_start(struct module *m, uint64_t rel, uint64_t *start)
{
	size_t n;
	int32_t loc;

	if (!ehhdr_load(m))
		return false;
	n = ehhdr_count_upto(m, rel);
	if (n == 0)
		return false;
	memcpy(&loc, m->ehhdr_table + 8 * (n - 1), 4);
	*start = m->ehhdr_addr + (uint64_t)(int64_t)loc;
	return true;
}

bool ehhdr_same_gap(struct module *m, uint64_t a, uint64_t b)
{
	return ehhdr_load(m) && ehhdr_count_upto(m, a) == ehhdr_count_upto(m, b);
}
