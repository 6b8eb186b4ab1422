#!/usr/bin/env python3
"""compare_names.py - compare the frame names of restack's script output
with perf script's, sample by sample (matched on thread id and time).

  compare_names.py [--depth N] PERF_SCRIPT_TXT RESTACK_SCRIPT_TXT [MIN_PERCENT]
  compare_names.py --symbolize RESTACK ELF PERF_SCRIPT_TXT

Unlike compare_stacks.py, which folds stacks the way stackcollapse-perf.pl
does (text from '(' dropped), this compares the whole names as printed,
'+0x..' offsets removed, at every position of perf's stack (leaf first,
inlined frames included): restack may go on past where perf stopped, and
its '[truncated: ...]' marker is not a frame, nor perf's ffffffffffffffff
[unknown] line where its unwinding gave up; --depth N compares only the
N innermost).  Prints the share of perf's frames whose name restack
printed at the same position and the share of samples with every name
equal; exits 1 when the share of frames is below MIN_PERCENT (default
99.9) or when there were no samples.

With --symbolize, it asks `restack symbolize` for the symbol of each
address perf script shows in ELF (not inlined frames: perf prints the
file offset, turned into an ELF address with the program headers) and
exits 1 unless every name equals perf's.
"""
import re
import subprocess
import sys

HEAD_RE = re.compile(r'^\S.*?\s(\d+)(?:/(\d+))?\s+(?:\[-?\d+\]\s+)?'
                     r'(\d+\.\d+):')
FRAME_RE = re.compile(r'^\s+([0-9a-f]+) (.*) \((.*)\)( [a-z-]+)?$')
# perf's DWARF unwinder ends a stack it could not unwind to its end (the
# stack copy ran out) with this address, "[unknown]": no frame, as
# restack's '[truncated: ...]' marker is none
PERF_NO_FRAME = 'ffffffffffffffff'


def load(path):
    """{(tid, time): [frame names, leaf first]} (first event only)."""
    out, key, frames = {}, None, []
    with open(path, errors='replace') as f:
        for line in f:
            line = line.rstrip('\n')
            if not line:
                if key is not None:
                    out.setdefault(key, []).append(frames)
                key, frames = None, []
                continue
            if key is None:
                m = HEAD_RE.match(line)
                if m:
                    tid = m.group(2) or m.group(1)
                    key = (tid, m.group(3))
                continue
            m = FRAME_RE.match(line)
            if not m or (m.group(4) or '') == ' marker' or \
                    m.group(1) == PERF_NO_FRAME:
                continue
            frames.append(re.sub(r'\+0x[0-9a-f]+$', '', m.group(2)))
    if key is not None:
        out.setdefault(key, []).append(frames)
    return out


def segments(elf):
    """[(offset, vaddr, filesz)] of ELF's PT_LOAD headers."""
    out = subprocess.run(['readelf', '-lW', elf], capture_output=True,
                         text=True, check=True).stdout
    return [(int(f[1], 16), int(f[2], 16), int(f[4], 16))
            for f in (line.split() for line in out.splitlines())
            if f and f[0] == 'LOAD']


def symbolize(restack, elf, perf_txt):
    segs, want = segments(elf), {}
    with open(perf_txt, errors='replace') as f:
        for line in f:
            m = FRAME_RE.match(line.rstrip('\n'))
            if not m or m.group(3) != elf or m.group(4):
                continue
            name = re.sub(r'\+0x[0-9a-f]+$', '', m.group(2))
            off = int(m.group(1), 16)
            for o, v, n in segs:
                if o <= off < o + n:
                    want[off - o + v] = name
                    break
    if not want:
        sys.exit('no frame of %s in %s' % (elf, perf_txt))
    addrs = sorted(want)
    out = subprocess.run([restack, 'symbolize', elf] +
                         ['%x' % a for a in addrs], capture_output=True,
                         text=True, check=True).stdout.splitlines()
    bad = 0
    for line in out:
        addr, sym, _ = line.split('\t')
        if sym != want[int(addr, 16)]:
            bad += 1
            if bad <= 5:
                print('# %s: restack %s, perf %s' % (addr, sym,
                                                    want[int(addr, 16)]))
    print('symbolize: %d of %d addresses named as perf names them' %
          (len(out) - bad, len(addrs)))
    sys.exit(1 if bad or len(out) != len(addrs) else 0)


def main():
    if len(sys.argv) == 5 and sys.argv[1] == '--symbolize':
        symbolize(*sys.argv[2:])
    args, depth = sys.argv[1:], None
    if args[:1] == ['--depth'] and len(args) > 1:
        depth, args = int(args[1]), args[2:]
    if len(args) not in (2, 3):
        sys.exit(__doc__.strip().splitlines()[2].strip())
    perf, ours = load(args[0]), load(args[1])
    need = float(args[2]) if len(args) > 2 else 99.9
    nframes = fsame = nsamples = ssame = shown = 0
    for key, stacks in perf.items():
        mine = ours.get(key, [])
        for i, st in enumerate(stacks):
            other = mine[i] if i < len(mine) else []
            st = st[:depth]
            nsamples += 1
            eq = sum(1 for k, name in enumerate(st)
                     if k < len(other) and other[k] == name)
            nframes += len(st)
            fsame += eq
            if eq == len(st):
                ssame += 1
                continue
            if shown < 5:
                shown += 1
                print('# tid %s time %s:' % key)
                for k, name in enumerate(st):
                    o = other[k] if k < len(other) else '(none)'
                    if o != name:
                        print('#   frame %d: perf %s' % (k, name))
                        print('#   frame %d: restack %s' % (k, o))
                        break
    fpct = 100.0 * fsame / nframes if nframes else 0.0
    spct = 100.0 * ssame / nsamples if nsamples else 0.0
    print('names equal: %d of %d frames (%.3f%%), all names equal in %d of '
          '%d samples (%.3f%%)' % (fsame, nframes, fpct, ssame, nsamples,
                                   spct))
    sys.exit(0 if nsamples and fpct >= need else 1)


if __name__ == '__main__':
    main()
