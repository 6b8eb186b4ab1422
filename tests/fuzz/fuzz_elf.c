/*
 * fuzz_elf.c - libFuzzer target for what restack reads from ELF files
 * itself: program headers, build-id notes, symbol tables (perf's and
 * bfd's rules), .eh_frame_hdr, PLT sections, CFI rows and DWARF inline
 * chains.  The input is written to a file that a module of the module
 * cache points at; addresses across its loadable segments are then
 * symbolized and unwound.  Built with tests/fuzz/replay.c for `make
 * check` and with -fsanitize=fuzzer by `make fuzz`.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unwind/cfi.h"
#include "unwind/ehhdr.h"
#include "unwind/module.h"
#include "unwind/regs.h"
#include "unwind/symbolize.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_ADDRS 8    /* addresses tried per segment */

static char fuzz_path[64];

static void fuzz_cleanup(void)
{
	unlink(fuzz_path);
}

static void fuzz_addr(struct module *m, struct symbolizer *sym,
		      uint64_t rel)
{
	const struct regs_arch *a = regs_arch_get(EVENT_ARCH_X86_64);
	uint64_t start;
	uint8_t buf[16];

	(void)symbolize_user(sym, m, m->path, rel);
	(void)cfi_find(m, a, rel);
	(void)ehhdr_function_start(m, rel, &start);
	(void)module_plt_find(m, rel);
	(void)module_read(m, rel, buf, sizeof(buf));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct modcache mc;
	struct symbolizer sym;
	struct module *m;
	FILE *f;
	unsigned i, k;

	if (!fuzz_path[0]) {
		int fd;

		strcpy(fuzz_path, "/tmp/restack-fuzz-elf.XXXXXX");
		fd = mkstemp(fuzz_path);
		if (fd < 0)
			abort();
		close(fd);
		atexit(fuzz_cleanup);
	}
	f = fopen(fuzz_path, "wb");
	if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
		abort();
	modcache_init(&mc, NULL);
	symbolizer_init(&sym, true);
	m = modcache_get(&mc, fuzz_path, NULL, 0, 1, 2);
	if (m && module_load(&mc, m)) {
		for (i = 0; i < m->nr_segs && i < 8; i++) {
			const struct module_seg *s = &m->segs[i];

			for (k = 0; k < FUZZ_ADDRS && s->memsz; k++)
				fuzz_addr(m, &sym, s->vaddr +
						  s->memsz / FUZZ_ADDRS * k);
		}
	}
	symbolizer_release(&sym);
	modcache_release(&mc);
	return 0;
}
