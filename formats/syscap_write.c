/*
 * syscap_write.c - sysprof capture output (see syscap_write.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats/syscap_write.h"

#include "common/hashmap.h"
#include "common/mem.h"
#include "common/strbuf.h"
#include "formats/fdout.h"
#include "formats/syscap.h"

#define SW_FLUSH_AT (1u << 20)
#define SW_MAX_ADDRS ((SYSCAP_FRAME_MAX - 32) / 8)

#define SW_KFILTER_BITS 65536u /* bits of the filter (sw_kkey()) */

struct syscap_writer {
	int fd;
	bool seekable;
	unsigned version;
	syscap_bid_fn bid_fn;
	void *bid_ctx;
	struct err err;
	struct syscap_write_stats st;
	bool begun;

	struct strbuf out;
	uint8_t *frame;         /* the frame being built */
	size_t frame_alloc;
	uint64_t *addrs;
	size_t addrs_alloc;

	int64_t first_time, last_time;
	bool have_time;
	bool pass;              /* sysprof input: frames passed through */
	bool in_kallsyms;       /* ... with its own /proc/kallsyms */
	bool in_symbols;        /* ... with its own __symbols__ */

	struct hashmap jit;     /* name hash -> key */
	uint64_t next_jit;

	struct hashmap knames;  /* hashes of the kernel frames' names */
	struct hashmap knames_at; /* the addresses of names in knames */
	uint64_t kfilter[SW_KFILTER_BITS / 64]; /* of them (sw_kkey()) */
	struct sw_usym *usyms;  /* named addresses, for __symbols__ */
	size_t nr_usyms, alloc_usyms;
	struct hashmap useen;   /* hash of (pid, address) -> index + 1 */
	struct strbuf strs;     /* __symbols__ strings, from 32 zero bytes */
	struct hashmap stroff;  /* string hash -> offset in strs */
};

/*
 * A kernel symbol's name of n bytes as a bit of knames' filter, from its
 * length and three of its bytes (names share their starts: "__x64_sys_",
 * "do_"): most lines of /proc/kallsyms are then passed over without
 * hashing their names.
 */
static unsigned sw_kkey(const char *name, size_t n)
{
	size_t k = n ? n : 1;

	return (unsigned)(n * 0x9e37u ^ (unsigned char)name[0] * 0x85ebu ^
			  (unsigned char)name[k / 2] * 0xc2b3u ^
			  (unsigned char)name[k - 1] * 0x27d5u) %
	       SW_KFILTER_BITS;
}

static void sw_kkey_set(struct syscap_writer *w, const char *name)
{
	unsigned k = sw_kkey(name, strlen(name));

	w->kfilter[k / 64] |= 1ull << (k % 64);
}

static bool sw_kkey_has(const struct syscap_writer *w, const char *name,
			size_t n)
{
	unsigned k = sw_kkey(name, n);

	return w->kfilter[k / 64] >> (k % 64) & 1;
}

/* An address of a sample and its name, for the __symbols__ file. */
struct sw_usym {
	int32_t pid;
	uint64_t addr;
	uint32_t name, tag;     /* offsets in strs */
};

static int sw_flush(struct syscap_writer *w)
{
	size_t len = w->out.len;

	if (fdout_flush(w->fd, &w->out, "sysprof output", &w->err) < 0)
		return -1;
	w->st.bytes += len;
	return 0;
}

/* The file header; times are the capture's first and last. */
static void sw_header(const struct syscap_writer *w, uint8_t *h)
{
	uint32_t magic = SYSCAP_MAGIC;
	int64_t t0 = w->have_time ? w->first_time : 0;
	int64_t t1 = w->have_time ? w->last_time : 0;
	uint16_t one = 1;
	bool le = *(const uint8_t *)&one == 1;

	memset(h, 0, SYSCAP_HEADER_SIZE);
	memcpy(h, &magic, 4);
	h[4] = 1;                       /* version */
	h[5] = le ? 0x01 : 0x80;        /* little_endian bit-field */
	/* Deterministic output: no wall-clock time of the conversion. */
	memcpy(h + 8, "1970-01-01T00:00:00Z", 20);
	memcpy(h + 72, &t0, 8);
	memcpy(h + 80, &t1, 8);
}

/* Starts a frame of len payload-and-header bytes (rounded up to 8). */
static uint8_t *sw_frame(struct syscap_writer *w, enum syscap_frame_type type,
			 size_t len, int16_t cpu, int32_t pid, int64_t time)
{
	size_t full = (len + 7) & ~(size_t)7;
	uint16_t l16 = (uint16_t)full;

	if (full > SYSCAP_FRAME_MAX) {
		err_set(&w->err, ERR_UNSUPPORTED, ERR_NO_OFF,
			"a sysprof frame of %zu bytes does not fit", full);
		return NULL;
	}
	if (mem_grow(&w->frame, &w->frame_alloc, 1, full) < 0) {
		err_set(&w->err, ERR_NOMEM, ERR_NO_OFF, "frame");
		return NULL;
	}
	memset(w->frame, 0, full);
	memcpy(w->frame, &l16, 2);
	memcpy(w->frame + 2, &cpu, 2);
	memcpy(w->frame + 4, &pid, 4);
	memcpy(w->frame + 8, &time, 8);
	w->frame[16] = (uint8_t)type;
	return w->frame;
}

static int sw_put_frame(struct syscap_writer *w)
{
	uint16_t len;

	memcpy(&len, w->frame, 2);
	strbuf_add(&w->out, w->frame, len);
	w->st.frames++;
	if (w->out.len >= SW_FLUSH_AT)
		return sw_flush(w);
	return 0;
}

/* METADATA: key char[40] at 24, NUL-terminated value at 64. */
static int sw_metadata(struct syscap_writer *w, int64_t time, const char *key,
		       const char *val)
{
	size_t n = strlen(val) + 1;
	uint8_t *f;

	if (!val[0] || n > SYSCAP_FRAME_MAX - 64)
		return 0;
	f = sw_frame(w, SYSCAP_METADATA, 64 + n, -1, -1, time);
	if (!f)
		return -1;
	memcpy(f + 24, key, strlen(key));
	memcpy(f + 64, val, n);
	return sw_put_frame(w);
}

static int sw_begin(struct syscap_writer *w, const struct perfdata_info *in,
		    int64_t time)
{
	uint8_t h[SYSCAP_HEADER_SIZE];

	w->begun = true;
	w->first_time = w->last_time = time;
	w->have_time = true;
	sw_header(w, h);
	/* end_time: filled in at the end when the output is seekable; 0
	 * (unknown, readers scan the frames) in a pipe, as sysprof does. */
	memset(h + 80, 0, 8);
	strbuf_add(&w->out, h, sizeof(h));
	if (w->pass)
		return 0;       /* the input's METADATA frames come through */
	if (in && in->hostname &&
	    sw_metadata(w, time, "hostname", in->hostname) < 0)
		return -1;
	if (in && in->osrelease &&
	    sw_metadata(w, time, "uname.release", in->osrelease) < 0)
		return -1;
	if (in && in->arch && sw_metadata(w, time, "uname.machine", in->arch) < 0)
		return -1;
	return 0;
}

/* A frame whose payload is one NUL-terminated string at 24 (PROCESS). */
static int sw_string_frame(struct syscap_writer *w, enum syscap_frame_type t,
			   int16_t cpu, int32_t pid, int64_t time,
			   const char *s)
{
	size_t n = strlen(s) + 1;
	uint8_t *f = sw_frame(w, t, 24 + n, cpu, pid, time);

	if (!f)
		return -1;
	memcpy(f + 24, s, n);
	return sw_put_frame(w);
}

static int sw_map(struct syscap_writer *w, const struct event *ev, int16_t cpu,
		  int64_t time)
{
	const struct event_mmap *m = &ev->mmap;
	uint8_t bid[20];
	unsigned nbid = 0, i;
	size_t n = strlen(m->filename) + 1, len;
	uint64_t end = m->start + m->len;
	uint8_t *f;

	if (w->version != 3) {
		if (m->build_id_size && m->build_id_size <= 20) {
			memcpy(bid, m->build_id, m->build_id_size);
			nbid = m->build_id_size;
		} else if (w->bid_fn) {
			nbid = w->bid_fn(w->bid_ctx, m->filename, bid);
		}
	}
	len = 56 + n + (nbid ? 2 + 2 * nbid : 0);
	f = sw_frame(w, SYSCAP_MAP, len, cpu, ev->pid, time);
	if (!f)
		return -1;
	memcpy(f + 24, &m->start, 8);
	memcpy(f + 32, &end, 8);
	memcpy(f + 40, &m->pgoff, 8);
	memcpy(f + 48, &m->ino, 8);
	memcpy(f + 56, m->filename, n);
	if (nbid) {
		static const char hex[] = "0123456789abcdef";
		char *p = (char *)f + 56 + n;

		*p++ = '@';
		for (i = 0; i < nbid; i++) {
			*p++ = hex[bid[i] >> 4];
			*p++ = hex[bid[i] & 15];
		}
	}
	return sw_put_frame(w);
}


/* The JITMAP key of a JIT symbol, writing its JITMAP frame when new. */
static int sw_jit_key(struct syscap_writer *w, const char *name, int32_t pid,
		      int64_t time, uint64_t *key)
{
	uint64_t h = hashmap_fnv_str(HASHMAP_FNV_SEED, name);
	void *v;
	size_t n = strlen(name) + 1;
	uint32_t one = 1;
	uint8_t *f;

	if (hashmap_get(&w->jit, h, &v)) {
		*key = (uint64_t)(uintptr_t)v;
		return 0;
	}
	if (n > SYSCAP_FRAME_MAX - 40)
		n = SYSCAP_FRAME_MAX - 40;
	*key = SYSCAP_JITMAP_MARK | ++w->next_jit;
	if (hashmap_put(&w->jit, h, (void *)(uintptr_t)*key) < 0)
		return err_set(&w->err, ERR_NOMEM, ERR_NO_OFF, "JIT names");
	f = sw_frame(w, SYSCAP_JITMAP, 28 + 8 + n, -1, pid, time);
	if (!f)
		return -1;
	memcpy(f + 24, &one, 4);
	memcpy(f + 28, key, 8);
	memcpy(f + 36, name, n - 1);
	w->st.jit_symbols++;
	return sw_put_frame(w);
}

/* The offset of s in the __symbols__ strings, added when new; 0: none. */
static uint32_t sw_str(struct syscap_writer *w, const char *s)
{
	uint64_t h = hashmap_fnv_str(HASHMAP_FNV_SEED, s);
	size_t n = strlen(s) + 1;
	void *v;

	if (hashmap_get(&w->stroff, h, &v) &&
	    !strcmp(w->strs.buf + (uintptr_t)v, s))
		return (uint32_t)(uintptr_t)v;
	if (!w->strs.len)
		strbuf_add(&w->strs, (const char [SYSCAP_SYM_RECORD]){ 0 },
			   SYSCAP_SYM_RECORD);
	if (w->strs.len + n > UINT32_MAX / 2 ||
	    hashmap_put(&w->stroff, h, (void *)(uintptr_t)w->strs.len) < 0)
		return 0;
	strbuf_add(&w->strs, s, n);
	return (uint32_t)(w->strs.len - n);
}

/*
 * Notes the names of a sample's frames for the files that let another
 * machine name them: kernel names for /proc/kallsyms; addresses with
 * their function (the outermost of an inline chain) for __symbols__, as
 * sysprof 3.46 fills it: user and kernel ones, by process.
 */
static int sw_note_names(struct syscap_writer *w, const struct event *ev,
			 const struct rsample *rs)
{
	uint32_t i;

	for (i = 0; i < rs->nr_frames; i++) {
		const struct sym_loc *l = rs->frames[i].loc;
		const char *name = l && l->nr ? l->e[l->nr - 1].name : NULL;
		uint64_t h, a = rs->frames[i].pc;
		struct sw_usym *u;
		void *v;

		if (!name)
			continue;
		if (i < rs->nr_kernel) {
			if (l->kind != SYM_KERNEL)
				continue;
			/* a name's text is hashed once */
			if (!hashmap_get(&w->knames_at, (uintptr_t)name,
					 NULL)) {
				h = hashmap_fnv_str(HASHMAP_FNV_SEED, name);
				if (hashmap_put(&w->knames, h, (void *)1) < 0 ||
				    hashmap_put(&w->knames_at,
						(uintptr_t)name, NULL) < 0)
					return -1;
				sw_kkey_set(w, name);
			}
			/* and in __symbols__: sysprof 3.46 names kernel
			 * frames from there, not from /proc/kallsyms */
		} else if (l->kind != SYM_USER) {
			continue;
		}
		h = hashmap_mix(a ^ hashmap_mix((uint32_t)ev->pid));
		if (hashmap_get(&w->useen, h, &v)) {
			u = &w->usyms[(uintptr_t)v - 1];
			if (u->pid == ev->pid && u->addr == a)
				continue;
		}
		if (mem_grow(&w->usyms, &w->alloc_usyms, sizeof(*w->usyms),
			     w->nr_usyms + 1) < 0)
			return -1;
		u = &w->usyms[w->nr_usyms];
		u->pid = ev->pid;
		u->addr = a;
		u->name = sw_str(w, name);
		u->tag = l->module ? sw_str(w, l->module) : 0;
		if (!u->name)
			continue;
		w->nr_usyms++;
		if (hashmap_put(&w->useen, h,
				(void *)(uintptr_t)w->nr_usyms) < 0)
			return -1;
	}
	return 0;
}

static int sw_sample(struct syscap_writer *w, const struct event *ev,
		     const struct rsample *rs, int16_t cpu, int64_t time)
{
	uint32_t i, nk = rs->nr_kernel, nu = rs->nr_frames - rs->nr_kernel;
	size_t n = 0, need = nk + nu + 2;
	uint16_t n16;
	uint8_t *f;

	if (mem_grow(&w->addrs, &w->addrs_alloc, sizeof(*w->addrs), need) < 0 ||
	    sw_note_names(w, ev, rs) < 0)
		return err_set(&w->err, ERR_NOMEM, ERR_NO_OFF, "sample");
	if (nk) {
		w->addrs[n++] = EVENT_CONTEXT_KERNEL;
		for (i = 0; i < nk; i++)
			w->addrs[n++] = rs->frames[i].pc;
	}
	if (nu) {
		w->addrs[n++] = EVENT_CONTEXT_USER;
		for (i = nk; i < rs->nr_frames; i++) {
			const struct sym_loc *l = rs->frames[i].loc;
			uint64_t a = rs->frames[i].pc;

			if (l && l->kind == SYM_JIT && l->nr &&
			    l->e[l->nr - 1].name &&
			    sw_jit_key(w, l->e[l->nr - 1].name, ev->pid, time,
				       &a) < 0)
				return -1;
			w->addrs[n++] = a;
		}
	}
	if (n > SW_MAX_ADDRS) {
		n = SW_MAX_ADDRS;
		w->st.cut_samples++;
	}
	f = sw_frame(w, SYSCAP_SAMPLE, 32 + 8 * n, cpu, ev->pid, time);
	if (!f)
		return -1;
	n16 = (uint16_t)n;
	memcpy(f + 24, &n16, 2);
	memcpy(f + 28, &ev->tid, 4);
	memcpy(f + 32, w->addrs, 8 * n);
	w->st.samples++;
	return sw_put_frame(w);
}

/*
 * A sysprof input's frame: a raw user stack becomes a SAMPLE frame with
 * its resolved stack (the sampled ip alone when it has none); any other
 * frame is copied as it is (the input's own /proc/kallsyms and
 * __symbols__ then stand for the writer's).  Events made up by the
 * reader (JIT names, thread names) have no frame and are not written.
 */
static int sw_pass(struct syscap_writer *w, const struct perfdata_info *in,
		   const struct event *ev, const struct rsample *rs,
		   int16_t cpu, int64_t time)
{
	if (!ev->raw || ev->raw_len < SYSCAP_FRAME_HEADER_SIZE)
		return 0;
	if (!w->begun && sw_begin(w, in, time) < 0)
		return -1;
	if (ev->type == EVENT_SAMPLE && ev->rec_type == SYSCAP_STACK_USER) {
		struct rframe ip = { .pc = ev->sample.ip,
				     .origin = FRAME_SAMPLE };
		struct rsample one = { .nr_frames = 1, .frames = &ip };

		return sw_sample(w, ev, rs ? rs : &one, cpu, time);
	}
	if (ev->rec_type == SYSCAP_FILE_CHUNK &&
	    ev->raw_len >= SYSCAP_CHUNK_DATA) {
		const char *path = (const char *)ev->raw + 28;

		if (!strncmp(path, SYSCAP_KALLSYMS_PATH, SYSCAP_CHUNK_PATH))
			w->in_kallsyms = true;
		if (!strncmp(path, SYSCAP_SYMBOLS_PATH, SYSCAP_CHUNK_PATH))
			w->in_symbols = true;
	}
	if (ev->type == EVENT_SAMPLE) {
		if (rs && sw_note_names(w, ev, rs) < 0)
			return err_set(&w->err, ERR_NOMEM, ERR_NO_OFF,
				       "sample");
		w->st.samples++;
	}
	strbuf_add(&w->out, ev->raw, ev->raw_len);
	w->st.frames++;
	if (w->out.len >= SW_FLUSH_AT)
		return sw_flush(w);
	return 0;
}

void syscap_writer_passthrough(struct syscap_writer *w)
{
	if (w->begun)
		return;
	w->pass = true;
	/* the input's JITMAP keys stay: new ones are above them */
	w->next_jit = 1ull << 40;
}

int syscap_writer_flush(struct syscap_writer *w)
{
	return w->out.len ? sw_flush(w) : 0;
}

int syscap_writer_event(struct syscap_writer *w,
			const struct perfdata_info *in,
			const struct event *ev, const struct rsample *rs)
{
	int64_t time;
	int16_t cpu = ev->cpu >= 0 && ev->cpu < 32768 ? (int16_t)ev->cpu : -1;

	if (ev->time != EVENT_NO_TIME && (int64_t)ev->time >= 0) {
		time = (int64_t)ev->time;
		if (w->have_time && time > w->last_time)
			w->last_time = time;
		if (w->have_time && time < w->first_time)
			w->first_time = time;
	} else {
		time = w->have_time ? w->last_time : 0;
	}
	if (w->pass)
		return sw_pass(w, in, ev, rs, cpu, time);
	/* Header and METADATA wait for the first frame: a pipe-mode perf.data
	 * names its host in records read before that. */
	if (ev->type != EVENT_SAMPLE && ev->type != EVENT_COMM &&
	    ev->type != EVENT_FORK && ev->type != EVENT_EXIT &&
	    ev->type != EVENT_MMAP)
		return 0;
	if (!w->begun && sw_begin(w, in, time) < 0)
		return -1;
	switch (ev->type) {
	case EVENT_SAMPLE:
		return rs ? sw_sample(w, ev, rs, cpu, time) : 0;
	case EVENT_COMM:
		if (ev->pid != ev->tid || ev->pid < 0 || !ev->comm.comm)
			return 0;
		return sw_string_frame(w, SYSCAP_PROCESS, cpu, ev->pid, time,
				       ev->comm.comm);
	case EVENT_FORK: {
		uint8_t *f;

		if (ev->tid < 0)
			return 0;
		f = sw_frame(w, SYSCAP_FORK, 28, cpu, ev->fork.ptid, time);
		if (!f)
			return -1;
		memcpy(f + 24, &ev->tid, 4);
		return sw_put_frame(w);
	}
	case EVENT_EXIT:
		if (ev->pid != ev->tid || ev->pid < 0)
			return 0;
		if (!sw_frame(w, SYSCAP_EXIT, 24, cpu, ev->pid, time))
			return -1;
		return sw_put_frame(w);
	case EVENT_MMAP:
		if (!ev->mmap.executable || ev->pid < 0 ||
		    ev->mmap.cpumode == EVENT_MODE_KERNEL ||
		    ev->mmap.cpumode == EVENT_MODE_GUEST_KERNEL)
			return 0;
		return sw_map(w, ev, cpu, time);
	default:
		return 0;
	}
}

/*
 * An embedded file as sysprof's writer cuts it: FILE_CHUNK frames of up
 * to SYSCAP_CHUNK_SIZE bytes, then an empty one marked last.
 */
static int sw_file(struct syscap_writer *w, const char *path,
		   const void *data, size_t size)
{
	size_t done = 0;

	for (;;) {
		size_t n = size - done < SYSCAP_CHUNK_SIZE ? size - done :
							     SYSCAP_CHUNK_SIZE;
		uint32_t bits = (uint32_t)n << 16 | (n == 0);
		uint8_t *f = sw_frame(w, SYSCAP_FILE_CHUNK,
				      SYSCAP_CHUNK_DATA + n, -1, -1,
				      w->last_time);

		if (!f)
			return -1;
		memcpy(f + 24, &bits, 4);
		memcpy(f + 28, path, strlen(path));
		memcpy(f + SYSCAP_CHUNK_DATA, (const uint8_t *)data + done, n);
		if (sw_put_frame(w) < 0)
			return -1;
		if (!n)
			return 0;
		done += n;
	}
}

static int sw_usym_cmp(const void *a, const void *b)
{
	const struct sw_usym *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/*
 * The __symbols__ file: the named addresses sorted by (pid, address),
 * a run of one name in one process becoming one record from its first to
 * its last address (as sysprof 3.46 serializes its symbol map).
 */
static int sw_symbols(struct syscap_writer *w)
{
	struct strbuf rec;
	size_t i, begin = 0, nrec = 0;
	uint32_t pad = 0;
	int rc;

	if (!w->nr_usyms || w->in_symbols)
		return 0;
	qsort(w->usyms, w->nr_usyms, sizeof(*w->usyms), sw_usym_cmp);
	for (i = 0; i < w->nr_usyms; i++)
		nrec += i + 1 == w->nr_usyms ||
			w->usyms[i + 1].pid != w->usyms[i].pid ||
			w->usyms[i + 1].name != w->usyms[i].name;
	if (nrec * SYSCAP_SYM_RECORD + w->strs.len > UINT32_MAX / 2)
		return 0;       /* offsets would not fit: leave it out */
	strbuf_init(&rec);
	for (i = 0; i < w->nr_usyms; i++) {
		const struct sw_usym *u = &w->usyms[i];
		uint32_t base = (uint32_t)(nrec * SYSCAP_SYM_RECORD);
		uint32_t name = base + u->name;
		uint32_t tag = u->tag ? base + u->tag : 0;

		if (i + 1 < w->nr_usyms && w->usyms[i + 1].pid == u->pid &&
		    w->usyms[i + 1].name == u->name)
			continue;
		strbuf_add(&rec, &w->usyms[begin].addr, 8);
		strbuf_add(&rec, &u->addr, 8);
		strbuf_add(&rec, &u->pid, 4);
		strbuf_add(&rec, &name, 4);
		strbuf_add(&rec, &tag, 4);
		strbuf_add(&rec, &pad, 4);
		begin = i + 1;
	}
	/* strs starts with the all-zero record that ends the table */
	strbuf_add(&rec, w->strs.buf, w->strs.len);
	rc = sw_file(w, SYSCAP_SYMBOLS_PATH, rec.buf, rec.len);
	strbuf_release(&rec);
	return rc;
}

/* The length of a kallsyms line's name (at s), up to a tab or newline. */
static size_t sw_kname_len(const char *s, const char *end)
{
	const char *tab = memchr(s, '\t', (size_t)(end - s));

	return (size_t)((tab ? tab : end) - s);
}

bool syscap_writer_has_kernel(const struct syscap_writer *w)
{
	return w->knames.nr > 0;
}

/*
 * The hex number at p (before le), as strtoull(p, &q, 16) reads a kallsyms
 * address, without its locale and sign handling (a tenth of the cost):
 * *q is where it ends, p when there is none.
 */
static unsigned long long sw_hex(const char *p, const char *le, char **q)
{
	unsigned long long v = 0;
	const char *s = p;

	for (; s < le; s++) {
		unsigned d;

		if (*s >= '0' && *s <= '9')
			d = (unsigned)(*s - '0');
		else if ((*s | 0x20) >= 'a' && (*s | 0x20) <= 'f')
			d = (unsigned)((*s | 0x20) - 'a' + 10);
		else
			break;
		v = v << 4 | d;
	}
	*q = (char *)s;
	return v;
}

int syscap_writer_kallsyms(struct syscap_writer *w, const char *text,
			   size_t len)
{
	const char *p = text, *end = text + len;
	struct strbuf out;
	uint64_t after = 0;
	bool want_next = false;
	int rc;

	if (!w->knames.nr || w->in_kallsyms)
		return 0;
	sw_kkey_set(w, "_text");
	strbuf_init(&out);
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end, *name;
		unsigned long long addr;
		char *q;
		bool keep = false;
		void *v;

		addr = sw_hex(p, le, &q);
		/* "ADDR TYPE NAME[\t[module]]" */
		if (q > p && q + 3 <= le && q[0] == ' ' && q[2] == ' ') {
			size_t n;

			name = q + 3;
			if (want_next && addr > after) {
				keep = true;
				want_next = false;
			}
			n = sw_kname_len(name, le);
			if (!n || !sw_kkey_has(w, name, n))
				goto next;      /* not a name of ours */
			/* _text too: where readers place the kernel */
			if ((n == 5 && !memcmp(name, "_text", 5)) ||
			    hashmap_get(&w->knames,
					hashmap_fnv(HASHMAP_FNV_SEED, name, n),
					&v)) {
				keep = true;
				want_next = true;
				after = addr;
			}
		}
next:
		if (keep) {
			strbuf_add(&out, p, (size_t)(le - p));
			strbuf_addch(&out, '\n');
		}
		p = nl ? nl + 1 : end;
	}
	rc = out.len ? sw_file(w, SYSCAP_KALLSYMS_PATH, out.buf, out.len) : 0;
	strbuf_release(&out);
	return rc;
}

int syscap_writer_finish(struct syscap_writer *w)
{
	uint8_t h[SYSCAP_HEADER_SIZE];

	if (!w->begun && sw_begin(w, NULL, 0) < 0)
		return -1;
	if (sw_symbols(w) < 0)
		return -1;
	if (sw_flush(w) < 0)
		return -1;
	if (w->seekable) {
		sw_header(w, h);
		if (pwrite(w->fd, h, sizeof(h), 0) != (ssize_t)sizeof(h))
			return err_sys(&w->err, errno,
				       "cannot write the header");
	}
	return 0;
}

struct syscap_writer *syscap_writer_new(int fd,
					const struct syscap_write_opts *opts,
					syscap_bid_fn bid_fn, void *ctx,
					struct err *err)
{
	struct syscap_writer *w = calloc(1, sizeof(*w));

	if (!w) {
		err_set(err, ERR_NOMEM, ERR_NO_OFF, "out of memory");
		return NULL;
	}
	w->fd = fd;
	w->seekable = lseek(fd, 0, SEEK_CUR) == 0;
	w->version = opts ? opts->version : 0;
	w->bid_fn = bid_fn;
	w->bid_ctx = ctx;
	strbuf_init(&w->out);
	strbuf_init(&w->strs);
	return w;
}

const struct err *syscap_writer_err(const struct syscap_writer *w)
{
	return &w->err;
}

const struct syscap_write_stats *
syscap_writer_stats(const struct syscap_writer *w)
{
	return &w->st;
}

void syscap_writer_free(struct syscap_writer *w)
{
	if (!w)
		return;
	strbuf_release(&w->out);
	free(w->frame);
	free(w->addrs);
	hashmap_release(&w->jit);
	hashmap_release(&w->knames);
	hashmap_release(&w->knames_at);
	hashmap_release(&w->useen);
	hashmap_release(&w->stroff);
	strbuf_release(&w->strs);
	free(w->usyms);
	free(w);
}
