#!/usr/bin/env python3
"""compare_dist.py - how far apart two profiles (folded stacks) are, against
the run-to-run noise between two recordings of the same workload.

  compare_dist.py TEST.folded REF.folded [NOISE.folded]

Prints, for TEST against REF (and for NOISE against REF when given):
  - tv: the total variation distance between the distributions of whole
    stacks (half the sum of absolute differences of their shares), and
  - incl: the largest difference in any function's inclusive share (the
    share of samples whose stack contains the function), over functions
    with at least 1% in either profile.
With NOISE, exits 1 unless TEST is within the noise: tv(TEST) <= 1.5 *
tv(NOISE) + 0.03 and incl(TEST) <= 2 * max(incl(NOISE), 0.03) + 0.02.

One pair of recordings is a poor estimate of the noise: over 8 pairs of
tests/cli/bigframes.sh's sqlite3 workload, incl(NOISE) ranged from 0.008
to 0.053 and incl(TEST) from 0.019 to 0.059, so incl(NOISE) counts as at
least MIN_INCL_NOISE.  A wrong profile is far off either way (the
unstitched one of that test: tv 0.99, incl 0.99).
"""
import sys

MIN_INCL_NOISE = 0.03


def load(path):
    stacks = {}
    with open(path, errors='replace') as f:
        for line in f:
            stack, _, count = line.rstrip('\n').rpartition(' ')
            if stack:
                stacks[stack] = stacks.get(stack, 0) + int(count)
    total = sum(stacks.values())
    return {k: v / total for k, v in stacks.items()} if total else {}


def inclusive(dist):
    out = {}
    for stack, share in dist.items():
        for name in set(stack.split(';')[1:]):
            out[name] = out.get(name, 0.0) + share
    return out


def distance(a, b):
    tv = 0.5 * sum(abs(a.get(k, 0.0) - b.get(k, 0.0)) for k in set(a) | set(b))
    ia, ib = inclusive(a), inclusive(b)
    worst, name = 0.0, '-'
    for k in set(ia) | set(ib):
        x, y = ia.get(k, 0.0), ib.get(k, 0.0)
        if max(x, y) >= 0.01 and abs(x - y) > worst:
            worst, name = abs(x - y), k
    return tv, worst, name


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__.strip().splitlines()[2].strip())
    test, ref = load(sys.argv[1]), load(sys.argv[2])
    if not test or not ref:
        sys.exit('compare_dist.py: an input has no samples')
    tv, incl, name = distance(test, ref)
    print('test vs ref:  tv %.4f  incl %.4f (%s)' % (tv, incl, name))
    if len(sys.argv) == 4:
        noise = load(sys.argv[3])
        ntv, nincl, nname = distance(noise, ref)
        print('noise vs ref: tv %.4f  incl %.4f (%s)' % (ntv, nincl, nname))
        if tv > 1.5 * ntv + 0.03 or \
                incl > 2 * max(nincl, MIN_INCL_NOISE) + 0.02:
            print('test is farther from ref than run-to-run noise')
            sys.exit(1)


if __name__ == '__main__':
    main()
