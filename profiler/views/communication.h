// The collectives a trace's activity record holds: NCCL/RCCL device kernels
// and gloo's host transfers (whose ends are when the ranks meet), and the
// ranges that only enqueue one (c10d::*, nccl:*), each with its process
// group and sequence number where the trace tagged them. The steps table
// and the ranks analysis read communication from here.
#ifndef TFPROF_PROFILER_VIEWS_COMMUNICATION_H_
#define TFPROF_PROFILER_VIEWS_COMMUNICATION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "profiler/base/collectives.h"
#include "profiler/model/activity.h"

namespace tfprof {

// What each name of an activity record is as a collective (cached: a record
// has few distinct names and many events).
class CollectiveNames {
 public:
  explicit CollectiveNames(const Activity& activity) : activity_(activity) {}
  const CollectiveName& Of(uint32_t name);
  CollectiveKind KindOf(uint32_t name) { return Of(name).kind; }

 private:
  const Activity& activity_;
  absl::flat_hash_map<uint32_t, CollectiveName> cache_;
};

struct CollectiveEvent {
  int64_t start_ns = 0;  // on the activity's clock
  int64_t end_ns = 0;
  int64_t step = 0;    // as the importer assigned it
  uint32_t name = 0;   // Activity::String() id
  std::string op;      // normalized ("all_reduce", ...)
  uint32_t group = 0;  // process group ("" id when not tagged)
  int64_t seq = -1;    // -1 when not tagged
  CollectiveKind kind = CollectiveKind::kNone;
};

// Every collective of the record (enqueue ranges included), by start.
std::vector<CollectiveEvent> FindCollectives(const Activity& activity);

// Whether a collective of this kind ends when the ranks meet (device
// kernels, host transfers), so that its end can align clocks and its start
// is a rank's arrival.
inline bool EndsWhenRanksMeet(CollectiveKind kind) {
  return kind == CollectiveKind::kDeviceKernel ||
         kind == CollectiveKind::kHostTransfer;
}

}  // namespace tfprof

#endif  // TFPROF_PROFILER_VIEWS_COMMUNICATION_H_
