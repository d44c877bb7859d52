#include "profiler/advise/checkers/checker_util.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "profiler/advise/advisor.h"
#include "profiler/base/saturate.h"
#include "profiler/views/steps.h"

namespace tfprof {

std::string Pct(double part, double whole) {
  return absl::StrFormat("%.1f%%", whole > 0 ? 100.0 * part / whole : 0.0);
}

bool ReadsTraceWork(const Model& model) {
  return model.source() != ProfileSource::kTensorFlow &&
         !model.activity().work().empty();
}

bool NeedSteps(const CheckerContext& ctx, const std::string& checker) {
  if (!ctx.model().steps().empty()) return true;
  ctx.Note(absl::StrCat("no RunMetadata: ", checker,
                        " needs step stats (--run_meta_path or a profile "
                        "with steps)"));
  return false;
}

// The wall span of each step: the earliest start to the latest end of any
// node.
std::map<int64_t, Span> StepSpans(const CheckerContext& ctx) {
  std::map<int64_t, Span> spans;
  std::optional<StepTable> own;
  if (ctx.steps() == nullptr) own = ComputeSteps(ctx.model());
  for (const StepRow& r : (own.has_value() ? *own : *ctx.steps()).rows) {
    if (r.wall_ns <= 0 && r.start_ns == 0) continue;  // no time recorded
    const int64_t end = SatAdd(r.start_ns, r.wall_ns);
    spans[r.step] = Span{r.start_ns, end};
  }
  return spans;
}

}  // namespace tfprof
