/*
 * perfarchive.c - extract a `perf archive` tarball with libarchive into a
 * private directory, without ever writing outside it.
 *
 * Names are normalised ("./" and empty components dropped) and refused
 * when absolute or holding "..".  Directories and files are created one
 * component at a time with openat(O_NOFOLLOW), and symbolic links are
 * only created after every file, so no write can pass through a link.  A
 * link's target must be relative, made of leading ".." components (no
 * more than the link's own depth) followed by plain names: by induction
 * every link then resolves inside the directory.
 *
 * What is extracted is chosen by name alone (perfarchive.h); the limits
 * are checked against the size an entry's header declares before its
 * data is read, and again against the data itself (a header without a
 * size, an entry that runs on).  Data is written block by block with
 * pwrite() at the offsets libarchive gives, so a sparse entry's holes
 * are never written; 4 KiB runs of zeros are skipped as well, and the
 * file is cut to its full size at the end.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>

#include "unwind/perfarchive.h"

#include "common/base.h"
#include "common/dynlib.h"
#include "common/mem.h"
#include "common/sigclean.h"
#include "unwind/locate.h"

/*
 * libarchive, opened when a tarball is given (common/dynlib.h): restack
 * does not map it, nor libxml2 and ICU behind it, otherwise.
 */
static struct {
	__typeof__(archive_read_new) *read_new;
	__typeof__(archive_read_free) *read_free;
	__typeof__(archive_read_support_filter_all) *read_support_filter_all;
	__typeof__(archive_read_support_format_all) *read_support_format_all;
	__typeof__(archive_read_open_filename) *read_open_filename;
	__typeof__(archive_read_next_header) *read_next_header;
	__typeof__(archive_read_data_block) *read_data_block;
	__typeof__(archive_errno) *errno_of;
	__typeof__(archive_error_string) *error_string;
	__typeof__(archive_entry_pathname) *entry_pathname;
	__typeof__(archive_entry_hardlink) *entry_hardlink;
	__typeof__(archive_entry_symlink) *entry_symlink;
	__typeof__(archive_entry_filetype) *entry_filetype;
	__typeof__(archive_entry_perm) *entry_perm;
	__typeof__(archive_entry_size) *entry_size;
	__typeof__(archive_entry_size_is_set) *entry_size_is_set;
} pa_api;

#define PA_SYM(f, name) DYNLIB_SYM(__typeof__(pa_api), f, name)

static int perfarchive_load_api(struct err *err)
{
	static const struct dynlib_sym syms[] = {
		PA_SYM(read_new, "archive_read_new"),
		PA_SYM(read_free, "archive_read_free"),
		PA_SYM(read_support_filter_all,
		       "archive_read_support_filter_all"),
		PA_SYM(read_support_format_all,
		       "archive_read_support_format_all"),
		PA_SYM(read_open_filename, "archive_read_open_filename"),
		PA_SYM(read_next_header, "archive_read_next_header"),
		PA_SYM(read_data_block, "archive_read_data_block"),
		PA_SYM(errno_of, "archive_errno"),
		PA_SYM(error_string, "archive_error_string"),
		PA_SYM(entry_pathname, "archive_entry_pathname"),
		PA_SYM(entry_hardlink, "archive_entry_hardlink"),
		PA_SYM(entry_symlink, "archive_entry_symlink"),
		PA_SYM(entry_filetype, "archive_entry_filetype"),
		PA_SYM(entry_perm, "archive_entry_perm"),
		PA_SYM(entry_size, "archive_entry_size"),
		PA_SYM(entry_size_is_set, "archive_entry_size_is_set"),
	};
	static bool loaded;

	if (loaded)
		return 0;
	if (dynlib_load("libarchive.so.13", &pa_api, syms, ARRAY_SIZE(syms),
			err) < 0)
		return -1;
	loaded = true;
	return 0;
}

struct perfarchive {
	char *dir;
	int clean;   /* dir's registration for removal on a signal */
};

struct perfarchive_link {
	char *name;               /* normalised */
	char *target;
};

#define PERFARCHIVE_NAME_MAX 4096
#define PERFARCHIVE_HOLE 4096     /* zero runs this long are not written */

/* The limits of one extraction and what counts against them. */
struct perfarchive_bounds {
	const struct perfarchive_opts *o;
	uint64_t max_file, max_total;
	uint64_t total;           /* bytes of the entries so far */
};

/* Whether s[0..n) is lowercase hex. */
static bool perfarchive_hex(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') ||
		      (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return n > 0;
}

/*
 * Whether restack can use the normalised name (see perfarchive.h): its
 * build-id, when it has one in a place locate.c looks, is one of o's.
 */
static bool perfarchive_wanted(const struct perfarchive_opts *o,
			       const char *name, int depth)
{
	static const char *const leaves[] = {
		"elf", "debug", "kallsyms", "vdso",
	};
	const char *last = strrchr(name, '/'), *prev;
	char bid[41];
	size_t n = 0, i;

	if (!last)
		return false;
	last++;
	for (prev = last - 1; prev > name && prev[-1] != '/'; prev--)
		;
	if (depth == 3 && !strncmp(name, ".build-id/", 10)) {
		/* .build-id/xx/rest */
		size_t rest = strlen(last);

		if (last - prev != 3 || !perfarchive_hex(prev, 2) ||
		    rest > 38 || !perfarchive_hex(last, rest))
			return false;
		memcpy(bid, prev, 2);
		memcpy(bid + 2, last, rest);
		n = 2 + rest;
	} else {
		size_t plen = (size_t)(last - 1 - prev);

		for (i = 0; i < ARRAY_SIZE(leaves) && strcmp(last, leaves[i]);
		     i++)
			;
		if (i < ARRAY_SIZE(leaves) && plen >= 2 && plen <= 40 &&
		    !(plen % 2) && perfarchive_hex(prev, plen)) {
			n = plen;      /* <path>/<build-id>/elf */
			memcpy(bid, prev, n);
		} else if (strlen(last) >= 32 && strlen(last) <= 40 &&
			   perfarchive_hex(last, strlen(last))) {
			n = strlen(last);   /* an older <path>/<build-id> */
			memcpy(bid, last, n);
		} else {
			return false;
		}
	}
	bid[n] = '\0';
	if (!o || !o->build_ids)
		return true;
	for (i = 0; i < o->nr_build_ids; i++)
		if (!strcmp(o->build_ids[i], bid))
			return true;
	return false;
}

/* A limit for a message: "N MiB", or "N bytes" when not whole MiB. */
static const char *perfarchive_limit(uint64_t v, char *buf, size_t size)
{
	if (v % (1 << 20))
		snprintf(buf, size, "%llu bytes", (unsigned long long)v);
	else
		snprintf(buf, size, "%llu MiB", (unsigned long long)(v >> 20));
	return buf;
}

/* Counts bytes of the archive against the total; -1 when over it. */
static int perfarchive_count(struct perfarchive_bounds *b, uint64_t bytes,
			     const char *name, struct err *err)
{
	char lim[32];

	if (bytes > b->max_total - MIN(b->total, b->max_total) ||
	    b->total > b->max_total)
		return err_set(err, ERR_UNSUPPORTED, ERR_NO_OFF,
			       "entry '%s': the archive holds more than %s "
			       "(--archive-max-total)", name,
			       perfarchive_limit(b->max_total, lim,
						 sizeof(lim)));
	b->total += bytes;
	return 0;
}

/* Whether n bytes at p are all zero. */
static bool perfarchive_zero(const char *p, size_t n)
{
	return !n || (!p[0] && !memcmp(p, p + 1, n - 1));
}

/* Writes a block at off, leaving runs of zeros as holes. */
static int perfarchive_write(int fd, const char *p, size_t size, off_t off)
{
	while (size) {
		size_t n = PERFARCHIVE_HOLE - (size_t)off % PERFARCHIVE_HOLE;
		ssize_t w;

		n = MIN(n, size);
		if (perfarchive_zero(p, n)) {
			w = (ssize_t)n;
		} else {
			w = pwrite(fd, p, n, off);
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				return w < 0 ? -errno : -ENOSPC;
		}
		p += w;
		off += w;
		size -= (size_t)w;
	}
	return 0;
}

/* Reads and drops an entry that has no size in its header. */
static int perfarchive_drain(struct archive *ar, struct perfarchive_bounds *b,
			     const char *name, struct err *err)
{
	const void *buf;
	size_t size;
	la_int64_t off;
	int rc;

	while ((rc = pa_api.read_data_block(ar, &buf, &size, &off)) ==
	       ARCHIVE_OK)
		if (perfarchive_count(b, size, name, err) < 0)
			return -1;
	if (rc != ARCHIVE_EOF)
		return err_set(err, ERR_CORRUPT, ERR_NO_OFF, "entry '%s': %s",
			       name, pa_api.error_string(ar));
	return 0;
}

/*
 * Normalises an entry name into out.  Returns the number of components
 * (0 for the root itself), or -1 when it is absolute, holds "..", or is
 * too long.
 */
static int perfarchive_norm(const char *name, char *out)
{
	size_t len = 0;
	int depth = 0;
	const char *p = name, *e;

	if (name[0] == '/')
		return -1;
	while (*p) {
		size_t n;

		e = strchrnul(p, '/');
		n = (size_t)(e - p);
		if (n == 2 && !memcmp(p, "..", 2))
			return -1;
		if (n && !(n == 1 && p[0] == '.')) {
			if (len + n + 2 > PERFARCHIVE_NAME_MAX)
				return -1;
			if (len)
				out[len++] = '/';
			memcpy(out + len, p, n);
			len += n;
			depth++;
		}
		p = *e ? e + 1 : e;
	}
	out[len] = '\0';
	return depth;
}

/*
 * Opens the directory holding the normalised name (creating missing
 * directories when create), never through a symbolic link; *base points
 * at the last component.  Returns a descriptor or -1 (errno set).
 */
static int perfarchive_parent(int root, const char *name, bool create,
			      const char **base)
{
	char comp[PERFARCHIVE_NAME_MAX];
	const char *p = name, *slash;
	int fd = dup(root);

	while (fd >= 0 && (slash = strchr(p, '/'))) {
		int next;

		memcpy(comp, p, (size_t)(slash - p));
		comp[slash - p] = '\0';
		next = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
						O_CLOEXEC);
		if (next < 0 && errno == ENOENT && create &&
		    mkdirat(fd, comp, 0755) == 0)
			next = openat(fd, comp, O_RDONLY | O_DIRECTORY |
							O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		fd = next;
		p = slash + 1;
	}
	*base = p;
	return fd;
}

/* Whether a link at depth components may point at target (see top). */
static bool perfarchive_link_ok(const char *target, int depth)
{
	const char *p = target, *e;
	int up = 0;
	bool names = false;

	if (!*target || target[0] == '/')
		return false;
	while (*p) {
		size_t n;

		e = strchrnul(p, '/');
		n = (size_t)(e - p);
		if (n == 2 && !memcmp(p, "..", 2)) {
			if (names)
				return false;
			up++;
		} else if (n && !(n == 1 && p[0] == '.')) {
			names = true;
		} else if (n == 1 && names) {
			return false;   /* "a/./b": keep it simple */
		}
		p = *e ? e + 1 : e;
	}
	return up <= depth - 1;
}

static int perfarchive_file(struct archive *ar, int root, const char *name,
			    struct archive_entry *e,
			    struct perfarchive_bounds *b, struct err *err)
{
	bool sized = pa_api.entry_size_is_set(e);
	la_int64_t declared = sized ? pa_api.entry_size(e) : 0;
	mode_t mode = pa_api.entry_perm(e);
	uint64_t end = 0;
	const char *base;
	const void *buf;
	size_t size;
	la_int64_t off;
	int parent, fd, rc;
	char lim[32];

	if (declared < 0 || (uint64_t)declared > b->max_file)
		return err_set(err, ERR_UNSUPPORTED, ERR_NO_OFF,
			       "entry '%s' is %.1f MiB, over the %s limit "
			       "(--archive-max-file)", name,
			       (double)declared / (1 << 20),
			       perfarchive_limit(b->max_file, lim,
						 sizeof(lim)));
	if (perfarchive_count(b, (uint64_t)declared, name, err) < 0)
		return -1;

	parent = perfarchive_parent(root, name, true, &base);
	if (parent < 0)
		return err_sys(err, errno, "entry '%s'", name);
	fd = openat(parent, base, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW |
					  O_CLOEXEC,
		    (mode & 0111) ? 0755 : 0644);
	close(parent);
	if (fd < 0)
		return err_sys(err, errno, "entry '%s'", name);
	while ((rc = pa_api.read_data_block(ar, &buf, &size, &off)) ==
	       ARCHIVE_OK) {
		int w;

		if (off < 0 || (uint64_t)off > b->max_file ||
		    size > b->max_file - (uint64_t)off) {
			close(fd);
			return err_set(err, ERR_UNSUPPORTED, ERR_NO_OFF,
				       "entry '%s' runs over the %s limit "
				       "(--archive-max-file)", name,
				       perfarchive_limit(b->max_file, lim,
							 sizeof(lim)));
		}
		if (!sized && perfarchive_count(b, size, name, err) < 0) {
			close(fd);
			return -1;
		}
		w = perfarchive_write(fd, buf, size, (off_t)off);
		if (w < 0) {
			close(fd);
			return err_sys(err, -w, "entry '%s'", name);
		}
		end = MAX(end, (uint64_t)off + size);
	}
	end = MAX(end, (uint64_t)declared);
	if (rc == ARCHIVE_EOF && ftruncate(fd, (off_t)end) < 0) {
		int saved = errno;

		close(fd);
		return err_sys(err, saved, "entry '%s'", name);
	}
	if (close(fd) < 0)
		return err_sys(err, errno, "entry '%s'", name);
	if (rc != ARCHIVE_EOF)
		return err_set(err, ERR_CORRUPT, ERR_NO_OFF, "entry '%s': %s",
			       name, pa_api.error_string(ar));
	return 0;
}

static int perfarchive_hardlink(int root, const char *name,
				const char *target, bool want,
				struct err *err)
{
	char tnorm[PERFARCHIVE_NAME_MAX];
	const char *base, *tbase;
	int parent, tparent, rc;

	if (perfarchive_norm(target, tnorm) <= 0)
		return err_set(err, ERR_CORRUPT, ERR_NO_OFF,
			       "entry '%s': hard link to '%s' reaches outside "
			       "the archive", name, target);
	if (!want)
		return 0;
	tparent = perfarchive_parent(root, tnorm, false, &tbase);
	if (tparent < 0)
		return errno == ENOENT ? 0 :
		       err_sys(err, errno, "entry '%s'", name);
	parent = perfarchive_parent(root, name, true, &base);
	if (parent < 0) {
		close(tparent);
		return err_sys(err, errno, "entry '%s'", name);
	}
	rc = linkat(tparent, tbase, parent, base, 0);
	close(tparent);
	close(parent);
	if (rc < 0 && errno == ENOENT)
		return 0;   /* to an entry that was not extracted */
	return rc < 0 ? err_sys(err, errno, "entry '%s'", name) : 0;
}

static int perfarchive_symlinks(int root, struct perfarchive_link *links,
				size_t nr, struct err *err)
{
	const char *base;
	size_t i;

	for (i = 0; i < nr; i++) {
		int parent = perfarchive_parent(root, links[i].name, true,
						&base);

		if (parent < 0)
			return err_sys(err, errno, "entry '%s'", links[i].name);
		if (symlinkat(links[i].target, parent, base) < 0) {
			int e = errno;

			close(parent);
			return err_sys(err, e, "entry '%s'", links[i].name);
		}
		close(parent);
	}
	return 0;
}

static int perfarchive_extract(struct archive *ar, int root,
			       struct perfarchive_bounds *b,
			       struct perfarchive_link **links, size_t *nr,
			       size_t *alloc, struct err *err)
{
	char norm[PERFARCHIVE_NAME_MAX];
	struct archive_entry *e;
	size_t entries = 0;
	int rc, depth;

	while ((rc = pa_api.read_next_header(ar, &e)) != ARCHIVE_EOF) {
		const char *name, *hard;
		bool want;

		if (rc < ARCHIVE_WARN)
			return err_set(err, ERR_CORRUPT, ERR_NO_OFF,
				       "not a readable archive: %s",
				       pa_api.error_string(ar));
		name = pa_api.entry_pathname(e);
		if (!name)
			return err_set(err, ERR_CORRUPT, ERR_NO_OFF,
				       "an entry without a name");
		depth = perfarchive_norm(name, norm);
		if (depth < 0)
			return err_set(err, ERR_CORRUPT, ERR_NO_OFF,
				       "entry '%s' reaches outside the archive",
				       name);
		entries++;
		if (depth == 0)
			continue;   /* "./" itself */
		want = perfarchive_wanted(b->o, norm, depth);
		hard = pa_api.entry_hardlink(e);
		if (hard) {
			if (perfarchive_hardlink(root, norm, hard, want,
						 err) < 0)
				return -1;
			continue;
		}
		switch (pa_api.entry_filetype(e)) {
		case AE_IFDIR:
			/* made as their files need them */
			break;
		case AE_IFREG:
			if (want) {
				if (perfarchive_file(ar, root, norm, e, b,
						     err) < 0)
					return -1;
			} else if (!pa_api.entry_size_is_set(e)) {
				if (perfarchive_drain(ar, b, norm, err) < 0)
					return -1;
			} else if (perfarchive_count(b, (uint64_t)MAX(
						pa_api.entry_size(e), 0),
						norm, err) < 0) {
				return -1;   /* before skipping it */
			}
			break;
		case AE_IFLNK: {
			const char *t = pa_api.entry_symlink(e);
			struct perfarchive_link *l;

			if (!t || !perfarchive_link_ok(t, depth))
				return err_set(err, ERR_CORRUPT, ERR_NO_OFF,
					       "entry '%s': link to '%s' "
					       "reaches outside the archive",
					       name, t ? t : "");
			if (!want)
				break;
			if (mem_grow(links, alloc, sizeof(**links), *nr + 1) < 0)
				return err_set(err, ERR_NOMEM, ERR_NO_OFF,
					       "archive links");
			l = &(*links)[*nr];
			l->name = mem_strdup(norm);
			l->target = mem_strdup(t);
			(*nr)++;
			if (!l->name || !l->target)
				return err_set(err, ERR_NOMEM, ERR_NO_OFF,
					       "archive links");
			break;
		}
		default:
			return err_set(err, ERR_UNSUPPORTED, ERR_NO_OFF,
				       "entry '%s' is neither a file, a "
				       "directory nor a symbolic link", name);
		}
	}
	if (!entries)
		return err_set(err, ERR_FORMAT, ERR_NO_OFF,
			       "an empty archive");
	return perfarchive_symlinks(root, *links, *nr, err);
}

struct perfarchive *perfarchive_open(const char *path,
				     const struct perfarchive_opts *o,
				     struct err *err)
{
	struct perfarchive_bounds b = {
		.o = o,
		.max_file = o && o->max_file ? o->max_file :
			    PERFARCHIVE_DEFAULT_MAX_FILE,
		.max_total = o && o->max_total ? o->max_total :
			     PERFARCHIVE_DEFAULT_MAX_TOTAL,
	};
	struct perfarchive_link *links = NULL;
	size_t nr_links = 0, alloc_links = 0, i;
	struct perfarchive *a = NULL;
	struct archive *ar = NULL;
	const char *tmp = getenv("TMPDIR");
	char dir[4096];
	int root = -1, rc = -1;

	if (perfarchive_load_api(err) < 0)
		return NULL;
	a = mem_zalloc(1, sizeof(*a));
	ar = pa_api.read_new();
	if (!a || !ar) {
		err_set(err, ERR_NOMEM, ERR_NO_OFF, "archive");
		goto out;
	}
	snprintf(dir, sizeof(dir), "%s/restack-archive.XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (!sigclean_mkdtemp(dir, &a->clean)) {
		err_sys(err, errno, "temporary directory %s", dir);
		goto out;
	}
	a->dir = mem_strdup(dir);
	if (!a->dir) {
		locate_remove_tree(dir);
		err_set(err, ERR_NOMEM, ERR_NO_OFF, "archive");
		goto out;
	}
	root = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (root < 0) {
		err_sys(err, errno, "temporary directory %s", dir);
		goto out;
	}
	pa_api.read_support_filter_all(ar);
	pa_api.read_support_format_all(ar);
	if (pa_api.read_open_filename(ar, path, 1 << 16) != ARCHIVE_OK) {
		err_set(err, pa_api.errno_of(ar) == ENOENT ? ERR_IO : ERR_FORMAT,
			ERR_NO_OFF, "cannot read the archive: %s",
			pa_api.error_string(ar));
		goto out;
	}
	rc = perfarchive_extract(ar, root, &b, &links, &nr_links,
				 &alloc_links, err);
out:
	if (root >= 0)
		close(root);
	if (ar)
		pa_api.read_free(ar);
	for (i = 0; i < nr_links; i++) {
		free(links[i].name);
		free(links[i].target);
	}
	free(links);
	if (rc < 0) {
		perfarchive_close(a);
		return NULL;
	}
	return a;
}

const char *perfarchive_dir(const struct perfarchive *a)
{
	return a->dir;
}

void perfarchive_close(struct perfarchive *a)
{
	if (!a)
		return;
	locate_remove_tree(a->dir);
	sigclean_del(a->clean);
	free(a->dir);
	free(a);
}
