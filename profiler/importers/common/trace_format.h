// The trace formats tfprof imports, and their names in messages.
#ifndef TFPROF_PROFILER_IMPORTERS_COMMON_TRACE_FORMAT_H_
#define TFPROF_PROFILER_IMPORTERS_COMMON_TRACE_FORMAT_H_

#include "profiler/model/model.h"

namespace tfprof {

enum class TraceFormat {
  kTfTimeline,  // TensorFlow client timeline / ProfilerHook JSON
  kKineto,      // PyTorch profiler (Kineto) JSON
  kXSpace,      // TF2 / JAX profiler XSpace protobuf
};

// "tf_timeline", "kineto" or "xspace".
const char* TraceFormatName(TraceFormat format);

// The program that writes traces of this format.
ProfileSource SourceOf(TraceFormat format);

}  // namespace tfprof

#endif  // TFPROF_PROFILER_IMPORTERS_COMMON_TRACE_FORMAT_H_
