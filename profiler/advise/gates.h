// Gates for CI: threshold checks on a profile ("params <= 1m",
// "micros[.*Conv.*] < 20ms") and, against a base run, on the diff's
// verdicts ("regressed(micros) == 0"), each reported as passed, failed or
// (verdict terms) inconclusive.
#ifndef TFPROF_PROFILER_ADVISE_GATES_H_
#define TFPROF_PROFILER_ADVISE_GATES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "profiler/model/model.h"
#include "profiler/views/diff.h"
#include "profiler/views/flops.h"
#include "profiler/views/steps.h"

namespace tfprof {

// How a condition's limit is given: a number, or from the base run.
enum class LimitKind {
  kValue,      // ATTR OP VALUE
  kBaseTimes,  // ATTR OP base*FACTOR (or just base: factor 1)
  kBasePlus,   // ATTR OP base+VALUE / base-VALUE
};

// Verdict terms count the matched nodes whose change against the base run
// has a verdict: significant(ATTR) regressed or improved, regressed(ATTR)
// and improved(ATTR) those alone.
enum class VerdictTerm { kNone, kSignificant, kRegressed, kImproved };

struct Condition {
  std::string text;       // as written
  std::string attribute;  // micros, bytes, params, ..., mfu
  // A node-level term's count, parsed from `attribute` (see RunLevel()).
  Attr stat = Attr::kMicros;
  std::string regex;  // node names to sum over; empty = all nodes
  VerdictTerm verdicts = VerdictTerm::kNone;
  // ATTR[REGEX]?: passes when the regex matches no node (otherwise a term
  // that matches nothing fails, so that a typo cannot switch a gate off).
  bool optional = false;
  std::string op;          // <=, <, >=, >, ==, !=
  std::string limit_text;  // what follows the operator, spaces removed
  LimitKind kind = LimitKind::kValue;
  double limit = 0;     // kValue, or kBasePlus's VALUE (signed)
  double factor = 1.0;  // kBaseTimes
  bool counts_verdicts() const { return verdicts != VerdictTerm::kNone; }
  bool NeedsBase() const {
    return counts_verdicts() || kind != LimitKind::kValue;
  }
  // A figure of the whole run (mfu, flops_per_step, flop_rate), not a sum
  // over nodes: no [REGEX], no verdict terms.
  bool RunLevel() const;
};

// Parses "ATTR[REGEX]? OP LIMIT" (spaces optional, [REGEX] and ? optional)
// or "significant(ATTR)[REGEX] OP COUNT" (also regressed(...) and
// improved(...)). LIMIT is a VALUE, "base", "base*FACTOR", "base+VALUE" or
// "base-VALUE". VALUE is a number, fractions included ("params >= 0.35"
// compares with 0.35), exponents too ("3e14"), and may carry a unit:
// us/ms/s for times, B/KB/MB/GB for bytes (decimal), k/m/b/t for counts
// and float ops, % for mfu ("mfu >= 35%" is "mfu >= 0.35").
absl::StatusOr<Condition> ParseCondition(const std::string& text);

struct GateResult {
  Condition condition;
  double value = 0;
  double limit = 0;  // the limit it was compared with
  double base_value = 0;
  int64_t matched_nodes = 0;
  // Nodes of the base the regex matched (-1: the base was not read). None
  // while the run has some: the message says so (a base saved by an older
  // build may name nodes otherwise, e.g. "aten.mm" for "aten::mm").
  int64_t base_matched_nodes = -1;
  // Verdict terms: matched nodes whose verdict is inconclusive and could
  // still count (for regressed(): an interval reaching above the floor),
  // and the most steps per side one of them likely needs.
  int64_t open_nodes = 0;
  int more_steps_needed = 0;
  bool passed = false;
  // A run-level figure that is not known (mfu without a peak): why; the
  // gate fails. A verdict term on too few steps: why; it is inconclusive.
  std::string unknown;
  // A verdict term that passes with some of the open nodes counted and
  // fails with others: neither passed nor failed.
  bool inconclusive = false;
  std::string message;  // one line: PASS/FAIL/INCONCLUSIVE, value, limit
  // The step whose figures were compared (-1: the run's, averaged).
  int64_t step = -1;
  // A [REGEX] that matched no node of the run nor of the base: a typo, not
  // a node that vanished (which compares as 0 with the base's figure).
  bool MatchedNone() const {
    return matched_nodes == 0 && base_matched_nodes <= 0 &&
           !condition.regex.empty();
  }
};

// What a result's value covers, as its line says: "run" or "step N" for a
// run-level term, else the number of nodes matched ("2 nodes"; `bare`:
// "2").
std::string GateScope(const GateResult& r, bool bare);

// The run that conditions with "base" or verdict terms compare with.
struct GateBase {
  const Model* model = nullptr;
  double alpha = 0.05;  // false discovery rate for the verdicts
  MinChange min_change;
  // The current run's steps table for run-level terms when it is not the
  // model's own (several ranks: the job's, whose step is the slowest
  // rank's); null: computed from the model.
  const StepTable* steps = nullptr;
};

// Evaluates the conditions on the nodes' own statistics for `step` (-1:
// averaged over the steps each node ran in). Base nodes are matched by
// name. Run-level terms take the run's figures (views/flops.h) for the step,
// or their means for -1; `peaks` replace the peak table's for mfu.
absl::StatusOr<std::vector<GateResult>> EvaluateGates(
    const Model& model, const std::vector<Condition>& conditions, int64_t step,
    const GateBase& base = GateBase(), const PeakOverride& peaks = {});

// The attributes a condition may name (the node attributes, then the run's).
const std::vector<std::string>& GateAttributes();

// A value of a condition's attribute (or "count") for messages: as the
// attribute's unit prints it ("4.89ms", "451"), fractions as such ("0.35"),
// mfu as a percentage, float ops and rates with SI prefixes.
std::string FormatGateValue(const std::string& unit, double v);

}  // namespace tfprof

#endif  // TFPROF_PROFILER_ADVISE_GATES_H_
