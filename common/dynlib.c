/*
 * dynlib.c - optional shared libraries, opened on first use (dynlib.h).
 */
#include <dlfcn.h>
#include <string.h>

#include "common/dynlib.h"

int dynlib_load(const char *soname, void *table,
		const struct dynlib_sym *syms, size_t nr, struct err *err)
{
	void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
	size_t i;

	if (!h)
		return err_set(err, ERR_UNSUPPORTED, ERR_NO_OFF,
			       "cannot load %s (%s)", soname, dlerror());
	for (i = 0; i < nr; i++) {
		void *f = dlsym(h, syms[i].name);

		if (!f)
			return err_set(err, ERR_UNSUPPORTED, ERR_NO_OFF,
				       "%s has no %s", soname, syms[i].name);
		memcpy((char *)table + syms[i].offset, &f, sizeof(f));
	}
	return 0;
}
