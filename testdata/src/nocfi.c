/*
 * nocfi.c - code without unwind information, for the unwinder's recovery
 * steps: nocfi.S is a hand-written frame with no CFI and no frame pointer
 * between main and a C leaf (found again by the stack scan), and plt_loop
 * calls labs() through a PLT entry that has no CFI when linked with
 * -Wl,--no-ld-generated-unwind-info (found again by the PLT rule).
 *
 *   cc -O2 -g -fomit-frame-pointer -fno-builtin \
 *      -Wl,--no-ld-generated-unwind-info -o nocfi nocfi.c nocfi.S
 *   ./nocfi [ROUNDS]
 */
#include <stdio.h>
#include <stdlib.h>

void nocfi_frame(void (*leaf)(void));

volatile unsigned long sink;

__attribute__((noinline)) void spin_leaf(void)
{
	unsigned long i;

	for (i = 0; i < 400000; i++)
		sink += i;
}

__attribute__((noinline)) long plt_loop(long n)
{
	long i, s = 0;

	for (i = -n; i < n; i++)
		s += labs(i);
	return s;
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 2000;
	long r, s = 0;

	for (r = 0; r < rounds; r++) {
		nocfi_frame(spin_leaf);
		s += plt_loop(100000);
	}
	printf("%ld\n", s > 0 ? 1L : 0L);
	return 0;
}
