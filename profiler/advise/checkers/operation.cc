// OperationChecker: Known slow choices: BatchNorm without FusedBatchNorm,
// NHWC on GPU.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "profiler/advise/advisor.h"
#include "profiler/advise/checkers/checker_util.h"
#include "profiler/advise/checkers/checkers.h"
#include "profiler/base/device.h"

namespace tfprof {
namespace {

std::vector<std::string> CheckOperations(const Model& model) {
  bool batch_norm = false, fused_batch_norm = false, nhwc_on_gpu = false;
  for (const GraphNode* n : model.NodesByName()) {
    if (n->name.find("BatchNorm") != std::string::npos) batch_norm = true;
    if (n->op_types.count("FusedBatchNorm")) fused_batch_norm = true;
    auto attr = n->FindAttr("data_format");
    if (attr.has_value() && attr->s() == "NHWC" &&
        IsPlacedOnAccelerator(n->canonical_device())) {
      nhwc_on_gpu = true;
    }
  }
  std::vector<std::string> reports;
  if (batch_norm && !fused_batch_norm) {
    reports.push_back("Maybe use faster FusedBatchNorm instead of BatchNorm");
  }
  if (nhwc_on_gpu) {
    reports.push_back(
        "Found operation using NHWC data_format on GPU. Maybe NCHW is faster.");
  }
  return reports;
}

class OperationChecker : public Checker {
 public:
  std::string name() const override { return "OperationChecker"; }
  std::string help() const override {
    return "Known slow choices: BatchNorm without FusedBatchNorm, NHWC on "
           "GPU.";
  }
  std::string needs() const override {
    return "a TensorFlow graph (not a PyTorch trace or an XSpace)";
  }
  bool by_default(ProfileSource source) const override {
    return source == ProfileSource::kTensorFlow;
  }
  std::vector<std::string> Run(const CheckerContext& ctx) const override {
    // Its advice names TensorFlow ops and attributes: a PyTorch op such as
    // CudnnBatchNormBackward is no unfused BatchNorm.
    const ProfileSource source = ctx.model().source();
    if (source != ProfileSource::kTensorFlow) {
      ctx.Note(absl::StrCat(
          name(),
          " skipped: its advice is for TensorFlow graphs, and this "
          "profile is ",
          source == ProfileSource::kPyTorch ? "a PyTorch (Kineto) trace"
                                            : "an XSpace (TF2/JAX) capture"));
      return {};
    }
    return CheckOperations(ctx.model());
  }
};

}  // namespace

std::unique_ptr<Checker> NewOperationChecker() {
  return std::make_unique<OperationChecker>();
}

}  // namespace tfprof
