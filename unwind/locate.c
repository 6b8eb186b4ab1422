/*
 * locate.c - the candidate files for a module, in lookup order (see
 * locate.h), and two cheap checks of an ELF file used before the
 * debuginfod prefetch decides what to fetch.
 */
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <gelf.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unwind/locate.h"

#include "common/base.h"
#include "common/regfile.h"
#include "unwind/module.h"

enum locate_step {
	LOCATE_STEP_SYMFS,
	LOCATE_STEP_RECORDED,
	LOCATE_STEP_BUILDID_DIRS,
	LOCATE_STEP_DEBUG_DIRS,
	LOCATE_STEP_END,
};

bool locate_is_perf_map(const char *path)
{
	const char *p;

	if (strncmp(path, "/tmp/perf-", 10))
		return false;
	for (p = path + 10; *p >= '0' && *p <= '9'; p++)
		;
	return p > path + 10 && !strcmp(p, ".map");
}

bool locate_is_special(const char *recorded)
{
	return recorded[0] != '/' || !strncmp(recorded, "//anon", 6) ||
	       locate_is_perf_map(recorded) ||
	       !strncmp(recorded, "/dev/", 5) ||
	       !strncmp(recorded, "/memfd:", 7) ||
	       !strncmp(recorded, "/SYSV", 5) ||
	       strstr(recorded, " (deleted)");
}

/* Formats <dir>/.build-id/xx/rest<suffix>; false when it does not fit. */
static bool locate_bid_path(char *out, size_t size, const char *dir,
			    const uint8_t *bid, unsigned n, const char *suffix)
{
	char hex[41];
	int len;

	module_build_id_hex(bid, module_build_id_name_size(bid, MIN(n, 20)),
			    hex);
	len = snprintf(out, size, "%s/.build-id/%.2s/%s%s", dir, hex, hex + 2,
		       suffix);
	return len > 0 && (size_t)len < size;
}

bool locate_next(const struct locate_opts *o, enum locate_kind kind,
		 const char *recorded, const uint8_t *bid, unsigned n,
		 struct locate_iter *it, char *path, size_t size,
		 const char **from)
{
	static const char *const exe_names[] = { "/elf", "/vdso", "" };
	int len;

	for (;;) {
		switch (it->step) {
		case LOCATE_STEP_SYMFS:
			it->step++;
			if (kind != LOCATE_EXE || !o->symfs || !o->symfs[0] ||
			    recorded[0] != '/')
				continue;
			len = snprintf(path, size, "%s%s", o->symfs, recorded);
			if (len <= 0 || (size_t)len >= size)
				continue;
			*from = "--symfs";
			return true;
		case LOCATE_STEP_RECORDED:
			it->step++;
			if (kind != LOCATE_EXE || recorded[0] != '/' ||
			    strlen(recorded) >= size)
				continue;
			strcpy(path, recorded);
			*from = "recorded path";
			return true;
		case LOCATE_STEP_BUILDID_DIRS:
			if (!n || it->i >= o->nr_buildid_dirs) {
				it->step++;
				it->i = it->k = 0;
				continue;
			}
			if (kind == LOCATE_DEBUG) {
				*from = o->buildid_dirs[it->i].label;
				if (locate_bid_path(path, size,
						    o->buildid_dirs[it->i++].path,
						    bid, n, "/debug"))
					return true;
				continue;
			}
			if (it->k >= ARRAY_SIZE(exe_names)) {
				it->i++;
				it->k = 0;
				continue;
			}
			*from = o->buildid_dirs[it->i].label;
			if (locate_bid_path(path, size,
					    o->buildid_dirs[it->i].path, bid, n,
					    exe_names[it->k++]))
				return true;
			continue;
		case LOCATE_STEP_DEBUG_DIRS:
			if (!n || it->i >= o->nr_debug_dirs) {
				it->step++;
				continue;
			}
			*from = "debuginfo directory";
			if (locate_bid_path(path, size, o->debug_dirs[it->i++],
					    bid, n,
					    kind == LOCATE_DEBUG ? ".debug" : ""))
				return true;
			continue;
		default:
			return false;
		}
	}
}

/* Opens path as an ELF (regular files only); NULL otherwise. */
static Elf *locate_open(const char *path, int *fd)
{
	Elf *elf;

	*fd = regfile_open(path, NULL);
	if (*fd < 0)
		return NULL;
	(void)elf_version(EV_CURRENT);
	elf = elf_begin(*fd, ELF_C_READ_MMAP, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF)
		return elf;
	elf_end(elf);
	close(*fd);
	*fd = -1;
	return NULL;
}

int locate_elf_build_id(const char *path, uint8_t *bid, unsigned size)
{
	unsigned k;
	int fd;
	Elf *elf = locate_open(path, &fd);

	if (!elf)
		return -1;
	k = module_elf_build_id(elf, bid, size);
	elf_end(elf);
	close(fd);
	return (int)k;
}

int locate_elf_matches(const char *path, const uint8_t *bid, unsigned n)
{
	uint8_t got[20];
	int k = locate_elf_build_id(path, got, sizeof(got));

	if (k < 0)
		return 0;
	return (unsigned)k == n && !memcmp(got, bid, n) ? 1 : -1;
}

bool locate_elf_needs_debug(const char *path)
{
	GElf_Shdr sh;
	bool symtab, dwarf;
	int fd;
	Elf *elf = locate_open(path, &fd);

	if (!elf)
		return true;
	symtab = module_elf_section(elf, ".symtab", &sh) &&
		 sh.sh_type == SHT_SYMTAB;
	dwarf = module_elf_section(elf, ".debug_info", &sh) &&
		sh.sh_type != SHT_NOBITS;
	elf_end(elf);
	close(fd);
	return !symtab || !dwarf;
}

static int locate_remove_one(const char *path, const struct stat *st,
			     int type, struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	(void)remove(path);
	return 0;
}

void locate_remove_tree(const char *dir)
{
	if (dir && *dir)
		(void)nftw(dir, locate_remove_one, 16, FTW_DEPTH | FTW_PHYS);
}
