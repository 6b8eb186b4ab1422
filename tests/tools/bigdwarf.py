#!/usr/bin/env python3
"""bigdwarf.py - write a C program with a lot of DWARF, quick to compile.

  bigdwarf.py N > big.c

N functions, each with a struct type of 19 members and an inlined helper
called twice (about 0.8 KiB of DWARF per function at -O1 -g); main calls
them all, argv[1] times over (default 1).  tests/cli/dwcache.sh builds it
with compressed debug sections for the decompressed-DWARF cache.
"""
import sys


def main():
    n = int(sys.argv[1])
    out = ['#include <stdio.h>', '#include <stdlib.h>', '']
    for i in range(n):
        fields = ' '.join('long f%d_%d;' % (i, k) for k in range(16))
        out.append('struct s%d { int a%d; long b%d; double c%d; %s };'
                   % (i, i, i, i, fields))
        out.append('static inline __attribute__((always_inline)) long '
                   'in%d(struct s%d *p, long x) { long t = p->b%d * x + '
                   'p->a%d; p->c%d += t; return t ^ (x >> 3); }'
                   % (i, i, i, i, i))
        out.append('__attribute__((noinline)) long fn%d(long x) { '
                   'struct s%d v = { (int)x, x * 3, 0.5 }; long r = '
                   'in%d(&v, x); r += in%d(&v, r); return r + (long)v.c%d; }'
                   % (i, i, i, i, i))
    out.append('int main(int argc, char **argv)')
    out.append('{')
    out.append('\tlong x = argc, it, iters = argc > 1 ? atol(argv[1]) : 1;')
    out.append('\tfor (it = 0; it < iters; it++) {')
    for i in range(n):
        out.append('\t\tx = fn%d(x);' % i)
    out.append('\t}')
    out.append('\tprintf("%ld\\n", x);')
    out.append('\treturn 0;')
    out.append('}')
    print('\n'.join(out))


if __name__ == '__main__':
    main()
