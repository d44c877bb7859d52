"""tfprof for Python: the C++ profiler behind TensorFlow's profiler API and
pandas DataFrames.

* TensorFlow's API: Profiler(graph, op_log) with add_step, profile_name_scope,
  profile_operations, profile_python, profile_graph, advise and
  serialize_to_string; profile(), advise(), ProfileOptionBuilder.
* load(profile_path=..., trace_path=..., ...): what the command line loads;
  its views, steps(), kernels(), summary() and diff() as DataFrames, check()
  for CI gates.
* ProfilerHook: timeline-<step>.json every N steps of a PyTorch loop.
* fleet.summarize(paths, client): many ranks' traces on a Dask cluster.

See g3doc/python.md. Messages are tfprof.proto's (TensorFlow's names and
wire format, in tfprof's own descriptor pool, so TensorFlow can be imported
beside it).
"""

from tfprof._tfprof import TfprofError
from tfprof.hook import ProfilerHook
from tfprof.loaded import CheckResult, LoadedProfile, load
from tfprof.options import ProfileOptionBuilder
from tfprof.profiler import ALL_ADVICE, Profiler, advise, profile
from tfprof.proto.tf_graph_pb2 import GraphDef
from tfprof.proto.tf_step_stats_pb2 import RunMetadata
from tfprof.proto.tfprof_log_pb2 import OpLogProto
from tfprof.proto.tfprof_output_pb2 import (AdviceProto, GraphNodeProto,
                                           MultiGraphNodeProto)
from tfprof import fleet  # noqa: E402  (pandas only; Dask when used)

__all__ = [
    "ALL_ADVICE", "AdviceProto", "CheckResult", "GraphDef", "GraphNodeProto",
    "LoadedProfile", "MultiGraphNodeProto", "OpLogProto", "ProfileOptionBuilder",
    "Profiler", "ProfilerHook", "RunMetadata", "TfprofError", "advise", "fleet",
    "load", "profile",
]
