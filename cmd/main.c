/*
 * main.c - restack's entry point: the command table, --help, --version.
 */
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "common/sigclean.h"

/*
 * The heap grows 16 MiB at a time rather than 128 KiB (glibc's default):
 * the arena of each worker thread grows by mprotect(), which on the
 * bench's large capture at -j2 took 578 calls, 15 with this; the pages
 * are only address space until touched, so the peak RSS does not change.
 */
#define MAIN_HEAP_STEP (16 << 20)

struct cmd_entry {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
};

static const struct cmd_entry commands[] = {
	{ "convert", cmd_convert, "unwind a capture and write a profile" },
	{ "stats", cmd_stats, "how well a capture unwinds, per module" },
	{ "info", cmd_info, "header, events, features, build-ids, record counts" },
	{ "dump", cmd_dump, "one line per record, in time order" },
	{ "symbolize", cmd_symbolize, "name addresses of an ELF file" },
	{ "merge", cmd_merge, "sum captures or profiles into one profile" },
	{ "diff", cmd_diff, "how one capture or profile differs from another" },
};

static void main_usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: restack <command> [options] <input>\n"
		   "       restack --help | --version\n\ncommands:\n");
	for (i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].help);
	fprintf(f, "\n'restack <command> --help' describes a command's options.\n"
		   "\nExit status: 0 ok; 1 output written but a --min-coverage or "
		   "--fail-above\ngate failed; "
		   "2 the input could not be read or converted; 64 bad usage.\n");
}

/*
 * SIGINT, SIGTERM, SIGHUP: remove the temporary output and the extracted
 * archive (common/sigclean.h), then die by the signal, as if unhandled.
 * Runs on whichever thread the signal reached.
 */
static void main_on_signal(int sig)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	sigset_t set;

	sigclean_run();
	sigemptyset(&dfl.sa_mask);
	sigaction(sig, &dfl, NULL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);
	_exit(128 + sig);
}

/* Before any thread starts; a signal ignored by our parent stays so. */
static void main_catch_signals(void)
{
	struct sigaction sa = { .sa_handler = main_on_signal }, old;
	int sig;

	sigclean_signals(&sa.sa_mask);
	for (sig = 1; sig < NSIG; sig++) {
		if (sigismember(&sa.sa_mask, sig) != 1 ||
		    sigaction(sig, NULL, &old) < 0 ||
		    old.sa_handler == SIG_IGN)
			continue;
		sigaction(sig, &sa, NULL);
	}
}

/*
 * Standard output's last buffered bytes, and any write that failed before:
 * a command whose output did not all arrive fails (exit 2).
 */
static int main_close_stdout(int rc)
{
	int failed = ferror(stdout);

	if (fflush(stdout) != 0)
		cmd_error("cannot write to standard output: %s",
			  strerror(errno));
	else if (failed)
		cmd_error("cannot write to standard output");
	else
		return rc;
	return rc == EXIT_OK || rc == EXIT_GATE ? EXIT_BAD : rc;
}

static int main_run(int argc, char **argv)
{
	size_t i;

	if (argc < 2) {
		main_usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "help")) {
		main_usage(stdout);
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("restack %s\n", RESTACK_VERSION);
		return EXIT_OK;
	}
	for (i = 0; i < ARRAY_SIZE(commands); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "restack: '%s' is not a command\n", argv[1]);
	main_usage(stderr);
	return EXIT_USAGE;
}

int main(int argc, char **argv)
{
#ifdef M_TOP_PAD
	(void)mallopt(M_TOP_PAD, MAIN_HEAP_STEP);
#endif
	main_catch_signals();
	return main_close_stdout(main_run(argc, argv));
}
