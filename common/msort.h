/*
 * msort.h - a stable merge sort with an inlined comparison, for the tables
 * built at start-up (symbols, addr2line's function order), where qsort's
 * indirect calls cost more than the sort itself.
 *
 * MSORT_DEFINE(name, type, before) defines
 *	static void name(type *a, size_t n, type *tmp);
 * which sorts a[0..n) so that no element comes after one it is before();
 * equal elements keep their order.  tmp (caller-owned) has room for
 * n / 2 + 1 elements.  An already ordered run costs one comparison per
 * merge.
 */
#ifndef RESTACK_COMMON_MSORT_H
#define RESTACK_COMMON_MSORT_H

#include <stddef.h>
#include <string.h>

#define MSORT_DEFINE(name, type, before)                                     \
	static void name(type *a, size_t n, type *tmp)                       \
	{                                                                    \
		size_t mid = n / 2, i, j, k;                                 \
                                                                             \
		if (n <= 16) {                                               \
			for (i = 1; i < n; i++) {                            \
				type x = a[i];                               \
                                                                             \
				for (j = i; j && before(&x, &a[j - 1]); j--) \
					a[j] = a[j - 1];                     \
				a[j] = x;                                    \
			}                                                    \
			return;                                              \
		}                                                            \
		name(a, mid, tmp);                                           \
		name(a + mid, n - mid, tmp);                                 \
		if (!before(&a[mid], &a[mid - 1]))                           \
			return;                                              \
		memcpy(tmp, a, mid * sizeof(*a));                            \
		for (i = 0, j = mid, k = 0; i < mid && j < n;)               \
			a[k++] = before(&a[j], &tmp[i]) ? a[j++] : tmp[i++]; \
		while (i < mid)                                              \
			a[k++] = tmp[i++];                                   \
	}

#endif
