/*
 * cmd.h - the restack commands and what they share: exit codes, error
 * printing and option helpers.  Only cmd/ prints or exits.
 */
#ifndef RESTACK_CMD_CMD_H
#define RESTACK_CMD_CMD_H

#include <stdio.h>

#include "common/err.h"

#define RESTACK_VERSION "0.1.0"

/* Exit statuses (README.md, "Exit status"). */
enum {
	EXIT_OK = 0,
	EXIT_GATE = 1,   /* output written, but a --min-coverage or
			  * --fail-above gate failed */
	EXIT_BAD = 2,    /* the input could not be read or converted */
	EXIT_USAGE = 64, /* bad command line */
};

int cmd_info(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_symbolize(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_diff(int argc, char **argv);

/* "restack: FILE+0xOFF: message" (or without the offset) on stderr. */
void cmd_report_err(const char *file, const struct err *e);

/* "restack: message" on stderr. */
void cmd_error(const char *fmt, ...) PRINTF_LIKE(1, 2);

/*
 * Prints "restack CMD: MSG" and the usage text to stderr; returns
 * EXIT_USAGE.  usage is a NULL-terminated list of lines.
 */
int cmd_usage_error(const char *const *usage, const char *fmt, ...)
	PRINTF_LIKE(2, 3);

/* Prints the usage lines to f. */
void cmd_print_usage(FILE *f, const char *const *usage);

/*
 * Prints the usage lines to f but for the options named in skip (long
 * names with their dashes, NULL-terminated): their lines and the lines
 * that continue them.
 */
void cmd_print_usage_except(FILE *f, const char *const *usage,
			    const char *const *skip);

/* Writes the whole buffer to stdout; returns 0 or -1 (error printed). */
int cmd_write_stdout(const char *buf, size_t len);

#endif
