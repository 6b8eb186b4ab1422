/*
 * stack.c - names of frame origins and end reasons, as printed in
 * statistics and JSON.
 */
#include "common/base.h"
#include "common/stack.h"

const char *frame_origin_name(enum frame_origin o)
{
	static const char *const names[] = {
		[FRAME_SAMPLE] = "sample",
		[FRAME_KERNEL] = "kernel",
		[FRAME_CALLCHAIN] = "callchain",
		[FRAME_CFI_EH] = "cfi-eh",
		[FRAME_CFI_DEBUG] = "cfi-debug",
		[FRAME_FP] = "fp",
		[FRAME_STITCHED] = "stitched",
		[FRAME_SCAN] = "scan",
		[FRAME_JIT] = "jit",
		[FRAME_STUB] = "stub",
		[FRAME_GOPCLNTAB] = "gopclntab",
	};

	return (unsigned)o < ARRAY_SIZE(names) ? names[o] : "?";
}

const char *end_reason_name(enum end_reason r)
{
	static const char *const names[] = {
		[END_ROOT] = "root",
		[END_WINDOW] = "window exhausted",
		[END_NO_CFI] = "no CFI",
		[END_BAD_RA] = "bad return address",
		[END_BAD_STACK] = "bad stack",
		[END_LOOP] = "loop",
		[END_MAX_DEPTH] = "max depth",
		[END_NO_MODULE] = "module not found",
		[END_NO_USER] = "no user stack",
		[END_CALLCHAIN] = "callchain end",
		[END_NO_COPY] = "stack not copied",
		[END_AMBIGUOUS] = "ambiguous caller",
		[END_STACK_SWITCH] = "stack switch",
		[END_MODULE_LOADING] = "module loading",
	};

	return (unsigned)r < ARRAY_SIZE(names) ? names[r] : "?";
}

const char *rsample_marker(const struct rsample *s)
{
	static const char *const markers[] = {
		[END_WINDOW] = "[truncated: window exhausted]",
		[END_NO_CFI] = "[truncated: no CFI]",
		[END_BAD_RA] = "[truncated: bad return address]",
		[END_BAD_STACK] = "[truncated: bad stack]",
		[END_LOOP] = "[truncated: loop]",
		[END_MAX_DEPTH] = "[truncated: max depth]",
		[END_NO_MODULE] = "[truncated: module not found]",
		[END_CALLCHAIN] = "[truncated: callchain end]",
		[END_NO_COPY] = "[truncated: stack not copied]",
		[END_AMBIGUOUS] = "[truncated: ambiguous caller]",
		[END_STACK_SWITCH] = "[truncated: stack switch]",
		[END_MODULE_LOADING] = "[truncated: module loading]",
	};

	if (s->nr_frames == s->nr_kernel || s->end >= ARRAY_SIZE(markers))
		return NULL;
	return markers[s->end];
}
