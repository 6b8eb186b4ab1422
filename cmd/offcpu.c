/*
 * offcpu.c - off-CPU and wall-clock profiles (see offcpu.h).
 */
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/offcpu.h"
#include "common/arena.h"
#include "common/base.h"
#include "common/hashmap.h"
#include "common/mem.h"
#include "formats/perfdata.h"
#include "formats/source.h"
#include "formats/tracepoint.h"

/* perf's record types and misc bit for --switch-events */
#define PROFILE_REC_SWITCH 14u
#define PROFILE_REC_SWITCH_CPU_WIDE 15u
#define PROFILE_REC_THROTTLE 5u     /* PERF_RECORD_THROTTLE */
#define PROFILE_MISC_SWITCH_OUT 0x2000u

struct offcpu_thread {
	int32_t pid, tid;
	const char *comm;            /* arena copy */
	uint64_t first, last;        /* lifetime in the capture */
	bool exited;
	uint64_t on_ns, off_ns;      /* on-CPU periods, off-CPU intervals */
	uint64_t intervals, no_stack, at_end;
	/* the open interval: its switch-out */
	bool open;
	char state;
	struct rsample rs;           /* frames: frames + 1 */
	struct rframe *frames;       /* [0]: room for the reason */
	size_t alloc;
};

/* An interval found by offcpu_prepass(), for its switch-out sample. */
struct offcpu_interval {
	uint64_t start, end;
	int32_t tid;
	char state;
	bool at_end;
};

struct offcpu {
	enum run_profile kind;
	const struct run_opts *opts;
	struct run *run;
	const char *path;
	struct source *src;          /* the reader whose records come */
	bool prepass;                /* in offcpu_prepass(): intervals are
				      * noted, not handed out */
	bool prepassed;              /* ... done: samples are looked up */
	struct offcpu_interval *iv; /* sorted by start, tid */
	size_t nr_iv, alloc_iv;
	run_sample_fn fn;
	void *ctx;
	struct arena arena;
	struct hashmap threads;      /* tid -> struct offcpu_thread */
	struct offcpu_thread **order; /* in order of first sight */
	size_t nr, alloc;
	struct rsample last;         /* offcpu_sample()'s, for the record */
	bool have_last;
	struct tracepoint *tp;       /* the capture's, the reader's */
	bool tp_failed;
	uint64_t switches;           /* sched_switch samples */
	uint64_t switch_recs;        /* PERF_RECORD_SWITCH records */
	uint64_t lost;               /* records and samples perf lost */
	uint64_t throttled;          /* times perf stopped sampling for a
				      * while (THROTTLE records) */
	uint64_t undecoded;          /* ... whose fields could not be read */
	uint64_t on_samples;         /* on-CPU samples (wall) */
	const char *on_event;        /* their event */
	uint64_t end;                /* the latest time seen */
	const struct sym_loc *reasons[256][2];
	struct rframe *buf;          /* interval frames handed out */
	size_t alloc_buf;
};

struct offcpu *offcpu_new(const struct run_opts *opts, struct run *run,
			    run_sample_fn fn, void *ctx)
{
	struct offcpu *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->kind = opts->profile;
	p->opts = opts;
	p->run = run;
	p->fn = fn;
	p->ctx = ctx;
	return p;
}

void offcpu_free(struct offcpu *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->nr; i++)
		free(p->order[i]->frames);
	free(p->order);
	free(p->buf);
	free(p->iv);
	hashmap_release(&p->threads);
	arena_release(&p->arena);
	free(p);
}

static struct offcpu_thread *offcpu_thread(struct offcpu *p, int32_t pid,
					     int32_t tid, uint64_t time)
{
	struct offcpu_thread *t;
	void *v;

	if (hashmap_get(&p->threads, (uint64_t)(uint32_t)tid, &v)) {
		t = v;
		/* perf's synthesized records have time 0 */
		if (!t->first)
			t->first = t->last = time;
		return t;
	}
	t = arena_alloc(&p->arena, sizeof(*t));
	if (!t || mem_grow(&p->order, &p->alloc, sizeof(*p->order),
			   p->nr + 1) < 0)
		return NULL;
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->tid = tid;
	t->comm = "";
	t->first = t->last = time;
	if (hashmap_put(&p->threads, (uint64_t)(uint32_t)tid, t) < 0)
		return NULL;
	p->order[p->nr++] = t;
	return t;
}

/* The state letter of sched_switch's prev_state, as the kernel prints it. */
static char offcpu_state_letter(int64_t state)
{
	static const char letters[] = "SDTtXZPI";
	unsigned i;

	for (i = 0; i < 8; i++)
		if (state & (1 << i))
			return letters[i];
	return 'R';
}

static const char *offcpu_state_name(char c)
{
	switch (c) {
	case 'R': return "R preempted";
	case 'S': return "S sleeping";
	case 'D': return "D uninterruptible";
	case 'T': return "T stopped";
	case 't': return "t traced";
	case 'X': return "X dead";
	case 'Z': return "Z zombie";
	case 'P': return "P parked";
	case 'I': return "I idle";
	default: return "? unknown";
	}
}

/* The pseudo-frame's location for state c, at_end: still off at the end. */
static const struct sym_loc *offcpu_reason(struct offcpu *p, char c,
					    bool at_end)
{
	const struct sym_loc **slot = &p->reasons[(unsigned char)c][at_end];
	struct sym_loc *l;
	char name[80];

	if (*slot)
		return *slot;
	snprintf(name, sizeof(name), "[off-cpu: %s%s]", offcpu_state_name(c),
		 at_end ? ", at capture end" : "");
	l = arena_alloc(&p->arena, sizeof(*l) + sizeof(l->e[0]));
	if (!l)
		return NULL;
	memset(l, 0, sizeof(*l) + sizeof(l->e[0]));
	l->kind = SYM_UNKNOWN;
	l->nr = 1;
	l->e[0].name = arena_strdup(&p->arena, name);
	if (!l->e[0].name)
		return NULL;
	*slot = l;
	return l;
}

/* Hands t's open interval out, ended at end. */
static int offcpu_close(struct offcpu *p, struct offcpu_thread *t,
			 uint64_t end, bool at_end)
{
	struct rsample out = t->rs;
	struct rframe *f = t->frames;

	if (!t->open)
		return 0;
	t->open = false;
	if (p->prepass) {
		struct offcpu_interval *iv;

		if (mem_grow(&p->iv, &p->alloc_iv, sizeof(*p->iv),
			     p->nr_iv + 1) < 0)
			return -1;
		iv = &p->iv[p->nr_iv++];
		iv->start = t->rs.time;
		iv->end = MAX(end, t->rs.time);
		iv->tid = t->tid;
		iv->state = t->state;
		iv->at_end = at_end;
		t->off_ns += iv->end - iv->start;
		t->intervals++;
		t->at_end += at_end;
		return 0;
	}
	f[0].pc = 0;
	f[0].origin = FRAME_KERNEL;
	f[0].loc = offcpu_reason(p, t->state, at_end);
	if (!f[0].loc)
		return -1;
	out.frames = f;
	out.nr_frames++;
	out.nr_kernel++;
	out.period = end > out.time ? end - out.time : 0;
	out.off_cpu = true;
	out.event = "offcpu";
	out.comm = t->comm;
	t->off_ns += out.period;
	t->intervals++;
	t->at_end += at_end;
	if (t->rs.nr_frames == t->rs.nr_kernel)
		t->no_stack++;
	return p->fn(p->ctx, &out);
}

static int offcpu_iv_cmp(const void *a, const void *b)
{
	const struct offcpu_interval *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

static bool offcpu_is_switch_sample(const struct rsample *s)
{
	return s->event && !strcmp(s->event, RUN_SCHED_SWITCH);
}

/* After offcpu_prepass(): sample s, weighted, to the writer. */
static int offcpu_emit(struct offcpu *p, const struct rsample *s)
{
	struct offcpu_interval key = { .start = s->time, .tid = s->tid };
	const struct offcpu_interval *iv;
	struct offcpu_thread *t;
	struct rsample out;
	void *v;

	if (!offcpu_is_switch_sample(s))
		return p->kind == RUN_PROFILE_WALL ? p->fn(p->ctx, s) : 0;
	iv = bsearch(&key, p->iv, p->nr_iv, sizeof(*p->iv), offcpu_iv_cmp);
	if (!iv)
		return 0;   /* its fields were not readable */
	if (mem_grow(&p->buf, &p->alloc_buf, sizeof(*p->buf),
		     (size_t)s->nr_frames + 1) < 0)
		return -1;
	p->buf[0].pc = 0;
	p->buf[0].origin = FRAME_KERNEL;
	p->buf[0].loc = offcpu_reason(p, iv->state, iv->at_end);
	if (!p->buf[0].loc)
		return -1;
	memcpy(p->buf + 1, s->frames, s->nr_frames * sizeof(*s->frames));
	out = *s;
	out.frames = p->buf;
	out.nr_frames++;
	out.nr_kernel++;
	out.period = iv->end - iv->start;
	out.off_cpu = true;
	out.event = "offcpu";
	if (s->nr_frames == s->nr_kernel &&
	    hashmap_get(&p->threads, (uint64_t)(uint32_t)s->tid, &v)) {
		t = v;
		t->no_stack++;
	}
	return p->fn(p->ctx, &out);
}

int offcpu_sample(void *ctx, const struct rsample *s)
{
	struct offcpu *p = ctx;

	if (p->prepassed)
		return offcpu_emit(p, s);
	p->last = *s;
	p->have_last = true;
	return 0;
}

static bool offcpu_is_switch(const struct event *ev)
{
	return ev->attr && ev->attr->name &&
	       !strcmp(ev->attr->name, RUN_SCHED_SWITCH);
}

/* sched_switch's prev_state and next_pid; false: not readable. */
static bool offcpu_decode(struct offcpu *p, const struct event *ev,
			   int64_t *state, int64_t *next)
{
	const struct event_sample *s = &ev->sample;
	struct perfdata_reader *r;

	if (!p->tp && !p->tp_failed) {
		struct source *src = p->src ? p->src : p->run->rd;

		r = source_perfdata(src);
		p->tp = r ? perfdata_tracepoints(r, NULL) : NULL;
		p->tp_failed = !p->tp && !(r && source_info(src)->pipe);
	}
	return p->tp &&
	       tracepoint_field(p->tp, ev->attr->config, s->raw, s->raw_size,
				"prev_state", state) == 0 &&
	       tracepoint_field(p->tp, ev->attr->config, s->raw, s->raw_size,
				"next_pid", next) == 0;
}

/* Opens t's interval at switch-out sample rs (NULL: not resolved). */
static int offcpu_open(struct offcpu_thread *t, const struct event *ev,
			const struct rsample *rs, char state)
{
	uint32_t n = rs ? rs->nr_frames : 0;

	if (mem_grow(&t->frames, &t->alloc, sizeof(*t->frames),
		     (size_t)n + 1) < 0)
		return -1;
	if (rs) {
		t->rs = *rs;
		memcpy(t->frames + 1, rs->frames, n * sizeof(*rs->frames));
	} else {
		memset(&t->rs, 0, sizeof(t->rs));
		t->rs.pid = ev->pid;
		t->rs.tid = ev->tid;
		t->rs.time = ev->time;
		t->rs.cpu = ev->cpu;
		t->rs.end = END_NO_USER;
	}
	t->rs.frames = NULL;
	t->state = state;
	t->open = true;
	return 0;
}

static int offcpu_comm(struct offcpu *p, struct offcpu_thread *t,
			const char *comm)
{
	if (!comm || !strcmp(t->comm, comm))
		return 0;
	t->comm = arena_strdup(&p->arena, comm);
	return t->comm ? 0 : -1;
}

static bool offcpu_clock_event(const char *name)
{
	size_t n = name ? strcspn(name, ":") : 0;

	return (n == 9 && !strncmp(name, "cpu-clock", n)) ||
	       (n == 10 && !strncmp(name, "task-clock", n));
}

int offcpu_record(void *ctx, const struct perfdata_info *in UNUSED,
		   const struct event *ev, const struct rsample *rs)
{
	struct offcpu *p = ctx;
	struct offcpu_thread *t = NULL, *n;
	uint64_t time = ev->time, end;
	int64_t state = 0, next = 0;
	bool sw;
	void *v;

	if (rs && p->have_last)
		rs = &p->last;     /* its names as run_capture() gives them */
	p->have_last = false;
	if (ev->type == EVENT_LOST)
		p->lost += ev->lost.lost;
	if (ev->type == EVENT_OTHER && ev->rec_type == PROFILE_REC_THROTTLE)
		p->throttled++;
	if (ev->type == EVENT_EXIT && time == EVENT_NO_TIME)
		time = ev->fork.time;
	if (time == EVENT_NO_TIME || ev->tid <= 0)
		return 0;
	p->end = MAX(p->end, time);
	switch (ev->type) {
	case EVENT_FORK:
		/* a new thread has its parent's name */
		t = offcpu_thread(p, ev->pid, ev->tid, time);
		if (t && hashmap_get(&p->threads,
				     (uint64_t)(uint32_t)ev->fork.ptid, &v))
			t->comm = ((struct offcpu_thread *)v)->comm;
		return t ? 0 : -1;
	case EVENT_COMM:
		t = offcpu_thread(p, ev->pid, ev->tid, time);
		return t && offcpu_comm(p, t, ev->comm.comm) == 0 ? 0 : -1;
	case EVENT_EXIT:
		if (!hashmap_get(&p->threads, (uint64_t)(uint32_t)ev->tid, &v))
			return 0;
		t = v;
		t->last = time;
		t->exited = true;
		return offcpu_close(p, t, time, false);
	case EVENT_OTHER:
		if (ev->rec_type != PROFILE_REC_SWITCH &&
		    ev->rec_type != PROFILE_REC_SWITCH_CPU_WIDE)
			return 0;
		p->switch_recs++;
		if ((ev->misc & PROFILE_MISC_SWITCH_OUT) ||
		    !hashmap_get(&p->threads, (uint64_t)(uint32_t)ev->tid, &v))
			return 0;
		t = v;
		t->last = MAX(t->last, time);
		return offcpu_close(p, t, time, false);
	case EVENT_SAMPLE:
		break;
	default:
		return 0;
	}
	end = time;
	t = offcpu_thread(p, ev->pid, ev->tid, time);
	if (!t || offcpu_comm(p, t, rs ? rs->comm : NULL) < 0)
		return -1;
	t->last = MAX(t->last, time);
	/*
	 * The thread runs: its interval is over.  A clock event's sample
	 * comes a period of running after it was back (at the latest).
	 */
	sw = offcpu_is_switch(ev);
	if (t->open && !sw && offcpu_clock_event(ev->attr ?
						  ev->attr->name : NULL) &&
	    time - t->rs.time > ev->sample.period)
		end = time - ev->sample.period;
	if (offcpu_close(p, t, end, false) < 0)
		return -1;
	if (!sw) {
		/* the on-CPU event: --event, else the first other one */
		const char *name = ev->attr && ev->attr->name ?
				   ev->attr->name : "?";

		if (!p->on_event && (!p->opts->event ||
				     !strcmp(p->opts->event, name))) {
			p->on_event = arena_strdup(&p->arena, name);
			if (!p->on_event)
				return -1;
		}
		if (!p->on_event || strcmp(p->on_event, name))
			return 0;
		p->on_samples++;
		if (offcpu_clock_event(name))
			t->on_ns += ev->sample.period;
		if (p->kind != RUN_PROFILE_WALL || !rs)
			return 0;
		return p->fn(p->ctx, rs);
	}
	p->switches++;
	if (!offcpu_decode(p, ev, &state, &next)) {
		p->undecoded++;
		return 0;
	}
	if (next > 0 && next != ev->tid &&
	    hashmap_get(&p->threads, (uint64_t)next, &v)) {
		n = v;
		n->last = MAX(n->last, time);
		if (offcpu_close(p, n, time, false) < 0)
			return -1;
	}
	return offcpu_open(t, ev, rs, offcpu_state_letter(state));
}

static int offcpu_end(struct offcpu *p)
{
	const char *path = p->path;
	size_t i;

	if (!p->switches) {
		cmd_error("%s: no %s samples, which --profile %s needs: "
			  "record with perf record -e cpu-clock -e %s "
			  "--switch-events --call-graph dwarf", path,
			  RUN_SCHED_SWITCH,
			  p->kind == RUN_PROFILE_WALL ? "wall" : "offcpu",
			  RUN_SCHED_SWITCH);
		return -1;
	}
	if (p->undecoded == p->switches) {
		cmd_error("%s: cannot read the fields of %s samples (no "
			  "tracing data, or restack was built without "
			  "libtraceevent)", path, RUN_SCHED_SWITCH);
		return -1;
	}
	if (p->kind == RUN_PROFILE_WALL && p->on_samples &&
	    !offcpu_clock_event(p->on_event)) {
		cmd_error("%s: --profile wall weighs on-CPU samples by their "
			  "period in nanoseconds, which '%s' does not count: "
			  "record with -e cpu-clock", path, p->on_event);
		return -1;
	}
	if (p->kind == RUN_PROFILE_WALL && !p->on_samples &&
	    !p->opts->quiet)
		cmd_error("warning: %s: no on-CPU samples: the wall-clock "
			  "profile has only off-CPU time (record with -e "
			  "cpu-clock too)", path);
	if (!p->switch_recs && !p->opts->quiet)
		cmd_error("note: %s: no switch records (perf record "
			  "--switch-events): an interval ends at its thread's "
			  "next sample, which may come later than the thread "
			  "ran again", path);
	if (p->lost && !p->opts->quiet)
		cmd_error("warning: %s: perf lost %llu records or samples: "
			  "intervals may be missing or too long (a larger "
			  "perf record -m helps)", path,
			  (unsigned long long)p->lost);
	if (p->throttled && !p->opts->quiet)
		cmd_error("warning: %s: perf throttled sampling %llu times "
			  "(more samples than kernel.perf_event_max_sample_rate "
			  "allows): on-CPU time it did not sample is missing (a "
			  "lower perf record -F helps)", path,
			  (unsigned long long)p->throttled);
	if (p->undecoded && !p->opts->quiet)
		cmd_error("warning: %s: %llu %s samples without readable "
			  "fields left out", path,
			  (unsigned long long)p->undecoded, RUN_SCHED_SWITCH);
	for (i = 0; i < p->nr; i++) {
		struct offcpu_thread *t = p->order[i];

		if (t->open && offcpu_close(p, t, p->end, true) < 0) {
			cmd_error("%s: out of memory", path);
			return -1;
		}
		if (!t->exited)
			t->last = p->end;
	}
	return 0;
}

int offcpu_prepass(struct offcpu *p, const char *path)
{
	struct event ev;
	struct err err;
	int rc;

	p->path = path;
	p->src = source_open(path, &err);
	if (!p->src) {
		cmd_report_err(path, &err);
		return -1;
	}
	p->prepass = true;
	while ((rc = source_next(p->src, &ev)) > 0)
		if (offcpu_record(p, source_info(p->src), &ev, NULL) < 0) {
			cmd_error("%s: out of memory", path);
			rc = -2;
			break;
		}
	if (rc == -1)
		cmd_report_err(path, source_err(p->src));
	if (rc == 0)
		rc = offcpu_end(p);
	p->prepass = false;
	p->tp = NULL;     /* the reader's */
	source_close(p->src);
	p->src = NULL;
	if (rc < 0)
		return -1;
	qsort(p->iv, p->nr_iv, sizeof(*p->iv), offcpu_iv_cmp);
	p->prepassed = true;
	return 0;
}

int offcpu_finish(struct offcpu *p)
{
	if (p->prepassed)
		return 0;
	p->path = p->run->path;
	return offcpu_end(p);
}

void offcpu_print_stats(const struct offcpu *p, FILE *f)
{
	size_t i;

	fprintf(f, "%s profile, per thread (ms):\n",
		p->kind == RUN_PROFILE_WALL ? "wall-clock" : "off-CPU");
	fprintf(f, "  %8s %-16s %10s %10s %10s %9s %8s %6s\n", "tid", "comm",
		"lifetime", "on-CPU", "off-CPU", "intervals", "no stack",
		"at end");
	for (i = 0; i < p->nr; i++) {
		const struct offcpu_thread *t = p->order[i];

		fprintf(f, "  %8d %-16s %10.3f %10.3f %10.3f %9llu %8llu "
			"%6llu\n", t->tid, *t->comm ? t->comm : "?",
			(double)(t->last - t->first) / 1e6,
			(double)t->on_ns / 1e6, (double)t->off_ns / 1e6,
			(unsigned long long)t->intervals,
			(unsigned long long)t->no_stack,
			(unsigned long long)t->at_end);
	}
}
