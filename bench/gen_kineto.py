#!/usr/bin/env python3
"""Makes a large PyTorch profiler (Kineto) trace from a real one by repeating
its events: copy k is shifted by k times the trace's span, with its
correlation ids, external ids and ProfilerStep numbers shifted too, so the
result is a valid trace of many more steps with the real event mix.

Usage: gen_kineto.py REAL_TRACE(.json[.gz]) OUT.json COPIES
"""
import re
import sys

from trace_copies import read_trace, time_span, write_copies


def copy_editor(events):
    """The edit of copy k: its correlation ids, external ids and
    ProfilerStep numbers moved past those of the copies before it."""

    def ids(key):
        return max([int(e.get("args", {}).get(key, 0)) for e in events] + [0]) + 1

    corr, ext, ext2 = ids("correlation"), ids("External id"), ids("external id")
    steps = 1 + max([int(m.group(1)) for e in events
                     for m in [re.match(r"ProfilerStep#(\d+)", e.get("name", ""))]
                     if m] + [0])

    def edit(c, k):
        args = c.get("args")
        if isinstance(args, dict):
            args = dict(args)
            for key, n in (("correlation", corr), ("External id", ext),
                           ("external id", ext2)):
                if key in args:
                    args[key] = int(args[key]) + k * n
            c["args"] = args
        m = re.match(r"ProfilerStep#(\d+)", c.get("name", ""))
        if m:
            c["name"] = "ProfilerStep#%d" % (int(m.group(1)) + k * steps)

    return edit


def main():
    src, out, copies = sys.argv[1], sys.argv[2], int(sys.argv[3])
    trace, events = read_trace(src)
    span = time_span(events) + 1000.0
    write_copies(trace, events, out, copies, span, copy_editor(events))


if __name__ == "__main__":
    main()
