/*
 * fuzz_jit.c - libFuzzer target for the JIT readers: the input is a
 * jitdump (when it starts with the jitdump magic, either byte order) or a
 * perf map, put in a private directory as process 4242's file; every
 * symbol it yields is looked up, and the CFI of its unwinding info is
 * compiled at its first bytes.  Built with tests/fuzz/replay.c for
 * `make check` and with -fsanitize=fuzzer by `make fuzz`.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unwind/cfi.h"
#include "unwind/jit.h"
#include "unwind/module.h"
#include "unwind/regs.h"

#include "tests/fuzz/fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_PID 4242
#define FUZZ_MAX_SYMS 64

static char fuzz_dir[64];

static void fuzz_cleanup(void)
{
	rmdir(fuzz_dir);
}

static int fuzz_write(const char *name, const uint8_t *data, size_t size)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/%s", fuzz_dir, name);
	return fuzz_write_file(path, data, size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t magic_le[4] = { 'D', 'T', 'i', 'J' };
	static const uint8_t magic_be[4] = { 'J', 'i', 'T', 'D' };
	const struct regs_arch *a = regs_arch_get(EVENT_ARCH_X86_64);
	const char *dirs[1];
	bool dump = size >= 4 && (!memcmp(data, magic_le, 4) ||
				  !memcmp(data, magic_be, 4));
	char name[64], path[160];
	struct jit_index j;
	struct jit_sym *syms;
	size_t n, i;

	if (!fuzz_dir[0]) {
		strcpy(fuzz_dir, "/tmp/restack-fuzz-jit.XXXXXX");
		if (!mkdtemp(fuzz_dir))
			abort();
		atexit(fuzz_cleanup);
	}
	snprintf(name, sizeof(name), dump ? "jit-%d.dump" : "perf-%d.map",
		 FUZZ_PID);
	if (fuzz_write(name, data, size) < 0)
		abort();
	dirs[0] = fuzz_dir;
	jit_init(&j, dirs, 1);
	n = jit_symbols(&j, FUZZ_PID, &syms);
	for (i = 0; i < n && i < FUZZ_MAX_SYMS; i++) {
		struct jit_sym *s = jit_lookup(&j, FUZZ_PID, syms[i].start,
					       syms[i].time);
		struct module *m = s ? jit_cfi_module(&j, s) : NULL;

		if (m) {
			(void)cfi_find(m, a, s->start);
			(void)cfi_find(m, a, s->end - 1);
		}
	}
	jit_release(&j);
	/* The file goes; the directory stays for the next input. */
	snprintf(path, sizeof(path), "%s/%s", fuzz_dir, name);
	unlink(path);
	return 0;
}
