/*
 * profile.c - profile inputs (see profile.h): telling them apart, opening
 * them, and folded stacks.
 *
 * A folded file is mapped and read line by line: "frame;frame;... W",
 * root first, W an integer or decimal weight.  Decimal weights are made
 * integers by the largest number of decimals any line has (found by a
 * first look over the file).  Blank lines and lines starting with '#'
 * are skipped, and so are lines of weight 0.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/mem.h"
#include "formats/profile_internal.h"

#define PROFILE_MAX_FILE ((size_t)4 << 30)
#define PROFILE_MAX_DECIMALS 9

enum profile_kind profile_kind_named(const char *name)
{
	if (!strcmp(name, "folded"))
		return PROFILE_FOLDED;
	if (!strcmp(name, "pprof"))
		return PROFILE_PPROF;
	if (!strcmp(name, "chrome"))
		return PROFILE_CHROME;
	return PROFILE_NONE;
}

/* Whether the line [s, e) ends in a weight after a blank. */
static bool profile_folded_line(const char *s, const char *e)
{
	const char *w = e;

	while (w > s && ((w[-1] >= '0' && w[-1] <= '9') || w[-1] == '.'))
		w--;
	return w < e && w > s && (w[-1] == ' ' || w[-1] == '\t') &&
	       memchr(s, '\0', (size_t)(e - s)) == NULL;
}

enum profile_kind profile_sniff(const char *path)
{
	unsigned char b[4096];
	const char *s, *nl;
	struct stat st;
	ssize_t n;
	int fd;

	/* a stream (stdin, a FIFO) is not read here: its bytes would be
	 * gone for the capture reader; --from tells a profile there */
	if (!strcmp(path, "-") || stat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return PROFILE_NONE;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return PROFILE_NONE;
	n = read(fd, b, sizeof(b) - 1);
	close(fd);
	if (n < 3)
		return PROFILE_NONE;
	b[n] = 0;
	if (b[0] == 0x1f && b[1] == 0x8b)
		return PROFILE_PPROF;
	/* profile.proto's first field: sample_type { type = ... } */
	if (b[0] == 0x0a && b[1] < 0x80 && b[2] == 0x08)
		return PROFILE_PPROF;
	s = (const char *)b;
	s += strspn(s, " \t\r\n");
	if (*s == '{' || *s == '[')
		return PROFILE_CHROME;
	s = (const char *)b;
	while (*s == '#' || *s == '\n' || *s == '\r') {
		nl = strchr(s, '\n');
		if (!nl)
			return PROFILE_NONE;
		s = nl + 1;
	}
	nl = strchr(s, '\n');
	if (!nl)
		return PROFILE_NONE;
	if (nl > s && nl[-1] == '\r')
		nl--;
	return profile_folded_line(s, nl) ? PROFILE_FOLDED : PROFILE_NONE;
}

int profile_frames(struct profile *p, size_t n)
{
	if (mem_grow(&p->frames, &p->alloc_frames, sizeof(*p->frames),
		     n ? n : 1) < 0)
		return err_set(&p->err, ERR_NOMEM, ERR_NO_OFF, "stack frames");
	return 0;
}

/* --- folded stacks ------------------------------------------------ */

/* A named frame of a folded stack, unique by name, kind and inlining. */
struct profile_named {
	struct profile_named *next;
	struct sym_loc *loc;
};

/* The annotations folded output adds (folded.c), and what they say. */
static const struct {
	const char *suffix;
	uint8_t kind;              /* enum sym_kind */
	bool inlined, kernel;
	uint8_t origin;            /* enum frame_origin */
} profile_notes[] = {
	{ "_[k]", SYM_KERNEL, false, true, FRAME_KERNEL },
	{ "_[i]", SYM_USER, true, false, FRAME_CFI_EH },
	{ "_[j]", SYM_JIT, false, false, FRAME_JIT },
	{ "_[fp]", SYM_USER, false, false, FRAME_FP },
	{ "_[s]", SYM_USER, false, false, FRAME_STITCHED },
	{ "_[scan]", SYM_USER, false, false, FRAME_SCAN },
	{ "_[stub]", SYM_USER, false, false, FRAME_STUB },
	{ "_[go]", SYM_USER, false, false, FRAME_GOPCLNTAB },
};

/* The location of a frame named [name, name + len).  NULL: no memory. */
struct sym_loc *profile_named(struct profile *p, const char *name,
			      size_t len, uint8_t kind, bool inlined)
{
	uint64_t h = hashmap_mix(hashmap_fnv(HASHMAP_FNV_SEED, name, len) ^
				 ((uint64_t)kind << 1 | inlined));
	struct profile_named *n, *first = NULL;
	void *v;

	if (hashmap_get(&p->locs, h, &v))
		first = v;
	for (n = first; n; n = n->next)
		if (n->loc->kind == kind && n->loc->e[0].inlined == inlined &&
		    !strncmp(n->loc->e[0].name, name, len) &&
		    !n->loc->e[0].name[len])
			return n->loc;
	n = arena_alloc(&p->arena, sizeof(*n));
	if (!n)
		return NULL;
	n->loc = arena_alloc(&p->arena, sizeof(*n->loc) +
			     sizeof(n->loc->e[0]));
	if (!n->loc)
		return NULL;
	n->loc->e[0].name = arena_strndup(&p->arena, name, len);
	if (!n->loc->e[0].name)
		return NULL;
	n->loc->e[0].inlined = inlined;
	n->loc->kind = kind;
	n->loc->nr = 1;
	n->next = first;
	if (hashmap_put(&p->locs, h, n) < 0)
		return NULL;
	return n->loc;
}

enum end_reason profile_marker(const char *s, size_t len)
{
	struct rsample t = { .nr_frames = 1 };
	unsigned r;

	for (r = 0; r < END_REASON__COUNT; r++) {
		const char *m;

		t.end = (uint8_t)r;
		m = rsample_marker(&t);
		if (m && strlen(m) == len && !memcmp(m, s, len))
			return (enum end_reason)r;
	}
	return END_ROOT;
}

/* The frame [s, e) of a folded line into p->frames[i].  0, or -1. */
static int profile_folded_frame(struct profile *p, const char *s,
				const char *e, size_t i, bool *kernel)
{
	struct rframe *fr = &p->frames[i];
	uint8_t kind = SYM_USER;
	bool inlined = false;
	size_t k, len = (size_t)(e - s);

	fr->origin = FRAME_CFI_EH;
	*kernel = false;
	for (k = 0; k < ARRAY_SIZE(profile_notes); k++) {
		size_t n = strlen(profile_notes[k].suffix);

		if (len > n && !memcmp(e - n, profile_notes[k].suffix, n)) {
			len -= n;
			kind = profile_notes[k].kind;
			inlined = profile_notes[k].inlined;
			*kernel = profile_notes[k].kernel;
			fr->origin = profile_notes[k].origin;
			break;
		}
	}
	/* "[module]", "[unknown]": no function known */
	if (len >= 2 && s[0] == '[' && s[len - 1] == ']' && kind != SYM_KERNEL)
		kind = SYM_UNKNOWN;
	/* an inlined call shares the frame it was inlined into, the one
	 * before it (rootward): how that was found */
	if (inlined && i > 0)
		fr->origin = p->frames[i - 1].origin;
	fr->pc = 0;
	fr->loc = profile_named(p, s, len, kind, inlined);
	if (!fr->loc)
		return err_set(&p->err, ERR_NOMEM, ERR_NO_OFF, "stack frames");
	return 0;
}

/* The weight token [s, e) as an integer scaled by p->info.scale. */
static int profile_folded_weight(struct profile *p, const char *s,
				 const char *e, uint64_t *w)
{
	uint64_t x = 0, scale = p->info.scale;
	bool dot = false;
	const char *c;

	for (c = s; c < e; c++) {
		if (*c == '.' && !dot) {
			dot = true;
			continue;
		}
		if (*c < '0' || *c > '9')
			return -1;
		if (dot && scale == 1)
			continue;    /* beyond the decimals kept: dropped */
		if (x > (UINT64_MAX - 9) / 10)
			return -1;
		x = x * 10 + (uint64_t)(*c - '0');
		if (dot)
			scale /= 10;
	}
	if (scale > 1 && x > UINT64_MAX / scale)
		return -1;
	*w = x * scale;
	return 0;
}

/* The weight's start in the line [s, e): after its last blank. */
static const char *profile_folded_split(const char *s, const char *e)
{
	const char *w = e;

	while (w > s && w[-1] != ' ' && w[-1] != '\t')
		w--;
	return w;
}

/* The first look: the decimals weights have, for p->info.scale. */
static void profile_folded_scale(struct profile *p)
{
	const char *s = p->data, *end = p->data + p->len;
	unsigned most = 0;

	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		const char *e = nl ? nl : end, *w, *dot;

		w = profile_folded_split(s, e);
		dot = memchr(w, '.', (size_t)(e - w));
		if (dot) {
			const char *d = dot + 1;

			while (d < e && *d >= '0' && *d <= '9')
				d++;
			most = MAX(most, (unsigned)(d - dot - 1));
		}
		s = nl ? nl + 1 : end;
	}
	p->info.scale = 1;
	while (most-- > 0 && p->info.scale < 1000000000)
		p->info.scale *= 10;
}

static int profile_folded_next(struct profile *p)
{
	const char *end = p->data + p->len;

	while (p->pos < p->len) {
		const char *s = p->data + p->pos, *nl, *e, *w, *f, *semi;
		uint64_t off = p->pos, wt;
		size_t n = 0, i, lo, nk;
		bool kernel;

		nl = memchr(s, '\n', (size_t)(end - s));
		e = nl ? nl : end;
		p->pos = nl ? (size_t)(nl + 1 - p->data) : p->len;
		if (e > s && e[-1] == '\r')
			e--;
		if (e == s || *s == '#')
			continue;
		w = profile_folded_split(s, e);
		if (w == s || w == e || memchr(s, '\0', (size_t)(e - s)) ||
		    profile_folded_weight(p, w, e, &wt) < 0)
			return err_set(&p->err, ERR_FORMAT, off,
				       "folded line without a weight (or over "
				       "2^64) at its end");
		if (!wt)
			continue;
		e = w - 1;
		while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
			e--;
		/* frames after the first (the thread's name) */
		semi = memchr(s, ';', (size_t)(e - s));
		p->s = (struct rsample){ .cpu = -1, .period = wt, .count = wt,
					.event = "weight" };
		strbuf_reset(&p->comm);
		strbuf_add(&p->comm, s, (size_t)((semi ? semi : e) - s));
		if (p->comm.oom)
			return err_set(&p->err, ERR_NOMEM, ERR_NO_OFF,
				       "stack frames");
		p->s.comm = p->comm.buf ? p->comm.buf : "";
		for (f = semi ? semi + 1 : e; f < e;) {
			const char *fe = memchr(f, ';', (size_t)(e - f));

			fe = fe ? fe : e;
			if (f == semi + 1 && (p->s.end = (uint8_t)profile_marker(
					f, (size_t)(fe - f))) != END_ROOT) {
				f = fe + 1;
				continue;
			}
			if (profile_frames(p, n + 1) < 0 ||
			    profile_folded_frame(p, f, fe, n, &kernel) < 0)
				return -1;
			/* the kernel frames are marked for the count below */
			p->frames[n].pc = kernel;
			n++;
			f = fe + 1;
		}
		/* leaf first */
		for (lo = 0; lo < n / 2; lo++) {
			struct rframe t = p->frames[lo];

			p->frames[lo] = p->frames[n - 1 - lo];
			p->frames[n - 1 - lo] = t;
		}
		for (nk = 0; nk < n && p->frames[nk].pc; nk++)
			;
		for (i = 0; i < n; i++)
			p->frames[i].pc = 0;
		p->s.frames = p->frames;
		p->s.nr_frames = (uint32_t)n;
		p->s.nr_kernel = (uint32_t)nk;
		/* a marker needs user frames to stand for (stack.h) */
		if (p->s.end != END_ROOT && nk == n)
			p->s.end = END_ROOT;
		return 1;
	}
	return 0;
}

/* --- opening -------------------------------------------------------- */

struct profile *profile_open(const char *path, const struct profile_opts *o,
			     struct err *err)
{
	struct profile *p = mem_zalloc(1, sizeof(*p));

	if (!p) {
		err_set(err, ERR_NOMEM, ERR_NO_OFF, "profile");
		return NULL;
	}
	p->opts = *o;
	p->kind = o->kind;
	p->info.scale = 1;
	/* "-": standard input (told a profile by --from), read whole */
	p->data = mem_read_file(strcmp(path, "-") ? path : "/dev/stdin",
				PROFILE_MAX_FILE, &p->len, &p->map_size);
	if (!p->data) {
		err_sys(err, errno, "cannot read the profile");
		profile_close(p);
		return NULL;
	}
	if (p->kind == PROFILE_FOLDED) {
		profile_folded_scale(p);
	} else if ((p->kind == PROFILE_CHROME ? profile_chrome_open(p) :
		    profile_pprof_open(p)) < 0) {
		*err = p->err;
		profile_close(p);
		return NULL;
	}
	return p;
}

int profile_next(struct profile *p, const struct rsample **s)
{
	int rc;

	if (p->err.code != ERR_OK)
		return -1;
	rc = p->kind == PROFILE_FOLDED ? profile_folded_next(p) :
	     p->kind == PROFILE_CHROME ? profile_chrome_next(p) :
					 profile_pprof_next(p);
	if (rc > 0)
		*s = &p->s;
	return rc;
}

const struct err *profile_err(const struct profile *p)
{
	return &p->err;
}

const struct profile_info *profile_info(const struct profile *p)
{
	return &p->info;
}

void profile_close(struct profile *p)
{
	if (!p)
		return;
	profile_pprof_free(p);
	profile_chrome_free(p);
	if (p->data)
		mem_unmap((void *)p->data, p->map_size);
	hashmap_release(&p->locs);
	strbuf_release(&p->comm);
	arena_release(&p->arena);
	free(p->frames);
	free(p);
}
