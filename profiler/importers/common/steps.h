// Steps of a trace from the start times of step markers (PyTorch's
// ProfilerStep#N ranges, XSpace step groups): an event belongs to the step
// that started last before it. Not a public API.
#ifndef TFPROF_PROFILER_IMPORTERS_COMMON_STEPS_H_
#define TFPROF_PROFILER_IMPORTERS_COMMON_STEPS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "profiler/importers/common/trace_builder.h"

namespace tfprof {
namespace trace_internal {

class StepStarts {
 public:
  // Without markers every event is in step `file_index`.
  explicit StepStarts(int64_t file_index) : file_index_(file_index) {}

  // A step that starts at `start` (microseconds). Call Sort() after the
  // last one.
  void Add(int64_t start, int64_t step) { starts_.emplace_back(start, step); }
  void Sort();

  bool empty() const { return starts_.empty(); }
  size_t size() const { return starts_.size(); }
  // The step of an event starting at `t`: the last step started at or before
  // it; events before the first step count in the first one (and are
  // counted, see before_first()).
  int64_t At(int64_t t);
  int64_t before_first() const { return before_first_; }
  int64_t first_step() const { return starts_.front().second; }

  // Notes "<n> events before the first <marker> counted in step <s>" when
  // there were such events.
  void NoteBeforeFirst(const std::string& file, const std::string& marker,
                       TraceBuilder* builder) const;

 private:
  int64_t file_index_;
  std::vector<std::pair<int64_t, int64_t>> starts_;  // (start, step)
  int64_t before_first_ = 0;
};

}  // namespace trace_internal
}  // namespace tfprof

#endif  // TFPROF_PROFILER_IMPORTERS_COMMON_STEPS_H_
