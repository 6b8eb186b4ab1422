#!/usr/bin/env python3
"""flame_check.py - checks a flame graph as Chromium rendered it against
the folded stacks of the same capture, independently of restack's C code.

  flame_check.py frames FOLDED DOM     frames drawn = call-tree nodes of
                                       the folded stacks >= 0.1 px wide,
                                       with their names and weights
  flame_check.py share FOLDED REGEX    percent of the weight in stacks
                                       with a frame matching REGEX
  flame_check.py kinds ANNOTATED DOM   frames are coloured by kind: the
                                       palette of every frame drawn is
                                       the one its --annotate suffix (or
                                       its stitched share) calls for
  flame_check.py png PNG               the screenshot has a drawing:
                                       prints "pixels N% colours N"

The call tree is built as flamegraph.pl builds it: frames merged by name
under the same parent, the root "all" holding every stack.
"""
import html
import re
import struct
import sys
import zlib
from collections import Counter

WIDTH = 1200 - 2 * 10
MIN_PX = 0.1


def read_folded(path):
    stacks = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            stack, n = line.rsplit(" ", 1)
            stacks.append((stack.split(";"), int(n)))
    return stacks


def tree_nodes(stacks):
    """(name, weight) of every node of the call tree, root included."""
    weight = Counter()
    total = 0
    for frames, n in stacks:
        total += n
        for i in range(len(frames)):
            weight[tuple(frames[: i + 1])] += n
    nodes = [("all", total)]
    nodes += [(path[-1], w) for path, w in weight.items()]
    return nodes, total


def frames(folded, dom):
    nodes, total = tree_nodes(read_folded(folded))
    want = Counter((name, w) for name, w in nodes
                   if w * WIDTH / total >= MIN_PX)
    text = open(dom, encoding="utf-8", errors="replace").read()
    if "parsererror" in text or "error on line" in text:
        print("Chromium could not parse the SVG")
        return 1
    got = Counter()
    for t in re.findall(r"<title>(.*?)</title>", text, re.S):
        name, info = html.unescape(t).split("\n", 1)
        got[(name, int(info.split(" ", 1)[0]))] += 1
    if got != want:
        print("frames drawn differ from the folded call tree")
        for k in sorted((want - got).keys())[:10]:
            print("  missing", k)
        for k in sorted((got - want).keys())[:10]:
            print("  extra  ", k)
        return 1
    print(f"{sum(got.values())} frames as in the folded call tree "
          f"(total {total})")
    return 0


def share(folded, regex):
    stacks = read_folded(folded)
    total = sum(n for _, n in stacks)
    hit = sum(n for fr, n in stacks if any(re.search(regex, x) for x in fr))
    print(f"{100.0 * hit / total:.6f}")
    return 0


# Palettes of formats/svg.c, as ranges of (r, g, b).
PALETTES = {
    "user": ((205, 255), (40, 140), (20, 55)),
    "kernel": ((230, 255), (165, 205), (0, 30)),
    "jit": ((50, 110), (170, 230), (50, 110)),
    "inline": ((70, 120), (190, 240), (190, 240)),
    "stitched": ((110, 160), (110, 160), (215, 255)),
}


def kinds(annotated, dom):
    """Every frame name that the --annotate folded stacks always give the
    same suffix must be drawn in that suffix's palette (stitched when
    most of its weight was stitched)."""
    suffix = {"_[k]": "kernel", "_[i]": "inline", "_[j]": "jit",
              "_[s]": "stitched"}
    seen = {}
    for frames, _ in read_folded(annotated)[:]:
        for f in frames[1:]:
            kind = "user"
            for sfx, k in suffix.items():
                if f.endswith(sfx):
                    f, kind = f[: -len(sfx)], k
            for sfx in ("_[fp]", "_[scan]", "_[stub]"):
                if f.endswith(sfx):
                    f = f[: -len(sfx)]
            # markers, and frames without a symbol ("[unknown]", a
            # module's name in brackets): drawn in the unknown palette
            if f.startswith("[") and f.endswith("]"):
                continue
            seen.setdefault(f, set()).add(kind)
    text = open(dom, encoding="utf-8", errors="replace").read()
    counts = Counter()
    bad = []
    for t, r, g, b in re.findall(
            r"<title>(.*?)</title><rect [^>]*fill=\"rgb\((\d+),(\d+),(\d+)\)",
            text, re.S):
        name, info = html.unescape(t).split("\n", 1)
        m = re.search(r"stitched ([0-9.]+)%", info)
        if m and float(m.group(1)) > 50:
            want = "stitched"
        elif len(seen.get(name, ())) == 1 and "stitched" not in seen[name]:
            want = next(iter(seen[name]))
        else:
            continue
        rng = PALETTES[want]
        rgb = (int(r), int(g), int(b))
        if all(lo <= v <= hi for v, (lo, hi) in zip(rgb, rng)):
            counts[want] += 1
        else:
            bad.append(f"{name}: {want} wanted, fill {rgb}")
    if bad:
        print("frames in the wrong palette:")
        print("\n".join("  " + x for x in bad[:10]))
        return 1
    print(" ".join(f"{k} {counts[k]}" for k in sorted(counts)))
    return 0


def png(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        print("not a PNG")
        return 1
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            if depth != 8 or ctype not in (2, 6):
                print(f"unexpected PNG type {depth}/{ctype}")
                return 1
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = w * bpp
    prev = bytearray(stride)
    rows = []
    for y in range(h):
        ft = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if ft == 1:
                line[x] = (line[x] + a) & 255
            elif ft == 2:
                line[x] = (line[x] + b) & 255
            elif ft == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif ft == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pr = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[x] = (line[x] + pr) & 255
        rows.append(bytes(line))
        prev = line
    colours = Counter()
    for line in rows:
        for x in range(0, stride, bpp):
            colours[line[x:x + 3]] += 1
    background, bg_n = colours.most_common(1)[0]
    drawn = 100.0 * (w * h - bg_n) / (w * h)
    print(f"pixels {drawn:.1f}% colours {len(colours)}")
    return 0


if __name__ == "__main__":
    cmd = sys.argv[1]
    sys.exit({"frames": frames, "share": share, "kinds": kinds,
              "png": png}[cmd](*sys.argv[2:]))
