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
#include "profiler/base/saturate.h"
#include "profiler/base/stats.h"
#include "profiler/base/units.h"
#include "profiler/views/steps.h"
#include "re2/re2.h"

namespace tfprof {
namespace {

enum class Unit { kTime, kBytes, kCount, kFraction };

Unit UnitOf(const std::string& attr) {
  if (absl::StrContains(attr, "micros")) return Unit::kTime;
  if (absl::StrContains(attr, "bytes")) return Unit::kBytes;
  if (attr == "mfu") return Unit::kFraction;
  return Unit::kCount;
}

bool IsRunAttribute(const std::string& attr) {
  return attr == "mfu" || attr == "flops_per_step" || attr == "flop_rate";
}

absl::StatusOr<double> ParseValue(const std::string& text, Unit unit) {
  auto digit = [&](size_t i) {
    return i < text.size() &&
           absl::ascii_isdigit(static_cast<unsigned char>(text[i]));
  };
  size_t split = 0;
  while (digit(split) || (split < text.size() && text[split] == '.')) ++split;
  // An exponent: 3e14, 1.5E-3.
  if (split > 0 && split < text.size() &&
      (text[split] == 'e' || text[split] == 'E')) {
    size_t e = split + 1;
    if (e < text.size() && (text[e] == '+' || text[e] == '-')) ++e;
    if (digit(e)) {
      while (digit(e)) ++e;
      split = e;
    }
  }
  double number;
  if (split == 0 || !absl::SimpleAtod(text.substr(0, split), &number)) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected a number, got '", text, "'"));
  }
  const std::string suffix = text.substr(split);
  double scale = 1;
  if (unit == Unit::kTime) {
    if (suffix.empty() || suffix == "us") {
      scale = 1;
    } else if (suffix == "ms") {
      scale = 1e3;
    } else if (suffix == "s" || suffix == "sec") {
      scale = 1e6;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown time unit '", suffix, "' in '", text, "' (us, ms, s)"));
    }
  } else if (unit == Unit::kBytes) {
    const std::string s = absl::AsciiStrToUpper(suffix);
    if (s.empty() || s == "B") {
      scale = 1;
    } else if (s == "KB") {
      scale = 1e3;
    } else if (s == "MB") {
      scale = 1e6;
    } else if (s == "GB") {
      scale = 1e9;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown size unit '", suffix, "' in '", text, "' (B, KB, MB, GB)"));
    }
  } else if (unit == Unit::kFraction) {
    if (suffix.empty()) {
      scale = 1;
    } else if (suffix == "%") {
      scale = 0.01;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown unit '", suffix, "' in '", text,
          "' (a fraction such as 0.35, or a percentage such as 35%)"));
    }
  } else {
    if (suffix.empty()) {
      scale = 1;
    } else if (suffix == "k") {
      scale = 1e3;
    } else if (suffix == "m") {
      scale = 1e6;
    } else if (suffix == "b") {
      scale = 1e9;
    } else if (suffix == "t") {
      scale = 1e12;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown count unit '", suffix, "' in '", text, "' (k, m, b, t)"));
    }
  }
  const double v = number * scale;
  if (!(v < 9.2e18)) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", text, "' is too large"));
  }
  return v;
}

int64_t Pick(const NodeStats& s, const std::string& attr) {
  int64_t NodeStats::*member = StatMember<NodeStats>(attr);
  return member != nullptr ? s.*member : s.run_count;  // occurrence
}

// "PASS micros[re] = 4.89ms (limit < 4.00ms, 2 nodes)", with the margin
// of a failure and the base a limit came from; run-level terms say "run"
// instead of a node count.
std::string GateMessage(const GateResult& r) {
  const Condition& c = r.condition;
  const std::string unit = c.significant ? "count" : c.attribute;
  const std::string what =
      (c.significant ? "significant(" + c.attribute + ")" : c.attribute) +
      (c.regex.empty() ? "" : "[" + c.regex + "]");
  if (r.matched_nodes == 0 && !c.regex.empty()) {
    return absl::StrFormat("%s %s matched no node%s",
                           r.passed ? "PASS" : "FAIL", what,
                           c.optional ? " (optional)" : "");
  }
  std::string limit = FormatGateValue(unit, r.limit);
  if (c.kind != LimitKind::kValue) {
    absl::StrAppend(&limit, " from base ", FormatGateValue(unit, r.base_value));
  }
  const std::string scope =
      c.RunLevel() ? "run" : absl::StrCat(r.matched_nodes, " nodes");
  if (!r.unknown.empty()) {
    return absl::StrFormat("%s %s = n/a (%s) (limit %s %s, %s)",
                           r.passed ? "PASS" : "FAIL", what, r.unknown, c.op,
                           limit, scope);
  }
  std::string out = absl::StrFormat(
      "%s %s = %s (limit %s %s, %s)", r.passed ? "PASS" : "FAIL", what,
      FormatGateValue(unit, r.value), c.op, limit, scope);
  if (!r.passed && r.value != r.limit) {
    const double diff = std::abs(r.value - r.limit);
    const double pct = r.limit != 0 ? 100.0 * diff / std::abs(r.limit) : 0.0;
    absl::StrAppendFormat(
        &out, ": %s by %s (%.1f%%)", r.value > r.limit ? "over" : "under",
        unit == "mfu" ? absl::StrFormat("%.2f points", 100 * diff)
                      : FormatGateValue(unit, diff),
        pct);
  }
  return out;
}

}  // namespace

const std::vector<std::string>& GateAttributes() {
  static const std::vector<std::string> v = {
      "micros",     "accelerator_micros", "cpu_micros",   "bytes",
      "peak_bytes", "residual_bytes",     "output_bytes", "params",
      "float_ops",  "occurrence",         "mfu",          "flops_per_step",
      "flop_rate"};
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
  const Unit u = UnitOf(unit);
  return absl::StrFormat("%.4g%s", v,
                         u == Unit::kTime    ? "us"
                         : u == Unit::kBytes ? "B"
                                             : "");
}

namespace {

// The limit after the operator: VALUE, base, base*FACTOR, base+VALUE,
// base-VALUE.
absl::Status ParseLimit(const std::string& text, Unit unit, Condition* c) {
  if (text.rfind("base", 0) != 0) {
    absl::StatusOr<double> v = ParseValue(text, unit);
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
    absl::StatusOr<double> v = ParseValue(rest.substr(1), unit);
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

// Each step's value of `attr` for a node (0 where it did not run).
std::vector<int64_t> PerStep(const Model& model, const GraphNode* node,
                             const std::string& attr) {
  std::vector<int64_t> out;
  for (int64_t step : model.steps()) {
    out.push_back(node == nullptr ? 0 : Pick(node->Stats(step), attr));
  }
  return out;
}

// The matched nodes whose `attr` changed significantly against the base:
// Mann-Whitney U on their per-step values, Benjamini-Hochberg over them.
int64_t CountSignificant(const Model& model, const Model& base,
                         const std::vector<const GraphNode*>& nodes,
                         const std::string& attr, double alpha) {
  std::vector<double> p;
  for (const GraphNode* n : nodes) {
    p.push_back(MannWhitneyP(PerStep(base, base.Find(n->name), attr),
                             PerStep(model, n, attr)));
  }
  int64_t count = 0;
  for (double q : BenjaminiHochberg(p)) count += q <= alpha;
  return count;
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

// A run-level figure for `step` (-1: the run's means); false with *unknown
// set when it is not known.
bool RunValue(const Model& model, int64_t step, const std::string& attr,
              const PeakOverride& peaks, double* value, std::string* unknown) {
  const StepTable steps = ComputeSteps(model);
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
void RunGate(const Model& model, const Model* base, int64_t step,
             const PeakOverride& peaks, GateResult* r) {
  const Condition& c = r->condition;
  std::string unknown;
  const bool known =
      RunValue(model, step, c.attribute, peaks, &r->value, &unknown);
  bool base_known = true;
  if (base != nullptr && c.kind != LimitKind::kValue) {
    std::string base_unknown;
    base_known = RunValue(*base, step, c.attribute, peaks, &r->base_value,
                          &base_unknown);
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
  if (s.rfind("significant(", 0) == 0) {
    c.significant = true;
    i = std::string("significant(").size();
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
  if (c.significant) {
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
  absl::Status limit =
      ParseLimit(s.substr(i + c.op.size()),
                 c.significant ? Unit::kCount : UnitOf(c.attribute), &c);
  if (!limit.ok()) return bad(std::string(limit.message()));
  if (c.significant && c.kind != LimitKind::kValue) {
    return bad("significant() counts nodes: compare it with a number");
  }
  if (c.RunLevel() && (c.significant || !c.regex.empty() || c.optional)) {
    return bad(absl::StrCat(c.attribute,
                            " is a figure of the whole run: no [REGEX], ?, "
                            "or significant()"));
  }
  return c;
}

absl::StatusOr<std::vector<GateResult>> EvaluateGates(
    const Model& model, const std::vector<Condition>& conditions, int64_t step,
    const GateBase& base, const PeakOverride& peaks) {
  if (step >= 0 && !model.steps().count(step)) {
    return absl::InvalidArgumentError(
        absl::StrCat("check: step ", step, " is not in the profile"));
  }
  std::vector<GateResult> results;
  for (const Condition& c : conditions) {
    if (c.NeedsBase() && base.model == nullptr) {
      return absl::FailedPreconditionError(absl::StrCat(
          "check '", c.text,
          "' compares with a base run: load one with 'base FILE' or "
          "--base_profile_path / --base_trace_path ..."));
    }
    if (c.significant &&
        (model.steps().size() < 3 || base.model->steps().size() < 3)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "check '", c.text,
          "': significance needs 3 or more steps on each side (base ",
          base.model->steps().size(), ", current ", model.steps().size(), ")"));
    }
    GateResult r;
    r.condition = c;
    if (c.RunLevel()) {
      RunGate(model, base.model, step, peaks, &r);
      results.push_back(std::move(r));
      results.back().message = GateMessage(results.back());
      continue;
    }
    std::unique_ptr<RE2> re;
    if (!c.regex.empty()) re = std::make_unique<RE2>(c.regex, RE2::Quiet);
    std::vector<const GraphNode*> matched;
    int64_t value = 0, base_value = 0;
    for (const auto& node : model.nodes()) {
      if (re != nullptr && !RE2::FullMatch(node->name, *re)) continue;
      matched.push_back(node.get());
      SatInc(&value, Pick(node->Stats(step), c.attribute));
    }
    r.matched_nodes = static_cast<int64_t>(matched.size());
    if (base.model != nullptr && !c.significant) {
      for (const auto& node : base.model->nodes()) {
        if (re != nullptr && !RE2::FullMatch(node->name, *re)) continue;
        SatInc(&base_value, Pick(node->Stats(step), c.attribute));
      }
    }
    if (c.significant) {
      value = CountSignificant(model, *base.model, matched, c.attribute,
                               base.alpha);
    }
    r.value = static_cast<double>(value);
    r.base_value = static_cast<double>(base_value);
    r.limit = Limit(c, r.base_value);
    const bool none = r.matched_nodes == 0 && !c.regex.empty();
    r.passed = none ? c.optional : Compare(r.value, c.op, r.limit);
    results.push_back(std::move(r));
    results.back().message = GateMessage(results.back());
  }
  return results;
}

}  // namespace tfprof
