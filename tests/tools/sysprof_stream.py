#!/usr/bin/env python3
"""sysprof_stream.py [OPTIONS] IN.data - writes to standard output (a pipe
or a FIFO) the sysprof stream a live profiler would send eu-stacktrace
for a perf.data capture recorded with `perf record -e cpu-clock
--call-graph dwarf`: the header, then PROCESS, FORK, EXIT, MAP and
type-18 raw user-stack frames (the layout of mkstack18.py, which makes
them), a few at a time, as a profiler flushes its buffers.

Options:
  --burst N        frames written at once (default 16), then
  --pause-ms MS    a pause (default 0)
  --hold N FILE    after N frames, wait (flushed) until FILE exists
  --ready FILE     ... and create FILE when it starts waiting
  --repeat BYTES   the samples again and again, later each time (their
                   times moved past the last), until BYTES are written
  --cut            end in the middle of the last frame, as a profiler
                   killed while writing
A test tool: it reads what mkstack18.py reads."""
import os
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mkstack18  # noqa: E402


def main():
    args = sys.argv[1:]
    burst, pause, hold, go, ready, repeat, cut = 16, 0.0, -1, None, None, 0, False
    while len(args) > 1:
        a = args.pop(0)
        if a == '--burst':
            burst = max(1, int(args.pop(0)))
        elif a == '--pause-ms':
            pause = int(args.pop(0)) / 1000.0
        elif a == '--hold':
            hold = int(args.pop(0))
            go = args.pop(0)
        elif a == '--ready':
            ready = args.pop(0)
        elif a == '--repeat':
            repeat = int(args.pop(0))
        elif a == '--cut':
            cut = True
        else:
            sys.exit('sysprof_stream.py: unknown option ' + a)
    if len(args) != 1:
        sys.exit(__doc__)
    fr = mkstack18.frames(open(args[0], 'rb').read())
    head, body = fr[0], fr[1:]
    out = sys.stdout.buffer
    out.write(head)
    written = len(head)
    samples = [bytearray(f) for f in body if f[16] == 18]
    last = max(struct.unpack_from('<q', f, 8)[0] for f in body)
    first = min(struct.unpack_from('<q', f, 8)[0] for f in samples)
    todo = list(body)
    shift = 0
    n = 0
    while todo:
        chunk, todo = todo[:burst], todo[burst:]
        for i, f in enumerate(chunk):
            if cut and not todo and i == len(chunk) - 1:
                f = f[:len(f) // 2]
            out.write(f)
            written += len(f)
            n += 1
            if n == hold:
                out.flush()
                if ready:
                    open(ready, 'w').close()
                while not os.path.exists(go):
                    time.sleep(0.02)
        out.flush()
        if pause:
            time.sleep(pause)
        if not todo and written < repeat and samples:
            # the samples once more, after the last frame's time
            shift += last - first + 1
            todo = []
            for f in samples:
                t, = struct.unpack_from('<q', f, 8)
                g = bytearray(f)
                struct.pack_into('<q', g, 8, t + shift)
                todo.append(g)
    out.flush()


if __name__ == '__main__':
    try:
        main()
    except BrokenPipeError:
        sys.exit(1)
