// tfprof._tfprof.Session: one loaded run (and an optional base) and the
// questions the command line asks of it, answered as the library renders
// them: a view as -output json (or its text report), the steps table, the
// summary, a diff, gates, advice, a step's timeline.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "profiler/advise/advisor.h"
#include "profiler/advise/gates.h"
#include "profiler/load/loader.h"
#include "profiler/render/render_diff.h"
#include "profiler/render/render_json_csv.h"
#include "profiler/render/render_ranks.h"
#include "profiler/render/render_steps.h"
#include "profiler/render/summary.h"
#include "profiler/session/session.h"
#include "profiler/views/flops.h"
#include "profiler/views/options.h"
#include "python/binding.h"

namespace py = pybind11;

namespace tfprof {
namespace python {
namespace {

// Runs `fn` without the GIL (the library needs no Python).
template <typename Fn>
auto WithoutGil(Fn&& fn) {
  py::gil_scoped_release release;
  return fn();
}

ViewKind ViewOrThrow(const std::string& name) {
  const std::optional<ViewKind> view = ViewNamed(name);
  if (!view.has_value()) {
    ThrowIfError(absl::InvalidArgumentError(absl::StrCat(
        "unknown view '", name, "' (scope, graph, op, code, kernel)")));
  }
  return *view;
}

class PySession {
 public:
  explicit PySession(std::unique_ptr<Session> s) : session_(std::move(s)) {}

  static std::unique_ptr<PySession> Load(const InputPaths& in) {
    // Inputs that cannot go together fail before anything is read, as on
    // the command line.
    ThrowIfError(CheckInputCombination(in));
    absl::StatusOr<std::unique_ptr<Session>> s =
        WithoutGil([&] { return Session::Load(in); });
    return std::make_unique<PySession>(ValueOrThrow(std::move(s)));
  }

  // Loads `in` as the base run diffs and base gates compare with.
  void LoadBase(const InputPaths& in) {
    std::unique_ptr<PySession> base = Load(in);
    session_->SetBase(std::move(base->session_));
  }
  void DropBase() { session_->SetBase(nullptr); }
  bool has_base() const { return session_->base() != nullptr; }

  std::vector<std::string> notes() const { return session_->profile().notes; }
  std::vector<int64_t> steps() const {
    const std::set<int64_t>& s = session_->model().steps();
    return std::vector<int64_t>(s.begin(), s.end());
  }

  // The view's displayed tree as `-output json` writes it.
  std::string QueryJson(const std::string& view,
                        const std::vector<std::string>& args) {
    const ViewKind kind = ViewOrThrow(view);
    const Options opts = ParseArgs(args);
    absl::StatusOr<std::string> json =
        WithoutGil([&]() -> absl::StatusOr<std::string> {
          absl::StatusOr<ResultTree> r = session_->Query(kind, opts);
          if (!r.ok()) return r.status();
          std::string json = RenderJson(*r);
          session_->Recycle(std::move(*r));
          return json;
        });
    return ValueOrThrow(std::move(json));
  }

  // The view delivered as its -output says (text, a file, a timeline,
  // pprof, ...): what it prints and its notes.
  std::pair<std::string, std::string> QueryReport(
      const std::string& view, const std::vector<std::string>& args) {
    const ViewKind kind = ViewOrThrow(view);
    const Options opts = ParseArgs(args);
    std::ostringstream out, err;
    absl::Status s = WithoutGil([&] {
      return session_->Emit(kind, opts,
                            EmitTarget{&out, &err, session_->input_files()});
    });
    ThrowIfError(s);
    return {out.str(), err.str()};
  }

  std::string StepsJson(const std::vector<std::string>& args) {
    const Options opts = ParseArgs(args);
    absl::StatusOr<std::string> json =
        WithoutGil([&]() -> absl::StatusOr<std::string> {
          absl::StatusOr<StepTable> t =
              session_->Steps(opts.step, PeakOverrideOf(opts));
          if (!t.ok()) return t.status();
          return RenderStepsJson(*t);
        });
    return ValueOrThrow(std::move(json));
  }

  // The ranks command's -output json (one rank: its own account).
  std::string RanksJson() {
    absl::StatusOr<std::string> out =
        WithoutGil([&]() -> absl::StatusOr<std::string> {
          absl::StatusOr<RanksReport> r = session_->Ranks();
          if (!r.ok()) return r.status();
          return RenderRanksJson(*r);
        });
    return ValueOrThrow(std::move(out));
  }

  std::string Summary(const std::vector<std::string>& args, bool json) {
    const PeakOverride peaks = PeakOverrideOf(ParseArgs(args));
    return WithoutGil([&] {
      const ProfileSummary s = session_->Summary(peaks);
      return json ? RenderSummaryJson(s)
                  : RenderSummary(s, &session_->profile());
    });
  }

  // diff VIEW|steps|summary|top as JSON; `diff_args` are the diff's own
  // options ({"map", "RE=>S", "alpha", "0.01", ...}), `args` view options.
  std::string DiffJson(const std::string& what,
                       const std::vector<std::string>& diff_args,
                       const std::vector<std::string>& args, size_t top) {
    ThrowIfError(session_->CheckBase("diff"));
    DiffOptions diff;
    for (size_t i = 0; i + 1 < diff_args.size(); i += 2) {
      ThrowIfError(
          SetDiffOption(diff_args[i], diff_args[i + 1], "diff: -", &diff));
    }
    const Options opts = ParseArgs(args);
    absl::StatusOr<std::string> json =
        WithoutGil([&]() -> absl::StatusOr<std::string> {
          if (what == "steps") {
            absl::StatusOr<StepsDiff> d = session_->DiffStepTables(diff);
            if (!d.ok()) return d.status();
            return RenderStepsDiff(*d, "json");
          }
          if (what == "summary") {
            const PeakOverride peaks = PeakOverrideOf(opts);
            absl::StatusOr<ProfileSummary> b = session_->BaseSummary(peaks);
            if (!b.ok()) return b.status();
            return RenderSummaryDiff(*b, session_->Summary(peaks), true);
          }
          if (what == "top") {
            absl::StatusOr<DiffTop> t =
                session_->DiffTopChanges(opts, diff, top);
            if (!t.ok()) return t.status();
            return RenderDiffTop(*t, true);
          }
          const std::optional<ViewKind> view = ViewNamed(what);
          if (!view.has_value()) {
            return absl::InvalidArgumentError(absl::StrCat(
                "diff: unknown view '", what,
                "' (scope, graph, op, code, kernel, steps, summary, top)"));
          }
          absl::StatusOr<DiffTree> tree = session_->Diff(*view, opts, diff);
          if (!tree.ok()) return tree.status();
          return RenderDiffJson(*tree);
        });
    return ValueOrThrow(std::move(json));
  }

  // Gates: one dict per condition.
  py::list Check(const std::vector<std::string>& conditions, int64_t step,
                 const std::vector<std::string>& diff_args,
                 const std::vector<std::string>& args) {
    std::vector<Condition> parsed;
    for (const std::string& c : conditions) {
      parsed.push_back(ValueOrThrow(ParseCondition(c)));
    }
    if (parsed.empty()) {
      ThrowIfError(absl::InvalidArgumentError(
          "check: give at least one condition, e.g. 'params<=1m'"));
    }
    DiffOptions diff;
    for (size_t i = 0; i + 1 < diff_args.size(); i += 2) {
      ThrowIfError(
          SetDiffOption(diff_args[i], diff_args[i + 1], "check: -", &diff));
    }
    GateBase base;
    base.alpha = diff.alpha;
    base.min_change = diff.min_change;
    const PeakOverride peaks = PeakOverrideOf(ParseArgs(args));
    absl::StatusOr<std::vector<GateResult>> results =
        WithoutGil([&] { return session_->Check(parsed, step, base, peaks); });
    py::list out;
    for (const GateResult& r : ValueOrThrow(std::move(results))) {
      py::dict d;
      d["condition"] = r.condition.text;
      d["passed"] = r.passed;
      d["inconclusive"] = r.inconclusive;
      d["value"] = r.value;
      d["limit"] = r.limit;
      d["base_value"] = r.base_value;
      d["matched_nodes"] = r.matched_nodes;
      d["unknown"] = r.unknown;
      d["message"] = r.message;
      out.append(d);
    }
    return out;
  }

  // Advice for the checkers in `options` (an AdvisorOptionsProto; empty:
  // the checkers that fit the input, as the advise command runs them):
  // (AdviceProto bytes, its text, notes).
  py::tuple Advise(const std::string& options_bytes,
                   const std::vector<std::string>& args) {
    tfpb::AdvisorOptionsProto options;
    ParseArgument("advisor options", options_bytes, &options);
    if (options.checkers().empty()) {
      options = DefaultAdvisorOptions(session_->model().source());
    }
    const PeakOverride peaks = PeakOverrideOf(ParseArgs(args));
    std::vector<std::string> notes;
    absl::StatusOr<tfpb::AdviceProto> advice =
        WithoutGil([&] { return session_->Advise(options, &notes, peaks); });
    const tfpb::AdviceProto a = ValueOrThrow(std::move(advice));
    return py::make_tuple(ToBytes(a), RenderAdvice(a), notes);
  }

  // One step's Chrome trace (step < 0: the first), or a trace's steps
  // step..last_step on one clock (last_step < 0: the step alone), and the
  // first step drawn.
  std::pair<std::string, int64_t> Timeline(int64_t step, bool show_dataflow,
                                           bool show_memory,
                                           const std::string& op_time,
                                           int64_t last_step) {
    StepTimelineOptions t;
    t.show_dataflow = show_dataflow;
    t.show_memory = show_memory;
    t.op_time = op_time;
    t.last_step = last_step;
    absl::StatusOr<Session::SourcedTimeline> r = WithoutGil(
        [&] { return session_->StepTimelineOf(step, t, Options()); });
    Session::SourcedTimeline v = ValueOrThrow(std::move(r));
    return {std::move(v.timeline.json), v.timeline.step};
  }

  // The loaded run as a ProfileProto (what `save` writes).
  py::bytes Serialize() const {
    return py::bytes(session_->model().SerializedProfileProto());
  }

 private:
  // Command-line style view options ("-max_depth", "3", ...) over the
  // command line's defaults, checked as the command line checks them.
  static Options ParseArgs(const std::vector<std::string>& args) {
    Options opts;
    ThrowIfError(ParseOptionTokens(args, 0, &opts));
    ThrowIfError(ValidateOptions(opts));
    return opts;
  }

  std::unique_ptr<Session> session_;
};

InputPaths MakeInputs(const std::string& profile_path,
                      const std::string& graph_path,
                      const std::string& run_meta_path,
                      const std::string& op_log_path,
                      const std::string& checkpoint_path,
                      const std::string& trace_path) {
  InputPaths in;
  in.profile_path = profile_path;
  in.graph_path = graph_path;
  in.run_meta_path = run_meta_path;
  in.op_log_path = op_log_path;
  in.checkpoint_path = checkpoint_path;
  in.trace_path = trace_path;
  return in;
}

}  // namespace

void DefineSession(py::module_& m) {
  // The trace format of a file, as --trace_path detects it; "" when it is
  // none (e.g. a ProfileProto).
  m.def("trace_format", [](const std::string& path) {
    absl::StatusOr<TraceFormat> f = TraceFormatOfFile(path);
    return f.ok() ? std::string(TraceFormatName(*f)) : std::string();
  });
  py::class_<PySession>(m, "Session")
      .def_static(
          "load",
          [](const std::string& profile_path, const std::string& graph_path,
             const std::string& run_meta_path, const std::string& op_log_path,
             const std::string& checkpoint_path,
             const std::string& trace_path) {
            return PySession::Load(MakeInputs(profile_path, graph_path,
                                              run_meta_path, op_log_path,
                                              checkpoint_path, trace_path));
          },
          py::arg("profile_path") = "", py::arg("graph_path") = "",
          py::arg("run_meta_path") = "", py::arg("op_log_path") = "",
          py::arg("checkpoint_path") = "", py::arg("trace_path") = "")
      .def(
          "load_base",
          [](PySession& s, const std::string& profile_path,
             const std::string& graph_path, const std::string& run_meta_path,
             const std::string& op_log_path, const std::string& checkpoint_path,
             const std::string& trace_path) {
            s.LoadBase(MakeInputs(profile_path, graph_path, run_meta_path,
                                  op_log_path, checkpoint_path, trace_path));
          },
          py::arg("profile_path") = "", py::arg("graph_path") = "",
          py::arg("run_meta_path") = "", py::arg("op_log_path") = "",
          py::arg("checkpoint_path") = "", py::arg("trace_path") = "")
      .def("drop_base", &PySession::DropBase)
      .def_property_readonly("has_base", &PySession::has_base)
      .def_property_readonly("notes", &PySession::notes)
      .def_property_readonly("steps", &PySession::steps)
      .def("query_json", &PySession::QueryJson)
      .def("query_report", &PySession::QueryReport)
      .def("steps_json", &PySession::StepsJson)
      .def("ranks_json", &PySession::RanksJson)
      .def("summary", &PySession::Summary)
      .def("diff_json", &PySession::DiffJson)
      .def("check", &PySession::Check)
      .def("advise",
           [](PySession& s, py::bytes options,
              const std::vector<std::string>& args) {
             return s.Advise(std::string(options), args);
           })
      .def("timeline", &PySession::Timeline)
      .def("serialize", &PySession::Serialize);
}

}  // namespace python
}  // namespace tfprof
