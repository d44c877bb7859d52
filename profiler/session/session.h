// A session: one loaded run (its model, views and the files it came from),
// an optional base run to compare with, and every question the front doors
// ask of them: a view query (and delivering it as -output says), a diff,
// the steps table, the summary, advice, gates, a step's timeline, memory.
// The shell, the web API, the C++ API (Profiler) and the Python package are
// thin adapters over it: this is the one place those are wired.
//
// Thread safety: a session answers one question at a time (the web API
// serializes its requests on it); different sessions are independent.
#ifndef TFPROF_PROFILER_SESSION_SESSION_H_
#define TFPROF_PROFILER_SESSION_SESSION_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "profiler/advise/gates.h"
#include "profiler/load/loader.h"
#include "profiler/load/trace_files.h"
#include "profiler/render/emit.h"
#include "profiler/render/step_timeline.h"
#include "profiler/views/diff.h"
#include "profiler/views/memory.h"
#include "profiler/views/ranks.h"
#include "profiler/views/steps.h"
#include "profiler/views/summary.h"
#include "profiler/views/views.h"

namespace tfprof {

class Session {
 public:
  // Loads `inputs` (LoadProfile's rules and errors); `progress` as there.
  static absl::StatusOr<std::unique_ptr<Session>> Load(
      const InputPaths& inputs,
      const std::function<void(const std::string&)>& progress = nullptr);
  // A session over a loaded profile.
  Session(std::unique_ptr<LoadedProfile> profile, InputPaths inputs);
  // An empty session whose model is built by the caller (mutable_model()).
  Session();
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  const LoadedProfile& profile() const { return *profile_; }
  const Model& model() const { return profile_->model; }
  // For building the model step by step (the C++ API); views see the
  // additions (they cache on the model's generation and version).
  Model* mutable_model() { return &profile_->model; }
  Views& views() { return *views_; }
  // Drops what the views keep between queries (structures, statistics):
  // the next query is cold. For benchmarks.
  void ResetViews();
  const InputPaths& inputs() const { return inputs_; }
  // The files this session (and its base) were loaded from: outputs never
  // overwrite them.
  std::vector<std::string> input_files() const;

  // The run diff and base gates compare with; null drops it.
  void SetBase(std::unique_ptr<Session> base);
  Session* base() { return base_.get(); }
  const Session* base() const { return base_.get(); }
  // An error saying how to load a base when there is none; `what` names
  // the command that needs it.
  absl::Status CheckBase(const char* what) const;

  // --- Questions. Each is an error when it cannot be answered (a bad
  // option, no base for a diff, ...), with a message for the user.

  absl::StatusOr<ResultTree> Query(ViewKind view, const Options& opts);
  // The query, delivered as opts' -output says (text, a file, JSON, CSV,
  // protos, pprof; a timeline queries once per step of the graph view).
  absl::StatusOr<ResultTree> QueryAndEmit(ViewKind view, const Options& opts,
                                          const EmitTarget& target);

  // Against the base (an error without one).
  absl::StatusOr<DiffTree> Diff(ViewKind view, const Options& opts,
                                const DiffOptions& diff);
  absl::StatusOr<DiffTop> DiffTopChanges(const Options& opts,
                                         const DiffOptions& diff, size_t limit);
  absl::StatusOr<StepsDiff> DiffStepTables(const DiffOptions& diff);
  absl::StatusOr<ProfileSummary> BaseSummary(const PeakOverride& peaks);

  // The steps table with its float ops and MFU columns.
  StepTable Steps(const PeakOverride& peaks = {});
  ProfileSummary Summary(const PeakOverride& peaks = {});
  absl::StatusOr<tfpb::AdviceProto> Advise(
      const tfpb::AdvisorOptionsProto& options,
      std::vector<std::string>* notes = nullptr,
      const PeakOverride& peaks = {});
  // `base` is filled in from the session's base (its model).
  absl::StatusOr<std::vector<GateResult>> Check(
      const std::vector<Condition>& conditions, int64_t step, GateBase base,
      const PeakOverride& peaks = {});
  // One step's timeline (step < 0: the first): a trace's own events,
  // RunMetadata's StepStats, or for a ProfileProto (which keeps neither)
  // the graph view of the step; `source` says which.
  struct SourcedTimeline {
    StepTimeline timeline;
    std::string source;  // "trace", "run_metadata" or "graph view"
  };
  absl::StatusOr<SourcedTimeline> StepTimelineOf(
      int64_t step, const StepTimelineOptions& options,
      const Options& view_options);
  std::vector<AllocatorPeak> MemoryPeaks();

  // --- Several ranks. --trace_path naming the traces of two or more ranks
  // (PeekTraceRank) makes a multi-rank session: its model holds every
  // rank's events (the views sum over ranks), Steps() combines the ranks'
  // tables (CombineRankSteps) and Ranks() is the job's account; ForRank(n)
  // is a session of rank n's files alone.

  // The input's ranks (one group for a one-rank input; none without
  // traces). Peeks at the files once.
  const std::vector<RankFiles>& RankGroups();
  bool multi_rank() { return RankGroups().size() >= 2; }
  // The job's ranks report: each rank loaded on its own, two at a time (a
  // one-rank input is profiled from this session's model). Cached.
  absl::StatusOr<RanksReport> Ranks(
      const std::function<void(const std::string&)>& progress = nullptr);
  // Rank n (as Ranks() numbers them): a session of its files, loaded once.
  absl::StatusOr<Session*> ForRank(int64_t rank);
  // One step (step < 0: the job's first) of every rank in one Chrome trace
  // on the aligned clock: a host process and GPU processes per rank, named
  // "rank N: ...", times from the step's earliest aligned start. Ranks are
  // loaded one after another.
  absl::StatusOr<std::string> RanksTimeline(int64_t step);

 private:
  absl::Status ProfileRanks(
      const std::function<void(const std::string&)>& progress);

  std::unique_ptr<LoadedProfile> profile_;
  InputPaths inputs_;
  std::unique_ptr<Views> views_;
  std::unique_ptr<Session> base_;
  std::optional<std::vector<RankFiles>> rank_groups_;
  std::optional<std::vector<RankProfile>> rank_profiles_;
  std::optional<RanksReport> ranks_report_;
  std::map<int64_t, std::unique_ptr<Session>> rank_sessions_;
};

}  // namespace tfprof

#endif  // TFPROF_PROFILER_SESSION_SESSION_H_
