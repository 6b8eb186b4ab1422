/*
 * harness.h - a tiny test harness for tests/unit/test_*.c.
 *
 * Each check prints one line in the protocol tests/run.sh reads:
 *   ok - NAME
 *   not ok - NAME        followed by "# ..." diagnostic lines
 *   skip - NAME (reason)
 * done_testing() returns the exit status for main(): 0 when every check
 * passed, 1 otherwise.  Checks evaluate their arguments once.
 */
#ifndef RESTACK_TESTS_HARNESS_H
#define RESTACK_TESTS_HARNESS_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static unsigned harness_passed, harness_failed;

/* Prints the result of one check; returns cond. */
static inline bool harness_report(bool cond, const char *file, int line,
				  const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static inline bool harness_report(bool cond, const char *file, int line,
				  const char *fmt, ...)
{
	va_list ap;

	fputs(cond ? "ok - " : "not ok - ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	if (cond) {
		harness_passed++;
	} else {
		harness_failed++;
		printf("#   at %s:%d\n", file, line);
	}
	return cond;
}

/* A diagnostic line (shown by the runner when the program fails). */
#define DIAG(...)                                  \
	do {                                       \
		fputs("# ", stdout);               \
		printf(__VA_ARGS__);               \
		putchar('\n');                     \
	} while (0)

/* CHECK(cond, "name %d", ...): passes when cond is true. */
#define CHECK(cond, ...) \
	harness_report(!!(cond), __FILE__, __LINE__, __VA_ARGS__)

/* Compares two integers as uint64_t; prints both on failure. */
#define CHECK_EQ_U64(got, want, ...)                                        \
	do {                                                                \
		uint64_t got_ = (uint64_t)(got), want_ = (uint64_t)(want); \
		if (!CHECK(got_ == want_, __VA_ARGS__))                     \
			DIAG("  got 0x%" PRIx64 " (%" PRIu64 "), want "     \
			     "0x%" PRIx64 " (%" PRIu64 ")",                 \
			     got_, got_, want_, want_);                      \
	} while (0)

/* Compares two strings; NULL equals only NULL. */
#define CHECK_STR(got, want, ...)                                          \
	do {                                                               \
		const char *got_ = (got), *want_ = (want);                 \
		bool eq_ = got_ && want_ ? strcmp(got_, want_) == 0 :      \
					   got_ == want_;                  \
		if (!CHECK(eq_, __VA_ARGS__))                              \
			DIAG("  got \"%s\", want \"%s\"",                  \
			     got_ ? got_ : "(null)",                       \
			     want_ ? want_ : "(null)");                    \
	} while (0)

/* Records a skipped check with its reason. */
#define SKIP(reason, ...)                          \
	do {                                       \
		fputs("skip - ", stdout);          \
		printf(__VA_ARGS__);               \
		printf(" (%s)\n", (reason));       \
	} while (0)

/* Prints a summary diagnostic and returns main()'s exit status. */
static inline int done_testing(void)
{
	printf("# %u passed, %u failed\n", harness_passed, harness_failed);
	fflush(stdout);
	return harness_failed ? 1 : 0;
}

#endif
