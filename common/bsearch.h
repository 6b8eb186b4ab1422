/*
 * bsearch.h - the search the address tables share (symbols, kernel
 * symbols, JIT code, mappings, CFI rows): in a table sorted by start
 * address, how many entries start at or below an address.  The entry
 * that may hold the address is the one before that count.
 *
 * UPPER_BOUND_DEFINE(name, type, start_of) defines
 *	static inline size_t name(type const *a, size_t n, uint64_t key);
 * returning how many of a[0..n) have start_of(&a[i]) <= key; a must be
 * sorted by start_of.  start_of is a macro or function taking a pointer
 * to an element, so the comparison is inlined.
 */
#ifndef RESTACK_COMMON_BSEARCH_H
#define RESTACK_COMMON_BSEARCH_H

#include <stddef.h>
#include <stdint.h>

#define UPPER_BOUND_DEFINE(name, type, start_of)                            \
	static inline size_t name(type const *a, size_t n, uint64_t key)    \
	{                                                                   \
		size_t lo = 0, hi = n;                                      \
                                                                            \
		while (lo < hi) {                                           \
			size_t mid = lo + (hi - lo) / 2;                    \
                                                                            \
			if (start_of(&a[mid]) <= key)                       \
				lo = mid + 1;                               \
			else                                                \
				hi = mid;                                   \
		}                                                           \
		return lo;                                                  \
	}

#endif
