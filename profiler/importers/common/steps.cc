#include "profiler/importers/common/steps.h"

#include <algorithm>
#include <iterator>
#include <limits>

#include "absl/strings/str_cat.h"

namespace tfprof {
namespace trace_internal {

void StepStarts::Sort() { std::sort(starts_.begin(), starts_.end()); }

int64_t StepStarts::At(int64_t t) {
  if (starts_.empty()) return file_index_;
  auto it =
      std::upper_bound(starts_.begin(), starts_.end(),
                       std::make_pair(t, std::numeric_limits<int64_t>::max()));
  if (it == starts_.begin()) {
    ++before_first_;
    return starts_.front().second;
  }
  return std::prev(it)->second;
}

void StepStarts::NoteBeforeFirst(const std::string& file,
                                 const std::string& marker,
                                 TraceBuilder* builder) const {
  if (before_first_ == 0) return;
  builder->Note(file, absl::StrCat(before_first_, " events before the first ",
                                   marker, " counted in step ", first_step()));
}

}  // namespace trace_internal
}  // namespace tfprof
