#!/usr/bin/env python3
"""crop_stack.py - make a perf.data recorded with a large --call-graph dwarf
stack copy look as if it had been recorded with a smaller one.

    crop_stack.py IN OUT BYTES

Every sample's user stack copy keeps its first BYTES bytes: size becomes
BYTES, dyn_size min(dyn_size, BYTES), the record shrinks by what was cut,
and each attr's sample_stack_user says BYTES.  That is what the kernel
writes with a BYTES window (it copies from the stack pointer up), so the
cropped capture's samples are the original ones with less stack, and a
tool's stacks for them can be checked sample by sample against what the
full copy unwinds to.  The data section's size and the offsets of the
feature sections behind it follow the change.

File mode, uncompressed, one sample layout for all attrs (what `perf
record -e EVENT --call-graph dwarf` writes); anything else is refused
with exit 2.  Written from include/uapi/linux/perf_event.h and perf's
header layout (tools/perf/util/header.h), independently of restack.
"""
import struct
import sys

import capture_tool

MAGIC = b"PERFILE2"
HEADER_SIZE = 104
RECORD_SAMPLE = 9
RECORD_COMPRESSED = (81, 83)

# sample_type bits, in the order of their fields up to STACK_USER
IDENTIFIER = 1 << 16
IP, TID, TIME, ADDR, READ, CALLCHAIN, ID, CPU = (1 << i for i in range(8))
PERIOD, STREAM_ID, RAW, BRANCH_STACK = (1 << i for i in range(8, 12))
REGS_USER, STACK_USER = 1 << 12, 1 << 13

RF_ENABLED, RF_RUNNING, RF_ID, RF_GROUP, RF_LOST = 1, 2, 4, 8, 16
BRANCH_HW_INDEX = 1 << 17
BRANCH_COUNTERS = 1 << 19

# perf_event_attr field offsets
ATTR_SAMPLE_TYPE, ATTR_READ_FORMAT = 24, 32
ATTR_BRANCH_TYPE, ATTR_REGS_USER, ATTR_STACK_USER = 72, 80, 88


class CropError(Exception):
    pass


def u64(buf, off):
    return struct.unpack_from("<Q", buf, off)[0]


def stack_offset(buf, p, end, layout):
    """Offset of the STACK_USER size field of the sample body at p."""
    st, rf, branch, regs = layout
    p += 8 * sum(bool(st & b) for b in
                 (IDENTIFIER, IP, TID, TIME, ADDR, ID, STREAM_ID, CPU,
                  PERIOD))
    if st & READ:
        per = 1 + bool(rf & RF_ID) + bool(rf & RF_LOST)
        times = bool(rf & RF_ENABLED) + bool(rf & RF_RUNNING)
        if rf & RF_GROUP:
            p += 8 * (1 + times + u64(buf, p) * per)
        else:
            p += 8 * (per + times)
    if st & CALLCHAIN:
        p += 8 * (1 + u64(buf, p))
    if st & RAW:
        p += 4 + struct.unpack_from("<I", buf, p)[0]
    if st & BRANCH_STACK:
        nr = u64(buf, p)
        p += 8 * (1 + bool(branch & BRANCH_HW_INDEX) + 3 * nr +
                  (nr if branch & BRANCH_COUNTERS else 0))
    if st & REGS_USER:
        abi = u64(buf, p)
        p += 8 * (1 + (bin(regs).count("1") if abi else 0))
    if p + 8 > end:
        raise CropError("sample ends before its stack at 0x%x" % p)
    return p


def crop_sample(buf, body, end, layout, keep):
    """The sample body at [body, end) with its stack copy cropped."""
    p = stack_offset(buf, body, end, layout)
    size = u64(buf, p)
    if size <= keep:
        return buf[body:end]
    if p + 16 + size > end:
        raise CropError("stack of %d bytes at 0x%x runs past the record"
                        % (size, p))
    dyn = u64(buf, p + 8 + size)
    return (buf[body:p] + struct.pack("<Q", keep) +
            buf[p + 8:p + 8 + keep] + struct.pack("<Q", min(dyn, keep)) +
            buf[p + 16 + size:end])


def attrs_layout(buf, off, size, attr_size, keep, out):
    layouts = set()
    for a in range(off, off + size, attr_size):
        st = u64(buf, a + ATTR_SAMPLE_TYPE)
        layouts.add((st, u64(buf, a + ATTR_READ_FORMAT),
                     u64(buf, a + ATTR_BRANCH_TYPE),
                     u64(buf, a + ATTR_REGS_USER)))
        if st & STACK_USER:
            struct.pack_into("<I", out, a + ATTR_STACK_USER, keep)
    if len(layouts) != 1:
        raise CropError("%d attrs with different sample layouts"
                        % len(layouts))
    layout = layouts.pop()
    if not layout[0] & STACK_USER:
        raise CropError("the samples carry no user stack")
    return layout


def data_section(buf):
    """(attr_size, attrs_off, attrs_size, data_off, data_size) of a file."""
    if buf[:8] != MAGIC or u64(buf, 8) != HEADER_SIZE:
        raise CropError("not a little-endian perf.data file (pipe mode "
                        "and big-endian files are not supported)")
    sec = struct.unpack_from("<5Q", buf, 16)
    if sec[3] < sec[1] + sec[2]:
        raise CropError("attrs after the data section")
    return sec


def records(buf, data_off, data_size):
    """(type, misc, offset, size) of each record of the data section."""
    p, end = data_off, data_off + data_size
    while p + 8 <= end:
        typ, misc, size = struct.unpack_from("<IHH", buf, p)
        if size < 8 or p + size > end:
            raise CropError("record of %d bytes at 0x%x" % (size, p))
        if typ in RECORD_COMPRESSED:
            raise CropError("compressed records (perf record -z)")
        yield typ, misc, p, size
        p += size
    if p != end:
        raise CropError("data section ends inside a record at 0x%x" % p)


def crop(buf, keep):
    attr_size, attrs_off, attrs_size, data_off, data_size = data_section(buf)
    head = bytearray(buf[:data_off])
    layout = attrs_layout(buf, attrs_off, attrs_size, attr_size, keep, head)
    data = []
    end = data_off + data_size
    for typ, misc, p, size in records(buf, data_off, data_size):
        if typ == RECORD_SAMPLE:
            body = crop_sample(buf, p + 8, p + size, layout, keep)
            data.append(struct.pack("<IHH", typ, misc, 8 + len(body)) + body)
        else:
            data.append(buf[p:p + size])
    data = b"".join(data)
    delta = len(data) - data_size
    tail = bytearray(buf[end:])
    bits = struct.unpack_from("<4Q", buf, 72)
    nfeat = sum(bin(b).count("1") for b in bits)
    for i in range(nfeat):
        off = u64(tail, 16 * i)
        if off >= end:
            struct.pack_into("<Q", tail, 16 * i, off + delta)
    struct.pack_into("<Q", head, 48, len(data))
    return bytes(head) + data + bytes(tail)


def main(argv):
    return capture_tool.run(
        argv, "crop_stack.py IN OUT BYTES (a multiple of 8)",
        lambda buf, a: crop(buf, int(a[3])), (CropError, struct.error),
        lambda a: a[3].isdigit() and int(a[3]) % 8 == 0)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
