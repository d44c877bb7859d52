// A Chrome trace of one step of a trace input (PyTorch/Kineto, XSpace), each
// event at its own start and duration as the trace recorded it: host events
// on their threads (nested events included in their parents' durations),
// accelerator work on its GPU streams, the ranges the program marked as the
// GPUs saw them, and the allocators' bytes in use as counters.
#ifndef TFPROF_PROFILER_RENDER_TRACE_TIMELINE_H_
#define TFPROF_PROFILER_RENDER_TRACE_TIMELINE_H_

#include <cstdint>
#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "profiler/model/model.h"

namespace tfprof {

// Whether the model keeps a trace's events (Model::activity()): its host
// events, which every trace importer records. A RunMetadata's GPU streams
// also give kernels and copies, but a RunMetadata is not a trace: its
// timelines are tfprof's.
bool HasTraceEvents(const Model& model);

// The step's start on the model's clock: its own span where known, else its
// first event.
int64_t StepOrigin(const Model& model, int64_t step);

// Several traces' events of one step in one Chrome trace (the ranks of a
// job, aligned): a host process and a process per GPU for each trace.
class StepEventsWriter {
 public:
  // Adds `model`'s events of `step` (with `nodes`, only theirs, as below),
  // times shifted by `shift_ns`; process ids from `pid_base`, process names
  // after `label` ("rank 3: Host") when it is not empty. Returns how many
  // events it added.
  int64_t Add(const Model& model, int64_t step,
              const std::set<std::string>* nodes, int64_t shift_ns,
              const std::string& label, int pid_base);
  // The same for the steps first..last on one clock. Besides the host
  // events and GPU work it counts, it adds the trace's GPU annotations of
  // those steps (a lane above each GPU's streams) and each allocator's bytes
  // in use over the events' span (counter events of a "Memory" process),
  // and an arrow from each launch call to the GPU work it launched where
  // the trace links the two (a Chrome flow: "s" on the call, "f" on the
  // work).
  int64_t AddSteps(const Model& model, int64_t first, int64_t last,
                   const std::set<std::string>* nodes, int64_t shift_ns,
                   const std::string& label, int pid_base);
  // The Chrome trace (times in microseconds, nanoseconds as decimals).
  std::string Finish() const;

 private:
  std::string meta_, events_;
  int64_t flows_ = 0;  // launch arrows so far (their ids)
};

// The events of `step` (times in microseconds from the step's start, with
// nanoseconds as decimals). With `nodes`, only events of those nodes (host
// events by their node, GPU work by its launching op). Fails when the model
// has no trace events or none in the step.
absl::StatusOr<std::string> TraceEventsTimeline(
    const Model& model, int64_t step, const std::set<std::string>* nodes);
// The same for the steps first..last (the first's start is time 0).
absl::StatusOr<std::string> TraceStepsTimeline(
    const Model& model, int64_t first, int64_t last,
    const std::set<std::string>* nodes);

}  // namespace tfprof

#endif  // TFPROF_PROFILER_RENDER_TRACE_TIMELINE_H_
