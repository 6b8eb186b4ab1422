/*
 * syscap_validate.c - reads a sysprof capture with Debian's
 * libsysprof-capture (the library sysprof 3.46 itself uses) and prints
 * what it finds, for tests/cli/sysprof.sh to compare:
 *
 *   sample PID TID TIME_NS ADDR...   one line per SAMPLE frame, addresses
 *                                    leaf first in hex, context markers as
 *                                    K (kernel) and U (user), JITMAP keys
 *                                    as jit:NAME
 *   frames N bytes N size N          frames read, bytes they cover (with
 *                                    the header) and the file size
 *   type NAME N                      frames per type
 *
 * With a second argument, FILE: writes the embedded file of that path
 * (FILE_CHUNK frames), as the library puts it together, to standard
 * output instead; exits 1 when the capture holds no such file.
 *
 * Exits 1 when the library refuses a frame or stops before the end.
 * Built by the Makefile for the tests only.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sysprof-capture.h>

struct jit {
	uint64_t addr;
	char *name;
};

static struct jit *jits;
static size_t nr_jits;

static const char *jit_name(uint64_t addr)
{
	size_t i;

	for (i = 0; i < nr_jits; i++)
		if (jits[i].addr == addr)
			return jits[i].name;
	return NULL;
}

static int read_jitmap(const SysprofCaptureJitmap *j)
{
	const uint8_t *p = j->data;
	const uint8_t *end = (const uint8_t *)j + j->frame.len;
	unsigned i;

	for (i = 0; i < j->n_jitmaps; i++) {
		uint64_t addr;
		size_t n;

		if (end - p < 9)
			return -1;
		memcpy(&addr, p, 8);
		p += 8;
		n = strnlen((const char *)p, (size_t)(end - p));
		if (p + n >= end)
			return -1;
		jits = realloc(jits, (nr_jits + 1) * sizeof(*jits));
		if (!jits)
			return -1;
		jits[nr_jits].addr = addr;
		jits[nr_jits].name = strdup((const char *)p);
		nr_jits++;
		p += n + 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const char *const names[] = {
		"?", "timestamp", "sample", "map", "process", "fork", "exit",
		"jitmap", "ctrdef", "ctrset", "mark", "metadata", "log",
		"file_chunk", "allocation", "overlay",
	};
	unsigned long long counts[16] = { 0 }, frames = 0, bytes = 256;
	SysprofCaptureReader *r;
	SysprofCaptureFrameType type;
	SysprofCaptureFrame fr;
	struct stat stb;
	int pass, i;

	if (argc < 2 || argc > 3 || stat(argv[1], &stb) < 0) {
		fprintf(stderr, "usage: syscap_validate CAPTURE [FILE]\n");
		return 2;
	}
	r = sysprof_capture_reader_new(argv[1]);
	if (!r) {
		fprintf(stderr, "syscap_validate: libsysprof-capture cannot "
			"open %s\n", argv[1]);
		return 1;
	}
	if (argc == 3) {
		bool ok = sysprof_capture_reader_read_file_fd(r, argv[2], 1);

		fflush(stdout);
		sysprof_capture_reader_unref(r);
		return ok ? 0 : 1;
	}
	/* JITMAP frames first: they may come after the samples using them. */
	for (pass = 0; pass < 2; pass++) {
		while (sysprof_capture_reader_peek_frame(r, &fr)) {
			if (!sysprof_capture_reader_peek_type(r, &type))
				break;
			if (pass == 1) {
				frames++;
				bytes += fr.len;
				if (type < 16)
					counts[type]++;
			}
			if (type == SYSPROF_CAPTURE_FRAME_JITMAP && pass == 0) {
				const SysprofCaptureJitmap *j =
					sysprof_capture_reader_read_jitmap(r);

				if (!j || read_jitmap(j) < 0)
					goto refused;
				continue;
			}
			if (type == SYSPROF_CAPTURE_FRAME_SAMPLE && pass == 1) {
				const SysprofCaptureSample *s =
					sysprof_capture_reader_read_sample(r);

				if (!s)
					goto refused;
				printf("sample %d %d %lld", s->frame.pid, s->tid,
				       (long long)s->frame.time);
				for (i = 0; i < s->n_addrs; i++) {
					uint64_t a = s->addrs[i];
					const char *jn = jit_name(a);

					if (a == (uint64_t)-128)
						printf(" K");
					else if (a == (uint64_t)-512)
						printf(" U");
					else if (jn)
						printf(" jit:%s", jn);
					else
						printf(" %llx",
						       (unsigned long long)a);
				}
				printf("\n");
				continue;
			}
			if (pass == 1 && ((type == SYSPROF_CAPTURE_FRAME_MAP &&
					   !sysprof_capture_reader_read_map(r)) ||
					  (type == SYSPROF_CAPTURE_FRAME_PROCESS &&
					   !sysprof_capture_reader_read_process(r)) ||
					  (type == SYSPROF_CAPTURE_FRAME_FORK &&
					   !sysprof_capture_reader_read_fork(r)) ||
					  (type == SYSPROF_CAPTURE_FRAME_EXIT &&
					   !sysprof_capture_reader_read_exit(r))))
				goto refused;
			if (type != SYSPROF_CAPTURE_FRAME_MAP &&
			    type != SYSPROF_CAPTURE_FRAME_PROCESS &&
			    type != SYSPROF_CAPTURE_FRAME_FORK &&
			    type != SYSPROF_CAPTURE_FRAME_EXIT)
				if (!sysprof_capture_reader_skip(r))
					goto refused;
			if (pass == 0 &&
			    (type == SYSPROF_CAPTURE_FRAME_MAP ||
			     type == SYSPROF_CAPTURE_FRAME_PROCESS ||
			     type == SYSPROF_CAPTURE_FRAME_FORK ||
			     type == SYSPROF_CAPTURE_FRAME_EXIT) &&
			    !sysprof_capture_reader_skip(r))
				goto refused;
		}
		if (pass == 0)
			sysprof_capture_reader_reset(r);
	}
	printf("frames %llu bytes %llu size %lld\n", frames, bytes,
	       (long long)stb.st_size);
	for (i = 1; i < 16; i++)
		if (counts[i])
			printf("type %s %llu\n", names[i], counts[i]);
	sysprof_capture_reader_unref(r);
	return bytes == (unsigned long long)stb.st_size ? 0 : 1;
refused:
	fprintf(stderr, "syscap_validate: libsysprof-capture refuses the "
		"frame at byte %llu of %s\n", bytes, argv[1]);
	return 1;
}
