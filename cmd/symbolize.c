/*
 * symbolize.c - `restack symbolize`: name addresses of an ELF file the way
 * convert does, to check restack's symbolization against perf and
 * addr2line directly.
 */
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "unwind/a2l.h"
#include "unwind/dwcache.h"
#include "unwind/module.h"
#include "unwind/symbolize.h"
#include "unwind/symtab.h"

static const char *const symbolize_usage[] = {
	"usage: restack symbolize [options] <elf-file> <address>...",
	"",
	"Prints one line per address (hex ELF virtual address):",
	"  ADDRESS<TAB>SYMBOL<TAB>CHAIN",
	"SYMBOL is the ELF symbol perf would show ('-' when none); CHAIN the",
	"inline chain addr2line reports, innermost first, separated by ';'",
	"('-' when it reports nothing).  Names are demangled (C++, Rust) as",
	"perf shows them.",
	"",
	"      --debug FILE   separate debuginfo for the file",
	"      --no-demangle  names as the ELF file and its DWARF have them",
	"      --dwarf-cache DIR  keep decompressed debug info in DIR (default",
	"                     $XDG_CACHE_HOME/restack/dwarf, else",
	"                     ~/.cache/restack/dwarf)",
	"      --no-dwarf-cache   neither read nor write that cache",
	"  -h, --help         show this help and exit",
	NULL,
};

/* Prints name, demangled unless raw. */
static void symbolize_print_name(const char *name, bool raw)
{
	char *d = raw ? NULL : symbolize_demangle(name);

	fputs(d ? d : name, stdout);
	free(d);
}

int cmd_symbolize(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "debug", required_argument, NULL, 'd' },
		{ "dwarf-cache", required_argument, NULL, 'c' },
		{ "no-dwarf-cache", no_argument, NULL, 'n' },
		{ "no-demangle", no_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *debug = NULL, *file;
	char abs_path[PATH_MAX];
	struct modcache mc;
	struct module *m;
	bool raw = false;
	int c, i, status = EXIT_OK;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			debug = optarg;
			break;
		case 'c':
		case 'n':
			dwcache_set_dir(c == 'c' ? optarg : NULL);
			break;
		case 'r':
			raw = true;
			break;
		case 'h':
			cmd_print_usage(stdout, symbolize_usage);
			return EXIT_OK;
		default:
			return cmd_usage_error(symbolize_usage,
					       "symbolize: bad option '%s'",
					       argv[optind - 1]);
		}
	}
	if (argc - optind < 2)
		return cmd_usage_error(symbolize_usage,
				       "symbolize: expected a file and addresses");
	/*
	 * The module cache takes a path that does not start with '/' for a
	 * mapping with no file ("[heap]", "//anon"): give it the absolute one.
	 */
	file = argv[optind];
	if (file[0] != '/' && realpath(file, abs_path))
		file = abs_path;
	modcache_init(&mc, NULL);
	m = modcache_get(&mc, file, NULL, 0, 0, 0);
	if (!m || !module_load(&mc, m)) {
		cmd_error("cannot load '%s' as an ELF file", argv[optind]);
		modcache_release(&mc);
		return EXIT_BAD;
	}
	if (debug && !module_use_debug_file(m, debug)) {
		cmd_error("cannot use '%s' as debuginfo for '%s'", debug,
			  argv[optind]);
		modcache_release(&mc);
		return EXIT_BAD;
	}
	symtab_load(m);
	for (i = optind + 1; i < argc; i++) {
		const char *chain[A2L_CHAIN_MAX];
		const struct symtab_sym *sym;
		char *end;
		uint64_t addr = strtoull(argv[i], &end, 16);
		unsigned n, k;

		if (*end || end == argv[i]) {
			cmd_error("'%s' is not a hex address", argv[i]);
			status = EXIT_USAGE;
			break;
		}
		sym = symtab_lookup(m->symtab, addr);
		n = a2l_lookup(m, addr, chain);
		printf("%llx\t", (unsigned long long)addr);
		symbolize_print_name(sym ? sym->name : "-", raw);
		putchar('\t');
		for (k = 0; k < n; k++) {
			if (k)
				putchar(';');
			symbolize_print_name(chain[k], raw);
		}
		printf("%s\n", n ? "" : "-");
	}
	modcache_release(&mc);
	return status;
}
