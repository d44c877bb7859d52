#include "profiler/importers/kineto/kineto_collectives.h"

#include <optional>
#include <string>
#include <string_view>

#include "profiler/base/collectives.h"

namespace tfprof {
namespace trace_internal {

void KinetoCollectiveTags::Keep(int32_t index, absl::string_view name,
                                int64_t start_ns, const EventFields& f) {
  std::optional<int64_t> seq = f.seq.Int();
  if (!seq.has_value()) seq = f.seq_num.Int();
  const std::optional<std::string> group = f.process_group.IdText();
  if (!seq.has_value() && !group.has_value()) return;
  if (ClassifyCollective(name).kind == CollectiveKind::kNone) return;
  Tag t;
  t.group = activity_->Intern(group.value_or(""));
  t.seq = seq.value_or(-1);
  by_event_[index] = t;
  Add(name, start_ns, t);
}

void KinetoCollectiveTags::Inherit(
    int32_t index, absl::string_view name, int64_t start_ns, int32_t launcher,
    const std::function<int32_t(int32_t)>& parent) {
  if (by_event_.empty() || by_event_.contains(index)) return;
  if (ClassifyCollective(name).kind != CollectiveKind::kDeviceKernel) return;
  for (int32_t e = launcher; e >= 0; e = parent(e)) {
    auto it = by_event_.find(e);
    if (it == by_event_.end()) continue;
    Add(name, start_ns, it->second);
    ++inherited_;
    return;
  }
}

void KinetoCollectiveTags::Add(absl::string_view name, int64_t start_ns,
                               Tag tag) {
  CollectiveTag t;
  t.name = activity_->Intern(std::string_view(name.data(), name.size()));
  t.start_ns = start_ns;
  t.group = tag.group;
  t.seq = tag.seq;
  activity_->AddCollectiveTag(t);
}

}  // namespace trace_internal
}  // namespace tfprof
