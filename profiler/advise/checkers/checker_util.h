// What several checkers share: percentages, step spans and the note a
// checker leaves when the profile has no step stats.
#ifndef TFPROF_PROFILER_ADVISE_CHECKERS_CHECKER_UTIL_H_
#define TFPROF_PROFILER_ADVISE_CHECKERS_CHECKER_UTIL_H_

#include <cstdint>
#include <map>
#include <string>

#include "profiler/advise/advisor.h"
#include "profiler/model/model.h"

namespace tfprof {

// part/whole as "12.3%" (0.0% when whole is 0).
std::string Pct(double part, double whole);

// Whether a checker reads the accelerator's work from a trace's record
// (PyTorch, XSpace: kernels, copies and sets to the nanosecond) rather than
// from step stats, as tfprof reads a TensorFlow run.
bool ReadsTraceWork(const Model& model);

// Says so and returns false when the profile has no step stats.
bool NeedSteps(const CheckerContext& ctx, const std::string& checker);

struct Span {
  int64_t start = 0, end = 0;
  int64_t length() const { return end > start ? end - start : 0; }
};

// The wall span of each step in nanoseconds, from the steps table
// (ComputeSteps: the step's own markers, else its first start to its last
// end; the context's table when it has one, as several ranks do).
std::map<int64_t, Span> StepSpans(const CheckerContext& ctx);

}  // namespace tfprof

#endif  // TFPROF_PROFILER_ADVISE_CHECKERS_CHECKER_UTIL_H_
