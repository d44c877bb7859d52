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
#include "re2/re2.h"

namespace tfprof {
namespace {

enum class Unit { kTime, kBytes, kCount };

Unit UnitOf(const std::string& attr) {
  if (absl::StrContains(attr, "micros")) return Unit::kTime;
  if (absl::StrContains(attr, "bytes")) return Unit::kBytes;
  return Unit::kCount;
}

absl::StatusOr<int64_t> ParseValue(const std::string& text, Unit unit) {
  size_t split = 0;
  while (split < text.size() &&
         (absl::ascii_isdigit(static_cast<unsigned char>(text[split])) ||
          text[split] == '.')) {
    ++split;
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
  } else {
    if (suffix.empty()) {
      scale = 1;
    } else if (suffix == "k") {
      scale = 1e3;
    } else if (suffix == "m") {
      scale = 1e6;
    } else if (suffix == "b") {
      scale = 1e9;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown count unit '", suffix, "' in '", text, "' (k, m, b)"));
    }
  }
  const double v = number * scale;
  if (!(v < 9.2e18)) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", text, "' is too large"));
  }
  return static_cast<int64_t>(std::llround(v));
}

int64_t Pick(const NodeStats& s, const std::string& attr) {
  int64_t NodeStats::*member = StatMember<NodeStats>(attr);
  return member != nullptr ? s.*member : s.run_count;  // occurrence
}

// "PASS micros[re] = 4.89ms (limit < 4.00ms, 2 nodes)", with the margin
// of a failure and the base a limit came from.
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
  std::string limit = FormatStat(unit, r.limit);
  if (c.kind != LimitKind::kValue) {
    absl::StrAppend(&limit, " from base ", FormatStat(unit, r.base_value));
  }
  std::string out = absl::StrFormat(
      "%s %s = %s (limit %s %s, %d nodes)", r.passed ? "PASS" : "FAIL", what,
      FormatStat(unit, r.value), c.op, limit, r.matched_nodes);
  if (!r.passed && r.value != r.limit) {
    const int64_t diff =
        r.value > r.limit ? r.value - r.limit : r.limit - r.value;
    const double pct = r.limit != 0
                           ? 100.0 * static_cast<double>(diff) /
                                 static_cast<double>(std::llabs(r.limit))
                           : 0.0;
    absl::StrAppendFormat(&out, ": %s by %s (%.1f%%)",
                          r.value > r.limit ? "over" : "under",
                          FormatStat(unit, diff), pct);
  }
  return out;
}

}  // namespace

const std::vector<std::string>& GateAttributes() {
  static const std::vector<std::string> v = {
      "micros",     "accelerator_micros", "cpu_micros",   "bytes",
      "peak_bytes", "residual_bytes",     "output_bytes", "params",
      "float_ops",  "occurrence"};
  return v;
}

namespace {

// The limit after the operator: VALUE, base, base*FACTOR, base+VALUE,
// base-VALUE.
absl::Status ParseLimit(const std::string& text, Unit unit, Condition* c) {
  if (text.rfind("base", 0) != 0) {
    absl::StatusOr<int64_t> v = ParseValue(text, unit);
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
    absl::StatusOr<int64_t> v = ParseValue(rest.substr(1), unit);
    if (!v.ok()) return v.status();
    c->limit = rest[0] == '-' ? -*v : *v;
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "expected base, base*FACTOR, base+VALUE or base-VALUE, got '", text,
      "'"));
}

bool Compare(int64_t value, const std::string& op, int64_t limit) {
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
  return c;
}

absl::StatusOr<std::vector<GateResult>> EvaluateGates(
    const Model& model, const std::vector<Condition>& conditions, int64_t step,
    const GateBase& base) {
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
    std::unique_ptr<RE2> re;
    if (!c.regex.empty()) re = std::make_unique<RE2>(c.regex, RE2::Quiet);
    std::vector<const GraphNode*> matched;
    for (const auto& node : model.nodes()) {
      if (re != nullptr && !RE2::FullMatch(node->name, *re)) continue;
      matched.push_back(node.get());
      SatInc(&r.value, Pick(node->Stats(step), c.attribute));
    }
    r.matched_nodes = static_cast<int64_t>(matched.size());
    if (base.model != nullptr && !c.significant) {
      for (const auto& node : base.model->nodes()) {
        if (re != nullptr && !RE2::FullMatch(node->name, *re)) continue;
        SatInc(&r.base_value, Pick(node->Stats(step), c.attribute));
      }
    }
    if (c.significant) {
      r.value = CountSignificant(model, *base.model, matched, c.attribute,
                                 base.alpha);
    }
    switch (c.kind) {
      case LimitKind::kValue:
        r.limit = c.limit;
        break;
      case LimitKind::kBaseTimes:
        r.limit = static_cast<int64_t>(
            std::llround(static_cast<double>(r.base_value) * c.factor));
        break;
      case LimitKind::kBasePlus:
        r.limit = SatAdd(r.base_value, c.limit);
        break;
    }
    const bool none = r.matched_nodes == 0 && !c.regex.empty();
    r.passed = none ? c.optional : Compare(r.value, c.op, r.limit);
    results.push_back(std::move(r));
    results.back().message = GateMessage(results.back());
  }
  return results;
}

}  // namespace tfprof
