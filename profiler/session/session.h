// A session: one loaded run (its model, views and the files it came from),
// an optional base run to compare with, and every question the front doors
// ask of them: a view query (and delivering it as -output says), a diff,
// the steps table, the summary, advice, gates, a step's timeline, memory.
// The shell, the web API, the C++ API (Profiler) and the Python package are
// thin adapters over it: this is the one place those are wired.
//
// Thread safety: the questions below only read the loaded model, so any
// number of threads may ask them at once (the web UI's tabs do). Each query
// borrows a Views of its own from the session's pool (ViewsPool below; a
// Views caches structures and statistics and is used by one thread at a
// time), and the model's lazily built indexes are safe for concurrent
// readers (model.h). What changes the session (mutable_model(), SetBase,
// ResetViews, SetCancelFlag, loading) must not run while any question
// does: the shell and the C++ API are single-threaded, and the web server
// changes nothing once it serves. The ranks' caches (RankGroups, Ranks,
// ForRank, a multi-rank Steps) are filled under a lock of their own.
#ifndef TFPROF_PROFILER_SESSION_SESSION_H_
#define TFPROF_PROFILER_SESSION_SESSION_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
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

// Views for concurrent readers of one model: Acquire() hands a thread a Views
// no other thread is using (a warm one when one is idle, else a new one, up
// to `max_views`; past that it waits for one). Each Views keeps its own
// caches, so readers never share mutable state; the price is memory: up
// to max_views copies of the views' structures and statistics (a few
// hundred bytes per model node each).
class ViewsPool {
 public:
  ViewsPool(const Model* model, const Checkpoint* checkpoint,
            size_t max_views = 4);
  ~ViewsPool();

  class Lease {
   public:
    Lease(ViewsPool* pool, std::unique_ptr<Views> views)
        : pool_(pool), views_(std::move(views)) {}
    Lease(Lease&&) = default;
    Lease& operator=(Lease&&) = delete;
    ~Lease();
    Views* get() const { return views_.get(); }
    Views* operator->() const { return views_.get(); }

   private:
    ViewsPool* pool_;
    std::unique_ptr<Views> views_;
  };
  Lease Acquire();
  // An idle Views only, without waiting or making one; nullopt if none.
  std::optional<Lease> AcquireIdle();

  // Drops the idle views (the next queries are cold) and sets the flag
  // every views of the pool checks; neither while a lease is out.
  void Reset();
  void SetCancelFlag(const std::atomic<bool>* flag);

 private:
  std::unique_ptr<Views> NewViews() const;

  const Model* model_;
  const Checkpoint* checkpoint_;
  const size_t max_views_;
  const std::atomic<bool>* cancel_ = nullptr;
  std::mutex mu_;
  std::condition_variable returned_;
  size_t made_ = 0;                           // idle or leased
  std::vector<std::unique_ptr<Views>> idle_;  // the most recently used last
};

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
  // A Views for this thread's queries while the lease lives.
  ViewsPool::Lease LeaseViews() { return views_.Acquire(); }
  // Drops what the views keep between queries (structures, statistics):
  // the next query is cold. For benchmarks.
  void ResetViews();
  // While *flag is true, running queries stop with a Cancelled error (the
  // shell's Ctrl-C); also the base's.
  void SetCancelFlag(const std::atomic<bool>* flag);
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
  // The same, for a caller that only wants the delivery: the tree is given
  // back to the views (Recycle) once delivered.
  absl::Status Emit(ViewKind view, const Options& opts,
                    const EmitTarget& target);
  // Gives a tree this session's Query returned back to its views, once
  // the caller is done with it: the next query reuses its rows' memory
  // (Views::Recycle). Dropped instead when no views is idle (it neither
  // waits nor makes one) and for trees of other sessions.
  void Recycle(ResultTree tree);

  // Against the base (an error without one).
  absl::StatusOr<DiffTree> Diff(ViewKind view, const Options& opts,
                                const DiffOptions& diff);
  absl::StatusOr<DiffTop> DiffTopChanges(const Options& opts,
                                         const DiffOptions& diff, size_t limit);
  absl::StatusOr<StepsDiff> DiffStepTables(const DiffOptions& diff);
  absl::StatusOr<ProfileSummary> BaseSummary(const PeakOverride& peaks);

  // The steps table with its float ops and MFU columns.
  StepTable Steps(const PeakOverride& peaks = {});
  // The same for `step` (-step): every row when it is negative, else that
  // step's row alone (the MFU line under the table stays the run's), or an
  // error that lists the steps there are.
  absl::StatusOr<StepTable> Steps(int64_t step, const PeakOverride& peaks);
  // What Steps(step, peaks) makes of the whole table (for a caller that
  // keeps the table for more than one step).
  static absl::StatusOr<StepTable> StepOf(StepTable table, int64_t step);
  // On several ranks, each rank's devices (named "rank N: ...") and the
  // job's wall time per step.
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
  // rank's events (the views show the mean per rank), Steps() combines the
  // ranks' tables (CombineRankSteps) and Ranks() is the job's account;
  // ForRank(n) is a session of rank n's files alone.

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
  // loaded one after another, outside the ranks' lock.
  absl::StatusOr<std::string> RanksTimeline(int64_t step);

 private:
  absl::Status ProfileRanks(
      const std::function<void(const std::string&)>& progress);

  std::unique_ptr<LoadedProfile> profile_;
  InputPaths inputs_;
  ViewsPool views_;
  std::unique_ptr<Session> base_;
  // Guards the ranks' caches below (filled lazily, from any thread).
  std::recursive_mutex ranks_mu_;
  std::optional<std::vector<RankFiles>> rank_groups_;
  std::optional<std::vector<RankProfile>> rank_profiles_;
  std::optional<RanksReport> ranks_report_;
  std::map<int64_t, std::unique_ptr<Session>> rank_sessions_;
  const std::atomic<bool>* cancel_ = nullptr;
};

}  // namespace tfprof

#endif  // TFPROF_PROFILER_SESSION_SESSION_H_
