"""The seed's documented Python usage (TensorFlow's tf.compat.v1.profiler
API) on TensorFlow's own tfprof test inputs, compared with the tfprof
command line on the same files: the same report text, the same numbers in
the returned protos as in the command line's -output json."""

import os

import pytest
from google.protobuf import text_format

import tfprof
from conftest import CORPUS, TF_12, TF_CURRENT, read, tf_inputs

RESNET_TINY = os.path.join(CORPUS, "shiyudian-resnet-tf-dist",
                           "profile_0_tiny")

# The proto fields of a -output json attribute: (self, total).
FIELDS = {
    "micros": ("exec_micros", "total_exec_micros"),
    "accelerator_micros": ("accelerator_exec_micros",
                           "total_accelerator_exec_micros"),
    "cpu_micros": ("cpu_exec_micros", "total_cpu_exec_micros"),
    "bytes": ("requested_bytes", "total_requested_bytes"),
    "peak_bytes": ("peak_bytes", "total_peak_bytes"),
    "residual_bytes": ("residual_bytes", "total_residual_bytes"),
    "output_bytes": ("output_bytes", "total_output_bytes"),
    "params": ("parameters", "total_parameters"),
    "float_ops": ("float_ops", "total_float_ops"),
}


def cli_options(options):
    """An options dict as the command line's view options (written here,
    independently of tfprof.loaded.option_args)."""
    args = []
    for key, value in options.items():
        if key == "output":
            continue
        if isinstance(value, bool):
            value = "true" if value else "false"
        elif isinstance(value, list):
            value = ",".join(value)
        args += ["-" + key, str(value)]
    return args


def compare_node(message, node, path):
    assert message.name == node["name"], path
    for attr, (self_field, total_field) in FIELDS.items():
        if attr in node:
            assert getattr(message, self_field) == node[attr]["self"], (
                path, attr)
            assert getattr(message, total_field) == node[attr]["total"], (
                path, attr)


def compare_op_chain(message, root):
    """The op view's proto, as TensorFlow's: each row is the only child of
    the one before (root -> first op -> second op ...), where the JSON lists
    them as the root's children."""
    compare_node(message, root, "root")
    for i, node in enumerate(root.get("children", [])):
        assert len(message.children) == 1, i
        message = message.children[0]
        compare_node(message, node, node["name"])
    assert not message.children


def compare_tree(message, node, path="root"):
    """A returned proto against the command line's JSON node, recursively:
    names, every attribute's self and total, the children in order."""
    compare_node(message, node, path)
    children = node.get("children", [])
    assert [c.name for c in message.children] == [c["name"] for c in children]
    for m, n in zip(message.children, children):
        compare_tree(m, n, path + "/" + n["name"])


def tf_profiler(directory=TF_CURRENT, as_messages=False):
    graph = read(os.path.join(directory, "graph.pbtxt"))
    run_meta = read(os.path.join(directory, "run_meta"))
    op_log = read(os.path.join(directory, "tfprof_log"))
    if as_messages:
        g = tfprof.GraphDef()
        text_format.Parse(graph.decode(), g)
        graph = g
        run_meta = tfprof.RunMetadata.FromString(run_meta)
        op_log = tfprof.OpLogProto.FromString(op_log)
    profiler = tfprof.Profiler(graph=graph, op_log=op_log)
    profiler.add_step(0, run_meta)
    return profiler


Builder = tfprof.ProfileOptionBuilder

OPTION_SETS = {
    "trainable_variables_parameter": Builder.trainable_variables_parameter(),
    "float_operation": Builder.float_operation(),
    "time_and_memory": Builder.time_and_memory(),
    "builder": (Builder(Builder.time_and_memory(min_micros=0, min_bytes=0))
                .with_max_depth(4).select(["micros", "bytes", "params",
                                           "float_ops", "occurrence"])
                .order_by("micros").with_node_names(hide_name_regexes=["^_.*"])
                .account_displayed_op_only(False).build()),
    "default": Builder().build(),
}

CALLS = [("scope", "profile_name_scope"), ("graph", "profile_graph"),
         ("op", "profile_operations"), ("code", "profile_python")]


@pytest.mark.parametrize("view,method", CALLS)
@pytest.mark.parametrize("preset", sorted(OPTION_SETS))
def test_profiler_views_match_cli(cli, capsys, view, method, preset):
    options = OPTION_SETS[preset]
    profiler = tf_profiler()
    capsys.readouterr()
    if view == "code":
        # These op logs have no call stacks: the code view's error, as the
        # command line says it (test_profile_python_from_file has one).
        with pytest.raises(tfprof.TfprofError) as err:
            getattr(profiler, method)(options)
        assert str(err.value) == cli.error(tf_inputs() + [view] +
                                           cli_options(options))[0]
        return
    result = getattr(profiler, method)(options)
    printed = capsys.readouterr().out
    expected = cli.run(tf_inputs() + [view] + cli_options(options)).stdout
    assert printed == expected
    doc = cli.json(tf_inputs() + [view] + cli_options(options) +
                   ["-output", "json"])
    (compare_op_chain if view == "op" else compare_tree)(result, doc["root"])
    kind = (tfprof.GraphNodeProto if view in ("scope", "graph") else
            tfprof.MultiGraphNodeProto)
    assert isinstance(result, kind)


def test_messages_and_bytes_give_the_same_results():
    options = Builder.time_and_memory(min_micros=0, min_bytes=0)
    options["output"] = "none"
    from_bytes = tf_profiler().profile_name_scope(options)
    from_messages = tf_profiler(as_messages=True).profile_name_scope(options)
    assert from_bytes == from_messages
    assert from_bytes.total_exec_micros > 0


@pytest.mark.parametrize("preset", sorted(OPTION_SETS))
def test_profile_python_from_file(cli, capsys, preset):
    """The code view of a ProfileProto with call stacks (a distributed
    ResNet run's profile)."""
    options = OPTION_SETS[preset]
    path = os.path.join(RESNET_TINY)
    profiler = tfprof.Profiler.from_file(path)
    capsys.readouterr()
    result = profiler.profile_python(options)
    args = ["--profile_path=" + path, "code"] + cli_options(options)
    assert capsys.readouterr().out == cli.run(args).stdout
    compare_tree(result, cli.json(args + ["-output", "json"])["root"])


# Call stacks for TensorFlow's test graph (its op log has none): each node
# -> its frames, outermost first (file, line, function).
STACKS = {
    "Conv2D": [("model.py", 30, "build"), ("layers.py", 12, "conv")],
    "Conv2D_1": [("model.py", 31, "build"), ("layers.py", 12, "conv")],
    "DW": [("model.py", 20, "variables")],
    "DW2": [("model.py", 21, "variables")],
}


def op_log_with_stacks():
    """TensorFlow's test op log plus call stacks in its string table (the
    current encoding: ids into id_to_string)."""
    log = tfprof.OpLogProto.FromString(
        read(os.path.join(TF_CURRENT, "tfprof_log")))
    ids = {}

    def string_id(text):
        if text not in ids:
            ids[text] = 1000 + len(ids)
            log.id_to_string[ids[text]] = text
        return ids[text]

    entries = {e.name: e for e in log.log_entries}
    for name, frames in STACKS.items():
        entry = entries.get(name)
        if entry is None:
            entry = log.log_entries.add(name=name)
        for file, lineno, function in frames:
            entry.code_def.traces.add(
                file_id=string_id(file), lineno=lineno,
                function_id=string_id(function),
                line_id=string_id("%s()" % function))
    return log


@pytest.mark.parametrize("preset", sorted(OPTION_SETS))
def test_profile_python_after_add_step(cli, capsys, tmp_path, preset):
    """profile_python on a Profiler built from a graph, an op log with call
    stacks and add_step: the command line's code view on the same files."""
    options = OPTION_SETS[preset]
    log = op_log_with_stacks()
    log_path = tmp_path / "tfprof_log"
    log_path.write_bytes(log.SerializeToString())
    profiler = tfprof.Profiler(
        graph=read(os.path.join(TF_CURRENT, "graph.pbtxt")), op_log=log)
    profiler.add_step(0, read(os.path.join(TF_CURRENT, "run_meta")))
    capsys.readouterr()
    result = profiler.profile_python(options)
    assert isinstance(result, tfprof.MultiGraphNodeProto)
    args = ["--graph_path=" + os.path.join(TF_CURRENT, "graph.pbtxt"),
            "--run_meta_path=" + os.path.join(TF_CURRENT, "run_meta"),
            "--op_log_path=%s" % log_path, "code"] + cli_options(options)
    assert capsys.readouterr().out == cli.run(args).stdout
    doc = cli.json(args + ["-output", "json"])
    compare_tree(result, doc["root"])
    if preset == "builder":  # time and memory, depth 4: the frames show
        names = [c.name for c in result.children]
        assert names and all(n.startswith("model.py:") for n in names), names


@pytest.mark.parametrize("cmd", ["scope", "graph", "op"])
@pytest.mark.parametrize("preset", ["trainable_variables_parameter",
                                    "float_operation", "time_and_memory"])
def test_profile_function_with_each_preset(cli, capsys, cmd, preset):
    options = getattr(Builder, preset)()
    graph = read(os.path.join(TF_12, "graph.pbtxt"))
    run_meta = read(os.path.join(TF_12, "run_meta"))
    op_log = read(os.path.join(TF_12, "tfprof_log"))
    capsys.readouterr()
    result = tfprof.profile(graph, run_meta=run_meta, op_log=op_log, cmd=cmd,
                            options=options)
    printed = capsys.readouterr().out
    args = tf_inputs(TF_12) + [cmd] + cli_options(options)
    assert printed == cli.run(args).stdout
    compare = compare_op_chain if cmd == "op" else compare_tree
    compare(result, cli.json(args + ["-output", "json"])["root"])


def test_profile_default_options_are_trainable_variables(capsys):
    graph = read(os.path.join(TF_CURRENT, "graph.pbtxt"))
    # The op log marks the trainable variables (TensorFlow's Python took
    # them from the graph's collection).
    op_log = read(os.path.join(TF_CURRENT, "tfprof_log"))
    default = tfprof.profile(graph, op_log=op_log)
    explicit = tfprof.profile(
        graph, op_log=op_log,
        options=Builder.trainable_variables_parameter())
    assert default == explicit
    # 451 parameters: TensorFlow's own test expects them (tfprof's
    # print_model_analysis_test on this graph).
    assert default.total_parameters == 451


def test_profile_unknown_cmd():
    with pytest.raises(tfprof.TfprofError, match="unknown cmd: nope"):
        tfprof.profile(cmd="nope")


def render_advice(advice, checkers):
    """The advise command's text of an AdviceProto (checker order as
    given)."""
    out = ""
    for name in checkers:
        if name in advice.checkers:
            out += "\n%s:\n" % name
            for report in advice.checkers[name].reports:
                out += report + "\n"
    return out


def test_advise_matches_cli(cli):
    profiler = tf_profiler()
    advice = profiler.advise()
    assert isinstance(advice, tfprof.AdviceProto)
    checkers = ["AcceleratorUtilizationChecker", "OperationChecker",
                "ExpensiveOperationChecker", "JobChecker"]
    args = tf_inputs() + ["advise"]
    for c in checkers:
        args += ["-checker", c]
    assert render_advice(advice, checkers) == cli.run(args).stdout
    one = tfprof.advise(read(os.path.join(TF_CURRENT, "graph.pbtxt")),
                        read(os.path.join(TF_CURRENT, "run_meta")),
                        {"OperationChecker": {}})
    assert list(one.checkers) == ["OperationChecker"]
    assert one.checkers["OperationChecker"] == advice.checkers[
        "OperationChecker"]


def test_serialize_to_string_loads_in_the_cli(cli, tmp_path, capsys):
    profiler = tf_profiler()
    path = tmp_path / "profile"
    path.write_bytes(profiler.serialize_to_string())
    options = Builder.time_and_memory(min_micros=0, min_bytes=0)
    capsys.readouterr()
    profiler.profile_name_scope(options)
    printed = capsys.readouterr().out
    assert printed == cli.run(["--profile_path=%s" % path, "scope"] +
                              cli_options(options)).stdout
    again = tfprof.Profiler.from_file(str(path))
    options["output"] = "none"
    assert (again.profile_operations(options) ==
            profiler.profile_operations(options))


def test_builder_setters_and_validation():
    opts = (Builder().with_max_depth(3).with_min_memory(min_bytes=5)
            .with_min_execution_time(min_micros=7).with_min_parameters(2)
            .with_min_occurrence(1).with_min_float_operations(9)
            .with_accounted_types(["Conv2D"]).with_step(0)
            .with_file_output("/tmp/x").build())
    assert opts["max_depth"] == 3 and opts["min_bytes"] == 5
    assert opts["min_micros"] == 7 and opts["min_params"] == 2
    assert opts["min_float_ops"] == 9 and opts["step"] == 0
    assert opts["account_type_regexes"] == ["Conv2D"]
    assert opts["output"] == "file:outfile=/tmp/x"
    # TensorFlow's defaults and presets.
    assert Builder().build()["max_depth"] == 100
    assert Builder().build()["select"] == ["micros"]
    tv = Builder.trainable_variables_parameter()
    assert tv["max_depth"] == 10000 and tv["select"] == ["params"]
    assert tv["account_type_regexes"] == ["_trainable_variables"]
    assert tv["account_displayed_op_only"] is True
    fo = Builder.float_operation()
    assert fo["min_float_ops"] == 1 and fo["order_by"] == "float_ops"
    tm = Builder.time_and_memory(min_micros=3)
    assert tm["min_micros"] == 3 and tm["min_bytes"] == 1
    assert tm["select"] == ["micros", "bytes"] and tm["order_by"] == "micros"
    with pytest.raises(tfprof.TfprofError, match="num_hidden_ops"):
        Builder().select(["num_hidden_ops"]).build()
    with pytest.raises(tfprof.TfprofError):
        Builder().order_by("nope").build()
