// A diff of two runs (profiler/views/diff.h) as text, JSON, CSV or a
// Markdown table.
#ifndef TFPROF_PROFILER_RENDER_RENDER_DIFF_H_
#define TFPROF_PROFILER_RENDER_RENDER_DIFF_H_

#include <string>
#include <vector>

#include "profiler/views/diff.h"

namespace tfprof {

// The output types a diff is written as ("pprof" is written from the two
// sides' own results: BuildDiffPprof in pprof.h).
const std::vector<std::string>& DiffOutputTypes();

// Text: a legend, then one row per node, indented by depth:
//   name (micros 1.20ms -> 1.50ms, +300us, +25.0%; ...) [SIGNIFICANT q=0.003]
std::string RenderDiffText(const DiffTree& tree);

// JSON: {"view", "attribute", "alpha", "notes", "root": node}, a node being
// {"name", "in": "both"|"base"|"current", "<attr>": {"base", "current",
// "delta", "ratio"}, ..., "p_value", "q_value", "significant",
// "children": [...]} (ratio: current / base - 1, null when base is 0;
// p_value and q_value null when not tested).
std::string RenderDiffJson(const DiffTree& tree);

// CSV: one row per node, depth first: name, depth, in, then per attribute
// <attr>_base, <attr>_current, <attr>_delta, then p_value, q_value,
// significant.
std::string RenderDiffCsv(const DiffTree& tree);

// A Markdown table fit for a pull-request comment.
std::string RenderDiffMarkdown(const DiffTree& tree);

// Renders as `type` (one of DiffOutputTypes(); "stdout" and "file" are
// text).
std::string RenderDiff(const DiffTree& tree, const std::string& type);

// The steps comparison: text ("wall: median 176.27ms (6 steps) ->
// 170.01ms (6 steps), -6.26ms, -3.6% [SIGNIFICANT q=0.01]"), json
// ({"alpha", "measures": [{"measure", "base": [...], "current": [...],
// "base_median", "current_median", "p_value", "q_value", "significant"}]})
// or csv (measure,base_steps,current_steps,base_median,current_median,
// delta,p_value,q_value,significant); times in nanoseconds in json and csv.
std::string RenderStepsDiff(const StepsDiff& diff, const std::string& type);

}  // namespace tfprof

#endif  // TFPROF_PROFILER_RENDER_RENDER_DIFF_H_
