#!/usr/bin/env python3
"""Makes a PyTorch profiler (Kineto) trace whose last step holds many
events, from a real one: the trace is repeated as gen_kineto.py repeats it,
but the copies' ProfilerStep ranges are renamed (no longer step markers), so
every copied event counts in the original's last step (a step runs from its
ProfilerStep's start to the next one's).

Usage: gen_big_step.py REAL_TRACE(.json[.gz]) OUT.json COPIES
"""
import sys

from gen_kineto import copy_editor
from trace_copies import read_trace, time_span, write_copies


def main():
    src, out, copies = sys.argv[1], sys.argv[2], int(sys.argv[3])
    trace, events = read_trace(src)
    span = time_span(events) + 1000.0
    shift = copy_editor(events)

    def edit(c, k):
        shift(c, k)
        if k > 0 and c.get("name", "").startswith("ProfilerStep#"):
            c["name"] = "copied " + c["name"]

    write_copies(trace, events, out, copies, span, edit)


if __name__ == "__main__":
    main()
