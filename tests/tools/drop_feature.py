#!/usr/bin/env python3
"""drop_feature.py - copies a file-mode perf.data without one feature
section (clears its bit and removes its entry from the feature table),
as a capture from a perf that did not write it would look.

  drop_feature.py IN OUT BIT      (12 = event_desc)
"""
import struct
import sys

src, dst, bit = sys.argv[1], sys.argv[2], int(sys.argv[3])
data = bytearray(open(src, "rb").read())
if data[:8] != b"PERFILE2":
    sys.exit("drop_feature.py: not a little-endian file-mode perf.data")
data_off, data_size = struct.unpack_from("<QQ", data, 40)
feats = struct.unpack_from("<4Q", data, 72)
if not (feats[bit // 64] >> (bit % 64)) & 1:
    sys.exit(f"drop_feature.py: feature {bit} is not present")
table = data_off + data_size
index = sum(bin(feats[w] & ((1 << (bit - 64 * w)) - 1 if w == bit // 64 else
                            (1 << 64) - 1)).count("1")
            for w in range(bit // 64 + 1))
nr = sum(bin(f).count("1") for f in feats)
entries = data[table:table + 16 * nr]
del entries[16 * index:16 * index + 16]
data[table:table + 16 * nr] = entries + bytes(16)
words = list(feats)
words[bit // 64] &= ~(1 << (bit % 64))
struct.pack_into("<4Q", data, 72, *words)
open(dst, "wb").write(data)
