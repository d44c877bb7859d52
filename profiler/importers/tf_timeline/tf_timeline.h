// TensorFlow timelines (tensorflow.python.client.timeline, ProfilerHook):
// Op events on "<device> Compute" processes become node executions, one step
// per file. See g3doc/traces.md.
#ifndef TFPROF_PROFILER_IMPORTERS_TF_TIMELINE_TF_TIMELINE_H_
#define TFPROF_PROFILER_IMPORTERS_TF_TIMELINE_TF_TIMELINE_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "profiler/importers/common/json_reader.h"
#include "profiler/importers/common/trace_builder.h"

namespace tfprof {
namespace trace_internal {

// Imports one TensorFlow timeline as step `file_index`. `reader` has been
// scanned (ScanJsonTrace, whose process names `scan` carries); `file` is
// used in notes and errors. Closes the reader as soon as it no longer needs
// the JSON.
absl::Status ImportTfTimeline(JsonReader* reader, const JsonTraceScan& scan,
                              const std::string& file, int64_t file_index,
                              TraceBuilder* builder);

}  // namespace trace_internal
}  // namespace tfprof

#endif  // TFPROF_PROFILER_IMPORTERS_TF_TIMELINE_TF_TIMELINE_H_
