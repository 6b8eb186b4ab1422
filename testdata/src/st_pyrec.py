# st_pyrec.py - stitching ground truth (tests/cli/stitch_truth.sh):
# CPython recursion at random depths (20 to 120 levels).  Every level
# calls the next through map(), a C function, so each Python level also
# costs C stack frames (3.11 runs plain Python calls in one C frame);
# the bottom spins.  Runs for about SECONDS of CPU time (default 1.5).
#   python3 st_pyrec.py [SECONDS]
import random
import sys
import time


def spin(n):
    x = n
    for _ in range(3000):
        x = (x * 1664525 + 1013904223) & 0xffffffff
    return x


def rec(depth, target):
    if depth >= target:
        return spin(depth)
    return sum(map(rec, (depth + 1,), (target,))) + depth


def main():
    secs = float(sys.argv[1]) if len(sys.argv) > 1 else 1.5
    random.seed(5)
    end = time.process_time() + secs
    sink = 0
    while time.process_time() < end:
        sink += rec(1, random.randint(20, 120))
    print(sink)


main()
