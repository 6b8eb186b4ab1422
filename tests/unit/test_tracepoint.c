/*
 * test_tracepoint.c - the tracing data of testdata/perf/tp-multi.data
 * through libtraceevent: event names, decoding a payload, short payloads,
 * and every truncation of the blob failing cleanly (under ASan in
 * make check-asan).
 */
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "formats/perfdata.h"
#include "formats/tracepoint.h"
#include "tests/harness.h"

int main(void)
{
	struct perfdata_reader *r;
	const struct perfdata_info *info;
	struct strbuf sb = STRBUF_INIT;
	struct tracepoint *tp;
	struct event ev;
	struct err err;
	uint8_t *copy;
	uint64_t n, cut, fails = 0;
	int64_t v = 0;
	int rc;

#ifndef HAVE_TRACEEVENT
	SKIP("built without libtraceevent");
	return done_testing();
#endif
	r = perfdata_open("testdata/perf/tp-multi.data", NULL, &err);
	if (!CHECK(r != NULL, "open tp-multi.data"))
		return done_testing();
	info = perfdata_info(r);
	n = info->tracing_data_size;
	CHECK(info->tracing_data && n > 1000, "capture has tracing data (%llu bytes)",
	      (unsigned long long)n);
	tp = tracepoint_new(info->tracing_data, n, &err);
	CHECK(tp != NULL, "tracing data parses (%s)", tp ? "ok" : err.msg);
	CHECK_STR(tracepoint_name(tp, 0x174), "sched:sched_switch",
		  "config 0x174 is sched:sched_switch");
	CHECK(tracepoint_name(tp, 0x7fffffff) == NULL, "unknown id: no name");

	while ((rc = perfdata_next(r, &ev)) > 0)
		if (ev.type == EVENT_SAMPLE && ev.sample.raw)
			break;
	if (CHECK(rc > 0, "a tracepoint sample")) {
		CHECK(tracepoint_format(tp, ev.attr->config, ev.sample.raw,
					ev.sample.raw_size, ev.cpu, &sb) == 0,
		      "decodes");
		CHECK(strstr(strbuf_str(&sb), " prev_comm=\"prog\" prev_pid=8315 ") &&
		      strstr(strbuf_str(&sb), " trace=\"prev_comm=prog prev_pid=8315 "),
		      "fields and print format: %s", strbuf_str(&sb));
		strbuf_reset(&sb);
		tracepoint_format(tp, ev.attr->config, ev.sample.raw, 20, ev.cpu,
				  &sb);
		CHECK(strstr(strbuf_str(&sb), " prev_pid=?") &&
		      strstr(strbuf_str(&sb), " trace=?"),
		      "short payload: fields outside it and the text are '?'");
		CHECK(tracepoint_field(tp, ev.attr->config, ev.sample.raw,
				       ev.sample.raw_size, "prev_pid",
				       &v) == 0 &&
		      v == 8315, "field prev_pid");
		CHECK(tracepoint_field(tp, ev.attr->config, ev.sample.raw,
				       ev.sample.raw_size, "next_pid",
				       &v) == 0 &&
		      v == 8314, "field next_pid");
		CHECK(tracepoint_field(tp, ev.attr->config, ev.sample.raw,
				       ev.sample.raw_size, "prev_state",
				       &v) == 0 &&
		      v == 1, "field prev_state (S is 1)");
		CHECK(tracepoint_field(tp, ev.attr->config, ev.sample.raw,
				       ev.sample.raw_size, "prev_comm", &v) < 0,
		      "a char array is not a number");
		CHECK(tracepoint_field(tp, ev.attr->config, ev.sample.raw,
				       ev.sample.raw_size, "no_such", &v) < 0,
		      "an unknown field");
		CHECK(tracepoint_field(tp, ev.attr->config, ev.sample.raw, 20,
				       "next_pid", &v) < 0,
		      "a field outside a short payload");
		CHECK(tracepoint_field(tp, 0x7fffffff, ev.sample.raw,
				       ev.sample.raw_size, "next_pid", &v) < 0,
		      "an unknown event");
		strbuf_reset(&sb);
		CHECK(tracepoint_format(tp, 0x7fffffff, ev.sample.raw,
					ev.sample.raw_size, 0, &sb) < 0 &&
		      !strcmp(strbuf_str(&sb), " tp=?"), "unknown event");
	}
	tracepoint_free(tp);

	/* Every prefix of the blob, in its own allocation so that ASan sees
	 * any read past it. */
	for (cut = 0; cut < n; cut += 1 + cut / 16) {
		copy = malloc(cut ? cut : 1);
		memcpy(copy, info->tracing_data, cut);
		tp = tracepoint_new(copy, cut, &err);
		if (!tp)
			fails++;
		tracepoint_free(tp);
		free(copy);
	}
	CHECK(fails > 50, "truncated tracing data rejected (%llu prefixes)",
	      (unsigned long long)fails);
	tp = tracepoint_new((const uint8_t *)"\x17\x08\x44tracinX", 10, &err);
	CHECK(!tp && err.code == ERR_FORMAT, "bad magic: %s", err.msg);
	strbuf_release(&sb);
	perfdata_close(r);
	return done_testing();
}
