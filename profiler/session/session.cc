#include "profiler/session/session.h"

#include <algorithm>
#include <climits>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "profiler/advise/advisor.h"
#include "profiler/base/large_stack.h"
#include "profiler/base/saturate.h"
#include "profiler/render/trace_timeline.h"
#include "profiler/render/view_timeline.h"
#include "profiler/session/rank_loader.h"
#include "profiler/views/options.h"

namespace tfprof {
namespace {

// The files a run was loaded from: its flags' paths, and the trace files
// its --trace_path's globs and directories named (as the loader found
// them, in `groups`: no directory is read again).
void AddInputFiles(const InputPaths& in, const std::vector<RankFiles>& groups,
                   std::vector<std::string>* files) {
  for (const std::string* path :
       {&in.profile_path, &in.graph_path, &in.op_log_path}) {
    if (!path->empty()) files->push_back(*path);
  }
  for (const std::string* list : {&in.run_meta_path, &in.trace_path}) {
    for (const std::string& f : SplitList(*list)) files->push_back(f);
  }
  for (const RankFiles& g : groups) {
    files->insert(files->end(), g.files.begin(), g.files.end());
  }
  if (!in.checkpoint_path.empty()) {
    files->push_back(in.checkpoint_path);
    files->push_back(in.checkpoint_path + ".index");
  }
}

}  // namespace

ViewsPool::ViewsPool(const Model* model, const Checkpoint* checkpoint,
                     size_t max_views)
    : model_(model),
      checkpoint_(checkpoint),
      max_views_(std::max<size_t>(1, max_views)) {}

ViewsPool::~ViewsPool() = default;

std::unique_ptr<Views> ViewsPool::NewViews() const {
  auto views = std::make_unique<Views>(model_, checkpoint_);
  if (cancel_ != nullptr) views->SetCancelFlag(cancel_);
  return views;
}

ViewsPool::Lease ViewsPool::Acquire() {
  std::unique_lock<std::mutex> lock(mu_);
  returned_.wait(lock, [this] { return !idle_.empty() || made_ < max_views_; });
  if (!idle_.empty()) {
    std::unique_ptr<Views> views = std::move(idle_.back());
    idle_.pop_back();
    return Lease(this, std::move(views));
  }
  ++made_;
  lock.unlock();
  // Built outside the lock: a Views is cheap until its first query.
  return Lease(this, NewViews());
}

std::optional<ViewsPool::Lease> ViewsPool::AcquireIdle() {
  std::lock_guard<std::mutex> lock(mu_);
  if (idle_.empty()) return std::nullopt;
  std::unique_ptr<Views> views = std::move(idle_.back());
  idle_.pop_back();
  return std::optional<Lease>(std::in_place, this, std::move(views));
}

ViewsPool::Lease::~Lease() {
  if (views_ == nullptr) return;  // moved from
  {
    std::lock_guard<std::mutex> lock(pool_->mu_);
    pool_->idle_.push_back(std::move(views_));
  }
  pool_->returned_.notify_one();
}

void ViewsPool::Reset() {
  std::lock_guard<std::mutex> lock(mu_);
  made_ -= idle_.size();
  idle_.clear();
}

void ViewsPool::SetCancelFlag(const std::atomic<bool>* flag) {
  std::lock_guard<std::mutex> lock(mu_);
  cancel_ = flag;
  for (auto& views : idle_) views->SetCancelFlag(flag);
}

absl::StatusOr<std::unique_ptr<Session>> Session::Load(
    const InputPaths& inputs,
    const std::function<void(const std::string&)>& progress) {
  absl::StatusOr<std::unique_ptr<LoadedProfile>> loaded =
      LoadProfile(inputs, progress);
  if (!loaded.ok()) return loaded.status();
  return std::make_unique<Session>(std::move(*loaded), inputs);
}

Session::Session(std::unique_ptr<LoadedProfile> profile, InputPaths inputs)
    : profile_(std::move(profile)),
      inputs_(std::move(inputs)),
      views_(&profile_->model, profile_->checkpoint.get()) {}

Session::Session() : Session(std::make_unique<LoadedProfile>(), {}) {}

Session::~Session() = default;

void Session::ResetViews() { views_.Reset(); }

void Session::SetCancelFlag(const std::atomic<bool>* flag) {
  cancel_ = flag;
  views_.SetCancelFlag(flag);
  if (base_ != nullptr) base_->SetCancelFlag(flag);
}

std::vector<std::string> Session::input_files() const {
  std::vector<std::string> files;
  AddInputFiles(inputs_, profile_->rank_groups, &files);
  if (base_ != nullptr) {
    AddInputFiles(base_->inputs_, base_->profile_->rank_groups, &files);
  }
  std::sort(files.begin(), files.end());
  files.erase(std::unique(files.begin(), files.end()), files.end());
  return files;
}

void Session::SetBase(std::unique_ptr<Session> base) {
  base_ = std::move(base);
  if (base_ != nullptr && cancel_ != nullptr) base_->SetCancelFlag(cancel_);
}

absl::Status Session::CheckBase(const char* what) const {
  if (base_ != nullptr) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      what,
      " needs a base run: load one with 'base FILE' or --base_profile_path / "
      "--base_trace_path / --base_graph_path ..."));
}

absl::StatusOr<ResultTree> Session::Query(ViewKind view, const Options& opts) {
  absl::StatusOr<ResultTree> result = absl::InternalError("query not run");
  // Deep result trees recurse.
  ViewsPool::Lease views = views_.Acquire();
  RunWithLargeStack([&] { result = views->Query(view, opts); });
  return result;
}

absl::StatusOr<ResultTree> Session::QueryAndEmit(ViewKind view,
                                                 const Options& opts,
                                                 const EmitTarget& target) {
  absl::Status ok = CheckEmittable(view, opts);
  if (!ok.ok()) return ok;
  // The graph view's timeline shows one step: -step -1 writes one file per
  // step.
  std::vector<int64_t> steps = {opts.step};
  if (opts.output_type == OutputKind::kTimeline && view == ViewKind::kGraph &&
      opts.step < 0) {
    steps.assign(model().steps().begin(), model().steps().end());
    if (steps.empty()) {
      return absl::FailedPreconditionError(
          "the graph timeline needs run statistics, and this profile has no "
          "steps");
    }
  }
  absl::StatusOr<ResultTree> last = absl::InternalError("query not run");
  for (int64_t step : steps) {
    Options one = opts;
    one.step = step;
    if (last.ok()) Recycle(std::move(*last));
    last = Query(view, one);
    if (!last.ok()) return last.status();
    absl::Status s;
    RunWithLargeStack([&] { s = EmitResult(*last, model(), target); });
    if (!s.ok()) return s;
  }
  return last;
}

absl::Status Session::Emit(ViewKind view, const Options& opts,
                           const EmitTarget& target) {
  absl::StatusOr<ResultTree> tree = QueryAndEmit(view, opts, target);
  if (!tree.ok()) return tree.status();
  Recycle(std::move(*tree));
  return absl::OkStatus();
}

void Session::Recycle(ResultTree tree) {
  std::optional<ViewsPool::Lease> views = views_.AcquireIdle();
  if (views) (*views)->Recycle(std::move(tree));
}

absl::StatusOr<DiffTree> Session::Diff(ViewKind view, const Options& opts,
                                       const DiffOptions& diff) {
  absl::Status ok = CheckBase("diff");
  if (!ok.ok()) return ok;
  absl::StatusOr<DiffTree> tree = absl::InternalError("diff not run");
  ViewsPool::Lease base_views = base_->LeaseViews();
  ViewsPool::Lease views = views_.Acquire();
  RunWithLargeStack([&] {
    tree = QueryDiff(view, opts, diff, base_views.get(), base_->model(),
                     views.get(), model());
  });
  return tree;
}

absl::StatusOr<DiffTop> Session::DiffTopChanges(const Options& opts,
                                                const DiffOptions& diff,
                                                size_t limit) {
  absl::Status ok = CheckBase("diff");
  if (!ok.ok()) return ok;
  absl::StatusOr<DiffTop> top = absl::InternalError("diff not run");
  ViewsPool::Lease base_views = base_->LeaseViews();
  ViewsPool::Lease views = views_.Acquire();
  RunWithLargeStack([&] {
    top = QueryDiffTop(opts, diff, base_views.get(), base_->model(),
                       views.get(), model(), limit);
  });
  return top;
}

absl::StatusOr<StepsDiff> Session::DiffStepTables(const DiffOptions& diff) {
  absl::Status ok = CheckBase("diff");
  if (!ok.ok()) return ok;
  // Each side's table as `steps` shows it (a job of several ranks: its
  // combined table, means per rank and the slowest rank's wall).
  return DiffSteps(base_->Steps(PeakOverride()), Steps(PeakOverride()), diff);
}

absl::StatusOr<ProfileSummary> Session::BaseSummary(const PeakOverride& peaks) {
  absl::Status ok = CheckBase("diff");
  if (!ok.ok()) return ok;
  return base_->Summary(peaks);
}

StepTable Session::Steps(const PeakOverride& peaks) {
  StepTable table;
  bool job = false;
  if (multi_rank()) {
    std::lock_guard<std::recursive_mutex> lock(ranks_mu_);
    if (ProfileRanks(nullptr).ok()) {
      table = CombineRankSteps(*rank_profiles_);
      job = true;
    }
  }
  // Several ranks: the float ops are the mean per rank and MFU is the
  // job's, over its wall per step and with the caller's peaks, as `summary`
  // has them (views/flops.h).
  if (!job) table = ComputeSteps(model());
  AddStepFlops(ComputeRunFlops(model(), table, peaks), &table);
  return table;
}

absl::StatusOr<StepTable> Session::Steps(int64_t step,
                                         const PeakOverride& peaks) {
  return StepOf(Steps(peaks), step);
}

absl::StatusOr<StepTable> Session::StepOf(StepTable table, int64_t step) {
  if (step < 0) return table;
  std::vector<StepRow> all = std::move(table.rows);
  table.rows.clear();
  std::string known;
  for (StepRow& r : all) {
    absl::StrAppend(&known, known.empty() ? "" : " ", r.step);
    if (r.step == step) table.rows.push_back(std::move(r));
  }
  if (table.rows.empty()) {
    return absl::NotFoundError(absl::StrCat(
        "steps: -step ", step, " is not a step of this profile (",
        known.empty() ? "it has none" : absl::StrCat("steps: ", known), ")"));
  }
  // (The row's MFU is the step's; the line under the table the run's.)
  if (!table.mfu_text.empty()) {
    table.mfu_text +=
        absl::StrCat(" (the run's, over all ", all.size(), " steps)");
  }
  return table;
}

ProfileSummary Session::Summary(const PeakOverride& peaks) {
  if (!multi_rank()) return Summarize(model(), peaks);
  // Several ranks: the model holds every rank's events, where each rank's
  // "gpu:0" would be one device. The devices, lanes and allocator peaks are
  // each rank's own ("rank 1: .../device:gpu:0"), and the wall time per
  // step is the job's (as `steps` shows it).
  std::lock_guard<std::recursive_mutex> lock(ranks_mu_);
  const absl::Status ranks = ProfileRanks(nullptr);
  if (!ranks.ok()) {
    ProfileSummary s = Summarize(model(), peaks);
    s.notes.push_back(absl::StrCat(
        "the devices and the time per step are the merged model's: the ranks "
        "could not be profiled one by one (",
        ranks.message(), ")"));
    return s;
  }
  std::vector<DeviceSummary> devices;
  for (const RankProfile& p : *rank_profiles_) {
    const std::string prefix = p.rank >= 0
                                   ? absl::StrCat("rank ", p.rank, ": ")
                                   : absl::StrCat("host ", p.host, ": ");
    for (DeviceSummary d : p.devices) {
      d.name = prefix + d.name;
      for (auto& [allocator, bytes] : d.allocators)
        allocator = prefix + allocator;
      for (LaneSummary& lane : d.lanes) lane.name = prefix + lane.name;
      devices.push_back(std::move(d));
    }
  }
  const StepTable job = CombineRankSteps(*rank_profiles_);
  return Summarize(model(), peaks, SummaryParts{&job, &devices});
}

absl::StatusOr<tfpb::AdviceProto> Session::Advise(
    const tfpb::AdvisorOptionsProto& options, std::vector<std::string>* notes,
    const PeakOverride& peaks) {
  absl::StatusOr<tfpb::AdviceProto> advice = absl::InternalError("not run");
  // Several ranks: the checkers read the job's steps, as `steps` has them.
  std::optional<StepTable> job;
  if (multi_rank()) job = Steps(peaks);
  ViewsPool::Lease views = views_.Acquire();
  RunWithLargeStack([&] {
    advice = tfprof::Advise(model(), views.get(), options, notes, peaks,
                            job.has_value() ? &*job : nullptr);
  });
  return advice;
}

absl::StatusOr<std::vector<GateResult>> Session::Check(
    const std::vector<Condition>& conditions, int64_t step, GateBase base,
    const PeakOverride& peaks) {
  base.model = base_ != nullptr ? &base_->model() : nullptr;
  // Several ranks: run-level terms read the job's steps (the slowest rank's
  // wall per step).
  std::optional<StepTable> job;
  if (multi_rank()) {
    job = Steps(peaks);
    base.steps = &*job;
  }
  return EvaluateGates(model(), conditions, step, base, peaks);
}

absl::StatusOr<Session::SourcedTimeline> Session::StepTimelineOf(
    int64_t step, const StepTimelineOptions& options,
    const Options& view_options) {
  const LoadedProfile& p = *profile_;
  // A trace's range of steps starts and ends at steps of the profile (steps
  // 2-999 of five was drawn as 2-6 and said 2-999; steps 1-3 of 2-6 kept
  // the trace's own clock).
  if (HasTraceEvents(p.model) && p.run_meta_files.empty() &&
      options.last_step > step && step >= 0) {
    for (const int64_t end : {step, options.last_step}) {
      if (p.model.steps().count(end) > 0) continue;
      return absl::NotFoundError(absl::StrCat(
          "timeline: -steps ", step, "-", options.last_step,
          end == step ? " starts" : " ends", " at step ", end,
          ", which is not a step of this profile (steps: ", StepList(p.model),
          ")"));
    }
  }
  if (!p.run_meta_files.empty() || HasTraceEvents(p.model)) {
    absl::StatusOr<StepTimeline> t = LoadedStepTimeline(p, step, options);
    if (!t.ok()) return t.status();
    const bool trace = t->trace_events;
    return SourcedTimeline{std::move(*t), trace ? "trace" : "run_metadata"};
  }
  // A ProfileProto keeps neither: the graph view's timeline of the step.
  const std::set<int64_t>& steps = p.model.steps();
  if (steps.empty()) {
    return absl::FailedPreconditionError(
        "the profile has no steps, so no timeline");
  }
  if (step < 0) step = *steps.begin();
  if (options.last_step > step) {
    return absl::InvalidArgumentError(
        "timeline: a range of steps needs a trace's events (the graph view's "
        "timeline draws one step)");
  }
  absl::Status known = CheckStep(p.model, step);
  if (!known.ok()) return known;
  Options opts = view_options;
  opts.step = step;
  opts.max_depth = 1000000;  // every node of the step
  absl::StatusOr<ResultTree> r = Query(ViewKind::kGraph, opts);
  if (!r.ok()) return r.status();
  return SourcedTimeline{
      StepTimeline{step, step, GraphTimeline(*r, p.model, step).json, false},
      "graph view"};
}

std::vector<AllocatorPeak> Session::MemoryPeaks() {
  return ComputeMemoryPeaks(model());
}

const std::vector<RankFiles>& Session::RankGroups() {
  std::lock_guard<std::recursive_mutex> lock(ranks_mu_);
  if (!rank_groups_.has_value()) {
    // The loader grouped the files as it read them; a profile made
    // elsewhere (no groups) has its files read again.
    rank_groups_.emplace(profile_->rank_groups);
    if (rank_groups_->empty() && !inputs_.trace_path.empty()) {
      absl::StatusOr<std::vector<std::string>> files =
          ExpandTracePath(inputs_.trace_path);
      if (files.ok() && !files->empty()) *rank_groups_ = GroupByRank(*files);
    }
  }
  return *rank_groups_;
}

absl::Status Session::ProfileRanks(
    const std::function<void(const std::string&)>& progress) {
  std::lock_guard<std::recursive_mutex> lock(ranks_mu_);
  if (rank_profiles_.has_value()) return absl::OkStatus();
  const std::vector<RankFiles>& groups = RankGroups();
  // A session made for `ranks` alone has not loaded its input as one.
  const bool loaded = model().size() > 0 || groups.empty();
  if (groups.size() < 2 && loaded) {
    // One rank: this session's own model.
    RankProfile p;
    RunWithLargeStack([&] {
      p = ProfileRank(model(),
                      groups.empty() ? input_files() : groups.front().files);
    });
    rank_profiles_.emplace();
    rank_profiles_->push_back(std::move(p));
    return absl::OkStatus();
  }
  absl::StatusOr<std::vector<RankProfile>> profiles =
      ProfileRankFiles(groups, 2, progress);
  if (!profiles.ok()) return profiles.status();
  rank_profiles_ = std::move(*profiles);
  return absl::OkStatus();
}

absl::StatusOr<RanksReport> Session::Ranks(
    const std::function<void(const std::string&)>& progress) {
  std::lock_guard<std::recursive_mutex> lock(ranks_mu_);
  if (!ranks_report_.has_value()) {
    absl::Status s = ProfileRanks(progress);
    if (!s.ok()) return s;
    ranks_report_ = AnalyzeRanks(*rank_profiles_);
  }
  return *ranks_report_;
}

absl::StatusOr<Session*> Session::ForRank(int64_t rank) {
  std::lock_guard<std::recursive_mutex> lock(ranks_mu_);
  auto cached = rank_sessions_.find(rank);
  if (cached != rank_sessions_.end()) return cached->second.get();
  absl::StatusOr<RanksReport> report = Ranks();
  if (!report.ok()) return report.status();
  std::vector<int64_t> known;
  for (const RankReport& r : report->ranks) {
    known.push_back(r.rank);
    if (r.rank != rank) continue;
    if (!multi_rank()) return this;
    InputPaths in;
    in.trace_path = absl::StrJoin(r.files, ",");
    absl::StatusOr<std::unique_ptr<Session>> s = Load(in);
    if (!s.ok()) return s.status();
    Session* out = s->get();
    rank_sessions_[rank] = std::move(*s);
    return out;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("-rank ", rank, ": no such rank; the input has rank",
                   known.size() == 1 ? " " : "s ", absl::StrJoin(known, ", ")));
}

absl::StatusOr<std::string> Session::RanksTimeline(int64_t step) {
  // What each rank's part needs, taken under the ranks' lock; the ranks are
  // loaded again (seconds for large ones) outside it, so that other
  // requests for the ranks' caches are not held meanwhile.
  struct Part {
    std::vector<std::string> files;
    int64_t rank = 0;
    int64_t shift = 0;  // from the rank's clock to the step's aligned origin
  };
  std::vector<Part> parts;
  bool reload = false;
  {
    std::lock_guard<std::recursive_mutex> lock(ranks_mu_);
    absl::StatusOr<RanksReport> report = Ranks();
    if (!report.ok()) return report.status();
    if (report->steps.empty()) {
      return absl::FailedPreconditionError("the ranks have no steps");
    }
    if (step < 0) step = report->steps.front().step;
    // Each rank's clock base (its profile, found by its files) and the
    // step's earliest aligned start.
    int64_t origin = INT64_MAX;
    for (const RankReport& rr : report->ranks) {
      Part& part = parts.emplace_back();
      part.files = rr.files;
      part.rank = rr.rank;
      for (const RankProfile& p : *rank_profiles_) {
        if (p.files != rr.files) continue;
        part.shift = SatAdd(p.base_ns, -rr.offset_ns);
        for (const StepRow& row : p.steps.rows) {
          if (row.step == step) {
            origin = std::min(origin, SatAdd(row.start_ns, part.shift));
          }
        }
      }
    }
    if (origin == INT64_MAX) {
      return absl::NotFoundError(absl::StrCat("no rank has step ", step));
    }
    for (Part& part : parts) part.shift = SatAdd(part.shift, -origin);
    reload = multi_rank() || model().size() == 0;
  }
  StepEventsWriter writer;
  int64_t events = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    std::unique_ptr<Session> owned;
    const Model* model = &this->model();
    if (reload) {
      InputPaths in;
      in.trace_path = absl::StrJoin(parts[i].files, ",");
      absl::StatusOr<std::unique_ptr<Session>> s = Load(in);
      if (!s.ok()) return s.status();
      owned = std::move(*s);
      model = &owned->model();
    }
    events += writer.Add(*model, step, nullptr, parts[i].shift,
                         absl::StrCat("rank ", parts[i].rank),
                         static_cast<int>(i + 1) * 1000);
  }
  if (events == 0) {
    return absl::NotFoundError(absl::StrCat("no trace events in step ", step));
  }
  return writer.Finish();
}

}  // namespace tfprof
