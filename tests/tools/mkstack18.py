#!/usr/bin/env python3
"""mkstack18.py IN.data OUT.syscap - turns a little-endian, file-mode
perf.data recorded with `perf record -e cpu-clock --call-graph dwarf`
(one event, sample_type IP|TID|TIME|ADDR|CALLCHAIN|PERIOD|REGS_USER|
STACK_USER|DATA_SRC, x86_64) into the sysprof stream eu-stacktrace reads:
PROCESS, FORK, EXIT and MAP frames from COMM, FORK, EXIT and MMAP2
records, and for every sample a type-18 frame (u64 stack size, i32 tid,
u32 pad, the copied stack bytes, u32 n_regs, u32 abi, the 17 registers
AX..IP and R8..R15).  Frames come in the file's record order, so not in
time order.  A test tool: anything else is refused."""
import struct
import sys

WANT_ST = 0xb12f
EU_BITS = list(range(0, 9)) + list(range(16, 24))


def frame(kind, pid, time, payload, cpu=-1):
    length = (24 + len(payload) + 7) & ~7
    head = struct.pack('<Hhiq', length, cpu, pid, time) + bytes([kind]) + b'\0' * 7
    return head + payload + b'\0' * (length - 24 - len(payload))


def frames(d):
    """The file header, then every frame, of the capture d (bytes)."""
    if d[:8] != b'PERFILE2' or struct.unpack_from('<Q', d, 8)[0] != 104:
        sys.exit('mkstack18: not a little-endian file-mode perf.data')
    attr_size, aoff, asize, doff, dsize = struct.unpack_from('<5Q', d, 16)
    if asize != attr_size:
        sys.exit('mkstack18: one event only')
    st, = struct.unpack_from('<Q', d, aoff + 24)
    mask, = struct.unpack_from('<Q', d, aoff + 80)
    if st != WANT_ST:
        sys.exit('mkstack18: sample_type 0x%x, not 0x%x' % (st, WANT_ST))
    bits = [b for b in range(64) if mask >> b & 1]
    out = [struct.pack('<IBB', 0xFDCA975E, 1, 1) + b'\0' * 250]
    off, end = doff, doff + dsize
    while off < end:
        typ, misc, size = struct.unpack_from('<IHH', d, off)
        rec = d[off:off + size]
        off += size
        if typ == 9:
            ip, pid, tid, time, _addr, _period, nr = struct.unpack_from('<QiiQQQQ', rec, 8)
            p = 8 + 48 + 8 * nr
            abi, = struct.unpack_from('<Q', rec, p)
            p += 8
            regs = []
            if abi:
                regs = list(struct.unpack_from('<%dQ' % len(bits), rec, p))
                p += 8 * len(bits)
            ssize, = struct.unpack_from('<Q', rec, p)
            p += 8
            if not abi or not ssize:
                continue
            stack = rec[p:p + ssize]
            dyn, = struct.unpack_from('<Q', rec, p + ssize)
            dyn &= ~7
            eu = [regs[bits.index(b)] for b in EU_BITS]
            payload = (struct.pack('<QiI', dyn, tid, 0) + stack[:dyn] +
                       struct.pack('<II', len(eu), abi) +
                       struct.pack('<%dQ' % len(eu), *eu))
            out.append(frame(18, pid, time, payload))
            continue
        time, = struct.unpack_from('<Q', rec, size - 8)
        if typ == 3:
            pid, tid = struct.unpack_from('<ii', rec, 8)
            name = rec[16:size - 16].split(b'\0')[0]
            if pid == tid:
                out.append(frame(4, pid, time, name + b'\0'))
        elif typ in (4, 7):
            pid, _ppid, tid, ptid = struct.unpack_from('<4i', rec, 8)
            if typ == 7:
                out.append(frame(5, ptid, time, struct.pack('<i', tid)))
            elif pid == tid:
                out.append(frame(6, pid, time, b''))
        elif typ == 10:
            pid, _tid, start, length, pgoff = struct.unpack_from('<iiQQQ', rec, 8)
            ino, = struct.unpack_from('<Q', rec, 48)
            prot, = struct.unpack_from('<I', rec, 64)
            name = rec[72:size - 16].split(b'\0')[0]
            if prot & 4 and pid >= 0 and pid != -1:
                out.append(frame(3, pid, time,
                                 struct.pack('<4Q', start, start + length, pgoff, ino) +
                                 name + b'\0'))
    return out


def main():
    d = open(sys.argv[1], 'rb').read()
    open(sys.argv[2], 'wb').write(b''.join(frames(d)))


if __name__ == '__main__':
    main()
