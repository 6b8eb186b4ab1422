/*
 * fuzz_syscap.c - libFuzzer target for the sysprof capture reader: open
 * the bytes as a capture, read every event (touching every byte an event
 * points at) and the embedded kernel symbols, close; then the same bytes
 * as a stream, written into a pipe by a thread.  Built with
 * tests/fuzz/replay.c for `make check` and with -fsanitize=fuzzer by
 * `make fuzz`.
 */
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

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

static void fuzz_read(struct syscap_reader *r)
{
	const struct perfdata_info *in = syscap_info(r);
	struct event ev;

	if (in->hostname)
		fuzz_sink += strlen(in->hostname);
	/* the embedded /proc/kallsyms: its bytes and the NUL after them */
	if (in->kallsyms)
		fuzz_sink += strlen(in->kallsyms) + in->kallsyms_size;
	while (syscap_next(r, &ev) > 0)
		fuzz_touch(&ev);
	syscap_close(r);
}

struct fuzz_pipe {
	int fd;
	const uint8_t *data;
	size_t size;
};

/* Writes the input into the pipe, then closes it. */
static void *fuzz_writer(void *arg)
{
	struct fuzz_pipe *p = arg;
	size_t done = 0;

	while (done < p->size) {
		ssize_t n = write(p->fd, p->data + done, p->size - done);

		if (n <= 0)
			break;  /* the reader stopped (EPIPE) */
		done += (size_t)n;
	}
	close(p->fd);
	return NULL;
}

/* The bytes as a stream: the reader reads what a thread writes. */
static void fuzz_stream(const uint8_t *data, size_t size)
{
	struct fuzz_pipe p = { -1, data, size };
	struct syscap_reader *r;
	struct err err;
	pthread_t t;
	int fds[2];

	if (pipe(fds) < 0)
		return;
	p.fd = fds[1];
	if (pthread_create(&t, NULL, fuzz_writer, &p)) {
		close(fds[0]);
		close(fds[1]);
		return;
	}
	/* fds[0] is the reader's: closed by it, also when it fails */
	r = syscap_open_fd(fds[0], true, "fuzz-stream", &err);
	if (r)
		fuzz_read(r);
	pthread_join(t, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct syscap_reader *r;
	struct err err;

	/* a reader that stops early leaves the writer's pipe without one */
	signal(SIGPIPE, SIG_IGN);
	r = syscap_open_mem(data, size, "fuzz", &err);
	if (r)
		fuzz_read(r);
	fuzz_stream(data, size);
	return 0;
}
