/*
 * perfdata_synth.c - perf.data records from format-neutral events (see
 * perfdata_synth.h).
 */
#include <string.h>

#include "formats/perfdata_synth.h"

#include "formats/perfdata_internal.h"

#define PS_SAMPLE_TYPE (PD_SAMPLE_IP | PD_SAMPLE_TID | PD_SAMPLE_TIME | \
			PD_SAMPLE_CPU | PD_SAMPLE_PERIOD | PD_SAMPLE_CALLCHAIN)
/* mmap, comm, task, sample_id_all, mmap2 */
#define PS_ATTR_FLAGS ((1ull << 8) | (1ull << 9) | (1ull << 13) | \
		       (1ull << 18) | (1ull << 23))
#define PS_TRAILER 24   /* pid, tid, time, cpu, res */

static void ps_put(struct strbuf *out, const void *p, size_t n)
{
	strbuf_add(out, p, n);
}

static void ps_u32(struct strbuf *out, uint32_t v)
{
	ps_put(out, &v, 4);
}

static void ps_u64(struct strbuf *out, uint64_t v)
{
	ps_put(out, &v, 8);
}

static void ps_header(struct strbuf *out, uint32_t type, uint16_t misc,
		      size_t size)
{
	uint16_t s16 = (uint16_t)size;

	ps_u32(out, type);
	ps_put(out, &misc, 2);
	ps_put(out, &s16, 2);
}

static void ps_trailer(const struct event *ev, struct strbuf *out)
{
	ps_u32(out, (uint32_t)ev->pid);
	ps_u32(out, (uint32_t)ev->tid);
	ps_u64(out, ev->time == EVENT_NO_TIME ? 0 : ev->time);
	ps_u32(out, (uint32_t)(ev->cpu < 0 ? 0 : ev->cpu));
	ps_u32(out, 0);
}

void perfdata_synth_attr(const struct event_attr *a, uint8_t *out)
{
	uint32_t type = a->type, size = PERFDATA_SYNTH_ATTR_SIZE;
	uint64_t st = PS_SAMPLE_TYPE, flags = PS_ATTR_FLAGS;
	uint64_t period = a->sample_period ? a->sample_period : 1;

	memset(out, 0, PERFDATA_SYNTH_ATTR_SIZE);
	memcpy(out, &type, 4);
	memcpy(out + 4, &size, 4);
	memcpy(out + 8, &a->config, 8);
	memcpy(out + 16, &period, 8);
	memcpy(out + 24, &st, 8);
	memcpy(out + 40, &flags, 8);
}

static size_t ps_pad8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

size_t perfdata_synth_record(const struct event *ev, struct strbuf *out)
{
	static const uint8_t zeros[8];
	size_t n, size;

	switch (ev->type) {
	case EVENT_COMM:
		n = strlen(ev->comm.comm) + 1;
		size = 8 + 8 + ps_pad8(n) + PS_TRAILER;
		ps_header(out, PD_REC_COMM, EVENT_MODE_USER |
			  (ev->comm.exec ? 1u << 13 : 0), size);
		ps_u32(out, (uint32_t)ev->pid);
		ps_u32(out, (uint32_t)ev->tid);
		ps_put(out, ev->comm.comm, n);
		ps_put(out, zeros, ps_pad8(n) - n);
		break;
	case EVENT_MMAP: {
		const struct event_mmap *m = &ev->mmap;

		n = strlen(m->filename) + 1;
		size = 8 + 64 + ps_pad8(n) + PS_TRAILER;
		ps_header(out, PD_REC_MMAP2, m->cpumode ? m->cpumode :
			  EVENT_MODE_USER, size);
		ps_u32(out, (uint32_t)ev->pid);
		ps_u32(out, (uint32_t)ev->tid);
		ps_u64(out, m->start);
		ps_u64(out, m->len);
		ps_u64(out, m->pgoff);
		ps_u32(out, m->maj);
		ps_u32(out, m->min);
		ps_u64(out, m->ino);
		ps_u64(out, m->ino_generation);
		ps_u32(out, m->prot ? m->prot : 5);   /* r-x */
		ps_u32(out, m->flags ? m->flags : 2); /* MAP_PRIVATE */
		ps_put(out, m->filename, n);
		ps_put(out, zeros, ps_pad8(n) - n);
		break;
	}
	case EVENT_FORK:
	case EVENT_EXIT:
		size = 8 + 24 + PS_TRAILER;
		ps_header(out, ev->type == EVENT_FORK ? PD_REC_FORK :
			  PD_REC_EXIT, 0, size);
		ps_u32(out, (uint32_t)ev->pid);
		ps_u32(out, (uint32_t)ev->fork.ppid);
		ps_u32(out, (uint32_t)ev->tid);
		ps_u32(out, (uint32_t)ev->fork.ptid);
		ps_u64(out, ev->time == EVENT_NO_TIME ? 0 : ev->time);
		break;
	default:
		return 0;
	}
	ps_trailer(ev, out);
	return size;
}

size_t perfdata_synth_kernel_mmap(uint64_t start, struct strbuf *out)
{
	static const char name[] = "[kernel.kallsyms]_text";
	static const uint8_t zeros[8];
	size_t n = sizeof(name), size = 8 + 32 + ps_pad8(n) + PS_TRAILER;

	ps_header(out, PD_REC_MMAP, EVENT_MODE_KERNEL, size);
	ps_u32(out, (uint32_t)-1);
	ps_u32(out, 0);
	ps_u64(out, start);
	ps_u64(out, ~0ull - start);
	ps_u64(out, start);
	ps_put(out, name, n);
	ps_put(out, zeros, ps_pad8(n) - n);
	ps_u32(out, (uint32_t)-1);
	ps_u32(out, 0);
	ps_u64(out, 0);
	ps_u64(out, 0);
	return size;
}

size_t perfdata_synth_sample(const struct event *ev, const uint64_t *cc,
			     size_t nr, struct strbuf *out)
{
	size_t size = 8 + 48 + 8 * nr;

	ps_header(out, PD_REC_SAMPLE, ev->sample.cpumode, size);
	ps_u64(out, ev->sample.ip);
	ps_u32(out, (uint32_t)ev->pid);
	ps_u32(out, (uint32_t)ev->tid);
	ps_u64(out, ev->time == EVENT_NO_TIME ? 0 : ev->time);
	ps_u32(out, (uint32_t)(ev->cpu < 0 ? 0 : ev->cpu));
	ps_u32(out, 0);
	ps_u64(out, ev->sample.period);
	ps_u64(out, nr);
	ps_put(out, cc, 8 * nr);
	return size;
}

void perfdata_synth_string(const char *s, struct strbuf *out)
{
	static const uint8_t zeros[64];
	size_t n = strlen(s) + 1, padded = (n + 63) / 64 * 64;

	ps_u32(out, (uint32_t)padded);
	ps_put(out, s, n);
	ps_put(out, zeros, padded - n);
}
