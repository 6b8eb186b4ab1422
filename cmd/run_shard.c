/*
 * run_shard.c - a capture file converted on several threads: each worker
 * reads the whole file through a sample filter that keeps its share of
 * the threads' samples, resolves them with a resolver of its own, and
 * unwind/shards.c merges the results in input order (see shards.h for
 * why this, and not the pool, serves files).
 *
 * The filter decides alike in every worker, since each sees the same
 * samples in the same order: the event to use (as run.c chooses it) and,
 * for each thread on its first sample, the worker that has been given the
 * fewest threads so far.  Samples of other events go to worker 0, which
 * counts them.
 *
 * The workers' readers share the file's mapped windows (run->windows,
 * perfdata_windows.c): the kernel fills the page tables of each window
 * once, not once per worker.
 *
 * When the output only sums samples (run_opts.sinks, unordered passes),
 * nothing is merged: each worker adds its results to a sink of its own,
 * worker 0 to the caller's, and the sinks are joined at the end.  Then
 * nothing holds a worker back but its pace: one that reads more than
 * RUN_SHARD_LEAD bytes ahead of the slowest waits, so that the windows it
 * leaves behind are still mapped when the others get there.  And, as no
 * order is merged, the filter may judge the samples as they are read
 * (SAMPLE_FILTER_READ): the others' samples then skip the reader's
 * ordering queue, which is most of what a worker does with them.  Only a
 * thread that has no worker yet has its samples kept as read and judged
 * when delivered (SAMPLE_ASK_AGAIN), so threads are given out in time
 * order all the same.  In file order they would not be: perf writes each
 * CPU's buffer in turn, and a busy thread's samples can come before the
 * main thread's first, which sent both busy threads of the bench's large
 * capture to one worker.  A PRESCAN emits nothing either, and judges as a
 * summing pass does (--to perf -j2 on the large capture: 3% less time),
 * and keeps the same pace: unpaced, the workers of --to perf -j2 drifted
 * apart in it and mapped the large capture's windows 731 times in one
 * run of three, against 482 (241 a pass).
 *
 * Writers that take every record (run_opts.on_record: perf.data, sysprof)
 * get them from the merger too, on whichever thread emits: each worker
 * puts the record of every sample it was given with the sample (resolved
 * or not), copied without its stack (event_copy.h), and worker 0 the
 * records that are not samples.  A third reader of every record, as
 * before, cost the large capture's --to perf -j2 a tenth of its work.
 * Such a run has a prescan (run.c), after which each worker notes the
 * build-ids its modules have (struct run_bid): the merger emits nothing
 * until every worker is in its output pass, so the writers see the same
 * build-ids whatever the workers' pace.
 */
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd/cmd.h"
#include "cmd/run_internal.h"
#include "common/mem.h"
#include "formats/event_copy.h"
#include "unwind/shards.h"

/* kept samples not yet resolved: the one delivered and the next */
#define RUN_SHARD_PENDING 4

/*
 * How far (in file bytes) a summing worker may read ahead of the slowest:
 * perfdata_windows.c keeps 4 windows of 4 MiB that every reader is still
 * to take; beyond, the slower ones would map them again.  Checked every
 * RUN_SHARD_PACE_EVERY events.
 */
#define RUN_SHARD_LEAD (8u << 20)
#define RUN_SHARD_PACE_EVERY 256

/* A module's build-id as a worker knew it after its prescan. */
struct run_bid {
	char *path;
	uint8_t bid[20];
	uint8_t size;
};

struct run_worker {
	struct run_shard *rs;
	unsigned index;
	struct resolve *res;            /* run->res for worker 0 */
	struct resolve own;
	bool own_ready;
	struct source *src[2];          /* open until the end: the results
					 * point at their event names */
	unsigned nr_src;
	const struct perfdata_info *info;
	void *sink;                     /* summing, workers 1..: its own */
	unsigned pace_tick;

	/* the filter's decisions, the same in every worker */
	int chosen;                     /* the event used, -1 until known */
	struct shards_split split;      /* which worker takes a thread */

	/* what shards_progress() may say */
	bool emitting;                  /* in an output pass */
	uint64_t pending[RUN_SHARD_PENDING]; /* orders of kept samples not
					      * yet resolved */
	unsigned nr_pending;
	bool untracked;                 /* pending overflowed: say nothing */
	uint64_t seen;                  /* records below this order were
					 * delivered or dropped */
	uint64_t drops_from, drops_to;  /* samples [from, to) were dropped,
					 * past seen (run_shard_dropped()) */

	struct run_bid *bids;           /* with on_record, after the
					 * prescan (see the top) */
	size_t nr_bids;

	uint64_t wanted;                /* samples of the event, this pass */
	uint64_t other_event_samples;
	uint64_t filtered;              /* samples of the event the run's
					 * filter dropped (main pass) */
	struct sfilter_names names;     /* for the run's filter, this pass */
	size_t deferred;                /* by the FIRST pass */
	struct source *first_src;       /* the FIRST pass's reader */
	bool retry_by_order;            /* a RETRY pass whose reader gives
					 * the deferred samples alone */
	bool retry_visits;              /* ... reading nothing else
					 * (run_retry_visits()) */
	struct err err;
	bool read_failed;               /* err says why */
	bool oom;
};

struct run_shard {
	struct run *run;
	struct shards *sh;
	struct run_worker *w;
	unsigned nr;
	bool ordered;
	bool summing;                   /* results go to the sinks */
	_Atomic uint64_t *at;           /* where each worker reads in a
					 * paced pass (summing, or a
					 * prescan); UINT64_MAX when it is
					 * not in one */
	bool records;                   /* run_opts.on_record takes every
					 * record from the merger */
	unsigned copy_flags;            /* event_copy()'s, for them */
	bool record_said;               /* on_record failed, and said why */
};

/* Whether samples of event attr may be the ones used. */
static bool run_shard_event_ok(const struct run_worker *w, unsigned attr)
{
	return run_event_named(w->rs->run->opts,
			       attr < w->info->nr_attrs ?
				       w->info->attrs[attr].name : NULL);
}

/* run_profile_wants() for event attr. */
static int run_shard_profile(const struct run_worker *w, unsigned attr)
{
	return run_profile_wants(w->rs->run->opts,
				 attr < w->info->nr_attrs ?
					 w->info->attrs[attr].name : NULL);
}

/*
 * When the filter of a worker summing, or in a PRESCAN (neither merges
 * results in order), may judge samples: as they are read when
 * the event used cannot depend on which sample comes first (which differs
 * between file and time order), that is when only one event that may be
 * used samples at all (a dummy event samples nothing); else in delivery
 * order, as run.c chooses the event.
 */
static enum sample_filter_when run_shard_when(const struct run_worker *w,
					      enum resolve_pass pass)
{
	const struct perfdata_info *info = w->info;
	unsigned i, n = 0;

	if (!w->rs->summing && pass != RESOLVE_PRESCAN)
		return SAMPLE_FILTER_DELIVERED;
	for (i = 0; i < info->nr_attrs; i++)
		if (!event_attr_is_dummy(&info->attrs[i]))
			n += run_shard_event_ok(w, i);
	return n == 1 ? SAMPLE_FILTER_READ : SAMPLE_FILTER_DELIVERED;
}

/* Tells the merger how far this worker has come in its output pass. */
static void run_shard_progress(struct run_worker *w)
{
	if (w->emitting && !w->untracked)
		shards_progress(w->rs->sh, w->index,
				w->nr_pending ? w->pending[0] : w->seen);
}

/* Moves w->seen over the drops that follow it. */
static void run_shard_join_drops(struct run_worker *w)
{
	if (w->drops_from <= w->seen && w->seen < w->drops_to)
		w->seen = w->drops_to;
}

/*
 * The reader dropped the sample of order, for another worker.  Whatever
 * comes before it may not be done: a reader drops the samples right
 * behind the record it hands out before handing it out (perfdata_next()),
 * and that record may be a result (a record for a writer of records, a
 * sample kept) still to be put.  So w->seen moves past the sample only
 * when it is next; else the sample extends the run of drops past seen,
 * or starts one, and seen takes the run in when it gets there.
 */
static void run_shard_dropped(struct run_worker *w, uint64_t order)
{
	if (order == w->seen) {
		w->seen = order + 1;
	} else if (order > w->seen) {
		if (order != w->drops_to)
			w->drops_from = order;
		w->drops_to = order + 1;
	}
	run_shard_join_drops(w);
}

static enum sample_verdict run_shard_filter(void *ctx,
					    const struct sample_key *k)
{
	struct run_worker *w = ctx;
	int pw = run_shard_profile(w, k->attr);
	unsigned pick = 0;
	bool keep;

	if (!pw && w->chosen < 0 && run_shard_event_ok(w, k->attr))
		w->chosen = (int)k->attr;
	if (w->retry_visits)
		return SAMPLE_KEEP;  /* the FIRST pass's deferred, alone */
	if (w->retry_by_order)
		/* what the FIRST pass deferred, by its delivery order */
		keep = resolve_deferred_at(w->res, k->order);
	else if (pw < 0 || (!pw && (int)k->attr != w->chosen))
		keep = w->index == 0;
	else if (k->as_read && !shards_split_find(&w->split, k->tid, &pick))
		return SAMPLE_ASK_AGAIN;        /* given out in time order */
	else if (!k->as_read &&
		 (pick = shards_split_pick(&w->split, k->tid)) == UINT_MAX)
		w->oom = keep = true;   /* the run fails: workers may disagree */
	else
		keep = pick == w->index;
	if (!w->emitting)
		return keep ? SAMPLE_KEEP : SAMPLE_DROP;
	if (keep) {
		if (w->nr_pending < RUN_SHARD_PENDING)
			w->pending[w->nr_pending++] = k->order;
		else
			w->untracked = true;
		return SAMPLE_KEEP;
	}
	run_shard_dropped(w, k->order);
	run_shard_progress(w);
	return SAMPLE_DROP;
}

/* The worker is done with ev. */
static void run_shard_done(struct run_worker *w, const struct event *ev)
{
	unsigned n = 0;

	if (w->retry_visits) {
		/* event.order counts what was read: the progress is the
		 * next deferred sample's place in the FIRST pass */
		if (w->emitting)
			shards_progress(w->rs->sh, w->index,
					resolve_next_retry_order(w->res));
		return;
	}

	while (n < w->nr_pending && w->pending[n] <= ev->order)
		n++;
	if (n) {
		memmove(w->pending, w->pending + n,
			(w->nr_pending - n) * sizeof(*w->pending));
		w->nr_pending -= n;
	}
	if (ev->order >= w->seen)
		w->seen = ev->order + 1;
	run_shard_join_drops(w);
	run_shard_progress(w);
}

/*
 * A worker in a paced pass (summing, or a prescan) says it reads at file
 * offset at, and waits while that is more than RUN_SHARD_LEAD ahead of
 * the slowest worker still in one.  The slowest never waits, so all get
 * to the end.
 */
static void run_shard_pace(struct run_worker *w, uint64_t at)
{
	struct run_shard *rs = w->rs;
	const struct timespec nap = { 0, 50000 };
	unsigned i;

	atomic_store_explicit(&rs->at[w->index], at, memory_order_relaxed);
	while (at != UINT64_MAX && !shards_stopping(rs->sh)) {
		uint64_t slowest = UINT64_MAX;

		for (i = 0; i < rs->nr; i++)
			if (i != w->index)
				slowest = MIN(slowest,
					      atomic_load_explicit(
						      &rs->at[i],
						      memory_order_relaxed));
		if (slowest == UINT64_MAX || at <= slowest + RUN_SHARD_LEAD)
			return;
		nanosleep(&nap, NULL);
	}
}

/*
 * Notes the build-ids of w's modules (for run_shard_build_id()), in the
 * order the module cache lists them.  0, or -1 when out of memory.
 */
static int run_shard_note_bids(struct run_worker *w)
{
	const struct module *m;
	size_t n = 0;

	for (m = w->res->mc->all; m; m = m->next)
		n += m->build_id_size > 0;
	w->bids = mem_zalloc(n ? n : 1, sizeof(*w->bids));
	if (!w->bids)
		return -1;
	for (m = w->res->mc->all; m && w->nr_bids < n; m = m->next) {
		struct run_bid *b = &w->bids[w->nr_bids];

		if (!m->build_id_size)
			continue;
		b->path = mem_strdup(m->path);
		if (!b->path)
			return -1;
		memcpy(b->bid, m->build_id, m->build_id_size);
		b->size = m->build_id_size;
		w->nr_bids++;
	}
	return 0;
}

unsigned run_shard_build_id(const struct run_shard *rs, const char *path,
			    uint8_t bid[20])
{
	unsigned i;
	size_t k;

	for (i = 0; i < rs->nr; i++) {
		const struct run_worker *w = &rs->w[i];

		for (k = 0; k < w->nr_bids; k++) {
			if (!strcmp(w->bids[k].path, path)) {
				memcpy(bid, w->bids[k].bid, w->bids[k].size);
				return w->bids[k].size;
			}
		}
	}
	return 0;
}

/*
 * The merger's output (shards_emit_fn): the caller's function gets the
 * sample, and a writer of records the record with its sample.
 */
static int run_shard_emit(void *ctx, uint64_t order UNUSED,
			  const struct rsample *s, const struct event *ev)
{
	struct run_shard *rs = ctx;
	const struct run_opts *o = rs->run->opts;

	if (s && run_emit(rs->run, s) < 0)
		return -1;
	if (ev && o->on_record(o->record_ctx, source_info(rs->run->rd), ev,
			       s) < 0) {
		rs->record_said = true;
		return -1;
	}
	return 0;
}

/*
 * Hands a result of an output pass on: to the merger (with its record ev
 * for a writer of records), or to a sink.
 */
static int run_shard_output(struct run_worker *w, const struct event *ev,
			    const struct rsample *out)
{
	struct run_shard *rs = w->rs;

	if (!rs->summing)
		return shards_put(rs->sh, w->index, out->order, out,
				  rs->records ? ev : NULL, rs->copy_flags);
	if (w->index == 0)
		return run_emit(rs->run, out);
	return rs->run->opts->sinks->add(w->sink, out);
}

/*
 * One pass over the file for worker w; emit: an output pass, whose results
 * go to the merger (or the sinks); stop_after: the pass ends after this
 * many samples of the event (0: at the end).  Returns 0 or -1.
 */
static int run_shard_pass(struct run_worker *w, enum resolve_pass pass,
			  bool emit, uint64_t stop_after)
{
	struct run_shard *rs = w->rs;
	struct run *run = rs->run;
	bool main_pass = pass == RESOLVE_FINAL || pass == RESOLVE_FIRST ||
			 pass == RESOLVE_SINGLE;
	struct source *src;
	struct rsample out;
	struct event ev;
	enum sample_filter_when when;
	/* worker 0 alone reads run->events_given */
	run_event_fn on_event = w->index == 0 && emit && !run->events_given ?
				run->opts->on_event : NULL;
	int rc;

	if (w->index == 0 && main_pass) {
		src = run->rd;
	} else {
		src = source_open(run->path, &w->err);
		if (!src) {
			w->read_failed = true;
			return -1;
		}
		w->src[w->nr_src++] = src;
	}
	w->info = source_info(src);
	if (w->index == 0)
		run->pass_no++;         /* the progress line says which */
	w->emitting = emit && !rs->summing;
	resolve_begin_pass(w->res, pass);
	/*
	 * The reader skips the other samples undecoded, when the FIRST pass
	 * numbered samples in delivery order as this one will (a filter
	 * judging samples as they are read numbers them otherwise, and
	 * differently from run to run: when a thread is given out depends on
	 * the other workers).
	 */
	when = run_shard_when(w, pass);
	if (pass == RESOLVE_FIRST && !run->opts->on_record &&
	    source_perfdata(src)) {
		/* for the RETRY pass (run_retry_visits()) */
		perfdata_index_records(source_perfdata(src));
		w->first_src = src;
	}
	w->retry_visits = pass == RESOLVE_RETRY && w->first_src &&
			  run_retry_visits(w->first_src, src, w->res);
	/*
	 * A reader that visits a few records (the RETRY pass's) maps its
	 * own windows, each page as it is read: a shared window has all of
	 * its page tables filled, which for a few records a window cost the
	 * worker 0 of a Firefox -j2 conversion of the bench's large capture
	 * a tenth of its time.
	 */
	if (run->windows && source_perfdata(src) && !w->retry_visits)
		perfdata_share_windows(source_perfdata(src), run->windows);
	w->retry_by_order = !w->retry_visits && pass == RESOLVE_RETRY &&
			    source_perfdata(src) &&
			    when == SAMPLE_FILTER_DELIVERED;
	if (w->retry_by_order)
		resolve_retry_by_order(w->res);
	if (w->retry_by_order || w->retry_visits)
		stop_after = resolve_nr_deferred(w->res);
	source_set_sample_filter(src, run_shard_filter, w, when);
	w->nr_pending = 0;
	w->untracked = false;
	w->seen = w->drops_from = w->drops_to = 0;
	w->wanted = 0;
	sfilter_names_release(&w->names);
	while ((rc = source_next(src, &ev)) > 0) {
		bool resolve = run_resolves(&ev);
		/* for a writer of records: each sample's worker, and
		 * worker 0 the rest */
		bool write = emit && rs->records &&
			     (ev.type == EVENT_SAMPLE || w->index == 0);

		if (shards_stopping(rs->sh) || w->oom)
			return -1;
		if (run->filtering &&
		    sfilter_names_event(&w->names, &ev) < 0) {
			w->oom = true;
			return -1;
		}
		if (w->index == 0)
			run_progress(run, &ev, false);
		if (on_event && ev.type != EVENT_SAMPLE &&
		    on_event(run->opts->event_ctx, &ev) < 0) {
			w->oom = true;
			return -1;
		}
		if (resolve && ev.type == EVENT_SAMPLE) {
			unsigned idx = ev.attr ? ev.attr->index : 0;
			int pw = run_shard_profile(w, idx);
			bool want, kept;

			if (!pw && w->chosen < 0 && run_shard_event_ok(w, idx))
				w->chosen = (int)idx;
			want = pw > 0 || (!pw && (int)idx == w->chosen);
			/* as run.c: a sample the filter drops is neither
			 * unwound nor written, of any event */
			kept = !run->filtering ||
			       sfilter_keep(&run->filter, &w->names, ev.pid,
					    ev.tid, ev.time);
			write = write && kept;
			if (want && !kept) {
				resolve = false;
				w->filtered += main_pass;
			} else if (want) {
				w->wanted++;
			} else {
				resolve = false;
				/* counted in one pass only */
				w->other_event_samples += main_pass;
			}
		}
		if (resolve) {
			rc = resolve_event(w->res, &ev, &out);
			if (rc < 0) {
				w->oom = true;
				return -1;
			}
			if (rc > 0 && emit) {
				if (run_shard_output(w, &ev, &out) < 0)
					return -1;
				write = false;          /* it went along */
			}
		}
		if (write && shards_put(rs->sh, w->index, ev.order, NULL, &ev,
					rs->copy_flags) < 0)
			return -1;
		run_shard_done(w, &ev);
		if (((rs->summing && main_pass) || pass == RESOLVE_PRESCAN) &&
		    ++w->pace_tick % RUN_SHARD_PACE_EVERY == 0)
			run_shard_pace(w, ev.file_off);
		if (stop_after && w->wanted == stop_after) {
			rc = 0;
			break;
		}
	}
	if (w->index == 0)
		run_progress(run, NULL, true);
	if (pass == RESOLVE_PRESCAN)
		run_shard_pace(w, UINT64_MAX);   /* nobody waits for it now */
	if (rc < 0) {
		w->err = *source_err(src);
		w->read_failed = true;
		return -1;
	}
	if (on_event)
		run->events_given = true;
	if (pass == RESOLVE_RETRY && resolve_nr_unretried(w->res)) {
		run_retry_missed(&w->err, w->res);
		w->read_failed = true;
		return -1;
	}
	if (pass == RESOLVE_PRESCAN && w->nr_src) {
		/* nothing points into it */
		source_close(w->src[--w->nr_src]);
	}
	if (pass == RESOLVE_PRESCAN && rs->records &&
	    run_shard_note_bids(w) < 0) {
		w->oom = true;
		return -1;
	}
	return 0;
}

/* Everything worker index does (shards_work_fn). */
static int run_shard_work(void *ctx, unsigned index)
{
	struct run_shard *rs = ctx;
	struct run_worker *w = &rs->w[index];
	int rc;

	if (rs->ordered) {
		if (run_shard_pass(w, RESOLVE_PRESCAN, false, 0) < 0 ||
		    run_shard_pass(w, RESOLVE_FINAL, true, 0) < 0 ||
		    shards_end_pass(rs->sh, index) < 0)
			return -1;
		return shards_end_pass(rs->sh, index);
	}
	rc = run_shard_pass(w, rs->run->first_pass, true, 0);
	if (rs->summing)
		run_shard_pace(w, UINT64_MAX);   /* nobody waits for it now */
	if (rc < 0 || shards_end_pass(rs->sh, index) < 0)
		return -1;
	if (rs->run->first_pass == RESOLVE_FIRST)
		w->deferred = resolve_nr_deferred(w->res);
	if (w->deferred &&
	    run_shard_pass(w, RESOLVE_RETRY, true,
			   resolve_last_deferred(w->res)) < 0)
		return -1;
	return shards_end_pass(rs->sh, index);
}

/* Reports why the run failed: the first worker's own failure. */
static void run_shard_report(struct run_shard *rs, bool thread_failed)
{
	unsigned i;

	for (i = 0; i < rs->nr; i++) {
		struct run_worker *w = &rs->w[i];

		if (w->read_failed) {
			cmd_report_err(rs->run->path, &w->err);
			return;
		}
		if (w->oom)
			break;
	}
	if (rs->record_said)
		return;
	if (thread_failed && i == rs->nr)
		cmd_error("%s: cannot start a worker thread", rs->run->path);
	else
		cmd_error("%s: out of memory", rs->run->path);
}

/*
 * Releases the workers; adds their counts into run->res and, when ok,
 * their sinks into the caller's.
 */
static int run_shard_finish(struct run_shard *rs, bool ok)
{
	struct run *run = rs->run;
	const struct run_sinks *sinks = run->opts->sinks;
	int rc = 0;
	unsigned i, k;

	for (i = 0; i < rs->nr; i++) {
		struct run_worker *w = &rs->w[i];

		if (w->sink && !ok)
			sinks->drop(w->sink);
		else if (w->sink && sinks->join(run_sinks_ctx(run), w->sink) < 0)
			rc = -1;

		run->worker_samples[i] = w->res->stats.samples;
		run->retried += w->deferred;
		run->other_event_samples += w->other_event_samples;
		run->filtered += w->filtered;
		sfilter_names_release(&w->names);
		if (i > 0 && w->own_ready) {
			if (resolve_add_counts(&run->res, &w->own) < 0)
				rc = -1;
			resolve_release(&w->own);
		}
		for (k = 0; k < w->nr_src; k++)
			source_close(w->src[k]);
		shards_split_release(&w->split);
		for (k = 0; k < w->nr_bids; k++)
			free(w->bids[k].path);
		free(w->bids);
	}
	run->shard = NULL;
	run->event_attr = rs->w[0].chosen;
	run->passes = rs->ordered || run->retried ? 2 : 1;
	shards_free(rs->sh);
	free(rs->w);
	free((void *)rs->at);
	return rc;
}

int run_capture_sharded(struct run *run, bool ordered)
{
	const struct run_sinks *sinks = run->opts->sinks;
	/* (a run with a writer of records is ordered: run_workers()) */
	struct run_shard rs = { .run = run, .ordered = ordered,
				.summing = sinks && !ordered &&
					   (!sinks->names ||
					    run->opts->no_inline),
				.records = run->opts->on_record != NULL,
				.copy_flags = source_perfdata(run->rd) ?
						      EVENT_COPY_NO_STACK :
						      0 };
	bool thread_failed;
	struct err err;
	unsigned i;
	int rc;

	run->sharded = true;
	if (run_init_resolver(run, source_info(run->rd)) < 0)
		return -1;
	rs.nr = run->jobs;
	rs.w = mem_zalloc(rs.nr, sizeof(*rs.w));
	rs.at = mem_zalloc(rs.nr, sizeof(*rs.at));   /* all at 0 */
	rs.sh = shards_new(rs.nr, run_shard_emit, &rs);
	run->windows = perfdata_windows_new(rs.nr);
	if (!rs.w || !rs.at || !rs.sh || !run->windows) {
		shards_free(rs.sh);
		free(rs.w);
		free((void *)rs.at);
		cmd_error("%s: out of memory", run->path);
		return -1;
	}
	run->shard = &rs;
	for (i = 0; i < rs.nr; i++) {
		struct run_worker *w = &rs.w[i];

		w->rs = &rs;
		w->index = i;
		w->chosen = -1;
		shards_split_init(&w->split, rs.nr);
		w->res = &run->res;
		if (i == 0)
			continue;
		w->own_ready = true;   /* released even when half set up */
		w->res = &w->own;
		if (run_setup_resolver(run, i, &w->own, &err) < 0) {
			cmd_report_err(run->path, &err);
			run_shard_finish(&rs, false);
			return -1;
		}
		if (rs.summing &&
		    !(w->sink = run->opts->sinks->fork(run_sinks_ctx(run)))) {
			cmd_error("%s: out of memory", run->path);
			run_shard_finish(&rs, false);
			return -1;
		}
	}
	rc = shards_run(rs.sh, run_shard_work, &rs, &thread_failed);
	if (rc < 0)
		run_shard_report(&rs, thread_failed);
	if (run_shard_finish(&rs, rc == 0) < 0 && rc == 0) {
		cmd_error("%s: out of memory", run->path);
		rc = -1;
	}
	return rc;
}
