#include "profiler/render/summary.h"

#include <algorithm>
#include <climits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "profiler/base/json_writer.h"
#include "profiler/base/saturate.h"
#include "profiler/base/units.h"
#include "profiler/views/memory.h"

namespace tfprof {

namespace {

// Busy time per step of each stream and host thread (overlaps once).
void AddActivity(const Activity& a, int64_t steps, ProfileSummary* s) {
  std::map<std::string, std::vector<std::pair<int64_t, int64_t>>> lanes;
  for (const DeviceWork& w : a.work()) {
    lanes[a.String(w.stream)].emplace_back(w.start_ns,
                                           SatAdd(w.start_ns, w.duration_ns));
  }
  for (const HostSpan& h : a.host()) {
    lanes["host thread " + a.String(h.thread)].emplace_back(
        h.start_ns, SatAdd(h.start_ns, h.duration_ns));
  }
  for (auto& [lane, v] : lanes) s->lane_busy_ns[lane] = UnionLength(&v) / steps;
}

}  // namespace

ProfileSummary Summarize(const Model& model) {
  ProfileSummary s;
  s.nodes = static_cast<int64_t>(model.size());
  s.steps = static_cast<int64_t>(model.steps().size());
  s.has_code_traces = model.has_code_traces();
  for (const auto& node : model.nodes()) {
    if (!node->execs.empty()) ++s.nodes_with_execs;
    if (!node->canonical_device().empty())
      ++s.devices[node->canonical_device()];
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
  const StepTable steps = ComputeSteps(model);
  s.wall = StepWallStats(steps);
  s.wall_source = steps.wall_source;
  AddActivity(model.activity(), std::max<int64_t>(s.steps, 1), &s);
  for (const AllocatorPeak& p : ComputeMemoryPeaks(model)) {
    s.allocator_peak_bytes[p.allocator] = p.peak_bytes;
  }
  return s;
}

std::string RenderSummary(const ProfileSummary& s,
                          const LoadedProfile* loaded) {
  std::string out;
  absl::StrAppendFormat(&out, "nodes:       %d (%d with run statistics)\n",
                        s.nodes, s.nodes_with_execs);
  absl::StrAppendFormat(&out, "steps:       %d\n", s.steps);
  absl::StrAppendFormat(&out, "devices:     %d\n",
                        s.devices.size() + s.lane_busy_ns.size());
  for (const auto& [dev, n] : s.devices) {
    absl::StrAppendFormat(&out, "  %-60s %d nodes\n", dev, n);
  }
  for (const auto& [lane, busy] : s.lane_busy_ns) {
    absl::StrAppendFormat(&out, "  %-60s %s busy/step\n", lane,
                          FormatNanos(busy));
  }
  std::vector<std::pair<std::string, int64_t>> ops(s.op_types.begin(),
                                                   s.op_types.end());
  std::stable_sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) {
    return a.second > b.second;
  });
  absl::StrAppendFormat(&out, "op types:    %d", ops.size());
  const size_t shown = std::min<size_t>(ops.size(), 8);
  for (size_t i = 0; i < shown; ++i) {
    absl::StrAppend(&out, i == 0 ? " (" : ", ", ops[i].first, " ",
                    ops[i].second);
  }
  if (shown > 0) absl::StrAppend(&out, shown < ops.size() ? ", ...)" : ")");
  out += "\n";
  if (s.steps > 0) {
    absl::StrAppendFormat(
        &out, "time/step:   mean %s, median %s, min %s, max %s (%s)\n",
        FormatNanos(s.wall.mean_ns), FormatNanos(s.wall.median_ns),
        FormatNanos(s.wall.min_ns), FormatNanos(s.wall.max_ns), s.wall_source);
  }
  absl::StrAppendFormat(&out,
                        "node time:   %s per step, summed over nodes "
                        "(accelerator %s, cpu %s)\n",
                        FormatTime(s.exec_micros),
                        FormatTime(s.accelerator_micros),
                        FormatTime(s.cpu_micros));
  absl::StrAppendFormat(&out,
                        "node memory: %s requested, %s peak per step, "
                        "summed over nodes\n",
                        FormatMemory(s.requested_bytes),
                        FormatMemory(s.peak_bytes));
  for (const auto& [allocator, peak] : s.allocator_peak_bytes) {
    absl::StrAppendFormat(&out, "peak memory: %s in use on %s\n",
                          FormatMemory(peak), allocator);
  }
  absl::StrAppendFormat(&out, "parameters:  %s\n", FormatNumber(s.parameters));
  absl::StrAppendFormat(&out, "float ops:   %s\n", FormatNumber(s.float_ops));
  absl::StrAppendFormat(&out, "code traces: %s\n",
                        s.has_code_traces ? "yes" : "no");
  if (loaded != nullptr) {
    const double mb = static_cast<double>(loaded->bytes_read) / 1e6;
    absl::StrAppendFormat(&out, "loaded:      %.2f MB in %.3f s (%.1f MB/s)\n",
                          mb, loaded->seconds,
                          loaded->seconds > 0 ? mb / loaded->seconds : 0.0);
  }
  return out;
}

std::string RenderSummaryJson(const ProfileSummary& s) {
  std::string out = absl::StrCat(
      "{\"nodes\": ", s.nodes,
      ", \"nodes_with_run_statistics\": ", s.nodes_with_execs,
      ", \"steps\": ", s.steps,
      ", \"time_per_step\": {\"wall_micros\": "
      "{\"mean\": ",
      NanosAsMicros(s.wall.mean_ns),
      ", \"median\": ", NanosAsMicros(s.wall.median_ns),
      ", \"min\": ", NanosAsMicros(s.wall.min_ns),
      ", \"max\": ", NanosAsMicros(s.wall.max_ns),
      "}, \"source\": ", JsonQuote(s.wall_source),
      "}, \"node_micros_per_step\": ", s.exec_micros,
      ", \"has_code_traces\": ", s.has_code_traces ? "true" : "false",
      ", \"devices\": [");
  bool first = true;
  auto device = [&](const std::string& name, int64_t nodes, int64_t busy_ns,
                    int64_t peak) {
    absl::StrAppend(&out, first ? "" : ", ", "{\"name\": ", JsonQuote(name),
                    ", \"nodes\": ", nodes, ", \"busy_micros\": ",
                    busy_ns < 0 ? "-1" : NanosAsMicros(busy_ns),
                    ", \"peak_bytes\": ", peak, "}");
    first = false;
  };
  for (const auto& [name, n] : s.devices) device(name, n, -1, -1);
  for (const auto& [name, busy] : s.lane_busy_ns) device(name, 0, busy, -1);
  for (const auto& [name, peak] : s.allocator_peak_bytes) {
    device(name, 0, -1, peak);
  }
  return out + "]}\n";
}

}  // namespace tfprof
