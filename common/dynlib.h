/*
 * dynlib.h - load an optional shared library when it is first needed.
 *
 * libdebuginfod pulls in libcurl, GnuTLS, Kerberos and LDAP, libarchive
 * libxml2 and ICU: linked in, they cost every run about 10 ms and 9 MB
 * before main() while most runs use neither.  elfutils' libdwfl opens
 * libdebuginfod the same way.
 */
#ifndef RESTACK_COMMON_DYNLIB_H
#define RESTACK_COMMON_DYNLIB_H

#include <stddef.h>

#include "common/err.h"

/* One function to find: its name and where its pointer goes in the table. */
struct dynlib_sym {
	const char *name;
	size_t offset;
};

#define DYNLIB_SYM(type, field, name) { name, offsetof(type, field) }

/*
 * Opens soname (once; it stays loaded) and stores the address of each
 * syms[i].name at syms[i].offset in table.  Returns 0, or -1 with *err
 * filled (ERR_UNSUPPORTED: the library or a function is missing).  Call it
 * from one thread at a time.
 */
int dynlib_load(const char *soname, void *table,
		const struct dynlib_sym *syms, size_t nr, struct err *err);

#endif
