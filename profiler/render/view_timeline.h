// Chrome Trace Format timelines of view results, in tfprof's layouts.
#ifndef TFPROF_PROFILER_RENDER_VIEW_TIMELINE_H_
#define TFPROF_PROFILER_RENDER_VIEW_TIMELINE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "profiler/model/model.h"
#include "profiler/views/result.h"

namespace tfprof {

struct Timeline {
  std::string json;                   // the trace file's contents
  std::vector<std::string> messages;  // e.g. "<device> peak memory: 1.23 MB"
};

// Graph view result for one step: a process per device ("Op scheduling
// threads: <dev>" / "Op execution threads: <dev>"), ops packed into lanes,
// cross-device dataflow arrows, and allocator memory counters per
// accelerator.
Timeline GraphTimeline(const ResultTree& result, const Model& model,
                       int64_t step);

// Scope and code views: a flame layout, one process per tree depth, each
// node as long as its total time, children side by side.
Timeline TreeTimeline(const ResultTree& result);

// Size above which browser trace viewers struggle.
inline constexpr size_t kLargeTraceBytes = 200ull * 1024 * 1024;

}  // namespace tfprof

#endif  // TFPROF_PROFILER_RENDER_VIEW_TIMELINE_H_
