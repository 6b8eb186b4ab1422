/*
 * util.c - error printing and usage helpers shared by the commands.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"

void cmd_report_err(const char *file, const struct err *e)
{
	if (e->off != ERR_NO_OFF)
		fprintf(stderr, "restack: %s+0x%llx: %s\n", file,
			(unsigned long long)e->off, e->msg);
	else
		fprintf(stderr, "restack: %s: %s\n", file, e->msg);
}

void cmd_error(const char *fmt, ...)
{
	va_list ap;

	fputs("restack: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void cmd_print_usage(FILE *f, const char *const *usage)
{
	for (; *usage; usage++)
		fprintf(f, "%s\n", *usage);
}

int cmd_usage_error(const char *const *usage, const char *fmt, ...)
{
	va_list ap;

	fputs("restack: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	cmd_print_usage(stderr, usage);
	return EXIT_USAGE;
}

int cmd_write_stdout(const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(STDOUT_FILENO, buf, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			cmd_error("cannot write to standard output: %s",
				  strerror(errno));
			return -1;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

void cmd_print_usage_except(FILE *f, const char *const *usage,
			    const char *const *skip)
{
	bool skipping = false;
	size_t i, j;

	for (i = 0; usage[i]; i++) {
		const char *t = usage[i] + strspn(usage[i], " ");

		if (*t == '-') {
			skipping = false;
			for (j = 0; skip[j]; j++) {
				const char *at = strstr(t, skip[j]);
				char after = at ? at[strlen(skip[j])] : 'x';

				if (at && (after == ' ' || after == '=' ||
					   after == '\0'))
					skipping = true;
			}
		}
		if (!skipping)
			fprintf(f, "%s\n", usage[i]);
	}
}
