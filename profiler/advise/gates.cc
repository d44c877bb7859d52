#include "profiler/advise/gates.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "profiler/base/saturate.h"
#include "profiler/base/stats.h"
#include "profiler/base/units.h"
#include "profiler/views/diff_samples.h"
#include "profiler/views/steps.h"
#include "re2/re2.h"

namespace tfprof {
namespace {

bool IsRunAttribute(const std::string& attr) {
  return attr == "mfu" || attr == "flops_per_step" || attr == "flop_rate" ||
         attr == "step_micros" || attr == "peak_memory_bytes";
}

const char* TermName(VerdictTerm t) {
  switch (t) {
    case VerdictTerm::kSignificant:
      return "significant";
    case VerdictTerm::kRegressed:
      return "regressed";
    case VerdictTerm::kImproved:
      return "improved";
    case VerdictTerm::kNone:
      break;
  }
  return "";
}

// "PASS micros[re] = 4.89ms (limit < 4.00ms, 2 nodes)", with the margin
// of a failure and the base a limit came from; run-level terms say "run"
// (or "step N") instead of a node count; a verdict term's open nodes.
std::string GateMessage(const GateResult& r) {
  const Condition& c = r.condition;
  const bool counts = c.counts_verdicts();
  const std::string unit = counts ? "count" : c.attribute;
  const std::string what =
      (counts ? absl::StrCat(TermName(c.verdicts), "(", c.attribute, ")")
              : c.attribute) +
      (c.regex.empty() ? "" : "[" + c.regex + "]");
  const char* outcome = r.inconclusive ? "INCONCLUSIVE"
                        : r.passed     ? "PASS"
                                       : "FAIL";
  if (r.MatchedNone()) {
    return absl::StrFormat("%s %s matched no node%s", outcome, what,
                           c.optional ? " (optional)" : "");
  }
  std::string limit = FormatGateValue(unit, r.limit);
  if (c.kind != LimitKind::kValue) {
    absl::StrAppend(&limit, " from base ", FormatGateValue(unit, r.base_value),
                    r.base_matched_nodes == 0 && !c.regex.empty()
                        ? " (no node of the base matches)"
                        : "");
  }
  const std::string scope = GateScope(r, false);
  if (!r.unknown.empty()) {
    // A limit the base could not give is shown as written ("base*2").
    if (absl::StartsWith(r.unknown, "base: ")) limit = c.limit_text;
    return absl::StrFormat("%s %s = n/a (%s) (limit %s %s, %s)", outcome, what,
                           r.unknown, c.op, limit, scope);
  }
  std::string out =
      absl::StrFormat("%s %s = %s (limit %s %s, %s)", outcome, what,
                      FormatGateValue(unit, r.value), c.op, limit, scope);
  if (r.inconclusive) {
    absl::StrAppendFormat(&out,
                          ": %d more node%s could count, inconclusive with "
                          "these steps (~%d%s more per side would likely "
                          "decide)",
                          r.open_nodes, r.open_nodes == 1 ? "" : "s",
                          r.more_steps_needed,
                          r.more_steps_needed >= kDiffMaxMoreSteps ? "+" : "");
  } else if (!r.passed && r.value != r.limit) {
    const double diff = std::abs(r.value - r.limit);
    // A share of a zero limit means nothing: none then.
    absl::StrAppendFormat(
        &out, ": %s by %s%s", r.value > r.limit ? "over" : "under",
        unit == "mfu" ? absl::StrFormat("%.2f points", 100 * diff)
                      : FormatGateValue(unit, diff),
        r.limit != 0
            ? absl::StrFormat(" (%.1f%%)", 100.0 * diff / std::abs(r.limit))
            : std::string());
  }
  return out;
}

}  // namespace

std::string GateScope(const GateResult& r, bool bare) {
  if (r.condition.RunLevel()) {
    return r.step >= 0 ? absl::StrCat("step ", r.step) : "run";
  }
  return bare ? absl::StrCat(r.matched_nodes)
              : absl::StrCat(r.matched_nodes,
                             r.matched_nodes == 1 ? " node" : " nodes");
}

const std::vector<std::string>& GateAttributes() {
  static const std::vector<std::string> v = {"micros",
                                             "accelerator_micros",
                                             "cpu_micros",
                                             "bytes",
                                             "peak_bytes",
                                             "residual_bytes",
                                             "output_bytes",
                                             "params",
                                             "float_ops",
                                             "occurrence",
                                             "mfu",
                                             "flops_per_step",
                                             "flop_rate",
                                             "step_micros",
                                             "peak_memory_bytes"};
  return v;
}

bool Condition::RunLevel() const { return IsRunAttribute(attribute); }

std::string FormatGateValue(const std::string& unit, double v) {
  if (unit == "mfu") return absl::StrFormat("%.2f%%", 100 * v);
  if (unit == "flops_per_step") return FormatFlopCount(v);
  if (unit == "flop_rate") return FormatFlopRate(v);
  const double whole = std::round(v);
  if (std::abs(v - whole) < 1e-9 && std::abs(whole) < 9.2e18) {
    return FormatStat(unit, static_cast<int64_t>(whole));
  }
  // Fractions of a byte, or of a microsecond past a millisecond, are not
  // worth showing: in the unit's own form, as the values are ("59.40ms",
  // not "5.94e+04us").
  const StatUnit u = UnitOfStat(unit);
  // Below a millisecond times print in whole microseconds: a limit with a
  // fraction of one ("47.5us") keeps it.
  if (u == StatUnit::kTime && std::abs(v) < 999.5) {
    return absl::StrFormat("%gus", v);
  }
  if ((u == StatUnit::kTime || u == StatUnit::kBytes) &&
      std::abs(whole) < 9.2e18) {
    return FormatStat(unit, static_cast<int64_t>(whole));
  }
  return absl::StrFormat("%.4g", v);
}

namespace {

// The limit after the operator: VALUE, base, base*FACTOR, base+VALUE,
// base-VALUE.
absl::Status ParseLimit(const std::string& text, StatUnit unit, Condition* c) {
  if (text.rfind("base", 0) != 0) {
    absl::StatusOr<double> v = ParseStatNumber(text, unit);
    if (!v.ok()) return v.status();
    c->limit = *v;
    return absl::OkStatus();
  }
  const std::string rest = text.substr(4);
  if (rest.empty()) {
    c->kind = LimitKind::kBaseTimes;
    return absl::OkStatus();
  }
  if (rest[0] == '*') {
    c->kind = LimitKind::kBaseTimes;
    if (!absl::SimpleAtod(rest.substr(1), &c->factor) ||
        !(c->factor >= 0 && c->factor < 1e6)) {
      return absl::InvalidArgumentError(
          absl::StrCat("expected base*FACTOR, got '", text, "'"));
    }
    return absl::OkStatus();
  }
  if (rest[0] == '+' || rest[0] == '-') {
    c->kind = LimitKind::kBasePlus;
    absl::StatusOr<double> v = ParseStatNumber(rest.substr(1), unit);
    if (!v.ok()) return v.status();
    c->limit = rest[0] == '-' ? -*v : *v;
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "expected base, base*FACTOR, base+VALUE or base-VALUE, got '", text,
      "'"));
}

bool Compare(double value, const std::string& op, double limit) {
  if (op == "<=") return value <= limit;
  if (op == "<") return value < limit;
  if (op == ">=") return value >= limit;
  if (op == ">") return value > limit;
  if (op == "==") return value == limit;
  return value != limit;  // !=
}

// Whether the verdict counts for the term, and whether an inconclusive one
// could still come to count.
bool Counts(VerdictTerm term, const Judgement& j) {
  const bool up = j.verdict == Verdict::kRegressed;
  const bool down = j.verdict == Verdict::kImproved;
  return term == VerdictTerm::kSignificant ? up || down
         : term == VerdictTerm::kRegressed ? up
                                           : down;
}
bool CouldCount(VerdictTerm term, const Judgement& j) {
  if (j.verdict != Verdict::kInconclusive) return false;
  const bool up = !j.tested || j.ci_high > j.floor;
  const bool down = !j.tested || j.ci_low < -j.floor;
  return term == VerdictTerm::kSignificant ? up || down
         : term == VerdictTerm::kRegressed ? up
                                           : down;
}

// The matched nodes' verdicts against the base (the diff's: per-step
// values and occurrence jitter, the floor, Benjamini-Hochberg over the
// matched nodes): those that count into r->value, those still open into
// r->open_nodes.
void CountVerdicts(const Model& model, const GateBase& base,
                   const std::vector<const GraphNode*>& matched,
                   const std::vector<const GraphNode*>& vanished,
                   const Condition& c, GateResult* r) {
  // The matched nodes beside the base's nodes of their names, then the
  // base's matched nodes the run lacks (nullptr: zeros), as diff pairs them.
  std::vector<const GraphNode*> nodes = matched, in_base;
  for (const GraphNode* n : matched) {
    in_base.push_back(base.model->Find(n->name));
  }
  for (const GraphNode* n : vanished) {
    nodes.push_back(nullptr);
    in_base.push_back(n);
  }
  const std::vector<NodeSample> current = NodeSamples(model, nodes, c.stat);
  const std::vector<NodeSample> before =
      NodeSamples(*base.model, in_base, c.stat);
  std::vector<ChangeInput> inputs(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    ChangeInput& in = inputs[i];
    in.current = current[i].per_step;
    in.current_jitter = current[i].jitter;
    in.base = before[i].per_step;  // zeros for a node the base lacks
    in.base_jitter = before[i].jitter;
    SetFloor(base.min_change, UnitOfStat(c.attribute), &in);
  }
  for (const Judgement& j : JudgeChanges(inputs, base.alpha)) {
    r->value += Counts(c.verdicts, j);
    if (CouldCount(c.verdicts, j)) {
      ++r->open_nodes;
      r->more_steps_needed =
          std::max(r->more_steps_needed, j.more_steps_needed);
    }
  }
}

// Whether the comparison passes for every count from value to value +
// open (1), fails for every one (0), or depends on it (-1).
int CompareRange(double low, double high, const std::string& op, double limit) {
  if (op == "==" || op == "!=") {
    const bool all_equal = low == high && low == limit;
    const bool none_equal = limit < low || limit > high;
    if (all_equal || none_equal) return (all_equal == (op == "==")) ? 1 : 0;
    return -1;
  }
  const bool a = Compare(low, op, limit), b = Compare(high, op, limit);
  return a == b ? (a ? 1 : 0) : -1;
}

// The limit a condition compares with, given the base's value.
double Limit(const Condition& c, double base_value) {
  switch (c.kind) {
    case LimitKind::kValue:
      break;
    case LimitKind::kBaseTimes:
      return base_value * c.factor;
    case LimitKind::kBasePlus:
      return base_value + c.limit;
  }
  return c.limit;
}

// A step's wall time in microseconds (step -1: the mean over the steps);
// false with *unknown set when the table has no such step.
bool StepMicros(const StepTable& steps, int64_t step, double* value,
                std::string* unknown) {
  double sum = 0;
  int64_t n = 0;
  for (const StepRow& row : steps.rows) {
    if (step >= 0 && row.step != step) continue;
    sum += static_cast<double>(row.wall_ns) / 1e3;
    ++n;
  }
  if (n == 0) {
    *unknown = step < 0 ? "no steps" : absl::StrCat("no step ", step);
    return false;
  }
  *value = sum / static_cast<double>(n);
  return true;
}

// The most bytes an allocator had in use in `step` (-1: in any step), as
// the steps table's peak memory column reads the trace's memory events.
bool PeakMemory(const StepTable& steps, int64_t step, double* value,
                std::string* unknown) {
  int64_t peak = 0;
  bool found = false;
  for (const StepRow& row : steps.rows) {
    if (step >= 0 && row.step != step) continue;
    found = true;
    peak = std::max(peak, row.peak_bytes);
  }
  if (!found || peak <= 0) {
    *unknown = !found ? (step < 0 ? std::string("no steps")
                                  : absl::StrCat("no step ", step))
                      : std::string(
                            "no memory events (a trace recorded with "
                            "profile_memory has them)");
    return false;
  }
  *value = static_cast<double>(peak);
  return true;
}

// A run-level figure for `step` (-1: the run's means); false with *unknown
// set when it is not known. `table`: the run's steps table when it is not
// the model's own (several ranks: the job's).
bool RunValue(const Model& model, const StepTable* table, int64_t step,
              const std::string& attr, const PeakOverride& peaks, double* value,
              std::string* unknown) {
  const StepTable steps = table != nullptr ? *table : ComputeSteps(model);
  if (attr == "step_micros") return StepMicros(steps, step, value, unknown);
  if (attr == "peak_memory_bytes") {
    return PeakMemory(steps, step, value, unknown);
  }
  const RunFlops f = ComputeRunFlops(model, steps, peaks);
  if (step < 0) {
    if (attr == "flops_per_step") {
      *value = static_cast<double>(f.flops_per_step);
    } else if (attr == "flop_rate") {
      *value = f.flop_rate;
    } else if (f.mfu.has_value()) {
      *value = *f.mfu;
    } else {
      *unknown = f.flops_per_step <= 0    ? "no float ops"
                 : f.peak.unknown.empty() ? "no step wall time"
                                          : f.peak.unknown;
      return false;
    }
    return true;
  }
  const auto flops = f.step_flops.find(step);
  const int64_t step_flops = flops == f.step_flops.end() ? 0 : flops->second;
  int64_t wall = 0;
  for (const StepRow& row : steps.rows) {
    if (row.step == step) wall = row.wall_ns;
  }
  if (attr == "flops_per_step") {
    *value = static_cast<double>(step_flops);
  } else if (attr == "flop_rate") {
    *value = wall > 0 ? static_cast<double>(step_flops) /
                            (static_cast<double>(wall) * 1e-9)
                      : 0;
  } else if (f.step_mfu.count(step)) {
    *value = f.step_mfu.at(step);
  } else {
    *unknown = step_flops <= 0 ? "no float ops in the step"
               : !f.peak.unknown.empty()
                   ? f.peak.unknown
                   : absl::StrCat("no MFU for step ", step);
    return false;
  }
  return true;
}

// A run-level gate: the figure of the run (and of the base).
void RunGate(const Model& model, const StepTable* table, const Model* base,
             int64_t step, const PeakOverride& peaks, GateResult* r) {
  const Condition& c = r->condition;
  std::string unknown;
  const bool known =
      RunValue(model, table, step, c.attribute, peaks, &r->value, &unknown);
  bool base_known = true;
  if (base != nullptr && c.kind != LimitKind::kValue) {
    std::string base_unknown;
    // A base without the step has no figure for it (not a 0).
    base_known = step < 0 || base->steps().count(step) > 0;
    if (!base_known) {
      base_unknown = absl::StrCat("no step ", step);
    } else {
      base_known = RunValue(*base, nullptr, step, c.attribute, peaks,
                            &r->base_value, &base_unknown);
    }
    if (!base_known && unknown.empty()) unknown = "base: " + base_unknown;
  }
  r->limit = Limit(c, r->base_value);
  if (!known || !base_known) {
    r->unknown = unknown;
    r->passed = false;
    return;
  }
  r->passed = Compare(r->value, c.op, r->limit);
}

}  // namespace

absl::StatusOr<Condition> ParseCondition(const std::string& text) {
  Condition c;
  c.text = text;
  std::string s;
  for (char ch : text) {
    if (!absl::ascii_isspace(static_cast<unsigned char>(ch))) s.push_back(ch);
  }
  auto bad = [&](const std::string& what) {
    return absl::InvalidArgumentError(
        absl::StrCat("check '", text, "': ", what));
  };
  size_t i = 0;
  for (VerdictTerm t : {VerdictTerm::kSignificant, VerdictTerm::kRegressed,
                        VerdictTerm::kImproved}) {
    const std::string open = absl::StrCat(TermName(t), "(");
    if (s.rfind(open, 0) == 0) {
      c.verdicts = t;
      i = open.size();
    }
  }
  const size_t name_start = i;
  while (
      i < s.size() &&
      (absl::ascii_isalnum(static_cast<unsigned char>(s[i])) || s[i] == '_')) {
    ++i;
  }
  c.attribute = s.substr(name_start, i - name_start);
  const auto& attrs = GateAttributes();
  if (std::find(attrs.begin(), attrs.end(), c.attribute) == attrs.end()) {
    return bad(absl::StrCat("unknown attribute '", c.attribute, "' (one of ",
                            absl::StrJoin(attrs, ", "), ")"));
  }
  if (std::optional<Attr> stat = ParseAttr(c.attribute); stat.has_value()) {
    c.stat = *stat;
  }
  if (c.counts_verdicts()) {
    if (i >= s.size() || s[i] != ')') return bad("missing ')'");
    ++i;
  }
  if (i < s.size() && s[i] == '[') {
    const size_t close = s.rfind(']');
    if (close == std::string::npos || close < i) return bad("missing ']'");
    c.regex = s.substr(i + 1, close - i - 1);
    RE2 re(c.regex, RE2::Quiet);
    if (!re.ok()) {
      return bad(absl::StrCat("invalid regex '", c.regex, "': ", re.error()));
    }
    i = close + 1;
  }
  if (i < s.size() && s[i] == '?') {
    c.optional = true;
    ++i;
  }
  for (const char* op : {"<=", ">=", "==", "!=", "<", ">"}) {
    if (s.compare(i, std::string(op).size(), op) == 0) {
      c.op = op;
      break;
    }
  }
  if (c.op.empty()) {
    return bad("expected <=, <, >=, >, == or != after the attribute");
  }
  c.limit_text = s.substr(i + c.op.size());
  absl::Status limit = ParseLimit(
      c.limit_text,
      c.counts_verdicts() ? StatUnit::kCount : UnitOfStat(c.attribute), &c);
  if (!limit.ok()) return bad(std::string(limit.message()));
  if (c.counts_verdicts() && c.kind != LimitKind::kValue) {
    return bad(absl::StrCat(TermName(c.verdicts),
                            "() counts nodes: compare it with a number"));
  }
  if (c.RunLevel() && (c.counts_verdicts() || !c.regex.empty() || c.optional)) {
    return bad(absl::StrCat(c.attribute,
                            " is a figure of the whole run: no [REGEX], ?, "
                            "or verdict terms"));
  }
  return c;
}

absl::StatusOr<std::vector<GateResult>> EvaluateGates(
    const Model& model, const std::vector<Condition>& conditions, int64_t step,
    const GateBase& base, const PeakOverride& peaks) {
  if (step < -1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "check: -step needs a step number (or -1, every step), not '", step,
        "'"));
  }
  if (step >= 0 && !model.steps().count(step)) {
    return absl::NotFoundError(
        absl::StrCat("check: step ", step, " is not in the profile"));
  }
  std::vector<GateResult> results;
  for (const Condition& c : conditions) {
    if (step >= 0 && c.counts_verdicts()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "check: '", c.text,
          "' judges the change over every step of both runs; it does not "
          "take -step (give -step to a separate check of the other "
          "conditions)"));
    }
    if (c.NeedsBase() && base.model == nullptr) {
      return absl::FailedPreconditionError(absl::StrCat(
          "check '", c.text,
          "' compares with a base run: load one with 'base FILE' or "
          "--base_profile_path / --base_trace_path ..."));
    }
    GateResult r;
    r.condition = c;
    r.step = step;
    if (c.RunLevel()) {
      RunGate(model, base.steps, base.model, step, peaks, &r);
      results.push_back(std::move(r));
      results.back().message = GateMessage(results.back());
      continue;
    }
    std::unique_ptr<RE2> re;
    if (!c.regex.empty()) {
      re = std::make_unique<RE2>(c.regex, RE2::Quiet);
    }
    std::vector<const GraphNode*> matched, vanished;
    int64_t value = 0, base_value = 0;
    for (const auto& node : model.nodes()) {
      if (re != nullptr && !RE2::FullMatch(node->name, *re)) continue;
      matched.push_back(node.get());
      SatInc(&value, Value(node->Stats(step), c.stat));
    }
    r.matched_nodes = static_cast<int64_t>(matched.size());
    if (base.model != nullptr && c.NeedsBase()) {
      r.base_matched_nodes = 0;
      for (const auto& node : base.model->nodes()) {
        if (re != nullptr && !RE2::FullMatch(node->name, *re)) continue;
        ++r.base_matched_nodes;
        SatInc(&base_value, Value(node->Stats(step), c.stat));
        if (model.Find(node->name) == nullptr) vanished.push_back(node.get());
      }
    }
    // A base without the step has nothing to compare with (not a 0); a
    // node's parameters are the same in every step.
    if (step >= 0 && base.model != nullptr && c.NeedsBase() &&
        c.stat != Attr::kParams && !r.MatchedNone() &&
        base.model->steps().count(step) == 0) {
      r.unknown = absl::StrCat("base: no step ", step);
      results.push_back(std::move(r));
      results.back().message = GateMessage(results.back());
      continue;
    }
    // Several ranks: the mean per rank, as the views show it.
    r.value = static_cast<double>(value / model.ranks());
    r.base_value = static_cast<double>(
        base.model == nullptr ? base_value : base_value / base.model->ranks());
    if (c.counts_verdicts()) {
      r.value = 0;
      r.matched_nodes += static_cast<int64_t>(vanished.size());
      if (!r.MatchedNone() && (model.steps().size() < kDiffMinSteps ||
                               base.model->steps().size() < kDiffMinSteps)) {
        // Not decidable with these runs: neither passed nor failed.
        r.inconclusive = true;
        r.unknown = absl::StrCat("verdicts need ", kDiffMinSteps,
                                 " or more steps on each side: base ",
                                 base.model->steps().size(), ", current ",
                                 model.steps().size());
        r.limit = Limit(c, r.base_value);
        results.push_back(std::move(r));
        results.back().message = GateMessage(results.back());
        continue;
      }
      CountVerdicts(model, base, matched, vanished, c, &r);
    }
    r.limit = Limit(c, r.base_value);
    const bool none = r.MatchedNone();
    const int outcome =
        none ? (c.optional ? 1 : 0)
             : CompareRange(r.value, r.value + r.open_nodes, c.op, r.limit);
    r.passed = outcome == 1;
    r.inconclusive = outcome == -1;
    results.push_back(std::move(r));
    results.back().message = GateMessage(results.back());
  }
  return results;
}

}  // namespace tfprof
