// tfprof._tfprof.Profiler: the public C++ Profiler (profiler/tfprof.h),
// which tfprof.Profiler wraps with TensorFlow's Python names. Messages
// cross as serialized bytes (binary, or text for graphs and logs).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "profiler/tfprof.h"
#include "python/binding.h"

namespace py = pybind11;

namespace tfprof {
namespace python {
namespace {

class PyProfiler {
 public:
  PyProfiler() : profiler_(std::make_unique<Profiler>()) {
    profiler_->set_output_stream(&out_);
  }
  explicit PyProfiler(std::unique_ptr<Profiler> p) : profiler_(std::move(p)) {
    profiler_->set_output_stream(&out_);
  }

  static std::unique_ptr<PyProfiler> FromFile(const std::string& path) {
    return std::make_unique<PyProfiler>(ValueOrThrow(Profiler::FromFile(path)));
  }

  void AddGraph(const std::string& bytes) {
    tfcore::GraphDef graph;
    ParseArgument("graph", bytes, &graph);
    profiler_->AddGraph(graph);
  }
  void AddOpLog(const std::string& bytes) {
    tfpb::OpLogProto op_log;
    ParseArgument("op_log", bytes, &op_log);
    profiler_->AddOpLog(op_log);
  }
  double AddStep(int64_t step, const std::string& bytes) {
    tfcore::RunMetadata run_meta;
    ParseArgument("run_meta", bytes, &run_meta);
    return ValueOrThrow(profiler_->AddStep(step, run_meta));
  }

  // A view ("scope", "graph", "op" or "code") with OptionsProto bytes:
  // (the result proto's bytes, what its -output printed).
  py::tuple Profile(const std::string& view, const std::string& options) {
    tfpb::OptionsProto opts;
    ParseArgument("options", options, &opts);
    out_.str("");
    py::bytes result;
    if (view == "scope" || view == "graph") {
      absl::StatusOr<tfpb::GraphNodeProto> r =
          view == "scope" ? profiler_->ProfileNameScope(opts)
                          : profiler_->ProfileGraph(opts);
      result = ToBytes(ValueOrThrow(std::move(r)));
    } else if (view == "op" || view == "code") {
      absl::StatusOr<tfpb::MultiGraphNodeProto> r =
          view == "op" ? profiler_->ProfileOperations(opts)
                       : profiler_->ProfilePython(opts);
      result = ToBytes(ValueOrThrow(std::move(r)));
    } else {
      ThrowIfError(absl::InvalidArgumentError(
          absl::StrCat("unknown cmd: ", view, " (scope, graph, op or code)")));
    }
    return py::make_tuple(result, out_.str());
  }

  py::bytes Advise(const std::string& options) {
    tfpb::AdvisorOptionsProto opts;
    ParseArgument("advisor options", options, &opts);
    return ToBytes(ValueOrThrow(profiler_->Advise(opts)));
  }

  py::bytes SerializeToString() const {
    return py::bytes(profiler_->SerializeToString());
  }
  void WriteProfile(const std::string& path) const {
    ThrowIfError(profiler_->WriteProfile(path));
  }

 private:
  std::ostringstream out_;
  std::unique_ptr<Profiler> profiler_;
};

// Checks OptionsProto bytes as ProfileOptionBuilder::Build does.
void CheckOptions(const std::string& bytes) {
  tfpb::OptionsProto opts;
  ParseArgument("options", bytes, &opts);
  ThrowIfError(ProfileOptionBuilder(opts).Build().status());
}

// TensorFlow's option presets, as the C++ ProfileOptionBuilder has them:
// "default", "trainable_variables_parameter", "float_operation" or
// "time_and_memory" (with its seven thresholds).
py::bytes Preset(const std::string& name, const std::vector<int64_t>& args) {
  if (name == "trainable_variables_parameter") {
    return ToBytes(ProfileOptionBuilder::TrainableVariablesParameter());
  }
  if (name == "float_operation") {
    return ToBytes(ProfileOptionBuilder::FloatOperation());
  }
  if (name == "time_and_memory" && args.size() == 7) {
    return ToBytes(ProfileOptionBuilder::TimeAndMemory(
        args[0], args[1], args[2], args[3], args[4], args[5], args[6]));
  }
  if (name == "default") {
    return ToBytes(ValueOrThrow(ProfileOptionBuilder().Build()));
  }
  ThrowIfError(
      absl::InvalidArgumentError(absl::StrCat("unknown preset '", name, "'")));
  return py::bytes();
}

}  // namespace

void DefineProfiler(py::module_& m) {
  m.def("preset", &Preset);
  // When to trace and where the timeline goes (tfprof.ProfilerHook records
  // the step with PyTorch's profiler and writes its trace there).
  py::class_<ProfilerHook>(m, "ProfilerHook")
      .def(
          py::init([](std::optional<int64_t> save_steps,
                      std::optional<double> save_secs,
                      const std::string& output_dir, bool show_dataflow,
                      bool show_memory) {
            return ValueOrThrow(ProfilerHook::Create(
                save_steps, save_secs, output_dir, show_dataflow, show_memory));
          }),
          py::arg("save_steps"), py::arg("save_secs"), py::arg("output_dir"),
          py::arg("show_dataflow"), py::arg("show_memory"))
      .def("before_run", &ProfilerHook::BeforeRun)
      // The path of the run's timeline (written from an empty RunMetadata,
      // for the caller to replace), or "" when the run was not traced.
      .def("after_run", [](ProfilerHook& h, int64_t global_step) {
        return ValueOrThrow(h.AfterRun(global_step, tfcore::RunMetadata()));
      });
  py::class_<PyProfiler>(m, "Profiler")
      .def(py::init<>())
      .def_static("from_file", &PyProfiler::FromFile)
      .def("add_graph",
           [](PyProfiler& p, py::bytes b) { p.AddGraph(std::string(b)); })
      .def("add_op_log",
           [](PyProfiler& p, py::bytes b) { p.AddOpLog(std::string(b)); })
      .def("add_step",
           [](PyProfiler& p, int64_t step, py::bytes b) {
             return p.AddStep(step, std::string(b));
           })
      .def("profile",
           [](PyProfiler& p, const std::string& view, py::bytes options) {
             return p.Profile(view, std::string(options));
           })
      .def("advise",
           [](PyProfiler& p, py::bytes options) {
             return p.Advise(std::string(options));
           })
      .def("serialize_to_string", &PyProfiler::SerializeToString)
      .def("write_profile", &PyProfiler::WriteProfile);
  m.def("check_options", [](py::bytes b) { CheckOptions(std::string(b)); });
}

}  // namespace python
}  // namespace tfprof
