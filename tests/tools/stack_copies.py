#!/usr/bin/env python3
"""stack_copies.py - how much of each sample's user stack the kernel copied.

    stack_copies.py IN

Prints one line, "full N short N empty N": the samples whose copy holds
all the bytes asked for (dyn_size == size), fewer but some, and none
(dyn_size == 0: the kernel could not read the page at sp).  Samples
without a stack copy are not counted.  Same inputs as crop_stack.py, whose
reading of the file it shares; exit 2 on anything else.
"""
import struct
import sys

import capture_tool
import crop_stack as cs


def count(buf):
    attr_size, attrs_off, attrs_size, data_off, data_size = \
        cs.data_section(buf)
    layout = cs.attrs_layout(buf, attrs_off, attrs_size, attr_size, 0,
                             bytearray(buf[:data_off]))
    n = {"full": 0, "short": 0, "empty": 0}
    for typ, _, p, size in cs.records(buf, data_off, data_size):
        if typ != cs.RECORD_SAMPLE:
            continue
        at = cs.stack_offset(buf, p + 8, p + size, layout)
        want = cs.u64(buf, at)
        if not want:
            continue
        if at + 16 + want > p + size:
            raise cs.CropError("stack of %d bytes at 0x%x runs past the "
                               "record" % (want, at))
        got = cs.u64(buf, at + 8 + want)
        n["full" if got == want else "short" if got else "empty"] += 1
    return n


def main(argv):
    return capture_tool.run(
        argv, "stack_copies.py IN",
        lambda buf, a: "full %(full)d short %(short)d empty %(empty)d" %
        count(buf), (cs.CropError, struct.error))


if __name__ == "__main__":
    sys.exit(main(sys.argv))
