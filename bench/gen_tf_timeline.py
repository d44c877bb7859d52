#!/usr/bin/env python3
"""Makes a large TensorFlow timeline from a real one by repeating its events:
copy k is shifted by k times the timeline's span and its node names (and
inputs, and tensor names of memory snapshots) are prefixed with "rK/" (not
_SOURCE and RecvTensor), so the result is one step of a graph COPIES times as
large with the real event mix (process metadata once).

Usage: gen_tf_timeline.py REAL_TIMELINE(.json[.gz]) OUT.json COPIES
"""
import gzip
import json
import re
import sys


def main():
    src, out, copies = sys.argv[1], sys.argv[2], int(sys.argv[3])
    opener = gzip.open if src.endswith(".gz") else open
    with opener(src, "rt") as f:
        trace = json.load(f)
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    timed = [e for e in events if "ts" in e]
    start = min(float(e["ts"]) for e in timed)
    end = max(float(e["ts"]) + float(e.get("dur", 0)) for e in timed)
    span = int(end - start) + 1000
    ids = max([int(e["id"]) for e in events
               if isinstance(e.get("id"), int)] + [0]) + 1

    def rename(name, k):
        # The runtime's bookkeeping entries keep their names.
        if k == 0 or name in ("_SOURCE", "RecvTensor"):
            return name
        return "r%d/%s" % (k, name)

    out_events = []
    for k in range(copies):
        for e in events:
            if k > 0 and "ts" not in e:
                continue  # metadata once
            c = dict(e)
            if "ts" in c:
                c["ts"] = c["ts"] + k * span
            if isinstance(c.get("id"), int):
                c["id"] = c["id"] + k * ids
            args = c.get("args")
            if isinstance(args, dict):
                args = dict(args)
                for key, value in args.items():
                    if isinstance(value, str) and (
                            key == "name" or re.match(r"input\d+$", key)):
                        args[key] = rename(value, k)
                c["args"] = args
            if c.get("ph") in ("O", "N", "D") and isinstance(c.get("name"), str):
                c["name"] = rename(c["name"], k)
            out_events.append(c)
    if isinstance(trace, dict):
        trace["traceEvents"] = out_events
    else:
        trace = out_events
    with open(out, "w") as f:
        json.dump(trace, f)


if __name__ == "__main__":
    main()
