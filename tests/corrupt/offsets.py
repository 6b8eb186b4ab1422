#!/usr/bin/env python3
"""offsets.py - print the byte offsets tests/corrupt/*.sh patch, for one
perf.data fixture, as shell assignments (NAME=VALUE, decimal).

    offsets.py FILE

Independent of restack: it walks the header and the record stream itself
(little-endian files; COMPRESSED contents are not entered).

  attrs data data_end table     header sections, feature table
  attr0                         first attrs-section entry (file mode)
  feat_N                        payload offset of feature N (file mode)
  rec_N                         offset of the first record of type N
  sample_cc                     callchain nr of the first SAMPLE
  usample, usample_cc           first SAMPLE with an empty callchain, and
                                its callchain nr
  recs                          all record offsets, space-separated
  rec_sizes                     their sizes, same order
"""
import struct
import sys


def main(path):
    d = open(path, "rb").read()
    out = {}
    attrs = {}          # id -> sample_type
    if d[:8] != b"PERFILE2":
        sys.exit("offsets.py: %s: not a little-endian perf.data" % path)
    hsize = struct.unpack_from("<Q", d, 8)[0]
    first_st = None
    if hsize == 16:
        off, end = 16, len(d)
    else:
        attr_size, attrs_off, attrs_size, data, data_size = \
            struct.unpack_from("<5Q", d, 16)
        out.update(attrs=attrs_off, attr0=attrs_off, data=data,
                   data_end=data + data_size, table=data + data_size)
        for a in range(attrs_off, attrs_off + attrs_size, attr_size):
            st = struct.unpack_from("<Q", d, a + 24)[0]
            first_st = st if first_st is None else first_st
            ids_off, ids_size = struct.unpack_from("<QQ", d,
                                                   a + attr_size - 16)
            for i in range(ids_size // 8):
                attrs[struct.unpack_from("<Q", d, ids_off + 8 * i)[0]] = st
        bits = struct.unpack_from("<4Q", d, 72)
        feats = [b for b in range(256) if bits[b // 64] >> (b % 64) & 1]
        for i, f in enumerate(feats):
            out["feat_%d" % f] = struct.unpack_from(
                "<Q", d, data + data_size + 16 * i)[0]
        off, end = data, data + data_size
    recs, sizes = [], []
    while off + 8 <= end:
        typ, misc, size = struct.unpack_from("<IHH", d, off)
        if size < 8:
            break
        recs.append(off)
        sizes.append(size)
        out.setdefault("rec_%d" % typ, off)
        if typ == 64:
            asize = struct.unpack_from("<I", d, off + 12)[0]
            st = struct.unpack_from("<Q", d, off + 8 + 24)[0]
            first_st = st if first_st is None else first_st
            for i in range(8 + asize, size, 8):
                attrs[struct.unpack_from("<Q", d, off + i)[0]] = st
        if typ == 9 and first_st is not None:
            st = first_st
            if st & 65536:                      # IDENTIFIER: its own attr
                st = attrs.get(struct.unpack_from("<Q", d, off + 8)[0], st)
            # IDENTIFIER IP TID TIME ADDR ID STREAM_ID CPU PERIOD come
            # before CALLCHAIN (READ is not used by the fixtures)
            n = sum(bool(st & b) for b in (1, 2, 4, 8, 64, 512, 128, 256,
                                          65536))
            if st & 32:
                cc = off + 8 + 8 * n
                out.setdefault("sample_cc", cc)
                if "usample" not in out and \
                        struct.unpack_from("<Q", d, cc)[0] == 0:
                    out["usample"] = off
                    out["usample_cc"] = cc
        extra = 0
        if typ == 66:
            extra = struct.unpack_from("<I", d, off + 8)[0]
        elif typ == 71:
            extra = struct.unpack_from("<Q", d, off + 8)[0]
        off += size + extra
    out["recs"] = '"%s"' % " ".join(map(str, recs))
    out["rec_sizes"] = '"%s"' % " ".join(map(str, sizes))
    out["size"] = len(d)
    for k, v in out.items():
        print("%s=%s" % (k, v))


if __name__ == "__main__":
    main(sys.argv[1])
