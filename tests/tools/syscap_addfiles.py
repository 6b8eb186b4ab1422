#!/usr/bin/env python3
"""syscap_addfiles.py IN OUT [--sample PID TIME ADDR...] [PATH=FILE...]

Copies the little-endian sysprof capture IN to OUT, appending a SAMPLE
frame (addresses in hex, K and U for the kernel and user context markers)
and, for each PATH=FILE, the bytes of FILE as FILE_CHUNK frames of PATH
(16100 bytes each, then an empty last chunk, as sysprof writes them).
For tests and fuzz seeds of the embedded /proc/kallsyms and __symbols__.
"""
import struct
import sys


def frame(ftype, payload, pid=-1, time=0):
    n = 24 + len(payload)
    full = (n + 7) & ~7
    hdr = struct.pack('<HhiqBBHI', full, -1, pid, time, ftype, 0, 0, 0)
    return hdr + payload + b'\0' * (full - n)


def chunks(path, data):
    out = b''
    pos = 0
    while True:
        part = data[pos:pos + 16100]
        last = not part
        bits = (len(part) << 16) | int(last)
        out += frame(13, struct.pack('<I', bits) +
                     path.encode().ljust(256, b'\0') + part)
        if last:
            return out
        pos += len(part)


def main(argv):
    src, dst = argv[1], argv[2]
    data = open(src, 'rb').read()
    rest = argv[3:]
    if rest and rest[0] == '--sample':
        pid, time = int(rest[1]), int(rest[2])
        addrs = []
        i = 3
        while i < len(rest) and '=' not in rest[i]:
            a = rest[i]
            addrs.append({'K': 2**64 - 128, 'U': 2**64 - 512}.get(a) or
                         int(a, 16))
            i += 1
        data += frame(2, struct.pack('<HHi', len(addrs), 0, pid) +
                      b''.join(struct.pack('<Q', a) for a in addrs),
                      pid, time)
        rest = rest[i:]
    for arg in rest:
        path, name = arg.split('=', 1)
        data += chunks(path, open(name, 'rb').read())
    open(dst, 'wb').write(data)


main(sys.argv)
