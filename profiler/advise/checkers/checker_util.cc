#include "profiler/advise/checkers/checker_util.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "profiler/advise/advisor.h"

namespace tfprof {

std::string Pct(double part, double whole) {
  return absl::StrFormat("%.1f%%", whole > 0 ? 100.0 * part / whole : 0.0);
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
std::map<int64_t, Span> StepSpans(const Model& model) {
  std::map<int64_t, Span> spans;
  ExecDetail d;
  for (const auto& node : model.nodes()) {
    for (const StepExec& e : node->execs) {
      model.DetailInto(e, &d);
      if (d.all_start_micros <= 0) continue;
      Span& s = spans[e.step];
      if (s.start == 0 || d.all_start_micros < s.start) {
        s.start = d.all_start_micros;
      }
      s.end = std::max(s.end, d.latest_end_micros);
    }
  }
  return spans;
}

}  // namespace tfprof
