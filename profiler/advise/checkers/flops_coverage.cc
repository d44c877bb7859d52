// FlopsCoverageChecker: Arithmetic op types with substantial time but no
// float_ops, so FLOP totals are understated.
#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "profiler/advise/advisor.h"
#include "profiler/advise/checkers/checker_util.h"
#include "profiler/advise/checkers/checkers.h"
#include "profiler/base/units.h"

namespace tfprof {
namespace {

// Op types that do arithmetic, so they should have FLOP counts.
bool ComputeOp(const std::string& op) {
  static const std::set<std::string>* const kOps =
      new std::set<std::string>{"MatMul",
                                "BatchMatMul",
                                "BatchMatMulV2",
                                "BatchMatMulV3",
                                "Conv2D",
                                "Conv2DBackpropInput",
                                "Conv2DBackpropFilter",
                                "Conv3D",
                                "Conv3DBackpropInputV2",
                                "Conv3DBackpropFilterV2",
                                "DepthwiseConv2dNative",
                                "DepthwiseConv2dNativeBackpropInput",
                                "DepthwiseConv2dNativeBackpropFilter",
                                "BiasAdd",
                                "BiasAddGrad",
                                "Add",
                                "AddV2",
                                "AddN",
                                "Sub",
                                "Mul",
                                "RealDiv",
                                "Div",
                                "Maximum",
                                "Minimum",
                                "Pow",
                                "Square",
                                "Sqrt",
                                "Rsqrt",
                                "RsqrtGrad",
                                "Reciprocal",
                                "Exp",
                                "Log",
                                "Neg",
                                "Tanh",
                                "TanhGrad",
                                "Sigmoid",
                                "SigmoidGrad",
                                "Relu",
                                "ReluGrad",
                                "Relu6",
                                "Elu",
                                "Softmax",
                                "LogSoftmax",
                                "SoftmaxCrossEntropyWithLogits",
                                "SparseSoftmaxCrossEntropyWithLogits",
                                "Sum",
                                "Mean",
                                "Prod",
                                "Max",
                                "Min",
                                "ArgMax",
                                "ArgMin",
                                "AvgPool",
                                "AvgPoolGrad",
                                "MaxPool",
                                "MaxPoolGrad",
                                "FusedBatchNorm",
                                "FusedBatchNormV2",
                                "FusedBatchNormV3",
                                "FusedBatchNormGrad",
                                "FusedBatchNormGradV3",
                                "L2Loss",
                                "SquaredDifference",
                                "Einsum",
                                "Cumsum",
                                "Dilation2D",
                                "LRN"};
  if (kOps->count(op)) return true;
  // PyTorch's operators, as traces name them.
  static const char* const kTorch[] = {
      "aten::mm",     "aten::addmm", "aten::bmm",        "aten::matmul",
      "aten::linear", "aten::conv",  "aten::cudnn_conv", "aten::convolution"};
  for (const char* t : kTorch) {
    if (absl::StartsWith(op, t)) return true;
  }
  return false;
}

// Why no node has float ops, and what to record next time. PyTorch writes
// no FLOP counts into its traces (with_flops counts them in memory for
// key_averages): tfprof computes them from the recorded input shapes, so
// what matters is record_shapes, never with_flops.
std::string NoFlops(const Model& model) {
  const std::string prefix = "no node has float_ops: FLOP totals are 0. ";
  switch (model.source()) {
    case ProfileSource::kPyTorch: {
      const Recording& r = model.activity().recording();
      if (r.known && r.record_shapes) {
        return prefix +
               "The trace has shapes, but none of its ops has a FLOP formula "
               "(matrix products, convolutions, attention, mul, add).";
      }
      return prefix +
             "tfprof computes PyTorch's float ops from the ops' recorded "
             "input shapes: profile with record_shapes=True" +
             (r.known && r.with_flops
                  ? " (this trace was recorded with with_flops=True, which "
                    "writes no counts into the trace)."
                  : ".");
    }
    case ProfileSource::kXSpace:
      return prefix +
             "XLA programs carry them in their HLO (dot and convolution "
             "shapes); TensorFlow profiles: an op log.";
    case ProfileSource::kTensorFlow:
      break;
  }
  return prefix +
         "TensorFlow: the op log (--op_log_path) carries them, written with "
         "tf.profiler's float_operation statistics from a graph with fully "
         "defined shapes; PyTorch traces: record with record_shapes=True.";
}

class FlopsCoverageChecker : public Checker {
 public:
  std::string name() const override { return "FlopsCoverageChecker"; }
  std::string help() const override {
    return "Arithmetic op types with substantial time but no float_ops, so "
           "FLOP totals are understated.";
  }
  std::string needs() const override {
    return "step stats; float_ops from an op log or a trace's shapes";
  }
  std::vector<CheckerOption> options() const override {
    return {{"threshold", "0.01", 0, 1, false,
             "op types with at least this share of all op time are checked"},
            {"top", "5", 1, 1000, true, "op types listed"}};
  }

  std::vector<std::string> Run(const CheckerContext& ctx) const override {
    if (!NeedSteps(ctx, name())) return {};
    struct Type {
      int64_t micros = 0, nodes = 0, without = 0, without_micros = 0;
    };
    std::map<std::string, Type> types;
    int64_t total = 0;
    bool any_flops = false;
    for (const GraphNode* g : ctx.model().NodesByName()) {
      const NodeStats s = g->Stats(-1);
      SatInc(&total, s.exec_micros);
      if (g->float_ops > 0) any_flops = true;
      if (!ComputeOp(g->op)) continue;
      Type& t = types[g->op];
      SatInc(&t.micros, s.exec_micros);
      ++t.nodes;
      // A trace's node whose computation was counted on a nested record
      // (pytorch_float_ops recorded) is covered.
      if (g->float_ops == 0 && g->pytorch_float_ops < 0) {
        ++t.without;
        SatInc(&t.without_micros, s.exec_micros);
      }
    }
    std::vector<std::pair<std::string, Type>> missing;
    for (const auto& [op, t] : types) {
      if (t.without > 0 &&
          static_cast<double>(t.micros) >=
              ctx.Option("threshold") * static_cast<double>(total) &&
          t.without_micros > 0) {
        missing.emplace_back(op, t);
      }
    }
    std::stable_sort(missing.begin(), missing.end(),
                     [](const auto& a, const auto& b) {
                       return a.second.without_micros > b.second.without_micros;
                     });
    std::vector<std::string> reports;
    if (!any_flops) reports.push_back(NoFlops(ctx.model()));
    if (missing.empty()) {
      if (any_flops) {
        reports.push_back(absl::StrFormat(
            "every arithmetic op type with at least %.1f%% of the time has "
            "float_ops",
            100 * ctx.Option("threshold")));
      }
      return reports;
    }
    int64_t uncovered = 0;
    for (const auto& [op, t] : missing) SatInc(&uncovered, t.without_micros);
    std::vector<std::string> lines = {absl::StrFormat(
        "FLOP totals miss arithmetic ops taking %s of the op time (%s):",
        Pct(uncovered, total), FormatTime(uncovered))};
    for (size_t i = 0;
         i < missing.size() && i < static_cast<size_t>(ctx.IntOption("top"));
         ++i) {
      const auto& [op, t] = missing[i];
      lines.push_back(absl::StrFormat(
          "  %s: %d of %d nodes without float_ops, %s (%s)", op, t.without,
          t.nodes, FormatTime(t.without_micros), Pct(t.without_micros, total)));
    }
    reports.push_back(absl::StrJoin(lines, "\n"));
    if (any_flops && ctx.model().source() == ProfileSource::kPyTorch) {
      reports.push_back(
          "Their float ops come from no formula (tfprof counts matrix "
          "products, convolutions and their backward, attention, mul and "
          "add from the recorded shapes), or their shapes give none (older "
          "traces record no stride or padding).");
    } else if (any_flops) {
      reports.push_back(
          "Nodes without float_ops usually have shapes that were unknown when "
          "the op log was written (unknown batch size) or op types without a "
          "registered FLOP count: fix the shapes or register the statistics, "
          "then write the op log again.");
    }
    return reports;
  }
};

}  // namespace

std::unique_ptr<Checker> NewFlopsCoverageChecker() {
  return std::make_unique<FlopsCoverageChecker>();
}

}  // namespace tfprof
