// The one place that tells communication from compute by an event's name:
// NCCL and RCCL device kernels (`ncclKernel_*`, `ncclDevKernel_*`,
// `rccl*`), gloo's host ranges (`gloo:all_reduce`, which do the transfer on
// the host), the ranges that only enqueue a collective (`c10d::allreduce_`,
// `nccl:all_reduce`, `record_param_comms`), and TF/XLA collective ops.
#ifndef TFPROF_PROFILER_BASE_COLLECTIVES_H_
#define TFPROF_PROFILER_BASE_COLLECTIVES_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace tfprof {

enum class CollectiveKind : uint8_t {
  kNone,
  // A device kernel that moves data between ranks (its end is when the
  // ranks meet).
  kDeviceKernel,
  // A host range that moves the data itself (gloo): its end is when the
  // ranks meet.
  kHostTransfer,
  // A host range that only hands a collective to a backend (c10d::*,
  // nccl:* annotations): it ends when the launch is queued, not when the
  // ranks meet.
  kEnqueue,
};

struct CollectiveName {
  CollectiveKind kind = CollectiveKind::kNone;
  // The operation, normalized ("all_reduce", "all_gather", "broadcast",
  // "reduce_scatter", "all_to_all", "send_recv", "reduce", "barrier"), or
  // the name as written when it is none of those.
  std::string op;
};

CollectiveName ClassifyCollective(absl::string_view event_name);

// Whether a device event is communication (an NCCL/RCCL kernel, a
// collective op), not compute.
inline bool IsCommunicationKernel(absl::string_view name) {
  return ClassifyCollective(name).kind == CollectiveKind::kDeviceKernel;
}

}  // namespace tfprof

#endif  // TFPROF_PROFILER_BASE_COLLECTIVES_H_
