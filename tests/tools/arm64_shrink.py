#!/usr/bin/env python3
"""arm64_shrink.py - pack the build-id cache of arm64_fixtures.sh's guest
run into a small `perf archive`-shaped tarball.

  arm64_shrink.py GUEST_OUT_DIR TESTDATA_ARM64_DIR

GUEST_OUT_DIR/cache is a copy of the guest's ~/.debug (perf record put
there every object a sample hit, the [vdso] and the kernel's kallsyms);
GUEST_OUT_DIR/*.perf are the guest's perf script outputs.  Writes
TESTDATA_ARM64_DIR/cache.tar.xz with the same names, smaller:

- kallsyms keeps only the lines of the symbols the oracles name, the line
  after each (where the symbol ends) and _text/_stext/_etext;
- kernel modules are left out (kallsyms names their frames);
- ELF files over 512 KiB that are not ours (Debian's libc, libm,
  python3) have the bytes of their code and data sections (.text,
  .rodata, .data...) zeroed in place (same layout, same build-id: the
  tarball compresses them away), but for the 4 KiB pages of .text the
  oracles' frames are in (where the unwinder checks the instruction
  before a return address: BL, BLR).  Their .eh_frame, .eh_frame_hdr,
  .plt, symbol tables, notes and headers stay, so CFI unwinding and
  names are unchanged.
"""
import io
import os
import re
import struct
import sys
import tarfile

BIG = 512 * 1024
# the PROGBITS sections unwinding and naming read (symbol tables, notes
# and the dynamic section have types of their own)
KEEP = {'.eh_frame', '.eh_frame_hdr', '.plt', '.init', '.fini', '.interp',
        '.gnu_debuglink', '.gcc_except_table', '.got', '.got.plt'}


def kernel_names(out):
    names = set()
    for f in os.listdir(out):
        if not f.endswith('.perf'):
            continue
        with open(os.path.join(out, f), errors='replace') as fh:
            for line in fh:
                # kernel frames: the kernel's and its modules' (.ko)
                m = re.match(r'\s+ffff[0-9a-f]{12} (\S+?)(\+0x[0-9a-f]+)? '
                             r'\(', line)
                if m:
                    names.add(m.group(1))
    return names


def shrink_kallsyms(data, names):
    lines = data.decode().splitlines(True)
    keep = set()
    for i, line in enumerate(lines):
        parts = line.split()
        if len(parts) < 3:
            continue
        if parts[2] in names:
            keep.add(i)
            if i + 1 < len(lines):
                keep.add(i + 1)
        elif parts[2] in ('_text', '_stext', '_etext', '_end'):
            keep.add(i)
    return ''.join(lines[i] for i in sorted(keep)).encode()


def code_pages(out):
    """The 4 KiB pages of each object's code the oracles' frames are in
    (by the object's addresses perf script prints)."""
    pages = {}
    for f in os.listdir(out):
        if not f.endswith('.perf'):
            continue
        with open(os.path.join(out, f), errors='replace') as fh:
            for line in fh:
                m = re.match(r'\s+([0-9a-f]+) .* \((/[^)]*)\)$', line)
                if m:
                    pages.setdefault(m.group(2), set()).add(
                        int(m.group(1), 16) >> 12)
    return pages


def zero_text(data, keep=frozenset()):
    if data[:4] != b'\x7fELF' or data[4] != 2 or data[5] != 1:
        return data
    shoff, = struct.unpack_from('<Q', data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from('<HHH', data, 0x3a)
    secs = [struct.unpack_from('<IIQQQQIIQQ', data, shoff + i * shentsize)
            for i in range(shnum)]
    strtab = secs[shstrndx]
    out = bytearray(data)
    for s in secs:
        end = data.index(b'\0', strtab[4] + s[0])
        name = data[strtab[4] + s[0]:end].decode()
        if s[1] == 1 and name not in KEEP and not name.startswith('.note'):
            out[s[4]:s[4] + s[5]] = bytes(s[5])
            if name != '.text':
                continue
            for page in keep:     # code around the oracles' frames
                lo = max(page << 12, s[3])
                hi = min((page + 1) << 12, s[3] + s[5])
                if lo < hi:
                    o = s[4] + lo - s[3]
                    out[o:o + hi - lo] = data[o:o + hi - lo]
    return bytes(out)


def main():
    out, dest = sys.argv[1], sys.argv[2]
    cache = os.path.join(out, 'cache')
    names = kernel_names(out)
    pages = code_pages(out)
    tar = tarfile.open(os.path.join(dest, 'cache.tar.xz'), 'w:xz',
                       preset=9)
    for root, dirs, files in os.walk(cache):
        dirs.sort()
        for f in sorted(files) + [d for d in dirs
                                  if os.path.islink(os.path.join(root, d))]:
            path = os.path.join(root, f)
            rel = os.path.relpath(path, cache)
            # kernel modules: their frames are named by kallsyms
            if '.ko/' in rel or (os.path.islink(path) and
                                 '.ko/' in os.readlink(path)):
                continue
            info = tarfile.TarInfo(rel)
            info.mtime = 0
            if os.path.islink(path):
                info.type = tarfile.SYMTYPE
                info.linkname = os.readlink(path)
                tar.addfile(info)
                continue
            with open(path, 'rb') as fh:
                data = fh.read()
            if f == 'kallsyms':
                data = shrink_kallsyms(data, names)
            elif len(data) > BIG and 'restack-arm64' not in rel:
                dso = '/' + rel.rsplit('/', 2)[0]
                data = zero_text(data, pages.get(dso, set()))
            info.size = len(data)
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))
    tar.close()


if __name__ == '__main__':
    main()
