// The C++ API of tfprof, after TensorFlow's Python profiler API:
//
//   tfprof::Profiler          add a graph and RunMetadata steps, query the
//                             four views, advise, save a ProfileProto,
//                             compare with a base run (Diff); an adapter
//                             over the library's session (one loaded run
//                             and everything asked of it);
//   tfprof::ProfileOptionBuilder  build query options (with TensorFlow's
//                             presets), validated;
//   tfprof::ProfilerHook      decide which training steps to trace and write
//                             timeline-<step>.json files, like
//                             tf.train.ProfilerHook;
//   tfprof::ProfileContext    trace some steps into a Profiler, dump
//                             profile_<step> files and run queries
//                             automatically, like tf.profiler.ProfileContext.
//
// Thread safety: none of these classes is thread-safe; use one object per
// thread or lock around it. Different objects are independent, so several
// profilers may live in one process.
#ifndef TFPROF_PROFILER_TFPROF_H_
#define TFPROF_PROFILER_TFPROF_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "profiler/base/protos.h"

namespace tfprof {

// The library's internals, which this API keeps out of sight.
class Model;
class Session;
struct InputPaths;
struct ResultTree;
enum class ViewKind;

// One row of a comparison of two runs (Profiler::Diff): a node (an op
// type, a kernel) of either run, with the diff's attribute in each (its
// total per step, as the view shows it) and the verdict on the change.
struct DiffRow {
  std::string name;  // after the -map rules
  int depth = 0;     // 0: the root
  bool in_base = false, in_current = false;
  int64_t base_value = 0, current_value = 0;
  // "regressed", "improved", "unchanged" or "inconclusive"; with the
  // change's confidence interval per step (NaN when not tested).
  std::string verdict;
  double ci_low = 0, ci_high = 0;
  double p_value = -1, q_value = -1;  // -1: not tested
};

struct DiffReport {
  std::string view;
  std::string attribute;      // the attribute compared ("micros", ...)
  std::vector<DiffRow> rows;  // in display order, the root first
  std::vector<std::string> notes;
  std::string json;  // as `diff -output json` writes it
};

// Query options, starting from TensorFlow's ProfileOptionBuilder defaults
// (max_depth 100, select micros, order by name, everything accounted).
class ProfileOptionBuilder {
 public:
  ProfileOptionBuilder();
  explicit ProfileOptionBuilder(const tfpb::OptionsProto& options);

  // Presets, with TensorFlow's values.
  // Parameters of trainable variables (account _trainable_variables).
  static tfpb::OptionsProto TrainableVariablesParameter();
  // Float operations, nodes with at least one.
  static tfpb::OptionsProto FloatOperation();
  // Time and memory of the nodes above the given thresholds.
  static tfpb::OptionsProto TimeAndMemory(int64_t min_micros = 1,
                                          int64_t min_bytes = 1,
                                          int64_t min_accelerator_micros = 0,
                                          int64_t min_cpu_micros = 0,
                                          int64_t min_peak_bytes = 0,
                                          int64_t min_residual_bytes = 0,
                                          int64_t min_output_bytes = 0);

  ProfileOptionBuilder& WithMaxDepth(int64_t max_depth);
  ProfileOptionBuilder& WithMinMemory(int64_t min_bytes = 0,
                                      int64_t min_peak_bytes = 0,
                                      int64_t min_residual_bytes = 0,
                                      int64_t min_output_bytes = 0);
  ProfileOptionBuilder& WithMinExecutionTime(int64_t min_micros = 0,
                                             int64_t min_accelerator_micros = 0,
                                             int64_t min_cpu_micros = 0);
  ProfileOptionBuilder& WithMinParameters(int64_t min_params);
  ProfileOptionBuilder& WithMinOccurrence(int64_t min_occurrence);
  ProfileOptionBuilder& WithMinFloatOperations(int64_t min_float_ops);
  ProfileOptionBuilder& WithAccountedTypes(
      const std::vector<std::string>& account_type_regexes);
  // Unset lists are left as they are.
  ProfileOptionBuilder& WithNodeNames(
      std::optional<std::vector<std::string>> start_name_regexes,
      std::optional<std::vector<std::string>> show_name_regexes = {},
      std::optional<std::vector<std::string>> hide_name_regexes = {},
      std::optional<std::vector<std::string>> trim_name_regexes = {});
  ProfileOptionBuilder& AccountDisplayedOpOnly(bool is_true);
  ProfileOptionBuilder& WithEmptyOutput();
  ProfileOptionBuilder& WithStdoutOutput();
  ProfileOptionBuilder& WithFileOutput(const std::string& outfile);
  ProfileOptionBuilder& WithTimelineOutput(const std::string& timeline_file);
  ProfileOptionBuilder& WithPprofOutput(const std::string& pprof_file);
  ProfileOptionBuilder& OrderBy(const std::string& attribute);
  ProfileOptionBuilder& Select(const std::vector<std::string>& attributes);
  ProfileOptionBuilder& WithStep(int64_t step);

  // The options, checked: unknown select/order_by values, bad regexes and
  // malformed outputs are errors (TensorFlow's Python ignored them).
  absl::StatusOr<tfpb::OptionsProto> Build() const;

 private:
  tfpb::OptionsProto options_;
};

class Profiler {
 public:
  // An empty profiler (add graphs and steps later).
  Profiler();
  explicit Profiler(const tfcore::GraphDef& graph,
                    const tfpb::OpLogProto* op_log = nullptr);
  // Loads a ProfileProto file (as written by WriteProfile or TensorFlow).
  static absl::StatusOr<std::unique_ptr<Profiler>> FromFile(
      const std::string& profile_path);
  // Loads trace files (TensorFlow timelines, PyTorch/Kineto traces, TF2/JAX
  // XSpaces; see profiler/trace_import.h), like `tfprof --trace_path`.
  static absl::StatusOr<std::unique_ptr<Profiler>> FromTraces(
      const std::vector<std::string>& trace_paths);
  ~Profiler();
  Profiler(const Profiler&) = delete;
  Profiler& operator=(const Profiler&) = delete;

  void AddGraph(const tfcore::GraphDef& graph);
  // Adds one step; returns the share of graph nodes seen in run statistics
  // so far.
  absl::StatusOr<double> AddStep(int64_t step,
                                 const tfcore::RunMetadata& run_meta);
  void AddOpLog(const tfpb::OpLogProto& op_log);

  // The four views. The options' output (stdout, file, timeline, pprof,
  // none, ...) is written as well; text goes to `out` (std::cout if unset).
  absl::StatusOr<tfpb::GraphNodeProto> ProfileNameScope(
      const tfpb::OptionsProto& options);
  absl::StatusOr<tfpb::GraphNodeProto> ProfileGraph(
      const tfpb::OptionsProto& options);
  absl::StatusOr<tfpb::MultiGraphNodeProto> ProfileOperations(
      const tfpb::OptionsProto& options);
  absl::StatusOr<tfpb::MultiGraphNodeProto> ProfilePython(
      const tfpb::OptionsProto& options);

  absl::StatusOr<tfpb::AdviceProto> Advise(
      const tfpb::AdvisorOptionsProto& options);

  // The base run that Diff() compares with (its data moves into this
  // profiler); null drops it.
  void SetBase(std::unique_ptr<Profiler> base);
  bool has_base() const;
  // A view ("scope", "graph", "op", "code" or "kernel") in diff mode: the
  // rows of both runs matched by name, with each side's totals, the change
  // and its verdict. `diff_args` are the diff command's own options as
  // words: {"-min_change", "5%,10us", "-alpha", "0.01", "-map", "RE=>S"}.
  // Needs a base.
  absl::StatusOr<DiffReport> Diff(
      const std::string& view, const tfpb::OptionsProto& options,
      const std::vector<std::string>& diff_args = {});

  // A ProfileProto that `tfprof --profile_path` loads.
  std::string SerializeToString() const;
  absl::Status WriteProfile(const std::string& path) const;

  // The stats model behind the views (profiler/model/model.h).
  const Model& model() const;
  void set_output_stream(std::ostream* out) { out_ = out; }

 private:
  static absl::StatusOr<std::unique_ptr<Profiler>> Load(const InputPaths& in);
  absl::StatusOr<ResultTree> Run(ViewKind view,
                                 const tfpb::OptionsProto& options);

  std::unique_ptr<Session> session_;
  std::ostream* out_ = nullptr;
};

// Decides which steps to trace and writes their timelines, as
// tf.train.ProfilerHook does: every `save_steps` steps or `save_secs`
// seconds (exactly one), never the very first run.
class ProfilerHook {
 public:
  using Clock = std::function<double()>;  // seconds

  static absl::StatusOr<ProfilerHook> Create(std::optional<int64_t> save_steps,
                                             std::optional<double> save_secs,
                                             std::string output_dir,
                                             bool show_dataflow = true,
                                             bool show_memory = false,
                                             Clock clock = nullptr);

  // Before a run: true if this run should be traced (FULL_TRACE).
  bool BeforeRun();
  // After the run. `global_step` is the step counter as it was before the
  // run; the run advanced it by one. Writes
  // <output_dir>/timeline-<global_step + 1>.json when the run was traced and
  // returns its path (empty otherwise).
  absl::StatusOr<std::string> AfterRun(int64_t global_step,
                                       const tfcore::RunMetadata& run_meta);

 private:
  ProfilerHook() = default;
  bool ShouldTrigger(int64_t step) const;
  void Triggered(int64_t step);

  std::optional<int64_t> every_steps_;
  std::optional<double> every_secs_;
  std::string output_dir_;
  bool show_dataflow_ = true;
  bool show_memory_ = false;
  Clock clock_;
  std::optional<int64_t> next_step_;
  std::optional<int64_t> last_step_;
  double last_time_ = 0;
  bool request_ = false;
};

// Traces chosen runs of a training loop into a Profiler, like
// tf.profiler.ProfileContext: explicit trace steps, or the automatic policy
// (after 10 warm-up runs, trace runs with a new set of fetches, and while
// fewer than half of the graph's nodes have run statistics, a random ~20%
// of runs before run 100; at most 100 traced runs). At each dump step the
// profile is written to <profile_dir>/profile_<step>; queries added with
// AddAutoProfiling run after their steps.
class ProfileContext {
 public:
  ProfileContext(std::string profile_dir,
                 std::optional<std::set<int64_t>> trace_steps = std::nullopt,
                 std::optional<std::set<int64_t>> dump_steps = std::nullopt,
                 bool enabled = true);

  // The graph of the session (may be called again when it grows).
  void AddGraph(const tfcore::GraphDef& graph) { profiler_.AddGraph(graph); }
  // Before run number `step` (0, 1, 2, ... counting runs): trace it?
  bool ShouldTrace(int64_t step, const std::vector<std::string>& fetches);
  // After the run: records a traced step, dumps and runs auto-profiling.
  absl::Status AfterRun(int64_t step, const tfcore::RunMetadata* run_meta);

  void TraceNextStep() { trace_next_ = true; }
  void DumpNextStep() { dump_next_ = true; }
  // Runs `cmd` (scope, graph, op or code) after each of `steps`.
  absl::Status AddAutoProfiling(const std::string& cmd,
                                const tfpb::OptionsProto& options,
                                const std::set<int64_t>& steps);
  // Results of auto-profiling, by step.
  const std::map<int64_t, std::string>& GetProfiles(
      const std::string& cmd) const;

  Profiler& profiler() { return profiler_; }
  int64_t traced_steps() const { return traced_; }

  static constexpr int64_t kWarmupSteps = 10;
  static constexpr int64_t kMaxTracedSteps = 100;

 private:
  struct AutoProfile {
    std::string cmd;
    tfpb::OptionsProto options;
    std::set<int64_t> steps;
  };

  std::string profile_dir_;
  std::optional<std::set<int64_t>> trace_steps_;
  std::set<int64_t> dump_steps_;
  bool enabled_;
  Profiler profiler_;
  std::set<std::string> seen_fetches_;
  std::mt19937 random_{111};
  int64_t traced_ = 0;
  bool trace_next_ = false;
  bool dump_next_ = false;
  std::vector<AutoProfile> auto_profiles_;
  std::map<std::string, std::map<int64_t, std::string>> profiles_;
};

}  // namespace tfprof

#endif  // TFPROF_PROFILER_TFPROF_H_
