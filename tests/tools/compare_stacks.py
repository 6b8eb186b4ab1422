#!/usr/bin/env python3
"""compare_stacks.py - compare restack's stacks with perf script's, sample by
sample (matched on thread id and timestamp).

  compare_stacks.py [--root FRAME] [--strip-plt] PERF_SCRIPT_TXT
                    RESTACK_SCRIPT_TXT [MIN_PERCENT]

Both inputs are perf-script-shaped text (`perf script`, `restack convert
--to script`), folded per sample by collapse.py.  Prints how many samples
perf unwound to a thread root (its outermost frame is _start, clone3 and
the like; with --root, its stack contains FRAME: for stripped executables
whose _start has no name) and how many of those restack reproduced
exactly; exits 1 when that share is below MIN_PERCENT (default 99.9) or
when perf reached the root in no sample at all.  --strip-plt compares
frames without a "@plt" suffix on either side (for tests of something
else than how PLT entries are named).
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import collapse  # noqa: E402

ROOTS = {'_start', '__libc_start_main', 'start_thread', 'clone3', '__clone3',
         'clone', '__clone', '__GI___clone3', '__GI___clone'}


PLT_RE = re.compile(r'@plt(?=;|$)')


def load(path, strip_plt=False):
    out = {}
    with open(path, errors='replace') as f:
        for tid, tm, stack in collapse.samples(f, False, False):
            if strip_plt:
                stack = PLT_RE.sub('', stack)
            out.setdefault((tid, tm), []).append(stack)
    return out


def reaches_root(stack, root=None):
    frames = stack.split(';')
    if root is not None:
        return root in frames[1:]
    if len(frames) < 2 or frames[1] not in ROOTS:
        return False
    # clone3 calling the system call is the parent creating a thread: its
    # CFI ends before the syscall instruction, so perf stops there although
    # the parent's stack goes on (the child's clone3 runs from ret_from_fork)
    return not (frames[1].startswith(('clone', '__clone', '__GI___clone'))
                and len(frames) > 2 and frames[2].startswith('entry_SYSCALL'))


def main():
    args, root, strip_plt = sys.argv[1:], None, False
    while args[:1] in (['--root'], ['--strip-plt']):
        if args[0] == '--strip-plt':
            strip_plt, args = True, args[1:]
        elif len(args) > 1:
            root, args = args[1], args[2:]
        else:
            break
    if len(args) not in (2, 3):
        sys.exit(__doc__.strip().splitlines()[2].strip())
    perf, ours = load(args[0], strip_plt), load(args[1], strip_plt)
    need = float(args[2]) if len(args) > 2 else 99.9
    total = rooted = same = 0
    shown = 0
    for key, stacks in perf.items():
        mine = list(ours.get(key, []))
        for st in stacks:
            total += 1
            if not reaches_root(st, root):
                continue
            rooted += 1
            if st in mine:
                same += 1
                mine.remove(st)
            elif shown < 5:
                shown += 1
                print('# differs at tid %s time %s' % key)
                print('#   perf:    %s' % st)
                print('#   restack: %s' % (mine[0] if mine else '(none)'))
    ours_total = sum(len(v) for v in ours.values())
    share = 100.0 * same / rooted if rooted else 0.0
    print('perf samples %d, restack samples %d, perf reached the root in %d,'
          ' restack identical in %d (%.3f%%)' %
          (total, ours_total, rooted, same, share))
    sys.exit(0 if rooted and share >= need else 1)


if __name__ == '__main__':
    main()
