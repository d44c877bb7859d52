#!/usr/bin/env python3
"""Makes a large TensorFlow timeline from a real one by repeating its events:
copy k is shifted by k times the timeline's span and its node names (and
inputs, and tensor names of memory snapshots) are prefixed with "rK/" (not
_SOURCE and RecvTensor), so the result is one step of a graph COPIES times as
large with the real event mix (process metadata once).

Usage: gen_tf_timeline.py REAL_TIMELINE(.json[.gz]) OUT.json COPIES
"""
import re
import sys

from trace_copies import read_trace, time_span, write_copies


def main():
    src, out, copies = sys.argv[1], sys.argv[2], int(sys.argv[3])
    trace, events = read_trace(src)
    span = int(time_span(events)) + 1000
    ids = max([int(e["id"]) for e in events
               if isinstance(e.get("id"), int)] + [0]) + 1

    def rename(name, k):
        # The runtime's bookkeeping entries keep their names.
        if k == 0 or name in ("_SOURCE", "RecvTensor"):
            return name
        return "r%d/%s" % (k, name)

    def edit(c, k):
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

    write_copies(trace, events, out, copies, span, edit)


if __name__ == "__main__":
    main()
