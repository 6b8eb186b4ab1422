/*
 * test_modload.c - modules loaded on threads of their own: a module waited
 * for while the input's queue has room, given up on (and counted, once a
 * sample) while it is full, used once loaded; a slow module does not hold
 * up a fast one; settling leaves no module loading.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/harness.h"
#include "unwind/modload.h"
#include "unwind/module.h"

static bool queue_full;

static bool test_full(void *ctx)
{
	(void)ctx;
	return queue_full;
}

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

int main(void)
{
	const struct modload_opts lo = { .full = test_full };
	char slow_path[PATH_MAX], fast_path[PATH_MAX], hook[PATH_MAX + 16];
	struct modcache mc;
	struct modload *l;
	struct module *slow, *fast, *plain;
	struct err err;
	double t0, waited;

	if (!realpath("/proc/self/exe", slow_path) ||
	    !realpath("/bin/sh", fast_path)) {
		puts("1..0 # SKIP no /proc/self/exe or /bin/sh");
		return 0;
	}
	snprintf(hook, sizeof(hook), "%s:600", slow_path);
	setenv("RESTACK_TEST_SLOW_LOAD", hook, 1);

	/* Without a loader: looked up at once. */
	modcache_init(&mc, NULL);
	plain = modcache_get(&mc, fast_path, NULL, 0, 0, 0);
	CHECK(plain && module_load(&mc, plain) && plain->status != MODULE_LOADING,
	      "without a loader a module is looked up on the spot");
	modcache_release(&mc);

	modcache_init(&mc, NULL);
	l = modload_start(&mc, &lo, &err);
	CHECK(l && mc.loader == l, "the loader starts");
	if (!l)
		return done_testing();
	slow = modcache_get(&mc, slow_path, NULL, 0, 0, 0);
	fast = modcache_get(&mc, fast_path, NULL, 0, 0, 0);

	/* The queue is full: the sample goes on, counted once. */
	queue_full = true;
	mc.sample_no++;
	t0 = now_ms();
	CHECK(!module_load(&mc, slow), "a full queue: the sample does not wait");
	CHECK(now_ms() - t0 < 300, "... and goes on at once (%.0f ms)",
	      now_ms() - t0);
	CHECK(slow->status == MODULE_LOADING, "... the module is loading");
	CHECK(!module_load(&mc, slow), "... asked again by the same sample");
	CHECK_EQ_U64(mc.missed, 1, "... which is counted once");

	/* A fast module is not held up by the slow one. */
	queue_full = false;
	t0 = now_ms();
	CHECK(module_load(&mc, fast), "another module loads");
	waited = now_ms() - t0;
	CHECK(waited < 400, "... beside the slow one (%.0f ms)", waited);
	CHECK(slow->status == MODULE_LOADING, "... which is still loading");

	queue_full = true;
	mc.sample_no++;
	CHECK(!module_load(&mc, slow), "the next sample goes on too");
	CHECK_EQ_U64(mc.missed, 2, "... counted");

	/* Room again: the sample waits, and gets the module. */
	queue_full = false;
	mc.sample_no++;
	CHECK(module_load(&mc, slow), "room in the queue: the sample waits for it");
	CHECK(slow->status == MODULE_OK || slow->status == MODULE_UNVERIFIED,
	      "... and it is found (%s)", module_status_name(slow->status));
	CHECK(slow->symtab_tried && slow->cfi_tried,
	      "... its symbols and CFI read on the loader's thread");
	CHECK_EQ_U64(mc.missed, 2, "... not counted");

	/* Settling: nothing left loading. */
	queue_full = true;
	plain = modcache_get(&mc, "/bin/does-not-exist-here", NULL, 0, 0, 0);
	mc.sample_no++;
	(void)module_load(&mc, plain);
	modload_stop(l);
	CHECK(!mc.loader, "stopped");
	CHECK(plain->status == MODULE_NOT_FOUND,
	      "stopping settles every module (%s)",
	      module_status_name(plain->status));
	modcache_release(&mc);
	return done_testing();
}
