#include "profiler/render/render_diff.h"

#include <functional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"
#include "profiler/base/json_writer.h"
#include "profiler/base/units.h"

namespace tfprof {
namespace {

// One attribute of a row on both sides.
struct Change {
  int64_t base = 0, current = 0;
  int64_t delta() const { return current - base; }
  // "+25.0%", or "new" / "" when the base is 0.
  std::string Ratio() const {
    if (base == 0) return current == 0 ? "" : "new";
    return absl::StrFormat("%+.1f%%", 100.0 * static_cast<double>(delta()) /
                                          static_cast<double>(base));
  }
};

Change ChangeOf(const DiffNode& n, const std::string& attribute) {
  Change c;
  DiffValue(n.base.total, attribute, &c.base);
  DiffValue(n.current.total, attribute, &c.current);
  return c;
}

const char* Presence(const DiffNode& n) {
  if (n.base.present && n.current.present) return "both";
  return n.base.present ? "base" : "current";
}

// Calls fn(node, depth) depth first from the root.
void ForEach(const DiffTree& tree,
             const std::function<void(const DiffNode&, int)>& fn) {
  std::function<void(size_t, int)> walk = [&](size_t i, int depth) {
    fn(tree.nodes[i], depth);
    for (size_t c : tree.nodes[i].children) walk(c, depth + 1);
  };
  walk(0, 0);
}

std::string Significance(const DiffNode& n) {
  if (n.q_value < 0) return "";
  return absl::StrFormat("%s q=%.3g", n.significant ? "SIGNIFICANT" : "noise",
                         n.q_value);
}

std::string JsonNumberOrNull(double v) {
  return v < 0 ? "null" : absl::StrFormat("%.6g", v);
}

}  // namespace

const std::vector<std::string>& DiffOutputTypes() {
  static const std::vector<std::string> types = {"stdout", "file",     "json",
                                                 "csv",    "markdown", "pprof"};
  return types;
}

std::string RenderDiffText(const DiffTree& tree) {
  const std::vector<std::string> attrs = DiffAttributes(tree.options);
  std::string out = absl::StrCat(
      "Diff (base -> current) of the ", ViewName(tree.view),
      " view; rows matched by name. A change is SIGNIFICANT when its ",
      tree.attribute,
      " per step differ beyond the step-to-step noise (Mann-Whitney U, "
      "Benjamini-Hochberg q <= ",
      absl::StrFormat("%g", tree.diff.alpha), ").\n");
  ForEach(tree, [&](const DiffNode& n, int depth) {
    std::vector<std::string> parts;
    for (const std::string& a : attrs) {
      const Change c = ChangeOf(n, a);
      std::string part = absl::StrCat(a, " ", FormatStat(a, c.base), " -> ",
                                      FormatStat(a, c.current), ", ",
                                      FormatStat(a, c.delta(), true));
      if (!c.Ratio().empty()) absl::StrAppend(&part, ", ", c.Ratio());
      parts.push_back(part);
    }
    std::string row = absl::StrCat(std::string(2 * depth, ' '), n.name, " (",
                                   absl::StrJoin(parts, "; "), ")");
    if (!n.base.present || !n.current.present) {
      absl::StrAppend(&row, " [only in ", Presence(n), "]");
    }
    const std::string sig = Significance(n);
    if (!sig.empty()) absl::StrAppend(&row, " [", sig, "]");
    out += row + "\n";
  });
  return out;
}

std::string RenderDiffJson(const DiffTree& tree) {
  const std::vector<std::string> attrs = DiffAttributes(tree.options);
  std::function<void(size_t, std::string*)> node = [&](size_t i,
                                                       std::string* out) {
    const DiffNode& n = tree.nodes[i];
    absl::StrAppend(out, "{\"name\": ", JsonQuote(n.name), ", \"in\": \"",
                    Presence(n), "\"");
    for (const std::string& a : attrs) {
      const Change c = ChangeOf(n, a);
      absl::StrAppend(
          out, ", ", JsonQuote(a), ": {\"base\": ", c.base,
          ", \"current\": ", c.current, ", \"delta\": ", c.delta(),
          ", \"ratio\": ",
          c.base == 0
              ? std::string("null")
              : absl::StrFormat("%.6g", static_cast<double>(c.delta()) /
                                            static_cast<double>(c.base)),
          "}");
    }
    absl::StrAppend(out, ", \"p_value\": ", JsonNumberOrNull(n.p_value),
                    ", \"q_value\": ", JsonNumberOrNull(n.q_value),
                    ", \"significant\": ", n.significant ? "true" : "false",
                    ", \"children\": [");
    for (size_t k = 0; k < n.children.size(); ++k) {
      if (k > 0) *out += ", ";
      node(n.children[k], out);
    }
    *out += "]}";
  };
  std::vector<std::string> notes;
  for (const std::string& s : tree.notes) notes.push_back(JsonQuote(s));
  std::string out = absl::StrCat(
      "{\"view\": \"", ViewName(tree.view),
      "\", \"attribute\": ", JsonQuote(tree.attribute),
      ", \"alpha\": ", absl::StrFormat("%g", tree.diff.alpha), ", \"notes\": [",
      absl::StrJoin(notes, ", "), "], \"root\": ");
  node(0, &out);
  return out + "}\n";
}

std::string RenderDiffCsv(const DiffTree& tree) {
  const std::vector<std::string> attrs = DiffAttributes(tree.options);
  std::vector<std::string> header = {"name", "depth", "in"};
  for (const std::string& a : attrs) {
    for (const char* s : {"_base", "_current", "_delta"}) {
      header.push_back(a + s);
    }
  }
  for (const char* s : {"p_value", "q_value", "significant"}) {
    header.push_back(s);
  }
  std::string out = absl::StrJoin(header, ",") + "\n";
  ForEach(tree, [&](const DiffNode& n, int depth) {
    std::vector<std::string> row = {CsvField(n.name), absl::StrCat(depth),
                                    Presence(n)};
    for (const std::string& a : attrs) {
      const Change c = ChangeOf(n, a);
      row.push_back(absl::StrCat(c.base));
      row.push_back(absl::StrCat(c.current));
      row.push_back(absl::StrCat(c.delta()));
    }
    row.push_back(n.p_value < 0 ? "" : absl::StrFormat("%.6g", n.p_value));
    row.push_back(n.q_value < 0 ? "" : absl::StrFormat("%.6g", n.q_value));
    row.push_back(n.significant ? "true" : "false");
    out += absl::StrJoin(row, ",") + "\n";
  });
  return out;
}

std::string RenderDiffMarkdown(const DiffTree& tree) {
  const std::vector<std::string> attrs = DiffAttributes(tree.options);
  std::vector<std::string> head = {"node"};
  for (const std::string& a : attrs) {
    head.push_back(a + " base");
    head.push_back(a + " current");
    head.push_back(a + " change");
  }
  head.push_back("significant");
  std::string out = absl::StrCat("**tfprof diff** (", ViewName(tree.view),
                                 " view, base → current)\n\n| ",
                                 absl::StrJoin(head, " | "), " |\n|");
  for (size_t i = 0; i < head.size(); ++i) out += i == 0 ? " --- |" : " ---: |";
  out += "\n";
  ForEach(tree, [&](const DiffNode& n, int depth) {
    std::string name = absl::StrReplaceAll(n.name, {{"|", "\\|"}});
    if (!n.base.present || !n.current.present) {
      absl::StrAppend(&name, " *(only in ", Presence(n), ")*");
    }
    std::vector<std::string> row;
    std::string indent;
    for (int d = 0; d < depth; ++d) indent += "&nbsp;&nbsp;";
    row.push_back(absl::StrCat(indent, "`", name, "`"));
    for (const std::string& a : attrs) {
      const Change c = ChangeOf(n, a);
      row.push_back(FormatStat(a, c.base));
      row.push_back(FormatStat(a, c.current));
      std::string change = FormatStat(a, c.delta(), true);
      if (!c.Ratio().empty()) absl::StrAppend(&change, " (", c.Ratio(), ")");
      row.push_back(change);
    }
    row.push_back(n.q_value < 0 ? "n/a"
                  : n.significant
                      ? absl::StrFormat("**yes** (q=%.3g)", n.q_value)
                      : absl::StrFormat("no (q=%.3g)", n.q_value));
    out += "| " + absl::StrJoin(row, " | ") + " |\n";
  });
  for (const std::string& note : tree.notes) out += "\n_" + note + "_\n";
  return out;
}

std::string RenderStepsDiff(const StepsDiff& diff, const std::string& type) {
  auto num = [](double v) {
    return v < 0 ? std::string() : absl::StrFormat("%.6g", v);
  };
  std::string out;
  if (type == "json") {
    absl::StrAppend(&out, "{\"alpha\": ", absl::StrFormat("%g", diff.alpha),
                    ", \"measures\": [");
    for (size_t i = 0; i < diff.rows.size(); ++i) {
      const StepsDiffRow& r = diff.rows[i];
      absl::StrAppend(
          &out, i == 0 ? "" : ", ", "{\"measure\": \"", r.measure,
          "\", \"base\": [", absl::StrJoin(r.base, ", "), "], \"current\": [",
          absl::StrJoin(r.current, ", "), "], \"base_median\": ", r.base_median,
          ", \"current_median\": ", r.current_median,
          ", \"p_value\": ", JsonNumberOrNull(r.p_value),
          ", \"q_value\": ", JsonNumberOrNull(r.q_value),
          ", \"significant\": ", r.significant ? "true" : "false", "}");
    }
    return out + "]}\n";
  }
  if (type == "csv") {
    out =
        "measure,base_steps,current_steps,base_median,current_median,delta,"
        "p_value,q_value,significant\n";
    for (const StepsDiffRow& r : diff.rows) {
      absl::StrAppend(&out, r.measure, ",", r.base.size(), ",",
                      r.current.size(), ",", r.base_median, ",",
                      r.current_median, ",", r.current_median - r.base_median,
                      ",", num(r.p_value), ",", num(r.q_value), ",",
                      r.significant ? "true" : "false", "\n");
    }
    return out;
  }
  out = absl::StrCat(
      "Steps (base -> current): medians over each run's steps; SIGNIFICANT "
      "when the per-step values differ (Mann-Whitney U, Benjamini-Hochberg "
      "q <= ",
      absl::StrFormat("%g", diff.alpha), ").\n");
  for (const StepsDiffRow& r : diff.rows) {
    const bool ns = absl::EndsWith(r.measure, "_ns");
    auto fmt = [&](int64_t v, bool sign) {
      if (!ns) return FormatStat(r.measure, v, sign);
      const std::string text = FormatNanos(v < 0 ? -v : v);
      return (v < 0 ? "-" : sign && v > 0 ? "+" : "") + text;
    };
    const Change c{r.base_median, r.current_median};
    if (!r.base_recorded || !r.current_recorded) {
      absl::StrAppendFormat(
          &out, "%-12s not recorded in %s\n",
          absl::StrCat(absl::StripSuffix(r.measure, "_ns"), ":"),
          !r.base_recorded && !r.current_recorded ? "either run"
          : !r.base_recorded                      ? "the base run"
                                                  : "the current run");
      continue;
    }
    absl::StrAppendFormat(
        &out, "%-12s median %s (%d steps) -> %s (%d steps), %s%s%s\n",
        absl::StrCat(absl::StripSuffix(r.measure, "_ns"), ":"),
        fmt(r.base_median, false), r.base.size(), fmt(r.current_median, false),
        r.current.size(), fmt(c.delta(), true),
        c.Ratio().empty() ? "" : ", " + c.Ratio(),
        r.q_value < 0 ? ""
                      : absl::StrFormat(" [%s q=%.3g]",
                                        r.significant ? "SIGNIFICANT" : "noise",
                                        r.q_value));
  }
  return out;
}

std::string RenderDiff(const DiffTree& tree, const std::string& type) {
  if (type == "json") return RenderDiffJson(tree);
  if (type == "csv") return RenderDiffCsv(tree);
  if (type == "markdown") return RenderDiffMarkdown(tree);
  return RenderDiffText(tree);
}

}  // namespace tfprof
