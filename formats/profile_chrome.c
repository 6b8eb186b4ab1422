/*
 * profile_chrome.c - Chrome Trace Event JSON (chrome://tracing, Perfetto,
 * instrumented runtimes) as a profile input (see profile.h).
 *
 * The document is an array of events, or an object whose "traceEvents"
 * is one (a missing closing bracket, as a trace cut short by its writer
 * leaves it, is fine).  Duration events are used: "B"/"E" pairs and "X"
 * complete events (ts and dur, microseconds), per (pid, tid), nested by
 * time; metadata events "thread_name" and "process_name" name threads.
 * Other events are skipped.  Each thread's events are sorted by time
 * (at one time, ends before begins; of several ends, the latest begun
 * first; of several begins, the last to end first; else file order), then
 * swept: the time between two consecutive events is the self time of the
 * call path open then.  Each call path with self time is one sample
 * whose period and count are that time in nanoseconds; inclusive times
 * are the sums over the paths below, as in folded stacks.  An "E" with
 * nothing open is ignored; what is still open at a thread's last event
 * ends there.
 *
 * The JSON is read by a small scanner of its own: bounded depth (64),
 * strings with their escapes (\uXXXX into UTF-8), numbers by strtod.
 * Memory: 32 bytes per duration event, one node per distinct call path.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/mem.h"
#include "common/strtab.h"
#include "formats/profile_internal.h"

#define CT_MAX_DEPTH 64

/* --- a JSON scanner --------------------------------------------------- */

struct ct_js {
	const char *p, *end, *base;
	struct err *err;
	struct strbuf s;          /* the last string read */
};

static void ct_ws(struct ct_js *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' ||
				 *j->p == '\n' || *j->p == '\r'))
		j->p++;
}

static int ct_bad(struct ct_js *j, const char *what)
{
	return err_set(j->err, j->p < j->end ? ERR_CORRUPT : ERR_TRUNCATED,
		       (uint64_t)(j->p - j->base), "JSON: %s", what);
}

/* Consumes c after blanks: 0, or -1 (error set). */
static int ct_expect(struct ct_js *j, char c, const char *what)
{
	ct_ws(j);
	if (j->p >= j->end || *j->p != c)
		return ct_bad(j, what);
	j->p++;
	return 0;
}

static void ct_utf8(struct strbuf *sb, uint32_t c)
{
	char b[4];
	size_t n;

	if (c < 0x80) {
		b[0] = (char)c;
		n = 1;
	} else if (c < 0x800) {
		b[0] = (char)(0xc0 | c >> 6);
		b[1] = (char)(0x80 | (c & 0x3f));
		n = 2;
	} else if (c < 0x10000) {
		b[0] = (char)(0xe0 | c >> 12);
		b[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		b[2] = (char)(0x80 | (c & 0x3f));
		n = 3;
	} else {
		b[0] = (char)(0xf0 | c >> 18);
		b[1] = (char)(0x80 | ((c >> 12) & 0x3f));
		b[2] = (char)(0x80 | ((c >> 6) & 0x3f));
		b[3] = (char)(0x80 | (c & 0x3f));
		n = 4;
	}
	strbuf_add(sb, b, n);
}

static int ct_hex4(struct ct_js *j, uint32_t *v)
{
	int i;

	*v = 0;
	if (j->end - j->p < 4)
		return ct_bad(j, "\\u escape cut short");
	for (i = 0; i < 4; i++) {
		char c = *j->p++;
		int d = c >= '0' && c <= '9' ? c - '0' :
			c >= 'a' && c <= 'f' ? c - 'a' + 10 :
			c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;

		if (d < 0)
			return ct_bad(j, "bad \\u escape");
		*v = *v << 4 | (uint32_t)d;
	}
	return 0;
}

/* A string into j->s (NUL-terminated; a NUL inside ends it). */
static int ct_string(struct ct_js *j)
{
	strbuf_reset(&j->s);
	strbuf_add(&j->s, "", 0);
	if (ct_expect(j, '"', "a string expected") < 0)
		return -1;
	while (j->p < j->end && *j->p != '"') {
		const char *run = j->p;
		uint32_t c, lo;

		while (j->p < j->end && *j->p != '"' && *j->p != '\\')
			j->p++;
		strbuf_add(&j->s, run, (size_t)(j->p - run));
		if (j->p >= j->end || *j->p == '"')
			break;
		if (++j->p >= j->end)
			break;
		switch (*j->p++) {
		case 'n': strbuf_addch(&j->s, '\n'); break;
		case 't': strbuf_addch(&j->s, '\t'); break;
		case 'r': strbuf_addch(&j->s, '\r'); break;
		case 'b': strbuf_addch(&j->s, '\b'); break;
		case 'f': strbuf_addch(&j->s, '\f'); break;
		case 'u':
			if (ct_hex4(j, &c) < 0)
				return -1;
			if (c >= 0xd800 && c < 0xdc00 && j->end - j->p >= 6 &&
			    j->p[0] == '\\' && j->p[1] == 'u') {
				j->p += 2;
				if (ct_hex4(j, &lo) < 0)
					return -1;
				c = lo >= 0xdc00 && lo < 0xe000 ?
				    0x10000 + ((c - 0xd800) << 10) +
				    (lo - 0xdc00) : 0xfffd;
			} else if (c >= 0xd800 && c < 0xe000) {
				c = 0xfffd;
			}
			ct_utf8(&j->s, c ? c : 0xfffd);
			break;
		default:
			strbuf_addch(&j->s, j->p[-1]);
			break;
		}
	}
	if (j->p >= j->end)
		return ct_bad(j, "string not closed");
	j->p++;
	if (j->s.oom)
		return err_set(j->err, ERR_NOMEM, ERR_NO_OFF, "JSON string");
	return 0;
}

static int ct_number(struct ct_js *j, double *v)
{
	char buf[64], *e;
	size_t n = 0;

	ct_ws(j);
	while (j->p + n < j->end && n < sizeof(buf) - 1 &&
	       strchr("+-0123456789.eE", j->p[n]) && j->p[n])
		n++;
	memcpy(buf, j->p, n);
	buf[n] = 0;
	*v = strtod(buf, &e);
	if (n == 0 || e != buf + n || !isfinite(*v))
		return ct_bad(j, "a number expected");
	j->p += n;
	return 0;
}

/* Skips one value of any kind. */
static int ct_skip(struct ct_js *j)
{
	unsigned depth = 0;

	do {
		ct_ws(j);
		if (j->p >= j->end)
			return ct_bad(j, "value cut short");
		switch (*j->p) {
		case '"':
			if (ct_string(j) < 0)
				return -1;
			break;
		case '{':
		case '[':
			if (++depth > CT_MAX_DEPTH)
				return ct_bad(j, "nested over 64 deep");
			j->p++;
			break;
		case '}':
		case ']':
			if (!depth)
				return ct_bad(j, "unexpected bracket");
			depth--;
			j->p++;
			break;
		case ',':
		case ':':
			if (!depth)
				return ct_bad(j, "unexpected separator");
			j->p++;
			break;
		default:
			if (!strncmp(j->p, "true", MIN(4, (size_t)(j->end - j->p))) &&
			    j->end - j->p >= 4)
				j->p += 4;
			else if (j->end - j->p >= 5 && !strncmp(j->p, "false", 5))
				j->p += 5;
			else if (j->end - j->p >= 4 && !strncmp(j->p, "null", 4))
				j->p += 4;
			else {
				double v;

				if (ct_number(j, &v) < 0)
					return -1;
			}
			break;
		}
	} while (depth);
	return 0;
}

/*
 * The next member of an object after '{' or a value: 1 with its key in
 * j->s, 0 at '}', -1.  first: right after '{'.
 */
static int ct_member(struct ct_js *j, bool *first)
{
	ct_ws(j);
	if (j->p < j->end && *j->p == '}') {
		j->p++;
		return 0;
	}
	if (!*first && ct_expect(j, ',', "',' or '}' expected") < 0)
		return -1;
	*first = false;
	if (ct_string(j) < 0 || ct_expect(j, ':', "':' expected") < 0)
		return -1;
	return 1;
}

/* --- the trace -------------------------------------------------------- */

struct ct_thread {
	int32_t pid, tid;
	uint32_t name;            /* names id, or UINT32_MAX */
};

struct ct_ev {
	uint64_t time, other;     /* ns; an X's end (begin) or its start
				   * (end), for the order at one time */
	uint32_t thread, name, seq;
	uint8_t end, x;
};

/* A call path: its parent node and frame. */
struct ct_node {
	uint32_t parent, name;    /* parent UINT32_MAX: the thread's root */
	uint32_t thread;
	uint64_t self;
};

struct ct_state {
	struct strtab names;
	struct ct_thread *th;
	size_t nr_th, alloc_th;
	struct hashmap th_map;    /* pid << 32 | tid -> index + 1 */
	struct hashmap proc_name; /* pid -> names id + 1 */
	struct ct_ev *ev;
	size_t nr_ev, alloc_ev;
	struct ct_node *node;
	size_t nr_node, alloc_node;
	struct hashmap node_map;  /* (parent, name, thread) -> index + 1 */
	size_t next;              /* profile_next(): the next node */
	struct strbuf comm;
};

static int ct_thread(struct profile *p, int32_t pid, int32_t tid,
		     uint32_t *idx)
{
	struct ct_state *c = p->ct;
	uint64_t key = (uint64_t)(uint32_t)pid << 32 | (uint32_t)tid;
	void *v;

	if (hashmap_get(&c->th_map, key, &v)) {
		*idx = (uint32_t)((uintptr_t)v - 1);
		return 0;
	}
	if (mem_grow(&c->th, &c->alloc_th, sizeof(*c->th), c->nr_th + 1) < 0 ||
	    hashmap_put(&c->th_map, key, (void *)(uintptr_t)(c->nr_th + 1)) < 0)
		return err_set(&p->err, ERR_NOMEM, ERR_NO_OFF, "threads");
	c->th[c->nr_th] = (struct ct_thread){ pid, tid, UINT32_MAX };
	*idx = (uint32_t)c->nr_th++;
	return 0;
}

static int ct_push(struct profile *p, const struct ct_ev *e)
{
	struct ct_state *c = p->ct;

	if (c->nr_ev >= UINT32_MAX ||
	    mem_grow(&c->ev, &c->alloc_ev, sizeof(*c->ev), c->nr_ev + 1) < 0)
		return err_set(&p->err, ERR_NOMEM, ERR_NO_OFF, "trace events");
	c->ev[c->nr_ev] = *e;
	c->ev[c->nr_ev].seq = (uint32_t)c->nr_ev;
	c->nr_ev++;
	return 0;
}

static uint64_t ct_ns(double us)
{
	double ns = us * 1000.0;

	return ns <= 0 ? 0 : ns >= 1.8e19 ? UINT64_MAX : (uint64_t)(ns + 0.5);
}

/* One event object (after its '{'; errors name the '{'). */
static int ct_event(struct profile *p, struct ct_js *j)
{
	struct ct_state *c = p->ct;
	double ts = 0, dur = -1, pid = 0, tid = 0;
	char ph = 0;
	int64_t name = -1, arg_name = -1;
	uint64_t off = (uint64_t)(j->p - j->base) - 1;   /* its '{' */
	bool first = true, has_ts = false;
	struct ct_ev e = { 0 };
	uint32_t th;
	int rc;

	while ((rc = ct_member(j, &first)) > 0) {
		const char *k = j->s.buf;

		if (!strcmp(k, "name")) {
			ct_ws(j);
			if (j->p < j->end && *j->p == '"') {
				if (ct_string(j) < 0)
					return -1;
				name = strtab_add(&c->names, j->s.buf);
				if (name < 0)
					return err_set(&p->err, ERR_NOMEM,
						       ERR_NO_OFF, "names");
				continue;
			}
		} else if (!strcmp(k, "ph")) {
			ct_ws(j);
			if (j->p < j->end && *j->p == '"') {
				if (ct_string(j) < 0)
					return -1;
				ph = j->s.buf[0];
				continue;
			}
		} else if (!strcmp(k, "ts") || !strcmp(k, "dur") ||
			   !strcmp(k, "pid") || !strcmp(k, "tid")) {
			double *v = k[0] == 'd' ? &dur : k[1] == 's' ? &ts :
				    k[0] == 'p' ? &pid : &tid;
			char key = k[1];

			ct_ws(j);
			if (j->p < j->end && *j->p != '"') {
				if (ct_number(j, v) < 0)
					return -1;
				has_ts |= key == 's';
				continue;
			}
		} else if (!strcmp(k, "args")) {
			bool af = true;

			ct_ws(j);
			if (j->p < j->end && *j->p == '{') {
				j->p++;
				while ((rc = ct_member(j, &af)) > 0) {
					ct_ws(j);
					if (!strcmp(j->s.buf, "name") &&
					    j->p < j->end && *j->p == '"') {
						if (ct_string(j) < 0)
							return -1;
						arg_name = strtab_add(&c->names,
								      j->s.buf);
						if (arg_name < 0)
							return err_set(&p->err,
								ERR_NOMEM,
								ERR_NO_OFF,
								"names");
					} else if (ct_skip(j) < 0) {
						return -1;
					}
				}
				if (rc < 0)
					return -1;
				continue;
			}
		}
		if (ct_skip(j) < 0)
			return -1;
	}
	if (rc < 0)
		return -1;
	if (pid < INT32_MIN || pid > INT32_MAX || tid < INT32_MIN ||
	    tid > INT32_MAX)
		pid = tid = 0;
	if (ph == 'M' && name >= 0 && arg_name >= 0) {
		const char *m = strtab_str(&c->names, (uint32_t)name);

		if (!strcmp(m, "thread_name")) {
			if (ct_thread(p, (int32_t)pid, (int32_t)tid, &th) < 0)
				return -1;
			c->th[th].name = (uint32_t)arg_name;
		} else if (!strcmp(m, "process_name") &&
			   hashmap_put(&c->proc_name, (uint32_t)(int32_t)pid,
				       (void *)(uintptr_t)(arg_name + 1)) < 0) {
			return err_set(&p->err, ERR_NOMEM, ERR_NO_OFF, "names");
		}
		return 0;
	}
	if (ph != 'B' && ph != 'E' && ph != 'X')
		return 0;
	if (!has_ts || (ph != 'E' && name < 0) || (ph == 'X' && dur < 0))
		return err_set(&p->err, ERR_FORMAT, off, "duration event "
			       "without %s", !has_ts ? "ts" : name < 0 ?
			       "a name" : "dur");
	if (ct_thread(p, (int32_t)pid, (int32_t)tid, &th) < 0)
		return -1;
	e.thread = th;
	e.name = name < 0 ? 0 : (uint32_t)name;
	e.time = ct_ns(ts);
	if (ph != 'X') {
		e.end = ph == 'E';
		return ct_push(p, &e);
	}
	if (ct_ns(dur) == 0)
		return 0;            /* no time in it */
	e.x = 1;
	e.other = e.time + ct_ns(dur) < e.time ? UINT64_MAX :
		  e.time + ct_ns(dur);
	if (ct_push(p, &e) < 0)
		return -1;
	e.end = 1;
	e.other = e.time;
	e.time = c->ev[c->nr_ev - 1].other;
	return ct_push(p, &e);
}

static int ct_ev_cmp(const void *a, const void *b)
{
	const struct ct_ev *x = a, *y = b;

	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	if (x->end != y->end)
		return x->end ? -1 : 1;
	/* X events: ends, the latest begun first; begins, the last to end
	 * first */
	if (x->x && y->x && x->other != y->other)
		return x->other > y->other ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The node of name under parent (thread's root: UINT32_MAX). */
static int ct_node(struct profile *p, uint32_t parent, uint32_t name,
		   uint32_t thread, uint32_t *idx)
{
	struct ct_state *c = p->ct;
	uint64_t key = hashmap_mix(((uint64_t)parent << 32 | name) ^
				   hashmap_mix(thread));
	struct ct_node *n;
	void *v;
	size_t i;

	/* (collisions: the chain is the node array, checked in order) */
	if (hashmap_get(&c->node_map, key, &v)) {
		for (i = (uintptr_t)v - 1; i < c->nr_node; i++) {
			n = &c->node[i];
			if (n->parent == parent && n->name == name &&
			    n->thread == thread) {
				*idx = (uint32_t)i;
				return 0;
			}
		}
	}
	if (c->nr_node >= UINT32_MAX - 1 ||
	    mem_grow(&c->node, &c->alloc_node, sizeof(*c->node),
		     c->nr_node + 1) < 0)
		return err_set(&p->err, ERR_NOMEM, ERR_NO_OFF, "call paths");
	if (!hashmap_get(&c->node_map, key, &v) &&
	    hashmap_put(&c->node_map, key,
			(void *)(uintptr_t)(c->nr_node + 1)) < 0)
		return err_set(&p->err, ERR_NOMEM, ERR_NO_OFF, "call paths");
	c->node[c->nr_node] = (struct ct_node){ parent, name, thread, 0 };
	*idx = (uint32_t)c->nr_node++;
	return 0;
}

/* The sweep: self time per call path. */
static int ct_sweep(struct profile *p)
{
	struct ct_state *c = p->ct;
	uint32_t *stack = NULL, top = UINT32_MAX;
	size_t depth = 0, alloc = 0, i;
	uint64_t last = 0;
	int rc = 0;

	if (c->nr_ev > 1)
		qsort(c->ev, c->nr_ev, sizeof(*c->ev), ct_ev_cmp);
	for (i = 0; i < c->nr_ev && rc == 0; i++) {
		const struct ct_ev *e = &c->ev[i];

		if (i && e->thread != c->ev[i - 1].thread)
			depth = 0;
		top = depth ? stack[depth - 1] : UINT32_MAX;
		if (depth && e->time > last)
			c->node[top].self += e->time - last;
		last = e->time;
		if (e->end) {
			if (depth)
				depth--;
			continue;
		}
		if (depth >= 100000) {
			rc = err_set(&p->err, ERR_UNSUPPORTED, ERR_NO_OFF,
				     "trace events nested over 100000 deep");
			break;
		}
		if (mem_grow(&stack, &alloc, sizeof(*stack), depth + 1) < 0) {
			rc = err_set(&p->err, ERR_NOMEM, ERR_NO_OFF, "stack");
			break;
		}
		rc = ct_node(p, top, e->name, e->thread, &stack[depth]);
		depth++;
	}
	free(stack);
	return rc;
}

/* The document: an array of events, or an object with traceEvents. */
static int ct_read(struct profile *p, struct ct_js *j)
{
	bool first = true, in_obj = false;
	int rc;

	ct_ws(j);
	if (j->p < j->end && *j->p == '{') {
		j->p++;
		in_obj = true;
		while ((rc = ct_member(j, &first)) > 0) {
			ct_ws(j);
			if (!strcmp(j->s.buf, "traceEvents") &&
			    j->p < j->end && *j->p == '[')
				break;
			if (ct_skip(j) < 0)
				return -1;
		}
		if (rc <= 0)
			return rc < 0 ? -1 : ct_bad(j, "no traceEvents array");
	}
	if (ct_expect(j, '[', "an array of trace events expected") < 0)
		return -1;
	for (first = true;;) {
		ct_ws(j);
		if (j->p >= j->end)
			return 0;   /* a trace cut short: fine */
		if (*j->p == ']') {
			j->p++;
			break;
		}
		if (!first && ct_expect(j, ',', "',' or ']' expected") < 0)
			return -1;
		first = false;
		ct_ws(j);
		if (j->p < j->end && *j->p == ']') {
			j->p++;   /* a trailing comma */
			break;
		}
		if (j->p >= j->end)
			return 0;
		if (*j->p != '{') {
			if (ct_skip(j) < 0)
				return -1;
			continue;
		}
		j->p++;
		if (ct_event(p, j) < 0)
			return -1;
	}
	(void)in_obj;
	return 0;
}

int profile_chrome_open(struct profile *p)
{
	struct ct_state *c = mem_zalloc(1, sizeof(*c));
	struct ct_js j = { p->data, p->data + p->len, p->data, &p->err,
			   STRBUF_INIT };
	int rc;

	if (!c)
		return err_set(&p->err, ERR_NOMEM, ERR_NO_OFF, "trace");
	p->ct = c;
	strtab_init(&c->names);
	rc = ct_read(p, &j);
	strbuf_release(&j.s);
	if (rc == 0)
		rc = ct_sweep(p);
	p->info.type = "wall";
	p->info.unit = "nanoseconds";
	return rc;
}

int profile_chrome_next(struct profile *p)
{
	struct ct_state *c = p->ct;

	while (c->next < c->nr_node) {
		const struct ct_node *n = &c->node[c->next++];
		const struct ct_thread *t = &c->th[n->thread];
		size_t nr = 0;
		uint32_t at;
		void *v;

		if (!n->self)
			continue;
		for (at = (uint32_t)(n - c->node); at != UINT32_MAX;
		     at = c->node[at].parent) {
			const char *name = strtab_str(&c->names,
						      c->node[at].name);
			struct rframe *fr;

			if (profile_frames(p, nr + 1) < 0)
				return -1;
			fr = &p->frames[nr++];
			memset(fr, 0, sizeof(*fr));
			fr->origin = FRAME_CFI_EH;
			fr->loc = profile_named(p, name, strlen(name),
						SYM_USER, false);
			if (!fr->loc)
				return err_set(&p->err, ERR_NOMEM, ERR_NO_OFF,
					       "frames");
		}
		strbuf_reset(&c->comm);
		if (t->name != UINT32_MAX)
			strbuf_addstr(&c->comm, strtab_str(&c->names, t->name));
		else if (hashmap_get(&c->proc_name, (uint32_t)t->pid, &v))
			strbuf_addstr(&c->comm, strtab_str(&c->names,
				      (uint32_t)((uintptr_t)v - 1)));
		else
			strbuf_addf(&c->comm, "%d/%d", t->pid, t->tid);
		if (c->comm.oom)
			return err_set(&p->err, ERR_NOMEM, ERR_NO_OFF, "names");
		p->s = (struct rsample){ .cpu = -1, .period = n->self,
					 .count = n->self, .pid = t->pid,
					 .tid = t->tid, .event = "wall",
					 .comm = c->comm.buf };
		p->s.frames = p->frames;
		p->s.nr_frames = (uint32_t)nr;
		return 1;
	}
	return 0;
}

void profile_chrome_free(struct profile *p)
{
	struct ct_state *c = p->ct;

	if (!c)
		return;
	strtab_release(&c->names);
	free(c->th);
	hashmap_release(&c->th_map);
	hashmap_release(&c->proc_name);
	free(c->ev);
	free(c->node);
	hashmap_release(&c->node_map);
	strbuf_release(&c->comm);
	free(c);
	p->ct = NULL;
}
