#!/usr/bin/env python3
"""syscap_strip.py IN OUT - copies a little-endian sysprof capture without
the frames that describe the recording machine rather than the workload:
frames of pid 0 (processes outside sysprof-record.sh's PID namespace) and
the FILE_CHUNK frames of /proc/mounts and /proc/PID/mountinfo (the host's
mount table).  Every other frame is copied byte for byte, in order; the
256-byte header is kept."""
import struct
import sys


def main():
    src, dst = sys.argv[1], sys.argv[2]
    data = open(src, 'rb').read()
    if data[:4] != b'\x5e\x97\xca\xfd' or not data[5] & 1:
        sys.exit('syscap_strip: not a little-endian sysprof capture')
    out = [data[:256]]
    off = 256
    while off + 24 <= len(data):
        length, _cpu, pid = struct.unpack_from('<Hhi', data, off)
        kind = data[off + 16]
        frame = data[off:off + length]
        drop = pid == 0
        if kind == 13:
            path = frame[28:284].split(b'\0')[0]
            drop = drop or path == b'/proc/mounts' or path.endswith(b'/mountinfo')
        if not drop:
            out.append(frame)
        off += length
    open(dst, 'wb').write(b''.join(out))


if __name__ == '__main__':
    main()
