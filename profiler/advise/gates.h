// Gates for CI: threshold checks on a profile ("params <= 1m",
// "micros[.*Conv.*] < 20ms"), each reported as passed or failed.
#ifndef TFPROF_PROFILER_ADVISE_GATES_H_
#define TFPROF_PROFILER_ADVISE_GATES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "profiler/model/model.h"

namespace tfprof {

struct Condition {
  std::string text;       // as written
  std::string attribute;  // micros, bytes, params, ...
  std::string regex;      // node names to sum over; empty = all nodes
  std::string op;         // <=, <, >=, >
  int64_t limit = 0;
};

// Parses "ATTR[REGEX] OP VALUE" (spaces optional, [REGEX] optional). VALUE
// may carry a unit: us/ms/s for times, B/KB/MB/GB for bytes (decimal),
// k/m/b for counts.
absl::StatusOr<Condition> ParseCondition(const std::string& text);

struct GateResult {
  Condition condition;
  int64_t value = 0;
  int64_t matched_nodes = 0;
  bool passed = false;
  std::string message;  // one line: PASS/FAIL, value, limit, margin
};

// Evaluates the conditions on the nodes' own statistics for `step` (-1:
// averaged over the steps each node ran in).
absl::StatusOr<std::vector<GateResult>> EvaluateGates(
    const Model& model, const std::vector<Condition>& conditions, int64_t step);

// The attributes a condition may name.
const std::vector<std::string>& GateAttributes();

}  // namespace tfprof

#endif  // TFPROF_PROFILER_ADVISE_GATES_H_
