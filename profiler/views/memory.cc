#include "profiler/views/memory.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "profiler/base/saturate.h"

namespace tfprof {
namespace {

// The step whose span holds `t`, or -1.
int64_t StepAt(const Activity& a, const Model& model, int64_t t) {
  for (const StepSpan& s : a.steps()) {
    if (t >= s.start_ns && t < s.end_ns) return s.step;
  }
  for (const auto& [step, span] : model.run_spans()) {
    if (t >= SatMul(span.start_micros, 1000) &&
        t < SatMul(span.end_micros, 1000)) {
      return step;
    }
  }
  return -1;
}

// One allocator's samples [begin, end) (in time order): its peak, and what
// was live then.
AllocatorPeak PeakOf(const Model& model, size_t begin, size_t end) {
  const Activity& a = model.activity();
  const std::vector<MemorySample>& m = a.memory();
  AllocatorPeak p;
  p.allocator = a.String(m[begin].allocator);
  p.samples = static_cast<int64_t>(end - begin);
  size_t at = begin;
  for (size_t i = begin; i < end; ++i) {
    if (m[i].bytes_in_use > m[at].bytes_in_use) at = i;
  }
  p.peak_bytes = m[at].bytes_in_use;
  p.peak_time_ns = m[at].time_ns;
  p.peak_step = StepAt(a, model, p.peak_time_ns);
  absl::flat_hash_map<uint64_t, LiveAllocation> live;
  for (size_t i = begin; i <= at; ++i) {
    if (m[i].address == 0) continue;
    if (m[i].bytes > 0) {
      live[m[i].address] = LiveAllocation{m[i].address, m[i].bytes, false,
                                          m[i].time_ns, a.String(m[i].op)};
    } else {
      live.erase(m[i].address);
    }
  }
  // Blocks freed after the peak that the trace never allocated before that
  // free were live at the peak, allocated before the trace.
  absl::flat_hash_map<uint64_t, bool> allocated_later;
  for (size_t i = at + 1; i < end; ++i) {
    if (m[i].address == 0) continue;
    if (m[i].bytes > 0) {
      allocated_later[m[i].address] = true;
    } else if (!live.contains(m[i].address) &&
               !allocated_later.contains(m[i].address)) {
      LiveAllocation l{m[i].address, -m[i].bytes, true, m[i].time_ns,
                       a.String(m[i].op)};
      live.emplace(m[i].address, std::move(l));
    } else {
      allocated_later.erase(m[i].address);
    }
  }
  int64_t traced = 0;
  for (auto& [address, alloc] : live) {
    traced = SatAdd(traced, alloc.bytes);
    p.live.push_back(std::move(alloc));
  }
  std::sort(p.live.begin(), p.live.end(),
            [](const LiveAllocation& x, const LiveAllocation& y) {
              if (x.bytes != y.bytes) return x.bytes > y.bytes;
              if (x.time_ns != y.time_ns) return x.time_ns < y.time_ns;
              return x.address < y.address;  // (`live` is in hash order)
            });
  p.untraced_bytes = std::max<int64_t>(p.peak_bytes - traced, 0);
  return p;
}

}  // namespace

std::vector<AllocatorPeak> ComputeMemoryPeaks(const Model& model) {
  const std::vector<MemorySample>& m = model.activity().memory();
  std::vector<AllocatorPeak> peaks;
  for (size_t begin = 0; begin < m.size();) {
    size_t end = begin;
    while (end < m.size() && m[end].allocator == m[begin].allocator) ++end;
    peaks.push_back(PeakOf(model, begin, end));
    begin = end;
  }
  std::sort(peaks.begin(), peaks.end(),
            [](const AllocatorPeak& x, const AllocatorPeak& y) {
              return x.allocator < y.allocator;
            });
  return peaks;
}

}  // namespace tfprof
