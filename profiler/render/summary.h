// The summary of a run (views/summary.h) as text, as JSON, and two runs'
// side by side.
#ifndef TFPROF_PROFILER_RENDER_SUMMARY_H_
#define TFPROF_PROFILER_RENDER_SUMMARY_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "profiler/load/loader.h"
#include "profiler/views/summary.h"

namespace tfprof {

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
