/*
 * symtab.c - perf's and addr2line's views of a module's symbols.
 *
 * perf 6.1 rules reproduced here (symbol-elf.c dso__load_sym_internal,
 * symbol.c symbols__fixup_end/_duplicate, choose_best_symbol,
 * dso__synthesize_plt_symbols); binutils 2.40 rules for addr2line's
 * fallback (dwarf2.c _bfd_elf_find_function, elf.c
 * _bfd_elf_maybe_function_sym).  Names point into the module's ELF string
 * tables (mapped for the whole run) or, for "@plt" names, into t->arena.
 */
#include <ctype.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/symtab.h"

#include "common/arena.h"
#include "common/base.h"
#include "common/mem.h"
#include "unwind/module.h"

struct bfd_sym {
	uint64_t value, size;     /* size 0 counts as 1 */
	const char *name;
	uint32_t shndx;
	uint32_t index;           /* in the symbol table */
};

struct bfd_sec {
	uint64_t addr, size;
	uint32_t idx;
};

struct symtab {
	struct symtab_sym *syms;  /* perf's view, sorted by start */
	size_t nr, alloc;
	struct bfd_sym *bsyms;    /* addr2line's function candidates, sorted
				   * by section, start, size, then table
				   * order reversed (st_bfd_cmp) */
	size_t nr_bsyms;
	struct bfd_sec *bsecs;    /* SHF_ALLOC sections of that file */
	size_t nr_bsecs;
	char *text;               /* a kallsyms file's contents (names) */
	struct arena arena;
};

void symtab_free(struct symtab *t)
{
	if (!t)
		return;
	free(t->syms);
	free(t->bsyms);
	free(t->bsecs);
	free(t->text);
	arena_release(&t->arena);
	free(t);
}

size_t symtab_count(const struct symtab *t)
{
	return t ? t->nr : 0;
}

/* The symbol table section of the given type with real contents. */
static Elf_Scn *st_symtab(Elf *elf, Elf64_Word type, GElf_Shdr *sh)
{
	Elf_Scn *scn = module_elf_section(elf, type == SHT_SYMTAB ? ".symtab" :
							   ".dynsym", sh);

	if (!scn || sh->sh_type != type || sh->sh_entsize == 0)
		return NULL;
	return scn;
}

static int prefix_underscores(const char *s)
{
	int n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

/* perf's choose_best_symbol(): true keeps a, false keeps b. */
static bool st_prefer_first(const struct symtab_sym *a,
			    const struct symtab_sym *b)
{
	uint64_t la = a->end - a->start, lb = b->end - b->start;
	int ua, ub;
	size_t na, nb;

	if (lb == 0 && la > 0)
		return true;
	if (la == 0 && lb > 0)
		return false;
	if ((b->bind == STB_WEAK) != (a->bind == STB_WEAK))
		return b->bind == STB_WEAK;
	if ((a->bind == STB_GLOBAL) != (b->bind == STB_GLOBAL))
		return a->bind == STB_GLOBAL;
	ua = prefix_underscores(a->name);
	ub = prefix_underscores(b->name);
	if (ua != ub)
		return ub > ua;
	na = strlen(a->name);
	nb = strlen(b->name);
	if (na != nb)
		return na > nb;
	if (!strncmp(a->name, "SyS", 3) || !strncmp(a->name, "compat_SyS", 10))
		return false;
	return true;
}

struct st_key {
	uint64_t start;
	size_t idx;
};

static int st_key_cmp(const void *x, const void *y)
{
	const struct st_key *a = x, *b = y;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/*
 * Inserts batch (in insertion order) keeping equal starts in insertion
 * order, as perf's rb-tree does, then runs fixup_end and fixup_duplicate.
 */
static int st_add_batch(struct symtab *t, struct symtab_sym *batch, size_t n,
			bool kallsyms)
{
	struct symtab_sym *merged, *sorted;
	struct st_key *keys;
	size_t i, j, k;

	if (!n)
		return 0;
	keys = mem_zalloc(n, sizeof(*keys));
	sorted = mem_zalloc(n, sizeof(*sorted));
	if (!keys || !sorted) {
		free(keys);
		free(sorted);
		return -1;
	}
	for (i = 0, j = 1; i < n; i++) {
		keys[i].start = batch[i].start;
		keys[i].idx = i;
		if (i && batch[i].start < batch[i - 1].start)
			j = 0;
	}
	if (!j)  /* kallsyms is usually sorted already */
		qsort(keys, n, sizeof(*keys), st_key_cmp);
	for (i = 0; i < n; i++)
		sorted[i] = batch[keys[i].idx];
	free(keys);
	batch = sorted;
	merged = mem_zalloc(t->nr + n, sizeof(*merged));
	if (!merged) {
		free(sorted);
		return -1;
	}
	for (i = j = k = 0; i < t->nr || j < n;) {
		if (j >= n || (i < t->nr && t->syms[i].start <= batch[j].start))
			merged[k++] = t->syms[i++];
		else
			merged[k++] = batch[j++];
	}
	free(sorted);
	free(t->syms);
	t->syms = merged;
	t->nr = k;
	t->alloc = k;

	/* symbols__fixup_end(): zero sizes reach the next symbol. */
	for (i = 0; i + 1 < t->nr; i++) {
		struct symtab_sym *p = &t->syms[i], *c = &t->syms[i + 1];

		if (p->end != p->start)
			continue;
		/* kallsyms: the gap between kernel and module text */
		if (kallsyms && !strchr(p->name, '[') != !strchr(c->name, '['))
			p->end = ALIGN_UP(p->end + 4096, 4096ull);
		else
			p->end = c->start;
	}
	if (t->nr && t->syms[t->nr - 1].end == t->syms[t->nr - 1].start)
		t->syms[t->nr - 1].end =
			ALIGN_UP(t->syms[t->nr - 1].start, 4096ull) + 4096;

	/*
	 * symbols__fixup_duplicate(): one symbol per start address.  perf
	 * compares each survivor with the next symbol of the same start;
	 * one pass keeps the running survivor (k) and compacts the array.
	 */
	for (i = 0, k = 0; i < t->nr; i++) {
		if (k && t->syms[k - 1].start == t->syms[i].start) {
			if (!st_prefer_first(&t->syms[k - 1], &t->syms[i]))
				t->syms[k - 1] = t->syms[i];
			continue;
		}
		t->syms[k++] = t->syms[i];
	}
	t->nr = k;
	return 0;
}

/*
 * Appends perf's selection of the symbols of one table of elf (whose
 * sections may be NOBITS in a debug file) to a batch.
 */
static int st_read_perf_table(struct symtab *t, struct module *m, Elf *elf,
			      Elf_Scn *scn, const GElf_Shdr *sh)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t n, i, shstrndx, nb = 0;
	struct symtab_sym *batch;
	GElf_Ehdr eh;
	int rc;

	if (!data || !data->d_buf || !gelf_getehdr(elf, &eh) ||
	    elf_getshdrstrndx(elf, &shstrndx) < 0)
		return 0;
	n = sh->sh_size / sh->sh_entsize;
	batch = mem_zalloc(n ? n : 1, sizeof(*batch));
	if (!batch)
		return -1;
	for (i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Shdr ssh;
		Elf_Scn *sscn;
		const char *name, *secname;
		unsigned type, vis;
		bool is_label, is_func, is_obj;

		if (!gelf_getsym(data, (int)i, &sym))
			continue;
		type = GELF_ST_TYPE(sym.st_info);
		vis = GELF_ST_VISIBILITY(sym.st_other);
		name = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (!name)
			continue;
		is_func = (type == STT_FUNC || type == STT_GNU_IFUNC) &&
			  sym.st_name && sym.st_shndx != SHN_UNDEF;
		is_obj = type == STT_OBJECT && sym.st_name &&
			 sym.st_shndx != SHN_UNDEF;
		is_label = type == STT_NOTYPE && sym.st_name &&
			   sym.st_shndx != SHN_UNDEF &&
			   sym.st_shndx != SHN_ABS && vis != STV_HIDDEN &&
			   vis != STV_INTERNAL;
		if (!is_label && !is_func && !is_obj)
			continue;
		if ((eh.e_machine == EM_ARM || eh.e_machine == EM_AARCH64) &&
		    name[0] == '$' && name[1] && strchr("adtx", name[1]) &&
		    (name[2] == '\0' || name[2] == '.'))
			continue;
		if (sym.st_shndx == SHN_ABS || sym.st_shndx >= SHN_LORESERVE)
			continue;
		sscn = elf_getscn(elf, sym.st_shndx);
		if (!sscn || !gelf_getshdr(sscn, &ssh))
			continue;
		if (!(ssh.sh_flags & SHF_ALLOC))
			continue;
		if (is_label) {
			Elf *nelf = elf;
			size_t nstr = shstrndx;

			if (ssh.sh_type == SHT_NOBITS && m->elf) {
				/* perf reads the runtime file's header */
				sscn = elf_getscn(m->elf, sym.st_shndx);
				if (!sscn || !gelf_getshdr(sscn, &ssh) ||
				    elf_getshdrstrndx(m->elf, &nstr) < 0)
					continue;
				nelf = m->elf;
			}
			secname = elf_strptr(nelf, nstr, ssh.sh_name);
			if (!secname || (!strstr(secname, "text") &&
					 !strstr(secname, "data")))
				continue;
		}
		if (eh.e_machine == EM_ARM && type == STT_FUNC &&
		    (sym.st_value & 1))
			sym.st_value--;
		batch[nb].start = sym.st_value;
		batch[nb].end = sym.st_value + sym.st_size;
		batch[nb].name = name;
		batch[nb].bind = GELF_ST_BIND(sym.st_info);
		batch[nb].type = (uint8_t)type;
		nb++;
	}
	rc = st_add_batch(t, batch, nb, false);
	free(batch);
	return rc;
}

/* "name@plt" entries for .plt, as dso__synthesize_plt_symbols(). */
static int st_synthesize_plt(struct symtab *t, Elf *elf)
{
	GElf_Shdr dsh, rsh, psh;
	Elf_Scn *dyn, *rel, *plt;
	Elf_Data *rdata, *sdata;
	GElf_Ehdr eh;
	size_t nrel, i, nb = 0, dynidx;
	uint64_t addr, hdr, ent;
	struct symtab_sym *batch;
	int rc;

	if (!gelf_getehdr(elf, &eh))
		return 0;
	dyn = st_symtab(elf, SHT_DYNSYM, &dsh);
	if (!dyn)
		return 0;
	dynidx = elf_ndxscn(dyn);
	rel = module_elf_section(elf, ".rela.plt", &rsh);
	if (!rel)
		rel = module_elf_section(elf, ".rel.plt", &rsh);
	if (!rel || rsh.sh_link != dynidx || !rsh.sh_entsize)
		return 0;
	plt = module_elf_section(elf, ".plt", &psh);
	if (!plt)
		return 0;
	rdata = elf_getdata(rel, NULL);
	sdata = elf_getdata(dyn, NULL);
	if (!rdata || !sdata || !rdata->d_buf || !sdata->d_buf)
		return 0;
	switch (eh.e_machine) {
	case EM_ARM:
		hdr = 20;
		ent = 12;
		break;
	case EM_AARCH64:
		hdr = 32;
		ent = 16;
		break;
	default:
		hdr = ent = psh.sh_entsize;
		break;
	}
	if (!ent)
		return 0;
	nrel = rsh.sh_size / rsh.sh_entsize;
	batch = mem_zalloc(nrel ? nrel : 1, sizeof(*batch));
	if (!batch)
		return -1;
	addr = psh.sh_addr + hdr;
	for (i = 0; i < nrel; i++) {
		GElf_Rela rela;
		GElf_Rel rl;
		GElf_Sym sym;
		uint64_t info;
		const char *name;
		char buf[1024];

		if (rsh.sh_type == SHT_RELA) {
			if (!gelf_getrela(rdata, (int)i, &rela))
				break;
			info = rela.r_info;
		} else {
			if (!gelf_getrel(rdata, (int)i, &rl))
				break;
			info = rl.r_info;
		}
		if (!gelf_getsym(sdata, (int)GELF_R_SYM(info), &sym))
			break;
		name = elf_strptr(elf, dsh.sh_link, sym.st_name);
		snprintf(buf, sizeof(buf), "%s@plt", name ? name : "");
		batch[nb].name = arena_strdup(&t->arena, buf);
		if (!batch[nb].name) {
			free(batch);
			return -1;
		}
		batch[nb].start = addr;
		batch[nb].end = addr + ent;
		batch[nb].bind = STB_GLOBAL;
		batch[nb].type = STT_FUNC;
		nb++;
		addr += ent;
	}
	/* perf inserts these without another fixup pass. */
	rc = 0;
	if (nb) {
		struct symtab_sym *merged = mem_zalloc(t->nr + nb,
						       sizeof(*merged));
		size_t a = 0, b = 0, k = 0;

		if (!merged) {
			free(batch);
			return -1;
		}
		while (a < t->nr || b < nb) {
			if (b >= nb || (a < t->nr &&
					t->syms[a].start <= batch[b].start))
				merged[k++] = t->syms[a++];
			else
				merged[k++] = batch[b++];
		}
		free(t->syms);
		t->syms = merged;
		t->nr = t->alloc = k;
	}
	free(batch);
	return rc;
}

/*
 * The order symtab_bfd_function() searches: the candidate it wants for an
 * address is the last one at or below it (the nearest start; on equal
 * starts the larger size; on equal sizes the first in the table).
 */
static int st_bfd_cmp(const void *pa, const void *pb)
{
	const struct bfd_sym *a = pa, *b = pb;

	if (a->shndx != b->shndx)
		return a->shndx < b->shndx ? -1 : 1;
	if (a->value != b->value)
		return a->value < b->value ? -1 : 1;
	if (a->size != b->size)
		return a->size < b->size ? -1 : 1;
	return a->index > b->index ? -1 : a->index < b->index;
}

/* addr2line's symbols: .symtab of its file, else .dynsym. */
static int st_read_bfd(struct symtab *t, Elf *elf)
{
	GElf_Shdr sh;
	Elf_Scn *scn = st_symtab(elf, SHT_SYMTAB, &sh);
	Elf_Scn *s = NULL;
	Elf_Data *data;
	size_t n, i;

	/* addr2line (slurp_symtab): .symtab, else the dynamic symbols. */
	if (!scn || sh.sh_size <= sh.sh_entsize)
		scn = st_symtab(elf, SHT_DYNSYM, &sh);
	if (scn && (data = elf_getdata(scn, NULL)) && data->d_buf) {
		n = sh.sh_size / sh.sh_entsize;
		t->bsyms = mem_zalloc(n ? n : 1, sizeof(*t->bsyms));
		if (!t->bsyms)
			return -1;
		for (i = 1; i < n; i++) {
			GElf_Sym sym;
			struct bfd_sym *b = &t->bsyms[t->nr_bsyms];
			uint8_t type;

			if (!gelf_getsym(data, (int)i, &sym))
				continue;
			/* what addr2line's function lookup ignores */
			type = GELF_ST_TYPE(sym.st_info);
			if (type == STT_OBJECT || type == STT_TLS ||
			    type == STT_SECTION || type == STT_FILE ||
			    type == STT_COMMON)
				continue;
			if (!sym.st_size &&
			    GELF_ST_BIND(sym.st_info) == STB_LOCAL &&
			    type == STT_NOTYPE &&
			    GELF_ST_VISIBILITY(sym.st_other) == STV_HIDDEN)
				continue;
			b->name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (!b->name)
				continue;
			b->value = sym.st_value;
			b->size = sym.st_size ? sym.st_size : 1;
			b->shndx = sym.st_shndx;
			b->index = (uint32_t)i;
			t->nr_bsyms++;
		}
		qsort(t->bsyms, t->nr_bsyms, sizeof(*t->bsyms), st_bfd_cmp);
	}
	n = 0;
	while ((s = elf_nextscn(elf, s)))
		n++;
	t->bsecs = mem_zalloc(n ? n : 1, sizeof(*t->bsecs));
	if (!t->bsecs)
		return -1;
	s = NULL;
	while ((s = elf_nextscn(elf, s))) {
		GElf_Shdr ssh;

		if (!gelf_getshdr(s, &ssh) || !(ssh.sh_flags & SHF_ALLOC) ||
		    !ssh.sh_size)
			continue;
		t->bsecs[t->nr_bsecs].addr = ssh.sh_addr;
		t->bsecs[t->nr_bsecs].size = ssh.sh_size;
		t->bsecs[t->nr_bsecs].idx = (uint32_t)elf_ndxscn(s);
		t->nr_bsecs++;
	}
	return 0;
}

static bool st_has_symtab(Elf *elf)
{
	GElf_Shdr sh;

	return elf && st_symtab(elf, SHT_SYMTAB, &sh) != NULL;
}

struct symtab *symtab_load(struct module *m)
{
	struct symtab *t;
	Elf *syms;
	GElf_Shdr sh;
	Elf_Scn *scn;

	if (m->symtab_tried)
		return m->symtab;
	m->symtab_tried = true;
	t = mem_zalloc(1, sizeof(*t));
	if (!t)
		return NULL;
	m->symtab = t;
	/* perf: the first image with .symtab (executable, then debug). */
	if (st_has_symtab(m->elf))
		syms = m->elf;
	else if (st_has_symtab(m->debug_elf))
		syms = m->debug_elf;
	else
		syms = m->elf;
	m->syms_elf = syms;
	if (!syms)
		return t;
	scn = st_symtab(syms, SHT_SYMTAB, &sh);
	if (scn && st_read_perf_table(t, m, syms, scn, &sh) < 0)
		goto fail;
	scn = st_symtab(syms, SHT_DYNSYM, &sh);
	if (scn && st_read_perf_table(t, m, syms, scn, &sh) < 0)
		goto fail;
	if (t->nr && m->elf && st_synthesize_plt(t, m->elf) < 0)
		goto fail;
	if (st_read_bfd(t, syms) < 0)
		goto fail;
	return t;
fail:
	symtab_free(t);
	m->symtab = NULL;
	return NULL;
}

const struct symtab_sym *symtab_lookup(const struct symtab *t, uint64_t addr)
{
	size_t lo = 0, hi;
	const struct symtab_sym *s;

	if (!t || !t->nr)
		return NULL;
	hi = t->nr;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (t->syms[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	s = &t->syms[lo - 1];
	if (addr < s->end || (addr == s->start && s->end == s->start))
		return s;
	return NULL;
}

const char *symtab_bfd_function(const struct symtab *t, uint64_t addr)
{
	const struct bfd_sym *best = NULL;
	uint32_t sec = 0;
	size_t i, lo, hi;

	if (!t)
		return NULL;
	for (i = 0; i < t->nr_bsecs; i++) {
		if (addr >= t->bsecs[i].addr &&
		    addr - t->bsecs[i].addr < t->bsecs[i].size) {
			sec = t->bsecs[i].idx;
			break;
		}
	}
	if (!sec)
		return NULL;
	/* the last candidate at or below (sec, addr) */
	lo = 0;
	hi = t->nr_bsyms;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct bfd_sym *s = &t->bsyms[mid];

		if (s->shndx < sec || (s->shndx == sec && s->value <= addr))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && t->bsyms[lo - 1].shndx == sec)
		best = &t->bsyms[lo - 1];
	return best ? best->name : NULL;
}

/* kallsyms2elf_binding() */
static uint8_t st_kallsyms_bind(char type)
{
	if (type == 'W' || type == 'w')
		return STB_WEAK;
	return type >= 'A' && type <= 'Z' ? STB_GLOBAL : STB_LOCAL;
}

/* Reads a whole file into memory, NUL-terminated; NULL on failure. */
static char *st_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "re");
	char *buf;

	if (!f)
		return NULL;
	buf = mem_slurp(f, (size_t)1 << 30, len);
	fclose(f);
	return buf;
}

struct symtab *symtab_load_kallsyms(const char *path)
{
	struct symtab *t = mem_zalloc(1, sizeof(*t));
	struct symtab_sym *batch = NULL;
	size_t nb = 0, alloc = 0, len, i;
	char *p, *end;

	if (!t)
		return NULL;
	t->text = st_slurp(path, &len);
	if (!t->text)
		goto fail;
	for (p = t->text, end = p + len; p < end;) {
		char *line = p, *nl = memchr(p, '\n', (size_t)(end - p));
		char *name, *q, otype, type;
		uint64_t addr = 0;

		if (nl)
			*nl = '\0';
		p = nl ? nl + 1 : end;
		/* "ADDR TYPE NAME[\t[MODULE]]" */
		for (q = line; isxdigit((unsigned char)*q); q++)
			addr = addr << 4 |
			       (uint64_t)(isdigit((unsigned char)*q) ?
						  *q - '0' :
						  tolower((unsigned char)*q) - 'a' + 10);
		if (q == line || q[0] != ' ' || !q[1] || q[2] != ' ')
			continue;
		otype = q[1];
		type = (char)toupper((unsigned char)otype);
		if (type != 'T' && type != 'W' && type != 'D' && type != 'B')
			continue;
		name = q + 3;
		if (name[0] == '$' || !name[0])
			continue;
		if (mem_grow(&batch, &alloc, sizeof(*batch), nb + 1) < 0)
			goto fail;
		batch[nb].start = batch[nb].end = addr;
		batch[nb].bind = st_kallsyms_bind(otype);
		batch[nb].type = type == 'T' || type == 'W' ? STT_FUNC :
							     STT_OBJECT;
		batch[nb].name = name;
		nb++;
	}
	if (st_add_batch(t, batch, nb, true) < 0)
		goto fail;
	free(batch);
	/* Module symbols lose their "\t[module]" suffix. */
	for (i = 0; i < t->nr; i++) {
		char *tab = strchr((char *)t->syms[i].name, '\t');

		if (tab)
			*tab = '\0';
	}
	return t;
fail:
	free(batch);
	symtab_free(t);
	return NULL;
}
