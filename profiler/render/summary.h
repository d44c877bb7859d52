// A one-screen overview of a loaded profile.
#ifndef TFPROF_PROFILER_RENDER_SUMMARY_H_
#define TFPROF_PROFILER_RENDER_SUMMARY_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "profiler/load/loader.h"
#include "profiler/views/flops.h"
#include "profiler/views/steps.h"

namespace tfprof {

// A lane of a device: a GPU stream or copy lane, or a host thread.
struct LaneSummary {
  std::string name;     // as recorded (".../gpu:0/stream:7", "host thread 1/2")
  int64_t busy_ns = 0;  // per step, overlaps once
  bool thread = false;  // a host thread (else a GPU stream or copy lane)
};

// A device (CPU or GPU) with what ran on it.
struct DeviceSummary {
  std::string name;
  int64_t nodes = 0;     // nodes placed on it (their canonical device)
  int64_t busy_ns = -1;  // per step: any of its streams busy; -1 none known
  // The most bytes its allocators had in use, each (largest first).
  std::vector<std::pair<std::string, int64_t>> allocators;
  std::vector<LaneSummary> lanes;  // streams (GPU), host threads (CPU)
  int64_t peak_bytes() const {
    return allocators.empty() ? -1 : allocators.front().second;
  }
};

struct ProfileSummary {
  int64_t nodes = 0;
  int64_t nodes_with_execs = 0;
  int64_t steps = 0;
  // CPUs first, then GPUs by number, then other devices by name.
  std::vector<DeviceSummary> devices;
  std::map<std::string, int64_t> op_types;  // op -> nodes
  // Averages over steps (the -step -1 rule), summed over nodes.
  int64_t exec_micros = 0;
  int64_t accelerator_micros = 0;
  int64_t cpu_micros = 0;
  int64_t requested_bytes = 0;
  int64_t peak_bytes = 0;
  int64_t parameters = 0;
  int64_t float_ops = 0;
  bool has_code_traces = false;
  // Wall time per step (from the steps table) and where it came from.
  WallStats wall;
  std::string wall_source;
  // The most bytes each allocator had in use (trace inputs).
  std::map<std::string, int64_t> allocator_peak_bytes;
  // Float ops per step (the extended rule), achieved FLOP/s and MFU.
  RunFlops flops;

  // The device whose name (or a lane's) is `name`, or null.
  const DeviceSummary* FindDevice(std::string_view name) const;
  // The busy time of a lane per step, or -1 when there is no such lane.
  int64_t LaneBusy(std::string_view lane) const;
};

// `peaks` override the peak table's (--peak_flops, --peak_bytes_per_sec).
ProfileSummary Summarize(const Model& model, const PeakOverride& peaks = {});

// The summary as JSON: the counts, "time_per_step" (wall micros: mean,
// median, min, max), "devices": [{"name", "nodes", "busy_micros",
// "peak_bytes", "allocators": [{"name", "peak_bytes"}], "lanes": [{"name",
// "kind" ("stream" or "thread"), "busy_micros"}]}] (busy per step; -1 where not
// known), "allocators": [{"name", "peak_bytes"}], and the float ops:
// "flops_per_step" (mean over steps, extended rule), "flop_rate" (FLOP/s
// over the mean step wall time), "mfu" (a fraction, or null), "peak_flops"
// (FLOP/s summed over the devices that ran kernels, or null), "peak_dtype",
// "peak_source" (the table rows' formulas or the flag, or null),
// "mfu_text", "flops_set" and "flops_notes".
std::string RenderSummaryJson(const ProfileSummary& s);

// Two runs' summaries side by side (the diff command): counts, wall time
// per step, node time, each device's busy time and each allocator's peak,
// as "base -> current, change"; `json` for {"base": summary, "current":
// summary} in RenderSummaryJson's form.
std::string RenderSummaryDiff(const ProfileSummary& base,
                              const ProfileSummary& current, bool json);

// Renders the summary; `loaded` adds the load figures (bytes, seconds).
std::string RenderSummary(const ProfileSummary& s, const LoadedProfile* loaded);

}  // namespace tfprof

#endif  // TFPROF_PROFILER_RENDER_SUMMARY_H_
