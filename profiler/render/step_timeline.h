// The Chrome trace TensorFlow's client timeline (and so ProfilerHook's
// timeline-<step>.json) draws from one step's StepStats: an "Allocators"
// process, "<device> Compute" and "<device> Tensors" processes per device,
// op events named by op type, dataflow arrows and memory tracking.
#ifndef TFPROF_PROFILER_RENDER_STEP_TIMELINE_H_
#define TFPROF_PROFILER_RENDER_STEP_TIMELINE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "profiler/base/protos.h"
#include "profiler/load/loader.h"

namespace tfprof {

struct StepTimelineOptions {
  bool show_dataflow = true;
  bool show_memory = false;
  // How long an op lasts: "schedule" (its own record), "gpu" (from its first
  // to its last GPU kernel) or "all" (its own start to its last kernel).
  std::string op_time = "schedule";
  // A trace's timeline only: the steps step..last_step on one clock (the
  // first step's start is time 0); -1 (or the step itself): the step alone.
  int64_t last_step = -1;
};

// A range of steps as the front doors take it: "A-B" (0 <= A <= B) or "N"
// (the step N alone, last == first). False for anything else.
bool ParseStepRange(const std::string& text, int64_t* first, int64_t* last);

// Pretty-printed JSON (4-space indent), as TensorFlow writes it.
std::string StepStatsTimeline(const tfcore::StepStats& step_stats,
                              const StepTimelineOptions& options);

struct StepTimeline {
  int64_t step = 0;
  int64_t last_step = 0;  // the range's last step (== step: one step)
  std::string json;
  bool trace_events = false;  // a trace's own events (else StepStats)
};

// The timeline of one step of a loaded profile (step < 0: the first): a
// trace's own events at their recorded times, or the step's RunMetadata
// drawn as above. Fails for a ProfileProto (it keeps no RunMetadata), for an
// unknown step, for a range of steps of RunMetadata and for an unreadable
// RunMetadata file.
absl::StatusOr<StepTimeline> LoadedStepTimeline(
    const LoadedProfile& profile, int64_t step,
    const StepTimelineOptions& options);

}  // namespace tfprof

#endif  // TFPROF_PROFILER_RENDER_STEP_TIMELINE_H_
