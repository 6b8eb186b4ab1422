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
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/symtab.h"

#include "common/arena.h"
#include "common/base.h"
#include "common/bsearch.h"
#include "common/mem.h"
#include "common/msort.h"
#include "unwind/gopclntab.h"
#include "unwind/module.h"
#include "unwind/symtree.h"

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
	size_t syms_map;          /* kallsyms: syms is from mem_map() */
	struct bfd_sym *bsyms;    /* addr2line's function candidates, sorted
				   * by section, start, size, then table
				   * order reversed (st_bfd_before) */
	size_t nr_bsyms;
	struct bfd_sec *bsecs;    /* SHF_ALLOC sections of that file */
	size_t nr_bsecs;
	const char *text;         /* a kallsyms file's contents (the names:
				   * see ST_K_LINE), from mem_read_file() */
	size_t text_map;
	struct arena arena;
	/*
	 * An ELF module's table: the shape of perf's rb-tree of it
	 * (symtree.h), built as perf builds it (use_tree), then kept as
	 * kids: the indexes in syms of the left and right children of
	 * syms[i] at kids[2 * i] and kids[2 * i + 1] (SYMTREE_NIL: none),
	 * the root at kids_root.  NULL: symtab_lookup() searches syms.
	 */
	bool use_tree;
	struct symtree tree;
	uint32_t *kids;
	uint32_t kids_root;
};

void symtab_free(struct symtab *t)
{
	if (!t)
		return;
	if (t->syms_map)
		mem_unmap(t->syms, t->syms_map);
	else
		free(t->syms);
	free(t->bsyms);
	free(t->bsecs);
	mem_unmap((void *)t->text, t->text_map);
	arena_release(&t->arena);
	symtree_release(&t->tree);
	free(t->kids);
	free(t);
}

size_t symtab_count(const struct symtab *t)
{
	return t ? t->nr : 0;
}

const struct symtab_sym *symtab_syms(const struct symtab *t, size_t *nr)
{
	*nr = t ? t->nr : 0;
	return t ? t->syms : NULL;
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

/* kflags bits of a kallsyms line (ELF symbols have none). */
enum {
	ST_K_MOD = 1,   /* a '[' in the name: a module's symbol */
	/*
	 * The name is the rest of a kallsyms line, in the file's read-only
	 * text: it ends at the line's newline, or at the tab before its
	 * "[module]" (or at the NUL after the text).
	 */
	ST_K_LINE = 2,
};

size_t symtab_name_len(const struct symtab_sym *sym)
{
	return sym->kflags & ST_K_LINE ? strcspn(sym->name, "\t\n") :
					 strlen(sym->name);
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
	na = symtab_name_len(a);
	nb = symtab_name_len(b);
	if (na != nb)
		return na > nb;
	if (!strncmp(a->name, "SyS", 3) || !strncmp(a->name, "compat_SyS", 10))
		return false;
	return true;
}


/* Equal starts keep their order (perf's rb-tree puts an equal start
 * after those already there). */
static inline bool st_start_before(const struct symtab_sym *a,
				   const struct symtab_sym *b)
{
	return a->start < b->start;
}

MSORT_DEFINE(st_sort, struct symtab_sym, st_start_before)

/* Stable-sorts a[0..n) by start; -1 when out of memory. */
static int st_sort_batch(struct symtab_sym *a, size_t n)
{
	struct symtab_sym *tmp;
	size_t i;

	for (i = 1; i < n && a[i].start >= a[i - 1].start; i++)
		;
	if (i >= n)  /* kallsyms is usually sorted already */
		return 0;
	tmp = mem_array(n / 2 + 1, sizeof(*tmp));
	if (!tmp)
		return -1;
	st_sort(a, n, tmp);
	free(tmp);
	return 0;
}

/*
 * symbols__fixup_end() and symbols__fixup_duplicate() over the whole
 * table.  (A change here, or to the kallsyms parsing, changes stored
 * kernel symbol indexes: bump KSYMS_VERSION in ksyms.c.)
 */
static void st_fixup(struct symtab *t)
{
	size_t i, k;

	/* fixup_end: zero sizes reach the next symbol. */
	for (i = 0; i + 1 < t->nr; i++) {
		struct symtab_sym *p = &t->syms[i], *c = &t->syms[i + 1];

		if (p->end != p->start)
			continue;
		/* kallsyms: the gap between kernel and module text */
		if ((p->kflags ^ c->kflags) & ST_K_MOD)
			p->end = ALIGN_UP(p->end + 4096, 4096ull);
		else
			p->end = c->start;
	}
	if (t->nr && t->syms[t->nr - 1].end == t->syms[t->nr - 1].start)
		t->syms[t->nr - 1].end =
			ALIGN_UP(t->syms[t->nr - 1].start, 4096ull) + 4096;

	/*
	 * fixup_duplicate: one symbol per start address.  perf compares
	 * each survivor with the next symbol of the same start; one pass
	 * keeps the running survivor (k) and compacts the array.
	 */
	for (i = 0, k = 0; i < t->nr; i++) {
		if (k && t->syms[k - 1].start == t->syms[i].start) {
			bool first = st_prefer_first(&t->syms[k - 1],
						     &t->syms[i]);

			/* perf erases the loser from its tree */
			if (t->use_tree)
				symtree_erase(&t->tree, first ?
					      t->syms[i].node :
					      t->syms[k - 1].node);
			if (!first)
				t->syms[k - 1] = t->syms[i];
			continue;
		}
		t->syms[k++] = t->syms[i];
	}
	t->nr = k;
}

/* Inserts the n symbols of batch into t->tree in their order, as perf. */
static int st_tree_insert(struct symtab *t, struct symtab_sym *batch,
			  size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		batch[i].node = symtree_insert(&t->tree, batch[i].start);
		if (batch[i].node == SYMTREE_NIL)
			return -1;
	}
	return 0;
}

/*
 * Inserts batch (n symbols in insertion order, malloc'd: this frees it)
 * keeping equal starts in insertion order, as perf's rb-tree does, then
 * runs fixup_end and fixup_duplicate.
 */
static int st_add_batch(struct symtab *t, struct symtab_sym *batch, size_t n)
{
	struct symtab_sym *merged;
	size_t i, j, k;

	if (!n) {
		free(batch);
		return 0;
	}
	if (t->use_tree && st_tree_insert(t, batch, n) < 0) {
		free(batch);
		return -1;
	}
	if (st_sort_batch(batch, n) < 0) {
		free(batch);
		return -1;
	}
	if (!t->nr) {
		/* the usual first batch: it becomes the table */
		free(t->syms);   /* ELF tables only: never mapped */
		t->syms = batch;
		t->nr = t->alloc = n;
		st_fixup(t);
		return 0;
	}
	merged = mem_array(t->nr + n, sizeof(*merged));
	if (!merged) {
		free(batch);
		return -1;
	}
	for (i = j = k = 0; i < t->nr || j < n;) {
		if (j >= n || (i < t->nr && t->syms[i].start <= batch[j].start))
			merged[k++] = t->syms[i++];
		else
			merged[k++] = batch[j++];
	}
	free(batch);
	free(t->syms);
	t->syms = merged;
	t->nr = t->alloc = k;
	st_fixup(t);
	return 0;
}

/*
 * Appends perf's selection of the symbols of one table of elf (whose
 * sections may be NOBITS in a debug file) to a batch.
 */
/* An Arm mapping symbol: $a, $d, $t or $x, maybe with a ".N" suffix. */
static bool st_mapping_symbol(const char *name)
{
	return name[0] == '$' && name[1] && strchr("adtx", name[1]) &&
	       (name[2] == '\0' || name[2] == '.');
}

static int st_read_perf_table(struct symtab *t, struct module *m, Elf *elf,
			      Elf_Scn *scn, const GElf_Shdr *sh)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t n, i, shstrndx, nb = 0;
	struct symtab_sym *batch;
	GElf_Ehdr eh;

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
		    st_mapping_symbol(name))
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
	return st_add_batch(t, batch, nb);
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
	if (nb && t->use_tree && st_tree_insert(t, batch, nb) < 0) {
		free(batch);
		return -1;
	}
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
 * starts the larger size; on equal sizes the first in the table).  A
 * total order: table indexes differ.
 */
static inline bool st_bfd_before(const struct bfd_sym *a,
				 const struct bfd_sym *b)
{
	if (a->shndx != b->shndx)
		return a->shndx < b->shndx;
	if (a->value != b->value)
		return a->value < b->value;
	if (a->size != b->size)
		return a->size < b->size;
	return a->index > b->index;
}

MSORT_DEFINE(st_bfd_sort, struct bfd_sym, st_bfd_before)

/* addr2line's symbols: .symtab of its file, else .dynsym. */
static int st_read_bfd(struct symtab *t, Elf *elf)
{
	GElf_Shdr sh;
	Elf_Scn *scn = st_symtab(elf, SHT_SYMTAB, &sh);
	Elf_Scn *s = NULL;
	struct bfd_sym *tmp;
	Elf_Data *data;
	size_t n, i;
	GElf_Ehdr eh;
	bool arm = gelf_getehdr(elf, &eh) &&
		   (eh.e_machine == EM_ARM || eh.e_machine == EM_AARCH64);

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
			/* Arm's mapping symbols ($x, $d.1): bfd's
			 * elfNN_aarch64_maybe_function_sym() skips them */
			if (arm && GELF_ST_BIND(sym.st_info) == STB_LOCAL &&
			    st_mapping_symbol(b->name))
				continue;
			b->value = sym.st_value;
			b->size = sym.st_size ? sym.st_size : 1;
			b->shndx = sym.st_shndx;
			b->index = (uint32_t)i;
			t->nr_bsyms++;
		}
		tmp = mem_array(t->nr_bsyms / 2 + 1, sizeof(*tmp));
		if (!tmp)
			return -1;
		st_bfd_sort(t->bsyms, t->nr_bsyms, tmp);
		free(tmp);
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

/*
 * A Go program without an ELF symbol table: one function symbol per
 * entry of its function table, named as Go names it (go tool addr2line
 * and the runtime's tracebacks).  The names live in the module's table.
 */
static int st_read_gopclntab(struct symtab *t, struct module *m)
{
	const struct gopclntab *g = gopclntab_load(m);
	uint32_t n = gopclntab_count(g), i;
	struct gopclntab_func f;
	struct symtab_sym *batch;
	size_t nb = 0;

	if (!n)
		return 0;
	batch = mem_zalloc(n, sizeof(*batch));
	if (!batch)
		return -1;
	for (i = 0; i < n; i++) {
		if (!gopclntab_func(g, i, &f) || f.end <= f.start)
			continue;
		batch[nb].start = f.start;
		batch[nb].end = f.end;
		batch[nb].name = f.name;
		batch[nb].bind = STB_GLOBAL;
		batch[nb].type = STT_FUNC;
		nb++;
	}
	return st_add_batch(t, batch, nb);
}

/*
 * Keeps the tree's shape as t->kids.  The tree holds the same symbols in
 * the same order as the table (equal starts in insertion order in both);
 * should it not, or when out of memory, lookups search the table.
 */
static void st_tree_keep(struct symtab *t)
{
	struct symtree *tr = &t->tree;
	size_t i;

	t->use_tree = false;
	if (!t->nr || symtree_number(tr) != t->nr)
		goto out;
	for (i = 0; i < t->nr; i++)
		if (tr->n[t->syms[i].node].val != i)
			goto out;
	t->kids = mem_array(2 * t->nr, sizeof(*t->kids));
	if (!t->kids)
		goto out;
	for (i = 0; i < t->nr; i++) {
		const struct symtree_node *n = &tr->n[t->syms[i].node];

		t->kids[2 * i] = n->left == SYMTREE_NIL ? SYMTREE_NIL :
			tr->n[n->left].val;
		t->kids[2 * i + 1] = n->right == SYMTREE_NIL ? SYMTREE_NIL :
			tr->n[n->right].val;
	}
	t->kids_root = tr->n[tr->root].val;
out:
	symtree_release(tr);
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
	symtree_init(&t->tree);
	t->use_tree = true;
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
	if (!st_has_symtab(syms) && st_read_gopclntab(t, m) < 0)
		goto fail;
	st_tree_keep(t);
	if (st_read_bfd(t, syms) < 0)
		goto fail;
	return t;
fail:
	symtab_free(t);
	m->symtab = NULL;
	return NULL;
}

#define ST_SYM_START(s) ((s)->start)
UPPER_BOUND_DEFINE(st_upper, struct symtab_sym, ST_SYM_START)

const struct symtab_sym *symtab_lookup(const struct symtab *t, uint64_t addr)
{
	size_t lo;
	const struct symtab_sym *s;

	if (!t || !t->nr)
		return NULL;
	if (t->kids) {
		/* symbols__find(): the first on the way that holds addr */
		uint32_t cur = t->kids_root;

		while (cur != SYMTREE_NIL) {
			s = &t->syms[cur];
			if (addr < s->start)
				cur = t->kids[2 * cur];
			else if (!symtab_range_has(s->start, s->end, addr))
				cur = t->kids[2 * cur + 1];
			else
				return s;
		}
		return NULL;
	}
	lo = st_upper(t->syms, t->nr, addr);
	if (lo == 0)
		return NULL;
	s = &t->syms[lo - 1];
	return symtab_range_has(s->start, s->end, addr) ? s : NULL;
}

const char *symtab_bfd_function(const struct symtab *t, uint64_t addr,
				uint64_t *value)
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
	if (best && value)
		*value = best->value;
	return best ? best->name : NULL;
}

/* kallsyms2elf_binding() */
static uint8_t st_kallsyms_bind(char type)
{
	if (type == 'W' || type == 'w')
		return STB_WEAK;
	return type >= 'A' && type <= 'Z' ? STB_GLOBAL : STB_LOCAL;
}

/* 1 + the value of each hex digit, 0 for other bytes (isxdigit()'s set) */
static const uint8_t st_hex1[256] = {
	['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5,
	['5'] = 6, ['6'] = 7, ['7'] = 8, ['8'] = 9, ['9'] = 10,
	['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
	['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};

/*
 * The value of the 16 hex digits at s (kallsyms' usual address width) in
 * *v, eight digits at a time; false when s[0..15] are not all hex digits.
 */
static bool st_hex16(const char *s, uint64_t *v)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	const uint64_t ones = 0x0101010101010101ull, high = ones << 7;
	uint64_t half[2];
	int i;

	for (i = 0; i < 2; i++) {
		uint64_t x, l, digit, alpha, n;

		memcpy(&x, s + 8 * i, 8);
		if (x & high)
			return false;
		/*
		 * Every byte is below 0x80, so no sum carries out of its
		 * byte: byte + 0x80 - c has its top bit set when byte >= c.
		 */
		l = x | 0x20 * ones;   /* 'A'-'F' to 'a'-'f' */
		digit = (x + (0x80 - '0') * ones) &
			~(x + (0x80 - '9' - 1) * ones);
		alpha = (l + (0x80 - 'a') * ones) &
			~(l + (0x80 - 'f' - 1) * ones);
		if (((digit | alpha) & high) != high)
			return false;
		/* digit values, first digit in the lowest byte */
		n = (x & 0x0f * ones) + ((x >> 6) & ones) * 9;
		n = (n << 4 | n >> 8) & 0x00ff00ff00ff00ffull;
		n = (n << 8 | n >> 16) & 0x0000ffff0000ffffull;
		half[i] = (n << 16 | n >> 32) & 0xffffffffull;
	}
	*v = half[0] << 32 | half[1];
	return true;
#else
	(void)s;
	(void)v;
	return false;
#endif
}

/*
 * The first '\n' at or after p (before end), or end: a word at a time,
 * lines being too short for memchr()'s start-up to pay (kallsyms' average
 * 44 bytes).
 */
static const char *st_eol(const char *p, const char *end)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	const uint64_t ones = 0x0101010101010101ull, high = ones << 7;

	for (; end - p >= 8; p += 8) {
		uint64_t x, zero;

		memcpy(&x, p, 8);
		x ^= ones * '\n';
		/* exact at the lowest zero byte (borrows only go up) */
		zero = (x - ones) & ~x & high;
		if (zero)
			return p + (__builtin_ctzll(zero) >> 3);
	}
#endif
	while (p < end && *p != '\n')
		p++;
	return p;
}

/* The first c at or after from (before end), or end; *next caches it. */
static const char *st_next(const char **next, const char *from,
			   const char *end, int c)
{
	if (!*next || *next < from) {
		*next = memchr(from, c, (size_t)(end - from));
		if (!*next)
			*next = end;
	}
	return *next;
}

/*
 * Parses "ADDR TYPE NAME[\t[MODULE]]" lines of text (len bytes followed by
 * a NUL, read-only) into t->syms in file order; the names stay in the
 * text (ST_K_LINE).
 */
static int st_parse_kallsyms(struct symtab *t, const char *text, size_t len)
{
	const char *p = text, *end = text + len;
	/* the next '[' in the file, found once */
	const char *br = NULL;
	/* lines average 40-45 bytes; the array grows if that is wrong */
	size_t map, alloc = len / 40 + 64, nb = 0;
	struct symtab_sym *syms;

	if (alloc > SIZE_MAX / sizeof(*syms))
		return -1;
	syms = mem_map(alloc * sizeof(*syms), &map);
	if (!syms)
		return -1;
	mem_huge(syms, map);
	alloc = map / sizeof(*syms);
	for (; p < end; p++) {
		const char *nl = st_eol(p, end), *q, *name;
		char otype, type;
		uint64_t addr = 0;
		unsigned d;
		uint8_t f = ST_K_LINE;

		if (nl - p > 16 && st_hex16(p, &addr) &&
		    !st_hex1[(unsigned char)p[16]]) {
			q = p + 16;
		} else {
			for (q = p; q < nl && (d = st_hex1[(unsigned char)*q]);
			     q++)
				addr = addr << 4 | (uint64_t)(d - 1);
		}
		if (q == p || nl - q < 4 || q[0] != ' ' || q[2] != ' ') {
			p = nl;
			continue;
		}
		otype = q[1];
		type = otype >= 'a' && otype <= 'z' ?
			       (char)(otype - 'a' + 'A') : otype;
		name = q + 3;
		if ((type != 'T' && type != 'W' && type != 'D' &&
		     type != 'B') || name[0] == '$' || name[0] == '\t') {
			p = nl;
			continue;
		}
		if (nb == alloc) {
			if (mem_map_grow(&syms, &map, map + 1) < 0)
				goto fail;
			alloc = map / sizeof(*syms);
		}
		/* '[': a module's symbol */
		if (st_next(&br, name, end, '[') < nl)
			f |= ST_K_MOD;
		syms[nb].start = syms[nb].end = addr;
		syms[nb].name = name;
		syms[nb].bind = st_kallsyms_bind(otype);
		syms[nb].type = type == 'T' || type == 'W' ? STT_FUNC :
							     STT_OBJECT;
		syms[nb].kflags = f;
		nb++;
		p = nl;
	}
	t->syms = syms;
	t->syms_map = map;
	t->nr = nb;
	t->alloc = alloc;
	return 0;
fail:
	mem_unmap(syms, map);
	return -1;
}

struct symtab *symtab_load_kallsyms(const char *path)
{
	struct symtab *t = mem_zalloc(1, sizeof(*t));
	size_t len;

	if (!t)
		return NULL;
	t->text = mem_read_file(path, (size_t)1 << 30, &len, &t->text_map);
	if (!t->text || st_parse_kallsyms(t, t->text, len) < 0 ||
	    st_sort_batch(t->syms, t->nr) < 0)
		goto fail;
	st_fixup(t);
	return t;
fail:
	symtab_free(t);
	return NULL;
}
