#!/usr/bin/env python3
"""mkjitdump.py - writes small jitdump files for the JIT fuzz corpus
(testdata/corpus/jit): two code loads, one with unwinding info (an
.eh_frame CIE + FDE laid out after the code, as perf's genelf expects), a
DEBUG_INFO record, a CODE_MOVE, and a record cut short at the end.

  mkjitdump.py OUT.dump [be]     ('be': big-endian byte order)

Layout: perf's tools/perf/Documentation/jitdump-specification.txt.
"""
import struct
import sys

MAGIC = 0x4A695444
LOAD, MOVE, DEBUG, CLOSE, UNWIND = 0, 1, 2, 3, 4


def uleb(v):
    out = b''
    while True:
        b = v & 0x7f
        v >>= 7
        out += bytes([b | (0x80 if v else 0)])
        if not v:
            return out


def sleb(v):
    out = b''
    while True:
        b = v & 0x7f
        v >>= 7
        done = (v == 0 and not b & 0x40) or (v == -1 and b & 0x40)
        out += bytes([b | (0 if done else 0x80)])
        if done:
            return out


def pad(b, n):
    return b + b'\0' * (-len(b) % n)


def eh_frame(e, code_addr, code_size):
    """CIE + FDE for [code_addr, code_addr + code_size), placed at
    code_addr + ALIGN8(code_size): push rbp; mov rbp, rsp."""
    base = code_addr + ((code_size + 7) & ~7)
    cie_body = (struct.pack(e + 'I', 0) + b'\x01' + b'zR\0' + uleb(1) +
                sleb(-8) + uleb(16) + uleb(1) + b'\x1b' +
                b'\x0c\x07\x08' + b'\x90\x01')
    cie_body = pad(cie_body, 8) if (len(cie_body) + 4) % 8 else cie_body
    while (len(cie_body) + 4) % 8:
        cie_body += b'\0'
    cie = struct.pack(e + 'I', len(cie_body)) + cie_body
    fde_off = len(cie)
    # pc_begin is pc-relative to its own field (8 bytes into the FDE)
    pc_rel = code_addr - (base + fde_off + 8)
    fde_body = (struct.pack(e + 'I', fde_off + 4) +
                struct.pack(e + 'i', pc_rel) + struct.pack(e + 'I', code_size) +
                uleb(0) + b'\x41\x0e\x10\x86\x02\x43\x0d\x06')
    while (len(fde_body) + 4) % 8:
        fde_body += b'\0'
    fde = struct.pack(e + 'I', len(fde_body)) + fde_body
    return cie + fde + struct.pack(e + 'I', 0)


def record(e, rid, time, payload):
    return struct.pack(e + 'IIQ', rid, 16 + len(payload), time) + payload


def main():
    out = sys.argv[1]
    e = '>' if len(sys.argv) > 2 and sys.argv[2] == 'be' else '<'
    pid = 4242
    code = b'\x55\x48\x89\xe5\x90\x90\x5d\xc3' * 4
    a1, a2 = 0x7f0000001000, 0x7f0000002000
    recs = b''
    eh = eh_frame(e, a1, len(code))
    hdr = b'\0' * 20          # an .eh_frame_hdr placeholder after it
    recs += record(e, UNWIND, 100, struct.pack(e + 'QQQ', len(eh) + len(hdr),
                                               len(hdr), len(eh) + len(hdr))
                   + eh + hdr)
    recs += record(e, DEBUG, 101, struct.pack(e + 'QQ', a1, 2) +
                   struct.pack(e + 'QII', a1, 10, 0) + b'w.js\0' +
                   struct.pack(e + 'QII', a1 + 4, 11, 0) + b'w.js\0')
    recs += record(e, LOAD, 102, struct.pack(e + 'IIQQQQ', pid, pid, a1, a1,
                                             len(code), 1) + b'JS:*f w.js:1\0'
                   + code)
    recs += record(e, LOAD, 103, struct.pack(e + 'IIQQQQ', pid, pid, a2, a2,
                                             len(code), 2) + b'JS:~g w.js:5\0'
                   + code)
    recs += record(e, MOVE, 104, struct.pack(e + 'IIQQQQQ', pid, pid, a1, a1,
                                             a1 + 0x8000, len(code), 1))
    recs += record(e, CLOSE, 105, b'')
    cut = record(e, LOAD, 106, struct.pack(e + 'IIQQQQ', pid, pid, a2, a2,
                                           64, 3) + b'JS:cut\0')[:40]
    header = struct.pack(e + 'IIIIIIQQ', MAGIC, 1, 40, 62, 0, pid, 99, 0)
    with open(out, 'wb') as f:
        f.write(header + recs + cut)


if __name__ == '__main__':
    main()
