/*
 * offcpu.h - off-CPU and wall-clock profiles (--profile offcpu|wall, see
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
 * own over a named input (offcpu_prepass()), else as run_capture()
 * reads them (run_opts.on_record, one worker).
 *
 * Use: offcpu_new(), offcpu_prepass() unless the input is "-", then
 * run_capture() with offcpu_sample() as its function, this context,
 * RUN_ORDERED, and (without the prepass) opts->on_record set to
 * offcpu_record() with this context too; then offcpu_finish().  The
 * weighted samples go to the function given to offcpu_new(): off-CPU
 * ones with off_cpu set, event "offcpu", the switch-out's time, a
 * leaf pseudo-frame "[off-cpu: REASON]", counted as a kernel frame;
 * after the prepass in time order, else when their intervals end.
 */
#ifndef RESTACK_CMD_OFFCPU_H
#define RESTACK_CMD_OFFCPU_H

#include <stdio.h>

#include "cmd/run.h"
#include "common/event.h"
#include "common/stack.h"

struct offcpu;

/*
 * A profile of kind opts->profile (not RUN_PROFILE_CPU) of the capture
 * run reads, its samples going to fn(ctx, ...); opts (its --event,
 * --quiet) must live as long as the profile.  run is only looked at
 * during run_capture() (for the capture's tracing data).  NULL: out of
 * memory.
 */
struct offcpu *offcpu_new(const struct run_opts *opts, struct run *run,
			    run_sample_fn fn, void *ctx);
void offcpu_free(struct offcpu *p);

/*
 * For a named input (not "-"): pairs every record of path in a pass of
 * its own, without unwinding, before run_capture(), which may then use
 * any number of workers and no on_record: offcpu_sample() looks each
 * switch-out up and hands it out at once, in time order.  Returns 0, or
 * -1 after printing the error (as offcpu_finish()).
 */
int offcpu_prepass(struct offcpu *p, const char *path);

/* run_capture()'s function: a resolved sample (its record follows,
 * unless offcpu_prepass() ran). */
int offcpu_sample(void *ctx, const struct rsample *s);

/* run_opts.on_record, without offcpu_prepass(): every record of the
 * pass, in order. */
int offcpu_record(void *ctx, const struct perfdata_info *in,
		   const struct event *ev, const struct rsample *rs);

/*
 * After run_capture(): without offcpu_prepass(), ends the intervals
 * still open at the capture's end and hands them out.  Returns 0, or -1
 * after printing the error (the capture lacks what the profile needs,
 * out of memory).
 */
int offcpu_finish(struct offcpu *p);

/* Per thread: lifetime, on-CPU and off-CPU time, intervals. */
void offcpu_print_stats(const struct offcpu *p, FILE *f);

#endif
