// StepTimeChecker: Steps whose time is far from the median, and the nodes
// that explain the difference.
#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "profiler/advise/advisor.h"
#include "profiler/advise/checkers/checker_util.h"
#include "profiler/advise/checkers/checkers.h"
#include "profiler/base/units.h"
#include "profiler/views/steps.h"

namespace tfprof {
namespace {

class StepTimeChecker : public Checker {
 public:
  std::string name() const override { return "StepTimeChecker"; }
  bool by_default(ProfileSource source) const override {
    return source != ProfileSource::kTensorFlow;
  }
  std::string help() const override {
    return "Steps whose time is far from the median, and the nodes that "
           "explain the difference.";
  }
  std::string needs() const override { return "step stats of 3 or more steps"; }
  std::vector<CheckerOption> options() const override {
    return {{"threshold", "0.25", 0, 100, false,
             "steps this far from the median (a share of it) are reported"},
            {"top", "3", 1, 1000, true, "steps, and nodes per step, listed"}};
  }

  std::vector<std::string> Run(const CheckerContext& ctx) const override {
    if (!NeedSteps(ctx, name())) return {};
    const Model& model = ctx.model();
    // Several ranks: node times are the mean per rank, as the views show
    // them, and the step times the job's (the context's steps table).
    const int64_t ranks = model.ranks();
    const std::vector<int64_t> steps(model.steps().begin(),
                                     model.steps().end());
    if (steps.size() < 3) {
      ctx.Note(absl::StrCat(name(), " needs 3 or more steps (this profile has ",
                            steps.size(), ")"));
      return {};
    }
    // Step time: the wall span, or the summed op time when the profile has
    // no timestamps.
    const std::map<int64_t, Span> spans = StepSpans(ctx);
    std::map<int64_t, int64_t> time;
    bool wall = !spans.empty();
    for (int64_t s : steps) {
      auto it = spans.find(s);
      // (In microseconds, rounded to the nearest.)
      time[s] = it == spans.end() ? 0 : (it->second.length() + 500) / 1000;
    }
    if (!wall) {
      for (const auto& node : model.nodes()) {
        for (const StepExec& e : node->execs)
          SatInc(&time[e.step], e.exec_micros() / ranks);
      }
    }
    std::vector<int64_t> values;
    for (int64_t s : steps) values.push_back(time[s]);
    const int64_t median = Median(values);
    auto [fast, slow] = std::minmax_element(
        steps.begin(), steps.end(),
        [&](int64_t a, int64_t b) { return time[a] < time[b]; });
    std::vector<std::string> reports = {absl::StrFormat(
        "%d steps (%s): median %s, fastest %s (step %d), slowest %s (step %d)",
        steps.size(), wall ? "wall time" : "summed op time", FormatTime(median),
        FormatTime(time[*fast]), *fast, FormatTime(time[*slow]), *slow)};
    const double threshold = ctx.Option("threshold");
    std::vector<int64_t> outliers;
    for (int64_t s : steps) {
      if (std::abs(static_cast<double>(time[s] - median)) >
          threshold * static_cast<double>(median)) {
        outliers.push_back(s);
      }
    }
    if (outliers.empty()) {
      reports.push_back(absl::StrFormat(
          "no step is more than %.0f%% away from the median", 100 * threshold));
      return reports;
    }
    std::stable_sort(
        outliers.begin(), outliers.end(), [&](int64_t a, int64_t b) {
          return std::abs(time[a] - median) > std::abs(time[b] - median);
        });
    const size_t top = static_cast<size_t>(ctx.IntOption("top"));
    if (outliers.size() > top) outliers.resize(top);
    // Each node's time per step (0 where it did not run) and its median.
    std::vector<std::string> lines;
    for (int64_t s : outliers) {
      struct Diff {
        const GraphNode* node;
        int64_t here, usual;
      };
      std::vector<Diff> diffs;
      for (const auto& node : model.nodes()) {
        if (node->execs.empty()) continue;
        std::vector<int64_t> per_step(steps.size(), 0);
        int64_t here = 0;
        for (const StepExec& e : node->execs) {
          auto it = std::lower_bound(steps.begin(), steps.end(), e.step);
          if (it == steps.end() || *it != e.step) continue;
          per_step[it - steps.begin()] = e.exec_micros() / ranks;
          if (e.step == s) here = e.exec_micros() / ranks;
        }
        const int64_t usual = Median(per_step);
        if (here != usual) diffs.push_back(Diff{node.get(), here, usual});
      }
      std::stable_sort(
          diffs.begin(), diffs.end(), [](const Diff& a, const Diff& b) {
            return std::abs(a.here - a.usual) > std::abs(b.here - b.usual);
          });
      std::vector<std::string> nodes;
      for (size_t i = 0; i < diffs.size() && i < top; ++i) {
        const Diff& d = diffs[i];
        nodes.push_back(
            absl::StrFormat("%s %s%s (%s here, %s usually)", d.node->name,
                            d.here >= d.usual ? "+" : "-",
                            FormatTime(std::abs(d.here - d.usual)),
                            FormatTime(d.here), FormatTime(d.usual)));
      }
      lines.push_back(absl::StrFormat(
          "step %d: %s, %s%s than the median%s%s", s, FormatTime(time[s]),
          Pct(std::abs(time[s] - median), median),
          time[s] > median ? " slower" : " faster",
          nodes.empty() ? "" : "; nodes that differ most: ",
          absl::StrJoin(nodes, ", ")));
    }
    reports.push_back(absl::StrJoin(lines, "\n"));
    reports.push_back(
        "Uneven steps: look for work that runs only in some steps (summaries, "
        "checkpoints, evaluation, host syncs), input stalls, or warm-up "
        "(first steps compile and allocate); profile steps past warm-up.");
    return reports;
  }
};

}  // namespace

std::unique_ptr<Checker> NewStepTimeChecker() {
  return std::make_unique<StepTimeChecker>();
}

}  // namespace tfprof
