#include "profiler/advise/advisor.h"

#include <map>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "profiler/advise/checkers/checkers.h"

namespace tfprof {
namespace {

constexpr char kJob[] = "JobChecker";

}  // namespace

const std::vector<const Checker*>& Checkers() {
  static const std::vector<const Checker*>* const checkers = [] {
    auto* v = new std::vector<const Checker*>;
    for (auto make :
         {NewAcceleratorUtilizationChecker, NewOperationChecker,
          NewExpensiveOperationChecker, NewHostDeviceCopyChecker,
          NewCpuFallbackChecker, NewAcceleratorIdleChecker, NewStepTimeChecker,
          NewFlopsCoverageChecker, NewMfuChecker, NewMemoryChecker,
          NewLayoutConversionChecker}) {
      v->push_back(make().release());
    }
    return v;
  }();
  return *checkers;
}

const Checker* FindChecker(const std::string& name) {
  for (const Checker* c : Checkers()) {
    if (c->name() == name) return c;
  }
  return nullptr;
}

tfpb::AdvisorOptionsProto DefaultAdvisorOptions(ProfileSource source) {
  tfpb::AdvisorOptionsProto options;
  for (const Checker* c : Checkers()) {
    if (c->by_default(source)) (*options.mutable_checkers())[c->name()];
  }
  return options;
}

std::string DefaultFor(const Checker& checker) {
  const bool tf = checker.by_default(ProfileSource::kTensorFlow);
  const bool traces = checker.by_default(ProfileSource::kPyTorch) &&
                      checker.by_default(ProfileSource::kXSpace);
  if (tf && traces) return "all";
  if (tf) return "TensorFlow";
  if (traces) return "traces";
  return "no";
}

tfpb::AdvisorOptionsProto AllAdvisorOptions() {
  tfpb::AdvisorOptionsProto options;
  for (const Checker* c : Checkers()) (*options.mutable_checkers())[c->name()];
  return options;
}

absl::StatusOr<tfpb::AdviceProto> Advise(
    const Model& model, Views* views, const tfpb::AdvisorOptionsProto& options,
    std::vector<std::string>* notes, const PeakOverride& peaks,
    const StepTable* steps) {
  std::vector<std::string> ignored;
  if (notes == nullptr) notes = &ignored;
  // Validate everything before running anything.
  std::map<std::string, std::map<std::string, double>> values;
  // In name order (a protobuf map's order changes from run to run), so that
  // of several bad entries the same one is reported.
  const std::map<std::string, tfpb::AdvisorOptionsProto::CheckerOption>
      checkers(options.checkers().begin(), options.checkers().end());
  for (const auto& [name, checker_options] : checkers) {
    if (name == kJob) continue;  // TensorFlow-internal; reports nothing
    const Checker* c = FindChecker(name);
    if (c == nullptr) {
      std::vector<std::string> names;
      for (const Checker* k : Checkers()) names.push_back(k->name());
      return absl::InvalidArgumentError(
          absl::StrCat("unknown checker '", name,
                       "' (checkers: ", absl::StrJoin(names, ", "), ")"));
    }
    std::map<std::string, double>& v = values[name];
    const std::vector<CheckerOption> declared = c->options();
    for (const CheckerOption& o : declared) {
      double d = 0;
      (void)absl::SimpleAtod(o.default_value, &d);
      v[o.name] = d;
    }
    const std::map<std::string, std::string> given(
        checker_options.options().begin(), checker_options.options().end());
    for (const auto& entry : given) {
      const std::string& key = entry.first;
      const std::string& text = entry.second;
      auto o =
          std::find_if(declared.begin(), declared.end(),
                       [&](const CheckerOption& x) { return x.name == key; });
      if (o == declared.end()) {
        std::vector<std::string> names;
        for (const CheckerOption& x : declared) names.push_back(x.name);
        return absl::InvalidArgumentError(absl::StrCat(
            "unknown option '", key, "' for ", name,
            names.empty() ? " (it takes none)"
                          : absl::StrCat(" (options: ",
                                         absl::StrJoin(names, ", "), ")")));
      }
      double d = 0;
      bool ok = false;
      if (o->integer) {
        int64_t i = 0;
        ok = absl::SimpleAtoi(text, &i);
        d = static_cast<double>(i);
      } else {
        ok = absl::SimpleAtod(text, &d);
      }
      if (!ok || d < o->min || d > o->max) {
        return absl::InvalidArgumentError(
            absl::StrCat(name, ": ", key, " must be ",
                         o->integer ? "a whole number" : "a number", " from ",
                         o->min, " to ", o->max, ", got '", text, "'"));
      }
      v[key] = d;
    }
  }
  tfpb::AdviceProto advice;
  for (const Checker* c : Checkers()) {
    auto it = values.find(c->name());
    if (it == values.end()) continue;
    CheckerContext ctx(model, views, it->second, notes, peaks, steps);
    auto& out = (*advice.mutable_checkers())[c->name()];
    for (const std::string& r : c->Run(ctx)) out.add_reports(r);
  }
  return advice;
}

std::string RenderAdvice(const tfpb::AdviceProto& advice) {
  std::string out;
  // Fixed checker order (a protobuf map has none).
  for (const Checker* c : Checkers()) {
    auto it = advice.checkers().find(c->name());
    if (it == advice.checkers().end()) continue;
    absl::StrAppend(&out, "\n", c->name(), ":\n");
    for (const std::string& r : it->second.reports()) {
      absl::StrAppend(&out, r, "\n");
    }
  }
  return out;
}

}  // namespace tfprof
