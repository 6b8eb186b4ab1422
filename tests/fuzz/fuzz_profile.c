/*
 * fuzz_profile.c - libFuzzer target for the profile readers
 * (formats/profile.h): the bytes are read as a pprof profile (gzip or
 * not, with and without --sample-type, and with every sample type kept
 * into the pprof writer's pprof_set_types()), as folded stacks and as a
 * Chrome trace, and
 * every stack they give goes to the folded, pprof and svg writers, which
 * are then encoded.  Built with tests/fuzz/replay.c for `make check`
 * (corpus testdata/corpus/profile) and with -fsanitize=fuzzer by
 * `make fuzz`.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/strbuf.h"
#include "formats/folded.h"
#include "formats/pprof.h"
#include "formats/profile.h"
#include "formats/svg.h"

#include "tests/fuzz/fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_read(const char *path, enum profile_kind kind,
		      const char *type, bool all)
{
	struct profile_opts o = { .kind = kind, .sample_type = type,
				  .all_types = all };
	const struct profile_info *info = NULL;
	struct folded *fo = folded_new(&(struct folded_opts){
		.annotate = true, .tid = true });
	struct pprof *pp = pprof_new(NULL);
	struct svg *g = svg_new(NULL);
	struct strbuf out = STRBUF_INIT;
	const struct rsample *s;
	struct profile *p;
	struct err err;
	int fd;

	p = profile_open(path, &o, &err);
	if (p && pp && all) {
		info = profile_info(p);
		if (pprof_set_types(pp, info->nr_types, info->types,
				    info->units, info->default_type) < 0)
			info = NULL;
	}
	while (p && fo && pp && g && profile_next(p, &s) > 0)
		if (folded_add(fo, s) < 0 ||
		    (info ? pprof_add_values(pp, s, info->values) :
			    pprof_add(pp, s)) < 0 ||
		    svg_add(g, s) < 0)
			break;
	fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (fd >= 0 && fo && pp && g) {
		folded_write(fo, fd, &err);
		svg_write(g, fd, &err);
		pprof_encode(pp, &out);
	}
	if (fd >= 0)
		close(fd);
	strbuf_release(&out);
	profile_close(p);
	folded_free(fo);
	pprof_free(pp);
	svg_free(g);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char dir[] = "/tmp/fuzz_profile.XXXXXX", path[64];

	if (!mkdtemp(dir))
		return 0;
	snprintf(path, sizeof(path), "%s/in", dir);
	if (fuzz_write_file(path, data, size) == 0) {
		profile_sniff(path);
		fuzz_read(path, PROFILE_PPROF, NULL, false);
		fuzz_read(path, PROFILE_PPROF, "samples", false);
		fuzz_read(path, PROFILE_PPROF, NULL, true);
		fuzz_read(path, PROFILE_FOLDED, NULL, false);
		fuzz_read(path, PROFILE_CHROME, NULL, false);
	}
	unlink(path);
	rmdir(dir);
	return 0;
}
