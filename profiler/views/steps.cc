#include "profiler/views/steps.h"

#include <algorithm>
#include <climits>
#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "profiler/base/device.h"
#include "profiler/base/parallel.h"
#include "profiler/base/saturate.h"
#include "profiler/views/communication.h"

namespace tfprof {
namespace {

using Interval = std::pair<int64_t, int64_t>;  // [start, end) in ns

}  // namespace

namespace {

// The length of the union of intervals sorted by start.
int64_t SortedUnionLength(const std::vector<Interval>& v) {
  int64_t total = 0, cur_start = 0, cur_end = INT64_MIN;
  for (const auto& [s, e] : v) {
    if (s > cur_end) {
      if (cur_end > cur_start) total = SatAdd(total, cur_end - cur_start);
      cur_start = s;
      cur_end = e;
    } else {
      cur_end = std::max(cur_end, e);
    }
  }
  if (cur_end > cur_start) total = SatAdd(total, cur_end - cur_start);
  return total;
}

// Two sorted lists as one sorted list.
std::vector<Interval> Merged(const std::vector<Interval>& a,
                             const std::vector<Interval>& b) {
  std::vector<Interval> out(a.size() + b.size());
  std::merge(a.begin(), a.end(), b.begin(), b.end(), out.begin());
  return out;
}

}  // namespace

int64_t UnionLength(std::vector<Interval>* v) {
  std::sort(v->begin(), v->end());
  return SortedUnionLength(*v);
}

namespace {

// One GPU's work in a step: kernels other than communication; copies and
// sets; collective kernels.
struct GpuWork {
  std::vector<Interval> compute, copies, comm_kernels;
  int64_t kernels = 0;
  int64_t first_kernel = INT64_MAX, last_kernel_end = INT64_MIN;
};

// What one step's executions and accelerator work cover: each GPU's work
// (by the device part of its lanes' names), and host transfers (gloo's).
struct StepWork {
  int64_t first_start = INT64_MAX, last_end = INT64_MIN;  // executions, ns
  std::map<std::string, GpuWork> gpus;
  std::vector<Interval> host_comm;
};

Interval Micros(const TimeInterval& t) {
  const int64_t s = SatMul(t.start_micros, 1000);
  return {s, SatAdd(s, SatMul(t.duration_micros, 1000))};
}

// The device a lane belongs to: ".../device:gpu:1" of
// ".../device:gpu:1/stream:7" or ".../device:gpu:1/memcpy".
std::string DeviceOfLane(std::string_view lane) {
  for (std::string_view part : {"/stream:", "/memcpy"}) {
    const size_t at = lane.rfind(part);
    if (at != std::string_view::npos) return std::string(lane.substr(0, at));
  }
  return std::string(lane);
}

// Every step's span from its executions, and (without accelerator work in
// the activity record) its accelerator time from the executions' devices:
// accelerator (stream:all) time is compute, memcpy lanes are copies. Nodes
// [from, to) of the model.
void FromExecutionsOf(const Model& model, bool with_devices, size_t from,
                      size_t to, std::map<int64_t, StepWork>* steps) {
  ExecDetail d;
  // Lane -> its device, once per lane (lanes are interned: the views stay
  // valid as long as the model).
  absl::flat_hash_map<std::string_view, std::string> device_of;
  const auto gpu = [&](StepWork& w, std::string_view lane) -> GpuWork& {
    auto [it, added] = device_of.try_emplace(lane);
    if (added) it->second = DeviceOfLane(lane);
    return w.gpus[it->second];
  };
  const auto& nodes = model.nodes();
  for (size_t i = from; i < to; ++i) {
    for (const StepExec& exec : nodes[i]->execs) {
      if (exec.detail == nullptr) continue;
      model.DetailInto(exec, &d);
      if (d.all_start_micros <= 0) continue;
      StepWork& w = (*steps)[exec.step];
      w.first_start = std::min(w.first_start, SatMul(d.all_start_micros, 1000));
      w.last_end = std::max(w.last_end, SatMul(d.latest_end_micros, 1000));
      if (!with_devices) continue;
      for (const DeviceTimes& dt : d.accelerator_execs) {
        GpuWork& g = gpu(w, dt.device);
        for (const TimeInterval& t : dt.times) g.compute.push_back(Micros(t));
      }
      for (const DeviceTimes& dt : d.other_execs) {
        if (KindOfDevice(dt.device) != DeviceKind::kMemcpy) continue;
        GpuWork& g = gpu(w, dt.device);
        for (const TimeInterval& t : dt.times) g.copies.push_back(Micros(t));
      }
    }
  }
}

// FromExecutionsOf every node; on large models half of them on each core,
// the second half's figures then added to the first's (the intervals are
// summed as unions, in any order).
void FromExecutions(const Model& model, bool with_devices,
                    std::map<int64_t, StepWork>* steps) {
  const size_t n = model.nodes().size();
  std::map<int64_t, StepWork> second;
  RunBoth(
      n >= kParallelMinItems,
      [&] { FromExecutionsOf(model, with_devices, 0, n / 2, steps); },
      [&] { FromExecutionsOf(model, with_devices, n / 2, n, &second); });
  for (auto& [step, from] : second) {
    StepWork& into = (*steps)[step];
    into.first_start = std::min(into.first_start, from.first_start);
    into.last_end = std::max(into.last_end, from.last_end);
    for (auto& [device, g] : from.gpus) {
      GpuWork& to = into.gpus[device];
      to.compute.insert(to.compute.end(), g.compute.begin(), g.compute.end());
      to.copies.insert(to.copies.end(), g.copies.begin(), g.copies.end());
    }
  }
}

void FromActivity(const Activity& activity,
                  std::map<int64_t, StepWork>* steps) {
  CollectiveNames names(activity);
  // Lane (string id) -> its device, computed once per lane.
  absl::flat_hash_map<uint32_t, std::string> device_of;
  for (const DeviceWork& w : activity.work()) {
    auto [lane, added] = device_of.try_emplace(w.stream);
    if (added) lane->second = DeviceOfLane(activity.String(w.stream));
    GpuWork& s = (*steps)[w.step].gpus[lane->second];
    const Interval i{w.start_ns, SatAdd(w.start_ns, w.duration_ns)};
    if (w.kind == WorkKind::kKernel) {
      if (names.KindOf(w.name) == CollectiveKind::kDeviceKernel) {
        s.comm_kernels.push_back(i);
      } else {
        s.compute.push_back(i);
      }
      ++s.kernels;
      s.first_kernel = std::min(s.first_kernel, i.first);
      s.last_kernel_end = std::max(s.last_kernel_end, i.second);
    } else {
      s.copies.push_back(i);
    }
  }
  for (const HostSpan& h : activity.host()) {
    if (names.KindOf(h.name) != CollectiveKind::kHostTransfer) continue;
    (*steps)[h.step].host_comm.push_back(
        {h.start_ns, SatAdd(h.start_ns, h.duration_ns)});
  }
}

// The row's device figures: each GPU's, and with several GPUs in the step
// the mean of those that ran kernels (of all, when none did); kernels: all
// of them.
// Returns how many GPUs the figures are the mean of.
int64_t DeviceFigures(StepWork* w, StepRow* row) {
  if (w->gpus.empty()) w->gpus[""];  // host transfers alone
  // Host transfers count inside the step's wall time (a step's host events
  // can run on past its marker: the last step takes the capture's tail).
  if (row->wall_ns > 0) {
    const int64_t end = SatAdd(row->start_ns, row->wall_ns);
    std::vector<Interval> inside;
    for (const Interval& i : w->host_comm) {
      const Interval c{std::max(i.first, row->start_ns),
                       std::min(i.second, end)};
      if (c.first < c.second) inside.push_back(c);
    }
    w->host_comm = std::move(inside);
  }
  bool any_kernels = false;
  for (const auto& [device, g] : w->gpus) any_kernels |= g.kernels > 0;
  StepRow sum;
  int64_t n = 0;
  std::sort(w->host_comm.begin(), w->host_comm.end());
  for (auto& [device, g] : w->gpus) {
    row->kernels += g.kernels;
    if (any_kernels && g.kernels == 0) continue;
    ++n;
    // Each list sorted once; their unions are merges of sorted lists.
    for (std::vector<Interval>* v : {&g.compute, &g.copies, &g.comm_kernels}) {
      std::sort(v->begin(), v->end());
    }
    const std::vector<Interval> all =
        Merged(Merged(g.compute, g.copies), g.comm_kernels);
    sum.accelerator_ns += SortedUnionLength(all);
    const int64_t busy = SortedUnionLength(Merged(all, w->host_comm));
    const std::vector<Interval> comm = Merged(g.comm_kernels, w->host_comm);
    const int64_t compute = SortedUnionLength(g.compute);
    sum.compute_ns += compute;
    sum.memcpy_ns += SortedUnionLength(g.copies);
    sum.communication_ns += SortedUnionLength(comm);
    sum.exposed_communication_ns +=
        SortedUnionLength(Merged(comm, g.compute)) - compute;
    if (busy > 0) sum.idle_ns += std::max<int64_t>(row->wall_ns - busy, 0);
    if (g.first_kernel <= g.last_kernel_end) {
      sum.device_span_ns += g.last_kernel_end - g.first_kernel;
    }
  }
  row->accelerator_ns = sum.accelerator_ns / n;
  row->compute_ns = sum.compute_ns / n;
  row->memcpy_ns = sum.memcpy_ns / n;
  row->communication_ns = sum.communication_ns / n;
  row->exposed_communication_ns = sum.exposed_communication_ns / n;
  row->idle_ns = sum.idle_ns / n;
  row->device_span_ns = sum.device_span_ns / n;
  return n;
}

// The most bytes any allocator had in use in [start, end): the value it held
// at the start, and every sample inside.
void PeakMemory(const Activity& activity, StepRow* row) {
  const std::vector<MemorySample>& m = activity.memory();
  const int64_t start = row->start_ns, end = SatAdd(start, row->wall_ns);
  for (size_t begin = 0; begin < m.size();) {
    size_t last = begin;
    while (last < m.size() && m[last].allocator == m[begin].allocator) ++last;
    auto first_in = std::lower_bound(
        m.begin() + begin, m.begin() + last, start,
        [](const MemorySample& s, int64_t t) { return s.time_ns < t; });
    int64_t peak = -1;
    if (first_in != m.begin() + begin) peak = std::prev(first_in)->bytes_in_use;
    for (auto it = first_in; it != m.begin() + last && it->time_ns < end;
         ++it) {
      peak = std::max(peak, it->bytes_in_use);
    }
    if (peak > row->peak_bytes) {
      row->peak_bytes = peak;
      row->peak_allocator = activity.String(m[begin].allocator);
    }
    begin = last;
  }
}

}  // namespace

StepTable ComputeSteps(const Model& model) {
  const Activity& activity = model.activity();
  std::map<int64_t, StepWork> work;
  FromExecutions(model, activity.work().empty(), &work);
  FromActivity(activity, &work);
  std::map<int64_t, const StepSpan*> spans;
  for (const StepSpan& s : activity.steps()) spans[s.step] = &s;
  StepTable table;
  int64_t marked = 0, gpus = 0;
  for (int64_t step : model.steps()) {
    StepWork& w = work[step];
    StepRow row;
    row.step = step;
    auto span = spans.find(step);
    if (span != spans.end()) {
      row.from_markers = true;
      row.start_ns = span->second->start_ns;
      row.wall_ns = std::max<int64_t>(span->second->end_ns - row.start_ns, 0);
      ++marked;
    } else if (auto run = model.run_spans().find(step);
               run != model.run_spans().end()) {
      row.start_ns = SatMul(run->second.start_micros, 1000);
      row.wall_ns = std::max<int64_t>(
          SatMul(run->second.end_micros - run->second.start_micros, 1000), 0);
    } else if (w.first_start <= w.last_end) {
      row.start_ns = w.first_start;
      row.wall_ns = w.last_end - w.first_start;
    }
    gpus = std::max(gpus, DeviceFigures(&w, &row));
    PeakMemory(activity, &row);
    table.rows.push_back(std::move(row));
  }
  table.accelerator_work = false;
  for (const StepRow& r : table.rows) {
    table.accelerator_work = table.accelerator_work || r.accelerator_ns > 0 ||
                             r.communication_ns > 0;
  }
  if (activity.work().empty()) {
    bool accelerator = false, copies = false;
    for (const StepRow& r : table.rows) {
      accelerator = accelerator || r.accelerator_ns > 0;
      copies = copies || r.memcpy_ns > 0;
    }
    table.kernel_records = !accelerator;
    table.copy_records = !accelerator || copies;
  }
  const int64_t n = static_cast<int64_t>(table.rows.size());
  if (marked == n && n > 0) {
    table.wall_source = "wall time from each step's own markers";
  } else if (marked == 0) {
    table.wall_source =
        "wall time from each step's first execution start to its last "
        "execution end";
  } else {
    table.wall_source =
        "wall time from the step's own markers where it has them, else from "
        "its first execution start to its last execution end";
  }
  if (gpus > 1) {
    absl::StrAppend(&table.wall_source,
                    "; device columns: the mean per GPU of those that ran "
                    "kernels in the step (up to ",
                    gpus, "), kernels: all of theirs");
  }
  return table;
}

int64_t Median(std::vector<int64_t> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

WallStats StepWallStats(const StepTable& table) {
  WallStats w;
  if (table.rows.empty()) return w;
  std::vector<int64_t> walls;
  int64_t sum = 0;
  for (const StepRow& r : table.rows) {
    walls.push_back(r.wall_ns);
    sum = SatAdd(sum, r.wall_ns);
  }
  std::sort(walls.begin(), walls.end());
  w.mean_ns = sum / static_cast<int64_t>(walls.size());
  w.median_ns = Median(walls);
  w.min_ns = walls.front();
  w.max_ns = walls.back();
  return w;
}

}  // namespace tfprof
