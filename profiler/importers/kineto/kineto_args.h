// What the Kineto importer reads besides the events' common fields: the
// trace's header (how it was recorded, the GPUs it ran on) and an op's
// recorded arguments (shapes, types, concrete inputs) for its float ops.
// Not a public API.
#ifndef TFPROF_PROFILER_IMPORTERS_KINETO_KINETO_ARGS_H_
#define TFPROF_PROFILER_IMPORTERS_KINETO_KINETO_ARGS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "profiler/importers/common/json_reader.h"
#include "profiler/importers/kineto/torch_flops.h"
#include "profiler/model/activity.h"

namespace tfprof {
namespace trace_internal {

// An op's recorded arguments ("Input Dims", "Input type", "Concrete
// Inputs"), read only for ops with a FLOP formula; the buffers are reused
// from event to event.
struct ShapeArgs {
  JsonIntLists dims;
  JsonStrings types, values;
  bool has_dims = false, has_types = false, has_values = false;

  void Clear();
  // Reads an args field if it is one of the three (*handled) and the op,
  // named `name` where the name came before the args, has a formula;
  // false on a JSON error.
  bool Read(JsonReader* reader, absl::string_view key, JsonReader::Value& value,
            std::optional<absl::string_view> name, bool* handled);
  // As TorchFlops takes them.
  TorchOpArgs Args() const;
};

// What a trace's header says.
struct KinetoHeader {
  Recording recording;  // with_flops, record_shapes
  std::vector<std::pair<int64_t, DeviceInfo>> devices;  // deviceProperties
  // distributedInfo's rank, world size and backend; baseTimeNanoseconds.
  RankInfo rank;
};

// A [memory] event's allocator: "cpu", "GPU_<id>", else
// "device_type_<type>_<id>" (c10::DeviceType: 0 = CPU, 1 = CUDA).
std::string AllocatorName(int64_t device_type, int64_t device_id);

// Reads a field of the root object before "traceEvents" into *header
// (others are skipped); false on a JSON error.
bool ReadHeaderField(JsonReader* reader, absl::string_view key,
                     JsonReader::Value& value, KinetoHeader* header);

}  // namespace trace_internal
}  // namespace tfprof

#endif  // TFPROF_PROFILER_IMPORTERS_KINETO_KINETO_ARGS_H_
