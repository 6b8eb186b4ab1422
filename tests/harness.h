/*
 * harness.h - a tiny test harness for tests/unit/test_*.c.
 *
 * Each check prints one line in the protocol tests/run.sh reads:
 *   ok - NAME
 *   not ok - NAME        followed by "# ..." diagnostic lines
 *   skip - NAME (reason)
 * done_testing() returns the exit status for main(): 0 when every check
 * passed, 1 otherwise.  Checks evaluate their arguments once and return
 * whether they passed.
 */
#ifndef RESTACK_TESTS_HARNESS_H
#define RESTACK_TESTS_HARNESS_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static unsigned harness_passed, harness_failed;

static inline bool harness_vreport(bool cond, const char *file, int line,
				   const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0)));
static inline bool harness_vreport(bool cond, const char *file, int line,
				   const char *fmt, va_list ap)
{
	fputs(cond ? "ok - " : "not ok - ", stdout);
	vprintf(fmt, ap);
	putchar('\n');
	if (cond) {
		harness_passed++;
	} else {
		harness_failed++;
		printf("#   at %s:%d\n", file, line);
	}
	return cond;
}

/* Prints the result of one check; returns cond. */
static inline bool harness_report(bool cond, const char *file, int line,
				  const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static inline bool harness_report(bool cond, const char *file, int line,
				  const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	harness_vreport(cond, file, line, fmt, ap);
	va_end(ap);
	return cond;
}

static inline bool harness_eq_u64(uint64_t got, uint64_t want,
				  const char *file, int line,
				  const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static inline bool harness_eq_u64(uint64_t got, uint64_t want,
				  const char *file, int line,
				  const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	harness_vreport(got == want, file, line, fmt, ap);
	va_end(ap);
	if (got != want)
		printf("#   got 0x%" PRIx64 " (%" PRIu64 "), want 0x%" PRIx64
		       " (%" PRIu64 ")\n", got, got, want, want);
	return got == want;
}

static inline bool harness_eq_str(const char *got, const char *want,
				  const char *file, int line,
				  const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static inline bool harness_eq_str(const char *got, const char *want,
				  const char *file, int line,
				  const char *fmt, ...)
{
	bool eq = got && want ? strcmp(got, want) == 0 : got == want;
	va_list ap;

	va_start(ap, fmt);
	harness_vreport(eq, file, line, fmt, ap);
	va_end(ap);
	if (!eq) {
		printf("#   got  \"%s\"\n", got ? got : "(null)");
		printf("#   want \"%s\"\n", want ? want : "(null)");
	}
	return eq;
}

/* A diagnostic line (shown by the runner when the program fails). */
#define DIAG(...)                                  \
	do {                                       \
		fputs("# ", stdout);               \
		printf(__VA_ARGS__);               \
		putchar('\n');                     \
	} while (0)

/*
 * CHECK(cond, "name %d", ...): passes when cond is true.  Like the other
 * checks it is an expression whose value is whether it passed.
 */
#define CHECK(cond, ...) \
	harness_report(!!(cond), __FILE__, __LINE__, __VA_ARGS__)

/* Compares two integers as uint64_t; prints both on failure. */
#define CHECK_EQ_U64(got, want, ...)                                     \
	harness_eq_u64((uint64_t)(got), (uint64_t)(want), __FILE__, __LINE__, \
		       __VA_ARGS__)

/* Compares two strings; NULL equals only NULL. */
#define CHECK_STR(got, want, ...) \
	harness_eq_str((got), (want), __FILE__, __LINE__, __VA_ARGS__)

/* Records a skipped check with its reason. */
#define SKIP(reason, ...)                          \
	do {                                       \
		fputs("skip - ", stdout);          \
		printf(__VA_ARGS__);               \
		printf(" (%s)\n", (reason));       \
	} while (0)

/*
 * What a writer put in the temporary file f (a NUL after it), malloc'd,
 * its length in *len; closes f.  NULL when it cannot be read.
 */
static inline char *harness_read_back(FILE *f, size_t *len)
{
	off_t n = lseek(fileno(f), 0, SEEK_END);
	char *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;

	if (buf && pread(fileno(f), buf, (size_t)n, 0) != n) {
		free(buf);
		buf = NULL;
	}
	if (buf)
		buf[n] = '\0';
	*len = n >= 0 ? (size_t)n : 0;
	fclose(f);
	return buf;
}

/* Prints a summary diagnostic and returns main()'s exit status. */
static inline int done_testing(void)
{
	printf("# %u passed, %u failed\n", harness_passed, harness_failed);
	fflush(stdout);
	return harness_failed ? 1 : 0;
}

#endif
