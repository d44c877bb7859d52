// MfuChecker: the run's MFU against its stated peak, the ops furthest below
// their roofline, and the accelerator time spent in ops with no float ops.
#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "profiler/advise/advisor.h"
#include "profiler/advise/checkers/checker_util.h"
#include "profiler/advise/checkers/checkers.h"
#include "profiler/base/units.h"
#include "profiler/views/flops.h"
#include "profiler/views/steps.h"

namespace tfprof {
namespace {

// The op view's rows with their rooflines.
std::vector<std::string> BelowRoof(const CheckerContext& ctx, size_t top) {
  Options o;
  o.max_depth = 1 << 30;
  o.order_by = Attr::kAcceleratorMicros;
  o.select = {Attr::kAcceleratorMicros, Attr::kFloatOps, Attr::kRoofline};
  o.peak_flops = ctx.peaks().flops;
  o.peak_bytes_per_sec = ctx.peaks().bytes_per_sec;
  absl::StatusOr<ResultTree> r = ctx.views()->Query(ViewKind::kOp, o);
  if (!r.ok()) return {};
  struct Row {
    std::string name;
    double lost = 0;  // accelerator time the roof would have saved, us
    const ResultNode* node = nullptr;
  };
  std::vector<Row> rows;
  std::string unknown;
  for (size_t c : r->root().children) {
    const ResultNode& n = r->nodes[c];
    if (n.flops == nullptr || n.flops->roof_fraction < 0) continue;
    const double fraction = std::min(n.flops->roof_fraction, 1.0);
    rows.push_back(
        Row{n.name, static_cast<double>(n.flops->rate_micros) * (1 - fraction),
            &n});
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const Row& a, const Row& b) { return a.lost > b.lost; });
  std::vector<std::string> lines;
  if (rows.empty()) {
    for (const std::string& note : r->notes) lines.push_back(note);
    if (lines.empty()) {
      lines.push_back(
          "no op has both float ops and accelerator time: no roofline");
    }
    return lines;
  }
  lines.push_back(
      "ops furthest below their roofline (by the accelerator time the roof "
      "would save):");
  for (size_t i = 0; i < rows.size() && i < top; ++i) {
    const FlopFacts& f = *rows[i].node->flops;
    lines.push_back(absl::StrFormat(
        "  %s: %.1f%% of its %s roof (%s, %s, %.4g FLOP/B), %s achieved in "
        "%s/step",
        rows[i].name, 100 * f.roof_fraction,
        f.memory_bound ? "memory" : "compute", FormatFlopRate(f.roof),
        DtypeName(f.dtype), f.intensity, FormatFlopRate(f.flop_rate),
        FormatTime(f.rate_micros)));
  }
  return {absl::StrJoin(lines, "\n")};
}

// The accelerator time of nodes that carry no float ops, with the op types
// that take most of it.
// (Kernels replayed in an XLA command buffer keep their time on its
// command_buffer node while their instructions carry the float ops: MFU
// credits those, so that time is not counted as without.)
std::string WithoutFlops(const Model& model, size_t top) {
  int64_t total = 0, none = 0, buffered = 0;
  std::map<std::string, int64_t> by_type;
  for (const auto& node : model.nodes()) {
    const NodeStats s = node->Stats(-1);
    total += s.accelerator_exec_micros;
    if (node->float_ops > 0 || s.accelerator_exec_micros == 0) continue;
    if (node->op == "command_buffer") {
      buffered += s.accelerator_exec_micros;
      continue;
    }
    none += s.accelerator_exec_micros;
    by_type[node->op] += s.accelerator_exec_micros;
  }
  if (total == 0) return "";
  const std::string in_buffers =
      buffered == 0 ? ""
                    : absl::StrFormat(
                          " (%s/step of kernels in XLA command buffers "
                          "counted with their instructions' float ops)",
                          FormatTime(buffered));
  if (none == 0) {
    return "every op with accelerator time has float ops" + in_buffers;
  }
  std::vector<std::pair<std::string, int64_t>> types(by_type.begin(),
                                                     by_type.end());
  std::stable_sort(
      types.begin(), types.end(),
      [](const auto& a, const auto& b) { return a.second > b.second; });
  std::vector<std::string> parts;
  for (size_t i = 0; i < types.size() && i < top; ++i) {
    parts.push_back(
        absl::StrFormat("%s %s", types[i].first, FormatTime(types[i].second)));
  }
  return absl::StrFormat(
      "%s of the accelerator time (%s/step) is in ops with no float ops%s: "
      "MFU credits none of it%s",
      Pct(static_cast<double>(none), static_cast<double>(total)),
      FormatTime(none),
      parts.empty() ? "" : absl::StrCat(" (", absl::StrJoin(parts, ", "), ")"),
      in_buffers);
}

class MfuChecker : public Checker {
 public:
  std::string name() const override { return "MfuChecker"; }
  bool by_default(ProfileSource source) const override {
    return source != ProfileSource::kTensorFlow;
  }
  std::string help() const override {
    return "The run's MFU against a stated peak, the ops furthest below their "
           "roofline, and the accelerator time in ops with no float ops.";
  }
  std::string needs() const override {
    return "step stats with float ops (PyTorch traces with shapes, an op "
           "log); a GPU of the peak table or --peak_flops";
  }
  std::vector<CheckerOption> options() const override {
    return {{"top", "5", 1, 1000, true, "ops listed"}};
  }

  std::vector<std::string> Run(const CheckerContext& ctx) const override {
    if (!NeedSteps(ctx, name())) return {};
    const StepTable steps =
        ctx.steps() != nullptr ? *ctx.steps() : ComputeSteps(ctx.model());
    const RunFlops f = ComputeRunFlops(ctx.model(), steps, ctx.peaks());
    if (f.flops_per_step <= 0) {
      return {
          "no float ops: MFU needs them (FlopsCoverageChecker says where "
          "they come from)"};
    }
    const size_t top = static_cast<size_t>(ctx.IntOption("top"));
    std::vector<std::string> reports = {absl::StrFormat(
        "%s per step (%s) in %s of mean step wall time: %s achieved; %s",
        FormatFlopCount(static_cast<double>(f.flops_per_step)), f.flops_set,
        FormatNanos(StepWallStats(steps).mean_ns), FormatFlopRate(f.flop_rate),
        MfuText(f))};
    for (std::string& line : BelowRoof(ctx, top)) {
      reports.push_back(std::move(line));
    }
    const std::string none = WithoutFlops(ctx.model(), top);
    if (!none.empty()) reports.push_back(none);
    for (const std::string& note : f.notes) reports.push_back("note: " + note);
    return reports;
  }
};

}  // namespace

std::unique_ptr<Checker> NewMfuChecker() {
  return std::make_unique<MfuChecker>();
}

}  // namespace tfprof
