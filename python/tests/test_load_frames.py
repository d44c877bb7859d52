"""tfprof.load(): its DataFrames equal the command line's -output json for
the same inputs and options (flattened here by independent code), its
timelines the command line's files (and the raw trace's times), and its
errors are the command line's messages."""

import gzip
import json
import math
import os

import pytest

import tfprof
from conftest import CORPUS, ROOT, TF_CURRENT, tf_inputs

KINETO = os.path.join(CORPUS, "pytorch-kineto",
                      "worker0.1623143089861.pt.trace.json.gz")
HTA_CPU = os.path.join(CORPUS, "hta",
                       "cpu_only_rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz")
RESNET = os.path.join(CORPUS, "shiyudian-resnet-tf-dist")
DDP_RANK0 = os.path.join(ROOT, "testdata", "ranks", "ddp-gloo",
                         "ddp2_rank0.pt.trace.json.gz")


def expected_rows(node, depth=0, path=None):
    """The command line's JSON tree as rows, recursively (pre-order)."""
    path = node["name"] if path is None else path
    row = {"name": node["name"], "depth": depth, "path": path}
    for key, value in node.items():
        if key in ("name", "children"):
            continue
        if isinstance(value, dict):
            row.update({key + "_" + k: v for k, v in value.items()})
        else:
            row[key] = value
    rows = [row]
    for child in node.get("children", []):
        child_path = child["name"] if depth == 0 else path + ";" + child["name"]
        rows += expected_rows(child, depth + 1, child_path)
    return rows


def is_missing(v):
    return v is None or (isinstance(v, float) and math.isnan(v))


def same(a, b):
    """Equal, JSON's null and pandas' NaN (a missing number) alike."""
    if is_missing(a) or is_missing(b):
        return is_missing(a) and is_missing(b)
    return a == b


def assert_frame_is(frame, rows):
    assert len(frame) == len(rows)
    columns = set()
    for r in rows:
        columns.update(r)
    assert set(frame.columns) == columns
    for got, want in zip(frame.to_dict("records"), rows):
        for key, value in want.items():
            g = got[key]
            if isinstance(value, list):
                assert list(g) == value, key
            else:
                assert same(g, value), (key, g, value)


def cli_args(options):
    args = []
    for key, value in options.items():
        if isinstance(value, list):
            value = ",".join(value)
        elif isinstance(value, bool):
            value = "true" if value else "false"
        args += ["-" + key, str(value)]
    return args


TF_QUERIES = [
    ("scope", {"max_depth": 3, "select": ["micros", "bytes", "params",
                                          "device", "op_types",
                                          "occurrence"]}),
    ("graph", {"max_depth": 4, "order_by": "micros"}),
    ("op", {"select": ["micros", "float_ops", "bytes"],
            "order_by": "float_ops"}),
    ("scope", {"min_micros": 10, "account_displayed_op_only": True,
               "hide_name_regexes": ["Conv2D.*", "DW"]}),
]


@pytest.fixture(scope="module")
def tf_run():
    d = TF_CURRENT
    return tfprof.load(graph_path=os.path.join(d, "graph.pbtxt"),
                       run_meta_path=os.path.join(d, "run_meta"),
                       op_log_path=os.path.join(d, "tfprof_log"))


@pytest.mark.parametrize("view,options", TF_QUERIES)
def test_tf_views_equal_cli_json(cli, tf_run, view, options):
    frame = getattr(tf_run, view)(**options)
    doc = cli.json(tf_inputs() + [view] + cli_args(options) +
                   ["-output", "json"])
    assert_frame_is(frame, expected_rows(doc["root"]))
    assert frame.attrs["view"] == view and frame.attrs["select"] == doc[
        "select"]
    assert frame.iloc[0]["depth"] == 0


def test_code_view_equals_cli_json(cli):
    path = os.path.join(RESNET, "profile_0_tiny")
    options = {"max_depth": 5, "select": ["micros", "params"],
               "order_by": "micros"}
    frame = tfprof.load(profile_path=path).code(**options)
    doc = cli.json(["--profile_path=" + path, "code"] + cli_args(options) +
                   ["-output", "json"])
    assert_frame_is(frame, expected_rows(doc["root"]))
    assert len(frame) > 3


@pytest.fixture(scope="module")
def kineto_run():
    return tfprof.load(trace_path=KINETO)


@pytest.mark.parametrize("view,options", [
    ("op", {"order_by": "micros", "select": ["micros", "occurrence"]}),
    ("kernel", {"max_depth": 20, "order_by": "micros"}),
    ("scope", {"max_depth": 3, "order_by": "micros"}),
])
def test_trace_views_equal_cli_json(cli, kineto_run, view, options):
    frame = kineto_run.view(view, **options)
    doc = cli.json(["--trace_path=" + KINETO, view] + cli_args(options) +
                   ["-output", "json"])
    assert_frame_is(frame, expected_rows(doc["root"]))


def test_report_is_the_cli_text(cli, tf_run):
    options = {"max_depth": 3, "select": ["micros", "bytes"]}
    assert tf_run.report("scope", **options) == cli.run(
        tf_inputs() + ["scope"] + cli_args(options)).stdout


def test_steps_and_summary_equal_cli_json(cli, kineto_run):
    steps = kineto_run.steps()
    doc = cli.json(["--trace_path=" + KINETO, "steps", "-output", "json"])
    assert steps.to_dict("records") == doc["steps"]
    assert steps.attrs["wall_micros"] == doc["wall_micros"]
    summary = kineto_run.summary()
    sdoc = cli.json(["--trace_path=" + KINETO, "summary", "-output", "json"])
    assert summary.to_dict("records") == sdoc["devices"]
    assert summary.attrs["time_per_step"] == sdoc["time_per_step"]
    # The same text but for the load's own duration and speed.
    def steady(text):
        return [l for l in text.splitlines() if " MB/s)" not in l]
    assert steady(kineto_run.summary_text()) == steady(cli.run(
        ["--trace_path=" + KINETO, "summary"]).stdout)


def test_steps_of_one_step_equal_cli_json(cli, kineto_run):
    """steps(step=N) is 'steps -step N': that step's row alone, the MFU
    line the run's; a step the run does not have is an error naming the
    steps it has."""
    all_steps = kineto_run.steps()
    assert len(all_steps) >= 2
    step = int(all_steps["step"].iloc[1])
    one = kineto_run.steps(step=step)
    doc = cli.json(["--trace_path=" + KINETO, "steps", "-step", str(step),
                    "-output", "json"])
    assert one.to_dict("records") == doc["steps"]
    assert len(doc["steps"]) == 1 and doc["steps"][0]["step"] == step
    assert one.to_dict("records")[0] == all_steps.to_dict("records")[1]
    with pytest.raises(tfprof.TfprofError,
                       match="is not a step of this profile"):
        kineto_run.steps(step=999999)


def test_advise_runs_the_cli_checkers(cli, kineto_run, tf_run):
    """advise() with no checkers named runs those the advise command runs
    on the same input: the trace checkers on a trace, tfprof's three on a
    TensorFlow run."""
    assert kineto_run.advise_text() == cli.run(
        ["--trace_path=" + KINETO, "advise"]).stdout
    names = set(kineto_run.advise().checkers)
    assert "AcceleratorIdleChecker" in names
    assert "OperationChecker" not in names
    assert set(tf_run.advise().checkers) == {
        "AcceleratorUtilizationChecker", "OperationChecker",
        "ExpensiveOperationChecker"}


def test_kernels_is_the_kernel_view(kineto_run):
    assert kineto_run.kernels().equals(kineto_run.kernel())


def test_diff_equals_cli_json(cli):
    current = os.path.join(RESNET, "profile_100")
    base = os.path.join(RESNET, "profile_0")
    run = tfprof.load(profile_path=current, base=base)
    frame = run.diff(view="op", order_by="micros", min_change="5%")
    doc = cli.json(["--profile_path=" + current, "--base_profile_path=" +
                    base, "diff", "op", "-order_by", "micros",
                    "-min_change", "5%", "-output", "json"])
    assert_frame_is(frame, expected_rows(doc["root"]))
    assert frame.attrs["shifts"] == doc["shifts"]
    top = run.diff(view="top")
    tdoc = cli.json(["--profile_path=" + current, "--base_profile_path=" +
                     base, "diff", "top", "-output", "json"])
    assert top.to_dict("records") == tdoc["changes"]
    # diff(base) loads the base too.
    again = tfprof.load(profile_path=current).diff(base, view="op",
                                                   order_by="micros",
                                                   min_change="5%")
    assert again.equals(frame)


def test_check_matches_cli(cli, tf_run):
    conditions = ["params<=1m", "micros[.*Conv2D.*]<1ms", "bytes>=1"]
    result = tf_run.check(*conditions)
    proc = cli.run(tf_inputs() + ["check"] + conditions, check=False)
    assert str(result) + "\n" == proc.stdout
    assert result.exit_status == proc.returncode == 3
    assert not result and not result.passed
    ok = tf_run.check("params<=1m")
    assert ok and ok.exit_status == 0
    assert ok.frame()["value"].tolist() == [451]


def test_base_gate(cli):
    current = os.path.join(RESNET, "profile_100")
    base = os.path.join(RESNET, "profile_0")
    result = tfprof.load(profile_path=current, base=base).check(
        "micros<=base*1.05")
    proc = cli.run(["--profile_path=" + current, "--base_profile_path=" +
                    base, "check", "micros<=base*1.05"], check=False)
    assert str(result) + "\n" == proc.stdout
    assert result.exit_status == proc.returncode


@pytest.mark.parametrize("kwargs,args", [
    ({"profile_path": "/nonexistent/profile"},
     ["--profile_path=/nonexistent/profile"]),
    ({"trace_path": os.path.join(TF_CURRENT, "graph.pbtxt")},
     ["--trace_path=" + os.path.join(TF_CURRENT, "graph.pbtxt")]),
    ({"profile_path": os.path.join(TF_CURRENT, "run_meta"),
      "graph_path": os.path.join(TF_CURRENT, "graph.pbtxt")},
     ["--profile_path=" + os.path.join(TF_CURRENT, "run_meta"),
      "--graph_path=" + os.path.join(TF_CURRENT, "graph.pbtxt")]),
])
def test_load_errors_are_the_cli_messages(cli, kwargs, args):
    with pytest.raises(tfprof.TfprofError) as err:
        tfprof.load(**kwargs)
    message, _ = cli.error(args + ["scope"])
    assert str(err.value) == message
    assert err.value.code


@pytest.mark.parametrize("options,args", [
    ({"max_depht": 3}, ["-max_depht", "3"]),
    ({"order_by": "nope"}, ["-order_by", "nope"]),
    ({"select": ["micros", "bogus"]}, ["-select", "micros,bogus"]),
    ({"show_name_regexes": ["a("]}, ["-show_name_regexes", "a("]),
])
def test_option_errors_are_the_cli_messages(cli, tf_run, options, args):
    with pytest.raises(tfprof.TfprofError) as err:
        tf_run.scope(**options)
    message, _ = cli.error(tf_inputs() + ["scope"] + args)
    assert str(err.value) == message


def test_diff_without_base_is_an_error(tf_run):
    with pytest.raises(tfprof.TfprofError, match="needs a base run"):
        tf_run.diff(view="op")


def test_timeline_of_a_range_of_steps(cli, tmp_path):
    run = tfprof.load(trace_path=DDP_RANK0)
    first, last = run.step_ids[1], run.step_ids[3]
    got = run.timeline(first, last_step=last)
    # The trace `timeline -steps A-B` writes.
    out = tmp_path / "range.json"
    cli.run(["--trace_path=" + DDP_RANK0, "timeline", "-steps",
             "%d-%d" % (first, last), "-outfile", str(out)])
    assert got == json.loads(out.read_text())
    # Each step's ProfilerStep range (host and GPU annotation) at its raw
    # time from step `first`'s ProfilerStep start, with its raw duration.
    with gzip.open(DDP_RANK0, "rt") as f:
        raw = [e for e in json.load(f)["traceEvents"]
               if e.get("ph") == "X" and e["name"].startswith("ProfilerStep#")]
    category = {"user_annotation": "Op", "gpu_user_annotation": "Annotation"}
    origin = [e["ts"] for e in raw if e["cat"] == "user_annotation" and
              e["name"] == "ProfilerStep#%d" % first][0]
    want = sorted((category[e["cat"]], e["name"], e["ts"] - origin, e["dur"])
                  for e in raw if first <= int(e["name"][13:]) <= last)
    drawn = sorted((e["cat"], e["name"], e["ts"], e["dur"])
                   for e in got["traceEvents"] if e["ph"] == "X" and
                   e["name"].startswith("ProfilerStep#"))
    assert len(want) == 2 * (last - first + 1)
    assert [w[:2] for w in want] == [d[:2] for d in drawn]
    for w, d in zip(want, drawn):
        assert d[2] == pytest.approx(w[2], abs=0.002), w
        assert d[3] == pytest.approx(w[3], abs=0.002), w
    assert {e["args"]["step"] for e in got["traceEvents"]
            if e["ph"] == "X"} == set(range(first, last + 1))
    # last_step == step is the step alone; bad ranges are errors.
    assert run.timeline(first, last_step=first) == run.timeline(first)
    with pytest.raises(tfprof.TfprofError, match="last_step"):
        run.timeline(last, last_step=first)
    with pytest.raises(tfprof.TfprofError, match="last_step"):
        run.timeline(last_step=first)
    with pytest.raises(tfprof.TfprofError,
                       match="900-901 starts at step 900, which is not a "
                             "step of this profile"):
        run.timeline(900, last_step=901)
    tf = tfprof.load(profile_path=os.path.join(RESNET, "profile_0_tiny"))
    with pytest.raises(tfprof.TfprofError,
                       match="a range of steps needs a trace's events"):
        tf.timeline(0, last_step=1)
