/*
 * test_gopclntab.c - Go's function table: names, entries and SP deltas
 * from a table laid out as Go 1.20's linker writes it, and damaged
 * tables (every byte changed, every length cut) that must be refused or
 * answer "unknown", never read outside the table.
 */
#include <stdlib.h>
#include <string.h>

#include "tests/harness.h"
#include "unwind/gopclntab.h"

#define TEXT 0x401000u
#define NAMES 72u        /* funcnametab, right after the header */
#define PCTAB 128u
#define FTAB 160u
#define FUNC_SIZE 44u    /* Go 1.20's _func without pcdata/funcdata */
#define TABLE_SIZE (FTAB + 7 * 8 + 3 * FUNC_SIZE) /* 1.16's; 1.20 is 24 less */

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

/*
 * Three functions: main.a [0x1000, 0x1040) with SP delta 0 for 4 bytes,
 * 24 up to 0x103c, 0 for the RET; runtime.goexit [0x1040, 0x1060)
 * without an SP table; runtime.systemstack [0x1060, 0x1080) at 8.
 */
static void make_table(uint8_t *t)
{
	static const char names[] = "main.a\0runtime.goexit\0"
				    "runtime.systemstack";
	static const uint8_t pcsp_a[] = { 0x02, 0x04, 0x30, 0x38, 0x2f,
					  0x04, 0x00 };
	static const uint8_t pcsp_s[] = { 0x12, 0x20, 0x00 };
	static const uint32_t entry[] = { 0, 0x40, 0x60, 0x80 };
	static const uint32_t name[] = { 0, 7, 22 };
	static const uint32_t pcsp[] = { 1, 0, 8 };
	unsigned i;

	memset(t, 0, TABLE_SIZE);
	put32(t, GOPCLNTAB_MAGIC_120);
	t[6] = 1;
	t[7] = 8;
	put64(t + 8, 3);                   /* nfunc */
	put64(t + 16, 0);                  /* nfiles */
	put64(t + 24, TEXT);
	put64(t + 32, NAMES);
	put64(t + 40, PCTAB);              /* cutab: empty */
	put64(t + 48, PCTAB);              /* filetab: empty */
	put64(t + 56, PCTAB);
	put64(t + 64, FTAB);
	memcpy(t + NAMES, names, sizeof(names));
	memcpy(t + PCTAB + 1, pcsp_a, sizeof(pcsp_a));
	memcpy(t + PCTAB + 8, pcsp_s, sizeof(pcsp_s));
	for (i = 0; i < 4; i++) {
		uint32_t off = 4 * 8 + i * FUNC_SIZE;

		put32(t + FTAB + 8 * i, entry[i]);
		put32(t + FTAB + 8 * i + 4, i < 3 ? off : 0);
		if (i == 3)
			break;
		put32(t + FTAB + off, entry[i]);
		put32(t + FTAB + off + 4, name[i]);
		put32(t + FTAB + off + 16, pcsp[i]);
	}
}

/*
 * The same functions in Go 1.16's layout: no text start in the header,
 * pointer-sized function table fields holding addresses, an address as
 * a _func record's first field.
 */
static void make_table_116(uint8_t *t)
{
	static const uint32_t entry[] = { 0, 0x40, 0x60, 0x80 };
	uint8_t t20[TABLE_SIZE];
	unsigned i;

	make_table(t20);
	memset(t, 0, TABLE_SIZE);
	put32(t, GOPCLNTAB_MAGIC_116);
	t[6] = 1;
	t[7] = 8;
	put64(t + 8, 3);                   /* nfunc */
	put64(t + 16, 0);                  /* nfiles */
	put64(t + 24, NAMES);
	put64(t + 32, PCTAB);              /* cutab: empty */
	put64(t + 40, PCTAB);              /* filetab: empty */
	put64(t + 48, PCTAB);
	put64(t + 56, FTAB);
	memcpy(t + NAMES, t20 + NAMES, FTAB - NAMES);
	for (i = 0; i < 4; i++) {
		uint32_t off = 3 * 16 + 8 + i * FUNC_SIZE;

		put64(t + FTAB + 16 * i, TEXT + entry[i]);
		if (i == 3)
			break;
		put64(t + FTAB + 16 * i + 8, off);
		put64(t + FTAB + off, TEXT + entry[i]);
		/* name offset, args, deferreturn, pcsp: as Go 1.20's */
		memcpy(t + FTAB + off + 8,
		       t20 + FTAB + 4 * 8 + i * FUNC_SIZE + 4, 16);
	}
}

static struct gopclntab *parse(const uint8_t *t, size_t n)
{
	const char *why = NULL;

	return gopclntab_parse(t, n, 0, &why);
}

static void test_lookups(void)
{
	uint8_t t[TABLE_SIZE];
	struct gopclntab *g;
	struct gopclntab_func f;
	int32_t d = -1;

	make_table(t);
	g = parse(t, sizeof(t));
	if (!CHECK(g != NULL, "a Go 1.20 table parses"))
		return;
	CHECK_EQ_U64(gopclntab_count(g), 3, "three functions");
	CHECK(gopclntab_func(g, 0, &f), "function 0");
	CHECK_STR(f.name, "main.a", "its name");
	CHECK_EQ_U64(f.start, TEXT, "its entry");
	CHECK_EQ_U64(f.end, TEXT + 0x40, "its end");
	CHECK(gopclntab_find(g, TEXT + 0x50, &f) &&
		      !strcmp(f.name, "runtime.goexit"),
	      "an address in the second function");
	CHECK(!gopclntab_find(g, TEXT - 1, &f), "before text: none");
	CHECK(!gopclntab_find(g, TEXT + 0x80, &f), "past the end: none");
	CHECK(gopclntab_find(g, TEXT, &f) &&
		      gopclntab_spdelta(g, &f, TEXT, &d) && d == 0,
	      "delta 0 at the entry");
	CHECK(gopclntab_spdelta(g, &f, TEXT + 4, &d) && d == 24,
	      "delta 24 after the prologue");
	CHECK(gopclntab_spdelta(g, &f, TEXT + 0x3b, &d) && d == 24,
	      "delta 24 before the epilogue");
	CHECK(gopclntab_spdelta(g, &f, TEXT + 0x3c, &d) && d == 0,
	      "delta 0 at the RET");
	CHECK(!gopclntab_spdelta(g, &f, TEXT + 0x40, &d),
	      "no delta outside the function");
	CHECK(gopclntab_find(g, TEXT + 0x40, &f) &&
		      !gopclntab_spdelta(g, &f, TEXT + 0x40, &d),
	      "no delta without an SP table");
	CHECK(gopclntab_find(g, TEXT + 0x70, &f) &&
		      gopclntab_spdelta(g, &f, TEXT + 0x70, &d) && d == 8,
	      "delta 8 in the third function");
	gopclntab_free(g);
}

static void test_116(void)
{
	uint8_t t[TABLE_SIZE];
	struct gopclntab *g;
	struct gopclntab_func f;
	int32_t d = -1;

	make_table_116(t);
	g = parse(t, sizeof(t));
	if (!CHECK(g != NULL, "a Go 1.16 table parses"))
		return;
	CHECK_EQ_U64(gopclntab_count(g), 3, "1.16: three functions");
	CHECK(gopclntab_find(g, TEXT + 0x10, &f) && !strcmp(f.name, "main.a") &&
		      f.start == TEXT && f.end == TEXT + 0x40,
	      "1.16: main.a at its address");
	CHECK(gopclntab_spdelta(g, &f, TEXT + 0x10, &d) && d == 24,
	      "1.16: delta 24 after the prologue");
	CHECK(gopclntab_find(g, TEXT + 0x7f, &f) &&
		      !strcmp(f.name, "runtime.systemstack"),
	      "1.16: the last function");
	CHECK(!gopclntab_find(g, TEXT + 0x80, &f), "1.16: past the end: none");
	gopclntab_free(g);
}

static void test_kinds(void)
{
	CHECK(gopclntab_kind_of("runtime.goexit") == GOPCLNTAB_ROOT,
	      "goexit is a root");
	CHECK(gopclntab_kind_of("runtime.goexit.abi0") == GOPCLNTAB_ROOT,
	      "goexit.abi0 (ELF name) is a root");
	CHECK(gopclntab_kind_of("runtime.rt0_go.abi0") == GOPCLNTAB_ROOT,
	      "rt0_go is a root");
	CHECK(gopclntab_kind_of("runtime.mstart") == GOPCLNTAB_ROOT,
	      "mstart is a root");
	CHECK(gopclntab_kind_of("runtime.mstart1") == GOPCLNTAB_NORMAL,
	      "mstart1 is not");
	CHECK(gopclntab_kind_of("runtime.systemstack.abi0") ==
		      GOPCLNTAB_SWITCH,
	      "systemstack switches stacks");
	CHECK(gopclntab_kind_of("runtime.mcall") == GOPCLNTAB_SWITCH,
	      "mcall switches stacks");
	CHECK(gopclntab_kind_of("runtime.morestack.abi0") == GOPCLNTAB_SWITCH,
	      "morestack switches stacks");
	CHECK(gopclntab_kind_of("runtime.asmcgocall.abi0") ==
		      GOPCLNTAB_SWITCH,
	      "asmcgocall switches stacks");
	CHECK(gopclntab_kind_of("time.now") == GOPCLNTAB_SWITCH,
	      "time.now calls the vdso on the g0 stack");
	CHECK(gopclntab_kind_of("time.nowx") == GOPCLNTAB_NORMAL,
	      "time.nowx does not");
	CHECK(gopclntab_kind_of("runtime.sigtramp.abi0") == GOPCLNTAB_SWITCH,
	      "sigtramp runs on the signal stack");
	CHECK(gopclntab_kind_of("runtime.systemstack_switch") ==
		      GOPCLNTAB_NORMAL,
	      "systemstack_switch does not");
	CHECK(gopclntab_kind_of("main.systemstack") == GOPCLNTAB_NORMAL,
	      "another package's function does not");
}

static void test_refused(void)
{
	uint8_t t[TABLE_SIZE];
	struct gopclntab *g;
	struct gopclntab_func f;
	int32_t d;

	make_table(t);
	put32(t, 0xfffffffb);
	CHECK(parse(t, sizeof(t)) == NULL, "Go 1.2's magic: refused");
	make_table_116(t);
	put64(t + FTAB + 16, TEXT - 1);
	CHECK(parse(t, sizeof(t)) == NULL, "1.16: unsorted entries: refused");
	make_table(t);
	t[7] = 5;
	CHECK(parse(t, sizeof(t)) == NULL, "pointer size 5: refused");
	make_table(t);
	put32(t + FTAB + 8, 0x90);
	CHECK(parse(t, sizeof(t)) == NULL, "unsorted entries: refused");
	make_table(t);
	put64(t + 8, 1000);
	CHECK(parse(t, sizeof(t)) == NULL,
	      "more functions than the table holds: refused");
	make_table(t);
	put64(t + 56, TABLE_SIZE + 1);
	CHECK(parse(t, sizeof(t)) == NULL, "pctab past the end: refused");

	make_table(t);
	put32(t + FTAB + 4 * 8 + 4, 0x7fffffff);
	g = parse(t, sizeof(t));
	CHECK(g && !gopclntab_func(g, 0, &f) && f.name == NULL,
	      "a name offset out of the table: no name");
	CHECK(g && gopclntab_func(g, 1, &f), "the others keep theirs");
	gopclntab_free(g);

	make_table(t);
	/* main.a's name without its NUL, at the end of a cut table */
	put32(t + FTAB + 4 * 8 + 4, (uint32_t)(sizeof(t) - NAMES - 2));
	t[sizeof(t) - 2] = 'x';
	t[sizeof(t) - 1] = 'y';
	g = parse(t, sizeof(t));
	CHECK(g && !gopclntab_func(g, 0, &f), "a name without a NUL: none");
	gopclntab_free(g);

	make_table(t);
	put32(t + FTAB + 4 * 8 + 16, 0xffffff00);
	g = parse(t, sizeof(t));
	CHECK(g && gopclntab_find(g, TEXT, &f) &&
		      !gopclntab_spdelta(g, &f, TEXT + 8, &d),
	      "an SP table offset out of the table: no delta");
	gopclntab_free(g);

	make_table(t);
	/* runtime.systemstack's SP table: continuation bytes up to the
	 * table's end (the last record's unread fields) */
	put32(t + FTAB + 4 * 8 + 2 * FUNC_SIZE + 16,
	      (uint32_t)(sizeof(t) - 8 - PCTAB));
	memset(t + sizeof(t) - 8, 0x80, 8);
	g = parse(t, sizeof(t));
	CHECK(g && gopclntab_find(g, TEXT + 0x70, &f) &&
		      !gopclntab_spdelta(g, &f, TEXT + 0x70, &d),
	      "an SP table without an end: no delta");
	gopclntab_free(g);
}

/* Every function and a spread of addresses of a damaged table. */
static void exercise(const struct gopclntab *g)
{
	struct gopclntab_func f;
	uint64_t a;
	uint32_t i;
	int32_t d;

	for (i = 0; i < gopclntab_count(g) && i < 64; i++)
		if (gopclntab_func(g, i, &f) && f.name)
			(void)strlen(f.name);
	for (a = TEXT - 4; a < TEXT + 0x90; a += 3)
		if (gopclntab_find(g, a, &f))
			(void)gopclntab_spdelta(g, &f, a, &d);
}

/* Every byte of the table of a layout changed, every length cut. */
static unsigned damage(void (*make)(uint8_t *))
{
	static const uint8_t values[] = { 0x00, 0x01, 0x7f, 0x80, 0xff };
	uint8_t t[TABLE_SIZE];
	unsigned parsed = 0;
	size_t i, v, n;

	for (i = 0; i < TABLE_SIZE; i++) {
		for (v = 0; v < sizeof(values); v++) {
			struct gopclntab *g;
			uint8_t *copy;

			make(t);
			t[i] = values[v];
			/* an exact-size heap copy: ASan sees any overread */
			copy = malloc(sizeof(t));
			memcpy(copy, t, sizeof(t));
			g = parse(copy, sizeof(t));
			free(copy);
			if (g) {
				parsed++;
				exercise(g);
			}
			gopclntab_free(g);
		}
	}
	make(t);
	for (n = 0; n < TABLE_SIZE; n++) {
		struct gopclntab *g = parse(t, n);

		if (g)
			exercise(g);
		gopclntab_free(g);
	}
	return parsed;
}

static void test_damage(void)
{
	unsigned parsed = damage(make_table);

	CHECK(parsed > 0, "damaged 1.20 tables read without a crash "
			  "(%u parsed)", parsed);
	parsed = damage(make_table_116);
	CHECK(parsed > 0, "damaged 1.16 tables read without a crash "
			  "(%u parsed)", parsed);
}

int main(void)
{
	test_lookups();
	test_116();
	test_kinds();
	test_refused();
	test_damage();
	return done_testing();
}
