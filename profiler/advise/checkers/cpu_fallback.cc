// CpuFallbackChecker: Ops that ran on the CPU in a run that has an
// accelerator, ranked by time (placement problems).
#include <algorithm>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "profiler/advise/advisor.h"
#include "profiler/advise/checkers/checker_util.h"
#include "profiler/advise/checkers/checkers.h"
#include "profiler/base/device.h"
#include "profiler/base/units.h"

namespace tfprof {
namespace {

// Ops that live on the host by design: runtime plumbing, constants,
// variables and the input pipeline.
bool HostByDesign(const std::string& op) {
  static const std::set<std::string>* const kOps =
      new std::set<std::string>{"_Send",
                                "_Recv",
                                "_HostSend",
                                "_HostRecv",
                                "_Arg",
                                "_Retval",
                                "_SOURCE",
                                "_SINK",
                                "NoOp",
                                "Const",
                                "Placeholder",
                                "PlaceholderWithDefault",
                                "VariableV2",
                                "Variable",
                                "VarHandleOp",
                                "VarIsInitializedOp",
                                "SaveV2",
                                "RestoreV2",
                                "MergeV2Checkpoints",
                                "ShardedFilename",
                                "StringJoin"};
  if (kOps->count(op) > 0 || absl::StrContains(op, "Dataset") ||
      absl::StrContains(op, "Iterator") || absl::StrContains(op, "Summary")) {
    return true;
  }
  // PyTorch traces: runtime calls, the step and data-loading ranges, the
  // optimizer's Python-level step.
  for (const char* prefix :
       {"cuda", "hip", "ProfilerStep", "enumerate(DataLoader)", "Optimizer."}) {
    if (absl::StartsWith(op, prefix)) return true;
  }
  return false;
}

// The names of the nodes that have accelerator time themselves or in a node
// below them in the name scopes (views of the model's node names).
absl::flat_hash_set<std::string_view> LaunchedAcceleratorWork(
    const Model& model) {
  absl::flat_hash_set<std::string_view> names;
  for (const auto& g : model.nodes()) {
    bool accel = false;
    for (const StepExec& e : g->execs) accel |= e.accelerator_micros > 0;
    if (!accel) continue;
    const std::string_view name = g->name;
    names.insert(name);
    for (size_t slash = name.rfind('/');
         slash != std::string_view::npos && slash > 0;
         slash = name.rfind('/', slash - 1)) {
      if (!names.insert(name.substr(0, slash)).second) break;
    }
  }
  return names;
}

class CpuFallbackChecker : public Checker {
 public:
  std::string name() const override { return "CpuFallbackChecker"; }
  std::string help() const override {
    return "Ops that ran on the CPU in a run that has an accelerator, ranked "
           "by time (placement problems).";
  }
  std::string needs() const override {
    return "step stats of a run with an accelerator";
  }
  std::vector<CheckerOption> options() const override {
    return {{"threshold", "0.05", 0, 1, false,
             "CPU ops taking at least this share of all op time are a "
             "problem"},
            {"top", "5", 1, 1000, true, "ops listed"}};
  }

  std::vector<std::string> Run(const CheckerContext& ctx) const override {
    if (!NeedSteps(ctx, name())) return {};
    const Model& model = ctx.model();
    bool accelerated = false;
    int64_t total = 0;
    struct Op {
      const GraphNode* node;
      int64_t micros;
    };
    std::vector<Op> on_cpu;
    // A host op that launched accelerator work, itself or through the ops
    // nested in it (PyTorch ops run on the host and launch kernels), is not
    // on the CPU in the sense that matters here.
    const absl::flat_hash_set<std::string_view> launched =
        LaunchedAcceleratorWork(model);
    for (const GraphNode* g : model.NodesByName()) {
      const NodeStats s = g->Stats(-1);
      SatInc(&total, s.exec_micros);
      if (IsPlacedOnAccelerator(g->canonical_device()) ||
          s.accelerator_exec_micros > 0) {
        accelerated = true;
      }
      if (s.exec_micros > 0 && IsPlacedOnCpu(g->canonical_device()) &&
          !IsPlacedOnAccelerator(g->canonical_device()) &&
          !HostByDesign(g->op) && !launched.contains(g->name)) {
        on_cpu.push_back(Op{g, s.exec_micros});
      }
    }
    if (!accelerated) {
      ctx.Note(absl::StrCat("no accelerator in this profile: ", name(),
                            " looks for CPU ops in accelerator runs"));
      return {};
    }
    // In PyTorch every op runs on the host and launches its kernels; where
    // its tensors live is not in the trace, so placement cannot be judged.
    for (const GraphNode* g : model.NodesByName()) {
      if (absl::StartsWith(g->op, "aten::")) {
        ctx.Note(absl::StrCat(
            name(),
            " judges TensorFlow placement; a PyTorch trace does not say "
            "which device an op's tensors were on"));
        return {};
      }
    }
    std::stable_sort(
        on_cpu.begin(), on_cpu.end(),
        [](const Op& a, const Op& b) { return a.micros > b.micros; });
    int64_t cpu = 0;
    for (const Op& o : on_cpu) SatInc(&cpu, o.micros);
    const double share =
        total > 0 ? static_cast<double>(cpu) / static_cast<double>(total) : 0;
    if (on_cpu.empty()) {
      return {
          "no op ran on the CPU in this accelerator run (besides "
          "host-side plumbing: sends, receives, constants, variables, "
          "input pipeline)"};
    }
    std::vector<std::string> lines = {absl::StrFormat(
        "%d ops ran on the CPU in a run with an accelerator: %s per step, %s "
        "of all op time%s",
        on_cpu.size(), FormatTime(cpu), Pct(cpu, total),
        share >= ctx.Option("threshold") ? "" : ", below the threshold")};
    for (size_t i = 0;
         i < on_cpu.size() && i < static_cast<size_t>(ctx.IntOption("top"));
         ++i) {
      const Op& o = on_cpu[i];
      lines.push_back(absl::StrFormat("  %s (%s) on %s: %s (%s)", o.node->name,
                                      o.node->op, o.node->canonical_device(),
                                      FormatTime(o.micros),
                                      Pct(o.micros, total)));
    }
    std::vector<std::string> reports = {absl::StrJoin(lines, "\n")};
    if (share >= ctx.Option("threshold")) {
      reports.push_back(
          "Check their placement: log_device_placement tells why an op stayed "
          "on the CPU (no GPU kernel for its dtype, e.g. int32 or string ops, "
          "an explicit tf.device, soft placement). Move them to the "
          "accelerator, or out of the step (preprocessing into the input "
          "pipeline).");
    }
    return reports;
  }
};

}  // namespace

std::unique_ptr<Checker> NewCpuFallbackChecker() {
  return std::make_unique<CpuFallbackChecker>();
}

}  // namespace tfprof
