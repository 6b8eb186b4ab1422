/*
 * cfiedge_lib.c - a shared library whose constructor spins: the dynamic
 * linker runs it from _dl_init, called by its entry code (_start,
 * _dl_start_user), which no CFI covers; the walk's root is there.
 * Built by cfiedge.c's commands.
 */
volatile unsigned long cfiedge_lib_sink;

__attribute__((noinline)) static void cfiedge_lib_spin(long n)
{
	long i;

	for (i = 0; i < n; i++)
		cfiedge_lib_sink += (unsigned long)i;
}

__attribute__((constructor)) static void cfiedge_lib_init(void)
{
	cfiedge_lib_spin(200000000);
}

void cfiedge_lib_mark(void)
{
	cfiedge_lib_sink++;
}
