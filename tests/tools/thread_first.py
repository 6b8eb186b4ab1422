#!/usr/bin/env python3
"""thread_first.py - rewrite a perf.data file so that the newest thread's
samples come first in the file, then the main thread's, ahead of the
threads that started before it, while time order stays the same.

    thread_first.py IN OUT

Every FINISHED_ROUND record becomes a FINISHED_INIT record of the same
size, so the whole data section is one round that a reader must put in
time order as a whole; then the samples of the thread with the highest
tid, and after them those of the main thread (pid = tid), move to the
front of the data section, behind the records perf writes itself (type
64 and up) that lead it, and everything else keeps its order.  A tool
that hands threads out in the order it reads their first samples then
sees a thread the main thread started first and the main thread second,
as perf can write them when that thread's CPU buffer is flushed first in
a round.

File mode, uncompressed, one sample layout for all attrs, samples with
TID; anything else is refused with exit 2.  Written from
include/uapi/linux/perf_event.h and perf's header layout, independently of
restack.
"""
import struct
import sys

import capture_tool
import crop_stack
from crop_stack import CropError, u64

RECORD_FINISHED_ROUND = 68
RECORD_FINISHED_INIT = 82
USER_RECORD_MIN = 64


def sample_tid(buf, p, sample_type):
    """(pid, tid) of the sample record at p."""
    if not sample_type & crop_stack.TID:
        raise CropError("the samples carry no tid")
    q = p + 8 + 8 * (bool(sample_type & crop_stack.IDENTIFIER) +
                     bool(sample_type & crop_stack.IP))
    return struct.unpack_from("<II", buf, q)


def thread_first(buf, argv):
    attr_size, attrs_off, attrs_size, data_off, data_size = \
        crop_stack.data_section(buf)
    types = {u64(buf, a + crop_stack.ATTR_SAMPLE_TYPE)
             for a in range(attrs_off, attrs_off + attrs_size, attr_size)}
    if len(types) != 1:
        raise CropError("%d attrs with different sample layouts"
                        % len(types))
    sample_type = types.pop()
    recs = list(crop_stack.records(buf, data_off, data_size))
    ids = {r[2]: sample_tid(buf, r[2], sample_type)
           for r in recs if r[0] == crop_stack.RECORD_SAMPLE}
    tids = {tid for _, tid in ids.values()}
    if len(tids) < 2:
        raise CropError("samples of %d threads" % len(tids))
    newest = max(tids)
    lead = 0
    while lead < len(recs) and recs[lead][0] >= USER_RECORD_MIN:
        lead += 1
    first = [r for r in recs[lead:] if r[2] in ids and ids[r[2]][1] == newest]
    first += [r for r in recs[lead:] if r[2] in ids and
              ids[r[2]][1] != newest and ids[r[2]][0] == ids[r[2]][1]]
    moved = {r[2] for r in first}
    rest = [r for r in recs[lead:] if r[2] not in moved]
    out = bytearray(buf[:data_off])
    for typ, _, p, size in recs[:lead] + first + rest:
        rec = bytearray(buf[p:p + size])
        if typ == RECORD_FINISHED_ROUND:
            struct.pack_into("<I", rec, 0, RECORD_FINISHED_INIT)
        out += rec
    out += buf[data_off + data_size:]
    return bytes(out)


if __name__ == "__main__":
    sys.exit(capture_tool.run(sys.argv, "thread_first.py IN OUT",
                              thread_first, (CropError,)))
