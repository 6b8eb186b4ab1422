/* libwork.c - the shared library of threads.c: a leaf that spins. */
#include <math.h>

__attribute__((noinline)) double lib_work(int n)
{
	double s = 0;
	int i;

	for (i = 0; i < n; i++)
		s += sqrt(i * 1.5);
	return s;
}
