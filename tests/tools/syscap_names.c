/*
 * syscap_names.c - names the frames of a sysprof capture as sysprof 3.46
 * does from what the capture carries (libsysprof-4's capture symbol
 * resolver: the __symbols__ bundle, by process and address, whatever
 * the context), for tests/cli/sysprof_selfcontained.sh to compare:
 *
 *   PID NAME...   one line per SAMPLE frame, root first, "?" for an
 *                 address the bundle does not name
 *
 * Exits 1 when the capture cannot be opened.  Built by the Makefile for
 * the tests only, when libsysprof-4 is there.
 */
#include <stdio.h>

#include <sysprof.h>

int main(int argc, char **argv)
{
	SysprofCaptureReader *r;
	SysprofSymbolResolver *res;
	SysprofCaptureFrameType type;

	if (argc != 2) {
		fprintf(stderr, "usage: syscap_names CAPTURE\n");
		return 2;
	}
	r = sysprof_capture_reader_new(argv[1]);
	if (!r) {
		fprintf(stderr, "syscap_names: cannot open %s\n", argv[1]);
		return 1;
	}
	res = sysprof_capture_symbol_resolver_new();
	sysprof_symbol_resolver_load(res, r);
	sysprof_capture_reader_reset(r);
	while (sysprof_capture_reader_peek_type(r, &type)) {
		const SysprofCaptureSample *s;
		SysprofAddressContext ctx = SYSPROF_ADDRESS_CONTEXT_NONE, c;
		int i;

		if (type != SYSPROF_CAPTURE_FRAME_SAMPLE) {
			if (!sysprof_capture_reader_skip(r))
				break;
			continue;
		}
		s = sysprof_capture_reader_read_sample(r);
		if (!s)
			break;
		printf("%d", s->frame.pid);
		for (i = s->n_addrs - 1; i >= 0; i--) {
			GQuark tag = 0;
			char *n;

			if (sysprof_address_is_context_switch(s->addrs[i], &c)) {
				ctx = c;
				continue;
			}
			n = sysprof_symbol_resolver_resolve_with_context(
				res, (guint64)s->frame.time, s->frame.pid, ctx,
				s->addrs[i], &tag);
			printf(" %s", n ? n : "?");
			g_free(n);
		}
		printf("\n");
	}
	g_object_unref(res);
	sysprof_capture_reader_unref(r);
	return 0;
}
