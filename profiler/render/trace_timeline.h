// A Chrome trace of one step of a trace input (PyTorch/Kineto, XSpace), each
// event at its own start and duration as the trace recorded it: host events
// on their threads (nested events included in their parents' durations),
// accelerator work on its GPU streams.
#ifndef TFPROF_PROFILER_RENDER_TRACE_TIMELINE_H_
#define TFPROF_PROFILER_RENDER_TRACE_TIMELINE_H_

#include <cstdint>
#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "profiler/model/model.h"

namespace tfprof {

// Whether the model keeps a trace's events (Model::activity()).
bool HasTraceEvents(const Model& model);

// The events of `step` (times in microseconds from the step's start, with
// nanoseconds as decimals). With `nodes`, only events of those nodes (host
// events by their node, GPU work by its launching op). Fails when the model
// has no trace events or none in the step.
absl::StatusOr<std::string> TraceEventsTimeline(
    const Model& model, int64_t step, const std::set<std::string>* nodes);

}  // namespace tfprof

#endif  // TFPROF_PROFILER_RENDER_TRACE_TIMELINE_H_
