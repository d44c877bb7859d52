// The four views (scope, graph, op, code) over a Model. Each query returns a
// ResultTree; the structures a view needs are built once per model
// generation and reused by later queries.
//
// Thread rules: a Views keeps those structures and the last query's
// statistics and scratch state, so one Views serves one thread at a time.
// Threads that query one model at once each use their own Views (the
// session's ViewsPool hands them out); the model they share is only read.
#ifndef TFPROF_PROFILER_VIEWS_VIEWS_H_
#define TFPROF_PROFILER_VIEWS_VIEWS_H_

#include <atomic>
#include <memory>

#include "absl/status/statusor.h"
#include "profiler/load/checkpoint.h"
#include "profiler/model/model.h"
#include "profiler/views/options.h"
#include "profiler/views/result.h"

namespace tfprof {

class ViewCache;

class Views {
 public:
  // `model` (and `checkpoint`, which may be null) must outlive this object.
  Views(const Model* model, const Checkpoint* checkpoint);
  ~Views();
  Views(const Views&) = delete;
  Views& operator=(const Views&) = delete;

  // Runs one query. Errors: invalid options, an unknown -step, the code view
  // on a profile without call stacks.
  absl::StatusOr<ResultTree> Query(ViewKind view, const Options& opts);

  // Takes back a tree a query of these views returned, once its caller is
  // done with it: the next scope, graph or code query writes its rows into
  // that tree's rows (and their names' and lists' memory) instead of
  // allocating and zeroing them again. Keeps one tree's rows (the larger)
  // and what they point to until the next query that runs: an op or kernel
  // query frees them, and so does one whose tree needs far fewer rows. A
  // tree of another model is dropped. Same thread rules as Query.
  void Recycle(ResultTree tree);

  // While *flag is true, running queries stop and return a Cancelled error
  // (the shell sets it on Ctrl-C). The flag must outlive this object.
  void SetCancelFlag(const std::atomic<bool>* flag) { cancel_ = flag; }

 private:
  absl::StatusOr<ResultTree> QueryOnThisStack(ViewKind view,
                                              const Options& opts);

  const std::atomic<bool>* cancel_ = nullptr;
  const Model* model_;
  const Checkpoint* checkpoint_;
  std::unique_ptr<ViewCache> cache_;
};

// "step N not found; available steps: ..." if opts.step names no step.
absl::Status CheckStep(const Model& model, int64_t step);
// The model's steps for a message, "2 3 4 5 6"; past 20 steps the first
// and last ten around "... (N steps)".
std::string StepList(const Model& model);

}  // namespace tfprof

#endif  // TFPROF_PROFILER_VIEWS_VIEWS_H_
