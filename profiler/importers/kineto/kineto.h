// PyTorch profiler (Kineto) traces: ProfilerStep spans become steps, CPU ops
// nodes on the host device, GPU kernels and copies executions of the op that
// launched them. See g3doc/traces.md.
#ifndef TFPROF_PROFILER_IMPORTERS_KINETO_KINETO_H_
#define TFPROF_PROFILER_IMPORTERS_KINETO_KINETO_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "profiler/importers/common/json_reader.h"
#include "profiler/importers/common/trace_builder.h"

namespace tfprof {
namespace trace_internal {

// Imports one Kineto trace. `reader` has been scanned (ScanJsonTrace);
// `file` is used in notes and errors; `file_index` is the step of a file
// without ProfilerStep spans. Closes the reader as soon as it no longer
// needs the JSON.
absl::Status ImportKineto(JsonReader* reader, const std::string& file,
                          int64_t file_index, TraceBuilder* builder);

}  // namespace trace_internal
}  // namespace tfprof

#endif  // TFPROF_PROFILER_IMPORTERS_KINETO_KINETO_H_
