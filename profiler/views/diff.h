// Comparing two runs: a view queried on a base profile and on the current
// one, its rows matched by name, with each side's totals, the change, and
// whether the change stands out from the step-to-step noise.
#ifndef TFPROF_PROFILER_VIEWS_DIFF_H_
#define TFPROF_PROFILER_VIEWS_DIFF_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "profiler/views/result.h"
#include "profiler/views/steps.h"
#include "profiler/views/views.h"

namespace tfprof {

// How names are matched: each rule rewrites every node name (RE2
// GlobalReplace, \1 refers to a group) on both sides before matching, in
// order ("ProfilerStep#\d+" => "ProfilerStep", "^rank\d+/" => "").
struct DiffRule {
  std::string pattern;
  std::string rewrite;
};
// Parses "PATTERN=>REWRITE".
absl::StatusOr<DiffRule> ParseDiffRule(const std::string& text);

struct DiffOptions {
  std::vector<DiffRule> rules;
  // False discovery rate at which a change counts as significant
  // (Benjamini-Hochberg over the rows' Mann-Whitney p-values).
  double alpha = 0.05;
  // Keep only rows whose change is significant (and their ancestors).
  bool significant_only = false;
};

// Sets one diff option from text: "map" (a rule, appended), "alpha" (in
// (0, 1)) or "significant_only" (true/false). `prefix` starts the error
// message ("diff: -" on the command line, "parameter " in the web API).
absl::Status SetDiffOption(const std::string& name, const std::string& value,
                           const std::string& prefix, DiffOptions* diff);

// One side of a row: its totals in the view, and its value of the diff's
// attribute in each step (tests of significance use these).
struct DiffSide {
  bool present = false;
  Totals total;
  std::vector<int64_t> per_step;  // one per step of the side's profile
};

struct DiffNode {
  std::string name;  // after the rules
  DiffSide base, current;
  double p_value = -1;  // -1: not tested (fewer than 3 steps on a side)
  double q_value = -1;
  bool significant = false;
  std::vector<size_t> children;  // indices into DiffTree::nodes
};

struct DiffTree {
  ViewKind view = ViewKind::kScope;
  Options options;
  DiffOptions diff;
  // The attribute the change is ordered and tested by ("micros", ...).
  std::string attribute;
  std::vector<DiffNode> nodes;  // nodes[0] is the root
  std::vector<std::string> notes;

  const DiffNode& root() const { return nodes[0]; }
};

// A selected attribute's total ("micros" -> exec_micros, "occurrence" ->
// run_count); false for attributes that are not numbers.
bool DiffValue(const Totals& t, const std::string& attribute, int64_t* out);
// The numeric attributes of a query, in -select order.
std::vector<std::string> DiffAttributes(const Options& opts);

// Runs `view` with `opts` on both sides and matches the rows: a tree
// view's rows by their path of names, a flat view's (op, kernel) by name
// with their own figures. -max_depth and the -min_* options apply to the
// matched rows (a row is kept when either side reaches the minimums);
// -order_by NUMBER orders siblings by the size of their change in it
// (largest first, then the larger current value).
absl::StatusOr<DiffTree> QueryDiff(ViewKind view, const Options& opts,
                                   const DiffOptions& diff, Views* base,
                                   const Model& base_model, Views* current,
                                   const Model& current_model);

// The steps tables of two runs compared: per measure (wall, accelerator,
// compute, memcpy and idle time, kernel launches, peak bytes), each run's
// per-step values, their medians and the rank test of the difference.
struct StepsDiffRow {
  std::string measure;  // "wall_ns", ..., "kernels", "peak_bytes"
  std::vector<int64_t> base, current;
  int64_t base_median = 0, current_median = 0;
  // Whether each run records the measure (peak bytes need allocator
  // samples); a measure one run lacks is not tested.
  bool base_recorded = true, current_recorded = true;
  double p_value = -1, q_value = -1;  // -1: not tested (or < 3 steps a side)
  bool significant = false;
};
struct StepsDiff {
  double alpha = 0.05;
  std::vector<StepsDiffRow> rows;
};
StepsDiff DiffSteps(const StepTable& base, const StepTable& current,
                    double alpha);

}  // namespace tfprof

#endif  // TFPROF_PROFILER_VIEWS_DIFF_H_
