// Memory in use per allocator over the run, from a trace's allocation
// events (Model::activity()): each allocator's peak, when it happened, and
// the allocations live at that moment with the ops that made them.
#ifndef TFPROF_PROFILER_VIEWS_MEMORY_H_
#define TFPROF_PROFILER_VIEWS_MEMORY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "profiler/model/model.h"

namespace tfprof {

struct LiveAllocation {
  uint64_t address = 0;
  int64_t bytes = 0;
  // Allocated before the trace began (the trace shows it freed after the
  // peak): time_ns and op are those of the free.
  bool before_trace = false;
  int64_t time_ns = 0;  // when it was allocated
  std::string op;       // "" when made outside any op
};

struct AllocatorPeak {
  std::string allocator;
  int64_t peak_bytes = 0;    // the most bytes in use
  int64_t peak_time_ns = 0;  // the first time it was reached
  int64_t peak_step = -1;    // the step whose span holds it; -1 none
  int64_t samples = 0;       // allocation and free events
  // Blocks live at the peak, largest first: allocated in the trace and not
  // freed by then, or allocated before it and freed after the peak (blocks
  // are matched by address; events without one are left out).
  std::vector<LiveAllocation> live;
  // Bytes in use at the peak that no traced event accounts for (blocks made
  // before the trace and not freed in it, or events without an address).
  int64_t untraced_bytes = 0;
};

// One entry per allocator with events, by name.
std::vector<AllocatorPeak> ComputeMemoryPeaks(const Model& model);

}  // namespace tfprof

#endif  // TFPROF_PROFILER_VIEWS_MEMORY_H_
