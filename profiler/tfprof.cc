#include "profiler/tfprof.h"

#include <algorithm>
#include <iostream>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "profiler/advise/advisor.h"
#include "profiler/base/file.h"
#include "profiler/base/large_stack.h"
#include "profiler/load/loader.h"
#include "profiler/model/model.h"
#include "profiler/render/emit.h"
#include "profiler/render/render_diff.h"
#include "profiler/render/render_proto.h"
#include "profiler/render/step_timeline.h"
#include "profiler/session/session.h"
#include "profiler/views/diff.h"
#include "profiler/views/views.h"

namespace tfprof {
namespace {

void SetList(google::protobuf::RepeatedPtrField<std::string>* field,
             const std::vector<std::string>& values) {
  field->Clear();
  for (const std::string& v : values) *field->Add() = v;
}

tfpb::OptionsProto Preset(int64_t max_depth, const std::string& order_by,
                          const std::vector<std::string>& account,
                          bool displayed_only,
                          const std::vector<std::string>& select) {
  tfpb::OptionsProto o = ProfileOptionBuilder().Build().value();
  o.set_max_depth(max_depth);
  o.set_order_by(order_by);
  SetList(o.mutable_account_type_regexes(), account);
  o.set_account_displayed_op_only(displayed_only);
  SetList(o.mutable_select(), select);
  return o;
}

// The public rows of a diff tree, depth first in display order.
DiffReport ToDiffReport(const DiffTree& tree) {
  DiffReport report;
  report.view = ViewName(tree.view);
  report.attribute = AttrName(tree.attribute);
  report.notes = tree.notes;
  report.json = RenderDiffJson(tree);
  std::vector<std::pair<size_t, int>> todo = {{0, 0}};
  while (!todo.empty()) {
    const auto [i, depth] = todo.back();
    todo.pop_back();
    const DiffNode& n = tree.nodes[i];
    DiffRow row;
    row.name = n.name;
    row.depth = depth;
    row.in_base = n.base.present;
    row.in_current = n.current.present;
    row.base_value = Value(n.base.total, tree.attribute);
    row.current_value = Value(n.current.total, tree.attribute);
    row.verdict = VerdictName(n.judgement.verdict);
    row.ci_low = n.judgement.ci_low;
    row.ci_high = n.judgement.ci_high;
    row.p_value = n.judgement.p_value;
    row.q_value = n.judgement.q_value;
    report.rows.push_back(std::move(row));
    for (auto c = n.children.rbegin(); c != n.children.rend(); ++c) {
      todo.emplace_back(*c, depth + 1);
    }
  }
  return report;
}

}  // namespace

// ---------------------------------------------------------------------------
// ProfileOptionBuilder

ProfileOptionBuilder::ProfileOptionBuilder() {
  options_.set_max_depth(100);
  options_.set_order_by("name");
  SetList(options_.mutable_account_type_regexes(), {".*"});
  SetList(options_.mutable_start_name_regexes(), {".*"});
  SetList(options_.mutable_show_name_regexes(), {".*"});
  SetList(options_.mutable_select(), {"micros"});
  options_.set_step(-1);
  options_.set_output("stdout");
}

ProfileOptionBuilder::ProfileOptionBuilder(const tfpb::OptionsProto& options)
    : options_(options) {}

tfpb::OptionsProto ProfileOptionBuilder::TrainableVariablesParameter() {
  return Preset(10000, "name", {"_trainable_variables"}, true, {"params"});
}

tfpb::OptionsProto ProfileOptionBuilder::FloatOperation() {
  tfpb::OptionsProto o =
      Preset(10000, "float_ops", {".*"}, true, {"float_ops"});
  o.set_min_float_ops(1);
  return o;
}

tfpb::OptionsProto ProfileOptionBuilder::TimeAndMemory(
    int64_t min_micros, int64_t min_bytes, int64_t min_accelerator_micros,
    int64_t min_cpu_micros, int64_t min_peak_bytes, int64_t min_residual_bytes,
    int64_t min_output_bytes) {
  tfpb::OptionsProto o =
      Preset(10000, "micros", {".*"}, true, {"micros", "bytes"});
  o.set_min_micros(min_micros);
  o.set_min_bytes(min_bytes);
  o.set_min_accelerator_micros(min_accelerator_micros);
  o.set_min_cpu_micros(min_cpu_micros);
  o.set_min_peak_bytes(min_peak_bytes);
  o.set_min_residual_bytes(min_residual_bytes);
  o.set_min_output_bytes(min_output_bytes);
  return o;
}

ProfileOptionBuilder& ProfileOptionBuilder::WithMaxDepth(int64_t max_depth) {
  options_.set_max_depth(max_depth);
  return *this;
}

ProfileOptionBuilder& ProfileOptionBuilder::WithMinMemory(
    int64_t min_bytes, int64_t min_peak_bytes, int64_t min_residual_bytes,
    int64_t min_output_bytes) {
  options_.set_min_bytes(min_bytes);
  options_.set_min_peak_bytes(min_peak_bytes);
  options_.set_min_residual_bytes(min_residual_bytes);
  options_.set_min_output_bytes(min_output_bytes);
  return *this;
}

ProfileOptionBuilder& ProfileOptionBuilder::WithMinExecutionTime(
    int64_t min_micros, int64_t min_accelerator_micros,
    int64_t min_cpu_micros) {
  options_.set_min_micros(min_micros);
  options_.set_min_accelerator_micros(min_accelerator_micros);
  options_.set_min_cpu_micros(min_cpu_micros);
  return *this;
}

ProfileOptionBuilder& ProfileOptionBuilder::WithMinParameters(
    int64_t min_params) {
  options_.set_min_params(min_params);
  return *this;
}

ProfileOptionBuilder& ProfileOptionBuilder::WithMinOccurrence(
    int64_t min_occurrence) {
  options_.set_min_occurrence(min_occurrence);
  return *this;
}

ProfileOptionBuilder& ProfileOptionBuilder::WithMinFloatOperations(
    int64_t min_float_ops) {
  options_.set_min_float_ops(min_float_ops);
  return *this;
}

ProfileOptionBuilder& ProfileOptionBuilder::WithAccountedTypes(
    const std::vector<std::string>& account_type_regexes) {
  SetList(options_.mutable_account_type_regexes(), account_type_regexes);
  return *this;
}

ProfileOptionBuilder& ProfileOptionBuilder::WithNodeNames(
    std::optional<std::vector<std::string>> start_name_regexes,
    std::optional<std::vector<std::string>> show_name_regexes,
    std::optional<std::vector<std::string>> hide_name_regexes,
    std::optional<std::vector<std::string>> trim_name_regexes) {
  if (start_name_regexes) {
    SetList(options_.mutable_start_name_regexes(), *start_name_regexes);
  }
  if (show_name_regexes) {
    SetList(options_.mutable_show_name_regexes(), *show_name_regexes);
  }
  if (hide_name_regexes) {
    SetList(options_.mutable_hide_name_regexes(), *hide_name_regexes);
  }
  if (trim_name_regexes) {
    SetList(options_.mutable_trim_name_regexes(), *trim_name_regexes);
  }
  return *this;
}

ProfileOptionBuilder& ProfileOptionBuilder::AccountDisplayedOpOnly(
    bool is_true) {
  options_.set_account_displayed_op_only(is_true);
  return *this;
}

ProfileOptionBuilder& ProfileOptionBuilder::WithEmptyOutput() {
  options_.set_output("none");
  return *this;
}

ProfileOptionBuilder& ProfileOptionBuilder::WithStdoutOutput() {
  options_.set_output("stdout");
  return *this;
}

ProfileOptionBuilder& ProfileOptionBuilder::WithFileOutput(
    const std::string& outfile) {
  options_.set_output("file:outfile=" + outfile);
  return *this;
}

ProfileOptionBuilder& ProfileOptionBuilder::WithTimelineOutput(
    const std::string& timeline_file) {
  options_.set_output("timeline:outfile=" + timeline_file);
  return *this;
}

ProfileOptionBuilder& ProfileOptionBuilder::WithPprofOutput(
    const std::string& pprof_file) {
  options_.set_output("pprof:outfile=" + pprof_file);
  return *this;
}

ProfileOptionBuilder& ProfileOptionBuilder::OrderBy(
    const std::string& attribute) {
  options_.set_order_by(attribute);
  return *this;
}

ProfileOptionBuilder& ProfileOptionBuilder::Select(
    const std::vector<std::string>& attributes) {
  std::vector<std::string> unique = attributes;
  std::sort(unique.begin(), unique.end());
  unique.erase(std::unique(unique.begin(), unique.end()), unique.end());
  SetList(options_.mutable_select(), unique);
  return *this;
}

ProfileOptionBuilder& ProfileOptionBuilder::WithStep(int64_t step) {
  options_.set_step(step);
  return *this;
}

absl::StatusOr<tfpb::OptionsProto> ProfileOptionBuilder::Build() const {
  absl::StatusOr<Options> checked = OptionsFromProto(options_);
  if (!checked.ok()) return checked.status();
  if (options_.max_depth() < 0) {
    return absl::InvalidArgumentError("max_depth must be >= 0");
  }
  return options_;
}

// ---------------------------------------------------------------------------
// Profiler

Profiler::Profiler() : session_(std::make_unique<Session>()) {}

Profiler::Profiler(const tfcore::GraphDef& graph,
                   const tfpb::OpLogProto* op_log)
    : Profiler() {
  session_->mutable_model()->AddGraph(graph);
  if (op_log != nullptr) session_->mutable_model()->AddOpLog(*op_log);
}

Profiler::~Profiler() = default;

const Model& Profiler::model() const { return session_->model(); }

absl::StatusOr<std::unique_ptr<Profiler>> Profiler::Load(const InputPaths& in) {
  absl::StatusOr<std::unique_ptr<Session>> session = Session::Load(in);
  if (!session.ok()) return session.status();
  auto p = std::make_unique<Profiler>();
  p->session_ = std::move(*session);
  return p;
}

absl::StatusOr<std::unique_ptr<Profiler>> Profiler::FromFile(
    const std::string& profile_path) {
  InputPaths in;
  in.profile_path = profile_path;
  return Load(in);
}

absl::StatusOr<std::unique_ptr<Profiler>> Profiler::FromTraces(
    const std::vector<std::string>& trace_paths) {
  if (trace_paths.empty()) {
    return absl::InvalidArgumentError("FromTraces: no trace files given");
  }
  InputPaths in;
  in.trace_path = absl::StrJoin(trace_paths, ",");
  return Load(in);
}

void Profiler::AddGraph(const tfcore::GraphDef& graph) {
  session_->mutable_model()->AddGraph(graph);
}

absl::StatusOr<double> Profiler::AddStep(int64_t step,
                                         const tfcore::RunMetadata& run_meta) {
  absl::Status s = session_->mutable_model()->AddRunMeta(step, run_meta);
  if (!s.ok()) return s;
  return session_->model().run_coverage();
}

void Profiler::AddOpLog(const tfpb::OpLogProto& op_log) {
  session_->mutable_model()->AddOpLog(op_log);
}

void Profiler::SetBase(std::unique_ptr<Profiler> base) {
  session_->SetBase(base != nullptr ? std::move(base->session_) : nullptr);
}

bool Profiler::has_base() const { return session_->base() != nullptr; }

absl::StatusOr<DiffReport> Profiler::Diff(
    const std::string& view, const tfpb::OptionsProto& options,
    const std::vector<std::string>& diff_args) {
  const std::optional<ViewKind> kind = ViewNamed(view);
  if (!kind.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Diff: unknown view '", view, "' (scope, graph, op, code, kernel)"));
  }
  absl::StatusOr<Options> opts = OptionsFromProto(options);
  if (!opts.ok()) return opts.status();
  DiffOptions diff;
  for (size_t i = 0; i < diff_args.size(); i += 2) {
    if (diff_args[i].empty() || diff_args[i][0] != '-' ||
        i + 1 >= diff_args.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Diff: diff_args are -NAME VALUE pairs, got '", diff_args[i], "'"));
    }
    absl::Status s = SetDiffOption(diff_args[i].substr(1), diff_args[i + 1],
                                   "Diff: -", &diff);
    if (!s.ok()) return s;
  }
  absl::StatusOr<DiffTree> tree = session_->Diff(*kind, *opts, diff);
  if (!tree.ok()) return tree.status();
  return ToDiffReport(*tree);
}

absl::StatusOr<ResultTree> Profiler::Run(ViewKind view,
                                         const tfpb::OptionsProto& options) {
  absl::StatusOr<Options> opts = OptionsFromProto(options);
  if (!opts.ok()) return opts.status();
  std::ostream* out = out_ != nullptr ? out_ : &std::cout;
  return session_->QueryAndEmit(view, *opts, EmitTarget{out, &std::cerr, {}});
}

absl::StatusOr<tfpb::GraphNodeProto> Profiler::ProfileNameScope(
    const tfpb::OptionsProto& options) {
  absl::StatusOr<ResultTree> r = Run(ViewKind::kScope, options);
  if (!r.ok()) return r.status();
  return ToGraphNodeProto(*r);
}

absl::StatusOr<tfpb::GraphNodeProto> Profiler::ProfileGraph(
    const tfpb::OptionsProto& options) {
  absl::StatusOr<ResultTree> r = Run(ViewKind::kGraph, options);
  if (!r.ok()) return r.status();
  return ToGraphNodeProto(*r);
}

absl::StatusOr<tfpb::MultiGraphNodeProto> Profiler::ProfileOperations(
    const tfpb::OptionsProto& options) {
  absl::StatusOr<ResultTree> r = Run(ViewKind::kOp, options);
  if (!r.ok()) return r.status();
  return ToMultiGraphNodeProto(*r);
}

absl::StatusOr<tfpb::MultiGraphNodeProto> Profiler::ProfilePython(
    const tfpb::OptionsProto& options) {
  absl::StatusOr<ResultTree> r = Run(ViewKind::kCode, options);
  if (!r.ok()) return r.status();
  return ToMultiGraphNodeProto(*r);
}

absl::StatusOr<tfpb::AdviceProto> Profiler::Advise(
    const tfpb::AdvisorOptionsProto& options) {
  return session_->Advise(options);
}

std::string Profiler::SerializeToString() const {
  return session_->model().SerializedProfileProto();
}

absl::Status Profiler::WriteProfile(const std::string& path) const {
  return WriteFileAtomic(path, SerializeToString());
}

// ---------------------------------------------------------------------------
// ProfilerHook

absl::StatusOr<ProfilerHook> ProfilerHook::Create(
    std::optional<int64_t> save_steps, std::optional<double> save_secs,
    std::string output_dir, bool show_dataflow, bool show_memory, Clock clock) {
  if (save_steps.has_value() == save_secs.has_value()) {
    return absl::InvalidArgumentError(
        "ProfilerHook: give exactly one of save_steps and save_secs");
  }
  if ((save_steps && *save_steps <= 0) || (save_secs && !(*save_secs > 0))) {
    return absl::InvalidArgumentError(
        "ProfilerHook: save_steps/save_secs must be positive");
  }
  ProfilerHook h;
  h.every_steps_ = save_steps;
  h.every_secs_ = save_secs;
  h.output_dir_ = std::move(output_dir);
  h.show_dataflow_ = show_dataflow;
  h.show_memory_ = show_memory;
  h.clock_ = clock ? std::move(clock) : [] {
    return std::chrono::duration<double>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  };
  return h;
}

bool ProfilerHook::ShouldTrigger(int64_t step) const {
  if (!last_step_.has_value()) return true;
  if (*last_step_ == step) return false;
  if (every_secs_ && clock_() >= last_time_ + *every_secs_) return true;
  if (every_steps_ && step >= *last_step_ + *every_steps_) return true;
  return false;
}

void ProfilerHook::Triggered(int64_t step) {
  last_time_ = clock_();
  last_step_ = step;
}

bool ProfilerHook::BeforeRun() {
  // The first run is never traced: the step counter is not known yet.
  request_ = next_step_.has_value() && ShouldTrigger(*next_step_);
  return request_;
}

absl::StatusOr<std::string> ProfilerHook::AfterRun(
    int64_t global_step, const tfcore::RunMetadata& run_meta) {
  if (!next_step_.has_value()) Triggered(global_step);
  const int64_t step = global_step + 1;
  std::string path;
  if (request_) {
    Triggered(step);
    path = absl::StrCat(output_dir_.empty() ? "" : output_dir_ + "/",
                        "timeline-", step, ".json");
    StepTimelineOptions opts;
    opts.show_dataflow = show_dataflow_;
    opts.show_memory = show_memory_;
    absl::Status s =
        WriteFileAtomic(path, StepStatsTimeline(run_meta.step_stats(), opts));
    if (!s.ok()) return s;
  }
  next_step_ = step + 1;
  return path;
}

// ---------------------------------------------------------------------------
// ProfileContext

ProfileContext::ProfileContext(std::string profile_dir,
                               std::optional<std::set<int64_t>> trace_steps,
                               std::optional<std::set<int64_t>> dump_steps,
                               bool enabled)
    : profile_dir_(std::move(profile_dir)),
      trace_steps_(std::move(trace_steps)),
      dump_steps_(dump_steps ? *dump_steps : std::set<int64_t>{100}),
      enabled_(enabled) {}

bool ProfileContext::ShouldTrace(int64_t step,
                                 const std::vector<std::string>& fetches) {
  if (!enabled_) return false;
  if (trace_next_) return true;
  for (const AutoProfile& a : auto_profiles_) {
    if (a.steps.count(step)) return true;
  }
  if (dump_steps_.count(step)) return true;
  if (trace_steps_.has_value()) return trace_steps_->count(step) != 0;
  if (step < kWarmupSteps || traced_ >= kMaxTracedSteps) return false;
  std::vector<std::string> sorted = fetches;
  std::sort(sorted.begin(), sorted.end());
  if (seen_fetches_.insert(absl::StrJoin(sorted, "-")).second) return true;
  if (profiler_.model().run_coverage() < 0.5 && step < kMaxTracedSteps) {
    return std::uniform_int_distribution<int>(0, 10)(random_) < 2;
  }
  return false;
}

absl::Status ProfileContext::AfterRun(int64_t step,
                                      const tfcore::RunMetadata* run_meta) {
  if (!enabled_) return absl::OkStatus();
  trace_next_ = false;
  if (run_meta != nullptr && run_meta->has_step_stats()) {
    absl::StatusOr<double> cov = profiler_.AddStep(step, *run_meta);
    if (!cov.ok()) return cov.status();
    ++traced_;
  }
  for (const AutoProfile& a : auto_profiles_) {
    if (!a.steps.count(step)) continue;
    std::string bytes;
    if (a.cmd == "scope" || a.cmd == "graph") {
      auto r = a.cmd == "scope" ? profiler_.ProfileNameScope(a.options)
                                : profiler_.ProfileGraph(a.options);
      if (!r.ok()) return r.status();
      bytes = DeterministicBytes(*r);
    } else {
      auto r = a.cmd == "op" ? profiler_.ProfileOperations(a.options)
                             : profiler_.ProfilePython(a.options);
      if (!r.ok()) return r.status();
      bytes = DeterministicBytes(*r);
    }
    profiles_[a.cmd][step] = std::move(bytes);
  }
  if (dump_next_ || dump_steps_.count(step)) {
    dump_next_ = false;
    absl::Status s =
        profiler_.WriteProfile(absl::StrCat(profile_dir_, "/profile_", step));
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status ProfileContext::AddAutoProfiling(const std::string& cmd,
                                              const tfpb::OptionsProto& options,
                                              const std::set<int64_t>& steps) {
  if (cmd != "scope" && cmd != "graph" && cmd != "op" && cmd != "code") {
    return absl::InvalidArgumentError(
        absl::StrCat("AddAutoProfiling: unknown command '", cmd,
                     "' (scope, graph, op or code)"));
  }
  absl::StatusOr<Options> checked = OptionsFromProto(options);
  if (!checked.ok()) return checked.status();
  auto_profiles_.push_back(AutoProfile{cmd, options, steps});
  return absl::OkStatus();
}

const std::map<int64_t, std::string>& ProfileContext::GetProfiles(
    const std::string& cmd) const {
  static const std::map<int64_t, std::string> kNone;
  auto it = profiles_.find(cmd);
  return it == profiles_.end() ? kNone : it->second;
}

}  // namespace tfprof
