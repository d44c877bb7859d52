// Reading an XSpace's names and stats: a GPU plane's device, TensorFlow
// op events ("<node>:<OpType>") and annotations, Python tracer events,
// stream ids, tf.data iterator stages. Not a public API.
#ifndef TFPROF_PROFILER_IMPORTERS_XSPACE_XSPACE_NAMES_H_
#define TFPROF_PROFILER_IMPORTERS_XSPACE_XSPACE_NAMES_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "profiler/importers/common/trace_builder.h"
#include "profiler/importers/xspace/xspace_reader.h"
#include "profiler/model/activity.h"

namespace tfprof {
namespace trace_internal {

// tf.data iterator stages: host events named "Iterator::Model::...", ops of
// type "Dataset" whose nodes name the stages as a scope path.
inline constexpr absl::string_view kIteratorPrefix = "Iterator::";
inline constexpr absl::string_view kDatasetType = "Dataset";

DeviceInfo DeviceInfoOf(const XPlane& plane);
bool IsIdentifier(absl::string_view s);
bool SplitTfOp(absl::string_view text, absl::string_view* name,
               absl::string_view* type);
std::string InnermostAnnotation(absl::string_view annotation);
Frame ParsePythonEvent(absl::string_view name);
int64_t GpuIndex(absl::string_view plane_name);
std::string StreamId(const XLine& line);
std::string DatasetNodeName(absl::string_view event_name);
// What a GPU stream event is: a copy ("Memcpy..." or with memcpy details),
// a set ("Memset..."), else a kernel.
WorkKind StreamWorkKind(absl::string_view name, bool memcpy_details);

}  // namespace trace_internal
}  // namespace tfprof

#endif  // TFPROF_PROFILER_IMPORTERS_XSPACE_XSPACE_NAMES_H_
