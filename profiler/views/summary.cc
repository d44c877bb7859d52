#include "profiler/views/summary.h"

#include <algorithm>
#include <climits>
#include <deque>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "profiler/base/device.h"
#include "profiler/base/saturate.h"
#include "profiler/views/memory.h"

namespace tfprof {

namespace {

// Names compared with their runs of digits as numbers ("stream:7" before
// "stream:13").
bool NaturalLess(std::string_view a, std::string_view b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (absl::ascii_isdigit(a[i]) && absl::ascii_isdigit(b[j])) {
      size_t ei = i, ej = j;
      while (ei < a.size() && absl::ascii_isdigit(a[ei])) ++ei;
      while (ej < b.size() && absl::ascii_isdigit(b[ej])) ++ej;
      // Without leading zeros a longer run is a larger number.
      std::string_view x = a.substr(i, ei - i), y = b.substr(j, ej - j);
      while (x.size() > 1 && x[0] == '0') x.remove_prefix(1);
      while (y.size() > 1 && y[0] == '0') y.remove_prefix(1);
      if (x.size() != y.size()) return x.size() < y.size();
      if (x != y) return x < y;
      i = ei;
      j = ej;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

using Intervals = std::vector<std::pair<int64_t, int64_t>>;

// The devices of a model, found by name or by processor (the placement
// ".../device:gpu:0", its streams and "GPU_0_bfc" are one device).
class DeviceTable {
 public:
  // The device named `name` (a placement, or the owner of a lane), made
  // if new.
  DeviceSummary& Get(std::string_view name) {
    const std::string owner(LaneOwner(name));
    auto it = index_.find(owner);
    if (it != index_.end()) return devices_[it->second];
    const std::optional<Processor> p = ProcessorOfDevice(owner);
    if (p.has_value()) {
      auto same = by_processor_.find(*p);
      if (same != by_processor_.end()) return devices_[same->second];
      by_processor_[*p] = devices_.size();
    }
    index_[owner] = devices_.size();
    devices_.emplace_back().name = owner;
    return devices_.back();
  }
  // The device of a processor, or null when none has it.
  DeviceSummary* Find(const Processor& p) {
    auto it = by_processor_.find(p);
    return it == by_processor_.end() ? nullptr : &devices_[it->second];
  }
  // CPUs, then GPUs by number, then other devices by name.
  std::vector<DeviceSummary> Take() {
    std::vector<std::pair<std::optional<Processor>, DeviceSummary>> all;
    for (DeviceSummary& d : devices_) {
      all.emplace_back(ProcessorOfDevice(d.name), std::move(d));
    }
    std::stable_sort(all.begin(), all.end(), [](const auto& a, const auto& b) {
      if (a.first.has_value() != b.first.has_value()) {
        return a.first.has_value();
      }
      if (a.first.has_value() && !(*a.first == *b.first)) {
        return *a.first < *b.first;
      }
      return NaturalLess(a.second.name, b.second.name);
    });
    std::vector<DeviceSummary> out;
    for (auto& [p, d] : all) out.push_back(std::move(d));
    return out;
  }

 private:
  std::deque<DeviceSummary> devices_;
  std::map<std::string, size_t> index_;
  std::map<Processor, size_t> by_processor_;
};

// Busy time per step of each lane (stream or host thread) of `owner`, and,
// with `owner_busy`, of the owner: its lanes' union.
void AddLanes(std::map<std::string, Intervals>& lanes, int64_t steps,
              bool threads, bool owner_busy, DeviceSummary* owner) {
  Intervals all;
  for (auto& [name, v] : lanes) {
    all.insert(all.end(), v.begin(), v.end());
    owner->lanes.push_back(LaneSummary{name, UnionLength(&v) / steps, threads});
  }
  std::stable_sort(owner->lanes.begin(), owner->lanes.end(),
                   [](const LaneSummary& a, const LaneSummary& b) {
                     return NaturalLess(a.name, b.name);
                   });
  if (owner_busy) owner->busy_ns = UnionLength(&all) / steps;
}

// The device whose host thread `thread` is: a TensorFlow timeline's
// "<device> Compute" row belongs to that device, other threads to the host.
std::string ThreadOwner(const std::string& thread) {
  absl::string_view device = thread;
  if (absl::ConsumeSuffix(&device, " Compute") &&
      ProcessorOfDevice(std::string_view(device.data(), device.size()))) {
    return std::string(device);
  }
  return "";
}

// The most bytes each allocator had in use, by allocator.
std::map<std::string, int64_t> AllocatorPeakMap(const Model& model) {
  std::map<std::string, int64_t> peaks;
  for (const AllocatorPeak& p : ComputeMemoryPeaks(model)) {
    peaks[p.allocator] = p.peak_bytes;
  }
  return peaks;
}

std::vector<DeviceSummary> SummarizeDevices(
    const Model& model, int64_t steps,
    const std::map<std::string, int64_t>& allocator_peaks) {
  DeviceTable table;
  for (const auto& node : model.nodes()) {
    if (!node->canonical_device().empty()) {
      ++table.Get(node->canonical_device()).nodes;
    }
  }
  const Activity& a = model.activity();
  for (const std::string& d : a.devices()) table.Get(d);
  // GPU lanes by device, host threads on the host.
  std::map<std::string, std::map<std::string, Intervals>> streams;
  for (const DeviceWork& w : a.work()) {
    const std::string& stream = a.String(w.stream);
    streams[std::string(LaneOwner(stream))][stream].emplace_back(
        w.start_ns, SatAdd(w.start_ns, w.duration_ns));
  }
  for (auto& [owner, lanes] : streams) {
    AddLanes(lanes, steps, false, true, &table.Get(owner));
  }
  // Host threads by owner ("" for the host); a GPU's busy time stays its
  // streams'.
  std::map<std::string, std::map<std::string, Intervals>> threads;
  for (const HostSpan& h : a.host()) {
    const std::string& thread = a.String(h.thread);
    const std::string owner = ThreadOwner(thread);
    threads[owner][owner.empty() ? "host thread " + thread : thread]
        .emplace_back(h.start_ns, SatAdd(h.start_ns, h.duration_ns));
  }
  for (auto& [owner, lanes] : threads) {
    DeviceSummary* d =
        owner.empty() ? table.Find(Processor{false, 0}) : &table.Get(owner);
    if (d == nullptr) d = &table.Get("host");
    const std::optional<Processor> p = ProcessorOfDevice(d->name);
    AddLanes(lanes, steps, true, !(p.has_value() && p->gpu), d);
  }
  for (const auto& [allocator, peak] : allocator_peaks) {
    const std::optional<Processor> p = ProcessorOfAllocator(allocator);
    DeviceSummary* d = p.has_value() ? table.Find(*p) : nullptr;
    if (d != nullptr) d->allocators.emplace_back(allocator, peak);
  }
  std::vector<DeviceSummary> out = table.Take();
  for (DeviceSummary& d : out) {
    std::stable_sort(
        d.allocators.begin(), d.allocators.end(),
        [](const auto& x, const auto& y) { return x.second > y.second; });
  }
  return out;
}

}  // namespace

const DeviceSummary* ProfileSummary::FindDevice(std::string_view name) const {
  for (const DeviceSummary& d : devices) {
    if (d.name == name) return &d;
    for (const LaneSummary& l : d.lanes) {
      if (l.name == name) return &d;
    }
  }
  return nullptr;
}

int64_t ProfileSummary::LaneBusy(std::string_view lane) const {
  for (const DeviceSummary& d : devices) {
    for (const LaneSummary& l : d.lanes) {
      if (l.name == lane) return l.busy_ns;
    }
  }
  return -1;
}

ProfileSummary Summarize(const Model& model, const PeakOverride& peaks,
                         const SummaryParts& given) {
  ProfileSummary s;
  s.nodes = static_cast<int64_t>(model.size());
  s.steps = static_cast<int64_t>(model.steps().size());
  s.has_code_traces = model.has_code_traces();
  for (const auto& node : model.nodes()) {
    if (!node->execs.empty()) ++s.nodes_with_execs;
    ++s.op_types[node->op];
    const NodeStats st = node->Stats(-1);
    s.exec_micros += st.exec_micros;
    s.accelerator_micros += st.accelerator_exec_micros;
    s.cpu_micros += st.cpu_exec_micros;
    s.requested_bytes += st.requested_bytes;
    s.peak_bytes += st.peak_bytes;
    s.parameters += st.parameters;
    s.float_ops += st.float_ops;
  }
  s.ranks = model.ranks();
  for (int64_t* v : {&s.exec_micros, &s.accelerator_micros, &s.cpu_micros,
                     &s.requested_bytes, &s.peak_bytes, &s.float_ops}) {
    *v /= s.ranks;
  }
  std::optional<StepTable> own;
  if (given.steps == nullptr) own = ComputeSteps(model);
  const StepTable& steps = given.steps != nullptr ? *given.steps : *own;
  s.wall = StepWallStats(steps);
  s.wall_source = steps.wall_source;
  s.flops = ComputeRunFlops(model, steps, peaks);
  if (given.devices != nullptr) {
    s.devices = *given.devices;
    for (const DeviceSummary& d : s.devices) {
      for (const auto& [allocator, bytes] : d.allocators) {
        s.allocator_peak_bytes[allocator] = bytes;
      }
    }
  } else {
    s.allocator_peak_bytes = AllocatorPeakMap(model);
    s.devices = SummarizeDevices(model, std::max<int64_t>(s.steps, 1),
                                 s.allocator_peak_bytes);
  }
  return s;
}

std::vector<DeviceSummary> DeviceSummaries(const Model& model) {
  return SummarizeDevices(
      model, std::max<int64_t>(static_cast<int64_t>(model.steps().size()), 1),
      AllocatorPeakMap(model));
}

}  // namespace tfprof
