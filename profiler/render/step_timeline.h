// The Chrome trace TensorFlow's client timeline (and so ProfilerHook's
// timeline-<step>.json) draws from one step's StepStats: an "Allocators"
// process, "<device> Compute" and "<device> Tensors" processes per device,
// op events named by op type, dataflow arrows and memory tracking.
#ifndef TFPROF_PROFILER_RENDER_STEP_TIMELINE_H_
#define TFPROF_PROFILER_RENDER_STEP_TIMELINE_H_

#include <string>

#include "profiler/base/protos.h"

namespace tfprof {

struct StepTimelineOptions {
  bool show_dataflow = true;
  bool show_memory = false;
  // How long an op lasts: "schedule" (its own record), "gpu" (from its first
  // to its last GPU kernel) or "all" (its own start to its last kernel).
  std::string op_time = "schedule";
};

// Pretty-printed JSON (4-space indent), as TensorFlow writes it.
std::string StepStatsTimeline(const tfcore::StepStats& step_stats,
                              const StepTimelineOptions& options);

}  // namespace tfprof

#endif  // TFPROF_PROFILER_RENDER_STEP_TIMELINE_H_
