// Nesting of timed events on one thread (PyTorch CPU ops, XSpace host ops):
// events sorted by start, longer first, are swept with stacks of the events
// still open. Not a public API.
#ifndef TFPROF_PROFILER_IMPORTERS_COMMON_NESTING_H_
#define TFPROF_PROFILER_IMPORTERS_COMMON_NESTING_H_

#include <algorithm>
#include <cstdint>
#include <vector>

#include "profiler/base/saturate.h"
#include "profiler/importers/common/trace_builder.h"

namespace tfprof {
namespace trace_internal {

// Node names nest at most this deep; deeper events are named as if they
// were children of their ancestor at this depth (keeps names bounded).
inline constexpr int32_t kMaxPathDepth = 64;

// The end of an event (start + duration, saturating).
template <typename Event>
int64_t EndOf(const Event& e) {
  return SatAdd(e.start, e.duration);
}

// The nanoseconds of `parent` that nested `child` covers (the nesting is
// decided in microseconds; this is the overlap at the finer resolution).
template <typename Event>
int64_t NestedNanos(const Event& child, const Event& parent) {
  const int64_t end = std::min(SatAdd(child.start_ns, child.duration_ns),
                               SatAdd(parent.start_ns, parent.duration_ns));
  return std::max<int64_t>(
      SatAdd(end, -std::max(child.start_ns, parent.start_ns)), 0);
}

// Sorts event indices for the sweep: by `key(event)` (e.g. the thread),
// then start, longer first (an enclosing event before what it encloses),
// then kind, then index.
template <typename Event, typename Key>
void SortForNesting(const std::vector<Event>& events, Key key,
                    std::vector<int32_t>* order) {
  std::sort(order->begin(), order->end(), [&](int32_t a, int32_t b) {
    const Event& x = events[a];
    const Event& y = events[b];
    const auto kx = key(x), ky = key(y);
    if (kx != ky) return kx < ky;
    if (x.start != y.start) return x.start < y.start;
    if (x.duration != y.duration) return x.duration > y.duration;
    if (x.kind != y.kind) return x.kind < y.kind;
    return a < b;
  });
}

// Pops the events of `stack` that ended by `t`.
template <typename Event>
void PopEnded(const std::vector<Event>& events, int64_t t,
              std::vector<int32_t>* stack) {
  while (!stack->empty() && EndOf(events[stack->back()]) <= t) {
    stack->pop_back();
  }
}

// The call stack of the Python frames open on `py_stack` (outermost first),
// at most kMaxFrames innermost ones; `frame(event)` parses one.
template <typename Event, typename ParseFrame>
std::vector<Frame> OpenFrames(const std::vector<Event>& events,
                              const std::vector<int32_t>& py_stack,
                              ParseFrame frame) {
  std::vector<Frame> frames;
  const size_t first =
      py_stack.size() > kMaxFrames ? py_stack.size() - kMaxFrames : 0;
  for (size_t p = first; p < py_stack.size(); ++p) {
    frames.push_back(frame(events[py_stack[p]]));
  }
  return frames;
}

}  // namespace trace_internal
}  // namespace tfprof

#endif  // TFPROF_PROFILER_IMPORTERS_COMMON_NESTING_H_
