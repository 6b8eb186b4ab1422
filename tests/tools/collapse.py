#!/usr/bin/env python3
"""collapse.py - fold `perf script` text (or restack's --to script output)
the way FlameGraph's stackcollapse-perf.pl does, one stack per sample.

  collapse.py [--pid] [--tid] FILE        folded lines "stack count", sorted
  collapse.py --per-sample FILE           "tid time<TAB>stack" per sample

It follows stackcollapse-perf.pl's defaults: only the first event type seen
is kept, frames are function names with "+0x.." offsets removed, inline
frames are frames of their own, "[unknown]" becomes "[module basename]",
";" becomes ":", text from "(" on is dropped (not "(anonymous namespace)"),
quotes are removed, and spaces in the command name become "_".
"""
import re
import sys

EVENT_RE = re.compile(r'^(\S.+?)\s+(\d+)/*(\d+)*\s+')
PERIOD_RE = re.compile(r':\s*(\d+)*\s+(\S+):\s*$')
TIME_RE = re.compile(r'\s(\d+\.\d+):')
FRAME_RE = re.compile(r'^\s*(\w+)\s*(.+) \((\S*)\)')


def tidy(func):
    func = func.replace(';', ':')
    if not re.search(r'\.\(.*\)\.', func):
        func = re.sub(r'\((?!anonymous namespace\)).*', '', func)
    return func.replace('"', '').replace("'", '')


def samples(lines, want_pid, want_tid):
    """Yields (tid, time, folded stack) per sample."""
    event_filter = None
    stack, pname, skip, key = [], None, False, None
    for line in lines:
        line = line.rstrip('\n')
        if line.startswith('#'):
            continue
        if line == '':
            if pname is not None and not skip and stack:
                yield key + (';'.join([pname] + stack),)
            stack, pname, skip, key = [], None, False, None
            continue
        m = EVENT_RE.match(line)
        if m and pname is None:
            comm, pid, tid = m.group(1), m.group(2), m.group(3)
            if not tid:
                tid, pid = pid, '?'
            pm = PERIOD_RE.search(line)
            if pm:
                event = pm.group(2)
                if event_filter is None:
                    event_filter = event
                elif event != event_filter:
                    skip = True
            if want_tid:
                pname = '%s-%s/%s' % (comm, pid, tid)
            elif want_pid:
                pname = '%s-%s' % (comm, pid)
            else:
                pname = comm
            pname = pname.replace(' ', '_')
            tm = TIME_RE.search(line)
            key = (tid, tm.group(1) if tm else '?')
            continue
        m = FRAME_RE.match(line)
        if m and pname is not None:
            pc, rawfunc, mod = m.group(1), m.group(2), m.group(3)
            rawfunc = re.sub(r'\+0x[\da-f]+$', '', rawfunc)
            if rawfunc.startswith('('):
                continue
            inline = []
            for func in rawfunc.split('->'):
                if func == '[unknown]':
                    if mod != '[unknown]':
                        func = '[' + mod.rsplit('/', 1)[-1] + ']'
                    else:
                        func = '[unknown]'
                inline.append(tidy(func))
            stack = inline + stack
    if pname is not None and not skip and stack:
        yield key + (';'.join([pname] + stack),)


def main():
    args = sys.argv[1:]
    per_sample = '--per-sample' in args
    want_pid = '--pid' in args
    want_tid = '--tid' in args
    files = [a for a in args if not a.startswith('--')]
    with open(files[0], errors='replace') as f:
        if per_sample:
            for tid, tm, st in samples(f, want_pid, want_tid):
                print('%s %s\t%s' % (tid, tm, st))
            return
        counts = {}
        for _, _, st in samples(f, want_pid, want_tid):
            counts[st] = counts.get(st, 0) + 1
    for st in sorted(counts, key=lambda s: s.encode()):
        print('%s %d' % (st, counts[st]))


if __name__ == '__main__':
    main()
