// AcceleratorUtilizationChecker: How busy each accelerator is between its
// first and last kernel.
#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "profiler/advise/advisor.h"
#include "profiler/advise/checkers/checker_util.h"
#include "profiler/advise/checkers/checkers.h"
#include "profiler/base/device.h"

namespace tfprof {
namespace {

// Busy share of each accelerator: kernel time over the span from the first
// start to the last end, using each node's last step.
std::vector<std::string> CheckAcceleratorUtilization(const Model& model,
                                                     double threshold) {
  struct Span {
    int64_t start = 0, end = 0, exec = 0;
  };
  std::map<std::string, Span> devices;
  for (const GraphNode* n : model.NodesByName()) {
    if (n->execs.empty() || !IsPlacedOnAccelerator(n->canonical_device())) {
      continue;
    }
    Span& s = devices[n->canonical_device()];
    const StepExec& e = n->execs.back();
    const ExecDetail d = model.Detail(e);
    if (s.start == 0) {
      s.start = d.all_start_micros;
    } else if (d.all_start_micros != 0) {
      s.start = std::min(s.start, d.all_start_micros);
    }
    s.end = std::max(s.end, d.latest_end_micros);
    s.exec += e.accelerator_micros;
  }
  std::vector<std::string> reports;
  for (const auto& [dev, s] : devices) {
    const int64_t span = s.end - s.start;
    if (span <= 0) continue;
    const double u =
        1.0 * static_cast<double>(s.exec) / static_cast<double>(span);
    reports.push_back(absl::StrFormat("device: %s %sutilization: %.2f", dev,
                                      u >= threshold ? "" : "low ", u));
  }
  return reports;
}

class AcceleratorUtilizationChecker : public Checker {
 public:
  std::string name() const override { return "AcceleratorUtilizationChecker"; }
  std::string help() const override {
    return "How busy each accelerator is between its first and last kernel.";
  }
  std::string needs() const override {
    return "step stats with accelerator (stream:all) time";
  }
  bool by_default(ProfileSource source) const override {
    return source == ProfileSource::kTensorFlow;
  }
  std::vector<CheckerOption> options() const override {
    return {{"threshold", "0.5", 0, 1, false,
             "devices busy less than this share are \"low utilization\""}};
  }
  std::vector<std::string> Run(const CheckerContext& ctx) const override {
    return CheckAcceleratorUtilization(ctx.model(), ctx.Option("threshold"));
  }
};

}  // namespace

std::unique_ptr<Checker> NewAcceleratorUtilizationChecker() {
  return std::make_unique<AcceleratorUtilizationChecker>();
}

}  // namespace tfprof
