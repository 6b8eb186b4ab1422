#!/usr/bin/env python3
"""syscap_swap.py IN OUT - writes a big-endian copy of a little-endian
sysprof capture, as a big-endian sysprof would have written it: the
header's little_endian bit cleared (bit 7 of byte 5 on a big-endian
compiler's layout, left 0) and its times swapped, every frame header's
len, cpu, pid and time swapped, and the fields of the frame types restack
reads (SAMPLE, MAP, FORK, JITMAP, METADATA and PROCESS strings, type-18
user stacks: sizes, tid, register count, ABI, registers; stack bytes are
the recording machine's memory and are left alone).  Other frame types are
dropped: this is a test tool for restack's reader, not a converter."""
import struct
import sys


def swap(fmt, data, off):
    vals = struct.unpack_from('<' + fmt, data, off)
    struct.pack_into('>' + fmt, data, off, *vals)


def main():
    src = bytearray(open(sys.argv[1], 'rb').read())
    if src[:4] != b'\x5e\x97\xca\xfd' or not src[5] & 1:
        sys.exit('syscap_swap: not a little-endian sysprof capture')
    head = bytearray(src[:256])
    head[5] = 0
    swap('qq', head, 72)
    out = [bytes(head)]
    off = 256
    while off + 24 <= len(src):
        length = struct.unpack_from('<H', src, off)[0]
        f = bytearray(src[off:off + length])
        kind = f[16]
        off += length
        if kind == 2:
            n = struct.unpack_from('<H', f, 24)[0]
            swap('H', f, 24)
            swap('i', f, 28)
            swap('%dQ' % n, f, 32)
        elif kind == 3:
            swap('4Q', f, 24)
        elif kind == 5:
            swap('i', f, 24)
        elif kind == 7:
            n = struct.unpack_from('<I', f, 24)[0]
            swap('I', f, 24)
            p = 28
            for _ in range(n):
                swap('Q', f, p)
                p = f.index(0, p + 8) + 1
        elif kind == 18:
            size = struct.unpack_from('<Q', f, 24)[0]
            swap('Q', f, 24)
            swap('i', f, 32)
            nregs = struct.unpack_from('<I', f, 40 + size)[0]
            swap('II', f, 40 + size)
            swap('%dQ' % nregs, f, 48 + size)
        elif kind not in (1, 4, 6, 11):
            continue
        swap('Hhiq', f, 0)
        out.append(bytes(f))
    open(sys.argv[2], 'wb').write(b''.join(out))


if __name__ == '__main__':
    main()
