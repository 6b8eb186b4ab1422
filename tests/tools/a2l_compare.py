#!/usr/bin/env python3
"""a2l_compare.py - compare `restack symbolize` with binutils addr2line.

  a2l_compare.py RESTACK ELF [DEBUG|-] [COUNT] [SEED]

Picks COUNT random addresses in ELF's .text, asks `restack symbolize
--no-demangle` for the inline chain restack uses and `addr2line -a -f -i`
(on DEBUG when given: perf runs addr2line on the file it read symbols
from) for its answer, and prints the mismatches.  Exits 1 when any address differs.
"""
import random
import subprocess
import sys


def text_range(elf):
    out = subprocess.run(['readelf', '-SW', elf], capture_output=True,
                         text=True, check=True).stdout
    for line in out.splitlines():
        if ' .text ' in line:
            f = line.split(']', 1)[1].split()
            return int(f[2], 16), int(f[2], 16) + int(f[4], 16)
    raise SystemExit('%s has no .text' % elf)


def main():
    restack, elf = sys.argv[1], sys.argv[2]
    dbg = sys.argv[3] if len(sys.argv) > 3 and sys.argv[3] != '-' else None
    count = int(sys.argv[4]) if len(sys.argv) > 4 else 2000
    random.seed(int(sys.argv[5]) if len(sys.argv) > 5 else 1)
    lo, hi = text_range(elf)
    addrs = sorted({random.randrange(lo, hi) for _ in range(count)})
    hexs = ['%x' % a for a in addrs]
    cmd = [restack, 'symbolize', '--no-demangle'] + (['--debug', dbg]
                                                     if dbg else [])
    ours = subprocess.run(cmd + [elf] + hexs, capture_output=True, text=True,
                          check=True).stdout.splitlines()
    out = subprocess.run(['addr2line', '-a', '-f', '-i', '-e', dbg or elf] +
                         hexs, capture_output=True, text=True,
                         check=True).stdout.splitlines()
    theirs, cur, i = {}, None, 0
    while i < len(out):
        if out[i].startswith('0x'):
            cur = int(out[i], 16)
            theirs[cur] = []
            i += 1
            continue
        theirs[cur].append((out[i], out[i + 1]))
        i += 2
    bad = 0
    for line in ours:
        addr, sym, chain = line.split('\t')
        rec = theirs[int(addr, 16)]
        want = '-' if rec[0][1] == '??:0' else ';'.join(f for f, _ in rec)
        if chain != want:
            bad += 1
            if bad <= 10:
                print('# %s: restack %s, addr2line %s' % (addr, chain, want))
    print('%d of %d addresses differ' % (bad, len(ours)))
    sys.exit(1 if bad else 0)


if __name__ == '__main__':
    main()
