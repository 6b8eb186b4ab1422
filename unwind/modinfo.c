/*
 * modinfo.c - a module's report data, read from its entry and, for the
 * CFI and symbol columns, from the section tables of the files used (so
 * the answer does not depend on what the unwinder happened to load).
 */
#include <string.h>

#include "unwind/modinfo.h"

#include "unwind/module.h"

static bool modinfo_has(Elf *elf, const char *name, bool want_bits)
{
	GElf_Shdr sh;

	if (!elf || !module_elf_section(elf, name, &sh))
		return false;
	return sh.sh_size > 0 && (!want_bits || sh.sh_type != SHT_NOBITS);
}

void modinfo_describe(const struct module *m, struct modinfo *out)
{
	static const char *const status[] = {
		[MODULE_PENDING] = "pending",
		[MODULE_OK] = "ok",
		[MODULE_UNVERIFIED] = "unverified",
		[MODULE_NOT_FOUND] = "missing",
		[MODULE_MISMATCH] = "mismatch",
		[MODULE_BAD_ELF] = "bad-elf",
		[MODULE_NO_FILE] = "no-file",
		[MODULE_LOADING] = "loading",
	};
	bool found = m->status == MODULE_OK || m->status == MODULE_UNVERIFIED;

	memset(out, 0, sizeof(*out));
	out->path = m->path;
	if (m->build_id_size)
		module_build_id_hex(m->build_id, m->build_id_size,
				    out->build_id);
	out->status = (unsigned)m->status < MODULE_STATUS__COUNT ?
			      status[m->status] : "?";
	if (found) {
		out->file = m->file;
		out->found_in = m->found_in;
	} else if (m->status == MODULE_MISMATCH) {
		out->why_missing = m->other_arch ?
			"only files with another build-id or architecture" :
			"only files with another build-id";
	} else if (m->status == MODULE_NOT_FOUND) {
		out->why_missing = m->why_missing ? m->why_missing :
				   m->build_id_size ?
					   "no file with its build-id" :
					   "no file at the recorded path, "
					   "and no build-id to look up";
	} else if (m->status == MODULE_BAD_ELF) {
		out->why_missing = "not a usable ELF file";
	}
	out->debug_file = m->debug_file;
	out->debug_found_in = m->debug_file ? m->debug_found_in : NULL;
	out->eh_frame = !m->eh_frame_refused &&
			modinfo_has(m->elf, ".eh_frame", true);
	out->debug_frame = modinfo_has(m->elf, ".debug_frame", true) ||
			   modinfo_has(m->debug_elf, ".debug_frame", true);
	out->symbols = modinfo_has(m->elf, ".symtab", true) ||
		       modinfo_has(m->debug_elf, ".symtab", true);
	if (!out->symbols && modinfo_has(m->elf, ".dynsym", true))
		out->symbols = out->dynsym_only = true;
	out->dwarf = modinfo_has(m->elf, ".debug_info", true) ||
		     modinfo_has(m->debug_elf, ".debug_info", true);
	out->gopclntab = m->gopcln != NULL;
	out->samples = m->samples;
	out->frames = m->frames;
	out->no_cfi = m->no_cfi;
	out->no_sym = m->no_sym;
}
