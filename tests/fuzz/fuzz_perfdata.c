/*
 * fuzz_perfdata.c - libFuzzer target for the perf.data reader: open the
 * bytes as a perf.data input, read every event, format each one as
 * `restack dump` would, close.  Built with tests/fuzz/replay.c for
 * `make check` and with -fsanitize=fuzzer by `make fuzz`.
 */
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/strbuf.h"
#include "formats/perfdata.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* One memory file reused for every input: the reader wants a descriptor. */
static int fuzz_fd = -1;

static int fuzz_load(const uint8_t *data, size_t size)
{
	size_t done = 0;

	if (fuzz_fd < 0) {
		fuzz_fd = memfd_create("fuzz_perfdata", MFD_CLOEXEC);
		if (fuzz_fd < 0)
			return -1;
	}
	if (ftruncate(fuzz_fd, 0) < 0)
		return -1;
	while (done < size) {
		ssize_t n = pwrite(fuzz_fd, data + done, size - done,
				   (off_t)done);

		if (n <= 0)
			return -1;
		done += (size_t)n;
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* A small queue budget also exercises forced flushes. */
	struct perfdata_opts opts = { .max_queue_bytes = 4096 };
	struct perfdata_reader *r;
	struct strbuf sb = STRBUF_INIT;
	struct err err;
	struct event ev;
	unsigned pass;

	if (fuzz_load(data, size) < 0)
		abort();
	for (pass = 0; pass < 2; pass++) {
		opts.file_order = pass == 1;
		r = perfdata_open_fd(fuzz_fd, "fuzz", &opts, &err);
		if (!r)
			continue;
		while (perfdata_next(r, &ev) > 0) {
			strbuf_reset(&sb);
			perfdata_format_event(r, &ev, &sb);
		}
		(void)perfdata_info(r);
		(void)perfdata_stats(r);
		perfdata_close(r);
	}
	strbuf_release(&sb);
	return 0;
}
