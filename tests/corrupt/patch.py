#!/usr/bin/env python3
"""patch.py - overwrite bytes of a perf.data copy, for tests/corrupt/.

    patch.py FILE OFFSET KIND VALUE

KIND is u8, u16, u32 or u64 (VALUE a number, written in the file's own
byte order, read from its magic) or hex (VALUE the bytes in hex).
"""
import struct
import sys


def main(path, off, kind, value):
    with open(path, "r+b") as f:
        magic = f.read(8)
        order = ">" if magic == b"2ELIFREP" else "<"
        if kind == "hex":
            data = bytes.fromhex(value)
        else:
            fmt = {"u8": "B", "u16": "H", "u32": "I", "u64": "Q"}[kind]
            data = struct.pack(order + fmt, int(value, 0))
        f.seek(int(off, 0))
        f.write(data)


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit("usage: patch.py FILE OFFSET KIND VALUE")
    main(*sys.argv[1:])
