/*
 * fuzz_syscap.c - libFuzzer target for the sysprof capture reader: open
 * the bytes as a capture, read every event (touching every byte an event
 * points at) and the embedded kernel symbols, close.  Built with tests/fuzz/replay.c for `make check` and
 * with -fsanitize=fuzzer by `make fuzz`.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "formats/syscap_read.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint64_t fuzz_sink;

static void fuzz_touch(const struct event *ev)
{
	const struct event_sample *s = &ev->sample;
	uint64_t h = ev->time ^ (uint64_t)ev->pid ^ (uint64_t)ev->tid;
	uint64_t i;

	switch (ev->type) {
	case EVENT_SAMPLE:
		for (i = 0; i < s->callchain_nr; i++)
			h ^= s->callchain[i];
		for (i = 0; i < s->regs_user_nr; i++)
			h ^= s->regs_user[i];
		for (i = 0; i < s->stack_size; i++)
			h += s->stack[i];
		break;
	case EVENT_MMAP:
		h ^= strlen(ev->mmap.filename) + ev->mmap.start + ev->mmap.len;
		break;
	case EVENT_COMM:
		h ^= strlen(ev->comm.comm);
		break;
	case EVENT_JIT:
		h ^= strlen(ev->jit.name) + ev->jit.start;
		break;
	default:
		break;
	}
	fuzz_sink += h;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct syscap_reader *r;
	struct err err;
	struct event ev;
	const struct perfdata_info *in;

	r = syscap_open_mem(data, size, "fuzz", &err);
	if (!r)
		return 0;
	in = syscap_info(r);
	if (in->hostname)
		fuzz_sink += strlen(in->hostname);
	/* the embedded /proc/kallsyms: its bytes and the NUL after them */
	if (in->kallsyms)
		fuzz_sink += strlen(in->kallsyms) + in->kallsyms_size;
	while (syscap_next(r, &ev) > 0)
		fuzz_touch(&ev);
	syscap_close(r);
	return 0;
}
