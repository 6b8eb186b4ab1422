/*
 * run_auto.c - the workers a conversion of a file takes when -j does not
 * say, on a machine where the default (a worker per core but one) is a
 * single worker: two cores.
 *
 * There a second worker pays only on a large capture of several busy
 * threads: it reads the whole file for itself (unwind/shards.h), so it
 * gains what it takes of the unwinding and loses its reading.  On the
 * bench's large capture (273k samples, two busy threads) two workers took
 * 0.14 s against 0.19 s; on a capture of one busy thread the second one
 * has nothing to take, and on a small one (40k samples) the warmup thread
 * of a first run wants the second core more (0.050 s against 0.044 s).
 * So the first samples of a file of RUN_AUTO_MIN_DATA bytes or more are
 * looked at (about a millisecond: smaller files are not, a look cost the
 * 150 MB capture of 40k samples 5%): two workers when the file should
 * hold RUN_AUTO_MIN_SAMPLES samples or more, and two of its threads each
 * have a fifth or more of the samples looked at.  The output does not
 * depend on the number of workers.
 */
#include <stdlib.h>
#include <unistd.h>

#include "cmd/run_internal.h"
#include "common/base.h"

#define RUN_AUTO_MIN_DATA (256ull << 20)  /* smaller files: not looked at */
#define RUN_AUTO_PEEK 2048u               /* samples looked at */
#define RUN_AUTO_MIN_SAMPLES 100000u
#define RUN_AUTO_BUSY_SHARE 5u            /* 1/5 of the samples */
#define RUN_AUTO_TIDS 64u                 /* threads told apart */

struct run_auto_tid {
	int32_t tid;
	unsigned n;
};

/* Counts a sample of tid in t (nr of them so far); 0, or -1 when full. */
static int run_auto_count(struct run_auto_tid *t, unsigned *nr, int32_t tid)
{
	unsigned i;

	for (i = 0; i < *nr; i++) {
		if (t[i].tid == tid) {
			t[i].n++;
			return 0;
		}
	}
	if (*nr == RUN_AUTO_TIDS)
		return -1;
	t[*nr].tid = tid;
	t[(*nr)++].n = 1;
	return 0;
}

unsigned run_auto_workers(const struct run *run, const struct perfdata_info *in)
{
	struct run_auto_tid t[RUN_AUTO_TIDS];
	unsigned nr = 0, seen = 0, busy = 0, i;
	uint64_t last = in->data_offset;
	struct source *src;
	struct event ev;
	struct err err;

	if (run->opts->jobs || run->opts->trace ||
	    sysconf(_SC_NPROCESSORS_ONLN) != 2 ||
	    in->data_size < RUN_AUTO_MIN_DATA)
		return 0;
	src = source_open(run->path, &err);
	if (!src)
		return 0;   /* the run's own reader says why, if it matters */
	while (seen < RUN_AUTO_PEEK && source_next(src, &ev) > 0) {
		if (ev.type != EVENT_SAMPLE)
			continue;
		if (run_auto_count(t, &nr, ev.tid) < 0)
			break;
		seen++;
		last = MAX(last, ev.file_off);
	}
	source_close(src);
	if (seen < RUN_AUTO_PEEK || last <= in->data_offset)
		return 0;
	/* the samples the file holds, at the bytes per sample seen */
	if ((double)in->data_size * seen / (double)(last - in->data_offset) <
	    RUN_AUTO_MIN_SAMPLES)
		return 0;
	for (i = 0; i < nr; i++)
		busy += t[i].n * RUN_AUTO_BUSY_SHARE >= seen;
	return busy >= 2 ? 2 : 0;
}
