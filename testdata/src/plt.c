/*
 * plt.c - calls through the PLT in a hot loop, for tests/cli/plt.sh: a
 * dozen cheap libc functions, each through its PLT entry, so that samples
 * land in most entries.  Built with -fno-builtin; the loop is compiled
 * without optimisation so that every call stays a call.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

__attribute__((optimize("O0"), noinline)) static unsigned long
plt_loop(long n)
{
	unsigned long s = 0;
	long i;

	for (i = 0; i < n; i++) {
		s += (unsigned long)abs((int)i);
		s += (unsigned long)labs(i);
		s += (unsigned long)llabs(i);
		s += (unsigned long)ffs((int)i);
		s += (unsigned long)ffsl(i);
		s += (unsigned long)toupper((int)(i & 127));
		s += (unsigned long)tolower((int)(i & 127));
		s += (unsigned long)isalpha((int)(i & 127));
		s += strlen("abc");
		s += strnlen("abcdef", 4);
		s += (unsigned long)(strchr("xyz", 'z') != NULL);
		s += (unsigned long)(memchr("xyz", 'y', 3) != NULL);
	}
	return s;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10000000;

	printf("%lu\n", plt_loop(n));
	return 0;
}
