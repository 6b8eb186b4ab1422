/*
 * fuzz_gopclntab.c - libFuzzer target for Go's function table reader
 * (unwind/gopclntab.c): the input is a table (its pcHeader first); every
 * function it lists (up to a bound) is read, and addresses across its
 * text are looked up with their SP deltas.  Built with tests/fuzz/replay.c
 * for `make check` and with -fsanitize=fuzzer by `make fuzz`.
 */
#include <stdint.h>
#include <string.h>

#include "unwind/gopclntab.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_FUNCS 256   /* functions read per input */
#define FUZZ_ADDRS 64    /* addresses looked up per function read */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gopclntab *t;
	struct gopclntab_func f, g;
	const char *why;
	uint32_t i, n;

	t = gopclntab_parse(data, size, 0x401000, &why);
	if (!t)
		return 0;
	n = gopclntab_count(t);
	for (i = 0; i < n && i < FUZZ_FUNCS; i++) {
		uint64_t step, a;
		unsigned k;

		if (!gopclntab_func(t, i, &f))
			continue;
		(void)gopclntab_kind_of(f.name);
		if (f.end <= f.start)
			continue;
		step = (f.end - f.start) / FUZZ_ADDRS + 1;
		for (k = 0, a = f.start; k < FUZZ_ADDRS && a < f.end;
		     k++, a += step) {
			int32_t d;

			if (gopclntab_find(t, a, &g))
				(void)gopclntab_spdelta(t, &g, a, &d);
			(void)gopclntab_spdelta(t, &f, a, &d);
		}
	}
	gopclntab_free(t);
	return 0;
}
