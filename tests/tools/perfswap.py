#!/usr/bin/env python3
"""perfswap.py - rewrite a little-endian perf.data as a big-endian one.

    perfswap.py IN OUT

The output is what a big-endian machine would have written for the same
events: every multi-byte field of the header, the attrs (the flag
bitfield by perf's swap_bitfield() rule: bytes stay, the bits of each
byte are mirrored), the id arrays, every record type's fields, the sample
fields of each event's sample_type, sample_id trailers and the feature
sections is byte-swapped in place.  Layout and sizes do not change.

COMPRESSED and COMPRESSED2 records (perf record -z) are decompressed
(one zstd stream, through libzstd), their records swapped and compressed
again into one stream; each compressed record is replaced by one holding
the complete records decoded so far (a record cut between two compressed
records moves whole into the later one), so the compressed sizes, the
data size and the offsets of what follows the data section change.

What stays as recorded: strings, build-id bytes, RAW (tracepoint)
payloads and the tracing-data blob (both describe their own byte order
and perf leaves them alone), AUXTRACE payloads.  STACK_USER data and the
AUX sample payload are swapped as 64-bit words: that is how a big-endian
machine holds the same 64-bit values, and how perf reads them back (it
swaps a whole sample as u64s and undoes that only for RAW), so `perf
script` unwinds the swapped file exactly like the original.

Written from the layouts in include/uapi/linux/perf_event.h and perf's
tools/perf/util/{header,session,event}.c, independently of restack's
reader, so that tests can compare the two.  It refuses what it cannot
swap faithfully (unknown feature sections, non-empty BPF program info)
rather than writing a wrong file.
"""
import ctypes
import ctypes.util
import struct
import sys

import capture_tool

MAGIC = b"PERFILE2"

# sample_type bits
IP, TID, TIME, ADDR, READ, CALLCHAIN, ID, CPU = (1 << i for i in range(8))
PERIOD, STREAM_ID, RAW, BRANCH_STACK = (1 << i for i in range(8, 12))
REGS_USER, STACK_USER, WEIGHT, DATA_SRC = (1 << i for i in range(12, 16))
IDENTIFIER, TRANSACTION, REGS_INTR, PHYS_ADDR = (1 << i for i in range(16, 20))
AUX, CGROUP, DATA_PAGE_SIZE, CODE_PAGE_SIZE = (1 << i for i in range(20, 24))
WEIGHT_STRUCT = 1 << 24

# read_format bits
RF_ENABLED, RF_RUNNING, RF_ID, RF_GROUP, RF_LOST = 1, 2, 4, 8, 16

SAMPLE_ID_ALL = 1 << 18          # attr flag bit
BRANCH_HW_INDEX = 1 << 17        # branch_sample_type bits
BRANCH_COUNTERS = 1 << 19
MISC_MMAP_BUILD_ID = 1 << 14


class SwapError(Exception):
    pass


class ZBuf(ctypes.Structure):
    _fields_ = [("ptr", ctypes.c_void_p), ("size", ctypes.c_size_t),
                ("pos", ctypes.c_size_t)]


class Zstd:
    """One zstd decompression and one compression stream, via libzstd."""

    def __init__(self):
        name = ctypes.util.find_library("zstd") or "libzstd.so.1"
        try:
            z = ctypes.CDLL(name)
        except OSError:
            raise SwapError("COMPRESSED records need libzstd (%s)" % name)
        for f in ("ZSTD_createDStream", "ZSTD_createCStream"):
            getattr(z, f).restype = ctypes.c_void_p
        for f in ("ZSTD_initDStream", "ZSTD_initCStream",
                  "ZSTD_decompressStream", "ZSTD_compressStream2"):
            getattr(z, f).restype = ctypes.c_size_t
        z.ZSTD_isError.argtypes = [ctypes.c_size_t]
        z.ZSTD_initDStream.argtypes = [ctypes.c_void_p]
        z.ZSTD_initCStream.argtypes = [ctypes.c_void_p, ctypes.c_int]
        z.ZSTD_decompressStream.argtypes = [ctypes.c_void_p, ctypes.c_void_p,
                                            ctypes.c_void_p]
        z.ZSTD_compressStream2.argtypes = [ctypes.c_void_p, ctypes.c_void_p,
                                           ctypes.c_void_p, ctypes.c_int]
        self.z = z
        self.d = z.ZSTD_createDStream()
        self.c = z.ZSTD_createCStream()
        if not self.d or not self.c or \
                z.ZSTD_isError(z.ZSTD_initDStream(self.d)) or \
                z.ZSTD_isError(z.ZSTD_initCStream(self.c, 3)):
            raise SwapError("cannot set up zstd streams")

    def _run(self, data, step):
        src = ctypes.create_string_buffer(bytes(data), len(data))
        inb = ZBuf(ctypes.cast(src, ctypes.c_void_p), len(data), 0)
        out = b""
        while True:
            dst = ctypes.create_string_buffer(1 << 17)
            outb = ZBuf(ctypes.cast(dst, ctypes.c_void_p), 1 << 17, 0)
            ret = step(ctypes.byref(outb), ctypes.byref(inb))
            if self.z.ZSTD_isError(ret):
                raise SwapError("zstd error %d" % ret)
            out += dst.raw[:outb.pos]
            if inb.pos == inb.size and (outb.pos < outb.size) and \
                    (step != self._flush or ret == 0):
                return out

    def _flush(self, outb, inb):
        return self.z.ZSTD_compressStream2(self.c, outb, inb, 1)  # e_flush

    def decompress(self, data):
        return self._run(data, lambda o, i:
                         self.z.ZSTD_decompressStream(self.d, o, i))

    def compress(self, data):
        return self._run(data, self._flush)


class Attr:
    def __init__(self, buf, off, size_limit):
        (self.type, self.size) = struct.unpack_from("<II", buf, off)
        if self.size == 0:
            self.size = 64
        if self.size > size_limit:
            raise SwapError("attr at 0x%x: size %d exceeds its %d-byte slot"
                            % (off, self.size, size_limit))
        field = lambda o, f: struct.unpack_from(f, buf, off + o)[0] \
            if o + struct.calcsize(f) <= self.size else 0
        self.sample_type = field(24, "<Q")
        self.read_format = field(32, "<Q")
        self.flags = field(40, "<Q")
        self.branch_sample_type = field(72, "<Q")
        self.regs_user = field(80, "<Q")
        self.regs_intr = field(96, "<Q")
        self.sample_id_all = bool(self.flags & SAMPLE_ID_ALL)


class Swapper:
    def __init__(self, data):
        self.inp = bytes(data)
        self.out = bytearray(data)
        self.attrs = []
        self.ids = {}
        self.nr_cpus_avail = None
        self.pipe = False
        self.zstd = None
        self.pending = b""      # decompressed bytes not yet swapped
        self.splices = []       # (offset, old length, new bytes)

    # --- primitives -------------------------------------------------

    def u(self, off, n):
        return int.from_bytes(self.inp[off:off + n], "little")

    def sw(self, off, n):
        """Swaps one n-byte field at off."""
        if off + n > len(self.inp):
            raise SwapError("field at 0x%x runs past the end" % off)
        self.out[off:off + n] = self.inp[off:off + n][::-1]

    def sw_run(self, off, n, count):
        for i in range(count):
            self.sw(off + i * n, n)
        return off + n * count

    def cstr_end(self, off, end):
        nul = self.inp.find(b"\0", off, end)
        if nul < 0:
            raise SwapError("string at 0x%x has no NUL" % off)
        return nul + 1

    # --- attrs --------------------------------------------------------

    # (offset, size) of perf_event_attr's multi-byte fields, by ABI size;
    # offset 40 (the flag bitfield) is handled apart.
    ATTR_FIELDS = [(0, 4), (4, 4), (8, 8), (16, 8), (24, 8), (32, 8),
                   (48, 4), (52, 4), (56, 8), (64, 8), (72, 8), (80, 8),
                   (88, 4), (92, 4), (96, 8), (104, 4), (108, 2), (110, 2),
                   (112, 4), (116, 4), (120, 8), (128, 8), (136, 8)]

    def swap_attr(self, off, slot):
        a = Attr(self.inp, off, slot)
        for o, n in self.ATTR_FIELDS:
            if o + n <= a.size:
                self.sw(off + o, n)
        if a.size >= 48:
            for i in range(8):
                b = self.inp[off + 40 + i]
                self.out[off + 40 + i] = int("{:08b}".format(b)[::-1], 2)
        return a

    def add_attr(self, a, ids):
        idx = len(self.attrs)
        self.attrs.append(a)
        for i in ids:
            self.ids[i] = idx

    # --- which attr a record belongs to --------------------------------

    def sample_attr(self, body, end):
        first = self.attrs[0]
        if len(self.attrs) == 1:
            return first
        st = first.sample_type
        if st & IDENTIFIER:
            pos = 0
        elif st & ID:
            pos = bin(st & (IP | TID | TIME | ADDR)).count("1")
        else:
            return first
        if body + 8 * pos + 8 > end:
            raise SwapError("SAMPLE at 0x%x too short for its id" % body)
        return self.attrs[self.ids.get(self.u(body + 8 * pos, 8), 0)]

    def trailer_attr(self, body, end):
        first = self.attrs[0]
        if not first.sample_id_all:
            return None
        if len(self.attrs) == 1:
            return first
        st = first.sample_type
        if st & IDENTIFIER:
            pos = 1
        elif st & ID:
            pos = 1 + bool(st & CPU) + bool(st & STREAM_ID)
        else:
            return first
        if end - 8 * pos < body:
            raise SwapError("record at 0x%x too short for its id" % body)
        return self.attrs[self.ids.get(self.u(end - 8 * pos, 8), 0)]

    @staticmethod
    def trailer_size(st):
        return 8 * sum(bool(st & b) for b in
                       (TID, TIME, ID, STREAM_ID, CPU, IDENTIFIER))

    def swap_trailer(self, a, off):
        st = a.sample_type
        if st & TID:
            off = self.sw_run(off, 4, 2)
        for bit in (TIME, ID, STREAM_ID):
            if st & bit:
                off = self.sw_run(off, 8, 1)
        if st & CPU:
            off = self.sw_run(off, 4, 2)
        if st & IDENTIFIER:
            off = self.sw_run(off, 8, 1)

    # --- samples -------------------------------------------------------

    def swap_regs(self, p, mask):
        abi = self.u(p, 8)
        p = self.sw_run(p, 8, 1)
        if abi:
            p = self.sw_run(p, 8, bin(mask).count("1"))
        return p

    def swap_sample(self, body, end):
        a = self.sample_attr(body, end)
        st, rf, p = a.sample_type, a.read_format, body
        for bit in (IDENTIFIER, IP):
            if st & bit:
                p = self.sw_run(p, 8, 1)
        if st & TID:
            p = self.sw_run(p, 4, 2)
        for bit in (TIME, ADDR, ID, STREAM_ID):
            if st & bit:
                p = self.sw_run(p, 8, 1)
        if st & CPU:
            p = self.sw_run(p, 4, 2)
        if st & PERIOD:
            p = self.sw_run(p, 8, 1)
        if st & READ:
            per = 1 + bool(rf & RF_ID) + bool(rf & RF_LOST)
            times = bool(rf & RF_ENABLED) + bool(rf & RF_RUNNING)
            if rf & RF_GROUP:
                nr = self.u(p, 8)
                p = self.sw_run(p, 8, 1 + times + nr * per)
            else:
                p = self.sw_run(p, 8, per + times)
        if st & CALLCHAIN:
            nr = self.u(p, 8)
            p = self.sw_run(p, 8, 1 + nr)
        if st & RAW:
            size = self.u(p, 4)
            self.sw(p, 4)
            p += 4 + size               # payload left as recorded
        if st & BRANCH_STACK:
            nr = self.u(p, 8)
            p = self.sw_run(p, 8, 1)
            if a.branch_sample_type & BRANCH_HW_INDEX:
                p = self.sw_run(p, 8, 1)
            p = self.sw_run(p, 8, 3 * nr)
            if a.branch_sample_type & BRANCH_COUNTERS:
                p = self.sw_run(p, 8, nr)
        if st & REGS_USER:
            p = self.swap_regs(p, a.regs_user)
        if st & STACK_USER:
            size = self.u(p, 8)
            p = self.sw_run(p, 8, 1)
            if size:
                if size % 8:
                    raise SwapError("stack size %d at 0x%x is not a "
                                    "multiple of 8" % (size, p - 8))
                p = self.sw_run(p, 8, size // 8)
                p = self.sw_run(p, 8, 1)        # dyn_size
        for bit in (WEIGHT | WEIGHT_STRUCT, DATA_SRC, TRANSACTION):
            if st & bit:
                p = self.sw_run(p, 8, 1)
        if st & REGS_INTR:
            p = self.swap_regs(p, a.regs_intr)
        for bit in (PHYS_ADDR, CGROUP, DATA_PAGE_SIZE, CODE_PAGE_SIZE):
            if st & bit:
                p = self.sw_run(p, 8, 1)
        if st & AUX:
            size = self.u(p, 8)
            p = self.sw_run(p, 8, 1 + size // 8)
        if p != end:
            raise SwapError("SAMPLE at 0x%x: fields end at 0x%x, the "
                            "record at 0x%x" % (body - 8, p, end))

    # --- records -----------------------------------------------------------

    def swap_kernel_record(self, typ, misc, body, end):
        a = self.trailer_attr(body, end)
        if a is not None:
            tsize = self.trailer_size(a.sample_type)
            end -= tsize
            if end < body:
                raise SwapError("record at 0x%x shorter than its trailer"
                                % (body - 8))
            self.swap_trailer(a, end)
        p = body
        if typ == 1:                                    # MMAP
            p = self.sw_run(p, 4, 2)
            p = self.sw_run(p, 8, 3)
        elif typ == 2:                                  # LOST
            self.sw_run(p, 8, 2)
        elif typ == 3:                                  # COMM
            self.sw_run(p, 4, 2)
        elif typ in (4, 7):                             # EXIT, FORK
            p = self.sw_run(p, 4, 4)
            self.sw_run(p, 8, 1)
        elif typ in (5, 6):                             # (UN)THROTTLE
            self.sw_run(p, 8, 3)
        elif typ == 8:                                  # READ
            p = self.sw_run(p, 4, 2)
            self.sw_run(p, 8, (end - p) // 8)
        elif typ == 10:                                 # MMAP2
            p = self.sw_run(p, 4, 2)
            p = self.sw_run(p, 8, 3)
            if misc & MISC_MMAP_BUILD_ID:
                self.sw(p + 2, 2)
                p += 24
            else:
                p = self.sw_run(p, 4, 2)
                p = self.sw_run(p, 8, 2)
            self.sw_run(p, 4, 2)
        elif typ == 11:                                 # AUX
            self.sw_run(p, 8, 3)
        elif typ in (12, 15):                           # ITRACE_START,
            self.sw_run(p, 4, 2)                        # SWITCH_CPU_WIDE
        elif typ in (13, 21):                           # LOST_SAMPLES,
            self.sw_run(p, 8, 1)                        # AUX_OUTPUT_HW_ID
        elif typ == 14:                                 # SWITCH
            pass
        elif typ == 16:                                 # NAMESPACES
            p = self.sw_run(p, 4, 2)
            nr = self.u(p, 8)
            self.sw_run(p, 8, 1 + 2 * nr)
        elif typ == 17:                                 # KSYMBOL
            p = self.sw_run(p, 8, 1)
            p = self.sw_run(p, 4, 1)
            self.sw_run(p, 2, 2)
        elif typ == 18:                                 # BPF_EVENT
            p = self.sw_run(p, 2, 2)
            self.sw_run(p, 4, 1)
        elif typ == 19:                                 # CGROUP
            self.sw_run(p, 8, 1)
        elif typ == 20:                                 # TEXT_POKE
            p = self.sw_run(p, 8, 1)
            self.sw_run(p, 2, 2)
        elif typ == 22:                                 # CALLCHAIN_DEFERRED
            nr = self.u(p + 8, 8)
            self.sw_run(p, 8, 2 + nr)
        else:
            raise SwapError("unknown kernel record type %d" % typ)

    def swap_cpu_map_data(self, p, end):
        typ = self.u(p, 2)
        p = self.sw_run(p, 2, 1)
        if typ == 0:                                    # CPUS
            nr = self.u(p, 2)
            self.sw_run(p, 2, 1 + nr)
        elif typ == 1:                                  # MASK
            nr, long_size = self.u(p, 2), self.u(p + 2, 2)
            p = self.sw_run(p, 2, 2)
            if long_size == 4:
                self.sw_run(p, 4, nr)
            elif long_size == 8:
                self.sw_run(p + 4, 8, nr)
            else:
                raise SwapError("cpu map long_size %d" % long_size)
        elif typ == 2:                                  # RANGE
            self.sw_run(p + 2, 2, 2)
        else:
            raise SwapError("cpu map type %d at 0x%x" % (typ, p - 2))

    def swap_build_id_entry(self, p):
        """One build-id entry (record 67 or feature 2); returns its end."""
        size = self.u(p + 6, 2)
        self.sw(p, 4)
        self.sw(p + 4, 2)
        self.sw(p + 6, 2)
        self.sw(p + 8, 4)
        if size < 36:
            raise SwapError("build-id entry at 0x%x of %d bytes" % (p, size))
        return p + size

    def swap_user_record(self, typ, misc, body, end, rec):
        p = body
        if typ == 64:                                   # HEADER_ATTR
            a = self.swap_attr(p, end - p)
            ids = []
            q = p + a.size
            while q + 8 <= end:
                ids.append(self.u(q, 8))
                q = self.sw_run(q, 8, 1)
            self.add_attr(a, ids)
        elif typ == 65:                                 # EVENT_TYPE
            self.sw_run(p, 8, 1)
        elif typ == 66:                                 # TRACING_DATA
            self.sw_run(p, 4, 1)
            return self.u(p, 4)                         # payload follows
        elif typ == 67:                                 # BUILD_ID
            self.swap_build_id_entry(rec)
        elif typ in (68, 82):                           # ROUND, INIT
            pass
        elif typ in (69, 75, 79):                       # ID_INDEX, STAT_CONFIG,
            n = 5 if typ == 79 and end - p >= 48 else (end - p) // 8
            self.sw_run(p, 8, n)                        # TIME_CONV
        elif typ == 70:                                 # AUXTRACE_INFO
            p = self.sw_run(p, 4, 2)
            self.sw_run(p, 8, (end - p) // 8)
        elif typ == 71:                                 # AUXTRACE
            size = self.u(p, 8)
            p = self.sw_run(p, 8, 3)
            self.sw_run(p, 4, 4)
            return size                                 # payload follows
        elif typ == 72:                                 # AUXTRACE_ERROR
            p = self.sw_run(p, 4, 6)
            p = self.sw_run(p, 8, 2)
            p += 64
            if p + 8 <= end:
                self.sw_run(p, 4, 2)
        elif typ == 73:                                 # THREAD_MAP
            nr = self.u(p, 8)
            p = self.sw_run(p, 8, 1)
            for i in range(nr):
                self.sw(p + 24 * i, 8)
        elif typ == 74:                                 # CPU_MAP
            self.swap_cpu_map_data(p, end)
        elif typ == 76:                                 # STAT
            p = self.sw_run(p, 8, 1)
            p = self.sw_run(p, 4, 2)
            self.sw_run(p, 8, 3)
        elif typ == 77:                                 # STAT_ROUND
            self.sw_run(p, 8, 2)
        elif typ == 78:                                 # EVENT_UPDATE
            utype = self.u(p, 8)
            p = self.sw_run(p, 8, 2)
            if utype == 1:                              # SCALE: a double
                self.sw_run(p, 8, 1)
            elif utype == 3:                            # CPUS
                self.swap_cpu_map_data(p, end)
        elif typ == 80:                                 # HEADER_FEATURE
            feat = self.u(p, 8)
            p = self.sw_run(p, 8, 1)
            if p < end:
                self.swap_feature(feat, p, end)
        elif typ in (81, 83):
            self.swap_compressed(typ, misc, rec, end)
        elif 84 <= typ <= 86:
            pass                                        # skipped by readers
        else:
            pass                                        # unknown: header only
        return 0

    def swap_compressed(self, typ, misc, rec, end):
        """Replaces a COMPRESSED(2) record by one of swapped records."""
        if self.zstd is None:
            self.zstd = Zstd()
        if typ == 81:
            payload = self.inp[rec + 8:end]
        else:
            dsize = self.u(rec + 8, 8)
            if rec + 16 + dsize > end:
                raise SwapError("COMPRESSED2 at 0x%x: data_size %d" %
                                (rec, dsize))
            payload = self.inp[rec + 16:rec + 16 + dsize]
        self.pending += self.zstd.decompress(payload)
        n = 0
        while n + 8 <= len(self.pending):
            size = struct.unpack_from("<H", self.pending, n + 6)[0]
            if size < 8:
                raise SwapError("record of size %d in COMPRESSED data at "
                                "0x%x" % (size, rec))
            if n + size > len(self.pending):
                break
            n += size
        inner = Swapper(self.pending[:n])
        inner.attrs, inner.ids = self.attrs, self.ids
        inner.nr_cpus_avail = self.nr_cpus_avail
        inner.swap_records(0, n)
        self.pending = self.pending[n:]
        comp = self.zstd.compress(bytes(inner.out))
        if typ == 81:
            if 8 + len(comp) > 65535:
                raise SwapError("recompressed record at 0x%x too big" % rec)
            new = struct.pack(">IHH", typ, misc, 8 + len(comp)) + comp
        else:
            size = (16 + len(comp) + 7) // 8 * 8
            if size > 65535:
                raise SwapError("recompressed record at 0x%x too big" % rec)
            new = struct.pack(">IHHQ", typ, misc, size, len(comp)) + comp
            new += bytes(size - len(new))
        self.splices.append((rec, end - rec, new))

    def apply_splices(self, data_off):
        """Builds the output with the replaced records; returns the change
        of size (everything after data_off moved by it)."""
        if not self.splices:
            return 0
        out, last = bytearray(), 0
        for off, old, new in self.splices:
            out += self.out[last:off] + new
            last = off + old
        out += self.out[last:]
        delta = len(out) - len(self.out)
        self.out = out
        return delta

    def swap_records(self, off, end):
        while off < end:
            if off + 8 > end:
                raise SwapError("record header at 0x%x is cut" % off)
            typ, misc, size = struct.unpack_from("<IHH", self.inp, off)
            if size < 8 or off + size > end:
                raise SwapError("record at 0x%x: bad size %d" % (off, size))
            self.sw(off, 4)
            self.sw(off + 4, 2)
            self.sw(off + 6, 2)
            if 1 <= typ <= 22:
                if not self.attrs:
                    raise SwapError("record at 0x%x before any attr" % off)
                if typ == 9:
                    self.swap_sample(off + 8, off + size)
                else:
                    self.swap_kernel_record(typ, misc, off + 8, off + size)
                extra = 0
            else:
                extra = self.swap_user_record(typ, misc, off + 8, off + size,
                                              off)
            off += size + extra
        if off != end:
            raise SwapError("records end at 0x%x, past 0x%x" % (off, end))
        if self.pending:
            raise SwapError("compressed data ends inside a record")

    # --- features ------------------------------------------------------------

    def swap_str(self, p, end):
        n = self.u(p, 4)
        self.sw(p, 4)
        if p + 4 + n > end:
            raise SwapError("string at 0x%x runs past its section" % p)
        return p + 4 + n

    def swap_str_list(self, p, end):
        nr = self.u(p, 4)
        p = self.sw_run(p, 4, 1)
        for _ in range(nr):
            p = self.swap_str(p, end)
        return p

    def swap_feature(self, feat, p, end):
        if feat == 1:                                   # TRACING_DATA
            pass
        elif feat == 2:                                 # BUILD_ID
            while p < end:
                p = self.swap_build_id_entry(p)
        elif feat in (3, 4, 5, 6, 8, 9):                # strings
            self.swap_str(p, end)
        elif feat == 7:                                 # NRCPUS
            self.nr_cpus_avail = self.u(p, 4)
            self.sw_run(p, 4, 2)
        elif feat in (10, 23, 24):                      # TOTAL_MEM,
            self.sw_run(p, 8, 1)                        # CLOCKID, DIR_FORMAT
        elif feat == 11:                                # CMDLINE
            self.swap_str_list(p, end)
        elif feat == 12:                                # EVENT_DESC
            nr, asize = self.u(p, 4), self.u(p + 4, 4)
            p = self.sw_run(p, 4, 2)
            for _ in range(nr):
                self.swap_attr(p, asize)
                p += asize
                nr_ids = self.u(p, 4)
                p = self.sw_run(p, 4, 1)
                p = self.swap_str(p, end)
                p = self.sw_run(p, 8, nr_ids)
        elif feat == 13:                                # CPU_TOPOLOGY
            p = self.swap_str_list(p, end)
            p = self.swap_str_list(p, end)
            if p < end:
                if self.nr_cpus_avail is None:
                    raise SwapError("cpu_topology before nrcpus")
                p = self.sw_run(p, 4, 2 * self.nr_cpus_avail)
            if p < end:
                p = self.swap_str_list(p, end)
                p = self.sw_run(p, 4, self.nr_cpus_avail)
        elif feat == 14:                                # NUMA_TOPOLOGY
            nr = self.u(p, 4)
            p = self.sw_run(p, 4, 1)
            for _ in range(nr):
                p = self.sw_run(p, 4, 1)
                p = self.sw_run(p, 8, 2)
                p = self.swap_str(p, end)
        elif feat in (15, 19):                          # BRANCH_STACK, STAT
            pass
        elif feat == 16:                                # PMU_MAPPINGS
            nr = self.u(p, 4)
            p = self.sw_run(p, 4, 1)
            for _ in range(nr):
                p = self.sw_run(p, 4, 1)
                p = self.swap_str(p, end)
        elif feat == 17:                                # GROUP_DESC
            nr = self.u(p, 4)
            p = self.sw_run(p, 4, 1)
            for _ in range(nr):
                p = self.swap_str(p, end)
                p = self.sw_run(p, 4, 2)
        elif feat == 18:                                # AUXTRACE
            nr = self.u(p, 8)
            self.sw_run(p, 8, 1 + 2 * nr)
        elif feat == 20:                                # CACHE
            nr = self.u(p + 4, 4)
            p = self.sw_run(p, 4, 2)
            for _ in range(nr):
                p = self.sw_run(p, 4, 4)
                for _ in range(3):
                    p = self.swap_str(p, end)
        elif feat == 21:                                # SAMPLE_TIME
            self.sw_run(p, 8, 2)
        elif feat == 22:                                # MEM_TOPOLOGY
            nr = self.u(p + 16, 8)
            p = self.sw_run(p, 8, 3)
            for _ in range(nr):
                nbits = self.u(p + 16, 8)
                p = self.sw_run(p, 8, 3 + (nbits + 63) // 64)
        elif feat == 25:                                # BPF_PROG_INFO
            if self.u(p, 4):
                raise SwapError("bpf_prog_info with programs: not supported")
            self.sw(p, 4)
        elif feat == 26:                                # BPF_BTF
            nr = self.u(p, 4)
            p = self.sw_run(p, 4, 1)
            for _ in range(nr):
                size = self.u(p + 4, 4)
                p = self.sw_run(p, 4, 2) + size
        elif feat == 27:                                # COMPRESSED
            self.sw_run(p, 4, 5)
        elif feat in (28, 30):                          # CPU_PMU_CAPS,
            nr = self.u(p, 4)                           # HYBRID_TOPOLOGY
            p = self.sw_run(p, 4, 1)
            for _ in range(2 * nr):
                p = self.swap_str(p, end)
        elif feat == 29:                                # CLOCK_DATA
            p = self.sw_run(p, 4, 2)
            self.sw_run(p, 8, 2)
        elif feat == 31:                                # PMU_CAPS
            nr = self.u(p, 4)
            p = self.sw_run(p, 4, 1)
            for _ in range(nr):
                caps = self.u(p, 4)
                p = self.sw_run(p, 4, 1)
                for _ in range(2 * caps + 1):
                    p = self.swap_str(p, end)
        else:
            raise SwapError("feature %d: layout unknown, cannot swap" % feat)

    # --- whole files ------------------------------------------------------

    def swap_pipe(self):
        self.pipe = True
        self.sw(8, 8)
        self.swap_records(16, len(self.inp))
        self.apply_splices(16)

    def swap_file(self):
        hdr_size, attr_size, attrs_off, attrs_size, data_off, data_size = \
            struct.unpack_from("<6Q", self.inp, 8)
        if hdr_size != 104:
            raise SwapError("header size %d (want 104)" % hdr_size)
        self.sw_run(8, 8, 12)                    # sizes, sections, bitmap
        id_arrays = []
        for i in range(attrs_size // attr_size):
            off = attrs_off + i * attr_size
            a = self.swap_attr(off, attr_size - 16)
            ids_off, ids_size = struct.unpack_from(
                "<QQ", self.inp, off + attr_size - 16)
            self.sw_run(off + attr_size - 16, 8, 2)
            id_arrays.append((off + attr_size - 16, ids_off))
            ids = [self.u(ids_off + 8 * k, 8) for k in range(ids_size // 8)]
            self.sw_run(ids_off, 8, ids_size // 8)
            self.add_attr(a, ids)
        self.swap_records(data_off, data_off + data_size)
        bits = struct.unpack_from("<4Q", self.inp, 72)
        feats = [b for b in range(256) if bits[b // 64] >> (b % 64) & 1]
        table = data_off + data_size
        # NRCPUS first: CPU_TOPOLOGY needs it
        order = sorted(range(len(feats)), key=lambda i: feats[i] != 7)
        for i in order:
            off, size = struct.unpack_from("<QQ", self.inp, table + 16 * i)
            self.sw_run(table + 16 * i, 8, 2)
            if size:
                self.swap_feature(feats[i], off, off + size)
        delta = self.apply_splices(data_off)
        if delta:
            # recompressed data: move what follows the data section
            put = lambda o, v: struct.pack_into(">Q", self.out, o, v)
            moved = lambda v: v + delta if v >= table else v
            put(48, data_size + delta)
            if attrs_off >= table:
                put(24, attrs_off + delta)
            for field, ids_off in id_arrays:
                put(moved(field), moved(ids_off))
            for i in range(len(feats)):
                off = struct.unpack_from("<Q", self.inp, table + 16 * i)[0]
                put(table + delta + 16 * i, moved(off))

    def run(self):
        if self.inp[:8] != MAGIC:
            raise SwapError("not a little-endian perf.data (magic %r)"
                            % self.inp[:8])
        self.out[0:8] = MAGIC[::-1]
        if self.u(8, 8) == 16:
            self.swap_pipe()
        else:
            self.swap_file()
        return bytes(self.out)


def main(argv):
    return capture_tool.run(argv, "perfswap.py IN OUT",
                            lambda buf, a: Swapper(buf).run(),
                            (SwapError, struct.error, IndexError))


if __name__ == "__main__":
    sys.exit(main(sys.argv))
