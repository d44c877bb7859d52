// Comparing two runs: a view queried on a base profile and on the current
// one, its rows matched by name, with each side's totals, the change, a
// confidence interval of the change per step and a verdict (regressed,
// improved, unchanged or inconclusive) against a practical floor; rows that
// vanished and others that appeared under one parent as cost shifts; and
// the steps tables compared the same way.
#ifndef TFPROF_PROFILER_VIEWS_DIFF_H_
#define TFPROF_PROFILER_VIEWS_DIFF_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "profiler/base/stats.h"
#include "profiler/base/units.h"
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

// The practical floor: a change per step of at most the larger of `ratio`
// times the base's value and the absolute amount of the attribute's unit
// counts as no change.
struct MinChange {
  double ratio = 0.02;
  int64_t micros = 2;  // times (steps' nanosecond measures: 1000x)
  int64_t bytes = 0;
  int64_t count = 0;

  // The floor for a row whose base has `base` per step (in `unit`).
  double Floor(StatUnit unit, double base) const;
};
// Parses "2%,2us": a percentage and amounts with units (us/ms/s,
// B/KB/MB/GB, k/m/b or none for counts), comma-separated, any of them;
// kinds not given keep their defaults.
absl::StatusOr<MinChange> ParseMinChange(const std::string& text);
// "2%,2us" (the amounts that are set).
std::string MinChangeText(const MinChange& m);

struct DiffOptions {
  std::vector<DiffRule> rules;
  // False discovery rate over the rows' tests (Benjamini-Hochberg), and the
  // confidence level (1 - alpha) of the intervals.
  double alpha = 0.05;
  // Keep only rows whose change is significant (and their ancestors).
  bool significant_only = false;
  MinChange min_change;
};

// Sets one diff option from text: "map" (a rule, appended), "alpha" (in
// (0, 1)), "significant_only" (true/false) or "min_change". `prefix`
// starts the error message ("diff: -" on the command line, "parameter " in
// the web API).
absl::Status SetDiffOption(const std::string& name, const std::string& value,
                           const std::string& prefix, DiffOptions* diff);

enum class Verdict { kUnchanged, kRegressed, kImproved, kInconclusive };
// "unchanged", "regressed", "improved", "inconclusive".
const char* VerdictName(Verdict v);

// Tests need this many steps on each side.
inline constexpr size_t kDiffMinSteps = 3;
// more_steps_needed says at most this ("this many or more").
inline constexpr int kDiffMaxMoreSteps = 1000;

// What the evidence says about one change.
struct Judgement {
  Verdict verdict = Verdict::kInconclusive;
  bool tested = false;
  bool log_scale = false;
  // Per step, in the unit of the values judged: each side's mean, the
  // change, its (1 - alpha) confidence interval (NaN when not tested) and
  // the floor.
  double base_mean = 0, current_mean = 0;
  double estimate = 0, ci_low = 0, ci_high = 0, floor = 0;
  double p_value = -1, q_value = -1;  // -1: not tested
  // Regressed or improved: beyond the floor at false discovery rate alpha.
  bool significant = false;
  // Inconclusive: steps to add on each side that would likely decide it.
  int more_steps_needed = 0;
};

// Sets the input's floor from `min_change` and its base's mean per step.
void SetFloor(const MinChange& min_change, StatUnit unit, ChangeInput* in);

// Judges changes of per-step values (floors set): TestChange each,
// Benjamini-Hochberg over the tested ones, then regressed / improved when
// q <= alpha (the interval then lies beyond the floor), unchanged when the
// interval lies inside the floor, else inconclusive. Fewer than
// kDiffMinSteps steps on a side: not tested, inconclusive.
std::vector<Judgement> JudgeChanges(const std::vector<ChangeInput>& inputs,
                                    double alpha);
// The same for `n` changes read and written in place: input(i) makes the
// i-th input (called more than once for some), out(i) is where its
// judgement goes. A large diff's rows need no copies of either.
void JudgeChangesInPlace(size_t n,
                         const std::function<ChangeInput(size_t)>& input,
                         double alpha,
                         const std::function<Judgement*(size_t)>& out);

// One side of a row: its totals in the view, and each step's value of the
// diff's attribute and runs (kernel launches in the kernel view), for the
// tests.
struct DiffSide {
  bool present = false;
  Totals total;
  // One per step of the side's profile, in the tree's DiffStepData.
  absl::Span<const double> per_step, runs;
  // The variance of a step's value that the spread of the row's
  // occurrences implies (see ChangeInput).
  double jitter = 0;

  double MeanRuns() const;
};

// What the sides' per-step spans point into: rows x steps, row by row
// (shared by copies of a tree).
struct DiffStepData {
  size_t base_steps = 0, current_steps = 0;
  std::vector<double> base_values, base_runs, current_values, current_runs;
};

struct DiffNode {
  std::string name;  // after the rules
  DiffSide base, current;
  // The verdict on the change of the diff's attribute per step (interval
  // NaN when not tested).
  Judgement judgement;
  int shift = -1;                // index into DiffTree::shifts, or -1
  std::vector<size_t> children;  // indices into DiffTree::nodes
};

// Rows under one parent that vanished while others appeared (in the flat
// views also rows that clearly fell or grew while running a different
// number of times per step): one cost moved ("replaced by") rather than a
// regression and an improvement. In a flat view such a group also takes
// every other clear change under the parent (a kernel that now runs for
// other layers). The parent is the tree parent; in the op view the op type
// of the calling node, in the kernel view the launching op type (the
// heaviest, when several launch a kernel).
struct DiffShift {
  struct Member {
    std::string name;
    int64_t base = 0, current = 0;  // the attribute's totals
    Verdict verdict = Verdict::kInconclusive;
    bool base_present = false, current_present = false;
  };
  std::string parent;
  std::vector<Member> removed;    // fell or vanished
  std::vector<Member> added;      // grew or appeared
  int64_t base = 0, current = 0;  // summed over the members
  Judgement combined;             // of the summed per-step values
};

struct DiffTree {
  ViewKind view = ViewKind::kScope;
  Options options;
  DiffOptions diff;
  // The count the change is ordered and tested by (micros, ...).
  Attr attribute = Attr::kMicros;
  std::vector<DiffNode> nodes;  // nodes[0] is the root
  std::vector<DiffShift> shifts;
  std::shared_ptr<const DiffStepData> step_data;  // the sides' spans
  std::vector<std::string> notes;

  const DiffNode& root() const { return nodes[0]; }
};

// The counts a diff shows per row (see IsCount): the attribute its verdicts
// test (-order_by) first when -select leaves it out, then -select's.
std::vector<Attr> DiffAttributes(const Options& opts);

// Runs `view` with `opts` on both sides and matches the rows: a tree
// view's rows by their path of names, a flat view's (op, kernel) by name
// with their own figures. Each row's per-step values come from one pass
// over each model (one query per step only when the view's options hide
// rows that still count in their parents). -max_depth and the -min_*
// options apply to the matched rows (a row is kept when either side
// reaches the minimums); siblings are ordered by the size of their change
// in the diff's attribute (largest first, then the larger current value,
// then the name).
absl::StatusOr<DiffTree> QueryDiff(ViewKind view, const Options& opts,
                                   const DiffOptions& diff, Views* base,
                                   const Model& base_model, Views* current,
                                   const Model& current_model);

// The steps tables of two runs compared: per measure (wall, accelerator,
// compute, memcpy and idle time, kernel launches, peak bytes), each run's
// per-step values, their medians and the verdict on the change of the mean.
struct StepsDiffRow {
  std::string measure;  // "wall_ns", ..., "kernels", "peak_bytes"
  std::vector<int64_t> base, current;
  int64_t base_median = 0, current_median = 0;
  // Whether each run records the measure (peak bytes need allocator
  // samples); a measure one run lacks is not tested.
  bool base_recorded = true, current_recorded = true;
  Judgement judgement;  // in the measure's unit (nanoseconds, count, bytes)
};
struct StepsDiff {
  double alpha = 0.05;
  MinChange min_change;
  std::vector<StepsDiffRow> rows;
};
StepsDiff DiffSteps(const StepTable& base, const StepTable& current,
                    const DiffOptions& diff);

// The largest clear changes across views: op and kernel rows and cost
// shifts (micros), the steps' wall, accelerator and idle time, and rows
// whose runs or launches per step changed.
struct DiffTopEntry {
  std::string where;  // "op", "kernel", "op shift", "kernel shift", "steps"
  std::string name;
  // Per step, in microseconds (launches and counts for `launches` entries).
  double base = 0, current = 0;
  Judgement judgement;  // time entries
};
struct DiffTop {
  std::vector<DiffTopEntry> changes;   // largest |change| first
  std::vector<DiffTopEntry> launches;  // largest |change| first
  std::vector<std::string> notes;
};
absl::StatusOr<DiffTop> QueryDiffTop(const Options& opts,
                                     const DiffOptions& diff, Views* base,
                                     const Model& base_model, Views* current,
                                     const Model& current_model, size_t limit);

}  // namespace tfprof

#endif  // TFPROF_PROFILER_VIEWS_DIFF_H_
