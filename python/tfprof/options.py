"""ProfileOptionBuilder: query options as the dict TensorFlow's profiler API
takes, with TensorFlow's presets and setters.

The presets' values come from the C++ library's ProfileOptionBuilder (one
source for both APIs); build() checks the options there too (unknown select
or order_by values and bad regexes are errors, where TensorFlow's Python
ignored them).
"""

import copy

from tfprof import _tfprof
from tfprof.proto import tfprof_options_pb2

# The OptionsProto fields the dicts carry (TensorFlow's keys).
_INT_KEYS = ("max_depth", "min_bytes", "min_peak_bytes", "min_residual_bytes",
             "min_output_bytes", "min_micros", "min_accelerator_micros",
             "min_cpu_micros", "min_params", "min_float_ops",
             "min_occurrence", "step")
_LIST_KEYS = ("account_type_regexes", "start_name_regexes",
              "trim_name_regexes", "show_name_regexes", "hide_name_regexes",
              "select")
_OTHER_KEYS = ("order_by", "account_displayed_op_only", "output",
               "dump_to_file")


def _error(message):
    error = _tfprof.TfprofError(message)
    error.code = "INVALID_ARGUMENT"
    return error


def options_proto(options):
    """An options dict as an OptionsProto; keys left out take the values
    TensorFlow's profile() gave them (max_depth 10, step -1, order_by name,
    output stdout, the rest 0 or empty)."""
    if isinstance(options, tfprof_options_pb2.OptionsProto):
        return options
    proto = tfprof_options_pb2.OptionsProto(max_depth=10, step=-1,
                                            order_by="name", output="stdout")
    for key, value in options.items():
        if key in _INT_KEYS:
            setattr(proto, key, int(value))
        elif key in _LIST_KEYS:
            if isinstance(value, str):
                value = [value]
            getattr(proto, key).extend(str(v) for v in value)
        elif key in _OTHER_KEYS:
            setattr(proto, key, value)
        else:
            raise _error("options: unknown key '%s'" % key)
    return proto


def _as_dict(proto):
    out = {}
    for key in _INT_KEYS + ("order_by",):
        out[key] = getattr(proto, key)
    for key in _LIST_KEYS:
        out[key] = list(getattr(proto, key))
    out["account_displayed_op_only"] = proto.account_displayed_op_only
    out["output"] = proto.output
    return out


def _preset(name, *args):
    return _as_dict(
        tfprof_options_pb2.OptionsProto.FromString(
            _tfprof.preset(name, list(args))))


class ProfileOptionBuilder(object):
    """Builds the options dict of a profile query, as TensorFlow's
    tf.compat.v1.profiler.ProfileOptionBuilder does."""

    def __init__(self, options=None):
        if options is not None:
            self._options = copy.deepcopy(options)
        else:
            self._options = _preset("default")

    @staticmethod
    def trainable_variables_parameter():
        """Parameters of trainable variables (TensorFlow's preset)."""
        return _preset("trainable_variables_parameter")

    @staticmethod
    def float_operation():
        """Float operations of the nodes that have any."""
        return _preset("float_operation")

    @staticmethod
    def time_and_memory(min_micros=1, min_bytes=1, min_accelerator_micros=0,
                        min_cpu_micros=0, min_peak_bytes=0,
                        min_residual_bytes=0, min_output_bytes=0):
        """Time and memory of the nodes above these thresholds."""
        return _preset("time_and_memory", min_micros, min_bytes,
                       min_accelerator_micros, min_cpu_micros, min_peak_bytes,
                       min_residual_bytes, min_output_bytes)

    def build(self):
        """The options dict (a copy), checked by the C++ library."""
        _tfprof.check_options(options_proto(self._options).SerializeToString())
        return copy.deepcopy(self._options)

    def with_max_depth(self, max_depth):
        self._options["max_depth"] = max_depth
        return self

    def with_min_memory(self, min_bytes=0, min_peak_bytes=0,
                        min_residual_bytes=0, min_output_bytes=0):
        self._options["min_bytes"] = min_bytes
        self._options["min_peak_bytes"] = min_peak_bytes
        self._options["min_residual_bytes"] = min_residual_bytes
        self._options["min_output_bytes"] = min_output_bytes
        return self

    def with_min_execution_time(self, min_micros=0, min_accelerator_micros=0,
                                min_cpu_micros=0):
        self._options["min_micros"] = min_micros
        self._options["min_accelerator_micros"] = min_accelerator_micros
        self._options["min_cpu_micros"] = min_cpu_micros
        return self

    def with_min_parameters(self, min_params):
        self._options["min_params"] = min_params
        return self

    def with_min_occurrence(self, min_occurrence):
        self._options["min_occurrence"] = min_occurrence
        return self

    def with_min_float_operations(self, min_float_ops):
        self._options["min_float_ops"] = min_float_ops
        return self

    def with_accounted_types(self, account_type_regexes):
        self._options["account_type_regexes"] = copy.copy(account_type_regexes)
        return self

    def with_node_names(self, start_name_regexes=None, show_name_regexes=None,
                        hide_name_regexes=None, trim_name_regexes=None):
        for key, value in (("start_name_regexes", start_name_regexes),
                           ("show_name_regexes", show_name_regexes),
                           ("hide_name_regexes", hide_name_regexes),
                           ("trim_name_regexes", trim_name_regexes)):
            if value is not None:
                self._options[key] = copy.copy(value)
        return self

    def account_displayed_op_only(self, is_true):
        self._options["account_displayed_op_only"] = is_true
        return self

    def with_empty_output(self):
        self._options["output"] = "none"
        return self

    def with_stdout_output(self):
        self._options["output"] = "stdout"
        return self

    def with_file_output(self, outfile):
        self._options["output"] = "file:outfile=%s" % outfile
        return self

    def with_timeline_output(self, timeline_file):
        self._options["output"] = "timeline:outfile=%s" % timeline_file
        return self

    def with_pprof_output(self, pprof_file):
        self._options["output"] = "pprof:outfile=%s" % pprof_file
        return self

    def order_by(self, attribute):
        self._options["order_by"] = attribute
        return self

    def select(self, attributes):
        self._options["select"] = copy.copy(attributes)
        return self

    def with_step(self, step):
        self._options["step"] = step
        return self
