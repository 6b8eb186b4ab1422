# work.py - a CPU-bound python3 workload (json, regular expressions, sorting,
# recursion, clock reads served by the vdso) for the unwinding tests and
# benchmarks.
#   python3 work.py [ROUNDS]
import collections
import json
import random
import re
import sys
import time


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    random.seed(1)
    data = [{"k": i, "v": str(i) * 5, "f": i * 0.5} for i in range(30000)]
    for _ in range(rounds):
        s = json.dumps(data)
        d = json.loads(s)
        re.findall(r"\d+", s[:1000000])
        collections.Counter(x["v"][:3] for x in d)
        random.shuffle(data)
        data.sort(key=lambda x: x["k"])
        for _ in range(200000):
            time.monotonic()
    print(fib(22))


main()
