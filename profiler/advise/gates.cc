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

std::string FormatValue(Unit u, int64_t v) {
  switch (u) {
    case Unit::kTime:
      return FormatTime(v);
    case Unit::kBytes:
      return FormatMemory(v);
    case Unit::kCount:
      return FormatNumber(v);
  }
  return "";
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

}  // namespace

const std::vector<std::string>& GateAttributes() {
  static const std::vector<std::string> v = {
      "micros",     "accelerator_micros", "cpu_micros",   "bytes",
      "peak_bytes", "residual_bytes",     "output_bytes", "params",
      "float_ops",  "occurrence"};
  return v;
}

absl::StatusOr<Condition> ParseCondition(const std::string& text) {
  Condition c;
  c.text = text;
  std::string s;
  for (char ch : text) {
    if (!absl::ascii_isspace(static_cast<unsigned char>(ch))) s.push_back(ch);
  }
  size_t i = 0;
  while (
      i < s.size() &&
      (absl::ascii_isalnum(static_cast<unsigned char>(s[i])) || s[i] == '_')) {
    ++i;
  }
  c.attribute = s.substr(0, i);
  const auto& attrs = GateAttributes();
  if (std::find(attrs.begin(), attrs.end(), c.attribute) == attrs.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("check '", text, "': unknown attribute '", c.attribute,
                     "' (one of ", absl::StrJoin(attrs, ", "), ")"));
  }
  if (i < s.size() && s[i] == '[') {
    const size_t close = s.rfind(']');
    if (close == std::string::npos || close < i) {
      return absl::InvalidArgumentError(
          absl::StrCat("check '", text, "': missing ']'"));
    }
    c.regex = s.substr(i + 1, close - i - 1);
    RE2 re(c.regex, RE2::Quiet);
    if (!re.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "check '", text, "': invalid regex '", c.regex, "': ", re.error()));
    }
    i = close + 1;
  }
  for (const char* op : {"<=", ">=", "<", ">"}) {
    if (s.compare(i, std::string(op).size(), op) == 0) {
      c.op = op;
      break;
    }
  }
  if (c.op.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "check '", text, "': expected <=, <, >= or > after the attribute"));
  }
  absl::StatusOr<int64_t> v =
      ParseValue(s.substr(i + c.op.size()), UnitOf(c.attribute));
  if (!v.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("check '", text, "': ", v.status().message()));
  }
  c.limit = *v;
  return c;
}

absl::StatusOr<std::vector<GateResult>> EvaluateGates(
    const Model& model, const std::vector<Condition>& conditions,
    int64_t step) {
  if (step >= 0 && !model.steps().count(step)) {
    return absl::InvalidArgumentError(
        absl::StrCat("check: step ", step, " is not in the profile"));
  }
  std::vector<GateResult> results;
  for (const Condition& c : conditions) {
    GateResult r;
    r.condition = c;
    std::unique_ptr<RE2> re;
    if (!c.regex.empty()) re = std::make_unique<RE2>(c.regex, RE2::Quiet);
    for (const auto& node : model.nodes()) {
      if (re != nullptr && !RE2::FullMatch(node->name, *re)) continue;
      ++r.matched_nodes;
      SatInc(&r.value, Pick(node->Stats(step), c.attribute));
    }
    if (c.op == "<=") r.passed = r.value <= c.limit;
    if (c.op == "<") r.passed = r.value < c.limit;
    if (c.op == ">=") r.passed = r.value >= c.limit;
    if (c.op == ">") r.passed = r.value > c.limit;
    const Unit u = UnitOf(c.attribute);
    const std::string what =
        c.attribute + (c.regex.empty() ? "" : "[" + c.regex + "]");
    r.message = absl::StrFormat("%s %s = %s (limit %s %s, %d nodes)",
                                r.passed ? "PASS" : "FAIL", what,
                                FormatValue(u, r.value), c.op,
                                FormatValue(u, c.limit), r.matched_nodes);
    if (!r.passed) {
      const int64_t diff =
          r.value > c.limit ? r.value - c.limit : c.limit - r.value;
      const double pct = c.limit != 0
                             ? 100.0 * static_cast<double>(diff) /
                                   static_cast<double>(std::llabs(c.limit))
                             : 0.0;
      absl::StrAppendFormat(&r.message, ": %s by %s (%.1f%%)",
                            r.value > c.limit ? "over" : "under",
                            FormatValue(u, diff), pct);
    }
    results.push_back(std::move(r));
  }
  return results;
}

}  // namespace tfprof
