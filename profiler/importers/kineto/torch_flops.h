// Float operations of PyTorch operators from the arguments a PyTorch
// profiler trace records with record_shapes ("Input Dims", "Input type",
// "Concrete Inputs"), by two rules:
//  * PyTorch's own with_flops rule: aten::conv2d, mm, addmm, bmm, baddbmm,
//    mul and add, with PyTorch's formulas and argument checks, so that the
//    counts equal what key_averages() reports;
//  * the extended rule: those, plus the ops PyTorch leaves out, with the
//    formulas of torch.utils.flop_counter (the forward and backward of
//    scaled-dot-product attention in every kernel variant, convolution
//    backward, every convolution entry point, linear and matmul). Attention
//    counts grouped-query heads (the query's heads) and different query and
//    key lengths; causal masking is not discounted.
// Not a public API.
#ifndef TFPROF_PROFILER_IMPORTERS_KINETO_TORCH_FLOPS_H_
#define TFPROF_PROFILER_IMPORTERS_KINETO_TORCH_FLOPS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "profiler/model/device_peaks.h"

namespace tfprof {
namespace trace_internal {

// One operator record's arguments, by input position.
struct TorchOpArgs {
  std::vector<std::vector<int64_t>> dims;  // "Input Dims"
  std::vector<std::string> types;          // "Input type"
  std::vector<std::string> values;         // "Concrete Inputs"
};

// What an op's computation is, for telling nested records of one
// computation apart from different computations.
enum class OpFamily : uint8_t {
  kNone,
  kElementwise,  // mul, add
  kMatmul,       // mm, addmm, bmm, baddbmm, linear, matmul
  kConv,         // forward convolutions
  kConvBackward,
  kAttention,  // forward and backward
};

struct TorchOpFlops {
  OpFamily family = OpFamily::kNone;
  // PyTorch's with_flops count; -1 when the op is not in its set.
  int64_t pytorch = -1;
  // The extended rule's count; -1 when the op has no formula or its
  // arguments do not give one (missing shapes, variable-length batches).
  int64_t extended = -1;
  // Bytes of the tensors the computation reads and writes (inputs from the
  // record, outputs from the formula's shapes); 0 when not known.
  int64_t bytes = 0;
  Dtype dtype = Dtype::kUnknown;  // of the computation (its first operand)
  bool causal = false;            // attention recorded with a causal mask
};

// Whether an op name has a formula under either rule (its arguments are
// worth reading).
bool HasTorchFlops(absl::string_view name);

// The float operations of one record of op `name` (e.g. "aten::mm").
TorchOpFlops TorchFlops(absl::string_view name, const TorchOpArgs& args);

}  // namespace trace_internal
}  // namespace tfprof

#endif  // TFPROF_PROFILER_IMPORTERS_KINETO_TORCH_FLOPS_H_
