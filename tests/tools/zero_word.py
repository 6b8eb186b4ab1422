#!/usr/bin/env python3
"""zero_word.py - overwrite one value in every sample's stack copy with 0.

    zero_word.py IN OUT VALUE

Every 8-byte-aligned word of a sample's copied user stack (its first
dyn_size bytes) that equals VALUE (hex, e.g. a return address) becomes
0: the capture then looks as if each of those frames' return address
had been read as 0, which a walk must not take for the end of the
thread's stack unless the frame is the thread's first function.
Prints how many words it changed.  The layouts crop_stack.py reads.
"""
import struct
import sys

import capture_tool
import crop_stack
from crop_stack import RECORD_SAMPLE, CropError, u64


def zero(buf, value):
    attr_size, attrs_off, attrs_size, data_off, data_size = \
        crop_stack.data_section(buf)
    layout = crop_stack.attrs_layout(buf, attrs_off, attrs_size, attr_size,
                                     0, bytearray(buf[:data_off]))
    out = bytearray(buf)
    n = 0
    for typ, misc, p, size in crop_stack.records(buf, data_off, data_size):
        if typ != RECORD_SAMPLE:
            continue
        s = crop_stack.stack_offset(buf, p + 8, p + size, layout)
        copy = u64(buf, s)
        if s + 16 + copy > p + size:
            raise CropError("stack at 0x%x runs past the record" % s)
        dyn = min(u64(buf, s + 8 + copy), copy) if copy else 0
        for w in range(s + 8, s + 8 + dyn - 7, 8):
            if u64(buf, w) == value:
                struct.pack_into("<Q", out, w, 0)
                n += 1
    sys.stderr.write("zero_word.py: %d words\n" % n)
    return bytes(out)


def main(argv):
    return capture_tool.run(
        argv, "zero_word.py IN OUT VALUE",
        lambda buf, a: zero(buf, int(a[3], 16)), (CropError, struct.error),
        lambda a: all(c in "0123456789abcdefABCDEFx" for c in a[3]))


if __name__ == "__main__":
    sys.exit(main(sys.argv))
