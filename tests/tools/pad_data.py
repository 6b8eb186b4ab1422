#!/usr/bin/env python3
"""pad_data.py - a perf.data file made larger without more samples.

    pad_data.py IN OUT MIB

OUT is IN with about MIB MiB of records of a type no perf writes (127,
65528 bytes each, zeroes) after its records: the data section's size
and the offsets of the feature sections behind it follow.  OUT is sparse:
only the padding records' headers take disk blocks.  For tests of what a
reader decides from a file's size (a reader skips records of a type it
does not know).

File mode only; anything else is refused with exit 2.  Written from
perf's header layout (tools/perf/util/header.h), independently of restack.
"""
import struct
import sys

MAGIC = b"PERFILE2"
HEADER_SIZE = 104
PAD_TYPE = 127
PAD_SIZE = 65528


class PadError(Exception):
    pass


def main(argv):
    if len(argv) != 4 or not argv[3].isdigit():
        sys.stderr.write("usage: pad_data.py IN OUT MIB\n")
        return 64
    with open(argv[1], "rb") as f:
        buf = f.read()
    try:
        if len(buf) < HEADER_SIZE or buf[:8] != MAGIC:
            raise PadError("not a perf.data file in file mode")
        data_off, data_size = struct.unpack_from("<QQ", buf, 40)
        end = data_off + data_size
        if data_size == 0 or end > len(buf):
            raise PadError("data section of size 0 or past the end")
        features = struct.unpack_from("<4Q", buf, 72)
        nr = sum(bin(w).count("1") for w in features)
        if end + 16 * nr > len(buf):
            raise PadError("feature table past the end")
    except PadError as e:
        sys.stderr.write("pad_data.py: %s: %s\n" % (argv[1], e))
        return 2
    pads = int(argv[3]) * (1 << 20) // PAD_SIZE
    grow = pads * PAD_SIZE
    head = bytearray(buf[:end])
    struct.pack_into("<Q", head, 48, data_size + grow)
    tail = bytearray(buf[end:])
    for i in range(nr):
        off = struct.unpack_from("<Q", tail, 16 * i)[0]
        struct.pack_into("<Q", tail, 16 * i, off + grow)
    hdr = struct.pack("<IHH", PAD_TYPE, 0, PAD_SIZE)
    with open(argv[2], "wb") as f:
        f.write(head)
        for i in range(pads):
            f.seek(end + i * PAD_SIZE)
            f.write(hdr)
        f.seek(end + grow)
        f.write(tail)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
