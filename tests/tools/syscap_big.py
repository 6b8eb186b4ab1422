#!/usr/bin/env python3
"""syscap_big.py OUT.syscap NSAMPLES - writes a valid little-endian
sysprof capture of many tiny frames, cheaply: a PROCESS and a MAP frame
for pid 4242 ("bigprog", /nonexistent/bigprog at 0x400000), then NSAMPLES
40-byte SAMPLE frames of one user address each, alternately 0x401000 and
0x402000 (so each makes half the samples, the odd one to the first), as
two CPUs' buffers flushed in turns of 256 frames that cover the same
times (so the file is in time order only within a turn), CPU 0 running
thread 4242 and CPU 1 thread 4243, then a second
PROCESS frame as a /proc scan at the end would write it.  Frame i has
time 1000 + 10 i; a turn's frames are i = 512 k + 2 j + cpu."""
import struct
import sys

TURN = 256


def frame(kind, pid, time, payload, cpu=-1):
    length = (24 + len(payload) + 7) & ~7
    head = struct.pack('<Hhiq', length, cpu, pid, time) + bytes([kind]) + b'\0' * 7
    return head + payload + b'\0' * (length - 24 - len(payload))


def main():
    if len(sys.argv) != 3:
        sys.exit('usage: syscap_big.py OUT.syscap NSAMPLES')
    n = int(sys.argv[2])
    pid = 4242
    out = open(sys.argv[1], 'wb')
    out.write(struct.pack('<IBB', 0xFDCA975E, 1, 1) + b'\0' * 250)
    out.write(frame(4, pid, 500, b'bigprog\0'))
    out.write(frame(3, pid, 600, struct.pack('<4Q', 0x400000, 0x410000, 0, 7)
                    + b'/nonexistent/bigprog\0'))
    samp = struct.Struct('<HhiqB7xHHiQ')
    per_block = 2 * TURN
    buf = bytearray(samp.size * per_block)
    for base in range(0, n, per_block):
        k = 0
        for cpu in (0, 1):
            for j in range(TURN):
                i = base + 2 * j + cpu
                if i >= n:
                    continue
                samp.pack_into(buf, k * samp.size, samp.size, cpu, pid,
                               1000 + 10 * i, 2, 1, 0, pid + cpu,
                               0x401000 if i % 2 == 0 else 0x402000)
                k += 1
        out.write(memoryview(buf)[:k * samp.size])
    out.write(frame(4, pid, 1000 + 10 * n, b'/usr/bin/bigprog --all\0'))
    out.close()


if __name__ == '__main__':
    main()
