// Memory in use per allocator as text, CSV (every event) or a Chrome trace
// of counter tracks.
#ifndef TFPROF_PROFILER_RENDER_RENDER_MEMORY_H_
#define TFPROF_PROFILER_RENDER_RENDER_MEMORY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "profiler/model/model.h"
#include "profiler/views/memory.h"

namespace tfprof {

// The time all memory output is relative to: the first step's start (or the
// first memory event's time).
int64_t MemoryOrigin(const Model& model);

// Each allocator's peak, its step, and the `top` largest allocations live
// then with their ops.
std::string RenderMemoryText(const Model& model,
                             const std::vector<AllocatorPeak>& peaks,
                             int64_t top);
// Header: allocator,time_micros,bytes_in_use,bytes,op,address (one row per
// allocation or free, time relative to MemoryOrigin()).
std::string RenderMemoryCsv(const Model& model);
// The web UI's memory page: per allocator its peak (bytes, time relative to
// MemoryOrigin() in microseconds, step), events, the untraced bytes, the
// `top` largest allocations live at the peak, and the bytes in use over
// time as [micros, bytes] points: every event's when there are at most
// `max_points`, else the largest of each run of consecutive events (so the
// peak is always a point).
std::string RenderMemoryJson(const Model& model,
                             const std::vector<AllocatorPeak>& peaks,
                             int64_t top, size_t max_points);
// A Chrome trace with one counter track ("ph": "C") per allocator.
std::string RenderMemoryTimeline(const Model& model);

}  // namespace tfprof

#endif  // TFPROF_PROFILER_RENDER_RENDER_MEMORY_H_
