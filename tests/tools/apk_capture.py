#!/usr/bin/env python3
"""apk_capture.py - make an Android-style capture out of a file-mode
perf.data: a library's mappings renamed as a library inside an APK, their
file offsets moved into the APK, and its build-id entry stored as
simpleperf stores a short build-id (zero-padded to 20 bytes, no size).

  apk_capture.py IN OUT OLD_PATH NEW_PATH OFFSET BUILD_ID_HEX

MMAP2 records of OLD_PATH get NEW_PATH (e.g. "/data/app/x/base.apk!/lib/
arm64-v8a/libfoo.so") and OFFSET added to their pgoff (where the library
starts in the APK); the build_id feature's entry of OLD_PATH gets NEW_PATH
and BUILD_ID_HEX zero-padded to 20 bytes, without perf's size flag.  The
data section and the feature sections after it are rewritten with their
new sizes.  Little-endian file-mode captures without compression only.
"""
import struct
import sys

MMAP2 = 10
MISC_MMAP_BUILD_ID = 1 << 14
MISC_BUILD_ID_SIZE = 1 << 15
FEAT_BUILD_ID = 2


def pad(name, align):
    n = len(name) + 1
    return name + b'\0' * ((n + align - 1) // align * align - len(name))


def records(data, old, new, delta):
    out, pos, hits = bytearray(), 0, 0
    while pos + 8 <= len(data):
        typ, misc, size = struct.unpack_from('<IHH', data, pos)
        if size < 8 or pos + size > len(data):
            sys.exit('apk_capture.py: bad record at data offset %d' % pos)
        rec = data[pos:pos + size]
        if typ == MMAP2:
            name_end = rec.index(b'\0', 72)
            name = bytes(rec[72:name_end])
            plen = len(pad(name, 8))
            if name == old:
                tail = rec[72 + plen:]
                body = bytearray(rec[8:72])
                pgoff, = struct.unpack_from('<Q', body, 24)
                struct.pack_into('<Q', body, 24, pgoff + delta)
                rec = (struct.pack('<IHH', typ, misc,
                                   8 + 64 + len(pad(new, 8)) + len(tail)) +
                       bytes(body) + pad(new, 8) + tail)
                hits += 1
        out += rec
        pos += size
    if not hits:
        sys.exit('apk_capture.py: no MMAP2 record of %s' % old.decode())
    return bytes(out)


def build_ids(sec, old, new, bid):
    out, pos, hit = bytearray(), 0, False
    while pos + 8 <= len(sec):
        typ, misc, size = struct.unpack_from('<IHH', sec, pos)
        ent = sec[pos:pos + size]
        name = ent[36:].split(b'\0', 1)[0]
        if name == old:
            body = struct.pack('<i', struct.unpack_from('<i', ent, 8)[0])
            body += bid.ljust(20, b'\0') + b'\0' * 4
            name = pad(new, 64)
            ent = struct.pack('<IHH', typ, misc & ~MISC_BUILD_ID_SIZE,
                              8 + len(body) + len(name)) + body + name
            hit = True
        out += ent
        pos += size
    if not hit:
        sys.exit('apk_capture.py: no build-id entry of %s' % old.decode())
    return bytes(out)


def main():
    if len(sys.argv) != 7:
        sys.exit('usage: ' + __doc__.strip().splitlines()[4].strip())
    src, dst, old, new, delta, bid = sys.argv[1:]
    old, new, delta = old.encode(), new.encode(), int(delta, 0)
    bid = bytes.fromhex(bid)
    buf = open(src, 'rb').read()
    if buf[:8] != b'PERFILE2':
        sys.exit('apk_capture.py: not a little-endian file-mode perf.data')
    data_off, data_size = struct.unpack_from('<QQ', buf, 40)
    feats = struct.unpack_from('<4Q', buf, 72)
    data = records(buf[data_off:data_off + data_size], old, new, delta)
    bits = [b for b in range(256) if (feats[b // 64] >> (b % 64)) & 1]
    table = data_off + data_size
    secs = []
    for i, b in enumerate(bits):
        off, size = struct.unpack_from('<QQ', buf, table + 16 * i)
        sec = buf[off:off + size]
        if b == FEAT_BUILD_ID:
            sec = build_ids(sec, old, new, bid)
        secs.append(sec)
    out = bytearray(buf[:data_off]) + data
    struct.pack_into('<QQ', out, 40, data_off, len(data))
    pos = len(out) + 16 * len(bits)
    entries = bytearray()
    for sec in secs:
        entries += struct.pack('<QQ', pos, len(sec))
        pos += len(sec)
    out += entries + b''.join(secs)
    open(dst, 'wb').write(bytes(out))


if __name__ == '__main__':
    main()
