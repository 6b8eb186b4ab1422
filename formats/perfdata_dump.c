/*
 * perfdata_dump.c - one text line per perf.data record, for `restack dump`.
 *
 * Line format (documented in docs/usage.md):
 *   OFFSET TIME TYPE field=value ...
 * OFFSET is the record's file offset in hex, with a 'z' suffix when the
 * record came out of the COMPRESSED record at that offset; TIME is
 * seconds.nanoseconds or '-'.  Strings are double-quoted with C escapes.
 */
#include <string.h>

#include "formats/perfdata_internal.h"

static void pd_quote(struct strbuf *out, const char *s)
{
	strbuf_addch(out, '"');
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			strbuf_addf(out, "\\%c", ch);
		else if (ch < 0x20 || ch >= 0x7f)
			strbuf_addf(out, "\\x%02x", ch);
		else
			strbuf_addch(out, (char)ch);
	}
	strbuf_addch(out, '"');
}

/* A fixed-size or NUL-terminated string from the record, quoted. */
static void pd_quote_cur(struct strbuf *out, struct cur *c)
{
	const uint8_t *nul = memchr(c->p, '\0', cur_left(c));
	size_t n = nul ? (size_t)(nul - c->p) : cur_left(c);
	char buf[4096];

	n = MIN(n, sizeof(buf) - 1);
	memcpy(buf, c->p, n);
	buf[n] = '\0';
	pd_quote(out, buf);
	cur_skip(c, nul ? (size_t)(nul - c->p) + 1 : cur_left(c));
}

static void pd_hex(struct strbuf *out, const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		strbuf_addf(out, "%02x", p[i]);
}

static const char *pd_mode_name(unsigned mode)
{
	static const char *const names[] = {
		"unknown", "kernel", "user", "hv", "guest-kernel", "guest-user",
	};

	return mode < ARRAY_SIZE(names) ? names[mode] : "mode?";
}

static void pd_u64_list(struct strbuf *out, const char *key,
			const uint64_t *v, uint64_t n)
{
	uint64_t i;

	strbuf_addf(out, " %s=", key);
	if (n == 0)
		strbuf_addch(out, '-');
	for (i = 0; i < n; i++)
		strbuf_addf(out, "%s0x%llx", i ? "," : "",
			    (unsigned long long)v[i]);
}

static void pd_format_sample(const struct event *ev, struct strbuf *out)
{
	const struct event_sample *s = &ev->sample;
	uint64_t st = ev->attr->sample_type;

	strbuf_addf(out, " mode=%s", pd_mode_name(s->cpumode));
	if (st & PD_SAMPLE_TID)
		strbuf_addf(out, " pid=%d tid=%d", ev->pid, ev->tid);
	if (st & PD_SAMPLE_CPU)
		strbuf_addf(out, " cpu=%d", ev->cpu);
	if (st & PD_SAMPLE_IP)
		strbuf_addf(out, " ip=0x%llx", (unsigned long long)s->ip);
	if (st & PD_SAMPLE_ADDR)
		strbuf_addf(out, " addr=0x%llx", (unsigned long long)s->addr);
	if (st & (PD_SAMPLE_ID | PD_SAMPLE_IDENTIFIER))
		strbuf_addf(out, " id=%llu", (unsigned long long)s->id);
	if (st & PD_SAMPLE_STREAM_ID)
		strbuf_addf(out, " stream_id=%llu",
			    (unsigned long long)s->stream_id);
	if (st & PD_SAMPLE_PERIOD)
		strbuf_addf(out, " period=%llu", (unsigned long long)s->period);
	if (st & PD_SAMPLE_READ)
		pd_u64_list(out, "read", s->read_values, s->read_nr);
	if (st & PD_SAMPLE_CALLCHAIN)
		pd_u64_list(out, "callchain", s->callchain, s->callchain_nr);
	if (st & PD_SAMPLE_RAW)
		strbuf_addf(out, " raw=%u", s->raw_size);
	if (st & PD_SAMPLE_BRANCH_STACK) {
		uint64_t i;

		strbuf_addf(out, " branches=%llu",
			    (unsigned long long)s->branch_nr);
		for (i = 0; i < s->branch_nr; i++)
			strbuf_addf(out, "%s0x%llx>0x%llx", i ? "," : ":",
				    (unsigned long long)s->branches[i].from,
				    (unsigned long long)s->branches[i].to);
	}
	if (st & PD_SAMPLE_REGS_USER)
		strbuf_addf(out, " regs_user=abi%llu/%u",
			    (unsigned long long)s->regs_user_abi,
			    s->regs_user_nr);
	if (st & PD_SAMPLE_STACK_USER)
		strbuf_addf(out, " stack=%llu/%llu",
			    (unsigned long long)s->stack_size,
			    (unsigned long long)s->stack_dyn_size);
	if (st & (PD_SAMPLE_WEIGHT | PD_SAMPLE_WEIGHT_STRUCT))
		strbuf_addf(out, " weight=%llu", (unsigned long long)s->weight);
	if (st & PD_SAMPLE_DATA_SRC)
		strbuf_addf(out, " data_src=0x%llx",
			    (unsigned long long)s->data_src);
	if (st & PD_SAMPLE_TRANSACTION)
		strbuf_addf(out, " transaction=0x%llx",
			    (unsigned long long)s->transaction);
	if (st & PD_SAMPLE_REGS_INTR)
		strbuf_addf(out, " regs_intr=abi%llu/%u",
			    (unsigned long long)s->regs_intr_abi,
			    s->regs_intr_nr);
	if (st & PD_SAMPLE_PHYS_ADDR)
		strbuf_addf(out, " phys_addr=0x%llx",
			    (unsigned long long)s->phys_addr);
	if (st & PD_SAMPLE_CGROUP)
		strbuf_addf(out, " cgroup=%llu", (unsigned long long)s->cgroup);
	if (st & PD_SAMPLE_DATA_PAGE_SIZE)
		strbuf_addf(out, " data_page_size=%llu",
			    (unsigned long long)s->data_page_size);
	if (st & PD_SAMPLE_CODE_PAGE_SIZE)
		strbuf_addf(out, " code_page_size=%llu",
			    (unsigned long long)s->code_page_size);
	if (st & PD_SAMPLE_AUX)
		strbuf_addf(out, " aux=%llu", (unsigned long long)s->aux_size);
}

static void pd_format_mmap(const struct event *ev, struct strbuf *out)
{
	const struct event_mmap *m = &ev->mmap;

	strbuf_addf(out, " pid=%d tid=%d start=0x%llx len=0x%llx pgoff=0x%llx",
		    ev->pid, ev->tid, (unsigned long long)m->start,
		    (unsigned long long)m->len, (unsigned long long)m->pgoff);
	if (m->is_mmap2) {
		if (m->build_id_size) {
			strbuf_addstr(out, " build_id=");
			pd_hex(out, m->build_id, m->build_id_size);
		} else {
			strbuf_addf(out, " dev=%x:%x ino=%llu ino_gen=%llu",
				    m->maj, m->min,
				    (unsigned long long)m->ino,
				    (unsigned long long)m->ino_generation);
		}
		strbuf_addf(out, " prot=%c%c%c flags=0x%x",
			    m->prot & 1 ? 'r' : '-', m->prot & 2 ? 'w' : '-',
			    m->prot & 4 ? 'x' : '-', m->flags);
	}
	if (!m->executable)
		strbuf_addstr(out, " data");
	strbuf_addstr(out, " file=");
	pd_quote(out, m->filename);
}

/* Decodes the body of a record the reader passes on as EVENT_OTHER. */
static void pd_format_other(const struct perfdata_reader *r,
			    const struct event *ev, struct strbuf *out)
{
	struct cur c = cur_make(ev->raw + 8, ev->raw_len - 8,
				ev->file_off + 8, r->info.swap);
	uint32_t type = ev->rec_type;

	if (ev->attr && ev->attr->sample_id_all && type <= PD_REC_KERNEL_MAX) {
		unsigned t = pd_sample_id_trailer_size(ev->attr->sample_type);

		if (cur_left(&c) >= t)
			c.end -= t;
	}
	switch (type) {
	case PD_REC_THROTTLE:
	case PD_REC_UNTHROTTLE: {
		uint64_t t = cur_u64(&c), id = cur_u64(&c);
		uint64_t sid = cur_u64(&c);

		strbuf_addf(out, " time=%llu id=%llu stream_id=%llu",
			    (unsigned long long)t, (unsigned long long)id,
			    (unsigned long long)sid);
		break;
	}
	case PD_REC_READ: {
		uint32_t pid = cur_u32(&c), tid = cur_u32(&c);

		strbuf_addf(out, " pid=%u tid=%u values=", pid, tid);
		while (cur_left(&c) >= 8) {
			uint64_t v = cur_u64(&c);

			strbuf_addf(out, "%llu%s", (unsigned long long)v,
				    cur_left(&c) >= 8 ? "," : "");
		}
		break;
	}
	case PD_REC_AUX: {
		uint64_t off = cur_u64(&c), size = cur_u64(&c);
		uint64_t fl = cur_u64(&c);

		strbuf_addf(out, " aux_offset=0x%llx aux_size=%llu flags=0x%llx",
			    (unsigned long long)off, (unsigned long long)size,
			    (unsigned long long)fl);
		break;
	}
	case PD_REC_ITRACE_START: {
		uint32_t pid = cur_u32(&c), tid = cur_u32(&c);

		strbuf_addf(out, " pid=%u tid=%u", pid, tid);
		break;
	}
	case PD_REC_SWITCH:
		strbuf_addf(out, " %s%s",
			    ev->misc & PD_MISC_SWITCH_OUT ? "out" : "in",
			    ev->misc & PD_MISC_SWITCH_OUT_PREEMPT ?
				    " preempt" : "");
		break;
	case PD_REC_SWITCH_CPU_WIDE: {
		uint32_t pid = cur_u32(&c), tid = cur_u32(&c);

		strbuf_addf(out, " %s %s_pid=%u %s_tid=%u",
			    ev->misc & PD_MISC_SWITCH_OUT ? "out" : "in",
			    ev->misc & PD_MISC_SWITCH_OUT ? "next" : "prev",
			    pid,
			    ev->misc & PD_MISC_SWITCH_OUT ? "next" : "prev",
			    tid);
		break;
	}
	case PD_REC_NAMESPACES: {
		uint32_t pid = cur_u32(&c), tid = cur_u32(&c);
		uint64_t nr = cur_u64(&c);

		strbuf_addf(out, " pid=%u tid=%u nr=%llu", pid, tid,
			    (unsigned long long)nr);
		break;
	}
	case PD_REC_KSYMBOL: {
		uint64_t addr = cur_u64(&c);
		uint32_t len = cur_u32(&c);
		uint16_t kt = cur_u16(&c), fl = cur_u16(&c);

		strbuf_addf(out, " addr=0x%llx len=%u ksym_type=%u flags=%u name=",
			    (unsigned long long)addr, len, kt, fl);
		pd_quote_cur(out, &c);
		break;
	}
	case PD_REC_BPF_EVENT: {
		uint16_t t = cur_u16(&c), fl = cur_u16(&c);
		uint32_t id = cur_u32(&c);

		strbuf_addf(out, " type=%u flags=%u id=%u", t, fl, id);
		break;
	}
	case PD_REC_CGROUP: {
		uint64_t id = cur_u64(&c);

		strbuf_addf(out, " id=%llu path=", (unsigned long long)id);
		pd_quote_cur(out, &c);
		break;
	}
	case PD_REC_TEXT_POKE: {
		uint64_t addr = cur_u64(&c);
		uint16_t ol = cur_u16(&c), nl = cur_u16(&c);

		strbuf_addf(out, " addr=0x%llx old_len=%u new_len=%u",
			    (unsigned long long)addr, ol, nl);
		break;
	}
	case PD_REC_AUX_OUTPUT_HW_ID:
		strbuf_addf(out, " hw_id=%llu",
			    (unsigned long long)cur_u64(&c));
		break;
	case PD_REC_CALLCHAIN_DEFERRED: {
		uint64_t cookie = cur_u64(&c), nr = cur_u64(&c);

		strbuf_addf(out, " cookie=%llu nr=%llu",
			    (unsigned long long)cookie, (unsigned long long)nr);
		break;
	}
	case PD_REC_HEADER_ATTR: {
		uint32_t atype, asize;
		uint64_t config, st;

		atype = cur_u32(&c);
		asize = cur_u32(&c);
		config = cur_u64(&c);
		cur_skip(&c, 8);
		st = cur_u64(&c);
		strbuf_addf(out, " type=%u size=%u config=0x%llx sample_type=",
			    atype, asize, (unsigned long long)config);
		perfdata_sample_type_str(st, out);
		if (asize >= PD_ATTR_VER0_SIZE &&
		    ev->raw_len >= 8u + asize)
			strbuf_addf(out, " ids=%zu",
				    (ev->raw_len - 8 - asize) / 8);
		break;
	}
	case PD_REC_HEADER_FEATURE: {
		uint64_t id = cur_u64(&c);
		const char *name = id < PERFDATA_FEAT_MAX ?
					   perfdata_feature_name((unsigned)id) :
					   NULL;

		strbuf_addf(out, " feature=%llu", (unsigned long long)id);
		if (name)
			strbuf_addf(out, "(%s)", name);
		strbuf_addf(out, " size=%zu", cur_left(&c));
		break;
	}
	case PD_REC_HEADER_TRACING_DATA:
		strbuf_addf(out, " size=%u", cur_u32(&c));
		break;
	case PD_REC_ID_INDEX:
		strbuf_addf(out, " nr=%llu", (unsigned long long)cur_u64(&c));
		break;
	case PD_REC_AUXTRACE: {
		uint64_t size = cur_u64(&c), off = cur_u64(&c);
		uint64_t ref = cur_u64(&c);
		uint32_t idx = cur_u32(&c), tid = cur_u32(&c);
		uint32_t cpu = cur_u32(&c);

		strbuf_addf(out, " size=%llu offset=0x%llx ref=0x%llx idx=%u "
			    "tid=%u cpu=%u",
			    (unsigned long long)size, (unsigned long long)off,
			    (unsigned long long)ref, idx, tid, cpu);
		break;
	}
	case PD_REC_THREAD_MAP:
		strbuf_addf(out, " nr=%llu", (unsigned long long)cur_u64(&c));
		break;
	case PD_REC_CPU_MAP:
		strbuf_addf(out, " map_type=%u", cur_u16(&c));
		break;
	case PD_REC_EVENT_UPDATE: {
		uint64_t t = cur_u64(&c), id = cur_u64(&c);

		strbuf_addf(out, " update=%llu id=%llu",
			    (unsigned long long)t, (unsigned long long)id);
		if (t == 0 || t == 2) {
			strbuf_addstr(out, t ? " name=" : " unit=");
			pd_quote_cur(out, &c);
		}
		break;
	}
	case PD_REC_TIME_CONV: {
		uint64_t shift = cur_u64(&c), mult = cur_u64(&c);
		uint64_t zero = cur_u64(&c);

		strbuf_addf(out, " time_shift=%llu time_mult=%llu time_zero=%llu",
			    (unsigned long long)shift, (unsigned long long)mult,
			    (unsigned long long)zero);
		break;
	}
	case PD_REC_STAT_ROUND: {
		uint64_t t = cur_u64(&c), tm = cur_u64(&c);

		strbuf_addf(out, " type=%llu time=%llu",
			    (unsigned long long)t, (unsigned long long)tm);
		break;
	}
	case PD_REC_COMPRESSED:
		strbuf_addf(out, " size=%zu", cur_left(&c));
		break;
	case PD_REC_COMPRESSED2:
		strbuf_addf(out, " data_size=%llu",
			    (unsigned long long)cur_u64(&c));
		break;
	default:
		if (!perfdata_record_name(type) || cur_left(&c))
			strbuf_addf(out, " size=%zu", ev->raw_len);
		break;
	}
}

void perfdata_format_event(const struct perfdata_reader *r,
			   const struct event *ev, struct strbuf *out)
{
	const char *name = perfdata_record_name(ev->rec_type);

	strbuf_addf(out, "0x%llx%s ", (unsigned long long)ev->file_off,
		    ev->compressed ? "z" : "");
	if (ev->time == EVENT_NO_TIME)
		strbuf_addstr(out, "-");
	else
		strbuf_addf(out, "%llu.%09llu",
			    (unsigned long long)(ev->time / 1000000000),
			    (unsigned long long)(ev->time % 1000000000));
	if (name)
		strbuf_addf(out, " %s", name);
	else
		strbuf_addf(out, " UNKNOWN(%u)", ev->rec_type);
	if (ev->attr && ev->type == EVENT_SAMPLE) {
		strbuf_addstr(out, " event=");
		pd_quote(out, ev->attr->name ? ev->attr->name : "?");
	}

	switch (ev->type) {
	case EVENT_SAMPLE:
		pd_format_sample(ev, out);
		return;
	case EVENT_MMAP:
		pd_format_mmap(ev, out);
		return;
	case EVENT_COMM:
		strbuf_addf(out, " pid=%d tid=%d comm=", ev->pid, ev->tid);
		pd_quote(out, ev->comm.comm);
		if (ev->comm.exec)
			strbuf_addstr(out, " exec");
		return;
	case EVENT_FORK:
	case EVENT_EXIT:
		strbuf_addf(out, " pid=%d ppid=%d tid=%d ptid=%d", ev->pid,
			    ev->fork.ppid, ev->tid, ev->fork.ptid);
		return;
	case EVENT_LOST:
		if (ev->lost.samples)
			strbuf_addf(out, " lost=%llu",
				    (unsigned long long)ev->lost.lost);
		else
			strbuf_addf(out, " id=%llu lost=%llu",
				    (unsigned long long)ev->lost.id,
				    (unsigned long long)ev->lost.lost);
		return;
	case EVENT_BUILD_ID:
		strbuf_addf(out, " pid=%d mode=%s build_id=",
			    ev->build_id.pid,
			    pd_mode_name(ev->build_id.cpumode));
		pd_hex(out, ev->build_id.build_id, ev->build_id.build_id_size);
		strbuf_addstr(out, " file=");
		pd_quote(out, ev->build_id.filename);
		return;
	default:
		pd_format_other(r, ev, out);
		return;
	}
}
