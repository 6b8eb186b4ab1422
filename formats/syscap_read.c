/*
 * syscap_read.c - sysprof captures in, events out (see syscap_read.h).
 *
 * Opening walks every frame (checking lengths, so a damaged file is
 * refused before any event is delivered) and reads the METADATA and
 * JITMAP frames.  syscap_next() then walks the file twice more: MAP and
 * PROCESS frames first, then the others, each walk through a reorder
 * window (formats/syscap_order.h) that gives them by time, and decodes
 * one frame at a time from the mapped file.  Memory does not grow with
 * the number of frames: the window is bounded by bytes read, and the
 * pages of the file behind it are let go (MADV_DONTNEED: they stay in the
 * page cache, and a pointer into them, an event's raw bytes or a JIT
 * name, stays good).
 *
 * A stream is read into a buffer that holds its bytes from the oldest
 * frame still waiting in the window (syscap_order_done_off()) on, moved
 * down as they go: the frame delivered last stays good until the next
 * syscap_next().  Frames are checked one at a time as they come (the
 * file's first walk's checks, sr_seen()).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "formats/syscap_read.h"

#include "common/cur.h"
#include "common/input.h"
#include "common/hashmap.h"
#include "common/mem.h"
#include "common/readahead.h"
#include "formats/syscap.h"
#include "formats/syscap_order.h"

/*
 * Where JITMAP names go: JIT name i of the capture is the code at
 * SR_JIT_BASE + 16 i + 8 (a return address minus 1 stays inside it).
 */
#define SR_JIT_BASE 0x07fff00000000000ull
#define SR_JIT_MASK 0xE000000000000000ull

/* eu-stacktrace's x86_64 register set: AX..IP (0-8), R8..R15 (16-23). */
#define SR_EU_REGS_MASK 0xff01ffull
#define SR_PERF_SAMPLE_BITS 0x1a7ull  /* IP|TID|TIME|CPU|PERIOD|CALLCHAIN */
#define SR_PERF_DWARF_BITS 0x3000ull  /* REGS_USER|STACK_USER */

/* Frames a window may hold, in file bytes (see syscap_order.h). */
#define SR_WINDOW (8u << 20)
/* A stream's buffer reads this much at once at most. */
#define SR_READ_CHUNK (256u << 10)
/*
 * A stream's bytes read ahead by a thread while restack is busy (a module
 * loading): the profiler writing it waits only beyond this.
 */
#define SR_AHEAD (32u << 20)
/*
 * A stream that brings nothing for this long lets the frames waiting in
 * the window go (each later frame older than one gone is late).
 */
#define SR_IDLE_MS 100
/*
 * ... and when a frame this much newer (capture time, ns) has come: a
 * live stream's output lags its input by this, not by 8 MiB of frames.
 */
#define SR_HORIZON 500000000

/* Pages behind the frames still needed are let go this many at once. */
#define SR_DROP_CHUNK (2u << 20)

enum sr_phase {
	SR_START,               /* nothing delivered yet */
	SR_MAPS,                /* MAP and PROCESS frames */
	SR_REST,                /* SAMPLE, FORK, EXIT, user stacks */
};

struct sr_jit {
	int32_t pid;            /* the process that wrote the JITMAP */
	const char *name;       /* in the mapped file */
};

/* An embedded file being put together from its FILE_CHUNK frames. */
struct sr_file {
	char *data;             /* owned; NUL-terminated when done */
	size_t len, alloc;
	bool done;              /* its last chunk was read */
	bool bad;               /* a chunk was cut or it grew too big */
};

/* Embedded files larger than this are ignored. */
#define SR_FILE_MAX (64u << 20)

/* One __symbols__ record: [begin, end] of process pid is name. */
struct sr_bsym {
	int32_t pid;
	uint64_t begin, end;
	const char *name;       /* in symbols.data */
};

struct syscap_reader {
	const char *name;
	bool stream;            /* read once, front to back (pipe, FIFO) */
	struct input in;        /* stream: where the bytes come from */
	struct readahead ahead; /* stream: ... read by a thread */
	uint8_t *buf;           /* stream: file bytes [base, base + len) */
	size_t len, alloc;
	uint64_t base;
	bool eof;               /* stream: no more bytes */
	bool idle;              /* stream: waited SR_IDLE_MS for input */
	bool cut;               /* stream: ended inside the frame at scan_off */
	struct syscap_qent early; /* stream: a MAP or PROCESS frame to go */
	bool have_early;
	syscap_idle_fn idle_fn; /* called before waiting for input */
	void *idle_ctx;
	const uint8_t *data;
	size_t size;
	void *map;              /* what to munmap, or NULL */
	size_t map_len;
	bool swap;
	struct err err;
	struct perfdata_info info;
	struct event_attr attr;
	enum sr_phase phase;
	uint64_t window;        /* of the reorder window, bytes */
	struct syscap_order q;
	uint64_t scan_off;      /* next frame the walk reads */
	uint64_t dropped;       /* pages before it were let go */
	size_t page;
	struct syscap_qent cur; /* the frame being delivered */
	bool have_cur;
	uint64_t skipped, jitmaps, late;
	uint64_t *scratch;      /* callchain or registers, host order */
	size_t scratch_alloc;
	char comm[256];
	struct hashmap comms;   /* pid -> its command name (owned) */
	struct hashmap tids;    /* tids named so far */
	bool named;             /* the next entry's thread was just named */
	struct sr_jit *jits;    /* JITMAP names, delivered first */
	size_t nr_jits, alloc_jits, next_jit;
	struct hashmap jit_keys;/* (pid, key) -> index + 1 */
	struct sr_file kallsyms, symbols; /* embedded files */
	struct sr_bsym *bsyms;  /* __symbols__ names, delivered first */
	size_t nr_bsyms, next_bsym;
};

bool syscap_probe(const void *head, size_t len)
{
	static const uint8_t magic[4] = { 0x5e, 0x97, 0xca, 0xfd };

	return len >= 4 && !memcmp(head, magic, 4);
}

/* The byte at file offset off (a stream's: it must be buffered). */
static const uint8_t *sr_at(const struct syscap_reader *r, uint64_t off)
{
	return r->data + (off - r->base);
}

static struct cur sr_cur(const struct syscap_reader *r, uint64_t off,
			 size_t len)
{
	return cur_make(sr_at(r, off), len, off, r->swap);
}

/* A NUL-terminated string at off inside a frame ending at end. */
static const char *sr_str(const struct syscap_reader *r, uint64_t off,
			  uint64_t end)
{
	const char *s = (const char *)sr_at(r, off);

	if (off >= end || !memchr(s, 0, (size_t)(end - off)))
		return NULL;
	return s;
}

static void sr_metadata(struct syscap_reader *r, uint64_t off, uint64_t end)
{
	char key[41];
	const char *val;
	char **dst = NULL;

	if (end - off < 65)
		return;
	memcpy(key, sr_at(r, off + 24), 40);
	key[40] = 0;
	val = sr_str(r, off + 64, end);
	if (!val)
		return;
	if (!strcmp(key, "hostname"))
		dst = &r->info.hostname;
	else if (!strcmp(key, "uname.release"))
		dst = &r->info.osrelease;
	else if (!strcmp(key, "uname.machine"))
		dst = &r->info.arch;
	if (dst && !*dst)
		*dst = mem_strdup(val);
	if (dst == &r->info.arch && r->info.arch)
		r->info.arch_id = !strcmp(val, "x86_64") ? EVENT_ARCH_X86_64 :
				  !strcmp(val, "aarch64") ? EVENT_ARCH_AARCH64 :
				  EVENT_ARCH_UNKNOWN;
}

/* Checks one frame's own layout; returns -1 with r->err set. */
static int sr_check(struct syscap_reader *r, uint8_t type, uint64_t off,
		    uint64_t len)
{
	struct cur c = sr_cur(r, off, (size_t)len);
	uint64_t n;

	cur_skip(&c, 24);
	switch (type) {
	case SYSCAP_SAMPLE:
		n = cur_u16(&c);
		if (32 + 8 * n > len)
			return err_set(&r->err, ERR_CORRUPT, off,
				       "SAMPLE frame of %llu bytes has %llu "
				       "addresses",
				       (unsigned long long)len,
				       (unsigned long long)n);
		return 0;
	case SYSCAP_MAP:
		if (len < 57 || *sr_at(r, off + len - 1) != 0)
			return err_set(&r->err, ERR_CORRUPT, off,
				       "MAP frame without a NUL-terminated "
				       "file name");
		return 0;
	case SYSCAP_PROCESS:
		if (len < 25 || *sr_at(r, off + len - 1) != 0)
			return err_set(&r->err, ERR_CORRUPT, off,
				       "PROCESS frame without a NUL-terminated "
				       "command line");
		return 0;
	case SYSCAP_FORK:
		if (len < 28)
			return err_set(&r->err, ERR_CORRUPT, off,
				       "FORK frame of %llu bytes is too short",
				       (unsigned long long)len);
		return 0;
	case SYSCAP_STACK_USER: {
		uint64_t size = cur_u64(&c), nregs;

		if (c.short_read || size > len || 40 + size + 8 > len)
			return err_set(&r->err, ERR_CORRUPT, off,
				       "user-stack frame of %llu bytes holds "
				       "%llu stack bytes",
				       (unsigned long long)len,
				       (unsigned long long)size);
		c = sr_cur(r, off + 40 + size, (size_t)(len - 40 - size));
		nregs = cur_u32(&c);
		if (nregs > 64 || 48 + size + 8 * nregs > len)
			return err_set(&r->err, ERR_CORRUPT, off + 40 + size,
				       "user-stack frame: %llu registers do not "
				       "fit", (unsigned long long)nregs);
		return 0;
	}
	case SYSCAP_JITMAP:
		if (len < 28)
			return err_set(&r->err, ERR_CORRUPT, off,
				       "JITMAP frame of %llu bytes is too short",
				       (unsigned long long)len);
		return 0;
	default:
		return 0;
	}
}

static uint64_t sr_jit_key(int32_t pid, uint64_t key)
{
	return hashmap_mix(key ^ ((uint64_t)(uint32_t)pid << 32));
}

/*
 * A FILE_CHUNK frame: its data is added to the embedded file restack
 * reads when it names one.  A chunk that does not fit its frame, or a
 * file beyond SR_FILE_MAX, makes the file ignored (not an error: sysprof
 * itself only reads files it needs).
 */
static void sr_file_chunk(struct syscap_reader *r, uint64_t off, uint64_t len)
{
	char path[SYSCAP_CHUNK_PATH + 1];
	struct sr_file *f;
	struct cur c;
	uint32_t bits, n;

	if (len < SYSCAP_CHUNK_DATA)
		return;
	memcpy(path, sr_at(r, off + 28), SYSCAP_CHUNK_PATH);
	path[SYSCAP_CHUNK_PATH] = 0;
	if (!strcmp(path, SYSCAP_KALLSYMS_PATH))
		f = &r->kallsyms;
	else if (!strcmp(path, SYSCAP_SYMBOLS_PATH))
		f = &r->symbols;
	else
		return;
	if (f->done || f->bad)  /* the first complete copy counts */
		return;
	c = sr_cur(r, off + 24, 4);
	bits = cur_u32(&c);
	n = bits >> 16;
	if (n > len - SYSCAP_CHUNK_DATA || f->len + n + 1 > SR_FILE_MAX ||
	    mem_grow(&f->data, &f->alloc, 1, f->len + n + 1) < 0) {
		f->bad = true;
		return;
	}
	memcpy(f->data + f->len, sr_at(r, off + SYSCAP_CHUNK_DATA), n);
	f->len += n;
	f->data[f->len] = 0;
	if (bits & 1)
		f->done = true;
}

/*
 * The __symbols__ file's records; records that name no string inside the
 * file, or an empty or reversed range, are left out; a file without its
 * closing record gives none.
 */
static int sr_symbols(struct syscap_reader *r)
{
	const uint8_t *d = (const uint8_t *)r->symbols.data;
	size_t size = r->symbols.len, off, nr = 0;

	if (!r->symbols.done || r->symbols.bad)
		return 0;
	for (off = 0; off + SYSCAP_SYM_RECORD <= size;
	     off += SYSCAP_SYM_RECORD) {
		struct cur c = cur_make(d + off, SYSCAP_SYM_RECORD, off,
					r->swap);
		uint64_t b = cur_u64(&c), e = cur_u64(&c);
		uint32_t pid = cur_u32(&c), name = cur_u32(&c);

		if (!b && !e && !pid && !name)
			break;
		nr++;
	}
	if (off + SYSCAP_SYM_RECORD > size)
		return 0;       /* no closing record */
	r->bsyms = calloc(nr ? nr : 1, sizeof(*r->bsyms));
	if (!r->bsyms)
		return err_set(&r->err, ERR_NOMEM, ERR_NO_OFF, "symbols");
	for (off = 0; nr--; off += SYSCAP_SYM_RECORD) {
		struct cur c = cur_make(d + off, SYSCAP_SYM_RECORD, off,
					r->swap);
		uint64_t b = cur_u64(&c), e = cur_u64(&c);
		uint32_t pid = cur_u32(&c), name = cur_u32(&c);
		struct sr_bsym *s = &r->bsyms[r->nr_bsyms];

		/* the string must end inside the file (data[len] is a NUL
		 * of ours, so it must end before) */
		if (!name || name >= size || e < b || e - b == UINT64_MAX ||
		    !memchr(d + name, 0, size - name) || !d[name])
			continue;
		s->pid = (int32_t)pid;
		s->begin = b;
		s->end = e;
		s->name = (const char *)d + name;
		r->nr_bsyms++;
	}
	return 0;
}

/* A JITMAP frame: n, then n x {u64 key, NUL-terminated name}. */
static int sr_jitmap(struct syscap_reader *r, uint64_t off, uint64_t len)
{
	struct cur c = sr_cur(r, off, (size_t)len);
	int32_t pid;
	uint32_t n, i;

	cur_skip(&c, 4);
	pid = (int32_t)cur_u32(&c);
	cur_skip(&c, 16);
	n = cur_u32(&c);
	for (i = 0; i < n; i++) {
		uint64_t key = cur_u64(&c);
		const char *name = (const char *)c.p;
		const uint8_t *nul = c.short_read ? NULL :
				     memchr(c.p, 0, cur_left(&c));

		if (!nul)
			return err_set(&r->err, ERR_CORRUPT, off,
				       "JITMAP frame: entry %u is cut", i);
		cur_skip(&c, (size_t)(nul - c.p) + 1);
		if (mem_grow(&r->jits, &r->alloc_jits, sizeof(*r->jits),
			     r->nr_jits + 1) < 0 ||
		    hashmap_put(&r->jit_keys, sr_jit_key(pid, key),
				(void *)(uintptr_t)(r->nr_jits + 1)) < 0)
			return err_set(&r->err, ERR_NOMEM, ERR_NO_OFF,
				       "JIT names");
		/* a stream's bytes do not stay: its names are copied */
		if (r->stream && !(name = mem_strdup(name)))
			return err_set(&r->err, ERR_NOMEM, ERR_NO_OFF,
				       "JIT names");
		r->jits[r->nr_jits].pid = pid;
		r->jits[r->nr_jits].name = name;
		r->nr_jits++;
	}
	return 0;
}

/* Lets the mapped file's pages before upto go, a chunk at a time. */
static void sr_drop(struct syscap_reader *r, uint64_t upto)
{
	uint64_t hi = upto & ~(uint64_t)(r->page - 1);

	if (!r->map || hi <= r->dropped || hi - r->dropped < SR_DROP_CHUNK)
		return;
	madvise((uint8_t *)r->map + r->dropped, (size_t)(hi - r->dropped),
		MADV_DONTNEED);
	r->dropped = hi;
}

/* Starts a walk of the frames from the first. */
static void sr_walk(struct syscap_reader *r, enum sr_phase phase)
{
	r->late += r->q.late;
	syscap_order_release(&r->q);
	syscap_order_init(&r->q, r->window);
	r->phase = phase;
	r->scan_off = SYSCAP_HEADER_SIZE;
	if (r->map)
		madvise(r->map, r->map_len, MADV_DONTNEED);
	r->dropped = 0;
}

/* Checks the file header (size bytes at h); fills the byte order. */
static int sr_header(struct syscap_reader *r, const uint8_t *h, uint64_t size)
{
	uint16_t one = 1;
	bool host_le = *(const uint8_t *)&one == 1, file_le;

	if (size < SYSCAP_HEADER_SIZE)
		return err_set(&r->err, size >= 4 && syscap_probe(h, 4) ?
					ERR_TRUNCATED : ERR_FORMAT, 0,
			       "not a sysprof capture (%llu bytes)",
			       (unsigned long long)size);
	if (!syscap_probe(h, 4))
		return err_set(&r->err, ERR_FORMAT, 0,
			       "not a sysprof capture (bad magic)");
	if (h[4] != 1)
		return err_set(&r->err, ERR_UNSUPPORTED, 4,
			       "sysprof capture version %u", h[4]);
	/* The little_endian bit-field: bit 0 (LE writer) or bit 7 (BE). */
	file_le = h[5] & 1;
	r->swap = file_le != host_le;
	r->info.swap = r->swap;
	r->info.header_size = SYSCAP_HEADER_SIZE;
	return 0;
}

/*
 * The frame header at off, of which avail bytes are there: its length
 * and type.  -1 with r->err set when it is bad or cut.
 */
static int sr_frame_head(struct syscap_reader *r, uint64_t off, uint64_t avail,
			 uint16_t *len, uint8_t *type)
{
	struct cur c;

	if (avail < SYSCAP_FRAME_HEADER_SIZE)
		return err_set(&r->err, ERR_TRUNCATED, off,
			       "capture ends inside a frame header");
	c = sr_cur(r, off, SYSCAP_FRAME_HEADER_SIZE);
	*len = cur_u16(&c);
	*type = *sr_at(r, off + 16);
	if (*len < SYSCAP_FRAME_HEADER_SIZE || *len % 8)
		return err_set(&r->err, ERR_CORRUPT, off,
			       "frame length %u is not a multiple of 8 "
			       "from 24", *len);
	if (*len > avail)
		return err_set(&r->err, ERR_TRUNCATED, off,
			       "frame of %u bytes runs past the end", *len);
	return 0;
}

/*
 * A whole frame read (the first walk of a file, or a stream's frame as it
 * comes): checked, and what is read from it at once taken (metadata, JIT
 * names, embedded files).
 */
static int sr_seen(struct syscap_reader *r, uint64_t off, uint16_t len,
		   uint8_t type)
{
	bool symbols_done = r->symbols.done;

	if (sr_check(r, type, off, len) < 0)
		return -1;
	switch (type) {
	case SYSCAP_SAMPLE:
	case SYSCAP_MAP:
	case SYSCAP_PROCESS:
	case SYSCAP_FORK:
	case SYSCAP_EXIT:
		break;
	case SYSCAP_STACK_USER:
		r->attr.sample_type |= SR_PERF_DWARF_BITS;
		r->attr.sample_regs_user = SR_EU_REGS_MASK;
		r->attr.sample_stack_user = 8192;
		break;
	case SYSCAP_METADATA:
		sr_metadata(r, off, off + len);
		r->skipped++;
		break;
	case SYSCAP_JITMAP:
		if (sr_jitmap(r, off, len) < 0)
			return -1;
		r->jitmaps++;
		break;
	case SYSCAP_FILE_CHUNK:
		sr_file_chunk(r, off, len);
		r->skipped++;
		break;
	default:
		r->skipped++;
		break;
	}
	/* a stream's __symbols__ names go out as soon as the file is whole */
	if (r->stream && r->symbols.done && !symbols_done &&
	    sr_symbols(r) < 0)
		return -1;
	if (r->stream && r->kallsyms.done && !r->kallsyms.bad &&
	    r->kallsyms.len && !r->info.kallsyms) {
		r->info.kallsyms = r->kallsyms.data;
		r->info.kallsyms_size = r->kallsyms.len;
	}
	return 0;
}

static int sr_index(struct syscap_reader *r)
{
	uint64_t off = SYSCAP_HEADER_SIZE;

	if (sr_header(r, r->data, r->size) < 0)
		return -1;
	r->info.file_size = r->size;
	while (off < r->size) {
		uint16_t len;
		uint8_t type;

		sr_drop(r, off);
		if (sr_frame_head(r, off, r->size - off, &len, &type) < 0 ||
		    sr_seen(r, off, len, type) < 0)
			return -1;
		off += len;
	}
	return 0;
}

static uint64_t *sr_scratch(struct syscap_reader *r, size_t n)
{
	if (mem_grow(&r->scratch, &r->scratch_alloc, sizeof(uint64_t),
		     n ? n : 1) < 0)
		return NULL;
	return r->scratch;
}

/*
 * A command name from a PROCESS frame: a perf COMM (15 characters at
 * most) as it is, else a command line (a /proc scan's): the basename of
 * its first word, cut to 15 characters as the kernel's comm.
 */
static const char *sr_comm(struct syscap_reader *r, const char *cmdline)
{
	size_t n = strcspn(cmdline, " ");
	const char *base = cmdline;
	size_t i;

	if (strlen(cmdline) <= 15)
		return cmdline;
	for (i = 0; i < n; i++)
		if (cmdline[i] == '/')
			base = cmdline + i + 1;
	n -= (size_t)(base - cmdline);
	if (n > 15)
		n = 15;
	memcpy(r->comm, base, n);
	r->comm[n] = 0;
	return r->comm;
}

static int sr_hex(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

static int sr_sample(struct syscap_reader *r, struct cur *c, uint64_t off,
		     struct event *ev)
{
	struct event_sample *s = &ev->sample;
	uint32_t n = cur_u16(c), i, k = 0;
	uint64_t *cc, ctx = 0;

	cur_skip(c, 2);
	ev->tid = (int32_t)cur_u32(c);
	cc = sr_scratch(r, (size_t)n + 1);
	if (!cc)
		return err_set(&r->err, ERR_NOMEM, ERR_NO_OFF, "sample");
	for (i = 0; i < n; i++) {
		uint64_t a = cur_u64(c);

		if (i == 0 && a < EVENT_CONTEXT_MAX)
			cc[k++] = EVENT_CONTEXT_USER;  /* no markers at all */
		if ((a & SR_JIT_MASK) == SR_JIT_MASK && a < EVENT_CONTEXT_MAX) {
			void *v;

			if (hashmap_get(&r->jit_keys, sr_jit_key(ev->pid, a),
					&v))
				a = SR_JIT_BASE + 16 * ((uintptr_t)v - 1) + 8;
		}
		if (a >= EVENT_CONTEXT_MAX) {
			if (!ctx)
				ctx = a;
		} else if (!s->ip) {
			s->ip = a;
		}
		cc[k++] = a;
	}
	if (c->short_read)
		return err_set(&r->err, ERR_TRUNCATED, off,
			       "SAMPLE frame is cut");
	s->cpumode = ctx == EVENT_CONTEXT_KERNEL ? EVENT_MODE_KERNEL :
		     EVENT_MODE_USER;
	s->callchain = cc;
	s->callchain_nr = k;
	s->period = 1;
	return 0;
}

static int sr_stack_user(struct syscap_reader *r, struct cur *c, uint64_t off,
			 struct event *ev)
{
	struct event_sample *s = &ev->sample;
	uint64_t size = cur_u64(c), *regs;
	uint32_t nregs, abi, i;

	ev->tid = (int32_t)cur_u32(c);
	cur_skip(c, 4);
	s->stack = cur_bytes(c, (size_t)size);
	s->stack_size = size;
	s->stack_dyn_size = size;
	nregs = cur_u32(c);
	abi = cur_u32(c);
	regs = sr_scratch(r, nregs);
	if (!regs)
		return err_set(&r->err, ERR_NOMEM, ERR_NO_OFF, "registers");
	for (i = 0; i < nregs; i++)
		regs[i] = cur_u64(c);
	if (c->short_read)
		return err_set(&r->err, ERR_TRUNCATED, off,
			       "user-stack frame is cut");
	s->cpumode = EVENT_MODE_USER;
	s->regs_user_abi = abi;
	/* eu-stacktrace sends AX..IP and R8..R15, in bit order. */
	s->regs_user_mask = nregs == 17 ? SR_EU_REGS_MASK :
			    nregs < 64 ? (1ull << nregs) - 1 : ~0ull;
	s->regs_user = regs;
	s->regs_user_nr = nregs;
	s->ip = nregs > 8 ? regs[8] : 0;
	s->period = 1;
	return 0;
}

/*
 * A sample's thread never named (sysprof has no per-thread names and 3.46
 * writes no FORK for threads) takes its process's name, as a new thread
 * inherits it: a COMM event first, then the sample again.  Returns true
 * when *ev is that COMM (ev->comm.comm NULL: out of memory).
 */
static bool sr_name_thread(struct syscap_reader *r,
			   const struct syscap_qent *e, struct event *ev)
{
	uint8_t type = *sr_at(r, e->off + 16);
	struct cur c = sr_cur(r, e->off, 64);
	int32_t pid, tid;
	void *v;

	if (r->named || (type != SYSCAP_SAMPLE && type != SYSCAP_STACK_USER)) {
		r->named = false;
		return false;
	}
	cur_skip(&c, 4);
	pid = (int32_t)cur_u32(&c);
	cur_skip(&c, type == SYSCAP_SAMPLE ? 20 : 24);
	tid = (int32_t)cur_u32(&c);
	if (pid == tid || hashmap_get(&r->tids, (uint64_t)(uint32_t)tid, &v) ||
	    !hashmap_get(&r->comms, (uint64_t)(uint32_t)pid, &v))
		return false;
	memset(ev, 0, sizeof(*ev));
	ev->type = EVENT_COMM;
	ev->rec_type = SYSCAP_PROCESS;
	ev->pid = pid;
	ev->tid = tid;
	ev->cpu = -1;
	ev->time = e->time < 0 ? 0 : (uint64_t)e->time;
	ev->file_off = e->off;
	ev->comm.comm = v;
	if (hashmap_put(&r->tids, (uint64_t)(uint32_t)tid, NULL) < 0)
		ev->comm.comm = NULL;
	r->named = true;
	r->have_cur = true;     /* the sample comes next */
	return true;
}

/*
 * The frames of a walk that it delivers: of a file, MAP and PROCESS first
 * (sysprof builds a process's address space from all of them), then the
 * others; of a stream, all in one.  Frame-index TIMESTAMPs and types
 * sysprof does not know (but 18) are not delivered.
 */
static bool sr_wanted(const struct syscap_reader *r, uint64_t off,
		      uint16_t len)
{
	uint8_t type = *sr_at(r, off + 16);
	bool mp = type == SYSCAP_MAP || type == SYSCAP_PROCESS;

	if (type == SYSCAP_TIMESTAMP && len == 32) {
		struct cur c = sr_cur(r, off + 20, 4);

		if (cur_u32(&c) == SYSCAP_INDEX_MAGIC)
			return false;
	}
	if (!type || type > SYSCAP_STACK_USER)
		return false;
	if (r->phase == SR_MAPS)
		return mp;
	return r->stream || !mp;
}

/*
 * The next frame to deliver into *e: 1, 0 at the end, -1 on error.  The
 * frames were checked when the capture was opened.
 */
static int sr_pop(struct syscap_reader *r, struct syscap_qent *e)
{
	if (r->phase == SR_START)
		sr_walk(r, SR_MAPS);
	for (;;) {
		bool end = r->scan_off >= r->size;
		struct syscap_qent qe;
		uint64_t off = r->scan_off;
		struct cur c;
		uint16_t len;

		if (syscap_order_pop(&r->q, end, e))
			return 1;
		if (end) {
			if (r->phase == SR_REST)
				return 0;
			sr_walk(r, SR_REST);
			continue;
		}
		sr_drop(r, syscap_order_done_off(&r->q));
		c = sr_cur(r, off, SYSCAP_FRAME_HEADER_SIZE);
		len = cur_u16(&c);
		cur_skip(&c, 6);
		qe.time = (int64_t)cur_u64(&c);
		qe.off = off;
		if (syscap_order_read(&r->q,
				      sr_wanted(r, off, len) ? &qe : NULL,
				      len, off + len) < 0)
			return err_set(&r->err, ERR_NOMEM, ERR_NO_OFF,
				       "frame order");
		r->scan_off = off + len;
	}
}

/*
 * Makes the stream's bytes [off, off + need) buffered, dropping those
 * before keep.  Returns 1, 0 when the stream ends first (r->eof), 2 when
 * it brought nothing for SR_IDLE_MS and may_idle, -1 on error.  Before
 * waiting for input it calls the idle hook (the writer flushes).
 */
static int sr_fill(struct syscap_reader *r, uint64_t keep, uint64_t off,
		   size_t need, bool may_idle)
{
	if (keep > r->base) {
		size_t drop = (size_t)(keep - r->base);

		/* moved down when the dead part is most of it */
		if (drop >= r->len / 2 || drop >= SR_READ_CHUNK) {
			memmove(r->buf, r->buf + drop, r->len - drop);
			r->len -= drop;
			r->base = keep;
		}
	}
	while (r->base + r->len < off + need) {
		size_t want = (size_t)(off + need - r->base);
		long long n;

		if (r->eof)
			return 0;
		if (want < r->len + SR_READ_CHUNK)
			want = r->len + SR_READ_CHUNK;
		if (mem_grow(&r->buf, &r->alloc, 1, want) < 0)
			return err_set(&r->err, ERR_NOMEM, ERR_NO_OFF,
				       "stream buffer");
		r->data = r->buf;
		n = readahead_read(&r->ahead, r->buf + r->len,
				   r->alloc - r->len, 0, &r->err);
		if (n == -2) {
			/* all that came is read: it may go out now */
			if (r->idle_fn)
				r->idle_fn(r->idle_ctx);
			n = readahead_read(&r->ahead, r->buf + r->len,
					   r->alloc - r->len,
					   may_idle ? SR_IDLE_MS : -1, &r->err);
			if (n == -2)
				return 2;
		}
		if (n < 0)
			return -1;
		if (n == 0)
			r->eof = true;
		r->len += (size_t)n;
	}
	r->data = r->buf;
	return 1;
}

/*
 * A stream's next frame to deliver into *e: frames are read, checked and
 * queued in the window as they come, and go by time; 2 when JIT names
 * came that must go first.  At a frame cut short the window is emptied
 * first, then the error is given.
 */
static int sr_pop_stream(struct syscap_reader *r, struct syscap_qent *e)
{
	if (r->phase == SR_START) {
		syscap_order_init(&r->q, r->window);
		syscap_order_set_horizon(&r->q, SR_HORIZON);
		r->phase = SR_REST;
	}
	for (;;) {
		uint64_t off = r->scan_off, keep;
		struct syscap_qent qe;
		struct cur c;
		uint16_t len;
		uint8_t type;
		bool early;
		int rc;

		if (r->have_early) {
			*e = r->early;
			r->have_early = false;
			return 1;
		}
		if (syscap_order_pop(&r->q, r->eof || r->idle, e))
			return 1;
		if (r->eof) {
			if (!r->cut)
				return 0;
			if (sr_frame_head(r, off, r->base + r->len - off,
					  &len, &type) == 0)
				err_set(&r->err, ERR_TRUNCATED, off,
					"capture ends inside a frame");
			return -1;
		}
		keep = r->q.nr_live ? syscap_order_done_off(&r->q) : off;
		rc = sr_fill(r, keep, off, SYSCAP_FRAME_HEADER_SIZE,
			     r->q.nr_live && !r->idle);
		if (rc == 2) {
			r->idle = true;
			continue;
		}
		if (rc == 1) {
			c = sr_cur(r, off, 2);
			len = cur_u16(&c);
			if (len >= SYSCAP_FRAME_HEADER_SIZE)
				rc = sr_fill(r, keep, off, len, false);
		}
		if (rc < 0)
			return -1;
		if (rc == 0) {
			r->cut = r->base + r->len > off;
			continue;       /* the window goes out first */
		}
		r->idle = false;
		if (sr_frame_head(r, off, r->base + r->len - off, &len,
				  &type) < 0 || sr_seen(r, off, len, type) < 0)
			return -1;
		c = sr_cur(r, off + 8, 8);
		qe.time = (int64_t)cur_u64(&c);
		qe.off = off;
		/* MAP and PROCESS go at once, ahead of older frames waiting:
		 * as a file's come first (sysprof's /proc scan has times
		 * after the first samples) */
		early = type == SYSCAP_MAP || type == SYSCAP_PROCESS;
		if (syscap_order_read(&r->q,
				      sr_wanted(r, off, len) && !early ?
				      &qe : NULL, len, off + len) < 0)
			return err_set(&r->err, ERR_NOMEM, ERR_NO_OFF,
				       "frame order");
		r->scan_off = off + len;
		if (r->next_jit < r->nr_jits || r->next_bsym < r->nr_bsyms) {
			if (early)      /* after the names */
				r->early = qe, r->have_early = true;
			return 2;
		}
		if (early) {
			*e = qe;
			return 1;
		}
	}
}

int syscap_next(struct syscap_reader *r, struct event *ev)
{
	const struct syscap_qent *e = &r->cur;
	int rc;
	struct cur c;
	uint16_t len;
	uint8_t type;

	if (r->next_jit < r->nr_jits) {
		const struct sr_jit *j = &r->jits[r->next_jit];

		memset(ev, 0, sizeof(*ev));
		ev->type = EVENT_JIT;
		ev->rec_type = SYSCAP_JITMAP;
		ev->pid = ev->tid = j->pid;
		ev->cpu = -1;
		ev->jit.start = SR_JIT_BASE + 16 * r->next_jit;
		ev->jit.len = 16;
		ev->jit.name = j->name;
		r->next_jit++;
		return 1;
	}
	if (r->next_bsym < r->nr_bsyms) {
		const struct sr_bsym *b = &r->bsyms[r->next_bsym++];

		memset(ev, 0, sizeof(*ev));
		ev->type = EVENT_JIT;
		ev->rec_type = SYSCAP_FILE_CHUNK;
		ev->pid = ev->tid = b->pid;
		ev->cpu = -1;
		ev->jit.start = b->begin;
		ev->jit.len = b->end - b->begin + 1;
		ev->jit.name = b->name;
		ev->jit.bundled = true;
		return 1;
	}
	if (!r->have_cur) {
		rc = r->stream ? sr_pop_stream(r, &r->cur) : sr_pop(r, &r->cur);
		if (rc == 2)
			return syscap_next(r, ev);      /* the names first */
		if (rc <= 0)
			return rc;
	}
	r->have_cur = false;
	if (sr_name_thread(r, e, ev))
		return ev->comm.comm ? 1 : -1;
	c = sr_cur(r, e->off, SYSCAP_FRAME_HEADER_SIZE);
	len = cur_u16(&c);
	memset(ev, 0, sizeof(*ev));
	ev->cpu = (int16_t)cur_u16(&c);
	ev->pid = (int32_t)cur_u32(&c);
	ev->tid = ev->pid;
	ev->time = e->time < 0 ? 0 : (uint64_t)e->time;
	type = *sr_at(r, e->off + 16);
	ev->rec_type = type;
	ev->file_off = e->off;
	ev->raw = sr_at(r, e->off);
	ev->raw_len = len;
	c = sr_cur(r, e->off + SYSCAP_FRAME_HEADER_SIZE,
		   len - SYSCAP_FRAME_HEADER_SIZE);
	switch (type) {
	case SYSCAP_SAMPLE:
	case SYSCAP_STACK_USER:
		ev->type = EVENT_SAMPLE;
		ev->attr = &r->info.attrs[0];
		if ((type == SYSCAP_SAMPLE ? sr_sample(r, &c, e->off, ev) :
					     sr_stack_user(r, &c, e->off, ev)) < 0)
			return -1;
		return 1;
	case SYSCAP_MAP: {
		struct event_mmap *m = &ev->mmap;
		uint64_t end;
		const char *at;
		size_t i;

		ev->type = EVENT_MMAP;
		m->start = cur_u64(&c);
		end = cur_u64(&c);
		m->pgoff = cur_u64(&c);
		m->ino = cur_u64(&c);
		m->len = end > m->start ? end - m->start : 0;
		m->filename = (const char *)sr_at(r, e->off + 56);
		m->cpumode = EVENT_MODE_USER;
		m->executable = true;
		m->has_inode = m->ino != 0;
		m->is_mmap2 = true;
		/* "name\0@hex\0": a build-id (sysprof 45 and newer). */
		at = m->filename + strlen(m->filename) + 1;
		if ((const uint8_t *)at < sr_at(r, e->off + len) &&
		    *at == '@') {
			for (i = 0; i < 20; i++) {
				int hi = sr_hex(at[1 + 2 * i]);
				int lo = hi < 0 ? -1 : sr_hex(at[2 + 2 * i]);

				if (lo < 0)
					break;
				m->build_id[i] = (uint8_t)(hi << 4 | lo);
			}
			m->build_id_size = (uint8_t)(i >= 16 ? i : 0);
		}
		return 1;
	}
	case SYSCAP_PROCESS: {
		char *old = NULL, *name;
		void *v;

		ev->type = EVENT_COMM;
		ev->comm.comm = sr_comm(r, (const char *)sr_at(r, e->off + 24));
		name = mem_strdup(ev->comm.comm);
		if (hashmap_get(&r->comms, (uint64_t)(uint32_t)ev->pid, &v))
			old = v;
		if (!name || hashmap_put(&r->comms, (uint64_t)(uint32_t)ev->pid,
					 name) < 0) {
			free(name);
			return err_set(&r->err, ERR_NOMEM, ERR_NO_OFF, "names");
		}
		free(old);
		return 1;
	}
	case SYSCAP_FORK:
		ev->type = EVENT_FORK;
		ev->fork.ptid = ev->pid;
		ev->fork.ppid = ev->pid;
		ev->fork.time = ev->time;
		ev->pid = ev->tid = (int32_t)cur_u32(&c);
		if (hashmap_put(&r->tids, (uint64_t)(uint32_t)ev->tid, NULL) < 0)
			return err_set(&r->err, ERR_NOMEM, ERR_NO_OFF, "tids");
		return 1;
	case SYSCAP_EXIT:
		ev->type = EVENT_EXIT;
		ev->fork.ppid = ev->fork.ptid = -1;
		ev->fork.time = ev->time;
		return 1;
	default:
		/* passed on as it is (counters, marks, logs, files...) */
		ev->type = EVENT_OTHER;
		return 1;
	}
}

static struct syscap_reader *sr_new(const char *name, struct err *err)
{
	struct syscap_reader *r = calloc(1, sizeof(*r));

	if (!r) {
		err_set(err, ERR_NOMEM, ERR_NO_OFF, "out of memory");
		return NULL;
	}
	r->name = name;
	r->attr.name = "cpu-clock";
	r->attr.type = EVENT_TYPE_SOFTWARE;     /* cpu-clock */
	r->attr.sample_type = SR_PERF_SAMPLE_BITS;
	r->attr.sample_id_all = true;
	r->attr.sample_period = 1;
	r->info.attrs = &r->attr;
	r->info.nr_attrs = 1;
	r->info.pipe = false;
	r->window = SR_WINDOW;
	r->page = (size_t)sysconf(_SC_PAGESIZE);
	return r;
}

static struct syscap_reader *sr_finish_open(struct syscap_reader *r,
					    struct err *err)
{
	if (sr_index(r) < 0 || sr_symbols(r) < 0) {
		*err = r->err;
		syscap_close(r);
		return NULL;
	}
	if (r->kallsyms.done && !r->kallsyms.bad && r->kallsyms.len) {
		r->info.kallsyms = r->kallsyms.data;
		r->info.kallsyms_size = r->kallsyms.len;
	}
	if (r->attr.sample_type & SR_PERF_DWARF_BITS) {
		r->attr.sample_regs_user = SR_EU_REGS_MASK;
		r->attr.sample_stack_user = 8192;
	}
	return r;
}

struct syscap_reader *syscap_open_mem(const void *data, size_t size,
				      const char *name, struct err *err)
{
	struct syscap_reader *r = sr_new(name, err);

	if (!r)
		return NULL;
	r->data = data;
	r->size = size;
	return sr_finish_open(r, err);
}

/*
 * A stream: read ahead by a thread from now on, its header now, its
 * frames as they are asked for.
 */
static struct syscap_reader *sr_open_stream(struct syscap_reader *r,
					    struct err *err)
{
	int rc = readahead_start(&r->ahead, &r->in, SR_AHEAD, &r->err);

	if (rc == 0)
		rc = sr_fill(r, 0, 0, SYSCAP_HEADER_SIZE, false);
	if (rc < 0 || sr_header(r, r->buf ? r->buf : (const uint8_t *)"",
				r->len) < 0) {
		*err = r->err;
		syscap_close(r);
		return NULL;
	}
	r->scan_off = SYSCAP_HEADER_SIZE;
	r->info.file_size = UINT64_MAX;
	r->info.pipe = true;
	return r;
}

struct syscap_reader *syscap_open_fd(int fd, bool own, const char *name,
				     struct err *err)
{
	struct syscap_reader *r;
	struct stat st;

	if (fstat(fd, &st) < 0) {
		err_sys(err, errno, "cannot open");
		if (own)
			close(fd);
		return NULL;
	}
	r = sr_new(name, err);
	if (!r) {
		if (own)
			close(fd);
		return NULL;
	}
	if (!S_ISREG(st.st_mode) || lseek(fd, 0, SEEK_CUR) != 0) {
		r->stream = true;
		input_from_fd(&r->in, fd, name);
		r->in.own_fd = own;
		return sr_open_stream(r, err);
	}
	if (st.st_size > 0) {
		r->map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE,
			      fd, 0);
		if (r->map == MAP_FAILED) {
			r->map = NULL;
			err_sys(err, errno, "cannot map");
			if (own)
				close(fd);
			syscap_close(r);
			return NULL;
		}
		r->map_len = (size_t)st.st_size;
	}
	if (own)
		close(fd);
	r->data = r->map ? r->map : (const uint8_t *)"";
	r->size = r->map_len;
	return sr_finish_open(r, err);
}

struct syscap_reader *syscap_open(const char *path, struct err *err)
{
	int fd;

	if (!strcmp(path, "-"))
		return syscap_open_fd(STDIN_FILENO, false, path, err);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err_sys(err, errno, "cannot open");
		return NULL;
	}
	return syscap_open_fd(fd, true, path, err);
}

void syscap_set_idle(struct syscap_reader *r, syscap_idle_fn fn, void *ctx)
{
	r->idle_fn = fn;
	r->idle_ctx = ctx;
}

bool syscap_backlogged(struct syscap_reader *r)
{
	return r->stream && readahead_full(&r->ahead);
}

bool syscap_is_stream(const struct syscap_reader *r)
{
	return r->stream;
}

const struct err *syscap_err(const struct syscap_reader *r)
{
	return &r->err;
}

const struct perfdata_info *syscap_info(const struct syscap_reader *r)
{
	return &r->info;
}

uint64_t syscap_skipped(const struct syscap_reader *r)
{
	return r->skipped;
}

uint64_t syscap_late(const struct syscap_reader *r)
{
	return r->late + r->q.late;
}

void syscap_set_window(struct syscap_reader *r, uint64_t bytes)
{
	if (r->phase == SR_START)
		r->window = bytes;
}

void syscap_close(struct syscap_reader *r)
{
	if (!r)
		return;
	if (r->map)
		munmap(r->map, r->map_len);
	{
		size_t pos = 0;
		uint64_t key;
		void *v;

		while (hashmap_iter(&r->comms, &pos, &key, &v))
			free(v);
	}
	hashmap_release(&r->comms);
	hashmap_release(&r->jit_keys);
	for (size_t i = 0; r->stream && i < r->nr_jits; i++)
		free((char *)r->jits[i].name);
	free(r->jits);
	if (r->stream) {
		readahead_stop(&r->ahead);
		input_close(&r->in);
	}
	free(r->buf);
	hashmap_release(&r->tids);
	syscap_order_release(&r->q);
	free(r->scratch);
	free(r->info.hostname);
	free(r->info.osrelease);
	free(r->info.arch);
	free(r->kallsyms.data);
	free(r->symbols.data);
	free(r->bsyms);
	free(r);
}
