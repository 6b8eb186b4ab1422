/*
 * cfiedge.c - drives cfiedge.S's frames, and a shared library's
 * constructor (cfiedge_lib.c) that spins before main, called by the
 * dynamic linker's entry code, which has no CFI.
 *
 *   cc -O2 -g -fomit-frame-pointer -shared -fPIC -o libcfiedge.so \
 *      cfiedge_lib.c
 *   cc -O2 -g -fomit-frame-pointer -o cfiedge cfiedge.c cfiedge.S \
 *      -L. -lcfiedge -Wl,-rpath,'$ORIGIN'
 *   ./cfiedge [ROUNDS]
 */
#include <stdio.h>
#include <stdlib.h>

void ra_in_reg(long n);
void rbx_cfa(long n);
void fp_caller(long n);
void syscall_end(void);
void cfiedge_lib_mark(void);

volatile unsigned long sink;

__attribute__((noinline)) void spin_leaf(long n)
{
	long i;

	for (i = 0; i < n; i++)
		sink += (unsigned long)i;
}

__attribute__((noinline)) void syscall_loop(long n)
{
	long i;

	for (i = 0; i < n; i++)
		syscall_end();
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 100;
	long r;

	cfiedge_lib_mark();
	for (r = 0; r < rounds; r++) {
		ra_in_reg(2000000);
		rbx_cfa(2000000);
		fp_caller(2000000);
		syscall_loop(20000);
	}
	printf("%lu\n", sink > 0 ? 1UL : 0UL);
	return 0;
}
