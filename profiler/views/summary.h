// A one-screen overview of a loaded run: its counts, the wall time per
// step, each device with its lanes and memory peaks, the node totals and
// the run's float ops (MFU). Computed beside the steps table; rendered by
// render/summary.h.
#ifndef TFPROF_PROFILER_VIEWS_SUMMARY_H_
#define TFPROF_PROFILER_VIEWS_SUMMARY_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "profiler/model/model.h"
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
  int64_t ranks = 1;  // several: the node figures below are means per rank
  int64_t nodes = 0;
  int64_t nodes_with_execs = 0;
  int64_t steps = 0;
  // CPUs first, then GPUs by number, then other devices by name.
  std::vector<DeviceSummary> devices;
  std::map<std::string, int64_t> op_types;  // op -> nodes
  // Averages over steps (the -step -1 rule), summed over nodes (and, as
  // the views show them, divided by the number of ranks).
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
  // What the reader should know about how these were obtained.
  std::vector<std::string> notes;

  // The device whose name (or a lane's) is `name`, or null.
  const DeviceSummary* FindDevice(std::string_view name) const;
  // The busy time of a lane per step, or -1 when there is no such lane.
  int64_t LaneBusy(std::string_view lane) const;
};

// What a caller supplies in place of the model's own figures. Several ranks
// pass the job's steps table (the slowest rank's wall per step) and each
// rank's devices, named "rank N: ...", with their allocator peaks.
struct SummaryParts {
  const StepTable* steps = nullptr;
  const std::vector<DeviceSummary>* devices = nullptr;
};

// `peaks` override the peak table's (--peak_flops, --peak_bytes_per_sec).
ProfileSummary Summarize(const Model& model, const PeakOverride& peaks = {},
                         const SummaryParts& given = {});

// The model's devices with their lanes and allocator peaks, as Summarize
// lists them.
std::vector<DeviceSummary> DeviceSummaries(const Model& model);

}  // namespace tfprof

#endif  // TFPROF_PROFILER_VIEWS_SUMMARY_H_
