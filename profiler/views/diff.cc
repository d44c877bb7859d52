// Diff options, the verdicts on changes, the steps tables compared and the
// top changes across views (QueryDiff itself is in diff_tree.cc).
#include "profiler/views/diff.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <deque>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "profiler/base/parallel.h"
#include "profiler/views/kernels.h"
#include "re2/re2.h"

namespace tfprof {
namespace {

double Mean(absl::Span<const double> v) {
  double sum = 0;
  for (double x : v) sum += x;
  return v.empty() ? 0 : sum / static_cast<double>(v.size());
}

// The level a row's test must reach to pass the false-discovery
// correction, estimated from its own p and q (Benjamini-Hochberg scales a
// p-value up by the tests over its rank).
double RowLevel(double alpha, double p, double q, size_t tests) {
  if (p > 0 && q > 0) return std::min(alpha, alpha * p / q);
  return alpha / static_cast<double>(std::max<size_t>(tests, 1));
}

}  // namespace

absl::StatusOr<DiffRule> ParseDiffRule(const std::string& text) {
  const size_t arrow = text.find("=>");
  if (arrow == std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("diff rule '", text, "': expected PATTERN=>REWRITE"));
  }
  DiffRule r{text.substr(0, arrow), text.substr(arrow + 2)};
  RE2 re(r.pattern, RE2::Quiet);
  std::string error;
  if (!re.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("diff rule '", text, "': invalid regex: ", re.error()));
  }
  if (!re.CheckRewriteString(r.rewrite, &error)) {
    return absl::InvalidArgumentError(
        absl::StrCat("diff rule '", text, "': ", error));
  }
  return r;
}

double MinChange::Floor(StatUnit unit, double base) const {
  const int64_t amount = unit == StatUnit::kTime    ? micros
                         : unit == StatUnit::kBytes ? bytes
                                                    : count;
  return std::max(ratio * std::fabs(base), static_cast<double>(amount));
}

absl::StatusOr<MinChange> ParseMinChange(const std::string& text) {
  MinChange m;
  auto bad = [&](const std::string& why) {
    return absl::InvalidArgumentError(
        absl::StrCat("min_change '", text.substr(0, 40), "': ", why,
                     " (e.g. 2%,2us: a percentage of the base and amounts "
                     "with units)"));
  };
  if (text.empty()) return bad("empty");
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    const std::string p(absl::StripAsciiWhitespace(part));
    if (absl::EndsWith(p, "%")) {
      double percent = 0;
      if (!absl::SimpleAtod(p.substr(0, p.size() - 1), &percent) ||
          !(percent >= 0) || percent >= 1000) {
        return bad(absl::StrCat("'", p, "' is not a percentage"));
      }
      m.ratio = percent / 100;
      continue;
    }
    // The unit's kind from its letters: us/ms/s times, B/KB/MB/GB bytes,
    // k/m/b or none counts.
    const size_t digits = p.find_first_not_of("0123456789.");
    const std::string suffix =
        digits == std::string::npos ? "" : p.substr(digits);
    const StatUnit unit =
        suffix == "us" || suffix == "ms" || suffix == "s" || suffix == "sec"
            ? StatUnit::kTime
        : absl::EndsWith(suffix, "B") ? StatUnit::kBytes
                                      : StatUnit::kCount;
    absl::StatusOr<int64_t> v = ParseStatValue(p, unit);
    if (!v.ok()) return bad(std::string(v.status().message()));
    (unit == StatUnit::kTime    ? m.micros
     : unit == StatUnit::kBytes ? m.bytes
                                : m.count) = *v;
  }
  return m;
}

std::string MinChangeText(const MinChange& m) {
  std::string out = absl::StrFormat("%g%%", m.ratio * 100);
  if (m.micros > 0) absl::StrAppend(&out, ",", m.micros, "us");
  if (m.bytes > 0) absl::StrAppend(&out, ",", m.bytes, "B");
  if (m.count > 0) absl::StrAppend(&out, ",", m.count);
  return out;
}

absl::Status SetDiffOption(const std::string& name, const std::string& value,
                           const std::string& prefix, DiffOptions* diff) {
  if (name == "map") {
    absl::StatusOr<DiffRule> rule = ParseDiffRule(value);
    if (!rule.ok()) return rule.status();
    diff->rules.push_back(*rule);
  } else if (name == "alpha") {
    double& alpha = diff->alpha;
    if (!absl::SimpleAtod(value, &alpha) || !(alpha > 0) || alpha >= 1) {
      return absl::InvalidArgumentError(
          absl::StrCat(prefix,
                       "alpha wants a false discovery rate in (0, 1), "
                       "not '",
                       value.substr(0, 40), "'"));
    }
  } else if (name == "significant_only" &&
             (value == "true" || value == "false")) {
    diff->significant_only = value == "true";
  } else if (name == "significant_only") {
    return absl::InvalidArgumentError(
        absl::StrCat(prefix, "significant_only wants true or false"));
  } else if (name == "min_change") {
    absl::StatusOr<MinChange> m = ParseMinChange(value);
    if (!m.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(prefix, m.status().message()));
    }
    diff->min_change = *m;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat(prefix, name, " is not a diff option"));
  }
  return absl::OkStatus();
}

const char* VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kUnchanged:
      return "unchanged";
    case Verdict::kRegressed:
      return "regressed";
    case Verdict::kImproved:
      return "improved";
    case Verdict::kInconclusive:
      break;
  }
  return "inconclusive";
}

void SetFloor(const MinChange& min_change, StatUnit unit, ChangeInput* in) {
  in->floor = min_change.Floor(unit, Mean(in->base));
}

std::vector<Judgement> JudgeChanges(const std::vector<ChangeInput>& inputs,
                                    double alpha) {
  std::vector<Judgement> out(inputs.size());
  JudgeChangesInPlace(
      inputs.size(), [&](size_t i) { return inputs[i]; }, alpha,
      [&](size_t i) { return &out[i]; });
  return out;
}

void JudgeChangesInPlace(size_t n,
                         const std::function<ChangeInput(size_t)>& input,
                         double alpha,
                         const std::function<Judgement*(size_t)>& out) {
  std::vector<double> p(n, -1);
  std::vector<char> inside(n, 0);  // the interval lies inside the floor
  // Rows are judged one by one: on large diffs, half on each core. First
  // each row's test (its judgement but the verdict), then the verdicts
  // from the corrected p-values; the few rows left open are tested again
  // for the steps that would decide them (no test is kept per row).
  const auto by_halves = [n](const auto& judge) {
    RunBoth(
        n >= kParallelMinItems, [&] { judge(0, n / 2); },
        [&] { judge(n / 2, n); });
  };
  by_halves([&](size_t from, size_t to) {
    for (size_t i = from; i < to; ++i) {
      const ChangeInput in = input(i);
      Judgement& j = *out(i);
      j = Judgement();
      j.floor = in.floor;
      if (in.base.size() < kDiffMinSteps || in.current.size() < kDiffMinSteps) {
        j.base_mean = Mean(in.base);
        j.current_mean = Mean(in.current);
        j.estimate = j.current_mean - j.base_mean;
        j.ci_low = j.ci_high = std::nan("");
        const size_t have = std::min(in.base.size(), in.current.size());
        j.more_steps_needed = static_cast<int>(kDiffMinSteps - have);
        continue;
      }
      const ChangeTest t = TestChange(in, alpha);
      j.base_mean = t.base_mean;
      j.current_mean = t.current_mean;
      j.estimate = t.estimate;
      j.tested = true;
      j.log_scale = t.log_scale;
      j.ci_low = t.ci_low;
      j.ci_high = t.ci_high;
      j.p_value = p[i] = t.p_value;
      inside[i] = t.InsideFloor();
      // A change within the floor whose interval is not: the steps that
      // would decide it do not depend on the correction (one beyond the
      // floor is tested again below, at its own corrected level).
      if (!inside[i] && std::fabs(t.d) <= t.phi) {
        j.more_steps_needed =
            std::max(1, MoreStepsNeeded(t, alpha, alpha, kDiffMaxMoreSteps));
      }
    }
  });
  const size_t tested = static_cast<size_t>(
      std::count_if(p.begin(), p.end(), [](double v) { return v >= 0; }));
  const std::vector<double> q = BenjaminiHochberg(p);
  by_halves([&](size_t from, size_t to) {
    for (size_t i = from; i < to; ++i) {
      Judgement& j = *out(i);
      if (!j.tested) continue;
      j.q_value = q[i];
      if (q[i] <= alpha) {
        j.significant = true;
        j.verdict = j.estimate > 0 ? Verdict::kRegressed : Verdict::kImproved;
      } else if (inside[i]) {
        j.verdict = Verdict::kUnchanged;
      } else if (j.more_steps_needed == 0) {
        j.more_steps_needed =
            std::max(1, MoreStepsNeeded(TestChange(input(i), alpha), alpha,
                                        RowLevel(alpha, p[i], q[i], tested),
                                        kDiffMaxMoreSteps));
      }
    }
  });
}

double DiffSide::MeanRuns() const { return Mean(runs); }

std::vector<Attr> DiffAttributes(const Options& opts) {
  std::vector<Attr> out;
  // The attribute the verdicts test (-order_by) is shown first when -select
  // leaves it out.
  if (IsCount(opts.order_by) && !opts.Selected(opts.order_by)) {
    out.push_back(opts.order_by);
  }
  for (Attr a : SelectAttrs()) {
    if (opts.Selected(a) && IsCount(a)) out.push_back(a);
  }
  return out;
}

StepsDiff DiffSteps(const StepTable& base, const StepTable& current,
                    const DiffOptions& diff) {
  using Member = int64_t StepRow::*;
  const std::pair<const char*, Member> measures[] = {
      {"wall_ns", &StepRow::wall_ns},
      {"accelerator_ns", &StepRow::accelerator_ns},
      {"compute_ns", &StepRow::compute_ns},
      {"memcpy_ns", &StepRow::memcpy_ns},
      {"idle_ns", &StepRow::idle_ns},
      {"kernels", &StepRow::kernels},
      {"peak_bytes", &StepRow::peak_bytes}};
  StepsDiff out;
  out.alpha = diff.alpha;
  out.min_change = diff.min_change;
  // The measures are nanoseconds: the floor's amount in them.
  MinChange in_ns = diff.min_change;
  in_ns.micros *= 1000;
  std::vector<ChangeInput> inputs;
  std::deque<std::vector<double>> owned;  // what the inputs point at
  for (const auto& measure : measures) {
    const Member member = measure.second;
    StepsDiffRow row;
    row.measure = measure.first;
    // Peak bytes can be missing (-1); a table may not know its kernels and
    // copies (StepTable::Known).
    auto take = [&](const StepTable& t, std::vector<int64_t>* v) {
      bool recorded = false;
      for (const StepRow& r : t.rows) {
        v->push_back(std::max<int64_t>(r.*member, 0));
        recorded |= r.*member >= 0;
      }
      return recorded && t.Known(member);
    };
    row.base_recorded = take(base, &row.base);
    row.current_recorded = take(current, &row.current);
    row.base_median = Median(row.base);
    row.current_median = Median(row.current);
    ChangeInput in;
    if (row.base_recorded && row.current_recorded) {
      in.base = owned.emplace_back(row.base.begin(), row.base.end());
      in.current = owned.emplace_back(row.current.begin(), row.current.end());
    }
    SetFloor(in_ns,
             absl::EndsWith(row.measure, "_ns") ? StatUnit::kTime
             : row.measure == "kernels"         ? StatUnit::kCount
                                                : StatUnit::kBytes,
             &in);
    inputs.push_back(std::move(in));
    out.rows.push_back(std::move(row));
  }
  // The wall time is the comparison's question and is judged on its own at
  // alpha; the other measures (where the time went, launches, memory) are
  // corrected together. Correcting the wall with them would let six
  // secondary measures hide a clear slowdown: on five steps a side a wall
  // 16% slower, its interval wholly beyond the floor, ended at q = 0.053.
  const std::vector<Judgement> wall =
      JudgeChanges({inputs.front()}, diff.alpha);
  const std::vector<Judgement> rest = JudgeChanges(
      std::vector<ChangeInput>(inputs.begin() + 1, inputs.end()), diff.alpha);
  out.rows[0].judgement = wall[0];
  for (size_t i = 1; i < out.rows.size(); ++i) {
    out.rows[i].judgement = rest[i - 1];
  }
  return out;
}

namespace {

// The rows of a flat view's diff for the top changes: clear changes that
// are not part of a cost shift, clear shifts, and changes of runs.
void AddTopRows(const DiffTree& d, const char* where, DiffTop* top) {
  for (size_t c : d.root().children) {
    const DiffNode& n = d.nodes[c];
    const Judgement& j = n.judgement;
    if (j.significant && n.shift < 0) {
      top->changes.push_back({where, n.name, j.base_mean, j.current_mean, j});
    }
    const double runs_b = n.base.MeanRuns(), runs_c = n.current.MeanRuns();
    if (std::fabs(runs_c - runs_b) >= 0.5) {
      top->launches.push_back({where, n.name, runs_b, runs_c, Judgement()});
    }
  }
  size_t quiet = 0;
  for (const DiffShift& s : d.shifts) {
    if (!s.combined.significant) {
      ++quiet;
      continue;
    }
    std::string name = absl::StrCat("under ", s.parent, ": ");
    for (const auto* list : {&s.removed, &s.added}) {
      for (size_t i = 0; i < list->size(); ++i) {
        absl::StrAppend(&name, i > 0 ? ", " : "", (*list)[i].name);
      }
      if (list == &s.removed) name += " replaced by ";
    }
    top->changes.push_back({absl::StrCat(where, " shift"), name,
                            s.combined.base_mean, s.combined.current_mean,
                            s.combined});
  }
  if (quiet > 0) {
    top->notes.push_back(absl::StrCat(
        quiet, " cost shift", quiet == 1 ? "" : "s", " in the ", where,
        " view with no clear combined change (diff ", where, ")"));
  }
}

}  // namespace

absl::StatusOr<DiffTop> QueryDiffTop(const Options& opts,
                                     const DiffOptions& diff, Views* base,
                                     const Model& base_model, Views* current,
                                     const Model& current_model, size_t limit) {
  DiffTop top;
  Options o = opts;
  o.order_by = Attr::kMicros;
  o.select = {Attr::kMicros};
  o.max_depth = INT64_MAX / 2;
  for (ViewKind view : {ViewKind::kOp, ViewKind::kKernel}) {
    if (view == ViewKind::kKernel && !HasKernels(base_model) &&
        !HasKernels(current_model)) {
      continue;
    }
    absl::StatusOr<DiffTree> d =
        QueryDiff(view, o, diff, base, base_model, current, current_model);
    if (!d.ok()) return d.status();
    for (const std::string& n : d->notes) top.notes.push_back(n);
    AddTopRows(*d, ViewName(view), &top);
  }
  const StepsDiff steps =
      DiffSteps(ComputeSteps(base_model), ComputeSteps(current_model), diff);
  for (const StepsDiffRow& r : steps.rows) {
    Judgement j = r.judgement;
    if (r.measure == "kernels") {
      if (j.estimate != 0) {
        top.launches.push_back({"steps", "kernel launches", j.base_mean,
                                j.current_mean, Judgement()});
      }
      continue;
    }
    if (!j.significant ||
        (r.measure != "wall_ns" && r.measure != "accelerator_ns" &&
         r.measure != "idle_ns")) {
      continue;
    }
    // Nanoseconds to microseconds, as the other entries.
    for (double* v : {&j.base_mean, &j.current_mean, &j.estimate, &j.ci_low,
                      &j.ci_high, &j.floor}) {
      *v /= 1000;
    }
    top.changes.push_back({"steps",
                           std::string(absl::StripSuffix(r.measure, "_ns")),
                           j.base_mean, j.current_mean, j});
  }
  for (auto* list : {&top.changes, &top.launches}) {
    std::stable_sort(list->begin(), list->end(),
                     [](const DiffTopEntry& a, const DiffTopEntry& b) {
                       return std::fabs(a.current - a.base) >
                              std::fabs(b.current - b.base);
                     });
    if (list->size() > limit) list->resize(limit);
  }
  return top;
}

}  // namespace tfprof
