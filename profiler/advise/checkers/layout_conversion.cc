// LayoutConversionChecker: accelerator time spent converting tensors between
// NCHW and NHWC (cuDNN's conversion kernels, TensorFlow's layout-optimizer
// transposes), as a share of kernel time, and who launched it.
#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "profiler/advise/advisor.h"
#include "profiler/advise/checkers/checker_util.h"
#include "profiler/advise/checkers/checkers.h"
#include "profiler/base/saturate.h"
#include "profiler/base/units.h"

namespace tfprof {
namespace {

// Whether a kernel or op name says it converts layouts: cuDNN's
// nchwToNhwc/nhwcToNchw kernels, the transposes TensorFlow's layout
// optimizer adds (TransposeNHWCToNCHW-LayoutOptimizer).
bool ConvertsLayout(std::string_view name) {
  const std::string lower = absl::AsciiStrToLower(std::string(name));
  for (const char* what : {"nchwtonhwc", "nhwctonchw", "layoutoptimizer"}) {
    if (lower.find(what) != std::string::npos) return true;
  }
  return false;
}

// Conversion time against all kernel time, by launching op and by kernel.
struct Conversions {
  int64_t ns = 0, total_ns = 0, launches = 0;
  std::map<std::string, int64_t> by_op, by_kernel;
  bool layout_optimizer = false;  // TensorFlow's transposes among them
};

// The launching op as a report names it: a PyTorch op by its type
// (aten::cudnn_convolution), others by name (TensorFlow's op names say
// what the layout optimizer added).
std::string LaunchingOp(const Model& model, std::string_view op) {
  if (op.empty()) return "(no launching op)";
  if (model.source() == ProfileSource::kPyTorch) {
    const GraphNode* node = model.Find(op);
    if (node != nullptr && !node->op.empty()) return node->op;
  }
  return std::string(op);
}

// From a trace's kernels: a kernel converts when its name or its launching
// op's says so.
Conversions FromKernels(const Model& model) {
  Conversions c;
  const Activity& activity = model.activity();
  // The profiled steps' kernels (the figures are per step).
  for (const DeviceWork& w : activity.work()) {
    if (w.kind != WorkKind::kKernel || model.steps().count(w.step) == 0) {
      continue;
    }
    SatInc(&c.total_ns, w.duration_ns);
    const std::string_view kernel = activity.String(w.name);
    const std::string_view op = activity.String(w.op);
    if (!ConvertsLayout(kernel) && !ConvertsLayout(op)) continue;
    SatInc(&c.ns, w.duration_ns);
    ++c.launches;
    SatInc(&c.by_op[LaunchingOp(model, op)], w.duration_ns);
    SatInc(&c.by_kernel[std::string(kernel)], w.duration_ns);
    c.layout_optimizer |=
        absl::AsciiStrToLower(std::string(op)).find("layoutoptimizer") !=
        std::string::npos;
  }
  return c;
}

// From step stats (no kernel records): the accelerator time of the nodes
// whose names say they convert.
Conversions FromNodes(const Model& model) {
  Conversions c;
  for (const auto& node : model.nodes()) {
    int64_t micros = 0, runs = 0;
    for (const StepExec& e : node->execs) {
      SatInc(&micros, e.accelerator_micros);
      runs += e.accelerator_micros > 0 ? 1 : 0;
    }
    SatInc(&c.total_ns, SatMul(micros, 1000));
    if (micros == 0 || !ConvertsLayout(node->name)) continue;
    SatInc(&c.ns, SatMul(micros, 1000));
    c.launches += runs;
    SatInc(&c.by_op[node->name], SatMul(micros, 1000));
    c.layout_optimizer = true;
  }
  return c;
}

// The `top` largest entries of `m` as "  NAME: TIME per step (SHARE)".
std::vector<std::string> Largest(const std::map<std::string, int64_t>& m,
                                 int64_t top, double steps, int64_t all) {
  std::vector<std::pair<std::string, int64_t>> v(m.begin(), m.end());
  std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) {
    return a.second > b.second;
  });
  std::vector<std::string> lines;
  for (size_t i = 0; i < v.size() && i < static_cast<size_t>(top); ++i) {
    lines.push_back(absl::StrFormat(
        "  %s: %s per step (%s)", v[i].first,
        FormatNanos(
            static_cast<int64_t>(static_cast<double>(v[i].second) / steps)),
        Pct(static_cast<double>(v[i].second), static_cast<double>(all))));
  }
  return lines;
}

// What to try, for the framework that recorded the run.
std::string Fix(const Model& model, const Conversions& c) {
  if (model.source() == ProfileSource::kPyTorch) {
    return "Try: keep the model and its inputs in channels_last "
           "(model.to(memory_format=torch.channels_last), and the same for "
           "each input batch), so that cuDNN's NHWC kernels read them as "
           "they are.";
  }
  if (c.layout_optimizer) {
    return "TensorFlow's layout optimizer transposes between the model's "
           "data_format and the one the GPU kernels want. Try: build the "
           "model in the kernels' layout (NHWC with float16/bfloat16 Tensor "
           "Cores), or compile it with XLA (jit_compile=True), which picks "
           "layouts once for the whole program.";
  }
  return "Try: keep one layout end to end (the one the convolution kernels "
         "use), so that no tensor is converted on the way.";
}

class LayoutConversionChecker : public Checker {
 public:
  std::string name() const override { return "LayoutConversionChecker"; }
  bool by_default(ProfileSource source) const override {
    return source != ProfileSource::kTensorFlow;
  }
  std::string help() const override {
    return "Accelerator time spent converting tensors between NCHW and NHWC "
           "(cuDNN's conversion kernels, TensorFlow's layout-optimizer "
           "transposes), as a share of kernel time, and the ops that "
           "launched it.";
  }
  std::string needs() const override {
    return "a trace's kernels, or RunMetadata step stats with accelerator "
           "time";
  }
  std::vector<CheckerOption> options() const override {
    return {{"threshold", "0.05", 0, 1, false,
             "conversions taking at least this share of kernel time are a "
             "problem"},
            {"top", "3", 1, 1000, true, "launching ops and kernels listed"}};
  }

  std::vector<std::string> Run(const CheckerContext& ctx) const override {
    if (!NeedSteps(ctx, name())) return {};
    const Model& model = ctx.model();
    const bool kernels = !model.activity().work().empty();
    const Conversions c = kernels ? FromKernels(model) : FromNodes(model);
    if (c.total_ns == 0) {
      ctx.Note(absl::StrCat(name(), ": no accelerator time in the profile"));
      return {};
    }
    const double steps =
        static_cast<double>(std::max<size_t>(model.steps().size(), 1));
    const auto per_step = [steps](int64_t ns) {
      return FormatNanos(static_cast<int64_t>(static_cast<double>(ns) / steps));
    };
    const double share =
        static_cast<double>(c.ns) / static_cast<double>(c.total_ns);
    const bool problem = c.ns > 0 && share >= ctx.Option("threshold");
    if (c.ns == 0) {
      return {absl::StrCat("layout conversions (NCHW <-> NHWC): none in ",
                           per_step(c.total_ns), " of kernel time per step")};
    }
    std::vector<std::string> reports = {absl::StrFormat(
        "layout conversions (NCHW <-> NHWC): %s per step (%d %s a step), %s "
        "of the kernel time (%s per step)%s",
        per_step(c.ns),
        static_cast<int64_t>(static_cast<double>(c.launches) / steps + 0.5),
        kernels ? "kernels" : "ops",
        Pct(static_cast<double>(c.ns), static_cast<double>(c.total_ns)),
        per_step(c.total_ns), problem ? "" : ", below the threshold")};
    const int64_t top = ctx.IntOption("top");
    std::vector<std::string> lines = {"launched by:"};
    for (std::string& l : Largest(c.by_op, top, steps, c.ns)) {
      lines.push_back(std::move(l));
    }
    reports.push_back(absl::StrJoin(lines, "\n"));
    // (A TF timeline names its kernels after their ops: one list is enough.)
    if (!c.by_kernel.empty() && c.by_kernel != c.by_op) {
      lines = {"conversion kernels:"};
      for (std::string& l : Largest(c.by_kernel, top, steps, c.ns)) {
        lines.push_back(std::move(l));
      }
      reports.push_back(absl::StrJoin(lines, "\n"));
    }
    if (problem) {
      reports.push_back(absl::StrCat(
          "Converting tensors between NCHW and NHWC takes ",
          Pct(static_cast<double>(c.ns), static_cast<double>(c.total_ns)),
          " of the kernel time. ", Fix(model, c)));
    }
    return reports;
  }
};

}  // namespace

std::unique_ptr<Checker> NewLayoutConversionChecker() {
  return std::make_unique<LayoutConversionChecker>();
}

}  // namespace tfprof
