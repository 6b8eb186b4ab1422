/*
 * test_jit.c - JIT symbols and CFI: perf maps (later lines win), jitdump
 * CODE_LOAD / CODE_MOVE by time, UNWINDING_INFO compiled into CFI rows,
 * both byte orders.  Uses testdata/corpus/jit/syn-*.dump, made by
 * tests/tools/mkjitdump.py (run from the repository top).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/harness.h"
#include "unwind/cfi.h"
#include "unwind/jit.h"
#include "unwind/module.h"
#include "unwind/regs.h"

#define A1 0x7f0000001000ull
#define A2 0x7f0000002000ull

static char dir[64];

static void put(const char *name, const void *data, size_t len)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	CHECK(f && fwrite(data, 1, len, f) == len && fclose(f) == 0,
	      "write %s", name);
}

static void drop(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	unlink(path);
}

static void *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = malloc(1 << 16);

	*len = f && buf ? fread(buf, 1, 1 << 16, f) : 0;
	if (f)
		fclose(f);
	return buf;
}

static const char *name_at(struct jit_index *j, int pid, uint64_t addr,
			   uint64_t time)
{
	struct jit_sym *s = jit_lookup(j, pid, addr, time);

	return s ? s->name : "(none)";
}

static void test_map(void)
{
	static const char map[] = "1000 100 first\n"
				  "1000 100 second\n"
				  "2000 10 other thing\n"
				  "zz 10 bad line\n";
	const char *dirs[1] = { dir };
	struct jit_index j;

	put("perf-11.map", map, sizeof(map) - 1);
	jit_init(&j, dirs, 1);
	CHECK_STR(name_at(&j, 11, 0x1080, 0), "second",
		  "perf map: a later line for the same code wins");
	CHECK_STR(name_at(&j, 11, 0x2005, 0), "other thing",
		  "perf map: names keep their spaces");
	CHECK_STR(name_at(&j, 11, 0x2010, 0), "(none)",
		  "perf map: the end is exclusive");
	CHECK_STR(name_at(&j, 12, 0x1000, 0), "(none)",
		  "another process has no map");
	jit_release(&j);
	drop("perf-11.map");
}

static void test_dump(const char *file, bool check_cfi)
{
	const struct regs_arch *a = regs_arch_get(EVENT_ARCH_X86_64);
	const char *dirs[1] = { dir };
	const struct cfi_row *row;
	struct jit_index j;
	struct jit_sym *s;
	struct module *m;
	size_t len;
	void *data = slurp(file, &len);

	CHECK(len > 40, "read %s", file);
	put("jit-4242.dump", data, len);
	free(data);
	jit_init(&j, dirs, 1);
	CHECK_STR(name_at(&j, 4242, A1 + 4, 102), "JS:*f w.js:1",
		  "%s: CODE_LOAD names its code", file);
	CHECK_STR(name_at(&j, 4242, A2, 103), "JS:~g w.js:5",
		  "%s: a second load", file);
	CHECK_STR(name_at(&j, 4242, A1 + 0x8004, 104), "JS:*f w.js:1",
		  "%s: CODE_MOVE names the code at its new place", file);
	CHECK_STR(name_at(&j, 4242, A1 + 0x8004, 50), "JS:*f w.js:1",
		  "%s: before any load, the newest entry is used", file);
	if (check_cfi) {
		s = jit_lookup(&j, 4242, A1, 102);
		m = s ? jit_cfi_module(&j, s) : NULL;
		CHECK(m != NULL && m->is_jit, "%s: unwinding info gives a "
		      "CFI module", file);
		row = m ? cfi_find(m, a, A1) : NULL;
		CHECK(row && row->cfa_reg == 7 && row->cfa_off == 8,
		      "%s: at entry CFA = rsp + 8", file);
		row = m ? cfi_find(m, a, A1 + 1) : NULL;
		CHECK(row && row->cfa_reg == 7 && row->cfa_off == 16,
		      "%s: after push rbp CFA = rsp + 16", file);
		row = m ? cfi_find(m, a, A1 + 5) : NULL;
		CHECK(row && row->cfa_reg == 6 && row->cfa_off == 16,
		      "%s: after mov rbp, rsp CFA = rbp + 16", file);
		s = jit_lookup(&j, 4242, A1 + 0x8000, 104);
		m = s ? jit_cfi_module(&j, s) : NULL;
		row = m ? cfi_find(m, a, A1 + 0x8005) : NULL;
		CHECK(row && row->cfa_reg == 6 && row->cfa_off == 16,
		      "%s: moved code keeps its unwinding info", file);
		s = jit_lookup(&j, 4242, A2, 103);
		CHECK(s && !jit_cfi_module(&j, s),
		      "%s: code without unwinding info has no CFI", file);
	}
	jit_release(&j);
	drop("jit-4242.dump");
}

int main(void)
{
	strcpy(dir, "/tmp/restack-test-jit.XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	test_map();
	test_dump("testdata/corpus/jit/syn-le.dump", true);
	test_dump("testdata/corpus/jit/syn-be.dump", false);
	rmdir(dir);
	return done_testing();
}
