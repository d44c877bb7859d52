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

// Text: a legend, then one row per node, indented by depth, then the cost
// shifts:
//   name (micros 1.20ms -> 1.50ms, +300us, +25.0%; ...)
//       [SIGNIFICANT: regressed, +250us..+350us/step, q=0.003] [shift 1]
std::string RenderDiffText(const DiffTree& tree);

// JSON: {"view", "attribute", "alpha", "min_change", "notes", "root": node,
// "shifts": [...]}, a node being {"name", "in": "both"|"base"|"current",
// "<attr>": {"base", "current", "delta", "ratio"}, ..., "runs_per_step":
// {"base", "current"}, "verdict", "ci_low", "ci_high", "floor", "p_value",
// "q_value", "significant", ["more_steps_needed",] ["shift",] "children":
// [...]} (ratio: current / base - 1, null when base is 0; the interval and
// floor per step in the attribute's unit; p, q and the interval null when
// not tested; more_steps_needed only when inconclusive; shift: the index
// in "shifts"). A shift: {"parent", "removed": [member], "added":
// [member], "base", "current", "delta", and the verdict's fields}, a member
// {"name", "in", "base", "current", "verdict"}.
std::string RenderDiffJson(const DiffTree& tree);

// CSV: one row per node, depth first: name, depth, in, then per attribute
// <attr>_base, <attr>_current, <attr>_delta, then p_value, q_value,
// significant, verdict, ci_low, ci_high, more_steps_needed, shift (from 1).
std::string RenderDiffCsv(const DiffTree& tree);

// A Markdown table fit for a pull-request comment.
std::string RenderDiffMarkdown(const DiffTree& tree);

// Renders as `type` (one of DiffOutputTypes(); "stdout" and "file" are
// text).
std::string RenderDiff(const DiffTree& tree, const std::string& type);

// The steps comparison: text ("wall: median 176.27ms (6 steps) ->
// 170.01ms (6 steps), -6.26ms, -3.6% [SIGNIFICANT: improved, ...]"), json
// ({"alpha", "min_change", "measures": [{"measure", "base": [...],
// "current": [...], "base_median", "current_median", "base_mean",
// "current_mean", and the verdict's fields as in RenderDiffJson}]}) or csv
// (measure,base_steps,current_steps,base_median,current_median,delta,
// p_value,q_value,significant,verdict,ci_low,ci_high,more_steps_needed);
// times in nanoseconds in json and csv.
std::string RenderStepsDiff(const StepsDiff& diff, const std::string& type);

// The top changes across views: text, or json ({"unit", "changes":
// [entry], "launches": [entry], "notes"}, an entry {"where", "name",
// "base", "current", "delta"} per step, changes with the verdict's fields).
std::string RenderDiffTop(const DiffTop& top, bool json);

}  // namespace tfprof

#endif  // TFPROF_PROFILER_RENDER_RENDER_DIFF_H_
