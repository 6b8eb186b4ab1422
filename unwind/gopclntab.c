/*
 * gopclntab.c - Go's function table (see gopclntab.h).
 *
 * Layout (Go 1.18 onwards; the runtime's pcHeader, symtab.go):
 *   u32 magic, u8 0, u8 0, u8 pc quantum, u8 pointer size,
 *   then pointer-sized: nfunc, nfiles, text start, and the offsets from
 *   the header of funcnametab, cutab, filetab, pctab and the function
 *   table ("pclntab").
 * The function table holds nfunc pairs of u32 (entry offset from the
 * text start, offset of the function's _func record from the table's
 * start), sorted by entry, then one more entry: the end of the text.
 * A _func record starts u32 entry offset, i32 name offset (into
 * funcnametab, NUL-terminated), i32 args, u32 deferreturn, u32 pcsp
 * (offset into pctab).
 * Go 1.16 and 1.17 (magic 0xfffffffa) differ in three places: the header
 * has no text start, the function table's fields are pointer-sized and
 * its entries addresses, and so is a _func record's first field.
 * A pc-value table is a run of (value delta, pc delta) pairs of unsigned
 * LEB128 numbers: the value delta zig-zag coded, the pc delta in units of
 * the pc quantum, starting from value -1 at the entry; a zero byte where
 * a value delta would follow ends it (except for the first pair).
 */
#include <stdlib.h>
#include <string.h>

#include "unwind/gopclntab.h"

#include "common/base.h"
#include "common/mem.h"
#include "unwind/module.h"

#define GP_SPECIAL_MAX 16  /* functions of kind other than NORMAL */

struct gp_special {
	uint64_t start, end;
	uint8_t kind;
};

struct gopclntab {
	uint8_t *data;             /* the table, owned */
	size_t size;
	uint64_t text;             /* the entries' base address (1.18+) */
	bool absolute;             /* 1.16: entries are addresses, pointer
				    * sized, and so is _func's first field */
	unsigned field;            /* bytes of a function table field */
	uint32_t nfunc;
	unsigned quantum;
	size_t funcnames, pctab;   /* offsets in data, validated */
	size_t ftab;               /* the function table */
	size_t ftab_size;          /* its bytes: entries and _func records */
	struct gp_special special[GP_SPECIAL_MAX];
	unsigned nr_special;
};

static uint32_t gp_u32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static uint64_t gp_word(const uint8_t *p, unsigned ptrsize)
{
	uint64_t lo = gp_u32(p);

	return ptrsize == 8 ? lo | (uint64_t)gp_u32(p + 4) << 32 : lo;
}

void gopclntab_free(struct gopclntab *t)
{
	if (!t)
		return;
	free(t->data);
	free(t);
}

uint32_t gopclntab_count(const struct gopclntab *t)
{
	return t ? t->nfunc : 0;
}

/*
 * The address function i starts at (i <= nfunc: the last entry is the end
 * of the text), and the offset of its record (i < nfunc).  The table holds
 * nfunc pairs and one more entry (checked at parse).
 */
static uint64_t gp_entry(const struct gopclntab *t, uint32_t i)
{
	uint64_t e = gp_word(t->data + t->ftab + 2 * (size_t)t->field * i,
			     t->field);

	return t->absolute ? e : t->text + e;
}

static uint64_t gp_funcoff(const struct gopclntab *t, uint32_t i)
{
	return gp_word(t->data + t->ftab + 2 * (size_t)t->field * i +
			       t->field,
		       t->field);
}

/* Checks the header and the function table; fills t. */
static const char *gp_check(struct gopclntab *t, uint64_t text)
{
	const uint8_t *d = t->data;
	unsigned ptrsize, words, k;
	uint64_t nfunc, off[5], hdr, prev = 0;
	uint32_t i, magic;

	if (t->size < 8)
		return "too short for a header";
	magic = gp_u32(d);
	if (magic != GOPCLNTAB_MAGIC_116 && magic != GOPCLNTAB_MAGIC_118 &&
	    magic != GOPCLNTAB_MAGIC_120)
		return "unknown magic number";
	ptrsize = d[7];
	t->quantum = d[6];
	if (d[4] || d[5] || (ptrsize != 4 && ptrsize != 8) ||
	    (t->quantum != 1 && t->quantum != 2 && t->quantum != 4))
		return "bad header fields";
	/* nfunc, nfiles, [text start,] five table offsets */
	t->absolute = magic == GOPCLNTAB_MAGIC_116;
	words = t->absolute ? 7 : 8;
	hdr = 8 + words * (uint64_t)ptrsize;
	if (t->size < hdr)
		return "too short for a header";
	nfunc = gp_word(d + 8, ptrsize);
	if (!t->absolute && gp_word(d + 8 + 2 * ptrsize, ptrsize))
		text = gp_word(d + 8 + 2 * ptrsize, ptrsize);
	for (k = 0; k < 5; k++) {
		off[k] = gp_word(d + 8 + (words - 5 + k) * ptrsize, ptrsize);
		if (off[k] < hdr || off[k] > t->size)
			return "offset out of the table";
	}
	/* funcnametab, cutab, filetab, pctab, pclntab: in that order */
	for (k = 1; k < 5; k++)
		if (off[k] < off[k - 1])
			return "tables out of order";
	t->field = t->absolute ? ptrsize : 4;
	if (nfunc == 0 || nfunc >= UINT32_MAX / 16 ||
	    (t->size - off[4]) / t->field < 2 * nfunc + 1)
		return "function table out of the table";
	t->nfunc = (uint32_t)nfunc;
	t->text = text;
	t->funcnames = (size_t)off[0];
	t->pctab = (size_t)off[3];
	t->ftab = (size_t)off[4];
	t->ftab_size = t->size - t->ftab;
	for (i = 0; i <= t->nfunc; i++) {
		uint64_t e = gp_entry(t, i);

		if (e < prev)
			return "function table not sorted";
		prev = e;
	}
	return NULL;
}

struct gopclntab *gopclntab_parse(const void *data, size_t size,
				  uint64_t text, const char **why)
{
	struct gopclntab *t = mem_zalloc(1, sizeof(*t));

	*why = "out of memory";
	if (!t)
		return NULL;
	t->data = mem_array(size ? size : 1, 1);
	if (!t->data) {
		free(t);
		return NULL;
	}
	memcpy(t->data, data, size);
	t->size = size;
	*why = gp_check(t, text);
	if (*why) {
		gopclntab_free(t);
		return NULL;
	}
	return t;
}

bool gopclntab_func(const struct gopclntab *t, uint32_t i,
		    struct gopclntab_func *f)
{
	uint64_t funcoff, own;
	uint32_t name_off;
	const uint8_t *rec;
	size_t n, names_left, need;

	memset(f, 0, sizeof(*f));
	if (!t || i >= t->nfunc)
		return false;
	f->index = i;
	f->start = gp_entry(t, i);
	f->end = gp_entry(t, i + 1);
	funcoff = gp_funcoff(t, i);
	/* _func: entry, i32 name offset, i32 args, u32 deferreturn, u32 pcsp */
	need = t->field + 16;
	if (funcoff > t->ftab_size || t->ftab_size - funcoff < need)
		return false;
	rec = t->data + t->ftab + funcoff;
	/* the record's own entry must agree with the table's */
	own = gp_word(rec, t->field);
	if ((t->absolute ? own : t->text + own) != f->start)
		return false;
	name_off = gp_u32(rec + t->field);
	if (name_off >= t->size - t->funcnames)
		return false;
	names_left = t->size - t->funcnames - name_off;
	n = strnlen((const char *)t->data + t->funcnames + name_off,
		    names_left);
	if (n == 0 || n == names_left)
		return false;   /* empty, or no NUL before the end */
	f->name = (const char *)t->data + t->funcnames + name_off;
	f->pcsp = gp_u32(rec + t->field + 12);
	return true;
}

bool gopclntab_find(const struct gopclntab *t, uint64_t addr,
		    struct gopclntab_func *f)
{
	uint32_t lo = 0, hi;

	if (!t)
		return false;
	hi = t->nfunc;
	/* the last function whose entry is at or below addr */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (gp_entry(t, mid) <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return false;
	if (!gopclntab_func(t, lo - 1, f))
		return false;
	return addr >= f->start && addr < f->end;
}

/* An unsigned LEB128 number of at most 32 bits at *p (< end). */
static bool gp_uvarint(const uint8_t **p, const uint8_t *end, uint32_t *v)
{
	unsigned shift;

	*v = 0;
	for (shift = 0; shift < 35; shift += 7) {
		uint8_t b;

		if (*p >= end)
			return false;
		b = *(*p)++;
		*v |= (uint32_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return true;
	}
	return false;
}

bool gopclntab_spdelta(const struct gopclntab *t,
		       const struct gopclntab_func *f, uint64_t addr,
		       int32_t *delta)
{
	const uint8_t *p, *end;
	uint64_t pc;
	int64_t val = -1;
	bool first = true;

	if (!t || !f->pcsp || addr < f->start || addr >= f->end ||
	    f->pcsp >= t->size - t->pctab)
		return false;
	p = t->data + t->pctab + f->pcsp;
	end = t->data + t->size;
	pc = f->start;
	/* Each pair is at least 2 bytes: the loop ends within the table. */
	for (;;) {
		uint32_t uv, pcd;

		if (p >= end || (*p == 0 && !first))
			return false;
		if (!gp_uvarint(&p, end, &uv) || !gp_uvarint(&p, end, &pcd))
			return false;
		val += (int64_t)((uv & 1) ? -(int64_t)(uv >> 1) - 1 :
					    (int64_t)(uv >> 1));
		if (val < INT32_MIN || val > INT32_MAX)
			return false;
		pc += (uint64_t)pcd * t->quantum;
		first = false;
		if (addr < pc) {
			*delta = (int32_t)val;
			return true;
		}
		if (pc >= f->end)
			return false;
	}
}

enum gopclntab_kind gopclntab_kind_of(const char *name)
{
	static const struct {
		const char *name;
		uint8_t kind;
	} known[] = {
		{ "runtime.goexit", GOPCLNTAB_ROOT },
		{ "runtime.mstart", GOPCLNTAB_ROOT },
		{ "runtime.rt0_go", GOPCLNTAB_ROOT },
		{ "runtime.systemstack", GOPCLNTAB_SWITCH },
		{ "runtime.mcall", GOPCLNTAB_SWITCH },
		{ "runtime.morestack", GOPCLNTAB_SWITCH },
		{ "runtime.asmcgocall", GOPCLNTAB_SWITCH },
		{ "runtime.asmcgocall_no_g", GOPCLNTAB_SWITCH },
		{ "runtime.cgocallback", GOPCLNTAB_SWITCH },
		/* vdso calls on the g0 stack */
		{ "runtime.nanotime1", GOPCLNTAB_SWITCH },
		{ "runtime.walltime", GOPCLNTAB_SWITCH },
		{ "runtime.walltime1", GOPCLNTAB_SWITCH },
		{ "time.now", GOPCLNTAB_SWITCH },
		/* signal handlers, on the signal stack (sigaltstack) */
		{ "runtime.sigtramp", GOPCLNTAB_SWITCH },
		{ "runtime.cgoSigtramp", GOPCLNTAB_SWITCH },
	};
	size_t i, n;

	if (!name || (strncmp(name, "runtime.", 8) &&
		      strncmp(name, "time.now", 8)))
		return GOPCLNTAB_NORMAL;
	n = strlen(name);
	/* the ELF symbol table's ABI suffixes */
	if (n > 5 && !strcmp(name + n - 5, ".abi0"))
		n -= 5;
	else if (n > 12 && !strcmp(name + n - 12, ".abiinternal"))
		n -= 12;
	for (i = 0; i < ARRAY_SIZE(known); i++)
		if (strlen(known[i].name) == n &&
		    !memcmp(known[i].name, name, n))
			return known[i].kind;
	return GOPCLNTAB_NORMAL;
}

/* Notes the functions a walk treats specially. */
static void gp_note_special(struct gopclntab *t)
{
	struct gopclntab_func f;
	uint32_t i;

	for (i = 0; i < t->nfunc && t->nr_special < GP_SPECIAL_MAX; i++) {
		enum gopclntab_kind k;

		if (!gopclntab_func(t, i, &f))
			continue;
		k = gopclntab_kind_of(f.name);
		if (k == GOPCLNTAB_NORMAL)
			continue;
		t->special[t->nr_special].start = f.start;
		t->special[t->nr_special].end = f.end;
		t->special[t->nr_special].kind = (uint8_t)k;
		t->nr_special++;
	}
}

/*
 * The table found by its header in the file's loaded bytes: the magic,
 * two zero bytes, the quantum and the pointer size of x86-64, then a
 * header and function table gp_check() accepts whose first function
 * lies in another segment (the text).
 */
static struct gopclntab *gp_search(struct module *m, const uint8_t *file,
				   size_t file_size)
{
	static const uint8_t pat[3][8] = {
		{ 0xfa, 0xff, 0xff, 0xff, 0, 0, 1, 8 },
		{ 0xf0, 0xff, 0xff, 0xff, 0, 0, 1, 8 },
		{ 0xf1, 0xff, 0xff, 0xff, 0, 0, 1, 8 },
	};
	unsigned s, k;

	for (s = 0; s < m->nr_segs; s++) {
		const struct module_seg *seg = &m->segs[s];
		const uint8_t *lo, *hi, *p;

		if (seg->offset >= file_size ||
		    seg->filesz > file_size - seg->offset)
			continue;
		lo = file + seg->offset;
		hi = lo + seg->filesz;
		for (p = lo; hi - p >= 8; p += 8) {
			struct gopclntab *t;
			const char *why;
			uint64_t first;
			unsigned e;

			for (k = 0; k < ARRAY_SIZE(pat); k++)
				if (!memcmp(p, pat[k], 8))
					break;
			if (k == ARRAY_SIZE(pat))
				continue;
			t = gopclntab_parse(p, (size_t)(hi - p), 0, &why);
			if (!t)
				continue;
			first = gp_entry(t, 0);
			for (e = 0; e < m->nr_segs; e++)
				if (first >= m->segs[e].vaddr &&
				    first - m->segs[e].vaddr <
					    m->segs[e].memsz &&
				    e != s)
					return t;
			gopclntab_free(t);
		}
	}
	return NULL;
}

/* Whether elf is a Go program: it has Go's build-id note section. */
static bool gp_is_go(Elf *elf)
{
	GElf_Shdr sh;
	size_t n;

	if (elf_getshdrnum(elf, &n) < 0 || n == 0)
		return true;   /* no sections: nothing says it is not */
	return module_elf_section(elf, ".note.go.buildid", &sh) != NULL;
}

struct gopclntab *gopclntab_load(struct module *m)
{
	struct gopclntab *t = NULL;
	const char *why;
	GElf_Shdr sh, tsh;
	Elf_Scn *scn;
	Elf_Data *d;

	if (m->gopcln_tried)
		return m->gopcln;
	m->gopcln_tried = true;
	if (!m->elf || m->is_jit)
		return NULL;
	scn = module_elf_section(m->elf, ".gopclntab", &sh);
	if (!scn)   /* position-independent builds */
		scn = module_elf_section(m->elf, ".data.rel.ro.gopclntab", &sh);
	if (scn && sh.sh_type != SHT_NOBITS &&
	    (d = elf_getdata(scn, NULL)) && d->d_buf) {
		/* the text start, should the header give none */
		uint64_t text = module_elf_section(m->elf, ".text", &tsh) ?
					tsh.sh_addr :
					0;

		t = gopclntab_parse(d->d_buf, d->d_size, text, &why);
	} else if (!scn && gp_is_go(m->elf)) {
		size_t size;
		const char *file = elf_rawfile(m->elf, &size);

		if (file)
			t = gp_search(m, (const uint8_t *)file, size);
	}
	if (t)
		gp_note_special(t);
	m->gopcln = t;
	return t;
}

enum gopclntab_kind gopclntab_kind_at(struct module *m, uint64_t rel)
{
	const struct gopclntab *t = gopclntab_load(m);
	unsigned i;

	if (!t)
		return GOPCLNTAB_NORMAL;
	for (i = 0; i < t->nr_special; i++)
		if (rel >= t->special[i].start && rel < t->special[i].end)
			return t->special[i].kind;
	return GOPCLNTAB_NORMAL;
}
