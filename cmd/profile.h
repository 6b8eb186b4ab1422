/*
 * profile.h - off-CPU and wall-clock profiles (--profile offcpu|wall, see
 * docs/offcpu.md): the switch-outs of sched:sched_switch samples, each
 * weighted by the nanoseconds until its thread ran again, and for a wall
 * profile the on-CPU samples weighted by their periods.
 *
 * An interval starts at a thread's sched_switch sample (its stack then,
 * its prev_state the reason) and ends at the first of: a sched_switch
 * sample with the thread as next_pid, a PERF_RECORD_SWITCH into it
 * (--switch-events), any sample of the thread, its EXIT; else at the
 * capture's end (marked).  The records are paired in time order on one
 * thread, so the pairing is the same for every -j: in a pass of their
 * own over a named input (profile_prepass()), else as run_capture()
 * reads them (run_opts.on_record, one worker).
 *
 * Use: profile_new(), profile_prepass() unless the input is "-", then
 * run_capture() with profile_sample() as its function, this context,
 * RUN_ORDERED, and (without the prepass) opts->on_record set to
 * profile_record() with this context too; then profile_finish().  The
 * weighted samples go to the function given to profile_new(): off-CPU
 * ones with off_cpu set, event "offcpu", the switch-out's time, a
 * leaf pseudo-frame "[off-cpu: REASON]", counted as a kernel frame;
 * after the prepass in time order, else when their intervals end.
 */
#ifndef RESTACK_CMD_PROFILE_H
#define RESTACK_CMD_PROFILE_H

#include <stdio.h>

#include "cmd/run.h"
#include "common/event.h"
#include "common/stack.h"

struct profile;

/*
 * A profile of kind opts->profile (not RUN_PROFILE_CPU) of the capture
 * run reads, its samples going to fn(ctx, ...); opts (its --event,
 * --quiet) must live as long as the profile.  run is only looked at
 * during run_capture() (for the capture's tracing data).  NULL: out of
 * memory.
 */
struct profile *profile_new(const struct run_opts *opts, struct run *run,
			    run_sample_fn fn, void *ctx);
void profile_free(struct profile *p);

/*
 * For a named input (not "-"): pairs every record of path in a pass of
 * its own, without unwinding, before run_capture(), which may then use
 * any number of workers and no on_record: profile_sample() looks each
 * switch-out up and hands it out at once, in time order.  Returns 0, or
 * -1 after printing the error (as profile_finish()).
 */
int profile_prepass(struct profile *p, const char *path);

/* run_capture()'s function: a resolved sample (its record follows,
 * unless profile_prepass() ran). */
int profile_sample(void *ctx, const struct rsample *s);

/* run_opts.on_record, without profile_prepass(): every record of the
 * pass, in order. */
int profile_record(void *ctx, const struct perfdata_info *in,
		   const struct event *ev, const struct rsample *rs);

/*
 * After run_capture(): without profile_prepass(), ends the intervals
 * still open at the capture's end and hands them out.  Returns 0, or -1
 * after printing the error (the capture lacks what the profile needs,
 * out of memory).
 */
int profile_finish(struct profile *p);

/* Per thread: lifetime, on-CPU and off-CPU time, intervals. */
void profile_print_stats(const struct profile *p, FILE *f);

#endif
