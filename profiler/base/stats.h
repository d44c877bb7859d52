// Statistics for comparing two runs: the change of per-step values with its
// confidence interval and a test against a practical floor (Student's t),
// and a false-discovery-rate correction over many tests.
#ifndef TFPROF_PROFILER_BASE_STATS_H_
#define TFPROF_PROFILER_BASE_STATS_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/types/span.h"

namespace tfprof {

// Benjamini-Hochberg adjusted p-values (q-values), in the order given: a
// test is significant at false discovery rate `alpha` when its q <= alpha.
// Entries < 0 (no test) are left out and stay as they are.
std::vector<double> BenjaminiHochberg(const std::vector<double>& p);

// Student's t distribution with `df` > 0 degrees of freedom: P(|T| >= |t|).
double StudentTwoSidedP(double t, double df);
// The t > 0 with P(|T| >= t) = p, for p in (0, 1).
double StudentCritical(double p, double df);

// What TestChange compares: each run's value in each of its steps, and how
// much of a step's value per-occurrence jitter alone makes vary.
struct ChangeInput {
  absl::Span<const double> base, current;  // per step, >= 0
  // The variance of one step's value that the spread of its occurrences
  // implies (0 when unknown): a lower bound on the step-to-step variance.
  double base_jitter = 0, current_jitter = 0;
  // The practical floor: a change of at most this (per step, in the
  // values' unit) counts as no change.
  double floor = 0;
};

// The change of the mean per-step value, current minus base, tested
// against the interval null "|change| <= floor". Values that are all > 0
// are compared as logarithms (timings vary in proportion: a slower clock
// stretches everything) with the pooled variance and n_b + n_c - 2 degrees
// of freedom; values with zeros (a row missing from some steps) as they
// are, with Welch's unequal variances and Satterthwaite's degrees of
// freedom rounded down. Each side's variance is at least its jitter (made
// relative for logarithms).
struct ChangeTest {
  bool tested = false;  // both sides have 2 or more steps
  bool log_scale = false;
  double base_mean = 0, current_mean = 0;  // per step, arithmetic
  // The change per step, in the values' unit: on the log scale the base
  // mean times (ratio of geometric means - 1).
  double estimate = 0;
  // The (1 - alpha) confidence interval of the change, in the values' unit.
  double ci_low = 0, ci_high = 0;
  // The p-value of "|change| <= floor" (two one-sided t tests at the
  // floor's edges, doubled): below alpha exactly when the interval lies
  // beyond the floor on one side.
  double p_value = 1;
  // On the test's scale (logarithms or values): the change, the floor, the
  // interval, each side's per-step variance and its steps, and the degrees
  // of freedom.
  double d = 0, phi = 0, low = 0, high = 0, var_b = 0, var_c = 0, df = 0;
  size_t n_b = 0, n_c = 0;

  // The interval lies within the floor on both sides.
  bool InsideFloor() const { return tested && low >= -phi && high <= phi; }
};

ChangeTest TestChange(const ChangeInput& in, double alpha);

// How many more steps on each side would likely decide a change that
// TestChange left open, if the means and variances stay as they are: the
// least k with the change beyond the floor at level `alpha_change` (the
// level its false-discovery correction asks of it) or, when the change is
// inside the floor, its interval inside the floor at level `alpha`. At
// most `cap` (a change right at the floor needs ever more steps); 0 when
// nothing is open.
int MoreStepsNeeded(const ChangeTest& t, double alpha, double alpha_change,
                    int cap);

}  // namespace tfprof

#endif  // TFPROF_PROFILER_BASE_STATS_H_
