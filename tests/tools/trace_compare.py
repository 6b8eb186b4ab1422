#!/usr/bin/env python3
"""trace_compare.py - restack dump's decoded tracepoint samples against
perf script's, record for record.

  trace_compare.py DUMP PERF_SCRIPT

DUMP is `restack dump` output; PERF_SCRIPT is
`perf script -F tid,time,event,trace --ns -G` (lines of events
without a system: in their name are ignored).  For every tracepoint
record (matched by time, tid and event) the trace="..." text must be
perf's text, and every decoded FIELD=VALUE must equal the value perf's
text shows for FIELD, except where the event's print format renders the
number symbolically (prev_state=1 shown as S): those are counted.
Prints "records N fields N symbolic N"; exits 1 on any difference.
"""
import re
import sys

TOKEN = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|\{[^}]*\}|\S+)')


def unquote(v):
    if v.startswith('"'):
        return bytes(v[1:-1], "latin-1").decode("unicode_escape")
    return v


def dump_records(path):
    recs = []
    for line in open(path, encoding="utf-8", errors="replace"):
        if " tp=" not in line:
            continue
        head, tail = line.rstrip("\n").split(" tp=", 1)
        tid = re.search(r" tid=(\d+)", head).group(1)
        time = head.split(" ", 2)[1]
        event, rest = tail.split(" ", 1) if " " in tail else (tail, "")
        fields, trace = {}, None
        for k, v in TOKEN.findall(rest):
            if k == "trace":
                trace = unquote(v)
            else:
                fields[k] = unquote(v)
        recs.append(((time, tid, event), trace, fields))
    return recs


def perf_records(path):
    recs = {}
    for line in open(path, encoding="utf-8", errors="replace"):
        m = re.match(r"\s*(\d+)\s+(\d+\.\d+):\s+(\S+:\S+):\s?(.*)$",
                     line.rstrip("\n"))
        if not m:
            continue
        tid, time, event, text = m.groups()
        recs.setdefault((time, tid, event), []).append(text)
    return recs


def main():
    mine = dump_records(sys.argv[1])
    perf = perf_records(sys.argv[2])
    bad, nfields, symbolic = [], 0, 0
    nperf = sum(len(v) for v in perf.values())
    if len(mine) != nperf:
        bad.append(f"restack dump decoded {len(mine)} records, perf script printed {nperf}")
    for key, trace, fields in mine:
        texts = perf.get(key)
        if not texts:
            bad.append(f"{key}: not in perf script")
            continue
        text = texts.pop(0)
        if trace != text:
            bad.append(f"{key}: trace differs:\n   restack {trace!r}\n   perf    {text!r}")
            continue
        shown = {k: unquote(v) for k, v in TOKEN.findall(text)}
        for k, v in fields.items():
            if k not in shown:
                continue
            nfields += 1
            if v == shown[k]:
                continue
            num = re.compile(r"-?\d+")
            if num.fullmatch(v) and num.fullmatch(shown[k]) and \
                    int(v) == int(shown[k]):
                continue     # printed with a width: %03d
            if re.fullmatch(r"-?\d+", v) and not re.fullmatch(r"-?\d+|0x[0-9a-f]+", shown[k]):
                symbolic += 1
                continue
            bad.append(f"{key}: field {k}={v!r}, perf shows {shown[k]!r}")
    if bad:
        print("\n".join(bad[:20]))
        return 1
    print(f"records {len(mine)} fields {nfields} symbolic {symbolic}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
