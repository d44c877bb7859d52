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

// The extended rule's nesting, over a trace's records: parent[i] is the
// record enclosing record i (-1: none), flops[i] its float ops (null for an
// op with no formula). Returns, per record, whether a record inside it
// counts its computation instead: both are matrix products, convolutions
// or attention (one computation recorded by nested records: autocast's
// outer conv2d around the inner one, conv2d over cudnn_convolution, linear
// over addmm), or the enclosing one is element-wise. An element-wise record
// inside a product does not stop the product from counting.
std::vector<bool> NestedCounted(const std::vector<int32_t>& parent,
                                const std::vector<const TorchOpFlops*>& flops);

// How a trace's records were counted, for notes.
struct FlopTally {
  int64_t records = 0;    // records of ops with a formula
  int64_t nested = 0;     // ... whose computation an inner record counts
  int64_t none = 0;       // ... whose shapes give no count
  int64_t attention = 0;  // attention records counted
  int64_t causal = 0;     // ... with a causal mask

  void Add(const TorchOpFlops& f, bool nested_counted);
  std::vector<std::string> Notes() const;
};

}  // namespace trace_internal
}  // namespace tfprof

#endif  // TFPROF_PROFILER_IMPORTERS_KINETO_TORCH_FLOPS_H_
