// Renders a checkpoint tensor the way tfprof shows -select tensor_value.
#ifndef TFPROF_PROFILER_LOAD_TENSOR_VALUE_H_
#define TFPROF_PROFILER_LOAD_TENSOR_VALUE_H_

#include <string>

#include "profiler/base/protos.h"
#include "profiler/load/checkpoint.h"

namespace tfprof {

struct TensorDisplay {
  bool supported = false;  // float, double, int32, int64 and string only
  tfpb::TFProfTensorProto proto;
  std::string text;  // nested "[...],\n" rows, cut at 10000 characters
};

TensorDisplay FormatTensor(const CheckpointTensor& tensor);

}  // namespace tfprof

#endif  // TFPROF_PROFILER_LOAD_TENSOR_VALUE_H_
