"""Fleet analysis: many ranks' traces summarized on a Dask cluster.

    from distributed import Client
    result = tfprof.fleet.summarize(paths, client=Client("tcp://sched:8786"))
    result.steps        # one row per (rank, step)
    result.kernels      # one row per (rank, kernel)
    result.devices, result.memory, result.runs
    result.analysis     # the cross-rank analysis (issue #31; None for now)

Each trace is loaded on a Dask worker, which keeps only its per-rank
summary (kilobytes: steps, devices, kernels, memory peaks); only summaries
travel between workers and to the client, never events. The reduction
concatenates the summaries into DataFrames (a rank column added); the
cross-rank analysis is the library's (see the TODO below). Without a client
everything runs in this process, one trace at a time.

What a rank's summary holds today: its steps table, its devices (busy
time per device and lane), its allocators' memory peaks and its kernel view
(every kernel with its time), the library's figures as `-output json`
writes them.

The cross-rank analysis: each worker also keeps the library's summary of
its rank (_tfprof.rank_summary: the rank's steps, its collectives with
their times and the top host ops between consecutive collectives, a few
kilobytes), and the reduction hands them all to _tfprof.analyze_ranks, the
`ranks` command's analysis (g3doc/ranks.md): `analysis` is its `-output
json` document, `rank_steps` and `stragglers` its tables.
"""

import json

import pandas as pd

from tfprof import _frames, _tfprof

# What fleet results say while the library has no cross-rank analysis.
NO_RANK_ANALYSIS = (
    "cross-rank analysis (clock offsets, stragglers, collectives) needs the "
    "library's multi-rank summaries (issue #31, the ranks command): not in "
    "this build")


def has_rank_analysis():
    """Whether the extension has the library's multi-rank analysis."""
    return hasattr(_tfprof, "rank_summary") and hasattr(
        _tfprof, "analyze_ranks")


class RankSummary(object):
    """One rank's summary: small, picklable, what crosses the network."""

    def __init__(self, rank, path, steps_json, summary_json, kernels_json,
                 rank_bytes=None):
        self.rank = rank
        self.path = path
        self.steps_json = steps_json
        self.summary_json = summary_json
        self.kernels_json = kernels_json
        self.rank_bytes = rank_bytes  # the library's summary (issue #31)

    def nbytes(self):
        return (len(self.steps_json) + len(self.summary_json) +
                len(self.kernels_json) + len(self.rank_bytes or b""))


def rank_summary(rank, path):
    """Loads one rank's trace and keeps its summary (runs on a worker)."""
    session = _tfprof.Session.load(trace_path=str(path))
    rank_bytes = (_tfprof.rank_summary(str(path))
                  if has_rank_analysis() else None)
    return RankSummary(
        rank=rank, path=str(path), steps_json=session.steps_json([]),
        summary_json=session.summary([], True),
        kernels_json=session.query_json(
            "kernel", ["-max_depth", "1000000", "-order_by", "micros"]),
        rank_bytes=rank_bytes)


class FleetSummary(object):
    """The reduced summaries of every rank."""

    def __init__(self, summaries):
        summaries = sorted(summaries, key=lambda s: s.rank)
        self.ranks = [s.rank for s in summaries]
        self.paths = [s.path for s in summaries]
        self.steps = self._concat(
            summaries, lambda s: _frames.list_frame(s.steps_json, "steps"))
        self.devices = self._concat(
            summaries, lambda s: _frames.list_frame(s.summary_json, "devices"))
        self.kernels = self._concat(
            summaries, lambda s: _frames.tree_frame(s.kernels_json))
        self.memory = self._concat(summaries, _memory_frame)
        self.runs = pd.DataFrame([
            dict(rank=s.rank, path=s.path,
                 **_run_figures(json.loads(s.summary_json)))
            for s in summaries
        ])
        self.summary_bytes = sum(s.nbytes() for s in summaries)
        # The cross-rank analysis (absent only from an older extension).
        if summaries and all(s.rank_bytes is not None for s in summaries):
            self.analysis = json.loads(
                _tfprof.analyze_ranks([s.rank_bytes for s in summaries]))
            self.notes = list(self.analysis.get("notes", []))
        else:
            self.analysis = None
            self.notes = [NO_RANK_ANALYSIS]
        self.rank_steps, self.stragglers = analysis_frames(self.analysis)

    @staticmethod
    def _concat(summaries, frame_of):
        frames = []
        for s in summaries:
            f = frame_of(s)
            f.insert(0, "rank", s.rank)
            frames.append(f)
        if not frames:
            return pd.DataFrame()
        return pd.concat(frames, ignore_index=True)


def _memory_frame(s):
    """A rank's allocators and their peaks (the summary's "allocators")."""
    return pd.DataFrame(json.loads(s.summary_json).get("allocators", []),
                        columns=["name", "peak_bytes"])


def analysis_frames(analysis):
    """The `ranks -output json` document (issue #31's contract) as two
    tables: one row per rank and step (rank, file, offset_micros,
    offset_uncertainty_micros and the step's figures), and one row per
    straggler. None (no analysis): two empty tables."""
    if analysis is None:
        return pd.DataFrame(), pd.DataFrame()
    rows = []
    for rank in analysis.get("ranks", []):
        head = {k: v for k, v in rank.items() if k != "steps"}
        for step in rank.get("steps", []):
            rows.append(dict(head, **step))
    return pd.DataFrame(rows), pd.DataFrame(analysis.get("stragglers", []))


def _run_figures(summary):
    """A rank's run-level figures from its summary JSON (scalars only)."""
    out = {}
    for key, value in summary.items():
        if isinstance(value, dict):
            for sub, v in value.items():
                if not isinstance(v, (dict, list)):
                    out["%s_%s" % (key, sub)] = v
        elif not isinstance(value, list):
            out[key] = value
    return out


def summarize(paths, client=None, ranks=None):
    """Summarizes each rank's trace (paths[i] is rank ranks[i], default i)
    on `client`'s Dask workers (None: in this process) and reduces them: a
    FleetSummary. Paths must be readable where the workers run (shared
    storage)."""
    paths = [str(p) for p in paths]
    ranks = list(range(len(paths))) if ranks is None else list(ranks)
    if len(ranks) != len(paths):
        raise ValueError("fleet.summarize: %d ranks for %d paths" %
                         (len(ranks), len(paths)))
    if client is None:
        summaries = [rank_summary(r, p) for r, p in zip(ranks, paths)]
    else:
        futures = client.map(rank_summary, ranks, paths, pure=False)
        summaries = client.gather(futures)
    return FleetSummary(summaries)
