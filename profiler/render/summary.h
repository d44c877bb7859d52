// A one-screen overview of a loaded profile.
#ifndef TFPROF_PROFILER_RENDER_SUMMARY_H_
#define TFPROF_PROFILER_RENDER_SUMMARY_H_

#include <cstdint>
#include <map>
#include <string>

#include "profiler/load/loader.h"
#include "profiler/views/steps.h"

namespace tfprof {

struct ProfileSummary {
  int64_t nodes = 0;
  int64_t nodes_with_execs = 0;
  int64_t steps = 0;
  std::map<std::string, int64_t> devices;   // canonical device -> nodes
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
  // Accelerator streams and host threads (traces, RunMetadata GPU streams):
  // busy time per step, overlaps counted once.
  std::map<std::string, int64_t> lane_busy_ns;
  // The most bytes each allocator had in use (trace inputs).
  std::map<std::string, int64_t> allocator_peak_bytes;
};

ProfileSummary Summarize(const Model& model);

// The summary as JSON: the counts, "time_per_step" (wall micros: mean,
// median, min, max), and "devices": [{"name", "nodes", "busy_micros",
// "peak_bytes"}] (busy per step; -1 where not known).
std::string RenderSummaryJson(const ProfileSummary& s);

// Renders the summary; `loaded` adds the load figures (bytes, seconds).
std::string RenderSummary(const ProfileSummary& s, const LoadedProfile* loaded);

}  // namespace tfprof

#endif  // TFPROF_PROFILER_RENDER_SUMMARY_H_
