#!/usr/bin/env python3
"""pprof_traces.py - `go tool pprof -traces` output to folded stacks.

    go tool pprof -symbolize=none -traces [-sample_index=N -unit=ns] P |
        pprof_traces.py [--stacks] > FOLDED

Each sample of the report (after a `-----------+----` line: its labels as
`%10s:  VALUE` lines, then its frames leaf first, `%10s   %s`: the first
with the sample's value, the others with 13 spaces) becomes the line
`THREAD;outermost;...;leaf VALUE`, THREAD its `thread` label, named as
restack's folded output names frames (pprof's outermost `[truncated: ...]`
location included): function names tidied as stackcollapse-perf.pl does
(text from `(` dropped, quotes removed, `;` made `:`), a location without
lines `[FILE]` as pprof prints it (the basename of its mapping's file;
`[kernel.kallsyms]` is `[kernel]`), pprof's `<unknown>` (no mapping)
`[unknown]`, spaces in THREAD `_`.  Values must be whole numbers,
perhaps with a unit (`-unit=ns`: `500000ns`); identical stacks are
summed, the lines sorted.  A sample without a thread label or a value is
an error (exit 1).  With --stacks, the labels are ignored (a profile
without thread labels, as Go's own): the lines are the stacks alone, and
stacks whose values sum to 0 are left out.
"""
import re
import sys

SEP = re.compile(r'^-+\+-+$')
VALUE = re.compile(r'^(-?[0-9]+)([a-zA-Z]*)$')
# '%10s:  %s' and '%10s   %s', wider when the label or value is
LABEL = re.compile(r'^ *([^ ]+):  (.*)$')
HEAD = re.compile(r'^ *([^ ]+)   (.*)$')


def tidy(name):
    """A function name as folded output has it (tests/tools/pprof_fold.js
    does the same for pprof-format)."""
    end = len(name)
    if not re.search(r'\.\(.*\)\.', name):
        i = name.find('(')
        while i >= 0:
            if not name.startswith('(anonymous namespace)', i):
                end = i
                break
            i = name.find('(', i + 1)
    return name[:end].replace('"', '').replace("'", '').replace(';', ':')


def frame(name):
    if name == '<unknown>':
        return '[unknown]'
    if name == '[kernel.kallsyms]':
        return '[kernel]'
    if name.startswith('[') and name.endswith(']') and \
            not name.startswith('[truncated: '):
        return '[' + tidy(name[1:-1]) + ']'
    return tidy(name)


def main():
    only_stacks = sys.argv[1:] == ['--stacks']
    if sys.argv[1:] and not only_stacks:
        sys.exit('usage: pprof_traces.py [--stacks] < TRACES')
    stacks = {}
    samples = []
    cur = None
    for no, line in enumerate(sys.stdin, 1):
        line = line.rstrip('\n')
        if SEP.match(line):
            cur = {'labels': {}, 'frames': [], 'value': None, 'line': no}
            samples.append(cur)
            continue
        if cur is None:
            continue            # the report's header
        m = LABEL.match(line)
        if cur['value'] is None and m:
            cur['labels'][m.group(1)] = m.group(2)
            continue
        if line.startswith(' ' * 13):
            head, name = '', line[13:]
        else:
            m = HEAD.match(line)
            if not m:
                sys.exit('line %d: neither a label, a value nor a frame: %r'
                         % (no, line))
            head, name = m.group(1), m.group(2)
        if name.endswith(' (inline)'):
            name = name[:-len(' (inline)')]
        if head:
            if cur['value'] is not None:
                sys.exit('line %d: a second value in one sample' % no)
            m = VALUE.match(head)
            if not m:
                sys.exit('line %d: value %r is not a whole number' %
                         (no, head))
            cur['value'] = int(m.group(1))
        elif cur['value'] is None:
            sys.exit('line %d: a frame before the sample\'s value' % no)
        cur['frames'].append(name)
    if samples and not samples[-1]['labels'] and not samples[-1]['frames']:
        samples.pop()           # the separator after the last sample
    for s in samples:
        if s['value'] is None or \
                ('thread' not in s['labels'] and not only_stacks):
            sys.exit('line %d: a sample without a thread label or value' %
                     s['line'])
        head = [] if only_stacks else \
            [s['labels']['thread'].replace(' ', '_')]
        key = ';'.join(head + [frame(f) for f in s['frames'][::-1]])
        stacks[key] = stacks.get(key, 0) + s['value']
    for k in sorted(stacks):
        if stacks[k] or not only_stacks:
            print(k, stacks[k])
    print('%d samples, %d stacks' % (len(samples), len(stacks)),
          file=sys.stderr)
    return 0


if __name__ == '__main__':
    sys.exit(main())
