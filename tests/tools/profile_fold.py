#!/usr/bin/env python3
"""profile_fold.py - restack's speedscope and Firefox Profiler outputs read
back as folded stacks, independently of restack's C code.

  profile_fold.py speedscope FILE   "comm;root;...;leaf COUNT", merged
  profile_fold.py firefox FILE      the same from the processed format
                                    (.json.gz or plain .json)
  profile_fold.py firefox-samples FILE
                                    "TID COUNT" per thread with samples

The first frame is the thread's command name (spaces as '_'), as in
restack's default folded output; lines are sorted.  Speedscope's sampled
profiles are named "comm pid/tid"; a Firefox thread's name is its comm.
Firefox stacks are read through the stack table's prefixOffset column
(the distance back to the prefix row, 0: none) and funcTable names.
"""
import gzip
import json
import sys
from collections import Counter


def load(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return json.loads(data)


def speedscope(path):
    d = load(path)
    frames = [f["name"] for f in d["shared"]["frames"]]
    out = Counter()
    for p in d["profiles"]:
        comm = p["name"].rsplit(" ", 1)[0].replace(" ", "_")
        for stack, w in zip(p["samples"], p["weights"]):
            out[";".join([comm] + [frames[i] for i in stack])] += w
    return out


def firefox_threads(d):
    sh = d["shared"]
    strs = sh["stringArray"]
    st, ft, fn = sh["stackTable"], sh["frameTable"], sh["funcTable"]
    names = []
    for i in range(st["length"]):
        off = st["prefixOffset"][i]
        name = strs[fn["name"][ft["func"][st["frame"][i]]]]
        names.append((i - off if off else None, name))

    def stack(i):
        out = []
        while i is not None:
            prefix, name = names[i]
            out.append(name)
            i = prefix
        return out[::-1]

    for t in d["threads"]:
        s = t["samples"]
        weights = s.get("weight") or [1] * s["length"]
        yield t, [(stack(i), w) for i, w in zip(s["stack"], weights)
                  if i is not None]


def firefox(path):
    out = Counter()
    for t, samples in firefox_threads(load(path)):
        comm = t["name"].replace(" ", "_")
        for frames, w in samples:
            out[";".join([comm] + frames)] += w
    return out


def firefox_samples(path):
    out = Counter()
    for t, samples in firefox_threads(load(path)):
        out[t["tid"]] += len(samples)
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    mode, path = sys.argv[1:]
    fn = {"speedscope": speedscope, "firefox": firefox,
          "firefox-samples": firefox_samples}.get(mode)
    if not fn:
        sys.exit(__doc__)
    for k, n in sorted(fn(path).items()):
        print(k, n)


if __name__ == "__main__":
    main()
