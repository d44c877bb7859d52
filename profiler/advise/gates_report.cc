#include "profiler/advise/gates_report.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "profiler/base/units.h"

namespace tfprof {
namespace {

// Text as XML character data or an attribute value: the five special
// characters escaped, characters XML 1.0 does not allow dropped.
std::string XmlEscape(const std::string& s) {
  std::string out;
  for (char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') continue;
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += ch;
    }
  }
  return out;
}

int Failures(const std::vector<GateResult>& results) {
  int failed = 0;
  for (const GateResult& r : results) {
    failed += r.passed || r.inconclusive ? 0 : 1;
  }
  return failed;
}

int Inconclusive(const std::vector<GateResult>& results) {
  int open = 0;
  for (const GateResult& r : results) open += r.inconclusive ? 1 : 0;
  return open;
}

std::string Unit(const Condition& c) {
  return c.counts_verdicts() ? "count" : c.attribute;
}

}  // namespace

std::string RenderGatesJUnit(const std::vector<GateResult>& results) {
  const std::string counts =
      absl::StrCat(" tests=\"", results.size(), "\" failures=\"",
                   Failures(results), "\" errors=\"0\"");
  std::string out = absl::StrCat(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<testsuites name=\"tfprof check\"",
      counts, ">\n  <testsuite name=\"tfprof check\"", counts, " skipped=\"",
      Inconclusive(results), "\" time=\"0\">\n");
  for (const GateResult& r : results) {
    absl::StrAppend(&out, "    <testcase classname=\"tfprof.check\" name=\"",
                    XmlEscape(r.condition.text), "\" time=\"0\"");
    if (r.passed) {
      absl::StrAppend(&out, ">\n      <system-out>", XmlEscape(r.message),
                      "</system-out>\n    </testcase>\n");
    } else if (r.inconclusive) {
      // Neither passed nor failed: JUnit's skipped, with the reason.
      absl::StrAppend(&out, ">\n      <skipped message=\"",
                      XmlEscape(r.message), "\"/>\n    </testcase>\n");
    } else {
      absl::StrAppend(&out, ">\n      <failure message=\"",
                      XmlEscape(r.message), "\" type=\"gate\">",
                      XmlEscape(r.message), "</failure>\n    </testcase>\n");
    }
  }
  return out + "  </testsuite>\n</testsuites>\n";
}

std::string RenderGatesMarkdown(const std::vector<GateResult>& results) {
  const int failed = Failures(results), open = Inconclusive(results);
  std::string out = absl::StrCat(
      "**tfprof check**: ", results.size() - failed - open, " passed, ", failed,
      " failed", open > 0 ? absl::StrCat(", ", open, " inconclusive") : "",
      "\n\n| result | condition | value | limit | nodes |\n"
      "| --- | --- | ---: | ---: | ---: |\n");
  for (const GateResult& r : results) {
    const Condition& c = r.condition;
    const bool none = r.MatchedNone();
    std::string limit =
        absl::StrCat(c.op, " ", FormatGateValue(Unit(c), r.limit));
    if (c.kind != LimitKind::kValue) {
      absl::StrAppend(&limit, " (base ", FormatGateValue(Unit(c), r.base_value),
                      ")");
    }
    const std::string value = none ? "matched no node"
                              : !r.unknown.empty()
                                  ? "n/a"
                                  : FormatGateValue(Unit(c), r.value);
    absl::StrAppend(
        &out, "| ",
        r.passed         ? "✅ pass"
        : r.inconclusive ? "❔ inconclusive"
                         : "❌ **fail**",
        " | `", absl::StrReplaceAll(c.text, {{"|", "\\|"}, {"`", "'"}}), "` | ",
        value, " | ", absl::StrReplaceAll(limit, {{"|", "\\|"}}), " | ",
        GateScope(r, true), " |\n");
  }
  return out;
}

}  // namespace tfprof
