/*
 * fuzz_convert.c - libFuzzer target for the whole conversion: the bytes
 * are a capture (perf.data, file or pipe mode, or a sysprof capture), and
 * `restack convert` turns it into every output format, each with its own
 * options, against a fixed set of real binaries: the build-id cache
 * testdata/fuzz/buildid (testdata/bin/prog, the program the seed captures
 * profiled) and the kernel symbols testdata/fuzz/kallsyms.  Nothing is
 * looked up on the network (--offline) and no DWARF cache is kept, so an
 * input converts the same way every time.  Built with tests/fuzz/replay.c
 * for `make check` and with -fsanitize=fuzzer by `make fuzz`; both link
 * the command code but not cmd/main.c.
 */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"

#include "tests/fuzz/fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#ifndef RESTACK_TESTDATA
#define RESTACK_TESTDATA "testdata"
#endif

/* One output per format; the options vary what the writers see. */
static const struct fuzz_output {
	const char *name;
	const char *opts[6];
} fuzz_outputs[] = {
	{ "out.folded", { "--annotate", "--tid", "--weight", "period" } },
	{ "out.script", { "--stitch=strict" } },
	{ "out.pb.gz", { "--no-inline" } },
	{ "out.speedscope.json", { "--stitch=off", "--pid" } },
	{ "out.firefox.json", { "--weight", "period" } },
	{ "out.svg", { "--max-frames", "16", "--title", "t<&>" } },
	{ "out.data", { "--no-kernel" } },
	{ "out.syscap", { "--sysprof-version", "3.46" } },
	{ "out2.syscap", { "--max-scan", "0" } },
};

static char fuzz_dir[64];

static void fuzz_cleanup(void)
{
	char path[128];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(fuzz_outputs); i++) {
		snprintf(path, sizeof(path), "%s/%s", fuzz_dir,
			 fuzz_outputs[i].name);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/in.data", fuzz_dir);
	unlink(path);
	rmdir(fuzz_dir);
}

static void fuzz_convert(const char *in, const struct fuzz_output *o)
{
	char out[128];
	char *argv[32];
	int argc = 0;
	size_t i;

	snprintf(out, sizeof(out), "%s/%s", fuzz_dir, o->name);
	argv[argc++] = (char *)"convert";
	argv[argc++] = (char *)"-q";
	argv[argc++] = (char *)"-j1";
	argv[argc++] = (char *)"--offline";
	argv[argc++] = (char *)"--no-dwarf-cache";
	argv[argc++] = (char *)"--buildid-dir";
	argv[argc++] = (char *)RESTACK_TESTDATA "/fuzz/buildid";
	argv[argc++] = (char *)"--kallsyms";
	argv[argc++] = (char *)RESTACK_TESTDATA "/fuzz/kallsyms";
	for (i = 0; i < ARRAY_SIZE(o->opts) && o->opts[i]; i++)
		argv[argc++] = (char *)o->opts[i];
	argv[argc++] = (char *)"-o";
	argv[argc++] = out;
	argv[argc++] = (char *)in;
	argv[argc] = NULL;
	optind = 0;   /* getopt starts over */
	(void)cmd_convert(argc, argv);
	unlink(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char in[128];
	size_t i;

	if (!fuzz_dir[0]) {
		strcpy(fuzz_dir, "/tmp/restack-fuzz-convert.XXXXXX");
		if (!mkdtemp(fuzz_dir))
			abort();
		atexit(fuzz_cleanup);
	}
	snprintf(in, sizeof(in), "%s/in.data", fuzz_dir);
	if (fuzz_write_file(in, data, size) < 0)
		abort();
	for (i = 0; i < ARRAY_SIZE(fuzz_outputs); i++)
		fuzz_convert(in, &fuzz_outputs[i]);
	fflush(stdout);
	unlink(in);
	return 0;
}
