#include "profiler/render/render_diff.h"

#include <cmath>
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

Change ChangeOf(const DiffNode& n, Attr attribute) {
  return {Value(n.base.total, attribute), Value(n.current.total, attribute)};
}

// The name of the attribute the diff orders and tests by.
const std::string& TestedName(const DiffTree& tree) {
  return AttrName(tree.attribute);
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

// A per-step amount of `attribute` for reading (rounded to its unit;
// steps' "*_ns" measures in nanoseconds).
std::string Amount(const std::string& attribute, double v, bool sign) {
  const int64_t r = std::llround(v);
  if (!absl::EndsWith(attribute, "_ns")) return FormatStat(attribute, r, sign);
  const std::string text = FormatNanos(r < 0 ? -r : r);
  return (r < 0 ? "-" : sign && r > 0 ? "+" : "") + text;
}

// "SIGNIFICANT: regressed, +1.10ms..+1.50ms/step, q=0.003", "noise:
// unchanged, -3us..+5us/step", "noise: inconclusive, ..., ~4 more steps";
// "" when not tested.
std::string VerdictText(const Judgement& j, const std::string& attribute) {
  if (!j.tested) return "";
  std::string out = absl::StrCat(
      j.significant ? "SIGNIFICANT: " : "noise: ", VerdictName(j.verdict), ", ",
      Amount(attribute, j.ci_low, true), "..",
      Amount(attribute, j.ci_high, true), "/step");
  if (j.verdict != Verdict::kUnchanged) {
    absl::StrAppendFormat(&out, ", q=%.3g", j.q_value);
  }
  if (j.verdict == Verdict::kInconclusive) {
    absl::StrAppend(&out, ", ~", j.more_steps_needed,
                    j.more_steps_needed >= kDiffMaxMoreSteps ? "+" : "",
                    " more steps");
  }
  return out;
}

std::string JsonNumberOrNull(double v) {
  return v < 0 || std::isnan(v) ? "null" : NumberText(v);
}
std::string JsonDouble(double v) {
  return std::isnan(v) ? "null" : NumberText(v);
}

// The verdict's fields of a JSON object (after a field), per step in the
// attribute's unit.
std::string JudgementJson(const Judgement& j) {
  std::string out =
      absl::StrCat(", \"verdict\": \"", VerdictName(j.verdict),
                   "\", \"ci_low\": ", JsonDouble(j.ci_low),
                   ", \"ci_high\": ", JsonDouble(j.ci_high),
                   ", \"floor\": ", JsonDouble(j.floor),
                   ", \"p_value\": ", JsonNumberOrNull(j.p_value),
                   ", \"q_value\": ", JsonNumberOrNull(j.q_value),
                   ", \"significant\": ", j.significant ? "true" : "false");
  if (j.verdict == Verdict::kInconclusive) {
    absl::StrAppend(&out, ", \"more_steps_needed\": ", j.more_steps_needed);
  }
  return out;
}

// "launches 75 -> 110/step" when a flat view's row ran a different number
// of times per step (a tree's rows count their subtrees' runs).
std::string RunsText(const DiffTree& tree, const DiffNode& n) {
  const double b = n.base.MeanRuns(), c = n.current.MeanRuns();
  if (!IsFlatView(tree.view) || std::fabs(c - b) < 0.5) return "";
  return absl::StrFormat(
      "%s %s -> %s/step", tree.view == ViewKind::kKernel ? "launches" : "runs",
      absl::StrFormat("%.4g", b), absl::StrFormat("%.4g", c));
}

// The floor as the legend states it: of a view's attribute, the share and
// the amount of its own unit ("2%,2us" for times, "2%" for bytes unless an
// amount of bytes is given); of the steps' measures, all of it.
std::string Legend(const std::string& attribute, const DiffOptions& d,
                   bool one_unit = true) {
  std::string floor = MinChangeText(d.min_change);
  if (one_unit) {
    MinChange own;
    own.ratio = d.min_change.ratio;
    own.micros = own.bytes = own.count = 0;
    switch (UnitOfStat(attribute)) {
      case StatUnit::kTime:
        own.micros = d.min_change.micros;
        break;
      case StatUnit::kBytes:
        own.bytes = d.min_change.bytes;
        break;
      default:
        own.count = d.min_change.count;
    }
    floor = MinChangeText(own);
  }
  return absl::StrFormat(
      "Verdicts on the change of %s per step: regressed or improved "
      "(SIGNIFICANT) when it is beyond the floor (%s of the base) at false "
      "discovery rate %g; unchanged when its %g%% interval lies inside the "
      "floor; else inconclusive (noise), with the steps per side that would "
      "likely decide it.",
      attribute, floor, d.alpha, 100 * (1 - d.alpha));
}

std::string MemberText(const std::string& attribute,
                       const DiffShift::Member& m) {
  std::string out = absl::StrCat(
      m.name, " (", FormatStat(attribute, m.current - m.base, true));
  if (!m.current_present) out += ", vanished";
  if (!m.base_present) out += ", new";
  return out + ")";
}

std::string ShiftsText(const DiffTree& tree) {
  if (tree.shifts.empty()) return "";
  const std::string a = TestedName(tree);
  // In a flat view a row's parent is the op (type) that launched or ran
  // most of it, and the figures are the whole rows'.
  const bool flat = IsFlatView(tree.view);
  std::string out = absl::StrCat(
      "Cost shifts (rows that fell or vanished while others grew or "
      "appeared under one parent",
      flat ? "; a row's parent is the op that launched or called most of "
             "it, and its figures are the whole row's, of every op"
           : "",
      "):\n");
  for (size_t i = 0; i < tree.shifts.size(); ++i) {
    const DiffShift& s = tree.shifts[i];
    std::vector<std::string> removed, added;
    for (const auto& m : s.removed) removed.push_back(MemberText(a, m));
    for (const auto& m : s.added) added.push_back(MemberText(a, m));
    absl::StrAppend(&out, "  [", i + 1, flat ? "] mostly under " : "] under ",
                    s.parent, ": ", absl::StrJoin(removed, ", "),
                    " replaced by ", absl::StrJoin(added, ", "), "; together ",
                    a, " ", FormatStat(a, s.base), " -> ",
                    FormatStat(a, s.current), ", ",
                    FormatStat(a, s.current - s.base, true));
    const std::string v = VerdictText(s.combined, a);
    if (!v.empty()) absl::StrAppend(&out, " [", v, "]");
    out += "\n";
  }
  return out;
}

}  // namespace

const std::vector<std::string>& DiffOutputTypes() {
  static const std::vector<std::string> types = {"stdout", "file",     "json",
                                                 "csv",    "markdown", "pprof"};
  return types;
}

std::string RenderDiffText(const DiffTree& tree) {
  const std::vector<Attr> attrs = DiffAttributes(tree.options);
  std::string out = absl::StrCat(
      "Diff (base -> current) of the ", ViewName(tree.view),
      " view; rows matched by name, largest change in ", TestedName(tree),
      " first. ", Legend(TestedName(tree), tree.diff), "\n");
  ForEach(tree, [&](const DiffNode& n, int depth) {
    std::vector<std::string> parts;
    for (Attr at : attrs) {
      const std::string a(AttrName(at));
      const Change c = ChangeOf(n, at);
      std::string part = absl::StrCat(a, " ", FormatStat(a, c.base), " -> ",
                                      FormatStat(a, c.current), ", ",
                                      FormatStat(a, c.delta(), true));
      if (!c.Ratio().empty()) absl::StrAppend(&part, ", ", c.Ratio());
      parts.push_back(part);
    }
    const std::string runs = RunsText(tree, n);
    if (!runs.empty()) parts.push_back(runs);
    std::string row = absl::StrCat(std::string(2 * depth, ' '), n.name, " (",
                                   absl::StrJoin(parts, "; "), ")");
    if (!n.base.present || !n.current.present) {
      absl::StrAppend(&row, " [only in ", Presence(n), "]");
    }
    const std::string v = VerdictText(n.judgement, TestedName(tree));
    if (!v.empty()) absl::StrAppend(&row, " [", v, "]");
    if (n.shift >= 0) absl::StrAppend(&row, " [shift ", n.shift + 1, "]");
    out += row + "\n";
  });
  return out + ShiftsText(tree);
}

std::string RenderDiffJson(const DiffTree& tree) {
  const std::vector<Attr> attrs = DiffAttributes(tree.options);
  std::function<void(size_t, std::string*)> node = [&](size_t i,
                                                       std::string* out) {
    const DiffNode& n = tree.nodes[i];
    absl::StrAppend(out, "{\"name\": ", JsonQuote(n.name), ", \"in\": \"",
                    Presence(n), "\"");
    for (Attr at : attrs) {
      const std::string a(AttrName(at));
      const Change c = ChangeOf(n, at);
      absl::StrAppend(out, ", ", JsonQuote(a), ": {\"base\": ", c.base,
                      ", \"current\": ", c.current, ", \"delta\": ", c.delta(),
                      ", \"ratio\": ",
                      c.base == 0 ? std::string("null")
                                  : NumberText(static_cast<double>(c.delta()) /
                                               static_cast<double>(c.base)),
                      "}");
    }
    absl::StrAppend(
        out, ", \"runs_per_step\": {\"base\": ", JsonDouble(n.base.MeanRuns()),
        ", \"current\": ", JsonDouble(n.current.MeanRuns()), "}",
        JudgementJson(n.judgement));
    if (n.shift >= 0) absl::StrAppend(out, ", \"shift\": ", n.shift);
    *out += ", \"children\": [";
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
      "\", \"attribute\": ", JsonQuote(TestedName(tree)),
      ", \"alpha\": ", absl::StrFormat("%g", tree.diff.alpha),
      ", \"min_change\": ", JsonQuote(MinChangeText(tree.diff.min_change)),
      ", \"notes\": [", absl::StrJoin(notes, ", "), "], \"root\": ");
  node(0, &out);
  out += ", \"shifts\": [";
  for (size_t i = 0; i < tree.shifts.size(); ++i) {
    const DiffShift& s = tree.shifts[i];
    auto members = [](const std::vector<DiffShift::Member>& list) {
      std::vector<std::string> v;
      for (const auto& m : list) {
        v.push_back(
            absl::StrCat("{\"name\": ", JsonQuote(m.name), ", \"in\": \"",
                         m.base_present && m.current_present ? "both"
                         : m.base_present                    ? "base"
                                                             : "current",
                         "\", \"base\": ", m.base, ", \"current\": ", m.current,
                         ", \"verdict\": \"", VerdictName(m.verdict), "\"}"));
      }
      return absl::StrJoin(v, ", ");
    };
    absl::StrAppend(
        &out, i > 0 ? ", " : "", "{\"parent\": ", JsonQuote(s.parent),
        ", \"removed\": [", members(s.removed), "], \"added\": [",
        members(s.added), "], \"base\": ", s.base, ", \"current\": ", s.current,
        ", \"delta\": ", s.current - s.base, JudgementJson(s.combined), "}");
  }
  return out + "]}\n";
}

std::string RenderDiffCsv(const DiffTree& tree) {
  const std::vector<Attr> attrs = DiffAttributes(tree.options);
  std::vector<std::string> header = {"name", "depth", "in"};
  for (Attr at : attrs) {
    const std::string a(AttrName(at));
    for (const char* s : {"_base", "_current", "_delta"}) {
      header.push_back(a + s);
    }
  }
  for (const char* s : {"p_value", "q_value", "significant", "verdict",
                        "ci_low", "ci_high", "more_steps_needed", "shift"}) {
    header.push_back(s);
  }
  std::string out = absl::StrJoin(header, ",") + "\n";
  auto num = [](double v) {
    return v < 0 || std::isnan(v) ? std::string() : NumberText(v);
  };
  auto signed_num = [](double v) {
    return std::isnan(v) ? std::string() : NumberText(v);
  };
  ForEach(tree, [&](const DiffNode& n, int depth) {
    std::vector<std::string> row = {CsvField(n.name), absl::StrCat(depth),
                                    Presence(n)};
    for (Attr at : attrs) {
      const std::string a(AttrName(at));
      const Change c = ChangeOf(n, at);
      row.push_back(absl::StrCat(c.base));
      row.push_back(absl::StrCat(c.current));
      row.push_back(absl::StrCat(c.delta()));
    }
    const Judgement& j = n.judgement;
    row.push_back(num(j.p_value));
    row.push_back(num(j.q_value));
    row.push_back(j.significant ? "true" : "false");
    row.push_back(VerdictName(j.verdict));
    row.push_back(j.tested ? signed_num(j.ci_low) : "");
    row.push_back(j.tested ? signed_num(j.ci_high) : "");
    row.push_back(j.verdict == Verdict::kInconclusive
                      ? absl::StrCat(j.more_steps_needed)
                      : "");
    row.push_back(n.shift >= 0 ? absl::StrCat(n.shift + 1) : "");
    out += absl::StrJoin(row, ",") + "\n";
  });
  return out;
}

std::string RenderDiffMarkdown(const DiffTree& tree) {
  const std::vector<Attr> attrs = DiffAttributes(tree.options);
  std::vector<std::string> head = {"node"};
  for (Attr at : attrs) {
    const std::string a(AttrName(at));
    head.push_back(a + " base");
    head.push_back(a + " current");
    head.push_back(a + " change");
  }
  head.push_back("verdict (" + TestedName(tree) + " per step)");
  std::string out = absl::StrCat("**tfprof diff** (", ViewName(tree.view),
                                 " view, base → current)\n\n| ",
                                 absl::StrJoin(head, " | "), " |\n|");
  for (size_t i = 0; i < head.size(); ++i) out += i == 0 ? " --- |" : " ---: |";
  out += "\n";
  ForEach(tree, [&](const DiffNode& n, int depth) {
    const std::string name = absl::StrReplaceAll(n.name, {{"|", "\\|"}});
    std::vector<std::string> row;
    std::string indent;
    for (int d = 0; d < depth; ++d) indent += "&nbsp;&nbsp;";
    // (The marker after the code span, where Markdown renders it.)
    row.push_back(absl::StrCat(indent, "`", name, "`"));
    if (!n.base.present || !n.current.present) {
      absl::StrAppend(&row.back(), " *(only in ", Presence(n), ")*");
    }
    for (Attr at : attrs) {
      const std::string a(AttrName(at));
      const Change c = ChangeOf(n, at);
      row.push_back(FormatStat(a, c.base));
      row.push_back(FormatStat(a, c.current));
      std::string change = FormatStat(a, c.delta(), true);
      if (!c.Ratio().empty()) absl::StrAppend(&change, " (", c.Ratio(), ")");
      row.push_back(change);
    }
    const Judgement& j = n.judgement;
    row.push_back(
        !j.tested
            ? "n/a"
            : absl::StrCat(j.significant ? "**" : "", VerdictName(j.verdict),
                           j.significant ? "**" : "", " ",
                           Amount(TestedName(tree), j.ci_low, true), "..",
                           Amount(TestedName(tree), j.ci_high, true),
                           j.q_value >= 0 && j.verdict != Verdict::kUnchanged
                               ? absl::StrFormat(" (q=%.3g)", j.q_value)
                               : ""));
    out += "| " + absl::StrJoin(row, " | ") + " |\n";
  });
  const std::string shifts = ShiftsText(tree);
  if (!shifts.empty()) out += "\n```\n" + shifts + "```\n";
  for (const std::string& note : tree.notes) out += "\n_" + note + "_\n";
  return out;
}

std::string RenderStepsDiff(const StepsDiff& diff, const std::string& type) {
  auto num = [](double v) {
    return v < 0 || std::isnan(v) ? std::string() : NumberText(v);
  };
  std::string out;
  if (type == "json") {
    absl::StrAppend(
        &out, "{\"alpha\": ", absl::StrFormat("%g", diff.alpha),
        ", \"min_change\": ", JsonQuote(MinChangeText(diff.min_change)),
        ", \"measures\": [");
    for (size_t i = 0; i < diff.rows.size(); ++i) {
      const StepsDiffRow& r = diff.rows[i];
      absl::StrAppend(
          &out, i == 0 ? "" : ", ", "{\"measure\": \"", r.measure,
          "\", \"base\": [", absl::StrJoin(r.base, ", "), "], \"current\": [",
          absl::StrJoin(r.current, ", "), "], \"base_median\": ", r.base_median,
          ", \"current_median\": ", r.current_median,
          ", \"base_mean\": ", JsonDouble(r.judgement.base_mean),
          ", \"current_mean\": ", JsonDouble(r.judgement.current_mean),
          JudgementJson(r.judgement), "}");
    }
    return out + "]}\n";
  }
  if (type == "csv") {
    out =
        "measure,base_steps,current_steps,base_median,current_median,delta,"
        "p_value,q_value,significant,verdict,ci_low,ci_high,"
        "more_steps_needed\n";
    for (const StepsDiffRow& r : diff.rows) {
      const Judgement& j = r.judgement;
      absl::StrAppend(
          &out, r.measure, ",", r.base.size(), ",", r.current.size(), ",",
          r.base_median, ",", r.current_median, ",",
          r.current_median - r.base_median, ",", num(j.p_value), ",",
          num(j.q_value), ",", j.significant ? "true" : "false", ",",
          VerdictName(j.verdict), ",", j.tested ? NumberText(j.ci_low) : "",
          ",", j.tested ? NumberText(j.ci_high) : "", ",",
          j.verdict == Verdict::kInconclusive
              ? absl::StrCat(j.more_steps_needed)
              : "",
          "\n");
    }
    return out;
  }
  DiffOptions options;
  options.alpha = diff.alpha;
  options.min_change = diff.min_change;
  out = absl::StrCat("Steps (base -> current): medians over each run's steps. ",
                     Legend("each measure (its mean)", options, false), "\n");
  for (const StepsDiffRow& r : diff.rows) {
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
    const std::string v = VerdictText(r.judgement, r.measure);
    absl::StrAppendFormat(
        &out, "%-12s median %s (%d steps) -> %s (%d steps), %s%s%s\n",
        absl::StrCat(absl::StripSuffix(r.measure, "_ns"), ":"),
        Amount(r.measure, static_cast<double>(r.base_median), false),
        r.base.size(),
        Amount(r.measure, static_cast<double>(r.current_median), false),
        r.current.size(),
        Amount(r.measure, static_cast<double>(c.delta()), true),
        c.Ratio().empty() ? "" : ", " + c.Ratio(),
        v.empty() ? "" : " [" + v + "]");
  }
  return out;
}

std::string RenderDiff(const DiffTree& tree, const std::string& type) {
  if (type == "json") return RenderDiffJson(tree);
  if (type == "csv") return RenderDiffCsv(tree);
  if (type == "markdown") return RenderDiffMarkdown(tree);
  return RenderDiffText(tree);
}

std::string RenderDiffTop(const DiffTop& top, bool json) {
  auto entry_json = [](const DiffTopEntry& e, bool time) {
    std::string out = absl::StrCat(
        "{\"where\": ", JsonQuote(e.where), ", \"name\": ", JsonQuote(e.name),
        ", \"base\": ", JsonDouble(e.base),
        ", \"current\": ", JsonDouble(e.current),
        ", \"delta\": ", JsonDouble(e.current - e.base));
    if (time) out += JudgementJson(e.judgement);
    return out + "}";
  };
  if (json) {
    std::vector<std::string> changes, launches, notes;
    for (const auto& e : top.changes) changes.push_back(entry_json(e, true));
    for (const auto& e : top.launches) launches.push_back(entry_json(e, false));
    for (const auto& n : top.notes) notes.push_back(JsonQuote(n));
    return absl::StrCat("{\"unit\": \"micros per step\", \"changes\": [",
                        absl::StrJoin(changes, ", "), "], \"launches\": [",
                        absl::StrJoin(launches, ", "), "], \"notes\": [",
                        absl::StrJoin(notes, ", "), "]}\n");
  }
  std::string out =
      "Top changes (base -> current, means per step; clear changes of ops, "
      "kernels, cost shifts and the steps' wall, accelerator and idle "
      "time):\n";
  if (top.changes.empty()) out += "  none\n";
  for (const DiffTopEntry& e : top.changes) {
    absl::StrAppend(&out, "  ", e.where, " ", e.name, ": ",
                    Amount("micros", e.base, false), " -> ",
                    Amount("micros", e.current, false), ", ",
                    Amount("micros", e.current - e.base, true), " [",
                    VerdictText(e.judgement, "micros"), "]\n");
  }
  out += "Runs and launches per step that changed:\n";
  if (top.launches.empty()) out += "  none\n";
  for (const DiffTopEntry& e : top.launches) {
    absl::StrAppendFormat(&out, "  %s %s: %.4g -> %.4g (%+.4g)\n", e.where,
                          e.name, e.base, e.current, e.current - e.base);
  }
  for (const std::string& n : top.notes) out += "note: " + n + "\n";
  return out;
}

}  // namespace tfprof
