"""What the trace generators share: reading a real trace, its time span,
and writing COPIES copies of its events, each shifted in time by k spans
(metadata events once), after a per-format edit of each copy."""
import gzip
import json


def read_trace(path):
    """The trace (.json or .json.gz) and its event list."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        trace = json.load(f)
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    return trace, events


def time_span(events):
    """From the first start to the last end of the timed events."""
    timed = [e for e in events if "ts" in e]
    start = min(float(e["ts"]) for e in timed)
    end = max(float(e["ts"]) + float(e.get("dur", 0)) for e in timed)
    return end - start


def write_copies(trace, events, out, copies, span, edit):
    """Writes the trace with its events repeated: copy k is shifted by
    k * span and passed to edit(event, k), which changes it in place."""
    out_events = []
    for k in range(copies):
        for e in events:
            if k > 0 and "ts" not in e:
                continue  # metadata once
            c = dict(e)
            if "ts" in c:
                c["ts"] = c["ts"] + k * span
            edit(c, k)
            out_events.append(c)
    if isinstance(trace, dict):
        trace["traceEvents"] = out_events
    else:
        trace = out_events
    with open(out, "w") as f:
        json.dump(trace, f)
