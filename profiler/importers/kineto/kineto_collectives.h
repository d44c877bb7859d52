// The process group and sequence number of a Kineto trace's collectives:
// read from the events' args and handed to the activity, where ranks are
// aligned by them. PyTorch tags the c10d / record_param_comms range that
// enqueues a collective; its NCCL kernel takes that tag when it has none of
// its own. Not a public API.
#ifndef TFPROF_PROFILER_IMPORTERS_KINETO_KINETO_COLLECTIVES_H_
#define TFPROF_PROFILER_IMPORTERS_KINETO_KINETO_COLLECTIVES_H_

#include <cstdint>
#include <functional>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "profiler/importers/kineto/kineto_events.h"
#include "profiler/model/activity.h"

namespace tfprof {
namespace trace_internal {

class KinetoCollectiveTags {
 public:
  explicit KinetoCollectiveTags(Activity* activity) : activity_(activity) {}

  // Event `index` (a CPU range or a GPU kernel) named `name`, starting at
  // `start_ns`, whose args were read into `f`: tagged when it is a
  // collective whose args have a sequence number or a process group.
  void Keep(int32_t index, absl::string_view name, int64_t start_ns,
            const EventFields& f);

  // Kernel `index`, a collective with no tag of its own, takes the tag of
  // the first tagged event among `launcher` and its enclosing events
  // (`parent(event)`, -1 at the top).
  void Inherit(int32_t index, absl::string_view name, int64_t start_ns,
               int32_t launcher, const std::function<int32_t(int32_t)>& parent);

  int64_t inherited() const { return inherited_; }

 private:
  struct Tag {
    uint32_t group = 0;
    int64_t seq = -1;
  };
  void Add(absl::string_view name, int64_t start_ns, Tag tag);

  Activity* activity_;
  absl::flat_hash_map<int32_t, Tag> by_event_;
  int64_t inherited_ = 0;
};

}  // namespace trace_internal
}  // namespace tfprof

#endif  // TFPROF_PROFILER_IMPORTERS_KINETO_KINETO_COLLECTIVES_H_
