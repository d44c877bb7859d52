"""TensorFlow's Python profiler API over the C++ library:
tf.compat.v1.profiler.Profiler, profile() and advise().

Messages (GraphDef, RunMetadata, OpLogProto) may be given as messages of
any protobuf package with the same wire format (TensorFlow's own, or
tfprof.proto's) or as their serialized bytes (binary, or text for graphs
and logs). Results are tfprof.proto messages (GraphNodeProto,
MultiGraphNodeProto, AdviceProto); what a query's -output prints goes to
sys.stdout, as TensorFlow printed it.
"""

import sys

from tfprof import _tfprof
from tfprof.options import ProfileOptionBuilder, options_proto
from tfprof.proto import tfprof_options_pb2, tfprof_output_pb2

# TensorFlow's advise() default: every checker, default options.
ALL_ADVICE = {
    "ExpensiveOperationChecker": {},
    "AcceleratorUtilizationChecker": {},
    "JobChecker": {},
    "OperationChecker": {},
}


def message_bytes(message):
    """A message (anything with SerializeToString) or bytes, as bytes."""
    if isinstance(message, (bytes, bytearray, memoryview)):
        return bytes(message)
    if isinstance(message, str):
        return message.encode("utf-8")
    return message.SerializeToString()


def advisor_options(options):
    """{checker: {option: value}} as an AdvisorOptionsProto."""
    proto = tfprof_options_pb2.AdvisorOptionsProto()
    for checker, checker_options in options.items():
        entry = proto.checkers[checker]
        for key, value in (checker_options or {}).items():
            entry.options[key] = str(value)
    return proto


class Profiler(object):
    """Profiles a model's graph and its steps' RunMetadata, as TensorFlow's
    tf.compat.v1.profiler.Profiler(graph=None, op_log=None)."""

    def __init__(self, graph=None, op_log=None):
        self._profiler = _tfprof.Profiler()
        self._coverage = 0.0
        if graph is not None:
            self._profiler.add_graph(message_bytes(graph))
        if op_log is not None:
            self._profiler.add_op_log(message_bytes(op_log))

    @classmethod
    def from_file(cls, profile_path):
        """A profiler over a ProfileProto file (serialize_to_string's)."""
        p = cls.__new__(cls)
        p._profiler = _tfprof.Profiler.from_file(profile_path)
        p._coverage = 0.0
        return p

    def add_step(self, step, run_meta):
        """Adds the statistics of one step (a RunMetadata)."""
        self._coverage = self._profiler.add_step(int(step),
                                                 message_bytes(run_meta))

    def add_op_log(self, op_log):
        """Adds an OpLogProto (float ops, types, Python call stacks)."""
        self._profiler.add_op_log(message_bytes(op_log))

    def _profile(self, cmd, options, result_type):
        opts = options_proto(options).SerializeToString()
        result, printed = self._profiler.profile(cmd, opts)
        if printed:
            sys.stdout.write(printed)
        return result_type.FromString(result)

    def profile_python(self, options):
        """The code view: a MultiGraphNodeProto."""
        return self._profile("code", options,
                             tfprof_output_pb2.MultiGraphNodeProto)

    def profile_operations(self, options):
        """The op view: a MultiGraphNodeProto."""
        return self._profile("op", options,
                             tfprof_output_pb2.MultiGraphNodeProto)

    def profile_name_scope(self, options):
        """The scope view: a GraphNodeProto."""
        return self._profile("scope", options,
                             tfprof_output_pb2.GraphNodeProto)

    def profile_graph(self, options):
        """The graph view: a GraphNodeProto."""
        return self._profile("graph", options,
                             tfprof_output_pb2.GraphNodeProto)

    def advise(self, options=None):
        """Runs the checkers named in `options` ({checker: {option: value}};
        default ALL_ADVICE): an AdviceProto."""
        opts = advisor_options(ALL_ADVICE if options is None else options)
        return tfprof_output_pb2.AdviceProto.FromString(
            self._profiler.advise(opts.SerializeToString()))

    def serialize_to_string(self):
        """The profile as a ProfileProto (for `tfprof --profile_path`)."""
        return self._profiler.serialize_to_string()

    def _write_profile(self, filename):
        self._profiler.write_profile(filename)


def profile(graph=None, run_meta=None, op_log=None, cmd="scope",
            options=None):
    """One query over a graph and one step's RunMetadata, as TensorFlow's
    tf.compat.v1.profiler.profile(); `options` defaults to
    ProfileOptionBuilder.trainable_variables_parameter(). Returns a
    GraphNodeProto (scope, graph) or MultiGraphNodeProto (op, code)."""
    if options is None:
        options = ProfileOptionBuilder.trainable_variables_parameter()
    p = Profiler(graph, op_log)
    if run_meta is not None:
        p.add_step(0, run_meta)
    views = {"scope": ("scope", tfprof_output_pb2.GraphNodeProto),
             "graph": ("graph", tfprof_output_pb2.GraphNodeProto),
             "op": ("op", tfprof_output_pb2.MultiGraphNodeProto),
             "code": ("code", tfprof_output_pb2.MultiGraphNodeProto)}
    if cmd not in views:
        error = _tfprof.TfprofError("unknown cmd: %s" % cmd)
        error.code = "INVALID_ARGUMENT"
        raise error
    view, result_type = views[cmd]
    return p._profile(view, options, result_type)


def advise(graph=None, run_meta=None, options=None):
    """Advice on a graph and one step's RunMetadata, as TensorFlow's
    tf.compat.v1.profiler.advise(): an AdviceProto."""
    p = Profiler(graph)
    if run_meta is not None:
        p.add_step(0, run_meta)
    return p.advise(options)
