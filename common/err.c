/*
 * err.c - struct err helpers.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/err.h"

static void err_vset(struct err *e, enum err_code code, int sys_errno,
		     uint64_t off, const char *fmt, va_list ap)
{
	e->code = code;
	e->sys_errno = sys_errno;
	e->off = off;
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
}

int err_set(struct err *e, enum err_code code, uint64_t off, const char *fmt,
	    ...)
{
	va_list ap;

	if (!e)
		return -1;
	va_start(ap, fmt);
	err_vset(e, code, 0, off, fmt, ap);
	va_end(ap);
	return -1;
}

int err_sys(struct err *e, int sys_errno, const char *fmt, ...)
{
	va_list ap;
	size_t len;

	if (!e)
		return -1;
	va_start(ap, fmt);
	err_vset(e, sys_errno == ENOMEM ? ERR_NOMEM : ERR_IO, sys_errno,
		 ERR_NO_OFF, fmt, ap);
	va_end(ap);
	len = strlen(e->msg);
	if (len < sizeof(e->msg))
		snprintf(e->msg + len, sizeof(e->msg) - len, ": %s",
			 strerror(sys_errno));
	return -1;
}

const char *err_code_str(enum err_code code)
{
#define X(name, text) text,
	static const char *const texts[] = { ERR_LIST(X) };
#undef X
	if ((unsigned)code >= ARRAY_SIZE(texts))
		return "unknown error";
	return texts[code];
}

void err_clear(struct err *e)
{
	if (!e)
		return;
	e->code = ERR_OK;
	e->sys_errno = 0;
	e->off = ERR_NO_OFF;
	e->msg[0] = '\0';
}
