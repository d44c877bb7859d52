"""tfprof's messages live in tfprof's own descriptor pool: a process that
also imports TensorFlow's copies of the same messages (same names, other
files, protobuf's default pool) has no clash, in either import order, and
the two sides read each other's bytes. TensorFlow itself is not installed,
so its modules are made here the way TensorFlow's build makes them: protoc
on the same messages under TensorFlow's file names."""

import os
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT

TF_FILES = {
    "tf_graph.proto": "tensorflow/core/framework/graph.proto",
    "tf_step_stats.proto": "tensorflow/core/framework/step_stats.proto",
    "tfprof_log.proto": "tensorflow/core/profiler/tfprof_log.proto",
    "tfprof_output.proto": "tensorflow/core/profiler/tfprof_output.proto",
    "tfprof_options.proto": "tensorflow/core/profiler/tfprof_options.proto",
}


@pytest.fixture(scope="module")
def fake_tensorflow(tmp_path_factory):
    root = tmp_path_factory.mktemp("tf")
    src = root / "src"
    for ours, theirs in TF_FILES.items():
        with open(os.path.join(ROOT, "proto", ours)) as f:
            text = f.read()
        for o, t in TF_FILES.items():
            text = text.replace('"proto/%s"' % o, '"%s"' % t)
        os.makedirs(os.path.dirname(src / theirs), exist_ok=True)
        (src / theirs).write_text(text)
    out = root / "py"
    out.mkdir()
    subprocess.run([shutil.which("protoc"), "-I" + str(src),
                    "--python_out=" + str(out)] +
                   [str(src / t) for t in TF_FILES.values()], check=True)
    for d, _, _ in os.walk(out):
        open(os.path.join(d, "__init__.py"), "a").close()
    return str(out)


SCRIPT = r'''
import sys
order = sys.argv[1]
def tf():
    from tensorflow.core.profiler import tfprof_log_pb2, tfprof_output_pb2
    from tensorflow.core.framework import graph_pb2
    return tfprof_log_pb2, tfprof_output_pb2, graph_pb2
if order == "tf_first":
    tf_log, tf_out, tf_graph = tf()
import tfprof
if order == "tfprof_first":
    tf_log, tf_out, tf_graph = tf()
# TensorFlow's messages in, ours out, and back.
g = tf_graph.GraphDef()
n = g.node.add(); n.name = "a/b"; n.op = "Const"
log = tf_log.OpLogProto()
e = log.log_entries.add(); e.name = "a/b"; e.float_ops = 7
p = tfprof.Profiler(graph=g, op_log=log)
opts = tfprof.ProfileOptionBuilder(tfprof.ProfileOptionBuilder.float_operation()).with_empty_output().build()
ours = p.profile_name_scope(opts)
theirs = tf_out.GraphNodeProto.FromString(ours.SerializeToString())
assert theirs.total_float_ops == ours.total_float_ops == 7, (theirs, ours)
assert type(ours).DESCRIPTOR.full_name == type(theirs).DESCRIPTOR.full_name
assert type(ours).DESCRIPTOR.file.pool is not type(theirs).DESCRIPTOR.file.pool
print("ok", order)
'''


@pytest.mark.parametrize("order", ["tf_first", "tfprof_first"])
def test_no_clash_with_tensorflow_protos(fake_tensorflow, order):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [fake_tensorflow] + [p for p in sys.path if p])
    proc = subprocess.run([sys.executable, "-c", SCRIPT, order], env=env,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok " + order
