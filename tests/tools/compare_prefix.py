#!/usr/bin/env python3
"""compare_prefix.py - compare restack's stacks with perf's where perf did
not reach the root: as far as perf went, restack must agree.

  compare_prefix.py [--pac] [--root FRAME] PERF_SCRIPT_TXT RESTACK_SCRIPT_TXT

For every sample perf's walk did not take to a thread root (as
compare_stacks.py sees roots; --root FRAME as there), perf's frames must
be restack's innermost frames (both folded by collapse.py).  A last frame
of perf's at a return address signed with pointer authentication (PAC: a
user address with bits above the 48-bit address space set) is left out:
it is where perf went wrong.  With --pac (a capture of a program built
with -mbranch-protection), perf's last frame, with the inline frames at
its address, is always left out: perf 6.1's DWARF unwinding on arm64
stops at the first signed return address, and what it shows for it is
that address, a repeat of the frame before, or a frame made of the link
register's stale value.  No frame of restack's may have a signed
address.  Prints the counts; exits 1 on any difference.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import collapse  # noqa: E402
import compare_stacks  # noqa: E402

ADDR_RE = re.compile(r'^\s+([0-9a-f]+) ')


def signed(addr):
    """A user address with PAC bits; kernel addresses are 0xffff..."""
    return addr >> 48 != 0 and addr >> 48 != 0xffff


def blocks(path):
    """Yields each sample's frame addresses, leaf first, in file order."""
    addrs = []
    with open(path, errors='replace') as f:
        for line in f:
            if not line.strip():
                if addrs:
                    yield addrs
                addrs = []
                continue
            m = ADDR_RE.match(line)
            if m:
                addrs.append(int(m.group(1), 16))
    if addrs:
        yield addrs


def folded(path):
    with open(path, errors='replace') as f:
        return list(collapse.samples(f, False, False))


def main():
    args, root, pac_mode = sys.argv[1:], None, False
    while args[:1] in (['--root'], ['--pac']):
        if args[0] == '--pac':
            pac_mode, args = True, args[1:]
        elif len(args) > 1:
            root, args = args[1], args[2:]
        else:
            break
    if len(args) != 2:
        sys.exit(__doc__.strip().splitlines()[2].strip())
    perf_path, ours_path = args
    ours = {}
    for tid, tm, stack in folded(ours_path):
        ours.setdefault((tid, tm), []).append(stack.split(';')[1:][::-1])
    bad = sum(1 for addrs in blocks(ours_path) for a in addrs if signed(a))
    compared = same = longer = pac = 0
    shown = 0
    for (tid, tm, stack), addrs in zip(folded(perf_path), blocks(perf_path)):
        if compare_stacks.reaches_root(stack, root):
            continue
        want = stack.split(';')[1:][::-1]
        if len(addrs) == len(want) and addrs and (pac_mode or
                                                  signed(addrs[-1])):
            last = len(addrs) - 1
            while last > 0 and addrs[last - 1] == addrs[-1]:
                last -= 1          # the inline frames at that address
            want = want[:last]
            pac += 1
        compared += 1
        mine = ours.get((tid, tm), [[]])[0]
        if mine[:len(want)] == want:
            same += 1
            longer += len(mine) > len(want)
        elif shown < 5:
            shown += 1
            print('# differs at tid %s time %s' % (tid, tm))
            print('#   perf:    %s' % ';'.join(want))
            print('#   restack: %s' % ';'.join(mine[:len(want) + 2]))
    print('perf did not reach the root in %d samples (%d with a last '
          'frame at a PAC-signed return address left out); restack had its frames in %d, and '
          'more in %d; restack frames at signed addresses: %d' %
          (compared, pac, same, longer, bad))
    sys.exit(0 if same == compared and not bad else 1)


if __name__ == '__main__':
    main()
