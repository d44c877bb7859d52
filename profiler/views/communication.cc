#include "profiler/views/communication.h"

#include <algorithm>
#include <tuple>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "profiler/base/saturate.h"

namespace tfprof {

const CollectiveName& CollectiveNames::Of(uint32_t name) {
  auto it = cache_.find(name);
  if (it == cache_.end()) {
    it = cache_.emplace(name, ClassifyCollective(activity_.String(name))).first;
  }
  return it->second;
}

namespace {

// The tag of the event (name, start), if the importer left one.
const CollectiveTag* FindTag(const std::vector<CollectiveTag>& tags,
                             uint32_t name, int64_t start_ns) {
  auto it = std::lower_bound(
      tags.begin(), tags.end(), std::make_pair(name, start_ns),
      [](const CollectiveTag& t, const auto& key) {
        return std::tie(t.name, t.start_ns) < std::tie(key.first, key.second);
      });
  if (it == tags.end() || it->name != name || it->start_ns != start_ns) {
    return nullptr;
  }
  return &*it;
}

// The collective a kernel's launching op names ("nccl:all_to_all", or
// "nccl.all_to_all" in a profile saved before trace names kept their ':'),
// "" when it names none: NCCL runs several
// collectives (all_to_all, all_gather) with one kernel (SendRecv).
std::string LauncherOp(const Activity& a, uint32_t launcher) {
  if (launcher == 0) return "";
  absl::string_view op = a.String(launcher);
  op = op.substr(op.rfind('/') + 1);
  if (!absl::StartsWithIgnoreCase(op, "nccl") || op.size() < 6 ||
      (op[4] != ':' && op[4] != '.')) {
    return "";
  }
  const CollectiveName c =
      ClassifyCollective(absl::StrCat(op.substr(0, 4), ":", op.substr(5)));
  return c.kind == CollectiveKind::kEnqueue &&
                 c.op.find(':') == std::string::npos
             ? c.op
             : "";
}

void Add(const Activity& a, CollectiveNames* names, bool on_host, uint32_t name,
         int64_t start, int64_t duration, int64_t step,
         std::vector<CollectiveEvent>* out, uint32_t launcher = 0) {
  const CollectiveName& c = names->Of(name);
  if (c.kind == CollectiveKind::kNone) return;
  // A host record named as a device kernel is its launch.
  const CollectiveKind kind = on_host && c.kind == CollectiveKind::kDeviceKernel
                                  ? CollectiveKind::kEnqueue
                                  : c.kind;
  CollectiveEvent e;
  e.start_ns = start;
  e.end_ns = SatAdd(start, duration);
  e.step = step;
  e.name = name;
  e.op = c.op;
  if (kind == CollectiveKind::kDeviceKernel) {
    std::string launched = LauncherOp(a, launcher);
    if (!launched.empty()) e.op = std::move(launched);
  }
  e.kind = kind;
  if (const CollectiveTag* t = FindTag(a.collective_tags(), name, start)) {
    e.group = t->group;
    e.seq = t->seq;
  }
  out->push_back(std::move(e));
}

}  // namespace

std::vector<CollectiveEvent> FindCollectives(const Activity& activity) {
  CollectiveNames names(activity);
  std::vector<CollectiveEvent> out;
  for (const DeviceWork& w : activity.work()) {
    if (w.kind != WorkKind::kKernel) continue;
    Add(activity, &names, false, w.name, w.start_ns, w.duration_ns, w.step,
        &out, w.op);
  }
  for (const HostSpan& h : activity.host()) {
    Add(activity, &names, true, h.name, h.start_ns, h.duration_ns, h.step,
        &out);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const CollectiveEvent& a, const CollectiveEvent& b) {
                     return a.start_ns < b.start_ns;
                   });
  return out;
}

}  // namespace tfprof
