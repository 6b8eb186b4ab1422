/*
 * test_a2lstate.c - bfd's memory of function names replayed in output
 * order: a function's first lookup named by the symbol table, later ones
 * by its DWARF name or the symbol it was renamed to, callers never
 * settling a function, each address keeping its first answer.
 */
#include <string.h>

#include "tests/harness.h"
#include "unwind/a2lstate.h"

/* A location with n entries and their dependencies. */
struct loc {
	struct sym_loc l;
	struct sym_entry e[3];
	struct sym_a2l d;
	struct sym_a2l_entry de[3];
};

/*
 * A location at rel: entry 0 a stateful function (low0, DWARF name dw0)
 * whose first lookup gives first (renaming it when renames), entry 1 its
 * caller (low1, stateful, DWARF name dw1), perf's symbol real.
 */
static void mk(struct loc *x, uint64_t rel, uint64_t low0, const char *dw0,
	       const char *first, bool renames, uint64_t low1,
	       const char *dw1, const char *real)
{
	memset(x, 0, sizeof(*x));
	x->l.module = "/bin/prog";
	x->l.rel = rel;
	x->l.nr = 2;
	x->l.a2l = &x->d;
	x->e[0].name = first;
	x->e[0].inlined = strcmp(first, real) != 0;
	x->e[1].name = dw1;
	x->e[1].inlined = strcmp(dw1, real) != 0;
	x->d.module = 1;
	x->d.real = real;
	x->d.first = first;
	x->d.renames = renames;
	/* a function's identity: (low, DIE order), here low / 4 */
	x->de[0] = (struct sym_a2l_entry){ low0, (uint32_t)(low0 / 4), true,
					   dw0 };
	x->de[1] = (struct sym_a2l_entry){ low1, (uint32_t)(low1 / 4), true,
					   dw1 };
}

int main(void)
{
	struct a2lstate st;
	struct loc a, b, c, d, plain;
	const struct sym_loc *r, *r2;

	a2lstate_init(&st);

	/* 0x120 in inline F (0x100) called from G (0x40, out of line) */
	mk(&a, 0x120, 0x100, "F<int>", "g", false, 0x40, "G<int>", "g");
	r = a2lstate_loc(&st, &a.l);
	CHECK(r && r != &a.l, "a stateful location gets a copy");
	CHECK_STR(r->e[0].name, "g", "first lookup of F: the symbol");
	CHECK(!r->e[0].inlined, "... which is the real function");
	CHECK_STR(r->e[1].name, "G<int>", "G not looked up yet: DWARF name");
	CHECK(r->e[1].inlined, "... not perf's symbol: inlined");
	CHECK(r->a2l == NULL, "the copy has no dependencies");

	/* another address in F: F is settled (not renamed) */
	mk(&b, 0x130, 0x100, "F<int>", "g", false, 0x40, "G<int>", "g");
	r2 = a2lstate_loc(&st, &b.l);
	CHECK_STR(r2->e[0].name, "F<int>", "F settled: its DWARF name");
	CHECK(r2->e[0].inlined, "... an inline frame");

	/* an address directly in G, whose symbol starts where G does */
	memset(&c, 0, sizeof(c));
	mk(&c, 0x50, 0x40, "G<int>", "std::G<int>", true, 0, "", "g");
	c.l.nr = 1;
	r2 = a2lstate_loc(&st, &c.l);
	CHECK_STR(r2->e[0].name, "std::G<int>", "G's first lookup: symbol");

	/* later: G as a caller carries the symbol's name */
	mk(&d, 0x140, 0x100, "F<int>", "g", false, 0x40, "G<int>",
	   "std::G<int>");
	r2 = a2lstate_loc(&st, &d.l);
	CHECK_STR(r2->e[1].name, "std::G<int>", "renamed G as a caller");
	CHECK(!r2->e[1].inlined, "... the real function again");

	/* an address asked before keeps its first answer */
	r2 = a2lstate_loc(&st, &a.l);
	CHECK(r2 == r, "0x120 keeps its first answer");
	CHECK_STR(r2->e[1].name, "G<int>", "... G's DWARF name there");

	/* a location without dependencies passes through */
	memset(&plain, 0, sizeof(plain));
	plain.l.nr = 1;
	plain.e[0].name = "main";
	CHECK(a2lstate_loc(&st, &plain.l) == &plain.l,
	      "no dependencies: the location itself");
	CHECK(a2lstate_loc(&st, NULL) == NULL, "NULL passes through");

	a2lstate_release(&st);
	return done_testing();
}
