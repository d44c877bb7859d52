// advise: checkers that look at a profile and say what to fix.
//
// A checker has a name, says what it looks at and what it needs, declares
// its options, and turns a profile into reports (lines of text). tfprof's
// own three checkers run by default, with its report texts; the others run
// when named (`advise -checker NAME`, or `-checker all`).
#ifndef TFPROF_PROFILER_ADVISE_ADVISOR_H_
#define TFPROF_PROFILER_ADVISE_ADVISOR_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "profiler/base/protos.h"
#include "profiler/model/model.h"
#include "profiler/views/flops.h"
#include "profiler/views/steps.h"
#include "profiler/views/views.h"

namespace tfprof {

struct CheckerOption {
  std::string name;           // e.g. "top"
  std::string default_value;  // as text
  double min = 0, max = 0;    // the valid range
  bool integer = false;
  std::string help;
};

// What a checker runs on.
class CheckerContext {
 public:
  CheckerContext(const Model& model, Views* views,
                 std::map<std::string, double> options,
                 std::vector<std::string>* notes, PeakOverride peaks = {},
                 const StepTable* steps = nullptr)
      : model_(model),
        views_(views),
        options_(std::move(options)),
        notes_(notes),
        peaks_(peaks),
        steps_(steps) {}
  const Model& model() const { return model_; }
  Views* views() const { return views_; }
  // The peaks the user gave (--peak_flops, --peak_bytes_per_sec).
  const PeakOverride& peaks() const { return peaks_; }
  // The run's steps table when it is not the model's own (several ranks:
  // the job's, each step the slowest rank's); null: the model's.
  const StepTable* steps() const { return steps_; }
  // An option's value (validated, or its default).
  double Option(const std::string& name) const { return options_.at(name); }
  int64_t IntOption(const std::string& name) const {
    return static_cast<int64_t>(options_.at(name));
  }
  // Says why something could not be looked at (printed as "note: ...").
  void Note(const std::string& note) const { notes_->push_back(note); }

 private:
  const Model& model_;
  Views* views_;
  std::map<std::string, double> options_;
  std::vector<std::string>* notes_;
  PeakOverride peaks_;
  const StepTable* steps_;
};

class Checker {
 public:
  virtual ~Checker() = default;
  virtual std::string name() const = 0;
  // What it checks, one line.
  virtual std::string help() const = 0;
  // What it needs from the profile, e.g. "RunMetadata step stats".
  virtual std::string needs() const = 0;
  // Whether `advise` runs it by default on a profile from `source`:
  // tfprof's own checkers for TensorFlow profiles, the step, idle, copy,
  // memory and MFU checkers for traces (PyTorch, XSpace).
  virtual bool by_default(ProfileSource source) const {
    (void)source;
    return false;
  }
  virtual std::vector<CheckerOption> options() const { return {}; }
  // The reports; a checker whose inputs are missing notes it and returns
  // none.
  virtual std::vector<std::string> Run(const CheckerContext& ctx) const = 0;
};

// Every checker, in the order their reports are printed.
const std::vector<const Checker*>& Checkers();
const Checker* FindChecker(const std::string& name);

// The checkers that run by default on a profile from `source`, with default
// options (tfprof's own three for TensorFlow).
tfpb::AdvisorOptionsProto DefaultAdvisorOptions(
    ProfileSource source = ProfileSource::kTensorFlow);
// For the docs: "TensorFlow", "traces", "all" or "no".
std::string DefaultFor(const Checker& checker);
// Every checker.
tfpb::AdvisorOptionsProto AllAdvisorOptions();

// Runs the checkers named in `options`. Unknown checker names and invalid
// options are errors. Problems that make a checker skip its work (e.g. no
// RunMetadata) are added to `notes` when it is not null.
// `peaks` replace the peak table's for MfuChecker; `steps`, when given, is
// the run's steps table in place of the model's (several ranks: the job's).
absl::StatusOr<tfpb::AdviceProto> Advise(
    const Model& model, Views* views, const tfpb::AdvisorOptionsProto& options,
    std::vector<std::string>* notes = nullptr, const PeakOverride& peaks = {},
    const StepTable* steps = nullptr);

// "\n<Checker>:\n" followed by its reports, one per line, as tfprof prints.
std::string RenderAdvice(const tfpb::AdviceProto& advice);

}  // namespace tfprof

#endif  // TFPROF_PROFILER_ADVISE_ADVISOR_H_
