#!/usr/bin/env python3
"""Makes a job's worth of rank traces from a real two-rank capture
(testdata/ranks/ddp-gloo: a DistributedDataParallel run, gloo): rank r is a
copy of the capture's rank r % 2, its events repeated until the file is
about MB megabytes (copy k shifted by k spans, step numbers and ids shifted
as bench/gen_kineto.py does), its distributedInfo naming rank r of N.

Usage: gen_ranks.py SRC_DIR OUT_DIR N MB
"""
import json
import os
import re
import sys

from trace_copies import read_trace, time_span


def shifted(events, copies, span, steps, corr):
    out = []
    for k in range(copies):
        for e in events:
            if k > 0 and "ts" not in e:
                continue
            c = dict(e)
            if "ts" in c:
                c["ts"] = c["ts"] + k * span
            args = c.get("args")
            if isinstance(args, dict) and "correlation" in args:
                args = dict(args)
                args["correlation"] = int(args["correlation"]) + k * corr
                c["args"] = args
            m = re.match(r"ProfilerStep#(\d+)", c.get("name", ""))
            if m:
                c["name"] = "ProfilerStep#%d" % (int(m.group(1)) + k * steps)
            out.append(c)
    return out


def main():
    src, out, n, mb = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
    os.makedirs(out, exist_ok=True)
    texts = []
    for r in (0, 1):
        trace, events = read_trace(os.path.join(src, "ddp2_rank%d.pt.trace.json.gz" % r))
        one = len(json.dumps(trace))
        copies = max(1, int(round(mb * 1e6 / one)))
        span = time_span(events) + 1000.0
        steps = 1 + max(int(m.group(1)) for e in events
                        for m in [re.match(r"ProfilerStep#(\d+)", e.get("name", ""))] if m)
        corr = 1 + max([int(e.get("args", {}).get("correlation", 0)) for e in events
                        if isinstance(e.get("args"), dict)] + [0])
        trace["traceEvents"] = shifted(events, copies, span, steps, corr)
        texts.append(trace)
    for rank in range(n):
        trace = texts[rank % 2]
        trace["distributedInfo"] = {"backend": "gloo", "rank": rank, "world_size": n}
        with open(os.path.join(out, "rank%04d.pt.trace.json" % rank), "w") as f:
            json.dump(trace, f)


if __name__ == "__main__":
    main()
