"""tfprof.load(): what the command line loads, asked the command line's
questions, with pandas DataFrames for answers.

Every figure is the C++ library's, as `tfprof ... -output json` renders it
(python/tfprof/_frames.py only reshapes the JSON); errors are TfprofError
with the message the command line prints after "tfprof: ".
"""

import json

from tfprof import _frames, _tfprof
from tfprof.options import _error
from tfprof.proto import tfprof_output_pb2
from tfprof.profiler import advisor_options

_INPUTS = ("profile_path", "graph_path", "run_meta_path", "op_log_path",
           "checkpoint_path", "trace_path")


def _path_list(value):
    if value is None:
        return ""
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return str(value)


def _inputs(**paths):
    return {k: _path_list(paths.get(k)) for k in _INPUTS}


def option_args(options):
    """Keyword options as command-line words: max_depth=3 ->
    ['-max_depth', '3']; lists are comma-joined (a comma inside an item
    stays in it); booleans are true/false."""
    args = []
    for key, value in options.items():
        if isinstance(value, bool):
            text = "true" if value else "false"
        elif isinstance(value, (list, tuple, set)):
            # \x1f: a quoted comma to the option parser (kQuotedComma).
            text = ",".join(str(v).replace(",", "\x1f") for v in value)
        else:
            text = str(value)
        args += ["-" + key, text]
    return args


def _base_inputs(base):
    """A base given as a path (a trace or a ProfileProto, told apart by
    content as the shell's `base FILE` does), a list of trace paths, a dict
    of load()'s keywords, or a LoadedProfile (loaded again from its
    files)."""
    if isinstance(base, LoadedProfile):
        return dict(base.inputs)
    if isinstance(base, dict):
        return _inputs(**base)
    paths = _path_list(base)
    first = paths.split(",")[0]
    key = "trace_path" if _tfprof.trace_format(first) else "profile_path"
    return _inputs(**{key: paths})


class CheckResult(object):
    """The outcome of check(): true when every gate passed."""

    def __init__(self, results):
        self.results = results  # one dict per condition

    @property
    def passed(self):
        return all(r["passed"] for r in self.results)

    @property
    def inconclusive(self):
        return any(r["inconclusive"] for r in self.results)

    @property
    def exit_status(self):
        """The command line's exit status: 0, 3 (failed) or 4 (a verdict
        term inconclusive, none failed)."""
        if any(not r["passed"] and not r["inconclusive"]
               for r in self.results):
            return 3
        return 4 if self.inconclusive else 0

    def frame(self):
        import pandas as pd
        return pd.DataFrame(self.results)

    def __bool__(self):
        return self.exit_status == 0

    def __str__(self):
        return "\n".join(r["message"] for r in self.results)

    __repr__ = __str__


class LoadedProfile(object):
    """A loaded run (and optionally a base run to compare with)."""

    def __init__(self, session, inputs):
        self._session = session
        self.inputs = inputs

    @property
    def notes(self):
        """What loading noted (coverage, what could not be mapped)."""
        return list(self._session.notes)

    @property
    def step_ids(self):
        return list(self._session.steps)

    # --- the views: one row per displayed node
    def view(self, name, **options):
        """A view ('scope', 'graph', 'op', 'code', 'kernel') with the command
        line's options as keywords (max_depth=3, select=['micros', 'bytes'],
        order_by='micros', ...), as a DataFrame equal to its -output json."""
        return _frames.tree_frame(
            self._session.query_json(name, option_args(options)))

    def scope(self, **options):
        return self.view("scope", **options)

    def graph(self, **options):
        return self.view("graph", **options)

    def op(self, **options):
        return self.view("op", **options)

    def code(self, **options):
        return self.view("code", **options)

    def kernel(self, **options):
        return self.view("kernel", **options)

    kernels = kernel

    def report(self, view, **options):
        """The view as the command line prints it (or writes it, with
        output='file:outfile=...', 'timeline:outfile=...', 'pprof:...'):
        the text it prints."""
        out, err = self._session.query_report(view, option_args(options))
        return out

    # --- whole-run tables
    def ranks(self):
        """The ranks command's account (g3doc/ranks.md) as two tables: one
        row per rank and step (rank, file, offset_micros,
        offset_uncertainty_micros, wall/compute/communication/wait/idle
        micros), and one row per straggler; the whole document (notes,
        collectives_matched, job steps) in the first table's .attrs."""
        from tfprof import fleet  # the reshaping lives with the fleet's
        analysis = json.loads(self._session.ranks_json())
        rank_steps, stragglers = fleet.analysis_frames(analysis)
        rank_steps.attrs["analysis"] = analysis
        return rank_steps, stragglers

    def steps(self, **options):
        """One row per step (the steps command's -output json); the wall
        time statistics in .attrs. step=N keeps that step's row alone (an
        error names the steps there are)."""
        return _frames.list_frame(
            self._session.steps_json(option_args(options)), "steps")

    def summary(self, **options):
        """One row per device (the summary command's -output json); the
        run's figures (counts, time per step, allocators, float ops, MFU)
        in .attrs."""
        return _frames.list_frame(
            self._session.summary(option_args(options), True), "devices")

    def summary_text(self, **options):
        return self._session.summary(option_args(options), False)

    # --- against a base run
    def set_base(self, base):
        """Loads `base` (see diff) as the run to compare with; None drops
        it."""
        if base is None:
            self._session.drop_base()
        else:
            self._session.load_base(**_base_inputs(base))

    def diff(self, base=None, view="op", map=None, alpha=None,
             min_change=None, significant_only=None, top=10, **options):
        """The diff command's -output json as a DataFrame: a view ('scope',
        'graph', 'op', 'code', 'kernel') row by row with both sides, the
        change and its verdict, or 'steps' (one row per measure), 'top' (one
        row per change) or 'summary' (.attrs only). `base`: a path, a list
        of traces, a dict of load()'s keywords or a LoadedProfile; omitted,
        the base loaded before (load(base=...) or set_base)."""
        if base is not None:
            self.set_base(base)
        diff_args = []
        for rule in ([map] if isinstance(map, str) else (map or [])):
            diff_args += ["map", rule]
        for key, value in (("alpha", alpha), ("min_change", min_change),
                           ("significant_only", significant_only)):
            if value is not None:
                if isinstance(value, bool):
                    value = "true" if value else "false"
                diff_args += [key, str(value)]
        text = self._session.diff_json(view, diff_args, option_args(options),
                                       int(top))
        if view == "steps":
            return _frames.list_frame(text, "measures")
        if view == "top":
            return _frames.list_frame(text, "changes")
        if view == "summary":
            return _frames.list_frame(text, "_none")
        return _frames.tree_frame(text)

    # --- gates and advice
    def check(self, *conditions, step=-1, alpha=None, min_change=None,
              **options):
        """CI gates, as the check command: check('params<=1m',
        'micros[.*Conv.*]<20ms'); with a base, 'micros<=base*1.05' and
        'regressed(micros)==0'. A CheckResult (true when all passed)."""
        if len(conditions) == 1 and isinstance(conditions[0], (list, tuple)):
            conditions = tuple(conditions[0])
        diff_args = []
        if alpha is not None:
            diff_args += ["alpha", str(alpha)]
        if min_change is not None:
            diff_args += ["min_change", str(min_change)]
        return CheckResult(
            self._session.check(list(conditions), int(step), diff_args,
                                option_args(options)))

    def advise(self, checkers=None, **options):
        """The advise command: the checkers that fit the input (tfprof's
        three for TensorFlow profiles, the trace checkers for traces), or
        those in `checkers` (names, or {name: {option: value}}); an
        AdviceProto."""
        if checkers is None:
            checkers = {}
        elif not isinstance(checkers, dict):
            checkers = {c: {} for c in checkers}
        proto, _, _ = self._session.advise(
            advisor_options(checkers).SerializeToString(),
            option_args(options))
        return tfprof_output_pb2.AdviceProto.FromString(proto)

    def advise_text(self, checkers=None, **options):
        if checkers is None:
            checkers = {}
        elif not isinstance(checkers, dict):
            checkers = {c: {} for c in checkers}
        _, text, _ = self._session.advise(
            advisor_options(checkers).SerializeToString(),
            option_args(options))
        return text

    def timeline(self, step=-1, show_dataflow=True, show_memory=False,
                 op_time="schedule", last_step=None):
        """One step's Chrome trace (the timeline command) as a dict; with
        last_step (a trace's), the steps step..last_step on one clock from
        the first one's start (timeline -steps A-B)."""
        if last_step is not None and not 0 <= int(step) <= int(last_step):
            raise _error("timeline: last_step=%s needs 0 <= step <= "
                         "last_step (step=%s)" % (last_step, step))
        text, _ = self._session.timeline(
            int(step), show_dataflow, show_memory, op_time,
            -1 if last_step is None else int(last_step))
        return json.loads(text)

    def serialize_to_string(self):
        """The run as a ProfileProto (what the save command writes)."""
        return self._session.serialize()


def load(profile_path=None, trace_path=None, graph_path=None,
         run_meta_path=None, op_log_path=None, checkpoint_path=None,
         base=None):
    """Loads what `tfprof --profile_path/--trace_path/--graph_path ...`
    loads (lists of run_meta or trace files as lists or comma-separated);
    `base` (a path, a list of traces, a dict of these keywords or a
    LoadedProfile) is the run diff() and base gates compare with."""
    inputs = _inputs(profile_path=profile_path, trace_path=trace_path,
                     graph_path=graph_path, run_meta_path=run_meta_path,
                     op_log_path=op_log_path, checkpoint_path=checkpoint_path)
    loaded = LoadedProfile(_tfprof.Session.load(**inputs), inputs)
    if base is not None:
        loaded.set_base(base)
    return loaded
