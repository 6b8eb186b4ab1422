/*
 * modinfo.h - what the run learned about one module, as plain data for
 * reports: the `restack stats` module table and machine-readable forms.
 */
#ifndef RESTACK_UNWIND_MODINFO_H
#define RESTACK_UNWIND_MODINFO_H

#include <stdbool.h>
#include <stdint.h>

struct module;

struct modinfo {
	/* Every string is borrowed from the module (or constant) and lives
	 * as long as the module cache. */
	const char *path;         /* as recorded */
	char build_id[41];        /* lowercase hex; "" when unknown */
	const char *status;       /* "ok", "unverified", "missing",
				   * "mismatch", "bad-elf", "no-file",
				   * "pending" (mapped, never needed) */
	const char *file;         /* the runtime file used, or NULL */
	const char *found_in;     /* "recorded path", "--symfs", "build-id
				   * cache", "perf archive", "debuginfo
				   * directory", "debuginfod", "this
				   * process's vdso"; NULL when not found */
	const char *why_missing;  /* when not found: why; else NULL */
	const char *debug_file;   /* separate debuginfo, or NULL */
	const char *debug_found_in;
	bool eh_frame;            /* runtime file has .eh_frame CFI */
	bool debug_frame;         /* .debug_frame in either file */
	bool symbols;             /* .symtab (or only .dynsym: dynsym_only) */
	bool dynsym_only;
	bool dwarf;               /* .debug_info: inline chains, lines */
	bool gopclntab;           /* Go's function table, read: names and
				   * SP deltas where no symbols or CFI */
	uint64_t samples;         /* samples whose user leaf is in it */
	uint64_t frames;
	uint64_t no_cfi;          /* walks that stopped here for lack of CFI */
	uint64_t no_sym;          /* frames without a symbol */
};

/* Describes m (any status). */
void modinfo_describe(const struct module *m, struct modinfo *out);

#endif
