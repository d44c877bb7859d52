// TF2 / JAX profiler XSpaces (*.xplane.pb): host ops and accelerator
// kernels, linked, with steps from step groups. See g3doc/traces.md.
#ifndef TFPROF_PROFILER_IMPORTERS_XSPACE_XSPACE_H_
#define TFPROF_PROFILER_IMPORTERS_XSPACE_XSPACE_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "profiler/importers/common/trace_builder.h"

namespace tfprof {
namespace trace_internal {

// Imports one XSpace (its serialized bytes); `file` is used in notes and
// errors; `file_index` is the step of a file without step groups.
absl::Status ImportXSpace(absl::string_view contents, const std::string& file,
                          int64_t file_index, TraceBuilder* builder);

}  // namespace trace_internal
}  // namespace tfprof

#endif  // TFPROF_PROFILER_IMPORTERS_XSPACE_XSPACE_H_
