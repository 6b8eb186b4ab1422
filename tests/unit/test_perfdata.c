/*
 * test_perfdata.c - the perf.data reader on files built byte by byte here,
 * from the layouts in include/uapi/linux/perf_event.h and perf's
 * tools/perf/util/header.c (see shared/reference/perfdata-format.md).
 *
 * The same catalogue of records (every kernel record type 1-22, the
 * records perf synthesizes, unknown types, samples with every sample_type
 * bit) is written in file and pipe mode, in both byte orders, plain and
 * zstd-compressed, and every decoded field is checked.  The encoder below
 * is written independently of formats/perfdata_*.c: it uses no reader
 * header but the public API.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zstd.h>

#include "common/strbuf.h"
#include "formats/event_copy.h"
#include "formats/perfdata.h"
#include "tests/harness.h"

/* --- byte builder ---------------------------------------------------- */

struct bb {
	uint8_t *p;
	size_t len, cap;
	size_t rec;     /* where the current record starts, for padding */
	bool be;        /* write big-endian */
};

static void bb_need(struct bb *b, size_t n)
{
	if (b->len + n <= b->cap)
		return;
	while (b->len + n > b->cap)
		b->cap = b->cap ? b->cap * 2 : 4096;
	b->p = realloc(b->p, b->cap);
	if (!b->p)
		abort();
}

static void bb_bytes(struct bb *b, const void *p, size_t n)
{
	bb_need(b, n);
	if (n)
		memcpy(b->p + b->len, p, n);
	b->len += n;
}

static void bb_zero(struct bb *b, size_t n)
{
	bb_need(b, n);
	memset(b->p + b->len, 0, n);
	b->len += n;
}

static void bb_uint(struct bb *b, uint64_t v, unsigned size)
{
	uint8_t t[8];
	unsigned i;

	for (i = 0; i < size; i++)
		t[b->be ? size - 1 - i : i] = (uint8_t)(v >> (8 * i));
	bb_bytes(b, t, size);
}

static void bb_u8(struct bb *b, uint64_t v) { bb_uint(b, v, 1); }
static void bb_u16(struct bb *b, uint64_t v) { bb_uint(b, v, 2); }
static void bb_u32(struct bb *b, uint64_t v) { bb_uint(b, v, 4); }
static void bb_u64(struct bb *b, uint64_t v) { bb_uint(b, v, 8); }

static void bb_patch(struct bb *b, size_t off, uint64_t v, unsigned size)
{
	size_t len = b->len;

	b->len = off;
	bb_uint(b, v, size);
	b->len = len;
}

/* Zero padding to a multiple of align from the current record's start. */
static void bb_pad(struct bb *b, size_t align)
{
	while ((b->len - b->rec) % align)
		bb_u8(b, 0);
}

/* s, its NUL and zero padding: the field is a multiple of align long. */
static void bb_str(struct bb *b, const char *s, size_t align)
{
	size_t n = strlen(s) + 1;

	bb_bytes(b, s, n);
	bb_zero(b, (align - n % align) % align);
}

/* perf_header_string: u32 len, then s padded to 64 (len counts padding). */
static void bb_hstr(struct bb *b, const char *s)
{
	size_t n = (strlen(s) + 1 + 63) / 64 * 64;

	bb_u32(b, n);
	bb_bytes(b, s, strlen(s) + 1);
	bb_zero(b, n - strlen(s) - 1);
}

static size_t rec_begin(struct bb *b, uint32_t type, uint16_t misc)
{
	size_t off = b->len;

	b->rec = off;
	bb_u32(b, type);
	bb_u16(b, misc);
	bb_u16(b, 0);
	return off;
}

static void rec_end(struct bb *b, size_t off)
{
	if (b->len - off > 65535)
		abort();
	bb_patch(b, off + 6, b->len - off, 2);
}

static void bb_free(struct bb *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

/* --- perf constants (from linux/perf_event.h, written out again) ------ */

enum {
	S_IP = 1 << 0, S_TID = 1 << 1, S_TIME = 1 << 2, S_ADDR = 1 << 3,
	S_READ = 1 << 4, S_CALLCHAIN = 1 << 5, S_ID = 1 << 6, S_CPU = 1 << 7,
	S_PERIOD = 1 << 8, S_STREAM_ID = 1 << 9, S_RAW = 1 << 10,
	S_BRANCH_STACK = 1 << 11, S_REGS_USER = 1 << 12,
	S_STACK_USER = 1 << 13, S_WEIGHT = 1 << 14, S_DATA_SRC = 1 << 15,
	S_IDENTIFIER = 1 << 16, S_TRANSACTION = 1 << 17,
	S_REGS_INTR = 1 << 18, S_PHYS_ADDR = 1 << 19, S_AUX = 1 << 20,
	S_CGROUP = 1 << 21, S_DATA_PAGE_SIZE = 1 << 22,
	S_CODE_PAGE_SIZE = 1 << 23, S_WEIGHT_STRUCT = 1 << 24,
};

enum {
	RF_ENABLED = 1, RF_RUNNING = 2, RF_ID = 4, RF_GROUP = 8, RF_LOST = 16,
};

#define FL_DISABLED (1ULL << 0)
#define FL_FREQ (1ULL << 10)
#define FL_SAMPLE_ID_ALL (1ULL << 18)
#define FL_EXCL_CALLCHAIN_USER (1ULL << 22)
#define FL_MMAP2 (1ULL << 23)
#define FL_BUILD_ID (1ULL << 34)

#define BR_HW_INDEX (1ULL << 17)
#define BR_COUNTERS (1ULL << 19)

#define MISC_USER 2
#define MISC_KERNEL 1
#define MISC_BIT13 (1u << 13)
#define MISC_BIT14 (1u << 14)
#define MISC_BIT15 (1u << 15)

#define CTX_KERNEL ((uint64_t)-128)
#define CTX_USER ((uint64_t)-512)

/* --- attributes ------------------------------------------------------ */

struct tattr {
	const char *name;
	uint32_t type;
	uint64_t config, period, st, rf, flags, bst;
	uint64_t regs_user, regs_intr;
	uint32_t stack_user;
	uint64_t ids[3];
	unsigned nr_ids;
};

static uint8_t revbyte(uint8_t v)
{
	uint8_t r = 0;
	int i;

	for (i = 0; i < 8; i++)
		if (v & (1u << i))
			r |= (uint8_t)(0x80u >> i);
	return r;
}

/*
 * A 128-byte perf_event_attr (ABI VER7).  The flag bitfield keeps its
 * bytes in place and mirrors the bits of each byte in a big-endian file:
 * that is how a big-endian compiler lays out the bitfield (perf's
 * swap_bitfield()).
 */
static void bb_attr(struct bb *b, const struct tattr *a)
{
	unsigned i;

	bb_u32(b, a->type);
	bb_u32(b, 128);
	bb_u64(b, a->config);
	bb_u64(b, a->period);
	bb_u64(b, a->st);
	bb_u64(b, a->rf);
	for (i = 0; i < 8; i++) {
		uint8_t v = (uint8_t)(a->flags >> (8 * i));

		bb_u8(b, b->be ? revbyte(v) : v);
	}
	bb_u32(b, 1);           /* wakeup_events */
	bb_u32(b, 0);           /* bp_type */
	bb_u64(b, 0);           /* config1 */
	bb_u64(b, 0);           /* config2 */
	bb_u64(b, a->bst);
	bb_u64(b, a->regs_user);
	bb_u32(b, a->stack_user);
	bb_u32(b, 0);           /* clockid */
	bb_u64(b, a->regs_intr);
	bb_u32(b, 0);           /* aux_watermark */
	bb_u16(b, 127);         /* sample_max_stack */
	bb_u16(b, 0);
	bb_u32(b, 0);           /* aux_sample_size */
	bb_u32(b, 0);
	bb_u64(b, 0);           /* sig_data */
}

/*
 * The catalogue's events.  All use IDENTIFIER, as perf does when
 * sample_types differ, and sample_id_all.
 */
static const struct tattr cat_attrs[] = {
	{
		.name = "ev-all", .type = 1, .config = 0, .period = 4000,
		.st = S_IDENTIFIER | S_IP | S_TID | S_TIME | S_ADDR | S_ID |
		      S_STREAM_ID | S_CPU | S_PERIOD | S_READ | S_CALLCHAIN |
		      S_RAW | S_BRANCH_STACK | S_REGS_USER | S_STACK_USER |
		      S_WEIGHT | S_DATA_SRC | S_TRANSACTION | S_REGS_INTR |
		      S_PHYS_ADDR | S_CGROUP | S_DATA_PAGE_SIZE |
		      S_CODE_PAGE_SIZE | S_AUX,
		.rf = RF_ENABLED | RF_RUNNING | RF_ID | RF_LOST,
		.flags = FL_DISABLED | FL_FREQ | FL_SAMPLE_ID_ALL |
			 FL_EXCL_CALLCHAIN_USER | FL_MMAP2 | FL_BUILD_ID,
		.regs_user = 0xff0fff, .regs_intr = 0x3, .stack_user = 64,
		.ids = { 101, 102 }, .nr_ids = 2,
	},
	{
		.name = "ev-group", .type = 0, .config = 1, .period = 100003,
		.st = S_IDENTIFIER | S_TID | S_TIME | S_READ |
		      S_BRANCH_STACK | S_REGS_USER | S_STACK_USER |
		      S_WEIGHT_STRUCT,
		.rf = RF_GROUP | RF_ENABLED | RF_ID,
		.flags = FL_SAMPLE_ID_ALL,
		.bst = BR_HW_INDEX, .regs_user = 0x1ffffffffULL,
		.stack_user = 128,
		.ids = { 201 }, .nr_ids = 1,
	},
	{
		.name = "ev-min", .type = 2, .config = 316, .period = 1,
		.st = S_IDENTIFIER | S_TIME | S_CPU | S_CALLCHAIN |
		      S_BRANCH_STACK,
		.flags = FL_SAMPLE_ID_ALL,
		.bst = BR_COUNTERS,
		.ids = { 301, 302, 303 }, .nr_ids = 3,
	},
};

#define NR_CAT_ATTRS 3

/* --- records ----------------------------------------------------------- */

/* The sample_id trailer values written after every kernel record. */
struct tid_trailer {
	uint32_t pid, tid;
	uint64_t time, id, stream_id;
	uint32_t cpu;
};

static void bb_trailer(struct bb *b, const struct tattr *a,
		       const struct tid_trailer *t)
{
	if (a->st & S_TID) {
		bb_u32(b, t->pid);
		bb_u32(b, t->tid);
	}
	if (a->st & S_TIME)
		bb_u64(b, t->time);
	if (a->st & S_ID)
		bb_u64(b, t->id);
	if (a->st & S_STREAM_ID)
		bb_u64(b, t->stream_id);
	if (a->st & S_CPU) {
		bb_u32(b, t->cpu);
		bb_u32(b, 0);
	}
	if (a->st & S_IDENTIFIER)
		bb_u64(b, t->id);
}

/* A trailer for attr 0 at time t (unique per record, to find it again). */
static struct tid_trailer trl(uint64_t time)
{
	struct tid_trailer t = {
		.pid = 4242, .tid = 4243, .time = time, .id = 102,
		.stream_id = 9001, .cpu = 1,
	};
	return t;
}

/*
 * One kernel record of each type 1-22 (SAMPLE apart), with sample_id
 * trailers of attr 0.  Times are 1000 + type (MMAP2 with a build-id: 1100,
 * a second COMM from attr 1: 1200).
 */
static void cat_kernel_records(struct bb *b)
{
	const struct tattr *a = &cat_attrs[0];
	struct tid_trailer t;
	size_t r;

	t = trl(1001);
	r = rec_begin(b, 1, MISC_USER);                 /* MMAP */
	bb_u32(b, 4242);
	bb_u32(b, 4243);
	bb_u64(b, 0x400000);
	bb_u64(b, 0x21000);
	bb_u64(b, 0x1000);
	bb_str(b, "/usr/lib/libfoo.so", 8);
	bb_trailer(b, a, &t);
	rec_end(b, r);

	t = trl(1002);
	r = rec_begin(b, 2, 0);                         /* LOST */
	bb_u64(b, 101);
	bb_u64(b, 17);
	bb_trailer(b, a, &t);
	rec_end(b, r);

	t = trl(1003);
	r = rec_begin(b, 3, MISC_USER | MISC_BIT13);    /* COMM, exec */
	bb_u32(b, 4242);
	bb_u32(b, 4243);
	bb_str(b, "worker", 8);
	bb_trailer(b, a, &t);
	rec_end(b, r);

	t = trl(1004);
	r = rec_begin(b, 4, 0);                         /* EXIT */
	bb_u32(b, 4242);
	bb_u32(b, 1);
	bb_u32(b, 4243);
	bb_u32(b, 2);
	bb_u64(b, 999004);
	bb_trailer(b, a, &t);
	rec_end(b, r);

	t = trl(1005);
	r = rec_begin(b, 5, 0);                         /* THROTTLE */
	bb_u64(b, 555005);
	bb_u64(b, 101);
	bb_u64(b, 9001);
	bb_trailer(b, a, &t);
	rec_end(b, r);

	t = trl(1006);
	r = rec_begin(b, 6, 0);                         /* UNTHROTTLE */
	bb_u64(b, 555006);
	bb_u64(b, 101);
	bb_u64(b, 9001);
	bb_trailer(b, a, &t);
	rec_end(b, r);

	t = trl(1007);
	r = rec_begin(b, 7, 0);                         /* FORK */
	bb_u32(b, 4250);
	bb_u32(b, 4242);
	bb_u32(b, 4251);
	bb_u32(b, 4243);
	bb_u64(b, 999007);
	bb_trailer(b, a, &t);
	rec_end(b, r);

	t = trl(1008);
	r = rec_begin(b, 8, 0);                         /* READ */
	bb_u32(b, 4242);
	bb_u32(b, 4243);
	bb_u64(b, 11);  /* value */
	bb_u64(b, 12);  /* enabled */
	bb_u64(b, 13);  /* running */
	bb_u64(b, 101); /* id */
	bb_u64(b, 14);  /* lost */
	bb_trailer(b, a, &t);
	rec_end(b, r);

	t = trl(1010);
	r = rec_begin(b, 10, MISC_USER);                /* MMAP2, inode */
	bb_u32(b, 4242);
	bb_u32(b, 4243);
	bb_u64(b, 0x7f0000001000);
	bb_u64(b, 0x3000);
	bb_u64(b, 0x2000);
	bb_u32(b, 0xfe);
	bb_u32(b, 0x01);
	bb_u64(b, 123456);
	bb_u64(b, 77);
	bb_u32(b, 5);   /* PROT_READ|PROT_EXEC */
	bb_u32(b, 2);   /* MAP_PRIVATE */
	bb_str(b, "/usr/bin/app with space", 8);
	bb_trailer(b, a, &t);
	rec_end(b, r);

	t = trl(1100);
	r = rec_begin(b, 10, MISC_USER | MISC_BIT14);   /* MMAP2, build-id */
	bb_u32(b, 4242);
	bb_u32(b, 4243);
	bb_u64(b, 0x7f0000100000);
	bb_u64(b, 0x1000);
	bb_u64(b, 0);
	bb_u8(b, 16);
	bb_u8(b, 0);
	bb_u16(b, 0);
	{
		uint8_t bid[20];
		unsigned i;

		for (i = 0; i < 20; i++)
			bid[i] = (uint8_t)(0xa0 + i);
		bb_bytes(b, bid, 20);
	}
	bb_u32(b, 5);
	bb_u32(b, 2);
	bb_str(b, "/usr/lib/libbid.so", 8);
	bb_trailer(b, a, &t);
	rec_end(b, r);

	t = trl(1011);
	r = rec_begin(b, 11, 0);                        /* AUX */
	bb_u64(b, 0x10000);
	bb_u64(b, 0x2000);
	bb_u64(b, 0x3);
	bb_trailer(b, a, &t);
	rec_end(b, r);

	t = trl(1012);
	r = rec_begin(b, 12, 0);                        /* ITRACE_START */
	bb_u32(b, 4242);
	bb_u32(b, 4244);
	bb_trailer(b, a, &t);
	rec_end(b, r);

	t = trl(1013);
	r = rec_begin(b, 13, 0);                        /* LOST_SAMPLES */
	bb_u64(b, 23);
	bb_trailer(b, a, &t);
	rec_end(b, r);

	t = trl(1014);
	r = rec_begin(b, 14, MISC_BIT13 | MISC_BIT14);  /* SWITCH out, preempt */
	bb_trailer(b, a, &t);
	rec_end(b, r);

	t = trl(1015);
	r = rec_begin(b, 15, MISC_BIT13);               /* SWITCH_CPU_WIDE out */
	bb_u32(b, 5151);
	bb_u32(b, 5152);
	bb_trailer(b, a, &t);
	rec_end(b, r);

	t = trl(1016);
	r = rec_begin(b, 16, 0);                        /* NAMESPACES */
	bb_u32(b, 4242);
	bb_u32(b, 4243);
	bb_u64(b, 2);
	bb_u64(b, 4);
	bb_u64(b, 0xf0000001);
	bb_u64(b, 4);
	bb_u64(b, 0xf0000002);
	bb_trailer(b, a, &t);
	rec_end(b, r);

	t = trl(1017);
	r = rec_begin(b, 17, MISC_KERNEL);              /* KSYMBOL */
	bb_u64(b, 0xffffffffc0001000ULL);
	bb_u32(b, 0x80);
	bb_u16(b, 1);
	bb_u16(b, 0);
	bb_str(b, "bpf_prog_6deef7357e7b4530", 8);
	bb_trailer(b, a, &t);
	rec_end(b, r);

	t = trl(1018);
	r = rec_begin(b, 18, 0);                        /* BPF_EVENT */
	bb_u16(b, 1);
	bb_u16(b, 0);
	bb_u32(b, 77);
	bb_bytes(b, "\x6d\xee\xf7\x35\x7e\x7b\x45\x30", 8);
	bb_trailer(b, a, &t);
	rec_end(b, r);

	t = trl(1019);
	r = rec_begin(b, 19, 0);                        /* CGROUP */
	bb_u64(b, 88);
	bb_str(b, "/sys/fs/cgroup/app", 8);
	bb_trailer(b, a, &t);
	rec_end(b, r);

	t = trl(1020);
	r = rec_begin(b, 20, MISC_KERNEL);              /* TEXT_POKE */
	bb_u64(b, 0xffffffff81000000ULL);
	bb_u16(b, 2);
	bb_u16(b, 5);
	bb_bytes(b, "\x66\x90\xe8\x01\x02\x03\x04", 7);
	bb_pad(b, 8);
	bb_trailer(b, a, &t);
	rec_end(b, r);

	t = trl(1021);
	r = rec_begin(b, 21, 0);                        /* AUX_OUTPUT_HW_ID */
	bb_u64(b, 0x42);
	bb_trailer(b, a, &t);
	rec_end(b, r);

	t = trl(1022);
	r = rec_begin(b, 22, MISC_USER);                /* CALLCHAIN_DEFERRED */
	bb_u64(b, 0xc00c1e);
	bb_u64(b, 2);
	bb_u64(b, 0x401000);
	bb_u64(b, 0x402000);
	bb_trailer(b, a, &t);
	rec_end(b, r);

	/* A COMM of attr 1, whose trailer is shorter: TID, TIME, IDENTIFIER. */
	t = trl(1200);
	t.id = 201;
	r = rec_begin(b, 3, MISC_USER);
	bb_u32(b, 4242);
	bb_u32(b, 4245);
	bb_str(b, "helper-thread", 8);
	bb_trailer(b, &cat_attrs[1], &t);
	rec_end(b, r);
}

/* --- samples ------------------------------------------------------------ */

#define ALL_TIME 2000
#define GROUP_TIME 2100
#define GROUP2_TIME 2101
#define MIN_TIME 2200

static uint64_t reg_value(unsigned bit)
{
	return 0x1000 + bit;
}

static void bb_regs(struct bb *b, uint64_t abi, uint64_t mask)
{
	unsigned bit;

	bb_u64(b, abi);
	if (!abi)
		return;
	for (bit = 0; bit < 64; bit++)
		if (mask & (1ULL << bit))
			bb_u64(b, reg_value(bit));
}

static uint8_t stack_byte(unsigned i)
{
	return (uint8_t)(i * 7 + 3);
}

/* A sample of attr 0 with every field; misc USER | EXACT_IP. */
static void cat_sample_all(struct bb *b)
{
	const struct tattr *a = &cat_attrs[0];
	size_t r = rec_begin(b, 9, MISC_USER | MISC_BIT14);
	unsigned i;

	bb_u64(b, 101);                 /* IDENTIFIER */
	bb_u64(b, 0x401234);            /* IP */
	bb_u32(b, 4242);                /* TID */
	bb_u32(b, 4243);
	bb_u64(b, ALL_TIME);            /* TIME */
	bb_u64(b, 0xdeadbeef0);         /* ADDR */
	bb_u64(b, 101);                 /* ID */
	bb_u64(b, 9001);                /* STREAM_ID */
	bb_u32(b, 1);                   /* CPU */
	bb_u32(b, 0);
	bb_u64(b, 250000);              /* PERIOD */
	bb_u64(b, 31);                  /* READ: value, enabled, running, */
	bb_u64(b, 32);                  /*       id, lost */
	bb_u64(b, 33);
	bb_u64(b, 101);
	bb_u64(b, 34);
	bb_u64(b, 5);                   /* CALLCHAIN */
	bb_u64(b, CTX_KERNEL);
	bb_u64(b, 0xffffffff81001111ULL);
	bb_u64(b, 0xffffffff81002222ULL);
	bb_u64(b, CTX_USER);
	bb_u64(b, 0x401234);
	bb_u32(b, 12);                  /* RAW: size includes padding */
	bb_bytes(b, "raw-payload!", 12);
	bb_u64(b, 2);                   /* BRANCH_STACK, no hw_idx */
	bb_u64(b, 0x401000);
	bb_u64(b, 0x402000);
	bb_u64(b, 0x1);
	bb_u64(b, 0x403000);
	bb_u64(b, 0x404000);
	bb_u64(b, 0x2);
	bb_regs(b, 2, a->regs_user);    /* REGS_USER */
	bb_u64(b, 64);                  /* STACK_USER: size, data, dyn_size */
	/* the data as 64-bit words, which perf swaps in a file of the
	 * other byte order: its bytes as below when read back */
	for (i = 0; i < 64; i += 8) {
		uint64_t w = 0;
		unsigned j;

		for (j = 0; j < 8; j++)
			w |= (uint64_t)stack_byte(i + j) << (8 * j);
		bb_u64(b, w);
	}
	bb_u64(b, 40);
	bb_u64(b, 777);                 /* WEIGHT */
	bb_u64(b, 0x1e05080021ULL);     /* DATA_SRC */
	bb_u64(b, 0x5);                 /* TRANSACTION */
	bb_regs(b, 2, a->regs_intr);    /* REGS_INTR */
	bb_u64(b, 0x12345000);          /* PHYS_ADDR */
	bb_u64(b, 88);                  /* CGROUP */
	bb_u64(b, 4096);                /* DATA_PAGE_SIZE */
	bb_u64(b, 2097152);             /* CODE_PAGE_SIZE */
	bb_u64(b, 16);                  /* AUX */
	bb_bytes(b, "aux-data-16bytes", 16);
	rec_end(b, r);
}

/*
 * Samples of attr 1: a group read, a branch stack with hw_idx, REGS_USER
 * abi 0 then abi 2 with 33 registers, STACK_USER of size 0 (no dyn_size),
 * WEIGHT_STRUCT.
 */
static void cat_sample_group(struct bb *b, bool second)
{
	const struct tattr *a = &cat_attrs[1];
	size_t r = rec_begin(b, 9, MISC_KERNEL);

	bb_u64(b, 201);                 /* IDENTIFIER */
	bb_u32(b, 4242);                /* TID */
	bb_u32(b, 4245);
	bb_u64(b, second ? GROUP2_TIME : GROUP_TIME);
	bb_u64(b, 2);                   /* READ group: nr, enabled, */
	bb_u64(b, 1000);                /*   {value, id} x 2 */
	bb_u64(b, 41);
	bb_u64(b, 201);
	bb_u64(b, 42);
	bb_u64(b, 101);
	bb_u64(b, 1);                   /* BRANCH_STACK: nr, hw_idx, entry */
	bb_u64(b, 7);
	bb_u64(b, 0x500000);
	bb_u64(b, 0x600000);
	bb_u64(b, 0x10);
	bb_regs(b, second ? 2 : 0, a->regs_user);
	bb_u64(b, 0);                   /* STACK_USER size 0: nothing else */
	bb_u64(b, 0x0003000200000064ULL); /* WEIGHT_STRUCT as its u64 */
	rec_end(b, r);
}

/* A sample of attr 2: empty callchain, branch stack with counters. */
static void cat_sample_min(struct bb *b)
{
	size_t r = rec_begin(b, 9, MISC_USER);

	bb_u64(b, 302);                 /* IDENTIFIER */
	bb_u64(b, MIN_TIME);            /* TIME */
	bb_u32(b, 0);                   /* CPU 0 */
	bb_u32(b, 0);
	bb_u64(b, 0);                   /* CALLCHAIN nr 0 */
	bb_u64(b, 2);                   /* BRANCH_STACK with counters */
	bb_u64(b, 0x700000);
	bb_u64(b, 0x700100);
	bb_u64(b, 0);
	bb_u64(b, 0x700200);
	bb_u64(b, 0x700300);
	bb_u64(b, 0);
	bb_u64(b, 0xc1);                /* counters[0] */
	bb_u64(b, 0xc2);                /* counters[1] */
	rec_end(b, r);
}

/* --- synthesized records -------------------------------------------------- */

static const uint8_t tracing_blob[] = "\x17\x08\x44tracing0.6\0"
				       "pretend this is a tracing blob";
#define TRACING_LEN 48  /* sizeof(tracing_blob) rounded to 8 */

static void bb_tracing_payload(struct bb *b)
{
	bb_bytes(b, tracing_blob, sizeof(tracing_blob));
	bb_zero(b, TRACING_LEN - sizeof(tracing_blob));
}

static void rec_tracing_data(struct bb *b)
{
	size_t r = rec_begin(b, 66, 0);

	bb_u32(b, TRACING_LEN);
	bb_u32(b, 0);
	rec_end(b, r);
	bb_tracing_payload(b);  /* outside header.size */
}

static const uint8_t feat_bid[20] = {
	0x4a, 0x5a, 0x9b, 0x0a, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13,
	14, 15, 16,
};

/* A build-id entry; type 0 in the feature section, 67 as a record. */
static void bb_build_id(struct bb *b, uint32_t type, const char *name,
			bool with_size)
{
	size_t r = rec_begin(b, type, (uint16_t)(MISC_USER |
					 (with_size ? MISC_BIT15 : 0)));

	bb_u32(b, (uint32_t)-1);
	bb_bytes(b, feat_bid, 20);
	bb_u8(b, with_size ? 20 : 0);
	bb_zero(b, 3);
	bb_str(b, name, 64);
	rec_end(b, r);
}

static void rec_id_index(struct bb *b)
{
	size_t r = rec_begin(b, 69, 0);
	unsigned i, k, n = 0;

	for (i = 0; i < NR_CAT_ATTRS; i++)
		n += cat_attrs[i].nr_ids;
	bb_u64(b, n);
	for (i = 0; i < NR_CAT_ATTRS; i++) {
		for (k = 0; k < cat_attrs[i].nr_ids; k++) {
			bb_u64(b, cat_attrs[i].ids[k]);
			bb_u64(b, i);
			bb_u64(b, k);
			bb_u64(b, (uint64_t)-1);
		}
	}
	rec_end(b, r);
}

static void rec_auxtrace(struct bb *b)
{
	size_t r = rec_begin(b, 71, 0);

	bb_u64(b, 24);          /* size of the trailing payload */
	bb_u64(b, 0x1000);      /* offset */
	bb_u64(b, 0xabcdef);    /* reference */
	bb_u32(b, 0);           /* idx */
	bb_u32(b, 4243);        /* tid */
	bb_u32(b, 1);           /* cpu */
	bb_u32(b, 0);
	rec_end(b, r);
	/* 24 payload bytes that look like a record, to catch misparsing */
	bb_u32(b, 9);
	bb_u16(b, 0);
	bb_u16(b, 24);
	bb_zero(b, 16);
}

/*
 * The synthesized records that appear in the data section in both modes
 * (perf's own types 65-86 apart from ATTR, FEATURE, TRACING_DATA and the
 * compressed ones), plus unknown types.
 */
static void cat_user_records(struct bb *b)
{
	size_t r;

	r = rec_begin(b, 65, 0);                /* EVENT_TYPE */
	bb_u64(b, 1);
	bb_bytes(b, "old-event-type", 15);
	bb_zero(b, 64 - 15);
	rec_end(b, r);

	bb_build_id(b, 67, "/usr/lib/librecord.so", false);
	rec_id_index(b);

	r = rec_begin(b, 70, 0);                /* AUXTRACE_INFO */
	bb_u32(b, 4);
	bb_u32(b, 0);
	bb_u64(b, 1);
	bb_u64(b, 2);
	rec_end(b, r);

	rec_auxtrace(b);

	r = rec_begin(b, 72, 0);                /* AUXTRACE_ERROR */
	bb_u32(b, 1);
	bb_u32(b, 2);
	bb_u32(b, 1);
	bb_u32(b, 4242);
	bb_u32(b, 4243);
	bb_u32(b, 0);
	bb_u64(b, 0x401000);
	bb_u64(b, 1234);
	bb_str(b, "decoder error", 64);
	rec_end(b, r);

	r = rec_begin(b, 73, 0);                /* THREAD_MAP */
	bb_u64(b, 1);
	bb_u64(b, 4242);
	bb_bytes(b, "worker\0\0\0\0\0\0\0\0\0\0", 16);
	rec_end(b, r);

	r = rec_begin(b, 74, 0);                /* CPU_MAP, range 0-1 */
	bb_u16(b, 2);
	bb_u8(b, 0);
	bb_u8(b, 0);
	bb_u16(b, 0);
	bb_u16(b, 1);
	bb_pad(b, 8);
	rec_end(b, r);

	r = rec_begin(b, 75, 0);                /* STAT_CONFIG */
	bb_u64(b, 1);
	bb_u64(b, 0);
	bb_u64(b, 2);
	rec_end(b, r);

	r = rec_begin(b, 76, 0);                /* STAT */
	bb_u64(b, 101);
	bb_u32(b, 0);
	bb_u32(b, 0);
	bb_u64(b, 10);
	bb_u64(b, 20);
	bb_u64(b, 30);
	rec_end(b, r);

	r = rec_begin(b, 77, 0);                /* STAT_ROUND */
	bb_u64(b, 1);
	bb_u64(b, 123456789);
	rec_end(b, r);

	r = rec_begin(b, 78, 0);                /* EVENT_UPDATE unit */
	bb_u64(b, 0);
	bb_u64(b, 101);
	bb_str(b, "msec", 8);
	rec_end(b, r);

	r = rec_begin(b, 79, 0);                /* TIME_CONV, newer size */
	bb_u64(b, 31);
	bb_u64(b, 1000);
	bb_u64(b, 5000);
	bb_u64(b, 6000);
	bb_u64(b, 0xffffffffffffULL);
	bb_u8(b, 1);
	bb_u8(b, 1);
	bb_zero(b, 6);
	rec_end(b, r);

	r = rec_begin(b, 84, 0);                /* BPF_METADATA: skipped */
	bb_zero(b, 24);
	rec_end(b, r);

	r = rec_begin(b, 99, 0);                /* unknown types */
	bb_zero(b, 8);
	rec_end(b, r);
	r = rec_begin(b, 300, 0);
	bb_zero(b, 16);
	rec_end(b, r);
	r = rec_begin(b, 23, 0);                /* beyond the kernel's 22 */
	bb_zero(b, 8);
	rec_end(b, r);
}

/* --- features --------------------------------------------------------- */

#define FEAT_UNKNOWN 40 /* a bit this reader does not know */

struct tfeat {
	unsigned id;
	struct bb payload;
};

static void feat_add(struct tfeat *f, unsigned *nr, unsigned id, bool be)
{
	struct bb *p = &f[*nr].payload;

	memset(&f[*nr], 0, sizeof(f[*nr]));
	f[*nr].id = id;
	p->be = be;
	switch (id) {
	case 1:
		bb_tracing_payload(p);
		break;
	case 2:
		bb_build_id(p, 0, "/usr/lib/libfeature.so", true);
		bb_build_id(p, 0, "[kernel.kallsyms]", true);
		/* the kernel entry is KERNEL mode: patch its misc */
		bb_patch(p, p->len - (36 + 64) + 4,
			 MISC_KERNEL | MISC_BIT15, 2);
		break;
	case 3: bb_hstr(p, "testhost"); break;
	case 4: bb_hstr(p, "6.1.0-test"); break;
	case 5: bb_hstr(p, "6.1.99"); break;
	case 6: bb_hstr(p, "x86_64"); break;
	case 7:
		bb_u32(p, 8);
		bb_u32(p, 4);
		break;
	case 8: bb_hstr(p, "Test CPU @ 1GHz"); break;
	case 9: bb_hstr(p, "GenuineTest,6,1,2"); break;
	case 10: bb_u64(p, 16384000); break;
	case 11:
		bb_u32(p, 3);
		bb_hstr(p, "/usr/bin/perf");
		bb_hstr(p, "record");
		bb_hstr(p, "./app");
		break;
	case 12: {
		unsigned i, k;

		bb_u32(p, NR_CAT_ATTRS);
		bb_u32(p, 128);
		for (i = 0; i < NR_CAT_ATTRS; i++) {
			bb_attr(p, &cat_attrs[i]);
			bb_u32(p, cat_attrs[i].nr_ids);
			bb_hstr(p, cat_attrs[i].name);
			for (k = 0; k < cat_attrs[i].nr_ids; k++)
				bb_u64(p, cat_attrs[i].ids[k]);
		}
		break;
	}
	case 21:
		bb_u64(p, 1000);
		bb_u64(p, 3000);
		break;
	case 23: bb_u64(p, 1); break;
	case 27:
		bb_u32(p, 0);
		bb_u32(p, 1);
		bb_u32(p, 3);
		bb_u32(p, 5);
		bb_u32(p, 528384);
		break;
	case FEAT_UNKNOWN:
		bb_bytes(p, "unknown feature payload", 23);
		break;
	default:
		abort();
	}
	(*nr)++;
}

/* --- whole files -------------------------------------------------------- */

enum cat_comp {
	COMP_NONE,
	COMP_ZSTD,      /* COMPRESSED (81) */
	COMP_ZSTD2,     /* COMPRESSED2 (83) */
};

struct variant {
	const char *label;
	bool be, pipe;
	enum cat_comp comp;
	bool real_pipe;  /* read through a pipe(2), not a file */
	bool attrs_last; /* file mode: data, features, then ids and attrs */
};

/*
 * The records of the data section, in file order: kernel records, then a
 * round of samples out of time order, the synthesized records, and the
 * last samples.  Times: 1001..1200 for kernel records, 2000..2200 for
 * samples.
 */
static void cat_data_records(struct bb *b)
{
	size_t r;

	cat_kernel_records(b);
	r = rec_begin(b, 82, 0);        /* FINISHED_INIT */
	rec_end(b, r);
	cat_sample_min(b);              /* 2200 before 2000 in the file */
	cat_sample_all(b);
	cat_sample_group(b, true);      /* 2101 before 2100 */
	r = rec_begin(b, 68, 0);        /* FINISHED_ROUND */
	rec_end(b, r);
	cat_sample_group(b, false);
	cat_user_records(b);
	r = rec_begin(b, 68, 0);
	rec_end(b, r);
}

/*
 * Appends src compressed as one zstd stream (flushed, never ended, as
 * perf does) cut into COMPRESSED or COMPRESSED2 records of about chunk
 * bytes of compressed data each.
 */
static void bb_compress(struct bb *b, ZSTD_CStream *z, const struct bb *src,
			enum cat_comp comp, size_t chunk)
{
	uint8_t out[65536];
	ZSTD_inBuffer in = { src->p, src->len, 0 };
	ZSTD_outBuffer o = { out, sizeof(out), 0 };
	size_t done = 0, rem;

	do {
		rem = ZSTD_compressStream2(z, &o, &in, ZSTD_e_flush);
		if (ZSTD_isError(rem))
			abort();
	} while (rem);
	while (done < o.pos) {
		size_t n = MIN(chunk, o.pos - done);
		size_t r;

		if (comp == COMP_ZSTD) {
			r = rec_begin(b, 81, 0);
			bb_bytes(b, out + done, n);
		} else {
			r = rec_begin(b, 83, 0);
			bb_u64(b, n);
			bb_bytes(b, out + done, n);
			bb_pad(b, 8);
		}
		rec_end(b, r);
		done += n;
	}
}

/* The data section for a variant: plain, or the kernel part compressed. */
static void cat_data(struct bb *b, const struct variant *v)
{
	struct bb plain = { .be = v->be };
	ZSTD_CStream *z;
	size_t r;

	if (v->comp == COMP_NONE) {
		cat_data_records(b);
		return;
	}
	/* One stream for the whole file, as perf writes it. */
	z = ZSTD_createCStream();
	if (!z || ZSTD_isError(ZSTD_initCStream(z, 3)))
		abort();
	/*
	 * As perf does: ring-buffer records go into COMPRESSED records; the
	 * synthesized ones (here FINISHED_ROUND and the user records) stay
	 * outside.  Chunks of 97 bytes cut the decompressed records at
	 * arbitrary places and leave the following records unaligned.
	 */
	cat_kernel_records(&plain);
	r = rec_begin(&plain, 82, 0);
	rec_end(&plain, r);
	cat_sample_min(&plain);
	cat_sample_all(&plain);
	cat_sample_group(&plain, true);
	bb_compress(b, z, &plain, v->comp, 97);
	r = rec_begin(b, 68, 0);
	rec_end(b, r);
	bb_free(&plain);
	plain.be = v->be;
	cat_sample_group(&plain, false);
	bb_compress(b, z, &plain, v->comp, 1000);
	bb_free(&plain);
	ZSTD_freeCStream(z);
	cat_user_records(b);
	r = rec_begin(b, 68, 0);
	rec_end(b, r);
}

static const unsigned cat_feat_ids[] = {
	1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 21, 23, 27, FEAT_UNKNOWN,
};

/* A whole perf.data for variant v. */
static void cat_build(struct bb *f, const struct variant *v)
{
	struct tfeat feats[ARRAY_SIZE(cat_feat_ids)];
	unsigned nr_feats = 0, i, k;

	memset(f, 0, sizeof(*f));
	f->be = v->be;
	for (i = 0; i < ARRAY_SIZE(cat_feat_ids); i++) {
		/* pipe mode carries tracing data and build-ids as records */
		if (v->pipe && (cat_feat_ids[i] <= 2 || cat_feat_ids[i] == 12))
			continue;
		feat_add(feats, &nr_feats, cat_feat_ids[i], v->be);
	}

	bb_bytes(f, "PERFILE2", 8);
	if (v->be) /* the magic reads as the swapped u64 */
		memcpy(f->p, "2ELIFREP", 8);
	if (v->pipe) {
		size_t r;

		bb_u64(f, 16);
		for (i = 0; i < NR_CAT_ATTRS; i++) {
			r = rec_begin(f, 64, 0);        /* HEADER_ATTR */
			bb_attr(f, &cat_attrs[i]);
			for (k = 0; k < cat_attrs[i].nr_ids; k++)
				bb_u64(f, cat_attrs[i].ids[k]);
			rec_end(f, r);
		}
		for (i = 0; i < nr_feats; i++) {
			r = rec_begin(f, 80, 0);        /* HEADER_FEATURE */
			bb_u64(f, feats[i].id);
			bb_bytes(f, feats[i].payload.p, feats[i].payload.len);
			rec_end(f, r);                  /* unaligned */
		}
		r = rec_begin(f, 80, 0);                /* the sentinel */
		bb_u64(f, 32);
		rec_end(f, r);
		rec_tracing_data(f);
		for (i = 0; i < NR_CAT_ATTRS; i++) {
			r = rec_begin(f, 78, 0);        /* EVENT_UPDATE name */
			bb_u64(f, 2);
			bb_u64(f, cat_attrs[i].ids[0]);
			bb_str(f, cat_attrs[i].name, 8);
			rec_end(f, r);
		}
		bb_build_id(f, 67, "/usr/lib/libfeature.so", true);
		cat_data(f, v);
	} else {
		uint64_t ids_off[NR_CAT_ATTRS], data_off, data_size;
		uint64_t table_off, feat_off;
		uint64_t attrs_off = 0;
		uint64_t bits[4] = { 0 };
		size_t hdr_fix;

		bb_u64(f, 104);
		bb_u64(f, 128 + 16);
		hdr_fix = f->len;
		bb_zero(f, 104 - f->len);
		if (!v->attrs_last) {
			for (i = 0; i < NR_CAT_ATTRS; i++) {
				ids_off[i] = f->len;
				for (k = 0; k < cat_attrs[i].nr_ids; k++)
					bb_u64(f, cat_attrs[i].ids[k]);
			}
			attrs_off = f->len;
			for (i = 0; i < NR_CAT_ATTRS; i++) {
				bb_attr(f, &cat_attrs[i]);
				bb_u64(f, ids_off[i]);
				bb_u64(f, cat_attrs[i].nr_ids * 8);
			}
		}
		data_off = f->len;
		cat_data(f, v);
		data_size = f->len - data_off;
		table_off = f->len;
		feat_off = table_off + 16 * nr_feats;
		for (i = 0; i < nr_feats; i++) {
			bb_u64(f, feat_off);
			bb_u64(f, feats[i].payload.len);
			feat_off += feats[i].payload.len;
			bits[feats[i].id / 64] |= 1ULL << (feats[i].id % 64);
		}
		for (i = 0; i < nr_feats; i++)
			bb_bytes(f, feats[i].payload.p, feats[i].payload.len);
		if (v->attrs_last) {
			/* perf inject from a pipe: ids and attrs at the end */
			for (i = 0; i < NR_CAT_ATTRS; i++) {
				ids_off[i] = f->len;
				for (k = 0; k < cat_attrs[i].nr_ids; k++)
					bb_u64(f, cat_attrs[i].ids[k]);
			}
			attrs_off = f->len;
			for (i = 0; i < NR_CAT_ATTRS; i++) {
				bb_attr(f, &cat_attrs[i]);
				bb_u64(f, ids_off[i]);
				bb_u64(f, cat_attrs[i].nr_ids * 8);
			}
		}
		bb_patch(f, hdr_fix, attrs_off, 8);
		bb_patch(f, hdr_fix + 8, NR_CAT_ATTRS * 144, 8);
		bb_patch(f, hdr_fix + 16, data_off, 8);
		bb_patch(f, hdr_fix + 24, data_size, 8);
		for (i = 0; i < 4; i++)
			bb_patch(f, 72 + 8 * i, bits[i], 8);
	}
	for (i = 0; i < nr_feats; i++)
		bb_free(&feats[i].payload);
}

/* --- opening bytes --------------------------------------------------------- */

/* Opens bytes from a memory file (seekable) or through a pipe(2). */
static struct perfdata_reader *open_bytes(const struct bb *f, bool real_pipe,
					  const struct perfdata_opts *opts,
					  struct err *err, int *fd_out)
{
	struct perfdata_reader *r;
	int fd;

	if (real_pipe) {
		int p[2];
		size_t done = 0;

		pid_t pid = 0;

		if (pipe2(p, O_CLOEXEC) < 0)
			abort();
		/*
		 * Small files fit in the pipe; for bigger ones a child
		 * writes while the reader reads (a reader that stops early
		 * kills it with SIGPIPE; main() reaps it).
		 */
		if (fcntl(p[1], F_SETPIPE_SZ, 1 << 20) < (int)f->len) {
			pid = fork();
			if (pid < 0)
				abort();
		}
		if (pid == 0) {
			if (f->len > (1u << 20))
				close(p[0]); /* the child only writes */
			while (done < f->len) {
				ssize_t n = write(p[1], f->p + done,
						  f->len - done);

				if (n <= 0)
					break;
				done += (size_t)n;
			}
		}
		if (pid == 0 && f->len > (1u << 20))
			_exit(0);       /* the child */
		close(p[1]);
		fd = p[0];
	} else {
		fd = memfd_create("test_perfdata", MFD_CLOEXEC);
		if (fd < 0 || write(fd, f->p, f->len) != (ssize_t)f->len)
			abort();
	}
	r = perfdata_open_fd(fd, "test.data", opts, err);
	if (!r) {
		close(fd);
		fd = -1;
	}
	*fd_out = fd;
	return r;
}

/* Reads every event; returns the formatted lines, one per event. */
struct readall {
	struct strbuf lines;
	unsigned nr;
	int rc;             /* last perfdata_next() result */
	struct err err;
};

static void read_all(struct perfdata_reader *r, struct readall *ra)
{
	struct event ev;

	memset(ra, 0, sizeof(*ra));
	strbuf_init(&ra->lines);
	while ((ra->rc = perfdata_next(r, &ev)) > 0) {
		perfdata_format_event(r, &ev, &ra->lines);
		strbuf_addch(&ra->lines, '\n');
		ra->nr++;
	}
	ra->err = *perfdata_err(r);
}

/* --- checking the catalogue ------------------------------------------------- */

#define MAX_EVENTS 128

/* What we keep of each delivered event (the reader's pointers expire). */
struct seen {
	struct event ev;
	char line[1024];
	uint64_t cc[8];
	unsigned cc_nr;
	uint64_t regs_user[40], regs_intr[4], read[8];
	uint8_t stack[64], raw[16];
	struct event_branch br[2];
	char str[64];
	unsigned attr;
};

static struct seen seen[MAX_EVENTS];
static unsigned nr_seen;

static void keep(struct perfdata_reader *r, const struct event *ev)
{
	struct seen *s = &seen[nr_seen++];
	struct strbuf sb = STRBUF_INIT;
	const struct event_sample *sm = &ev->sample;

	memset(s, 0, sizeof(*s));
	s->ev = *ev;
	s->attr = ev->attr ? ev->attr->index : UINT32_MAX;
	perfdata_format_event(r, ev, &sb);
	snprintf(s->line, sizeof(s->line), "%s", strbuf_str(&sb));
	strbuf_release(&sb);
	if (ev->type == EVENT_SAMPLE) {
		s->cc_nr = (unsigned)MIN(sm->callchain_nr, 8);
		if (sm->callchain_nr)
			memcpy(s->cc, sm->callchain, s->cc_nr * 8);
		if (sm->regs_user_nr <= 40 && sm->regs_user)
			memcpy(s->regs_user, sm->regs_user,
			       sm->regs_user_nr * 8);
		if (sm->regs_intr_nr <= 4 && sm->regs_intr)
			memcpy(s->regs_intr, sm->regs_intr,
			       sm->regs_intr_nr * 8);
		if (sm->read_nr <= 8 && sm->read_values)
			memcpy(s->read, sm->read_values, sm->read_nr * 8);
		if (sm->stack && sm->stack_size == 64)
			memcpy(s->stack, sm->stack, 64);
		if (sm->raw && sm->raw_size <= 16)
			memcpy(s->raw, sm->raw, sm->raw_size);
		if (sm->branches && sm->branch_nr <= 2)
			memcpy(s->br, sm->branches,
			       sm->branch_nr * sizeof(*s->br));
	} else if (ev->type == EVENT_MMAP && ev->mmap.filename) {
		snprintf(s->str, sizeof(s->str), "%s", ev->mmap.filename);
	} else if (ev->type == EVENT_COMM && ev->comm.comm) {
		snprintf(s->str, sizeof(s->str), "%s", ev->comm.comm);
	} else if (ev->type == EVENT_BUILD_ID && ev->build_id.filename) {
		snprintf(s->str, sizeof(s->str), "%s", ev->build_id.filename);
	}
	s->ev.raw = NULL;
}

/* The delivered event of kernel record type `type` at trailer time t. */
static const struct seen *find(uint32_t type, uint64_t time)
{
	unsigned i;

	for (i = 0; i < nr_seen; i++)
		if (seen[i].ev.rec_type == type && seen[i].ev.time == time)
			return &seen[i];
	return NULL;
}

static const struct seen *find_type(uint32_t type, unsigned nth)
{
	unsigned i;

	for (i = 0; i < nr_seen; i++)
		if (seen[i].ev.rec_type == type && nth-- == 0)
			return &seen[i];
	return NULL;
}

/* The first delivered event whose line contains text. */
static const struct seen *find_text(const char *text)
{
	unsigned i;

	for (i = 0; i < nr_seen; i++)
		if (strstr(seen[i].line, text))
			return &seen[i];
	return NULL;
}

/* The line without its "OFFSET TIME " prefix. */
static const char *line_body(const struct seen *s)
{
	const char *p = strchr(s->line, ' ');

	p = p ? strchr(p + 1, ' ') : NULL;
	return p ? p + 1 : "";
}

#define CHECK_LINE(s, want, ...)                                            \
	do {                                                                \
		if (!(s))                                                   \
			CHECK(false, __VA_ARGS__);                          \
		else                                                        \
			CHECK_STR(line_body(s), want, __VA_ARGS__);         \
	} while (0)

static void check_trailer(const char *vl, const struct seen *s, uint64_t t,
			  const char *what)
{
	if (!CHECK(s != NULL, "%s: %s record delivered", vl, what))
		return;
	CHECK_EQ_U64(s->ev.time, t, "%s: %s time from the trailer", vl, what);
	CHECK(s->ev.pid == 4242 && s->ev.cpu == 1 && s->ev.id == 102 &&
	      s->attr == 0,
	      "%s: %s trailer pid, cpu, id and event", vl, what);
}

static void check_kernel_records(const char *vl)
{
	const struct seen *s;
	static const struct {
		uint32_t type;
		const char *name, *line;
	} others[] = {
		{ 5, "THROTTLE", "THROTTLE time=555005 id=101 stream_id=9001" },
		{ 6, "UNTHROTTLE",
		  "UNTHROTTLE time=555006 id=101 stream_id=9001" },
		{ 8, "READ", "READ pid=4242 tid=4243 values=11,12,13,101,14" },
		{ 11, "AUX", "AUX aux_offset=0x10000 aux_size=8192 flags=0x3" },
		{ 12, "ITRACE_START", "ITRACE_START pid=4242 tid=4244" },
		{ 14, "SWITCH", "SWITCH out preempt" },
		{ 15, "SWITCH_CPU_WIDE",
		  "SWITCH_CPU_WIDE out next_pid=5151 next_tid=5152" },
		{ 16, "NAMESPACES", "NAMESPACES pid=4242 tid=4243 nr=2" },
		{ 17, "KSYMBOL",
		  "KSYMBOL addr=0xffffffffc0001000 len=128 ksym_type=1 "
		  "flags=0 name=\"bpf_prog_6deef7357e7b4530\"" },
		{ 18, "BPF_EVENT", "BPF_EVENT type=1 flags=0 id=77" },
		{ 19, "CGROUP", "CGROUP id=88 path=\"/sys/fs/cgroup/app\"" },
		{ 20, "TEXT_POKE",
		  "TEXT_POKE addr=0xffffffff81000000 old_len=2 new_len=5" },
		{ 21, "AUX_OUTPUT_HW_ID", "AUX_OUTPUT_HW_ID hw_id=66" },
		{ 22, "CALLCHAIN_DEFERRED",
		  "CALLCHAIN_DEFERRED cookie=12586014 nr=2" },
	};
	unsigned i;

	s = find(1, 1001);
	check_trailer(vl, s, 1001, "MMAP");
	if (s) {
		CHECK(s->ev.type == EVENT_MMAP && s->ev.tid == 4243 &&
		      s->ev.mmap.start == 0x400000 &&
		      s->ev.mmap.len == 0x21000 &&
		      s->ev.mmap.pgoff == 0x1000 && !s->ev.mmap.is_mmap2 &&
		      s->ev.mmap.cpumode == EVENT_MODE_USER &&
		      s->ev.mmap.executable,
		      "%s: MMAP fields", vl);
		CHECK_STR(s->str, "/usr/lib/libfoo.so", "%s: MMAP file name",
			  vl);
	}
	s = find(2, 1002);
	check_trailer(vl, s, 1002, "LOST");
	if (s)
		CHECK(s->ev.type == EVENT_LOST && !s->ev.lost.samples &&
		      s->ev.lost.id == 101 && s->ev.lost.lost == 17,
		      "%s: LOST id and count", vl);
	s = find(3, 1003);
	check_trailer(vl, s, 1003, "COMM");
	if (s) {
		CHECK(s->ev.type == EVENT_COMM && s->ev.comm.exec &&
		      s->ev.tid == 4243, "%s: COMM exec flag and tid", vl);
		CHECK_STR(s->str, "worker", "%s: COMM name", vl);
	}
	s = find(4, 1004);
	check_trailer(vl, s, 1004, "EXIT");
	if (s)
		CHECK(s->ev.type == EVENT_EXIT && s->ev.fork.ppid == 1 &&
		      s->ev.tid == 4243 && s->ev.fork.ptid == 2 &&
		      s->ev.fork.time == 999004,
		      "%s: EXIT pid, ppid, tid, ptid, time", vl);
	s = find(7, 1007);
	if (CHECK(s != NULL, "%s: FORK record delivered", vl))
		CHECK(s->ev.type == EVENT_FORK && s->ev.pid == 4250 &&
		      s->ev.fork.ppid == 4242 && s->ev.tid == 4251 &&
		      s->ev.fork.ptid == 4243 && s->ev.fork.time == 999007 &&
		      s->ev.cpu == 1,
		      "%s: FORK pid, ppid, tid, ptid, time", vl);
	s = find(10, 1010);
	check_trailer(vl, s, 1010, "MMAP2");
	if (s) {
		const struct event_mmap *m = &s->ev.mmap;

		CHECK(m->is_mmap2 && m->has_inode && m->maj == 0xfe &&
		      m->min == 1 && m->ino == 123456 &&
		      m->ino_generation == 77 && m->prot == 5 &&
		      m->flags == 2 && m->start == 0x7f0000001000 &&
		      m->len == 0x3000 && m->pgoff == 0x2000 &&
		      m->build_id_size == 0,
		      "%s: MMAP2 inode fields", vl);
		CHECK_STR(s->str, "/usr/bin/app with space",
			  "%s: MMAP2 file name", vl);
	}
	s = find(10, 1100);
	check_trailer(vl, s, 1100, "MMAP2 with build-id");
	if (s) {
		const struct event_mmap *m = &s->ev.mmap;

		CHECK(m->is_mmap2 && !m->has_inode && m->build_id_size == 16 &&
		      m->build_id[0] == 0xa0 && m->build_id[15] == 0xaf &&
		      m->prot == 5 && m->flags == 2,
		      "%s: MMAP2 build-id fields", vl);
		CHECK_LINE(s,
			   "MMAP2 pid=4242 tid=4243 start=0x7f0000100000 "
			   "len=0x1000 pgoff=0x0 "
			   "build_id=a0a1a2a3a4a5a6a7a8a9aaabacadaeaf prot=r-x "
			   "flags=0x2 file=\"/usr/lib/libbid.so\"",
			   "%s: MMAP2 build-id line", vl);
	}
	s = find(13, 1013);
	check_trailer(vl, s, 1013, "LOST_SAMPLES");
	if (s)
		CHECK(s->ev.type == EVENT_LOST && s->ev.lost.samples &&
		      s->ev.lost.lost == 23, "%s: LOST_SAMPLES count", vl);
	for (i = 0; i < ARRAY_SIZE(others); i++) {
		s = find(others[i].type, 1000 + others[i].type);
		check_trailer(vl, s, 1000 + others[i].type, others[i].name);
		CHECK_LINE(s, others[i].line, "%s: %s fields", vl,
			   others[i].name);
	}
	s = find(3, 1200);
	if (CHECK(s != NULL, "%s: COMM of the second event delivered", vl)) {
		CHECK(s->attr == 1 && s->ev.id == 201 && s->ev.tid == 4245 &&
		      s->ev.cpu == -1,
		      "%s: a shorter trailer maps to its own event", vl);
		CHECK_STR(s->str, "helper-thread", "%s: its name", vl);
	}
}

static void check_samples(const char *vl)
{
	const struct seen *s;
	const struct event_sample *sm;
	unsigned i;
	bool ok;

	s = find(9, ALL_TIME);
	if (CHECK(s != NULL, "%s: the full sample is delivered", vl)) {
		sm = &s->ev.sample;
		CHECK(s->attr == 0 && s->ev.type == EVENT_SAMPLE,
		      "%s: full sample: event 0", vl);
		CHECK(sm->cpumode == EVENT_MODE_USER && sm->exact_ip,
		      "%s: full sample: cpumode and exact_ip from misc", vl);
		CHECK_EQ_U64(sm->id, 101, "%s: IDENTIFIER", vl);
		CHECK_EQ_U64(sm->ip, 0x401234, "%s: IP", vl);
		CHECK(s->ev.pid == 4242 && s->ev.tid == 4243, "%s: TID", vl);
		CHECK_EQ_U64(sm->addr, 0xdeadbeef0, "%s: ADDR", vl);
		CHECK_EQ_U64(s->ev.id, 101, "%s: ID", vl);
		CHECK_EQ_U64(sm->stream_id, 9001, "%s: STREAM_ID", vl);
		CHECK_EQ_U64(s->ev.cpu, 1, "%s: CPU", vl);
		CHECK_EQ_U64(sm->period, 250000, "%s: PERIOD", vl);
		CHECK(sm->read_nr == 5 && s->read[0] == 31 &&
		      s->read[1] == 32 && s->read[2] == 33 &&
		      s->read[3] == 101 && s->read[4] == 34,
		      "%s: READ not group: value, enabled, running, id, lost",
		      vl);
		CHECK(sm->callchain_nr == 5 && s->cc[0] == CTX_KERNEL &&
		      s->cc[1] == 0xffffffff81001111ULL &&
		      s->cc[2] == 0xffffffff81002222ULL &&
		      s->cc[3] == CTX_USER && s->cc[4] == 0x401234,
		      "%s: CALLCHAIN with context markers", vl);
		CHECK(sm->raw_size == 12 &&
		      memcmp(s->raw, "raw-payload!", 12) == 0,
		      "%s: RAW size and bytes", vl);
		CHECK(sm->branch_nr == 2 && !sm->has_branch_hw_idx &&
		      s->br[0].from == 0x401000 && s->br[0].to == 0x402000 &&
		      s->br[0].flags == 1 && s->br[1].from == 0x403000 &&
		      s->br[1].to == 0x404000 && s->br[1].flags == 2,
		      "%s: BRANCH_STACK without hw_idx", vl);
		CHECK(sm->regs_user_abi == 2 && sm->regs_user_nr == 20 &&
		      sm->regs_user_mask == 0xff0fff,
		      "%s: REGS_USER abi, count and mask", vl);
		CHECK(s->regs_user[0] == reg_value(0) &&
		      s->regs_user[7] == reg_value(7) &&
		      s->regs_user[8] == reg_value(8) &&
		      s->regs_user[11] == reg_value(11) &&
		      s->regs_user[12] == reg_value(16) &&
		      s->regs_user[19] == reg_value(23),
		      "%s: REGS_USER values by mask rank (SP, IP, R8, R15)",
		      vl);
		ok = sm->stack_size == 64 && sm->stack_dyn_size == 40;
		for (i = 0; i < 64; i++)
			ok = ok && s->stack[i] == stack_byte(i);
		CHECK(ok, "%s: STACK_USER size, bytes as recorded (words, in the "
		      "other byte order), dyn_size",
		      vl);
		CHECK_EQ_U64(sm->weight, 777, "%s: WEIGHT", vl);
		CHECK_EQ_U64(sm->data_src, 0x1e05080021ULL, "%s: DATA_SRC", vl);
		CHECK_EQ_U64(sm->transaction, 5, "%s: TRANSACTION", vl);
		CHECK(sm->regs_intr_abi == 2 && sm->regs_intr_nr == 2 &&
		      sm->regs_intr_mask == 3 &&
		      s->regs_intr[0] == reg_value(0) &&
		      s->regs_intr[1] == reg_value(1),
		      "%s: REGS_INTR", vl);
		CHECK_EQ_U64(sm->phys_addr, 0x12345000, "%s: PHYS_ADDR", vl);
		CHECK_EQ_U64(sm->cgroup, 88, "%s: CGROUP", vl);
		CHECK_EQ_U64(sm->data_page_size, 4096, "%s: DATA_PAGE_SIZE",
			     vl);
		CHECK_EQ_U64(sm->code_page_size, 2097152,
			     "%s: CODE_PAGE_SIZE", vl);
		CHECK_EQ_U64(sm->aux_size, 16, "%s: AUX size", vl);
		CHECK_LINE(s,
			   "SAMPLE event=\"ev-all\" mode=user pid=4242 tid=4243 "
			   "cpu=1 ip=0x401234 addr=0xdeadbeef0 id=101 "
			   "stream_id=9001 period=250000 "
			   "read=0x1f,0x20,0x21,0x65,0x22 "
			   "callchain=0xffffffffffffff80,0xffffffff81001111,"
			   "0xffffffff81002222,0xfffffffffffffe00,0x401234 "
			   "raw=12 branches=2:0x401000>0x402000,"
			   "0x403000>0x404000 regs_user=abi2/20 stack=64/40 "
			   "weight=777 data_src=0x1e05080021 transaction=0x5 "
			   "regs_intr=abi2/2 phys_addr=0x12345000 cgroup=88 "
			   "data_page_size=4096 code_page_size=2097152 aux=16",
			   "%s: full sample line", vl);
	}

	s = find(9, GROUP_TIME);
	if (CHECK(s != NULL, "%s: the group sample is delivered", vl)) {
		sm = &s->ev.sample;
		CHECK(s->attr == 1 && sm->cpumode == EVENT_MODE_KERNEL &&
		      !sm->exact_ip && s->ev.cpu == -1,
		      "%s: group sample: event 1, kernel mode, no cpu", vl);
		CHECK(sm->read_nr == 6 && s->read[0] == 2 &&
		      s->read[1] == 1000 && s->read[2] == 41 &&
		      s->read[3] == 201 && s->read[4] == 42 &&
		      s->read[5] == 101,
		      "%s: READ group: nr, enabled, {value, id} x 2", vl);
		CHECK(sm->branch_nr == 1 && sm->has_branch_hw_idx &&
		      sm->branch_hw_idx == 7 && s->br[0].from == 0x500000 &&
		      s->br[0].to == 0x600000 && s->br[0].flags == 0x10,
		      "%s: BRANCH_STACK with hw_idx", vl);
		CHECK(sm->regs_user_abi == 0 && sm->regs_user_nr == 0 &&
		      sm->regs_user == NULL && sm->regs_user_mask == 0,
		      "%s: REGS_USER abi 0 has no registers", vl);
		CHECK(sm->stack_size == 0 && sm->stack_dyn_size == 0 &&
		      sm->stack == NULL,
		      "%s: STACK_USER size 0 has no data and no dyn_size", vl);
		CHECK_EQ_U64(sm->weight, 0x0003000200000064ULL,
			     "%s: WEIGHT_STRUCT read as its u64", vl);
	}
	s = find(9, GROUP2_TIME);
	if (CHECK(s != NULL, "%s: the second group sample is delivered", vl)) {
		sm = &s->ev.sample;
		CHECK(sm->regs_user_abi == 2 && sm->regs_user_nr == 33 &&
		      s->regs_user[0] == reg_value(0) &&
		      s->regs_user[31] == reg_value(31) &&
		      s->regs_user[32] == reg_value(32),
		      "%s: REGS_USER abi 2 with 33 registers (arm64 mask)",
		      vl);
		CHECK_EQ_U64(sm->weight, 0x0003000200000064ULL,
			     "%s: fields after 33 registers line up", vl);
	}
	s = find(9, MIN_TIME);
	if (CHECK(s != NULL, "%s: the minimal sample is delivered", vl)) {
		sm = &s->ev.sample;
		CHECK(s->attr == 2 && s->ev.cpu == 0 && s->ev.pid == -1 &&
		      sm->callchain_nr == 0 && sm->id == 302,
		      "%s: minimal sample: event 2 by its second id, cpu 0, "
		      "empty callchain", vl);
		CHECK(sm->branch_nr == 2 && s->br[1].from == 0x700200 &&
		      s->br[1].to == 0x700300,
		      "%s: BRANCH_STACK with counters", vl);
		CHECK_LINE(s,
			   "SAMPLE event=\"ev-min\" mode=user cpu=0 id=302 "
			   "callchain=- branches=2:0x700000>0x700100,"
			   "0x700200>0x700300",
			   "%s: minimal sample line", vl);
	}
}

static void check_user_records(const char *vl, const struct variant *v)
{
	const struct seen *s;
	static const struct {
		uint32_t type;
		const char *line;
	} lines[] = {
		{ 68, "FINISHED_ROUND" },
		{ 69, "ID_INDEX nr=6" },
		{ 71, "AUXTRACE size=24 offset=0x1000 ref=0xabcdef idx=0 "
		      "tid=4243 cpu=1" },
		{ 73, "THREAD_MAP nr=1" },
		{ 74, "CPU_MAP map_type=2" },
		{ 77, "STAT_ROUND type=1 time=123456789" },
		{ 78, "EVENT_UPDATE update=0 id=101 unit=\"msec\"" },
		{ 79, "TIME_CONV time_shift=31 time_mult=1000 time_zero=5000" },
		{ 82, "FINISHED_INIT" },
		{ 99, "UNKNOWN(99) size=16" },
		{ 300, "UNKNOWN(300) size=24" },
	};
	unsigned i;

	for (i = 0; i < ARRAY_SIZE(lines); i++) {
		s = lines[i].type == 78 ? find_text("update=0") :
					  find_type(lines[i].type, 0);
		CHECK_LINE(s, lines[i].line, "%s: record %u", vl,
			   lines[i].type);
	}
	for (i = 65; i <= 84; i++) {
		if (i == 66 || i == 80 || i == 81 || i == 83)
			continue; /* pipe-only or compressed: checked below */
		CHECK(find_type(i, 0) != NULL, "%s: record %u delivered", vl,
		      i);
	}
	s = find_type(67, 0);
	if (CHECK(s && s->ev.type == EVENT_BUILD_ID,
		  "%s: BUILD_ID record is a build-id event", vl)) {
		CHECK(s->ev.build_id.pid == -1 &&
		      s->ev.build_id.cpumode == EVENT_MODE_USER &&
		      s->ev.build_id.build_id_size == 20 &&
		      memcmp(s->ev.build_id.build_id, feat_bid, 20) == 0,
		      "%s: BUILD_ID record without a size byte: 20 bytes", vl);
	}
	s = find_type(23, 0);
	CHECK(s && s->ev.type == EVENT_OTHER && s->ev.attr == NULL,
	      "%s: record type 23 (beyond the kernel's) passes as other", vl);
	if (v->pipe) {
		CHECK(find_type(64, NR_CAT_ATTRS - 1) != NULL,
		      "%s: every ATTR record is delivered", vl);
		CHECK(find_type(66, 0) != NULL,
		      "%s: TRACING_DATA record delivered", vl);
	}
	if (v->comp != COMP_NONE)
		CHECK(find_type(v->comp == COMP_ZSTD ? 81 : 83, 1) != NULL,
		      "%s: several compressed records delivered", vl);
}

/* The header information: features, attrs, names, build-ids. */
static void check_info(const char *vl, struct perfdata_reader *r,
		       const struct variant *v)
{
	const struct perfdata_info *in = perfdata_info(r);
	unsigned i, found = 0;

	CHECK(in->pipe == v->pipe && in->swap == v->be,
	      "%s: mode and byte order", vl);
	if (!CHECK_EQ_U64(in->nr_attrs, NR_CAT_ATTRS, "%s: %u attrs", vl,
			  NR_CAT_ATTRS))
		return;
	for (i = 0; i < NR_CAT_ATTRS; i++) {
		const struct event_attr *a = &in->attrs[i];
		const struct tattr *t = &cat_attrs[i];

		CHECK(a->index == i && a->type == t->type &&
		      a->config == t->config &&
		      a->sample_period == t->period &&
		      a->sample_type == t->st && a->read_format == t->rf &&
		      a->branch_sample_type == t->bst &&
		      a->sample_regs_user == t->regs_user &&
		      a->sample_regs_intr == t->regs_intr &&
		      a->sample_stack_user == t->stack_user &&
		      a->file_swap == v->be,
		      "%s: attr %u fields", vl, i);
		CHECK_EQ_U64(a->flags, t->flags, "%s: attr %u flag bitfield",
			     vl, i);
		CHECK(a->sample_id_all && a->freq == !!(t->flags & FL_FREQ),
		      "%s: attr %u sample_id_all and freq", vl, i);
		CHECK_STR(a->name, t->name, "%s: attr %u name", vl, i);
	}
	CHECK_STR(in->hostname, "testhost", "%s: hostname", vl);
	CHECK_STR(in->osrelease, "6.1.0-test", "%s: osrelease", vl);
	CHECK_STR(in->version, "6.1.99", "%s: version", vl);
	CHECK_STR(in->arch, "x86_64", "%s: arch", vl);
	CHECK(in->arch_id == EVENT_ARCH_X86_64, "%s: arch id", vl);
	CHECK(in->has_nrcpus && in->nr_cpus_avail == 8 &&
	      in->nr_cpus_online == 4, "%s: nrcpus (available first)", vl);
	CHECK_STR(in->cpudesc, "Test CPU @ 1GHz", "%s: cpudesc", vl);
	CHECK_STR(in->cpuid, "GenuineTest,6,1,2", "%s: cpuid", vl);
	CHECK_EQ_U64(in->total_mem_kb, 16384000, "%s: total_mem", vl);
	if (CHECK_EQ_U64(in->nr_cmdline, 3, "%s: cmdline count", vl))
		CHECK(!strcmp(in->cmdline[0], "/usr/bin/perf") &&
		      !strcmp(in->cmdline[2], "./app"),
		      "%s: cmdline strings", vl);
	CHECK(in->has_sample_time && in->first_sample_time == 1000 &&
	      in->last_sample_time == 3000, "%s: sample_time", vl);
	CHECK(in->has_clockid_res && in->clockid_res_ns == 1,
	      "%s: clockid", vl);
	CHECK(in->has_compressed && in->comp_type == 1 &&
	      in->comp_level == 3 && in->comp_ratio == 5 &&
	      in->comp_mmap_len == 528384, "%s: compressed feature", vl);
	CHECK((in->features[0] >> 3 & 1) && (in->features[0] >> 27 & 1) &&
	      (in->features[0] >> FEAT_UNKNOWN & 1) &&
	      (in->features[0] >> 1 & 1),
	      "%s: feature bits, unknown ones included", vl);
	if (CHECK_EQ_U64(in->tracing_data_size, TRACING_LEN,
			 "%s: tracing data size", vl))
		CHECK(memcmp(in->tracing_data, tracing_blob,
			     sizeof(tracing_blob)) == 0,
		      "%s: tracing data bytes", vl);
	for (i = 0; i < in->nr_build_ids; i++) {
		const struct perfdata_build_id *b = &in->build_ids[i];

		if (!strcmp(b->filename, "/usr/lib/libfeature.so") &&
		    b->size == 20 && !memcmp(b->build_id, feat_bid, 20) &&
		    b->pid == -1 && b->cpumode == EVENT_MODE_USER &&
		    !b->from_mmap)
			found |= 1;
		if (!strcmp(b->filename, "/usr/lib/libbid.so") &&
		    b->size == 16 && b->build_id[0] == 0xa0 && b->from_mmap)
			found |= 2;
		if (!strcmp(b->filename, "/usr/lib/librecord.so") &&
		    b->size == 20)
			found |= 4;
		if (!strcmp(b->filename, "[kernel.kallsyms]") &&
		    b->cpumode == EVENT_MODE_KERNEL)
			found |= 8;
	}
	CHECK(found & 1, "%s: build-id from the %s", vl,
	      v->pipe ? "BUILD_ID record" : "build_id feature");
	CHECK(found & 2, "%s: build-id from MMAP2", vl);
	CHECK(found & 4, "%s: build-id from a BUILD_ID record", vl);
	if (!v->pipe)
		CHECK(found & 8, "%s: kernel build-id from the feature", vl);
}

static void check_stats(const char *vl, struct perfdata_reader *r,
			const struct variant *v)
{
	const struct perfdata_stats *st = perfdata_stats(r);
	unsigned t;
	bool ok = true;

	for (t = 1; t <= 22; t++) {
		uint64_t want = t == 9 ? 4 : t == 10 ? 2 : t == 3 ? 2 : 1;

		if (st->records[t] != want) {
			DIAG("record type %u counted %llu times, want %llu",
			     t, (unsigned long long)st->records[t],
			     (unsigned long long)want);
			ok = false;
		}
	}
	CHECK(ok, "%s: kernel records counted by type", vl);
	CHECK_EQ_U64(st->records[68], 2, "%s: FINISHED_ROUND count", vl);
	CHECK_EQ_U64(st->records[64], v->pipe ? NR_CAT_ATTRS : 0,
		     "%s: ATTR count", vl);
	CHECK_EQ_U64(st->records[99], 1, "%s: unknown type 99 counted", vl);
	CHECK_EQ_U64(st->unknown_records, 3,
		     "%s: unknown records (99, 300 and 23)", vl);
	CHECK(st->samples_by_attr && st->samples_by_attr[0] == 1 &&
	      st->samples_by_attr[1] == 2 && st->samples_by_attr[2] == 1,
	      "%s: samples per event", vl);
	CHECK(st->lost_records == 17 && st->lost_samples == 23,
	      "%s: lost records and samples", vl);
	CHECK(st->time_min == ALL_TIME && st->time_max == MIN_TIME,
	      "%s: sample time span", vl);
	CHECK_EQ_U64(st->out_of_order, 0, "%s: nothing out of order", vl);
	CHECK_EQ_U64(st->rounds, 2, "%s: rounds", vl);
	CHECK(st->ends_with_round, "%s: ends with a round", vl);
	if (v->comp != COMP_NONE)
		CHECK(st->compressed_bytes_in > 0 &&
		      st->compressed_bytes_out > st->compressed_bytes_in,
		      "%s: decompressed byte counts", vl);
}

/* Kernel records and samples come out in time order. */
static void check_order(const char *vl)
{
	uint64_t last = 0;
	unsigned i, timed = 0;
	bool ok = true;

	for (i = 0; i < nr_seen; i++) {
		if (seen[i].ev.rec_type > 22 || seen[i].ev.time == EVENT_NO_TIME)
			continue;
		if (seen[i].ev.time < last) {
			DIAG("event %u (type %u) at time %llu after %llu", i,
			     seen[i].ev.rec_type,
			     (unsigned long long)seen[i].ev.time,
			     (unsigned long long)last);
			ok = false;
		}
		last = seen[i].ev.time;
		timed++;
	}
	CHECK(ok && timed == 27, "%s: %u timed records in time order", vl,
	      timed);
}

/*
 * With TEST_PERFDATA_CORPUS=DIR set, writes the catalogue files there as
 * DIR/catalogue-LABEL.data (seeds for tests/fuzz/fuzz_perfdata.c).
 */
static void save_corpus(const char *label, const struct bb *f)
{
	const char *dir = getenv("TEST_PERFDATA_CORPUS");
	char path[512];
	FILE *out;

	if (!dir)
		return;
	snprintf(path, sizeof(path), "%s/catalogue-%s.data", dir, label);
	out = fopen(path, "wb");
	if (!out || fwrite(f->p, 1, f->len, out) != f->len)
		DIAG("cannot write %s", path);
	if (out)
		fclose(out);
}

/* Runs the catalogue through the reader and returns the dump lines. */
/* --- events copied (event_copy.h) ------------------------------------------ */

/* Whether n bytes at p are NULL or within len bytes at b. */
static bool in_buf(const void *p, size_t n, const void *b, size_t len)
{
	const uint8_t *x = p, *s = b;

	return !p || (x >= s && n <= len && (size_t)(x - s) <= len - n);
}

static bool str_in_buf(const char *p, const void *b, size_t len)
{
	return !p || in_buf(p, strlen(p) + 1, b, len);
}

/* Whether everything copy c points to (but its attr) is in buf. */
static bool copy_inside(const struct event *c, const void *buf, size_t len)
{
	const struct event_sample *s = &c->sample;

	if (!in_buf(c->raw, c->raw_len, buf, len))
		return false;
	switch (c->type) {
	case EVENT_SAMPLE:
		return in_buf(s->callchain, s->callchain_nr * 8, buf, len) &&
		       in_buf(s->regs_user, s->regs_user_nr * 8, buf, len) &&
		       in_buf(s->regs_intr, s->regs_intr_nr * 8, buf, len) &&
		       in_buf(s->stack, s->stack_size, buf, len) &&
		       in_buf(s->raw, s->raw_size, buf, len) &&
		       in_buf(s->branches, s->branch_nr * sizeof(*s->branches),
			      buf, len) &&
		       in_buf(s->read_values, s->read_nr * 8, buf, len);
	case EVENT_MMAP:
		return str_in_buf(c->mmap.filename, buf, len);
	case EVENT_COMM:
		return str_in_buf(c->comm.comm, buf, len);
	case EVENT_BUILD_ID:
		return str_in_buf(c->build_id.filename, buf, len);
	default:
		return true;
	}
}

struct copy_counts {
	unsigned events, bad, stacks, cut;
};

/*
 * ev copied, whole and without its stack: the copy describes the same
 * event (its dump line; without the stack, that of ev with no stack),
 * points only into its buffer, and a sample's record without the stack is
 * shorter by the stack copy and its dyn_size, its header's size and its
 * STACK_USER size saying so.  In the other byte order the reader's stack
 * is a swapped copy, not the record's bytes: the record is copied whole.
 */
static void check_copy(struct perfdata_reader *r, const struct event *ev,
		       struct copy_counts *n)
{
	struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;
	unsigned flags;

	n->events++;
	for (flags = 0; flags <= EVENT_COPY_NO_STACK; flags++) {
		size_t len = event_copy_size(ev, flags);
		uint8_t *buf = malloc(len ? len : 1);
		struct event c, want = *ev;
		bool ok;

		if (!buf)
			abort();
		memset(buf, 0xa5, len);
		event_copy(&c, buf, ev, flags);
		ok = copy_inside(&c, buf, len) && len % 8 == 0;
		if (flags && ev->type == EVENT_SAMPLE &&
		    ev->sample.stack_size && ev->attr->file_swap) {
			n->stacks++;
			ok = ok && c.raw_len == ev->raw_len &&
			     c.sample.stack_size == ev->sample.stack_size &&
			     !memcmp(c.raw, ev->raw, c.raw_len) &&
			     !memcmp(c.sample.stack, ev->sample.stack,
				     c.sample.stack_size);
		} else if (flags && ev->type == EVENT_SAMPLE &&
			   ev->sample.stack_size) {
			size_t cut = (size_t)(ev->sample.stack - ev->raw);
			uint64_t size;
			uint16_t hsize;

			n->stacks++;
			want.sample.stack = NULL;
			want.sample.stack_size = want.sample.stack_dyn_size = 0;
			want.raw_len = ev->raw_len -
				       (size_t)ev->sample.stack_size - 8;
			memcpy(&hsize, c.raw + 6, 2);
			memcpy(&size, c.raw + cut - 8, 8);
			if (ev->attr->file_swap)
				hsize = __builtin_bswap16(hsize);
			ok = ok && c.raw_len == want.raw_len &&
			     hsize == c.raw_len && size == 0 &&
			     !memcmp(c.raw + 8, ev->raw + 8, cut - 16) &&
			     !memcmp(c.raw + cut,
				     ev->raw + cut + ev->sample.stack_size + 8,
				     c.raw_len - cut);
			n->cut += c.raw_len == want.raw_len;
		} else {
			ok = ok && c.raw_len == ev->raw_len &&
			     (!ev->raw_len || !memcmp(c.raw, ev->raw, c.raw_len));
		}
		perfdata_format_event(r, &want, &a);
		perfdata_format_event(r, &c, &b);
		n->bad += !ok || strcmp(strbuf_str(&a), strbuf_str(&b));
		if ((!ok || strcmp(strbuf_str(&a), strbuf_str(&b))) &&
		    n->bad == 1)
			DIAG("  copy %u of %s differs: %s", flags,
			     strbuf_str(&a), strbuf_str(&b));
		strbuf_reset(&a);
		strbuf_reset(&b);
		free(buf);
	}
	strbuf_release(&a);
	strbuf_release(&b);
}

static char *run_catalogue(const struct variant *v)
{
	struct copy_counts copies = { 0 };
	struct perfdata_reader *r;
	struct bb f;
	struct err err;
	struct event ev;
	struct strbuf all = STRBUF_INIT;
	int fd, rc;
	char *out;
	unsigned i;

	cat_build(&f, v);
	save_corpus(v->label, &f);
	r = open_bytes(&f, v->real_pipe, NULL, &err, &fd);
	bb_free(&f);
	if (!CHECK(r != NULL, "%s: opens", v->label)) {
		DIAG("  %s (offset 0x%llx)", err.msg,
		     (unsigned long long)err.off);
		return NULL;
	}
	nr_seen = 0;
	while (nr_seen < MAX_EVENTS && (rc = perfdata_next(r, &ev)) > 0) {
		check_copy(r, &ev, &copies);
		keep(r, &ev);
	}
	CHECK(copies.bad == 0 && copies.stacks > 0 &&
	      copies.cut == (v->be ? 0 : copies.stacks),
	      "%s: %u events copied whole and without their stack (%u of %u "
	      "stacks left out, %u copies wrong)", v->label, copies.events,
	      copies.cut, copies.stacks, copies.bad);
	if (!CHECK(rc == 0, "%s: reads to the end", v->label))
		DIAG("  %s (offset 0x%llx)", perfdata_err(r)->msg,
		     (unsigned long long)perfdata_err(r)->off);
	check_info(v->label, r, v);
	check_kernel_records(v->label);
	check_samples(v->label);
	check_user_records(v->label, v);
	check_stats(v->label, r, v);
	check_order(v->label);
	/* The kernel records and samples, without offsets, for comparisons. */
	for (i = 0; i < nr_seen; i++) {
		if (seen[i].ev.rec_type > 22)
			continue;
		strbuf_addstr(&all, line_body(&seen[i]));
		strbuf_addch(&all, '\n');
	}
	perfdata_close(r);
	close(fd);
	out = strdup(strbuf_str(&all));
	strbuf_release(&all);
	return out;
}

static void test_catalogue(void)
{
	static const struct variant vs[] = {
		{ "file-le", false, false, COMP_NONE, false, false },
		{ "file-be", true, false, COMP_NONE, false, false },
		{ "file-le-attrs-last", false, false, COMP_NONE, false, true },
		{ "file-be-attrs-last", true, false, COMP_NONE, false, true },
		{ "pipe-le", false, true, COMP_NONE, false, false },
		{ "pipe-be", true, true, COMP_NONE, false, false },
		{ "pipe-le-stream", false, true, COMP_NONE, true, false },
		{ "pipe-be-stream", true, true, COMP_NONE, true, false },
		{ "file-le-zstd", false, false, COMP_ZSTD, false, false },
		{ "file-be-zstd", true, false, COMP_ZSTD, false, false },
		{ "pipe-le-zstd-stream", false, true, COMP_ZSTD, true, false },
		{ "file-le-zstd2", false, false, COMP_ZSTD2, false, false },
		{ "pipe-be-zstd2-stream", true, true, COMP_ZSTD2, true, false },
	};
	char *ref = NULL;
	unsigned i;

	for (i = 0; i < ARRAY_SIZE(vs); i++) {
		char *got = run_catalogue(&vs[i]);

		if (i == 0) {
			ref = got;
			continue;
		}
		if (!CHECK(got && ref && strcmp(got, ref) == 0,
			   "%s: events equal file-le's", vs[i].label) &&
		    got && ref) {
			size_t k = 0;

			while (got[k] == ref[k])
				k++;
			DIAG("  differs at: %.120s", got + k);
			DIAG("  file-le has: %.120s", ref + k);
		}
		free(got);
	}
	free(ref);
}

/* A file-mode capture on a pipe is refused with a pointer to pipe mode. */
static void test_file_mode_on_pipe(void)
{
	struct variant v = { "file on pipe", false, false, COMP_NONE, true,
			     false };
	struct perfdata_reader *r;
	struct bb f;
	struct err err;
	int fd;

	cat_build(&f, &v);
	r = open_bytes(&f, true, NULL, &err, &fd);
	bb_free(&f);
	CHECK(r == NULL && err.code == ERR_UNSUPPORTED &&
	      strstr(err.msg, "pipe"),
	      "file mode from a pipe is refused: %s", err.msg);
	if (r) {
		perfdata_close(r);
		close(fd);
	}
}

/* --- time ordering ------------------------------------------------------ */

/* A file of one attr (TID|TIME, sample_id_all) and the given records. */
struct order_rec {
	uint32_t type;          /* 9 SAMPLE, 3 COMM, 68 FINISHED_ROUND */
	uint64_t time;
};

static const struct tattr order_attr = {
	.name = "cpu-clock", .type = 1, .period = 1000,
	.st = S_IP | S_TID | S_TIME, .flags = FL_SAMPLE_ID_ALL,
	.ids = { 7 }, .nr_ids = 1,
};

/* Starts f: the header and the attr; returns where the data begins. */
static size_t order_file_begin(struct bb *f)
{
	memset(f, 0, sizeof(*f));
	bb_bytes(f, "PERFILE2", 8);
	bb_u64(f, 104);
	bb_u64(f, 144);
	bb_u64(f, 104 + 8);      /* attrs after the ids */
	bb_u64(f, 144);
	bb_u64(f, 0);            /* data, patched */
	bb_u64(f, 0);
	bb_zero(f, 104 - f->len);
	bb_u64(f, 7);            /* ids */
	bb_attr(f, &order_attr);
	bb_u64(f, 104);
	bb_u64(f, 8);
	return f->len;
}

/* Ends f: the data section is from data_off to the end. */
static void order_file_end(struct bb *f, size_t data_off)
{
	bb_patch(f, 40, data_off, 8);
	bb_patch(f, 48, f->len - data_off, 8);
}

static void order_file(struct bb *f, const struct order_rec *recs,
		       unsigned nr)
{
	size_t r, data_off = order_file_begin(f);
	unsigned i;

	for (i = 0; i < nr; i++) {
		r = rec_begin(f, recs[i].type, MISC_USER);
		if (recs[i].type == 9) {
			/* three threads, for the filters */
			bb_u64(f, 0x400000 + recs[i].time);
			bb_u32(f, 1);
			bb_u32(f, 1 + (uint32_t)(recs[i].time % 3));
			bb_u64(f, recs[i].time);
		} else if (recs[i].type == 3) {
			bb_u32(f, 1);
			bb_u32(f, 1);
			bb_str(f, "c", 8);
			bb_u32(f, 1);
			bb_u32(f, 1);
			bb_u64(f, recs[i].time);
		}
		rec_end(f, r);
	}
	order_file_end(f, data_off);
}

/* Reads f; writes the times of timed records into times[]. */
static unsigned order_read(const struct bb *f,
			   const struct perfdata_opts *opts, uint64_t *times,
			   unsigned max, struct perfdata_stats *st)
{
	struct perfdata_reader *r;
	struct err err;
	struct event ev;
	unsigned n = 0;
	int fd, rc;

	r = open_bytes(f, false, opts, &err, &fd);
	if (!r) {
		DIAG("open: %s", err.msg);
		return 0;
	}
	while ((rc = perfdata_next(r, &ev)) > 0)
		if (ev.time != EVENT_NO_TIME && n < max)
			times[n++] = ev.time;
	if (rc < 0)
		DIAG("read: %s", perfdata_err(r)->msg);
	*st = *perfdata_stats(r);
	st->samples_by_attr = NULL;
	perfdata_close(r);
	close(fd);
	return rc < 0 ? 0 : n;
}

static bool times_are(const uint64_t *got, unsigned n, const uint64_t *want,
		      unsigned wn)
{
	unsigned i;

	if (n != wn) {
		DIAG("  %u timed records, want %u", n, wn);
		return false;
	}
	for (i = 0; i < n; i++) {
		if (got[i] != want[i]) {
			DIAG("  record %u has time %llu, want %llu", i,
			     (unsigned long long)got[i],
			     (unsigned long long)want[i]);
			return false;
		}
	}
	return true;
}

static void test_order(void)
{
	static const struct order_rec rounds[] = {
		{ 3, 0 }, { 9, 30 }, { 9, 10 }, { 3, 20 }, { 68, 0 },
		{ 9, 25 }, { 9, 15 }, { 9, 40 }, { 68, 0 },
		{ 9, 35 }, { 3, 50 }, { 9, 45 }, { 68, 0 },
	};
	static const uint64_t sorted[] = { 0, 10, 15, 20, 25, 30, 35, 40, 45,
					   50 };
	static const uint64_t in_file[] = { 0, 30, 10, 20, 25, 15, 40, 35,
					    50, 45 };
	static const struct order_rec late[] = {
		{ 9, 10 }, { 9, 20 }, { 68, 0 }, { 9, 30 }, { 68, 0 },
		{ 9, 5 }, { 9, 40 },
	};
	static const uint64_t late_order[] = { 10, 20, 5, 30, 40 };
	struct perfdata_opts opts = { 0 };
	struct perfdata_stats st;
	uint64_t times[32];
	struct bb f;
	unsigned n;

	order_file(&f, rounds, ARRAY_SIZE(rounds));
	n = order_read(&f, NULL, times, 32, &st);
	CHECK(times_are(times, n, sorted, ARRAY_SIZE(sorted)),
	      "order: records out of order across rounds come out sorted");
	CHECK(st.out_of_order == 0 && st.forced_flushes == 0 &&
	      st.rounds == 3,
	      "order: no out-of-order delivery, no forced flush, 3 rounds");
	opts.file_order = true;
	n = order_read(&f, &opts, times, 32, &st);
	CHECK(times_are(times, n, in_file, ARRAY_SIZE(in_file)),
	      "order: --file-order keeps file order");
	opts.file_order = false;
	opts.max_queue_bytes = 48;
	n = order_read(&f, &opts, times, 32, &st);
	CHECK(n == ARRAY_SIZE(sorted) && st.forced_flushes > 0,
	      "order: a small queue forces flushes and loses nothing "
	      "(%llu forced)", (unsigned long long)st.forced_flushes);
	bb_free(&f);

	/* A record older than what a round already delivered. */
	order_file(&f, late, ARRAY_SIZE(late));
	n = order_read(&f, NULL, times, 32, &st);
	CHECK(times_are(times, n, late_order, ARRAY_SIZE(late_order)),
	      "order: a record older than the flushed rounds comes late");
	CHECK_EQ_U64(st.out_of_order, 1, "order: and is counted");
	bb_free(&f);
}

/*
 * A filter that judges samples as they are read (SAMPLE_FILTER_READ) keeps
 * the others out of the ordering queue; what is delivered must still be
 * what a reader without the filter delivers, less the samples dropped, in
 * the same sequence: with rounds, without them, and with a queue so small
 * that its byte budget decides (perfdata_order.c).
 */
struct order_got {
	uint64_t time[512];
	uint32_t type[512];
	unsigned n;
	unsigned asked;
	bool dropped_came;      /* a sample of tid 2 was delivered */
	uint64_t forced;
	bool put_off;           /* put tid 3 off until delivery */
	unsigned asked_again;   /* asks at delivery */
	bool bad_ask;           /* asked as read after all, or put off */
};

/*
 * Drops tid 2; with g->put_off, answers tid 3 when delivered, and then
 * drops every other one.
 */
static enum sample_verdict order_drops_tid2(void *ctx,
					    const struct sample_key *k)
{
	struct order_got *g = ctx;

	if (!k->as_read) {
		if (!g->put_off || k->tid != 3)
			g->bad_ask = true;
		return g->asked_again++ % 2 ? SAMPLE_DROP : SAMPLE_KEEP;
	}
	g->asked++;
	if (k->tid == 3 && g->put_off)
		return SAMPLE_ASK_AGAIN;
	return k->tid != 2 ? SAMPLE_KEEP : SAMPLE_DROP;
}

/* filtered: 0 none, 1 tid 2 dropped, 2 and tid 3 put off */
static void order_read_all(const struct bb *f, uint64_t max_queue,
			   unsigned filtered, struct order_got *g)
{
	struct perfdata_opts opts = { .max_queue_bytes = max_queue };
	struct perfdata_reader *r;
	struct err err;
	struct event ev;
	int fd, rc;

	memset(g, 0, sizeof(*g));
	g->put_off = filtered == 2;
	r = open_bytes(f, false, &opts, &err, &fd);
	if (!r) {
		DIAG("open: %s", err.msg);
		return;
	}
	if (filtered)
		perfdata_set_sample_filter(r, order_drops_tid2, g,
					   SAMPLE_FILTER_READ);
	while ((rc = perfdata_next(r, &ev)) > 0 && g->n < 512) {
		if (filtered && ev.type == EVENT_SAMPLE && ev.tid == 2)
			g->dropped_came = true;
		g->time[g->n] = ev.time;
		g->type[g->n++] = ev.rec_type;
	}
	if (rc < 0)
		DIAG("read: %s", perfdata_err(r)->msg);
	g->forced = perfdata_stats(r)->forced_flushes;
	perfdata_close(r);
	close(fd);
}

static void test_order_filter_read(void)
{
	static struct order_rec recs[400];
	static struct order_got all, some, later;
	uint64_t seed = 12345, base = 1000;
	unsigned i, k, a, t3, variant, nr = 0, samples = 0;

	/* CPUs' runs of rising times, interleaved, a COMM now and then */
	for (i = 0; i < 360; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		if (i % 40 == 39)
			base += 400;
		if ((seed >> 33) % 10 == 0) {
			recs[nr].type = 3;
		} else {
			recs[nr].type = 9;
			samples++;
		}
		recs[nr++].time = base + (seed >> 40) % 500;
	}
	for (variant = 0; variant < 4; variant++) {
		bool rounds = variant & 1, small = variant & 2;
		const char *vl = rounds ? (small ? "rounds, small queue" :
					  "rounds") :
				 (small ? "no rounds, small queue" :
					  "no rounds");
		struct order_rec with[440];
		unsigned nw = 0;
		bool same = true;
		struct bb f;

		for (i = 0; i < nr; i++) {
			if (rounds && i % 40 == 39)
				with[nw++] = (struct order_rec){ 68, 0 };
			with[nw++] = recs[i];
		}
		order_file(&f, with, nw);
		order_read_all(&f, small ? 512 : 0, 0, &all);
		order_read_all(&f, small ? 512 : 0, 1, &some);
		order_read_all(&f, small ? 512 : 0, 2, &later);
		bb_free(&f);
		for (k = a = 0; k < all.n; k++) {
			if (all.type[k] == 9 && all.time[k] % 3 == 1)
				continue;       /* tid 2: dropped */
			if (a >= some.n || some.time[a] != all.time[k] ||
			    some.type[a] != all.type[k])
				same = false;
			a++;
		}
		CHECK(all.n == nw && same && a == some.n && a < all.n &&
		      !some.dropped_came,
		      "order/read filter, %s: the %u records kept come as "
		      "without the filter (%u of %u)", vl, a, some.n, all.n);
		CHECK(some.asked == samples,
		      "order/read filter, %s: asked about each of the %u "
		      "samples once (%u)", vl, samples, some.asked);
		CHECK(!small || (all.forced > 0 && some.forced > 0),
		      "order/read filter, %s: the budget forced flushes "
		      "(%llu without the filter, %llu with)", vl,
		      (unsigned long long)all.forced,
		      (unsigned long long)some.forced);

		/* tid 3 put off: asked again in time order, as delivered */
		same = true;
		for (k = a = t3 = 0; k < all.n; k++) {
			if (all.type[k] == 9 && all.time[k] % 3 == 1)
				continue;
			if (all.type[k] == 9 && all.time[k] % 3 == 2 &&
			    t3++ % 2)
				continue;       /* the answer when delivered */
			if (a >= later.n || later.time[a] != all.time[k] ||
			    later.type[a] != all.type[k])
				same = false;
			a++;
		}
		CHECK(same && a == later.n && t3 > 0 && !later.dropped_came &&
		      !later.bad_ask,
		      "order/read filter, %s: tid 3's samples, put off, are "
		      "judged in delivery order (%u kept of %u records, %u "
		      "of tid 3)", vl, a, later.n, t3);
		CHECK(later.asked == samples && later.asked_again == t3,
		      "order/read filter, %s: asked about each sample as "
		      "read (%u of %u) and about each put off again (%u of "
		      "%u)", vl, later.asked, samples, later.asked_again, t3);
	}
}

/*
 * A reader told to read only some records (perfdata_visit_only()): the
 * records the first reading indexed (all but samples) and some of the
 * samples.  It must deliver the timed records among them in the sequence
 * the full reading did; and the index must be refused where that could
 * fail (a record delivered late, a queue too small for its rounds).
 */
struct visit_got {
	uint64_t off[512], time[512];
	uint32_t type[512];
	unsigned n;
	const uint64_t *index;
	uint64_t idx[512];
	size_t nr_index;
	bool indexed;
	int rc;
};

static void visit_read(const struct bb *f, uint64_t max_queue,
		       const uint64_t *visit, size_t nr_visit,
		       struct visit_got *g)
{
	struct perfdata_opts opts = { .max_queue_bytes = max_queue };
	struct perfdata_reader *r;
	struct err err;
	struct event ev;
	int fd;

	memset(g, 0, sizeof(*g));
	r = open_bytes(f, false, &opts, &err, &fd);
	if (!r) {
		DIAG("open: %s", err.msg);
		g->rc = -1;
		return;
	}
	if (visit && perfdata_visit_only(r, visit, nr_visit) < 0)
		DIAG("visit: out of memory");
	if (!visit)
		perfdata_index_records(r);
	while ((g->rc = perfdata_next(r, &ev)) > 0 && g->n < 512) {
		if (ev.rec_type > 64)
			continue;       /* perf's own, delivered as read */
		g->off[g->n] = ev.file_off;
		g->time[g->n] = ev.time;
		g->type[g->n++] = ev.rec_type;
	}
	if (!visit) {
		g->indexed = perfdata_record_index(r, &g->index, &g->nr_index);
		if (g->indexed && g->nr_index <= 512)
			memcpy(g->idx, g->index, g->nr_index * 8);
	}
	perfdata_close(r);
	close(fd);
}

static int visit_cmp(const void *a, const void *b)
{
	uint64_t x = perfdata_visit_off(*(const uint64_t *)a),
		 y = perfdata_visit_off(*(const uint64_t *)b);

	return x < y ? -1 : x > y;
}

static void test_visit(void)
{
	static struct order_rec recs[440];
	static struct visit_got all, some;
	static const struct order_rec late[] = {
		{ 9, 10 }, { 9, 20 }, { 68, 0 }, { 9, 30 }, { 68, 0 },
		{ 9, 5 }, { 9, 40 },
	};
	uint64_t seed = 777, base = 1000, visit[512];
	unsigned i, k, a, nr = 0, trial, nv, others = 0;
	bool same = true;
	struct bb f;

	/* CPUs' runs of rising times, interleaved, a COMM now and then */
	for (i = 0; i < 400; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		if (i % 40 == 39) {
			base += 400;
			recs[nr++] = (struct order_rec){ 68, 0 };
		}
		recs[nr].type = (seed >> 33) % 10 == 0 ? 3 : 9;
		others += recs[nr].type == 3;
		recs[nr++].time = base + (seed >> 40) % 500;
	}
	order_file(&f, recs, nr);
	visit_read(&f, 0, NULL, 0, &all);
	CHECK(all.indexed && all.nr_index == others + nr / 41 &&
	      all.n == 400,
	      "visit: the index holds the %u records not samples (%zu), "
	      "%u timed records read", others + nr / 41, all.nr_index, all.n);
	for (trial = 0; trial < 20 && all.indexed; trial++) {
		nv = 0;
		memcpy(visit, all.idx, all.nr_index * 8);
		nv = (unsigned)all.nr_index;
		for (k = 0; k < all.n; k++) {
			seed = seed * 6364136223846793005ull +
			       1442695040888963407ull;
			if (all.type[k] == 9 && (seed >> 33) % 7 <= trial % 3)
				visit[nv++] = all.off[k];
		}
		qsort(visit, nv, 8, visit_cmp);
		visit_read(&f, 0, visit, nv, &some);
		for (k = a = 0; k < all.n; k++) {
			if (!bsearch(&all.off[k], visit, nv, 8, visit_cmp))
				continue;
			if (a >= some.n || some.off[a] != all.off[k] ||
			    some.time[a] != all.time[k])
				same = false;
			a++;
		}
		if (some.rc != 0 || a != some.n)
			same = false;
	}
	CHECK(same, "visit: 20 subsets of the samples, with the records "
	      "not samples, come in the full reading's sequence");
	for (k = a = 0; k < all.nr_index; k++)
		a += (all.idx[k] & PERFDATA_VISIT_ROUND) != 0;
	CHECK(a == nr / 41, "visit: the index marks the %u rounds (%u)",
	      nr / 41, a);
	/* a round is taken as read: the bytes at its offset are not */
	for (k = 0; k < all.n && all.type[k] != 9; k++)
		;
	visit[0] = all.off[k] | PERFDATA_VISIT_ROUND;
	visit[1] = all.off[k + 1];
	visit_read(&f, 0, visit, 2, &some);
	CHECK(some.rc == 0 && some.n == 1 && some.off[0] == all.off[k + 1],
	      "visit: a round's entry delivers no record of the file");
	/* going back is refused, past a round too */
	visit[0] = all.idx[1];
	visit[1] = all.idx[0];
	visit_read(&f, 0, visit, 2, &some);
	CHECK(some.rc < 0, "visit: a list that goes back is an error");
	visit[0] = all.off[k + 1] | PERFDATA_VISIT_ROUND;
	visit[1] = all.off[k];
	visit_read(&f, 0, visit, 2, &some);
	CHECK(some.rc < 0, "visit: a list that goes back past a round is an "
	      "error");
	/* a queue too small for the rounds: no index */
	visit_read(&f, 512, NULL, 0, &some);
	CHECK(!some.indexed, "visit: no index when the queue forced flushes");
	bb_free(&f);
	order_file(&f, late, ARRAY_SIZE(late));
	visit_read(&f, 0, NULL, 0, &some);
	CHECK(!some.indexed, "visit: no index when a record came late");
	bb_free(&f);
}

/* --- sample filters ------------------------------------------------------- */

/*
 * A reader with a sample filter (perfdata_set_sample_filter()) must ask it
 * about every sample once, in delivery order, with the event.order the
 * sample has in an unfiltered reader, and deliver exactly the unfiltered
 * events less the samples it dropped, with the same event.order: the
 * contract the threads of a sharded conversion rely on.
 */
struct filter_ev {
	uint64_t order, file_off, time;
	uint32_t rec_type;
	int32_t tid;
};

struct filter_log {
	struct filter_ev ev[256], asked[256];
	unsigned nr, nr_asked;
	bool bad_ask;   /* asked beyond the log */
};

static bool filter_drops(uint64_t order, int32_t tid)
{
	return (order + (uint32_t)tid) % 2 == 1;
}

static enum sample_verdict filter_test_fn(void *ctx,
					  const struct sample_key *k)
{
	struct filter_log *l = ctx;

	if (l->nr_asked >= ARRAY_SIZE(l->asked)) {
		l->bad_ask = true;
		return SAMPLE_KEEP;
	}
	l->asked[l->nr_asked].order = k->order;
	l->asked[l->nr_asked].tid = k->tid;
	l->nr_asked++;
	return filter_drops(k->order, k->tid) ? SAMPLE_DROP : SAMPLE_KEEP;
}

static int filter_read(const struct variant *v, bool filtered,
		       struct filter_log *l)
{
	struct perfdata_reader *r;
	struct event ev;
	struct err err;
	struct bb f;
	int fd, rc;

	memset(l, 0, sizeof(*l));
	cat_build(&f, v);
	r = open_bytes(&f, v->real_pipe, NULL, &err, &fd);
	bb_free(&f);
	if (!r)
		return -1;
	if (filtered)
		perfdata_set_sample_filter(r, filter_test_fn, l,
					   SAMPLE_FILTER_DELIVERED);
	while ((rc = perfdata_next(r, &ev)) > 0 && l->nr < ARRAY_SIZE(l->ev)) {
		struct filter_ev *e = &l->ev[l->nr++];

		e->order = ev.order;
		e->file_off = ev.file_off;
		e->time = ev.time;
		e->rec_type = ev.rec_type;
		e->tid = ev.tid;
	}
	perfdata_close(r);
	close(fd);
	return rc;
}

static void test_sample_filter(void)
{
	static const struct variant vs[] = {
		{ "file-le", false, false, COMP_NONE, false, false },
		{ "file-be", true, false, COMP_NONE, false, false },
		{ "pipe-le-stream", false, true, COMP_NONE, true, false },
		{ "file-le-zstd", false, false, COMP_ZSTD, false, false },
		{ "pipe-be-zstd2-stream", true, true, COMP_ZSTD2, true, false },
	};
	static struct filter_log all, some;
	unsigned i, k, a, samples, dropped;

	for (i = 0; i < ARRAY_SIZE(vs); i++) {
		const char *vl = vs[i].label;
		bool orders = true, asked = true, same = true;

		if (!CHECK(filter_read(&vs[i], false, &all) == 0 &&
			   filter_read(&vs[i], true, &some) == 0 &&
			   !some.bad_ask, "%s: filter: both read to the end",
			   vl))
			continue;
		samples = dropped = 0;
		for (k = a = 0; k < all.nr; k++) {
			const struct filter_ev *e = &all.ev[k];
			bool drop = false;

			orders &= e->order == k;
			if (e->rec_type == 9) {
				samples++;
				/* asked once, in order, with the same key */
				if (a >= some.nr_asked ||
				    some.asked[a].order != e->order ||
				    some.asked[a].tid != e->tid)
					asked = false;
				a++;
				drop = filter_drops(e->order, e->tid);
			}
			dropped += drop;
		}
		for (k = a = 0; k < all.nr && a <= some.nr; k++) {
			const struct filter_ev *e = &all.ev[k];

			if (e->rec_type == 9 && filter_drops(e->order, e->tid))
				continue;
			if (a == some.nr ||
			    memcmp(&some.ev[a], e, sizeof(*e)) != 0)
				same = false;
			a++;
		}
		same &= a == some.nr;
		CHECK(orders, "%s: filter: event.order counts from 0 in "
		      "delivery order", vl);
		CHECK(asked && some.nr_asked == samples && samples >= 4,
		      "%s: filter: asked about each of the %u samples once, "
		      "with the unfiltered order and tid", vl, samples);
		CHECK(same && dropped > 0 && dropped < samples,
		      "%s: filter: the other events, and the %u samples kept, "
		      "come as without it, same order numbers", vl,
		      samples - dropped);
	}
}

/* --- mapped windows -------------------------------------------------------- */

/*
 * The reader maps a file in windows of 4 MiB from 2 MiB multiples, and
 * 64 KiB more (formats/perfdata_internal.h).  A file of COMM records of
 * every size up to the largest, with records that end exactly where a
 * window does and one that starts 8 bytes before a window's end, must
 * come out whole and in order, read by this thread or with the windows
 * mapped ahead, and the records held (perfdata_hold()) while the reading
 * goes on must keep their bytes.
 */
#define WIN_MIB (1u << 20)
#define WIN_MAX_REC 65528u      /* the largest record, a multiple of 8 */
#define WIN_MIN_REC 40u         /* header, pid/tid, 8 name bytes, trailer */
#define WIN_MAX_RECS 2048u

struct win_file {
	struct bb f;
	size_t data_off;
	uint32_t size[WIN_MAX_RECS]; /* of record i, whose time is i */
	unsigned nr;
	uint32_t seed;
};

/* COMM record number i of size bytes: a name of size - 33 letters. */
static void win_comm(struct win_file *w, size_t size)
{
	size_t r = rec_begin(&w->f, 3, MISC_USER), name = size - 32, k;
	unsigned i = w->nr;

	if (i >= WIN_MAX_RECS || size % 8 || size < WIN_MIN_REC ||
	    size > WIN_MAX_REC)
		abort();
	bb_u32(&w->f, 1);
	bb_u32(&w->f, 1);
	bb_need(&w->f, name);
	for (k = 0; k + 1 < name; k++)
		w->f.p[w->f.len + k] = (uint8_t)('a' + (i + k) % 26);
	w->f.p[w->f.len + name - 1] = 0;
	w->f.len += name;
	bb_u32(&w->f, 1);       /* trailer: pid, tid, time */
	bb_u32(&w->f, 1);
	bb_u64(&w->f, i);
	rec_end(&w->f, r);
	w->size[w->nr++] = (uint32_t)size;
}

/* Appends records of varied sizes until the next one starts at end. */
static void win_fill_to(struct win_file *w, size_t end)
{
	size_t gap, size;

	while ((gap = end - w->f.len) > 0) {
		if (gap <= WIN_MAX_REC) {
			win_comm(w, gap);
			break;
		}
		w->seed = w->seed * 1103515245u + 12345u;
		size = WIN_MIN_REC + (w->seed >> 8) % (WIN_MAX_REC -
						       WIN_MIN_REC + 1);
		size -= size % 8;
		if (gap - size < WIN_MIN_REC)
			size -= WIN_MIN_REC;
		win_comm(w, size);
		if (w->nr % 16 == 0 && end - w->f.len > WIN_MAX_REC + 8) {
			size_t r = rec_begin(&w->f, 68, 0);

			rec_end(&w->f, r);      /* FINISHED_ROUND */
		}
	}
}

static void win_build(struct win_file *w, unsigned mib)
{
	memset(w, 0, sizeof(*w));
	w->data_off = order_file_begin(&w->f);
	w->seed = 1;
	/* window 0 is [0, 4 MiB + 64 KiB): a record ends at its end */
	win_fill_to(w, 4 * WIN_MIB + (64u << 10));
	/* window 1 is [4 MiB, 8 MiB + 64 KiB): the largest record starts
	 * 8 bytes before its end */
	win_fill_to(w, 8 * WIN_MIB + (64u << 10) - 8);
	win_comm(w, WIN_MAX_REC);
	win_fill_to(w, mib * WIN_MIB + 8);
	order_file_end(&w->f, w->data_off);
}

/* A reader of a win_file, checking each record as it comes. */
struct win_reader {
	const struct win_file *w;
	const char *what;
	struct perfdata_reader *r;
	int fd, rc;
	bool no_holds;          /* hold no records (windows go at once) */
	bool rolling;           /* hold one record at a time: each one
				 * held is let go when the next is taken */
	void *tokens[WIN_MAX_RECS / 32 + 1];
	const char *held[WIN_MAX_RECS / 32 + 1];
	unsigned good, nr_held, n;
};

static bool win_open(struct win_reader *wr, const struct win_file *w,
		     bool ahead, struct perfdata_windows *ws, const char *what)
{
	struct err err;

	memset(wr, 0, sizeof(*wr));
	wr->w = w;
	wr->what = what;
	wr->rc = 1;
	wr->r = open_bytes(&w->f, false, NULL, &err, &wr->fd);
	if (!wr->r) {
		DIAG("%s: open: %s", what, err.msg);
		return false;
	}
	if (ahead)
		perfdata_map_ahead(wr->r);
	if (ws)
		perfdata_share_windows(wr->r, ws);
	return true;
}

/* Reads up to max more COMM records (UINT_MAX: to the end). */
static void win_step(struct win_reader *wr, unsigned max)
{
	const struct win_file *w = wr->w;
	unsigned start = wr->n;
	struct event ev;

	while (wr->n - start < max && (wr->rc = perfdata_next(wr->r, &ev)) > 0) {
		unsigned n = wr->n;
		size_t len = w->size[n < w->nr ? n : 0] - 33;

		if (ev.type != EVENT_COMM)
			continue;       /* the rounds */
		if (n < w->nr && ev.time == n &&
		    strlen(ev.comm.comm) == len &&
		    ev.comm.comm[0] == (char)('a' + n % 26) &&
		    ev.comm.comm[len - 1] == (char)('a' + (n + len - 1) % 26))
			wr->good++;
		else if (wr->good == n)
			DIAG("%s: record %u (%u bytes) came out wrong",
			     wr->what, n, n < w->nr ? w->size[n] : 0);
		if (n % 32 == 0 && wr->rolling && wr->nr_held) {
			if (wr->held[0][0] != (char)('a' + (n - 32) % 26)) {
				DIAG("%s: held record %u changed", wr->what,
				     n - 32);
				wr->good--;
			}
			perfdata_release(wr->r, wr->tokens[0]);
			wr->nr_held = 0;
		}
		if (n % 32 == 0 && !wr->no_holds &&
		    (wr->tokens[wr->nr_held] = perfdata_hold(wr->r)))
			wr->held[wr->nr_held++] = ev.comm.comm;
		wr->n++;
	}
}

/*
 * Closes the reader; returns the number of records that came out right,
 * those held checked again (they must have kept their bytes), and in
 * *whole whether it read the whole file and held what it should.  Safe
 * on any thread: it checks nothing itself.
 */
static unsigned win_finish(struct win_reader *wr, bool *whole)
{
	const struct win_file *w = wr->w;
	unsigned i;

	*whole = false;
	if (!wr->r)
		return 0;
	if (wr->rc < 0)
		DIAG("%s: read: %s", wr->what, perfdata_err(wr->r)->msg);
	*whole = wr->rc == 0 && wr->n == w->nr &&
		 wr->nr_held == (wr->no_holds ? 0 :
				 wr->rolling ? 1 : (w->nr + 31) / 32);
	for (i = 0; i < wr->nr_held; i++) {
		unsigned k = wr->rolling ? (w->nr - 1) / 32 * 32 : i * 32;

		if (strlen(wr->held[i]) != w->size[k] - 33 ||
		    wr->held[i][0] != (char)('a' + k % 26)) {
			DIAG("%s: held record %u changed", wr->what, k);
			wr->good--;
		}
		perfdata_release(wr->r, wr->tokens[i]);
	}
	perfdata_close(wr->r);
	close(wr->fd);
	return wr->good;
}

/* win_finish(), checking that the reader read the whole file. */
static unsigned win_close(struct win_reader *wr)
{
	unsigned n = wr->n, held = wr->nr_held, good;
	bool whole;

	good = win_finish(wr, &whole);
	CHECK(whole, "windows, %s: %u records of %u read, %u held", wr->what,
	      n, wr->w->nr, held);
	return good;
}

/* Reads w's file; returns the number of records that came out right. */
static unsigned win_read(const struct win_file *w, bool ahead,
			 const char *what)
{
	struct win_reader wr;

	if (win_open(&wr, w, ahead, NULL, what))
		win_step(&wr, UINT_MAX);
	return win_close(&wr);
}

static void test_map_windows(void)
{
	struct win_file *w = calloc(1, sizeof(*w));
	unsigned max = 0, i;

	if (!w)
		abort();
	win_build(w, 13);
	for (i = 0; i < w->nr; i++)
		max = w->size[i] > max ? w->size[i] : max;
	CHECK(w->nr > 300 && max == WIN_MAX_REC,
	      "windows: %u records up to %u bytes in %zu MiB", w->nr, max,
	      w->f.len >> 20);
	CHECK_EQ_U64(win_read(w, false, "this thread"), w->nr,
		     "windows, this thread: every record whole and in order");
	CHECK_EQ_U64(win_read(w, true, "mapped ahead"), w->nr,
		     "windows, mapped ahead: every record whole and in order");
	bb_free(&w->f);
	free(w);
}

/*
 * Readers of one file in one process share its windows
 * (perfdata_share_windows()): each window is mapped once while they read
 * side by side; a reader far behind finds the windows the others left
 * unmapped and maps them again; readers on threads of their own.  Every
 * record comes out whole and in order in each reader, and the records
 * held keep their bytes.
 */
#define WIN_SHARE_READERS 3
#define WIN_SHARE_ROUNDS 12

struct win_thread {
	const struct win_file *w;
	struct perfdata_windows *ws;
	unsigned good;
	bool whole;
};

static void *win_thread_main(void *arg)
{
	struct win_thread *t = arg;
	struct win_reader wr;

	/* no CHECK here: the harness counts on the main thread only */
	if (win_open(&wr, t->w, false, t->ws, "on a thread"))
		win_step(&wr, UINT_MAX);
	t->good = win_finish(&wr, &t->whole);
	return NULL;
}

static void test_share_windows(void)
{
	struct win_file *w = calloc(1, sizeof(*w));
	struct win_reader wr[WIN_SHARE_READERS];
	struct win_thread t[2];
	pthread_t th[2];
	struct perfdata_windows *ws;
	struct perfdata_windows_stats st;
	unsigned good, i, k;
	uint64_t alone, maps;
	bool balanced = true;

	if (!w)
		abort();
	win_build(w, 48);

	/* one reader: every window once */
	ws = perfdata_windows_new(1);
	if (win_open(&wr[0], w, false, ws, "shared, alone")) {
		wr[0].no_holds = true;
		win_step(&wr[0], UINT_MAX);
	}
	good = win_close(&wr[0]);
	perfdata_windows_stats(ws, &st);
	perfdata_windows_free(ws);
	alone = st.maps;
	CHECK(good == w->nr && alone >= 12 && st.peak <= 3 &&
	      st.unmaps == st.maps && !st.own_unmaps &&
	      st.ahead == st.maps - 1,
	      "shared windows, one reader: %u of %u records right, %llu "
	      "windows mapped (all but the first ahead of the reader), %zu "
	      "at most at once, each unmapped once",
	      good, w->nr, (unsigned long long)alone, st.peak);

	/* side by side: still every window once */
	ws = perfdata_windows_new(WIN_SHARE_READERS);
	for (i = 0; i < WIN_SHARE_READERS; i++)
		win_open(&wr[i], w, false, ws, "shared, side by side");
	for (k = 0; k * 7 < w->nr + 7; k++)
		for (i = 0; i < WIN_SHARE_READERS; i++)
			if (wr[i].r)
				win_step(&wr[i], 7 + i);
	for (i = 0; i < WIN_SHARE_READERS; i++)
		win_step(&wr[i], UINT_MAX);
	good = 0;
	for (i = 0; i < WIN_SHARE_READERS; i++)
		good += win_close(&wr[i]);
	perfdata_windows_stats(ws, &st);
	perfdata_windows_free(ws);
	maps = st.maps;
	CHECK(good == WIN_SHARE_READERS * w->nr && maps == alone &&
	      st.unmaps == st.maps && !st.own_unmaps &&
	      st.ahead == st.maps - 1,
	      "shared windows, %u readers side by side: %u of %u records "
	      "right, %llu windows mapped (%llu alone), all but the first "
	      "ahead of the readers", WIN_SHARE_READERS,
	      good, WIN_SHARE_READERS * w->nr, (unsigned long long)maps,
	      (unsigned long long)alone);

	/*
	 * One reader ahead of the other by the whole file, both putting
	 * their windows back at once, then both holding a record as they
	 * read (taking the next window before putting the last).
	 */
	for (k = 0; k < 2; k++) {
		ws = perfdata_windows_new(2);
		win_open(&wr[0], w, false, ws, "shared, ahead");
		win_open(&wr[1], w, false, ws, "shared, behind");
		wr[0].no_holds = wr[1].no_holds = k == 0;
		wr[0].rolling = wr[1].rolling = k == 1;
		win_step(&wr[0], UINT_MAX);
		win_step(&wr[1], UINT_MAX);
		good = win_close(&wr[0]) + win_close(&wr[1]);
		perfdata_windows_stats(ws, &st);
		perfdata_windows_free(ws);
		/* those held, 4 idle and, until the next put, one ahead */
		CHECK(good == 2 * w->nr && st.maps > alone && st.peak <= 8 &&
		      !st.own_unmaps,
		      "shared windows, a reader behind by the whole file, %s: "
		      "%u of %u records right, %llu windows mapped, at most "
		      "%zu at once", k ? "holding a record" : "holding none",
		      good, 2 * w->nr, (unsigned long long)st.maps, st.peak);
	}

	/*
	 * Readers on threads of their own, several times over: a window
	 * unmapped twice would sooner or later take the other thread's
	 * next window with it (the kernel hands out freed addresses first).
	 */
	good = 0;
	maps = 0;
	for (k = 0; k < WIN_SHARE_ROUNDS; k++) {
		ws = perfdata_windows_new(2);
		for (i = 0; i < 2; i++) {
			t[i] = (struct win_thread){ .w = w, .ws = ws };
			if (pthread_create(&th[i], NULL, win_thread_main,
					   &t[i]))
				abort();
		}
		for (i = 0; i < 2; i++) {
			pthread_join(th[i], NULL);
			good += t[i].whole ? t[i].good : 0;
		}
		perfdata_windows_stats(ws, &st);
		perfdata_windows_free(ws);
		maps += st.maps;
		balanced &= !st.own_unmaps;
	}
	CHECK(good == 2 * WIN_SHARE_ROUNDS * w->nr &&
	      maps >= WIN_SHARE_ROUNDS * alone && balanced,
	      "shared windows, two threads, %u times: %u of %u records "
	      "right, %llu windows mapped, none unmapped twice",
	      WIN_SHARE_ROUNDS, good, 2 * WIN_SHARE_ROUNDS * w->nr,
	      (unsigned long long)maps);
	bb_free(&w->f);
	free(w);
}

/* --- errors ---------------------------------------------------------------- */

/*
 * Reads f to the end; returns 0 when it succeeds, else the error (with
 * its code and offset in *err).
 */
static int read_err(const struct bb *f, bool real_pipe, struct err *err)
{
	struct perfdata_reader *r;
	struct readall ra;
	int fd;

	r = open_bytes(f, real_pipe, NULL, err, &fd);
	if (!r)
		return -1;
	read_all(r, &ra);
	*err = ra.err;
	strbuf_release(&ra.lines);
	perfdata_close(r);
	close(fd);
	return ra.rc < 0 ? -1 : 0;
}

#define CHECK_ERR(f, pipe, code_, off_, ...)                               \
	do {                                                               \
		struct err e_;                                             \
		int rc_ = read_err((f), (pipe), &e_);                      \
		if (!CHECK(rc_ < 0 && e_.code == (code_) &&                \
			   e_.off == (uint64_t)(off_), __VA_ARGS__)) {     \
			if (rc_ < 0)                                       \
				DIAG("  error %s at 0x%llx: %s",           \
				     err_code_str(e_.code),                \
				     (unsigned long long)e_.off, e_.msg);  \
			else                                               \
				DIAG("  no error");                        \
		}                                                          \
	} while (0)

/* A one-attr pipe stream with one SAMPLE written by fn. */
static const struct tattr err_attr = {
	.name = "e", .type = 1, .period = 1,
	.st = S_IP | S_TID | S_TIME | S_CALLCHAIN | S_REGS_USER |
	      S_STACK_USER | S_RAW,
	.regs_user = 0x3, .ids = { 1 }, .nr_ids = 1,
};

static size_t err_stream(struct bb *f, bool be)
{
	size_t r;

	memset(f, 0, sizeof(*f));
	f->be = be;
	bb_bytes(f, be ? "2ELIFREP" : "PERFILE2", 8);
	bb_u64(f, 16);
	r = rec_begin(f, 64, 0);
	bb_attr(f, &err_attr);
	bb_u64(f, 1);
	rec_end(f, r);
	return f->len;
}

enum sample_bug {
	BUG_NONE, BUG_CC_NR, BUG_STACK_SIZE, BUG_DYN_SIZE, BUG_RAW_SIZE,
	BUG_SHORT,
};

/* Appends a SAMPLE; returns the file offset of the field made wrong. */
static size_t err_sample(struct bb *f, enum sample_bug bug)
{
	size_t r = rec_begin(f, 9, MISC_USER), where = 0;

	bb_u64(f, 0x400000);
	bb_u32(f, 1);
	bb_u32(f, 1);
	bb_u64(f, 5);
	if (bug == BUG_CC_NR)
		where = f->len;
	bb_u64(f, bug == BUG_CC_NR ? 0x1000000000000000ULL : 1);
	bb_u64(f, 0x400000);
	if (bug == BUG_RAW_SIZE)
		where = f->len;
	bb_u32(f, bug == BUG_RAW_SIZE ? 5000 : 4);
	bb_u32(f, 0);
	bb_regs(f, 2, err_attr.regs_user);
	if (bug == BUG_STACK_SIZE)
		where = f->len;
	bb_u64(f, bug == BUG_STACK_SIZE ? 0xfff8 : 16);
	bb_zero(f, 16);
	if (bug == BUG_DYN_SIZE)
		where = f->len;
	bb_u64(f, bug == BUG_DYN_SIZE ? 17 : 16);
	if (bug == BUG_SHORT) {
		where = r;
		f->len -= 8;    /* the record ends inside dyn_size */
	}
	rec_end(f, r);
	return where;
}

static void test_errors(void)
{
	struct bb f;
	size_t off, rec;
	struct err e;
	int i;

	for (i = 0; i < 2; i++) {
		bool be = i;
		const char *bo = be ? "be" : "le";

		err_stream(&f, be);
		err_sample(&f, BUG_NONE);
		CHECK(read_err(&f, false, &e) == 0,
		      "errors-%s: the good stream reads", bo);
		bb_free(&f);

		err_stream(&f, be);
		off = err_sample(&f, BUG_CC_NR);
		CHECK_ERR(&f, false, ERR_CORRUPT, off,
			  "errors-%s: callchain nr past the record names its "
			  "offset", bo);
		bb_free(&f);

		err_stream(&f, be);
		off = err_sample(&f, BUG_RAW_SIZE);
		CHECK_ERR(&f, false, ERR_CORRUPT, off,
			  "errors-%s: raw size past the record", bo);
		bb_free(&f);

		err_stream(&f, be);
		off = err_sample(&f, BUG_STACK_SIZE);
		CHECK_ERR(&f, false, ERR_CORRUPT, off,
			  "errors-%s: stack size past the record", bo);
		bb_free(&f);

		err_stream(&f, be);
		off = err_sample(&f, BUG_DYN_SIZE);
		CHECK_ERR(&f, false, ERR_CORRUPT, off,
			  "errors-%s: dyn_size larger than size", bo);
		bb_free(&f);

		err_stream(&f, be);
		off = err_sample(&f, BUG_SHORT);
		CHECK_ERR(&f, false, ERR_TRUNCATED, off,
			  "errors-%s: sample shorter than its sample_type",
			  bo);
		bb_free(&f);
	}

	/* A record whose size is below its header. */
	err_stream(&f, false);
	rec = rec_begin(&f, 3, 0);
	bb_patch(&f, rec + 6, 4, 2);
	CHECK_ERR(&f, false, ERR_CORRUPT, rec,
		  "errors: record size 4 is refused at its offset");
	bb_free(&f);

	/* A stream cut inside a record: from a file and from a pipe. */
	err_stream(&f, false);
	rec = f.len;
	err_sample(&f, BUG_NONE);
	f.len -= 3;
	CHECK_ERR(&f, false, ERR_TRUNCATED, rec,
		  "errors: a pipe-mode file cut inside a record");
	CHECK_ERR(&f, true, ERR_TRUNCATED, rec,
		  "errors: a stream cut inside a record");
	f.len = rec + 5;
	CHECK_ERR(&f, true, ERR_TRUNCATED, rec,
		  "errors: a stream cut inside a record header");
	bb_free(&f);

	/* A sample whose id matches no attr. */
	{
		static const struct tattr two[2] = {
			{ .type = 1, .st = S_IDENTIFIER | S_TIME, .ids = { 1 },
			  .nr_ids = 1 },
			{ .type = 1, .config = 1, .st = S_IDENTIFIER | S_TIME,
			  .ids = { 2 }, .nr_ids = 1 },
		};

		memset(&f, 0, sizeof(f));
		bb_bytes(&f, "PERFILE2", 8);
		bb_u64(&f, 16);
		for (i = 0; i < 2; i++) {
			rec = rec_begin(&f, 64, 0);
			bb_attr(&f, &two[i]);
			bb_u64(&f, two[i].ids[0]);
			rec_end(&f, rec);
		}
		rec = rec_begin(&f, 9, 0);
		bb_u64(&f, 3);
		bb_u64(&f, 10);
		rec_end(&f, rec);
		CHECK_ERR(&f, false, ERR_CORRUPT, rec,
			  "errors: a sample of an unknown event id");
		bb_free(&f);
	}

	/* A sample before any attr. */
	memset(&f, 0, sizeof(f));
	bb_bytes(&f, "PERFILE2", 8);
	bb_u64(&f, 16);
	rec = rec_begin(&f, 9, 0);
	bb_u64(&f, 0);
	rec_end(&f, rec);
	CHECK_ERR(&f, false, ERR_CORRUPT, rec,
		  "errors: a sample before any attribute");
	bb_free(&f);

	/* A TRACING_DATA payload running past the end of a stream. */
	err_stream(&f, false);
	rec = rec_begin(&f, 66, 0);
	bb_u32(&f, 4096);
	bb_u32(&f, 0);
	rec_end(&f, rec);
	bb_zero(&f, 100);
	CHECK_ERR(&f, false, ERR_TRUNCATED, rec,
		  "errors: tracing data past the end of the file");
	CHECK_ERR(&f, true, ERR_TRUNCATED, rec,
		  "errors: tracing data past the end of the stream");
	bb_free(&f);

	/* Not perf.data, and a short header. */
	memset(&f, 0, sizeof(f));
	bb_bytes(&f, "PERFFILE", 8);
	bb_u64(&f, 16);
	CHECK_ERR(&f, false, ERR_FORMAT, 0, "errors: bad magic at offset 0");
	f.len = 12;
	memcpy(f.p, "PERFILE2", 8);
	CHECK_ERR(&f, false, ERR_TRUNCATED, 8, "errors: 12-byte file");
	bb_patch(&f, 8, 50, 8);
	f.len = 16;
	CHECK_ERR(&f, false, ERR_CORRUPT, 8, "errors: header size 50");
	bb_free(&f);
}

/*
 * An AUXTRACE payload size that wraps the 64-bit input offset back to the
 * record itself once the first 4 MiB block is used up (the reader looped
 * forever).  The stream is longer than that block.
 */
static void test_auxtrace_wrap(void)
{
	const uint64_t block = 4u << 20;
	uint64_t rec, first, n;
	struct bb f;
	size_t i;

	err_stream(&f, false);
	rec = f.len;
	first = block - (rec + 48 - 16);
	n = first + (rec - (16 + block));       /* mod 2^64 */
	i = rec_begin(&f, 71, 0);
	bb_u64(&f, n);
	bb_zero(&f, 32);
	rec_end(&f, i);
	for (i = 0; i < (block + (1u << 20)) / 8; i++)
		rec_end(&f, rec_begin(&f, 68, 0));
	CHECK_ERR(&f, false, ERR_TRUNCATED, rec,
		  "errors: an AUXTRACE size that wraps the input offset");
	CHECK_ERR(&f, true, ERR_TRUNCATED, rec,
		  "errors: the same on a stream");
	bb_free(&f);
}

/*
 * Compresses times copies of the n bytes at src as one zstd frame into
 * out; returns its size.  The frame is ended, so that whatever follows it
 * in the stream can start a frame of its own.
 */
static size_t zstd_repeat(const void *src, size_t n, unsigned times,
			  uint8_t *out, size_t cap)
{
	ZSTD_CStream *z = ZSTD_createCStream();
	ZSTD_outBuffer o = { out, cap, 0 };
	size_t rem;
	unsigned i;

	if (!z || ZSTD_isError(ZSTD_initCStream(z, 3)))
		abort();
	for (i = 0; i < times; i++) {
		ZSTD_inBuffer in = { src, n, 0 };

		do {
			rem = ZSTD_compressStream2(z, &o, &in,
						   i + 1 < times ? ZSTD_e_flush :
								   ZSTD_e_end);
			if (ZSTD_isError(rem) || o.pos == o.size)
				abort();
		} while (rem || in.pos < in.size);
	}
	ZSTD_freeCStream(z);
	return o.pos;
}

/* 1 MiB of 4096-byte records of an unknown type, perf.data's byte order. */
static void unknown_records(struct bb *mib)
{
	size_t r;

	memset(mib, 0, sizeof(*mib));
	while (mib->len < (1u << 20)) {
		r = rec_begin(mib, 127, 0);
		bb_u64(mib, mib->len);
		bb_zero(mib, 4096 - 16);
		rec_end(mib, r);
	}
}

/* A pipe stream, with a HEADER_COMPRESSED feature unless mmap_len is 0. */
static void zstd_stream(struct bb *f, uint32_t mmap_len)
{
	size_t r;

	err_stream(f, false);
	if (!mmap_len)
		return;
	r = rec_begin(f, 80, 0);                /* HEADER_FEATURE */
	bb_u64(f, 27);                          /* compressed */
	bb_u32(f, 0);                           /* version */
	bb_u32(f, 1);                           /* zstd */
	bb_u32(f, 3);                           /* level */
	bb_u32(f, 10);                          /* ratio */
	bb_u32(f, mmap_len);
	rec_end(f, r);
}

/*
 * A zstd bomb: a few KiB of COMPRESSED record that expand to 64 MiB of
 * valid records.  perf never writes a record that yields more than
 * mmap_len; the reader must refuse it rather than allocate (and copy)
 * without bound, and take mmap_len from the file only up to 64 MiB.
 */
static void test_zstd_bomb(void)
{
	static uint8_t out[1 << 16];
	static const struct {
		uint32_t mmap_len;
		unsigned mib;
		uint64_t limit;
	} bombs[] = {
		{ 0, 64, 4u << 20 },            /* no feature: 4 MiB */
		{ 528384, 64, 4u << 20 },       /* perf's usual: 4 MiB */
		{ 0xffffffff, 65, 64u << 20 },  /* at most 64 MiB */
	};
	struct bb mib, f;
	size_t n, rec;
	unsigned i;

	unknown_records(&mib);
	for (i = 0; i < ARRAY_SIZE(bombs); i++) {
		char want[64];
		struct err e;

		n = zstd_repeat(mib.p, mib.len, bombs[i].mib, out,
				sizeof(out));
		zstd_stream(&f, bombs[i].mmap_len);
		rec = rec_begin(&f, 81, 0);
		bb_bytes(&f, out, n);
		rec_end(&f, rec);
		snprintf(want, sizeof(want), "more than %llu bytes",
			 (unsigned long long)bombs[i].limit);
		CHECK(read_err(&f, false, &e) < 0 && e.code == ERR_CORRUPT &&
		      e.off == rec && strstr(e.msg, want),
		      "errors: a %zu-byte COMPRESSED record expanding to "
		      "%u MiB, mmap_len %u, is refused past %s: %s", n,
		      bombs[i].mib, bombs[i].mmap_len, want, e.msg);
		bb_free(&f);
	}
	bb_free(&mib);
}

/*
 * A COMPRESSED record may yield as much as mmap_len, decompressed a step
 * at a time as its records are read: all of them come out, in order.
 */
static void test_zstd_large(void)
{
	static uint8_t out[1 << 16];
	struct perfdata_reader *r;
	struct bb mib, f;
	struct event ev;
	struct err e;
	unsigned nr = 0, bad = 0;
	size_t n, rec;
	int fd, rc;

	unknown_records(&mib);
	n = zstd_repeat(mib.p, mib.len, 3, out, sizeof(out));
	zstd_stream(&f, 528384);
	rec = rec_begin(&f, 81, 0);
	bb_bytes(&f, out, n);
	rec_end(&f, rec);
	r = open_bytes(&f, true, NULL, &e, &fd);
	if (!CHECK(r, "zstd 3 MiB: opens"))
		return;
	while ((rc = perfdata_next(r, &ev)) > 0) {
		if (ev.rec_type != 127 || ev.raw_len != 4096)
			continue;
		if (memcmp(ev.raw + 8, mib.p + (nr % 256) * 4096 + 8, 8))
			bad++;
		nr++;
	}
	CHECK(rc == 0 && nr == 768 && !bad,
	      "zstd 3 MiB: one 3 MiB COMPRESSED record gives its 768 records "
	      "in order (rc %d, %u records, %u out of place)", rc, nr, bad);
	perfdata_close(r);
	close(fd);
	bb_free(&f);
	bb_free(&mib);
}

/*
 * perf never nests COMPRESSED records; decompressing nested ones again
 * multiplies the levels' ratios (a 1 KiB file can ask for 100 GiB).  The
 * nested records here hold whole zstd frames, so they could be decoded.
 */
static void test_zstd_nested(void)
{
	static uint8_t out[1 << 16];
	struct bb in, f;
	size_t n, rec;
	unsigned kind;

	for (kind = 81; kind <= 83; kind += 2) {
		memset(&in, 0, sizeof(in));
		rec = rec_begin(&in, 68, 0);            /* FINISHED_ROUND */
		rec_end(&in, rec);
		n = zstd_repeat(in.p, in.len, 1, out, sizeof(out));
		in.len = 0;
		rec = rec_begin(&in, kind, 0);
		if (kind == 83)
			bb_u64(&in, n);
		bb_bytes(&in, out, n);
		if (kind == 83)
			bb_pad(&in, 8);
		rec_end(&in, rec);
		n = zstd_repeat(in.p, in.len, 4, out, sizeof(out));
		zstd_stream(&f, 528384);
		rec = rec_begin(&f, 81, 0);
		bb_bytes(&f, out, n);
		rec_end(&f, rec);
		CHECK_ERR(&f, false, ERR_CORRUPT, rec,
			  "errors: a %s record inside compressed data",
			  kind == 81 ? "COMPRESSED" : "COMPRESSED2");
		bb_free(&f);
		bb_free(&in);
	}
}

/* File-mode header checks, on the catalogue. */
static void test_file_errors(void)
{
	struct variant v = { "hdr", false, false, COMP_NONE, false, false };
	struct bb f, g;
	uint64_t data_off;

	cat_build(&f, &v);
	data_off = f.p[40] | (uint64_t)f.p[41] << 8;

	g = f;
	g.p = malloc(f.len);
	memcpy(g.p, f.p, f.len);
	bb_patch(&g, 48, f.len, 8);     /* data.size past the end */
	CHECK_ERR(&g, false, ERR_CORRUPT, 40,
		  "file errors: data section past the end names data.offset");
	memcpy(g.p, f.p, f.len);
	bb_patch(&g, 16, 72, 8);        /* attr_size */
	CHECK_ERR(&g, false, ERR_CORRUPT, 16,
		  "file errors: attr_size 72 is refused");
	memcpy(g.p, f.p, f.len);
	bb_patch(&g, 32, 144 * 3 + 8, 8);
	CHECK_ERR(&g, false, ERR_CORRUPT, 32,
		  "file errors: attrs.size not a multiple of attr_size");
	memcpy(g.p, f.p, f.len);
	/* the first attr's size field: larger than its slot */
	bb_patch(&g, g.p[24] + 4, 200, 4);
	CHECK_ERR(&g, false, ERR_CORRUPT, g.p[24] + 4,
		  "file errors: attr.size larger than the slot");
	memcpy(g.p, f.p, f.len);
	/* the first feature's size */
	bb_patch(&g, data_off + (g.p[48] | (uint64_t)g.p[49] << 8) + 8,
		 1 << 30, 8);
	CHECK_ERR(&g, false, ERR_CORRUPT,
		  data_off + (g.p[48] | (uint64_t)g.p[49] << 8),
		  "file errors: a feature section past the end names its "
		  "table entry");
	memcpy(g.p, f.p, f.len);
	g.len = (size_t)data_off + 20;
	bb_patch(&g, 48, 0, 8);         /* data.size 0: killed perf */
	CHECK_ERR(&g, false, ERR_TRUNCATED, data_off,
		  "file errors: data.size 0 reads to the end and a cut record "
		  "is an error");
	free(g.p);
	bb_free(&f);
}

/* Header variants that read fine: legacy 72-byte header, data.size 0. */
static void test_header_variants(void)
{
	struct variant v = { "hdr", false, false, COMP_NONE, false, false };
	struct perfdata_reader *r;
	struct readall ra;
	struct bb f, g;
	struct err err;
	uint64_t data_off, data_size;
	int fd;

	cat_build(&f, &v);
	data_off = f.p[40] | (uint64_t)f.p[41] << 8;
	data_size = f.p[48] | (uint64_t)f.p[49] << 8;

	/* data.size 0 (perf killed before rewriting the header): the data
	 * runs to the end of the file and the features are ignored */
	g = f;
	g.p = malloc(f.len);
	memcpy(g.p, f.p, f.len);
	g.len = (size_t)(data_off + data_size);
	bb_patch(&g, 48, 0, 8);
	r = open_bytes(&g, false, NULL, &err, &fd);
	if (CHECK(r != NULL, "data.size 0: opens")) {
		read_all(r, &ra);
		CHECK(ra.rc == 0 && perfdata_stats(r)->records[9] == 4 &&
		      perfdata_info(r)->hostname == NULL,
		      "data.size 0: reads every record to the end of the file, "
		      "no features");
		strbuf_release(&ra.lines);
		perfdata_close(r);
		close(fd);
	}

	/* the legacy 72-byte header has no feature bitmap */
	memcpy(g.p, f.p, f.len);
	g.len = f.len;
	bb_patch(&g, 8, 72, 8);
	r = open_bytes(&g, false, NULL, &err, &fd);
	if (CHECK(r != NULL, "72-byte header: opens")) {
		read_all(r, &ra);
		CHECK(ra.rc == 0 && perfdata_stats(r)->records[9] == 4 &&
		      perfdata_info(r)->nr_feats == 0 &&
		      perfdata_info(r)->hostname == NULL,
		      "72-byte header: reads the records, no features");
		strbuf_release(&ra.lines);
		perfdata_close(r);
		close(fd);
	}
	free(g.p);
	bb_free(&f);
}

/*
 * perf 6.16+ can write COMPRESSED2 records whose u16 header.size
 * overflowed (0 here) while data_size is right; the reader takes
 * 16 + data_size bytes, unpadded.
 */
static void test_compressed2_overflow(void)
{
	struct bb f, plain = { 0 };
	ZSTD_CStream *z = ZSTD_createCStream();
	uint8_t out[8192];
	ZSTD_inBuffer in;
	ZSTD_outBuffer o = { out, sizeof(out), 0 };
	struct perfdata_reader *r;
	struct readall ra;
	struct err err;
	size_t rec, rem;
	int fd;

	if (!z || ZSTD_isError(ZSTD_initCStream(z, 1)))
		abort();
	err_stream(&f, false);
	err_sample(&plain, BUG_NONE);
	err_sample(&plain, BUG_NONE);
	in.src = plain.p;
	in.size = plain.len;
	in.pos = 0;
	do {
		rem = ZSTD_compressStream2(z, &o, &in, ZSTD_e_flush);
		if (ZSTD_isError(rem))
			abort();
	} while (rem);
	ZSTD_freeCStream(z);
	rec = rec_begin(&f, 83, 0);
	bb_u64(&f, o.pos);
	bb_bytes(&f, out, o.pos);
	bb_patch(&f, rec + 6, 0, 2);    /* the wrapped size */
	if ((f.len - rec) % 8 == 0)     /* make "unpadded" visible */
		abort();
	err_sample(&f, BUG_NONE);       /* right after, unaligned */
	r = open_bytes(&f, true, NULL, &err, &fd);
	if (CHECK(r != NULL, "COMPRESSED2 with header.size 0: opens")) {
		read_all(r, &ra);
		CHECK(ra.rc == 0 && perfdata_stats(r)->records[9] == 3 &&
		      perfdata_stats(r)->records[83] == 1,
		      "COMPRESSED2 with header.size 0: two samples inside, one "
		      "after");
		if (ra.rc < 0)
			DIAG("  %s at 0x%llx", ra.err.msg,
			     (unsigned long long)ra.err.off);
		strbuf_release(&ra.lines);
		perfdata_close(r);
		close(fd);
	}
	bb_free(&plain);
	bb_free(&f);
}

int main(void)
{
	alarm(120); /* a reader that loops fails the test instead of hanging */
	test_catalogue();
	test_file_mode_on_pipe();
	test_order();
	test_order_filter_read();
	test_visit();
	test_sample_filter();
	test_map_windows();
	test_share_windows();
	test_errors();
	test_auxtrace_wrap();
	test_zstd_bomb();
	test_zstd_large();
	test_zstd_nested();
	test_file_errors();
	test_header_variants();
	test_compressed2_overflow();
	while (wait(NULL) > 0)
		;
	return done_testing();
}
