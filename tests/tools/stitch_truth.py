#!/usr/bin/env python3
"""stitch_truth.py - judge restack's stitching against ground truth.

  stitch_truth.py --restack PATH --full FULL.data --crop CROP.data
                  [--mode on|strict|off|validate]... [--label TEXT]
                  [--show-wrong N] [--restack-arg ARG]...

FULL.data is recorded with `--call-graph dwarf,65528` (every stack fits
in the copy); CROP.data is the same capture with each sample's copy cut
to 8192 or 4096 bytes (crop_stack.py).  Both are converted with `restack
convert --to script` (FULL with --stitch=off: its stacks are the truth),
samples are matched by thread and time, and every cropped sample whose
true stack is complete (no `[truncated: ...]` frame) is classified per
mode (default: on, strict, off and validate):

  exact    the same frames (address, function, module; origin ignored)
  honest   marked `[truncated: ...]`, and its frames are the truth's
           innermost ones (a leaf-side prefix)
  WRONG    anything else: unmarked but different, or marked but not a
           prefix of the truth
  silent   the WRONG ones that carry no marker (a complete-looking,
           wrong stack)

"cut" samples are those the copy cut: with --stitch=off their cropped
stack ends `[truncated: window exhausted]`; wrong_cut_pct is WRONG among
them (the share --validate-stitch estimates: it too only counts stacks
that needed stitching).

The unambiguous ceiling bounds what an honest stitcher can get exact
from what a root cache can know: the frames the cropped samples show.
A sample's visible frames are the leaf-side ones of its true user frames
that CROP.data's --stitch=off stack shows, each named by the truth's (pc,
stack pointer); its visible links are frame i -> i+1 among them, and the
outermost -> ROOT when the whole stack shows (no marker).  A sample is
counted when --stitch=off already gets it exact, or when it was cut
(`window exhausted`, a prefix of the truth) with at least two frames and:
the join pair (its outermost two) is linked in some OTHER sample, and,
from the outermost frame, the callers OTHER samples link each frame to
are one per frame (ROOT counts) up to ROOT, and are the truth's outer
frames.  When no other sample shows the outermost frame's caller (a big
main() whose caller lies beyond every cropped copy but that was seen
from a shallower call site), the chain may join: other visible frames at
the same sp in the same function and module ([unknown] included) whose
callers elsewhere are one and the same, at the sp of the truth's next
frame.  So with a 4 KiB copy and main()'s frame over 4 KiB, no sample
ever shows main's caller and the ceiling is 0.  The ceiling counts a
caller seen once; restack may ask for more (st_threads at 4 KiB: about
a third, restack much less).  `ceiling64` is the earlier bound, for
comparison only: it asks instead that every other sample of the thread
whose TRUE (64 KiB) stack contains the cut walk's outermost two frames
continues with the same outer frames; it says 100% where no cropped
sample shows the outer part.

Script output shows no stack pointers, so each true frame's sp is found
in FULL.data's stack copy: frame i's return address is the word at
CFA(i-1) - 8, searched upward from the previous one; a frame size
learned per pc (the most common distance between return-address slots)
is tried first, so that a stale copy of a return address in a frame's
locals is not taken for it.  x86-64 only (perf register 7 is sp);
elsewhere frames are matched on pc alone and never joined, which can
only lower the ceiling ("ceiling_by_pc=1" in the output).  Both ceilings
look at every other sample of the thread, earlier or later: where the
outer frames' code changes during the capture (JIT code tiered up or
recompiled: node), the same frames continue with other addresses and
count as ambiguous, so the ceiling is low there and says little.

`validate` runs `restack stats --validate-stitch CROP.data` and prints
the numbers of its "stitch check" line (and the JSON's, if it has any):
checked, exact and, when restack reports them, honest and wrong.

Output: one line per mode, `key=value` words after the label (what
tests/cli/stitch_truth.sh reads), then, with --show-wrong N, up to N
WRONG samples per mode with truth and result, leaf first.  Exit 0, 2
when an input cannot be read, 64 on a usage error.
"""
import argparse
import collections
import json
import os
import re
import struct
import subprocess
import sys
import tempfile
from array import array

sys.dont_write_bytecode = True   # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import crop_stack as cs  # noqa: E402

HEAD_RE = re.compile(r'^\S.*?\s(\d+)/(\d+)\s+(?:\[[-\d]+\]\s+)?'
                     r'(\d+\.\d+):')
FRAME_RE = re.compile(r'^\s+([0-9a-f]+) (.*) \((.*)\) (\S+)$')
X86_SP = 7


class TruthError(Exception):
    pass


# --- restack's script output -----------------------------------------

class Frame:
    """A physical frame: its pc and the lines shown for it (inlined calls
    first, as in the output), each (address, function, module)."""
    __slots__ = ('pc', 'lines', 'user')

    def __init__(self, pc, lines, user):
        self.pc, self.lines, self.user = pc, lines, user


class Stack:
    __slots__ = ('frames', 'marker', 'key')

    def __init__(self, frames, marker):
        self.frames, self.marker = frames, marker
        self.key = tuple(ln for f in frames for ln in f.lines)


def parse_script(path):
    """{(tid, 'sec.usec'): Stack} from restack's script output."""
    out = {}
    key, lines, marker = None, [], None

    def flush():
        frames, pend = [], []
        for addr, func, mod, origin in lines:
            pend.append((addr, func, mod))
            if mod == 'inlined':
                continue
            user = not mod.startswith('[kernel')
            frames.append(Frame(int(addr, 16), tuple(pend), user))
            pend = []
        if pend:
            frames.append(Frame(int(pend[-1][0], 16), tuple(pend), True))
        out[key] = Stack(frames, marker)

    with open(path, errors='replace') as f:
        for line in f:
            line = line.rstrip('\n')
            if not line:
                if key is not None:
                    flush()
                key, lines, marker = None, [], None
                continue
            if key is None:
                m = HEAD_RE.match(line)
                if m:
                    key = (int(m.group(2)), m.group(3))
                continue
            m = FRAME_RE.match(line)
            if not m:
                continue
            if m.group(4) == 'marker' or m.group(2).startswith('[truncated'):
                marker = m.group(2)
                continue
            lines.append(m.groups())
    if key is not None:
        flush()
    return out


def run_restack(args, restack, extra, path, mode, tmp):
    out = os.path.join(tmp, 'out-%s-%s.txt' % (os.path.basename(path),
                                                mode))
    cmd = [restack, 'convert', '--stitch=' + mode, '--to', 'script'] + \
        extra + [path, '-o', out]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    if r.returncode != 0:
        raise TruthError('%s failed (%d): %s' % (' '.join(cmd),
                                                 r.returncode,
                                                 r.stderr.strip()[:300]))
    return parse_script(out)


# --- stack pointers from the full capture -----------------------------

def sample_stacks(path):
    """{(tid, 'sec.usec'): (sp, words, dyn)} from FULL.data: the sample's
    sp (None off x86-64) and its stack copy as 64-bit words."""
    with open(path, 'rb') as f:
        buf = f.read()
    attr_size, attrs_off, attrs_size, data_off, data_size = \
        cs.data_section(buf)
    layout = cs.attrs_layout(buf, attrs_off, attrs_size, attr_size, 0,
                             bytearray(buf[:data_off]))
    st, mask = layout[0], layout[3]
    if not (st & cs.TID and st & cs.TIME):
        raise TruthError('samples without tid or time')
    no_regs = (st & ~cs.REGS_USER,) + layout[1:]
    sp_at = bin(mask & ((1 << X86_SP) - 1)).count('1') \
        if st & cs.REGS_USER and mask & (1 << X86_SP) else None
    out = {}
    for typ, _, p, size in cs.records(buf, data_off, data_size):
        if typ != cs.RECORD_SAMPLE:
            continue
        body, end = p + 8, p + size
        q = body + 8 * (bool(st & cs.IDENTIFIER) + bool(st & cs.IP))
        tid = struct.unpack_from('<I', buf, q + 4)[0]
        t = cs.u64(buf, q + 8)
        key = (tid, '%d.%06d' % (t // 1000000000, t % 1000000000 // 1000))
        sp = None
        if sp_at is not None:
            r = cs.stack_offset(buf, body, end, no_regs)
            if cs.u64(buf, r):
                sp = cs.u64(buf, r + 8 + 8 * sp_at)
        s = cs.stack_offset(buf, body, end, layout)
        n = cs.u64(buf, s)
        dyn = cs.u64(buf, s + 8 + n) if s + 16 + n <= end else 0
        words = array('Q')
        words.frombytes(buf[s + 8:s + 8 + (min(n, dyn) & ~7)])
        out[key] = (sp, words)
    return out


def chain(frames, words, sizes, first):
    """Return slots of frames 1.. when frame 1's is at word first: each
    next one at the learned distance when the word there matches, else
    the next occurrence of its pc; stops at the first frame not found."""
    slots = [None, first]
    for i in range(2, len(frames)):
        want, j = frames[i].pc, None
        d = sizes.get(frames[i - 1].pc)
        if d is not None:
            j = slots[-1] + d
            if not (0 <= j < len(words) and words[j] == want):
                j = None
        if j is None:
            try:
                j = words.index(want, slots[-1] + 1)
            except ValueError:
                break
        slots.append(j)
    return slots


def return_slots(frames, words, sizes):
    """Word index of each user frame's return address (frame 0: None), or
    None from the first frame not found.  sizes: pc -> learned distance
    in words from a frame's return slot to its caller's.  Frame 1's slot
    is the occurrence of its pc (of the first 16) from which the learned
    distances lead furthest: a stale copy of a return address in the leaf
    frame's locals leads off the chain where the callers change."""
    best = [None]
    if len(frames) > 1:
        at = 0
        for _ in range(16):
            try:
                at = words.index(frames[1].pc, at)
            except ValueError:
                break
            sl = chain(frames, words, sizes, at)
            hits = sum(1 for i in range(2, len(sl))
                       if sl[i] == sl[i - 1] + sizes.get(frames[i - 1].pc,
                                                         -1))
            if len(best) == 1 or (len(sl), hits) > score:
                best, score = sl, (len(sl), hits)
            if len(sl) == len(frames) and hits == len(sl) - 2:
                break
            at += 1
    return best + [None] * (len(frames) - len(best))


def frame_sps(truth, copies):
    """{key: [sp or None per user frame]} for the complete true stacks."""
    users = {k: [f for f in s.frames if f.user] for k, s in truth.items()
             if s.marker is None and k in copies and
             copies[k][0] is not None}
    hist = collections.defaultdict(collections.Counter)
    for k, fr in users.items():
        sl = return_slots(fr, copies[k][1], {})
        for i in range(2, len(sl)):
            if sl[i] is not None and sl[i - 1] is not None:
                hist[fr[i - 1].pc][sl[i] - sl[i - 1]] += 1
    sizes = {pc: c.most_common(1)[0][0] for pc, c in hist.items()}
    out = {}
    for k, fr in users.items():
        sp = copies[k][0]
        sl = return_slots(fr, copies[k][1], sizes)
        out[k] = [sp] + [None if j is None else sp + 8 * j + 8
                         for j in sl[1:]]
    return out


# --- classification ---------------------------------------------------

def is_prefix(part, whole):
    return len(part) <= len(whole) and whole[:len(part)] == part


def classify(truth_st, got):
    if got is None:
        return 'missing'
    if got.marker is None:
        return 'exact' if got.key == truth_st.key else 'wrong'
    return 'honest' if is_prefix(got.key, truth_st.key) else 'wrong'


def frame_ids(key, st, sps):
    """Per user frame of a complete true stack: (pc, sp) or (pc,)."""
    fr = [f for f in st.frames if f.user]
    s = sps.get(key)
    if s is None:
        return [(f.pc,) for f in fr], fr
    return [(f.pc, s[i]) if s[i] is not None else (f.pc, 'u%d' % i)
            for i, f in enumerate(fr)], fr


ROOT = 'root'


def visible(truth_st, got, fid, fr):
    """How many of a sample's true user frames the cropped --stitch=off
    stack shows (its leaf-side ones), and whether that is the whole
    stack, root included."""
    if got.marker is None and got.key == truth_st.key:
        return len(fid), True
    gu = [f.pc for f in got.frames if f.user]
    n = 0
    while n < min(len(gu), len(fr)) and gu[n] == fr[n].pc:
        n += 1
    return n, False


def ceiling64(truth, complete, cut_off, ids):
    """Keys of the cut samples whose outer part is the same in every
    other sample of the thread whose TRUE stack has the cut walk's
    outermost two frames: the ceiling of a cache that saw the 64 KiB
    stacks (for comparison), plus the samples off gets exact."""
    by_tid = collections.defaultdict(list)
    for k in complete:
        by_tid[k[0]].append(k)
    # per thread: (id a, id b) consecutive -> {outer part: set of keys}
    index = {}
    for tid, keys in by_tid.items():
        idx = collections.defaultdict(lambda: collections.defaultdict(set))
        for k in keys:
            fid, fr = ids[k]
            seen = set()
            for i in range(len(fid)):
                pair = (fid[i - 1] if i else None, fid[i])
                if pair in seen:
                    continue
                seen.add(pair)
                outer = tuple(ln for f in fr[i + 1:] for ln in f.lines)
                idx[pair][outer].add(k)
        index[tid] = idx
    good = set()
    for k in complete:
        got = cut_off[k]
        if got.marker is None:
            if got.key == truth[k].key:
                good.add(k)
            continue
        if not is_prefix(got.key, truth[k].key):
            continue
        n = sum(1 for f in got.frames if f.user)
        fid, fr = ids[k]
        if n == 0 or n >= len(fid):
            continue
        pair = (fid[n - 2] if n > 1 else None, fid[n - 1])
        conts = index[k[0]].get(pair, {})
        others = {o: ks - {k} for o, ks in conts.items()}
        others = {o: ks for o, ks in others.items() if ks}
        if len(others) == 1:
            good.add(k)
    return good


def ceiling(truth, complete, cut_off, ids):
    """Keys of the complete samples an honest root cache could get exact
    from what the cropped samples show (see the docstring)."""
    seen = {}                   # key -> its visible links
    callers = collections.defaultdict(   # tid -> node -> caller -> count
        lambda: collections.defaultdict(collections.Counter))
    nodes = collections.defaultdict(set)  # (tid, sp, func, mod) -> ids
    for k in complete:
        fid, fr = ids[k]
        n, whole = visible(truth[k], cut_off[k], fid, fr)
        links = {(fid[i], fid[i + 1]) for i in range(n - 1)}
        if whole and n:
            links.add((fid[n - 1], ROOT))
        seen[k] = links
        for a, b in links:
            callers[k[0]][a][b] += 1
        for i in range(n):
            if len(fid[i]) > 1 and isinstance(fid[i][1], int):
                nodes[(k[0], fid[i][1]) + fr[i].lines[-1][1:]].add(fid[i])

    def others(k, node):
        """node's distinct callers in samples other than k."""
        c = callers[k[0]].get(node, {})
        return {b for b, cnt in c.items()
                if cnt > ((node, b) in seen[k])}

    good = set()
    for k in complete:
        got = cut_off[k]
        if got.marker is None:
            if got.key == truth[k].key:
                good.add(k)
            continue
        if not (got.marker.endswith('window exhausted]') and
                is_prefix(got.key, truth[k].key)):
            continue
        fid, fr = ids[k]
        n = sum(1 for f in got.frames if f.user)
        if n < 2 or n > len(fid):
            continue        # (n == len(fid): only the root is missing)
        if fid[n - 1] not in others(k, fid[n - 2]):
            continue        # the join pair: no other sample linked it
        want = [f[0] for f in fid[n:]] + [ROOT]
        node, j = fid[n - 1], 0
        up = others(k, node)
        if not up and len(node) > 1 and isinstance(node[1], int):
            # a frame never seen with its caller (a big main()): join
            # the visible frames of its sp, function and module whose
            # callers, in other samples, are one and the same
            same = nodes.get((k[0], node[1]) + fr[n - 1].lines[-1][1:],
                             ())
            up = set()
            for v in same:
                if v != node:
                    up |= others(k, v)
            if n == len(fid) or len(up) != 1 or ROOT in up or \
                    next(iter(up))[1] != fid[n][1]:
                continue
        while len(up) == 1 and j < len(want):
            c = next(iter(up))
            if (c[0] if c != ROOT else ROOT) != want[j]:
                break
            j += 1
            if c == ROOT:
                break
            node, up = c, others(k, c)
        if j == len(want):
            good.add(k)
    return good


def runs(names):
    """Frame names leaf first, repeats folded: 'rec*40 <- main'."""
    out = []
    for nm in names:
        if out and out[-1][0] == nm:
            out[-1][1] += 1
        else:
            out.append([nm, 1])
    return ' <- '.join(nm if n == 1 else '%s*%d' % (nm, n) for nm, n in out)


def pct(a, b):
    return 100.0 * a / b if b else 0.0


def validate(restack, extra, crop, tmp):
    """Numbers of `restack stats --validate-stitch`: dict, maybe empty."""
    js = os.path.join(tmp, 'validate.json')
    cmd = [restack, 'stats', '--validate-stitch', '--stats-json', js] + \
        extra + [crop]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    if r.returncode != 0:
        raise TruthError('%s failed (%d): %s' % (' '.join(cmd),
                                                 r.returncode,
                                                 r.stderr.strip()[:300]))
    v = {}
    for line in r.stdout.splitlines():
        if 'stitch check' not in line:
            continue
        v['line'] = line.strip()
        m = re.search(r'(\d+) complete stacks', line)
        if m:
            v['checked'] = int(m.group(1))
        for word in ('stitched', 'exact', 'honest', 'wrong', 'marked',
                     'truncated'):
            m = re.search(r'(\d+) %s\b' % word, line, re.I)
            if m:
                v[word] = int(m.group(1))
    try:
        with open(js) as f:
            doc = json.load(f)
        for inp in doc.get('inputs', []):
            for k, val in inp.items():
                if isinstance(val, dict) and ('validate' in k or
                                              'check' in k):
                    for kk, vv in val.items():
                        if isinstance(vv, (int, float)):
                            v.setdefault(kk.replace('stitch_', ''), vv)
                elif ('validate' in k or 'check' in k) and \
                        isinstance(val, (int, float)):
                    v.setdefault(k.replace('validate_', '')
                                 .replace('stitch_check_', ''), val)
    except (OSError, ValueError):
        pass
    return v


def main():
    ap = argparse.ArgumentParser(usage=__doc__.strip().splitlines()[2] +
                                 '\n' + __doc__.strip().splitlines()[3] +
                                 '\n' + __doc__.strip().splitlines()[4])
    ap.add_argument('--restack', required=True)
    ap.add_argument('--full', required=True)
    ap.add_argument('--crop', required=True)
    ap.add_argument('--mode', action='append',
                    choices=('on', 'strict', 'off', 'validate'))
    ap.add_argument('--label', default='')
    ap.add_argument('--show-wrong', type=int, default=0)
    ap.add_argument('--restack-arg', action='append', default=[])
    try:
        a = ap.parse_args()
    except SystemExit as e:
        sys.exit(64 if e.code else 0)
    modes = a.mode or ['on', 'strict', 'off', 'validate']
    label = (a.label + ' ') if a.label else ''
    with tempfile.TemporaryDirectory(prefix='stitch_truth.') as tmp:
        try:
            truth = run_restack(a, a.restack, a.restack_arg, a.full, 'off',
                                tmp)
            copies = sample_stacks(a.full)
            cut_off = run_restack(a, a.restack, a.restack_arg, a.crop,
                                  'off', tmp)
            results = {}
            for m in modes:
                if m == 'off':
                    results[m] = cut_off
                elif m != 'validate':
                    results[m] = run_restack(a, a.restack, a.restack_arg,
                                             a.crop, m, tmp)
            val = validate(a.restack, a.restack_arg, a.crop, tmp) \
                if 'validate' in modes else None
        except (OSError, TruthError, cs.CropError, struct.error) as e:
            sys.stderr.write('stitch_truth.py: %s\n' % e)
            sys.exit(2)
    complete = [k for k, s in truth.items() if s.marker is None and
                k in cut_off]
    cut = {k for k in complete
           if (cut_off[k].marker or '').endswith('window exhausted]')}
    sps = frame_sps(truth, copies)
    by_pc = not sps and bool(complete)
    ids = {k: frame_ids(k, truth[k], sps) for k in complete}
    ceil = ceiling(truth, complete, cut_off, ids)
    ceil64 = ceiling64(truth, complete, cut_off, ids)
    shown = []
    for m in modes:
        if m == 'validate':
            continue
        res = results[m]
        n = collections.Counter()
        wrong_cut = silent = 0
        bad = []
        for k in complete:
            c = classify(truth[k], res.get(k))
            n[c] += 1
            if c == 'wrong':
                wrong_cut += k in cut
                silent += res[k].marker is None
                bad.append(k)
        nc = len(complete)
        print('%smode=%s samples=%d complete=%d cut=%d exact=%d honest=%d '
              'wrong=%d silent=%d missing=%d exact_pct=%.2f honest_pct=%.2f '
              'wrong_pct=%.2f wrong_cut_pct=%.2f ceiling=%d ceiling_pct=%.2f'
              ' ceiling64=%d ceiling64_pct=%.2f%s' %
              (label, m, len(cut_off), nc, len(cut), n['exact'],
               n['honest'], n['wrong'], silent, n['missing'],
               pct(n['exact'], nc), pct(n['honest'], nc),
               pct(n['wrong'], nc), pct(wrong_cut, len(cut)),
               len(ceil), pct(len(ceil), nc), len(ceil64),
               pct(len(ceil64), nc),
               ' ceiling_by_pc=1' if by_pc else ''))
        shown.append((m, bad[:a.show_wrong], res))
    if val is not None:
        words = ['%s=%s' % (k, v) for k, v in sorted(val.items())
                 if k != 'line' and isinstance(v, int)]
        chk = val.get('checked')
        for w in ('exact', 'honest', 'wrong'):
            if chk and w in val:
                words.append('%s_pct=%.2f' % (w, pct(val[w], chk)))
        print('%smode=validate %s' % (label, ' '.join(words) or
                                      'no-stitch-check'))
        if 'line' in val:
            print('# %s%s' % (label, val['line']))
    for m, bad, res in shown:
        for k in bad:
            print('# %sWRONG (%s) tid %d time %s' % (label, m, k[0], k[1]))
            a, b = truth[k].key, res[k].key
            same = 0
            while same < min(len(a), len(b)) and a[-1 - same] == b[-1 - same]:
                same += 1
            print('#   root side: %d frames alike; leaf side: %d' %
                  (same, len(os.path.commonprefix([a, b]))))
            for name, st in (('truth', truth[k]), ('got', res[k])):
                fr = [ln[1] for f in st.frames for ln in f.lines]
                print('#   %-5s %d frames: %s%s' %
                      (name, len(fr), runs(fr),
                       ' <- ' + st.marker if st.marker else ''))


if __name__ == '__main__':
    main()
