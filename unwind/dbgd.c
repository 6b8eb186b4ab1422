/*
 * dbgd.c - debuginfod lookups in helper processes, before unwinding (see
 * dbgd.h for why processes and not threads).
 *
 * The parent queues one job per (build-id, kind), forks up to opts->jobs
 * helpers and hands each an idle job over its request pipe; a helper
 * answers on its own response pipe with PROGRESS messages (bytes so far)
 * and one DONE message (result code, cache path).  A helper that shows no
 * progress for the timeout plus a grace period is killed and its job
 * fails as timed out, so a stalled server cannot hold the run.  When an
 * executable arrives that lacks symbols or DWARF and the want says so,
 * its debuginfo is queued next.
 *
 * Downloads are bounded by a size limit: the helper sets
 * DEBUGINFOD_MAXSIZE, with which the client refuses an answer whose
 * Content-Length is over it before reading it, and cancels from the
 * progress callback a download without a Content-Length once it passes
 * the limit (the client then returns "not found" and leaves a negative
 * entry, which is removed like any other); a file that arrives larger
 * anyway (file:// URLs) is removed and refused.  A file that arrives is
 * checked for the ELF magic before anything else opens it.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <elfutils/debuginfod.h>

#include "unwind/dbgd.h"

#include "common/base.h"
#include "common/dynlib.h"
#include "common/mem.h"
#include "unwind/locate.h"
#include "unwind/module.h"

/*
 * libdebuginfod, opened in the helper processes only (common/dynlib.h):
 * restack itself never maps it, nor the TLS and HTTP libraries behind it.
 */
static struct {
	__typeof__(debuginfod_begin) *begin;
	__typeof__(debuginfod_end) *end;
	__typeof__(debuginfod_find_executable) *find_executable;
	__typeof__(debuginfod_find_debuginfo) *find_debuginfo;
	__typeof__(debuginfod_get_headers) *get_headers;
	__typeof__(debuginfod_get_user_data) *get_user_data;
	__typeof__(debuginfod_set_user_data) *set_user_data;
	__typeof__(debuginfod_set_progressfn) *set_progressfn;
} dbgd_api;

#define DBGD_SYM(f) DYNLIB_SYM(__typeof__(dbgd_api), f, "debuginfod_" #f)

static int dbgd_load_api(struct err *err)
{
	static const struct dynlib_sym syms[] = {
		DBGD_SYM(begin), DBGD_SYM(end), DBGD_SYM(find_executable),
		DBGD_SYM(find_debuginfo), DBGD_SYM(get_headers),
		DBGD_SYM(get_user_data), DBGD_SYM(set_user_data),
		DBGD_SYM(set_progressfn),
	};

	return dynlib_load("libdebuginfod.so.1", &dbgd_api, syms,
			   ARRAY_SIZE(syms), err);
}

#define DBGD_DEFAULT_JOBS 4
#define DBGD_MAX_JOBS 32
#define DBGD_DEFAULT_TIMEOUT 30
#define DBGD_GRACE_S 5           /* on top of the client's own timeout */

enum dbgd_state {
	DBGD_QUEUED,
	DBGD_RUNNING,
	DBGD_DONE,
};

struct dbgd_job {
	uint8_t bid[20];
	uint8_t size;
	enum dbgd_kind kind;
	enum dbgd_need debug_then;  /* executable jobs: the debuginfo want */
	enum dbgd_state state;
	int rc;                     /* 0 or a negative errno */
	bool downloaded;
	uint64_t bytes;
	char *path;                 /* owned */
	char *why;                  /* owned; what a non-ELF answer was */
};

struct dbgd {
	struct dbgd_job *jobs;
	size_t nr_jobs, alloc_jobs;
	struct dbgd_summary sum;
	char *private_cache;        /* made here, removed by dbgd_free */
	uint64_t maxsize;           /* bytes */
	char too_large[80];         /* the reason for -EFBIG */
};

/* Pipe messages.  Requests: parent to helper; answers: helper to parent. */
struct dbgd_req {
	uint32_t job;
	uint8_t kind;
	uint8_t size;
	uint8_t bid[20];
};

enum { DBGD_MSG_PROGRESS = 1, DBGD_MSG_DONE };

struct dbgd_msg {
	uint32_t job;
	uint8_t type;
	uint8_t downloaded;
	uint16_t path_len;          /* DONE: bytes of path that follow */
	int32_t rc;
	uint64_t bytes;
};

struct dbgd_worker {
	pid_t pid;
	int req, resp;              /* -1 when closed */
	long job;                   /* running job, -1 when idle */
	double last_progress;       /* monotonic seconds */
	uint64_t last_bytes;
};

static const char *const dbgd_kind_names[DBGD_KIND__COUNT] = {
	[DBGD_EXECUTABLE] = "executable",
	[DBGD_DEBUGINFO] = "debuginfo",
};

static double dbgd_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

bool dbgd_configured(const char *urls)
{
	const char *u = urls ? urls : getenv("DEBUGINFOD_URLS");

	return u && u[strspn(u, " \t")];
}

static int dbgd_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Reads exactly len bytes; 0 at a clean end of file, -1 on error. */
static int dbgd_read_all(int fd, void *buf, size_t len)
{
	char *p = buf;
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, p + got, len - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return got || n < 0 ? -1 : 0;
		got += (size_t)n;
	}
	return 1;
}

/* --- the helper process --------------------------------------------- */

struct dbgd_child {
	int resp;
	uint32_t job;
	uint64_t bytes;
	uint64_t maxsize;
	bool too_large;             /* cancelled at the size limit */
	double last_sent;
};

static int dbgd_child_progress(debuginfod_client *c, long a, long b)
{
	struct dbgd_child *ch = dbgd_api.get_user_data(c);
	struct dbgd_msg m = { .type = DBGD_MSG_PROGRESS };
	double now = dbgd_now();

	/*
	 * (loops, 0) until a server answers, then (bytes, size), or
	 * (bytes, -1) without a Content-Length: the client's own limit
	 * only looks at the size, so such a download is cut off here.
	 */
	if (b != 0 && a > 0 && (uint64_t)a > ch->maxsize) {
		ch->too_large = true;
		return 1;
	}
	if (b <= 0 || a < 0 || (uint64_t)a == ch->bytes ||
	    now - ch->last_sent < 0.1)
		return 0;
	ch->bytes = (uint64_t)a;
	ch->last_sent = now;
	m.job = ch->job;
	m.bytes = ch->bytes;
	(void)dbgd_write_all(ch->resp, &m, sizeof(m));
	return 0;   /* no other cancel: a cancel is cached as a miss */
}

/*
 * Removes the client's empty "not found" entry for bid/kind, if any.
 * Returns whether the cache holds the file itself.
 */
static bool dbgd_drop_negative(const char *cache, const struct dbgd_req *r)
{
	char hex[41], path[4096];
	struct stat st;

	module_build_id_hex(r->bid, MIN(r->size, 20), hex);
	snprintf(path, sizeof(path), "%s/%s/%s", cache, hex,
		 dbgd_kind_names[r->kind]);
	if (lstat(path, &st) < 0)
		return false;
	if (S_ISREG(st.st_mode) && st.st_size == 0)
		(void)unlink(path);
	return st.st_size > 0;
}

static void __attribute__((noreturn))
dbgd_child_main(int req, int resp, const char *urls,
			    const char *cache, unsigned timeout,
			    uint64_t maxsize)
{
	struct dbgd_child ch = { .resp = resp, .maxsize = maxsize };
	debuginfod_client *c;
	struct dbgd_req r;
	struct err err;
	char t[16], size[24];

	/* A private environment: nothing else runs in this process. */
	snprintf(t, sizeof(t), "%u", timeout);
	snprintf(size, sizeof(size), "%llu", (unsigned long long)maxsize);
	if (setenv("DEBUGINFOD_URLS", urls, 1) < 0 ||
	    setenv("DEBUGINFOD_CACHE_PATH", cache, 1) < 0 ||
	    setenv("DEBUGINFOD_TIMEOUT", t, 1) < 0 ||
	    setenv("DEBUGINFOD_MAXSIZE", size, 1) < 0 ||
	    (!getenv("DEBUGINFOD_RETRY_LIMIT") &&
	     setenv("DEBUGINFOD_RETRY_LIMIT", "0", 1) < 0))
		_exit(1);
	unsetenv("DEBUGINFOD_VERBOSE");
	if (dbgd_load_api(&err) < 0)
		_exit(1);
	c = dbgd_api.begin();
	if (!c)
		_exit(1);
	dbgd_api.set_user_data(c, &ch);
	dbgd_api.set_progressfn(c, dbgd_child_progress);
	while (dbgd_read_all(req, &r, sizeof(r)) > 0) {
		struct dbgd_msg m = { .type = DBGD_MSG_DONE, .job = r.job };
		char *path = NULL;
		size_t len = 0;
		bool had;
		int rc;

		if (r.size == 0 || r.size > 20 || r.kind >= DBGD_KIND__COUNT)
			break;
		ch.job = r.job;
		ch.bytes = 0;
		ch.last_sent = 0;
		ch.too_large = false;
		had = dbgd_drop_negative(cache, &r);
		rc = r.kind == DBGD_EXECUTABLE ?
			     dbgd_api.find_executable(c, r.bid, r.size, &path) :
			     dbgd_api.find_debuginfo(c, r.bid, r.size, &path);
		if (rc >= 0) {
			close(rc);
			/* New in the cache, headers or progress: fetched. */
			m.downloaded = !had || dbgd_api.get_headers(c) ||
				       ch.bytes > 0;
			len = path ? strlen(path) : 0;
			if (!len || len > 4096) {
				rc = -ENAMETOOLONG;
				len = 0;
			} else {
				rc = 0;
			}
		} else {
			if (ch.too_large)
				rc = -EFBIG;
			dbgd_drop_negative(cache, &r);
		}
		m.rc = rc;
		m.bytes = ch.bytes;
		m.path_len = (uint16_t)len;
		if (dbgd_write_all(resp, &m, sizeof(m)) < 0 ||
		    (len && dbgd_write_all(resp, path, len) < 0)) {
			free(path);
			break;
		}
		free(path);
	}
	dbgd_api.end(c);
	_exit(0);
}

/* --- the parent ------------------------------------------------------ */

static long dbgd_find_job(const struct dbgd *d, const uint8_t *bid,
			  unsigned n, enum dbgd_kind kind)
{
	size_t i;

	for (i = 0; i < d->nr_jobs; i++)
		if (d->jobs[i].kind == kind && d->jobs[i].size == n &&
		    !memcmp(d->jobs[i].bid, bid, n))
			return (long)i;
	return -1;
}

static int dbgd_add_job(struct dbgd *d, const uint8_t *bid, unsigned n,
			enum dbgd_kind kind, enum dbgd_need debug_then)
{
	struct dbgd_job *j;

	if (!n || n > 20 || dbgd_find_job(d, bid, n, kind) >= 0)
		return 0;
	if (mem_grow(&d->jobs, &d->alloc_jobs, sizeof(*d->jobs),
		     d->nr_jobs + 1) < 0)
		return -1;
	j = &d->jobs[d->nr_jobs++];
	memset(j, 0, sizeof(*j));
	memcpy(j->bid, bid, n);
	j->size = (uint8_t)n;
	j->kind = kind;
	j->debug_then = debug_then;
	return 0;
}

/* The client cache: $DEBUGINFOD_CACHE_PATH, else the client's default. */
static char *dbgd_default_cache(void)
{
	const char *env = getenv("DEBUGINFOD_CACHE_PATH");
	const char *home = getenv("HOME");
	const char *xdg = getenv("XDG_CACHE_HOME");
	char buf[4096];
	struct stat st;

	if (env && *env)
		return mem_strdup(env);
	if (!home || !*home)
		return NULL;
	snprintf(buf, sizeof(buf), "%s/.debuginfod_client_cache", home);
	if (stat(buf, &st) == 0 && S_ISDIR(st.st_mode))
		return mem_strdup(buf);
	if (xdg && *xdg)
		snprintf(buf, sizeof(buf), "%s/debuginfod_client", xdg);
	else
		snprintf(buf, sizeof(buf), "%s/.cache/debuginfod_client", home);
	return mem_strdup(buf);
}

/*
 * Whether the client can use dir as its cache: it opens a control file
 * read-write on every query, hits included, so an unwritable cache fails
 * every lookup.
 */
static bool dbgd_cache_usable(const char *dir)
{
	char parent[4096];
	const char *slash;

	if (access(dir, W_OK | X_OK) == 0)
		return true;
	if (errno != ENOENT)
		return false;
	slash = strrchr(dir, '/');
	if (!slash)
		return false;
	snprintf(parent, sizeof(parent), "%.*s",
		 slash == dir ? 1 : (int)(slash - dir), dir);
	/* The client makes dir itself, but not its parents. */
	if (access(parent, F_OK) < 0 && errno == ENOENT &&
	    mkdir(parent, 0700) < 0 && errno != EEXIST)
		return false;
	return access(parent, W_OK | X_OK) == 0;
}

static int dbgd_spawn(struct dbgd_worker *w, struct dbgd_worker *all,
		      unsigned nr_all, const char *urls, const char *cache,
		      unsigned timeout, uint64_t maxsize)
{
	int req[2], resp[2];
	unsigned i;
	pid_t pid;

	if (pipe2(req, O_CLOEXEC) < 0)
		return -1;
	if (pipe2(resp, O_CLOEXEC) < 0) {
		close(req[0]);
		close(req[1]);
		return -1;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		close(req[0]);
		close(req[1]);
		close(resp[0]);
		close(resp[1]);
		return -1;
	}
	if (pid == 0) {
		/* Other helpers' pipes: their ends of file must stay theirs. */
		for (i = 0; i < nr_all; i++) {
			if (all[i].req >= 0)
				close(all[i].req);
			if (all[i].resp >= 0)
				close(all[i].resp);
		}
		close(req[1]);
		close(resp[0]);
		dbgd_child_main(req[0], resp[1], urls, cache, timeout,
				maxsize);
	}
	close(req[0]);
	close(resp[1]);
	w->pid = pid;
	w->req = req[1];
	w->resp = resp[0];
	w->job = -1;
	return 0;
}

static void dbgd_reap(struct dbgd_worker *w, bool kill_it)
{
	if (w->req >= 0)
		close(w->req);
	if (w->resp >= 0)
		close(w->resp);
	w->req = w->resp = -1;
	if (w->pid > 0) {
		if (kill_it)
			kill(w->pid, SIGKILL);
		while (waitpid(w->pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	w->pid = 0;
	w->job = -1;
}

static void dbgd_finish_job(struct dbgd *d, struct dbgd_job *j, int rc)
{
	j->state = DBGD_DONE;
	j->rc = rc;
	d->sum.lookups++;
	d->sum.bytes += j->downloaded ? j->bytes : 0;
	if (!rc && j->downloaded)
		d->sum.downloaded++;
	else if (!rc)
		d->sum.cached++;
	else if (rc == -ENOENT)
		d->sum.not_found++;
	else
		d->sum.failed++;
}

/*
 * Whether the file j fetched starts as an ELF file does.  If not, j->why
 * says what it starts with (a server's error page, most often) and the
 * file leaves the client cache, which would otherwise offer it to every
 * later run; returns -1.
 */
static int dbgd_check_elf(struct dbgd_job *j)
{
	unsigned char head[8];
	char shown[8 * 4 + 1], *p = shown;
	ssize_t n = -1, i;
	int fd = open(j->path, O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		while ((n = read(fd, head, sizeof(head))) < 0 && errno == EINTR)
			;
		close(fd);
	}
	if (n >= 4 && !memcmp(head, "\x7f" "ELF", 4))
		return 0;
	for (i = 0; i < n; i++)
		p += head[i] >= 0x20 && head[i] < 0x7f && head[i] != '\'' ?
			     sprintf(p, "%c", head[i]) :
			     sprintf(p, "\\x%02x", head[i]);
	if (n < 0)
		j->why = mem_strdup("debuginfod answer unreadable");
	else if (n == 0)
		j->why = mem_strdup("debuginfod answered with an empty file");
	else if (asprintf(&j->why, "debuginfod answered with something "
			  "that is not an ELF file (it starts with '%s')",
			  shown) < 0)
		j->why = NULL;
	(void)unlink(j->path);
	free(j->path);
	j->path = NULL;
	return -1;
}

/* Reads one message from w; -1 when the helper is gone. */
static int dbgd_take_msg(struct dbgd *d, struct dbgd_worker *w, double now)
{
	struct dbgd_msg m;
	struct dbgd_job *j;
	char *path = NULL;

	if (dbgd_read_all(w->resp, &m, sizeof(m)) <= 0)
		return -1;
	if (w->job < 0 || m.job != (uint32_t)w->job)
		return -1;   /* protocol confusion: treat as dead */
	j = &d->jobs[w->job];
	if (m.type == DBGD_MSG_PROGRESS) {
		if (m.bytes != w->last_bytes) {
			w->last_bytes = m.bytes;
			w->last_progress = now;
		}
		j->bytes = m.bytes;
		return 0;
	}
	if (m.type != DBGD_MSG_DONE)
		return -1;
	if (m.path_len) {
		path = malloc((size_t)m.path_len + 1);
		if (!path || dbgd_read_all(w->resp, path, m.path_len) <= 0) {
			free(path);
			return -1;
		}
		path[m.path_len] = '\0';
	}
	j->path = path;
	j->downloaded = m.downloaded;
	if (m.bytes)
		j->bytes = m.bytes;
	if (!m.rc && path) {
		struct stat st;

		if (stat(path, &st) == 0)
			j->bytes = (uint64_t)st.st_size;
		if (j->bytes > d->maxsize) {
			/* what the client let through (file://); an
			 * older file in the cache is not ours to remove */
			if (j->downloaded)
				(void)unlink(path);
			free(j->path);
			j->path = NULL;
			m.rc = -EFBIG;
		} else if (dbgd_check_elf(j) < 0) {
			m.rc = -ENOEXEC;
		}
	}
	dbgd_finish_job(d, j, m.rc ? m.rc : path ? 0 : -ENOENT);
	w->job = -1;
	return 0;
}

/* After an executable arrived: queue its debuginfo when it is needed. */
static int dbgd_follow_up(struct dbgd *d, size_t ji)
{
	struct dbgd_job *j = &d->jobs[ji];
	uint8_t bid[20];
	unsigned n = j->size;
	bool need;

	/* Without the executable the module is missing: no debuginfo. */
	if (j->kind != DBGD_EXECUTABLE || j->rc || !j->path)
		return 0;
	need = j->debug_then == DBGD_NEED_ALWAYS ||
	       (j->debug_then == DBGD_NEED_IF_LACKING &&
		locate_elf_needs_debug(j->path));
	if (!need)
		return 0;
	memcpy(bid, j->bid, n);
	return dbgd_add_job(d, bid, n, DBGD_DEBUGINFO, DBGD_NEED_NONE);
}

static void dbgd_report(const struct dbgd *d, const struct dbgd_opts *o,
			const struct dbgd_worker *ws, unsigned nr_ws,
			bool finished)
{
	struct dbgd_progress p = { .finished = finished };
	size_t i;

	if (!o->progress)
		return;
	for (i = 0; i < d->nr_jobs; i++) {
		p.total++;
		if (d->jobs[i].state == DBGD_DONE)
			p.done++;
		if (d->jobs[i].downloaded || d->jobs[i].state == DBGD_RUNNING)
			p.bytes += d->jobs[i].bytes;
	}
	for (i = 0; i < nr_ws; i++)
		if (ws[i].pid > 0 && ws[i].job >= 0)
			p.running++;
	o->progress(o->progress_ctx, &p);
}

static unsigned dbgd_timeout(const struct dbgd_opts *o)
{
	const char *env = getenv("DEBUGINFOD_TIMEOUT");
	long v;

	if (o->timeout)
		return o->timeout;
	if (env && *env) {
		v = strtol(env, NULL, 10);
		if (v > 0 && v < 86400)
			return (unsigned)v;
	}
	return DBGD_DEFAULT_TIMEOUT;
}

/* The download limit: opts, else $DEBUGINFOD_MAXSIZE, else the default. */
static uint64_t dbgd_maxsize(const struct dbgd_opts *o)
{
	const char *env = getenv("DEBUGINFOD_MAXSIZE");
	unsigned long long v;
	char *end;

	if (o->maxsize)
		return o->maxsize;
	if (env && *env) {
		errno = 0;
		v = strtoull(env, &end, 10);
		if (!*end && !errno && v > 0 && v <= INT64_MAX)
			return v;
	}
	return DBGD_DEFAULT_MAXSIZE;
}

/* Runs the queue to the end with up to nr_ws helpers. */
static int dbgd_run(struct dbgd *d, const struct dbgd_opts *o,
		    struct dbgd_worker *ws, unsigned nr_ws, const char *urls,
		    const char *cache, struct err *err)
{
	unsigned timeout = dbgd_timeout(o), i, live;
	size_t next = 0;
	double last_report = 0;
	struct pollfd pfd[DBGD_MAX_JOBS];
	int idx[DBGD_MAX_JOBS];

	for (;;) {
		double now = dbgd_now();
		int n = 0, rc;

		while (next < d->nr_jobs && d->jobs[next].state != DBGD_QUEUED)
			next++;
		/* Hand out queued jobs; start helpers as needed. */
		for (i = 0; i < nr_ws && next < d->nr_jobs; i++) {
			struct dbgd_req r = { 0 };

			if (ws[i].pid <= 0 &&
			    dbgd_spawn(&ws[i], ws, nr_ws, urls, cache,
				       timeout, d->maxsize) < 0)
				continue;   /* others may still run */
			if (ws[i].job >= 0)
				continue;
			r.job = (uint32_t)next;
			r.kind = (uint8_t)d->jobs[next].kind;
			r.size = d->jobs[next].size;
			memcpy(r.bid, d->jobs[next].bid, r.size);
			if (dbgd_write_all(ws[i].req, &r, sizeof(r)) < 0) {
				dbgd_reap(&ws[i], true);
				continue;
			}
			d->jobs[next].state = DBGD_RUNNING;
			ws[i].job = (long)next;
			ws[i].last_progress = now;
			ws[i].last_bytes = 0;
			while (++next < d->nr_jobs &&
			       d->jobs[next].state != DBGD_QUEUED)
				;
		}
		live = 0;
		for (i = 0; i < nr_ws; i++) {
			if (ws[i].pid <= 0 || ws[i].job < 0)
				continue;
			pfd[n].fd = ws[i].resp;
			pfd[n].events = POLLIN;
			idx[n++] = (int)i;
			live++;
		}
		if (!live) {
			/* No helper could start: the rest fails, not the run. */
			for (; next < d->nr_jobs; next++)
				if (d->jobs[next].state == DBGD_QUEUED)
					dbgd_finish_job(d, &d->jobs[next],
							-EAGAIN);
			break;
		}
		rc = poll(pfd, (nfds_t)n, 200);
		if (rc < 0 && errno != EINTR)
			return err_sys(err, errno, "debuginfod helpers: poll");
		now = dbgd_now();
		for (i = 0; rc > 0 && i < (unsigned)n; i++) {
			struct dbgd_worker *w = &ws[idx[i]];
			long job = w->job;

			if (!pfd[i].revents)
				continue;
			if (dbgd_take_msg(d, w, now) < 0) {
				/* The helper died: its job fails, not the run. */
				if (job >= 0 && d->jobs[job].state == DBGD_RUNNING)
					dbgd_finish_job(d, &d->jobs[job], -EIO);
				dbgd_reap(w, true);
			}
			if (job >= 0 && d->jobs[job].state == DBGD_DONE) {
				if (dbgd_follow_up(d, (size_t)job) < 0)
					return err_set(err, ERR_NOMEM, ERR_NO_OFF,
						       "debuginfod lookups");
			}
		}
		/* A helper without progress for too long: give up on it. */
		for (i = 0; i < nr_ws; i++) {
			struct dbgd_worker *w = &ws[i];

			if (w->pid <= 0 || w->job < 0 ||
			    now - w->last_progress < timeout + DBGD_GRACE_S)
				continue;
			dbgd_finish_job(d, &d->jobs[w->job], -ETIME);
			dbgd_reap(w, true);
		}
		if (now - last_report >= 0.1) {
			dbgd_report(d, o, ws, nr_ws, false);
			last_report = now;
		}
	}
	return 0;
}

struct dbgd *dbgd_fetch(const struct dbgd_want *wants, unsigned nr,
			const struct dbgd_opts *o, struct err *err)
{
	struct dbgd_worker ws[DBGD_MAX_JOBS];
	struct sigaction ign = { .sa_handler = SIG_IGN }, old;
	const char *urls = o->urls ? o->urls : getenv("DEBUGINFOD_URLS");
	unsigned nr_ws = o->jobs ? MIN(o->jobs, DBGD_MAX_JOBS) :
				   DBGD_DEFAULT_JOBS;
	struct dbgd *d = mem_zalloc(1, sizeof(*d));
	unsigned i;
	int rc;

	if (!d) {
		err_set(err, ERR_NOMEM, ERR_NO_OFF, "debuginfod lookups");
		return NULL;
	}
	for (i = 0; i < nr; i++) {
		const struct dbgd_want *w = &wants[i];

		if ((w->exe != DBGD_NEED_NONE &&
		     dbgd_add_job(d, w->bid, w->size, DBGD_EXECUTABLE,
				  w->debug) < 0) ||
		    (w->exe == DBGD_NEED_NONE && w->debug == DBGD_NEED_ALWAYS &&
		     dbgd_add_job(d, w->bid, w->size, DBGD_DEBUGINFO,
				  DBGD_NEED_NONE) < 0)) {
			err_set(err, ERR_NOMEM, ERR_NO_OFF, "debuginfod lookups");
			goto fail;
		}
	}
	d->maxsize = dbgd_maxsize(o);
	if (d->maxsize % (1 << 20))
		snprintf(d->too_large, sizeof(d->too_large),
			 "debuginfod file too large (over %llu bytes)",
			 (unsigned long long)d->maxsize);
	else
		snprintf(d->too_large, sizeof(d->too_large),
			 "debuginfod file too large (over %llu MiB)",
			 (unsigned long long)(d->maxsize >> 20));
	if (!d->nr_jobs || !dbgd_configured(urls))
		return d;
	d->sum.cache_dir = dbgd_default_cache();
	if (!d->sum.cache_dir || !dbgd_cache_usable(d->sum.cache_dir)) {
		char tmpl[4096];
		const char *tmp = getenv("TMPDIR");

		snprintf(tmpl, sizeof(tmpl), "%s/restack-debuginfod.XXXXXX",
			 tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(tmpl) || !(d->private_cache = mem_strdup(tmpl))) {
			err_sys(err, errno, "debuginfod cache directory");
			goto fail;
		}
		free(d->sum.cache_dir);
		d->sum.cache_dir = mem_strdup(tmpl);
		if (!d->sum.cache_dir) {
			err_set(err, ERR_NOMEM, ERR_NO_OFF, "debuginfod lookups");
			goto fail;
		}
	}
	for (i = 0; i < DBGD_MAX_JOBS; i++) {
		ws[i].pid = 0;
		ws[i].req = ws[i].resp = -1;
		ws[i].job = -1;
	}
	/* A helper that dies must not take the run down with SIGPIPE. */
	sigaction(SIGPIPE, &ign, &old);
	rc = dbgd_run(d, o, ws, nr_ws, urls, d->sum.cache_dir, err);
	for (i = 0; i < nr_ws; i++)
		if (ws[i].pid > 0)
			dbgd_reap(&ws[i], rc < 0);
	sigaction(SIGPIPE, &old, NULL);
	if (rc < 0)
		goto fail;
	dbgd_report(d, o, ws, 0, true);
	return d;
fail:
	dbgd_free(d);
	return NULL;
}

void dbgd_free(struct dbgd *d)
{
	size_t i;

	if (!d)
		return;
	for (i = 0; i < d->nr_jobs; i++) {
		free(d->jobs[i].path);
		free(d->jobs[i].why);
	}
	free(d->jobs);
	if (d->private_cache) {
		locate_remove_tree(d->private_cache);
		free(d->private_cache);
	}
	free(d->sum.cache_dir);
	free(d);
}

static const char *dbgd_why(const struct dbgd *d, const struct dbgd_job *j)
{
	if (j->why)
		return j->why;
	switch (j->rc) {
	case 0: return "found";
	case -ENOENT: return "not found on the debuginfod servers";
	case -ETIME: return "debuginfod lookup timed out";
	case -ECONNREFUSED: return "debuginfod server refused the connection";
	case -EHOSTUNREACH: return "debuginfod server unreachable";
	case -EFBIG: return d->too_large;
	case -ENOEXEC: return "debuginfod answered with a file that is not ELF";
	case -EAGAIN: return "no process for the debuginfod lookup";
	default: return "debuginfod lookup failed";
	}
}

const char *dbgd_result(const struct dbgd *d, const uint8_t *bid,
			unsigned n, enum dbgd_kind kind, const char **why)
{
	long i = d ? dbgd_find_job(d, bid, n, kind) : -1;
	const struct dbgd_job *j;

	if (i < 0) {
		if (why)
			*why = "not looked up on debuginfod";
		return NULL;
	}
	j = &d->jobs[i];
	if (j->state != DBGD_DONE) {
		if (why)
			*why = "not looked up on debuginfod";
		return NULL;
	}
	if (why)
		*why = dbgd_why(d, j);
	return j->rc ? NULL : j->path;
}

const struct dbgd_summary *dbgd_summary(const struct dbgd *d)
{
	return &d->sum;
}
