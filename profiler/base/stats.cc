#include "profiler/base/stats.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <map>
#include <numeric>
#include <utility>

namespace tfprof {
namespace {

// The continued fraction of the regularized incomplete beta function
// I_x(a, b), evaluated by the modified Lentz method; it converges quickly
// for x < (a + 1) / (a + b + 2).
double BetaFraction(double x, double a, double b) {
  constexpr double kTiny = 1e-300;
  auto guard = [](double v) { return std::fabs(v) < kTiny ? kTiny : v; };
  double c = 1;
  double d = 1 / guard(1 - (a + b) * x / (a + 1));
  double h = d;
  for (int m = 1; m <= 400; ++m) {
    const double dm = m;
    // The even step, then the odd one.
    double num = dm * (b - dm) * x / ((a + 2 * dm - 1) * (a + 2 * dm));
    d = 1 / guard(1 + num * d);
    c = guard(1 + num / c);
    h *= d * c;
    num = -(a + dm) * (a + b + dm) * x / ((a + 2 * dm) * (a + 2 * dm + 1));
    d = 1 / guard(1 + num * d);
    c = guard(1 + num / c);
    const double step = d * c;
    h *= step;
    if (std::fabs(step - 1) < 1e-15) break;
  }
  return h;
}

// The regularized incomplete beta function I_x(a, b).
double IncompleteBeta(double x, double a, double b) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double log_front =
      a * std::log(x) + b * std::log1p(-x) -
      (std::lgamma(a) + std::lgamma(b) - std::lgamma(a + b));
  const double front = std::exp(log_front);
  if (x < (a + 1) / (a + b + 2)) return front * BetaFraction(x, a, b) / a;
  return 1 - front * BetaFraction(1 - x, b, a) / b;
}

// The z > 0 with P(|Z| >= z) = p < 1 for a standard normal Z: Newton's
// method on erfc from the tail's asymptote (a few steps).
double NormalRoot(double p) {
  double z = std::sqrt(-2 * std::log(p / 2));  // above the root
  for (int i = 0; i < 50; ++i) {
    const double f = std::erfc(z / std::sqrt(2.0)) - p;
    const double slope = -std::sqrt(2 / M_PI) * std::exp(-z * z / 2);
    const double next = std::max(0.0, z - f / slope);
    if (std::fabs(next - z) < 1e-12 * std::max(1.0, z)) return next;
    z = next;
  }
  return z;
}

// NormalRoot, remembering the last one asked per thread: a diff's open
// rows mostly ask for alpha's.
double NormalCritical(double p) {
  if (p >= 1) return 0;
  thread_local double last_p = -1, last_z = 0;
  if (p == last_p) return last_z;
  last_p = p;
  last_z = NormalRoot(p);
  return last_z;
}

// Student's critical value from the normal one by the Cornish-Fisher
// expansion in 1/df (four terms): within a few percent from df = 3 on,
// which is plenty for estimating how many steps a decision needs.
double ApproxStudentCritical(double z, double df) {
  const double z2 = z * z;
  const double z3 = z2 * z, z5 = z3 * z2, z7 = z5 * z2, z9 = z7 * z2;
  return z + (z3 + z) / (4 * df) + (5 * z5 + 16 * z3 + 3 * z) / (96 * df * df) +
         (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / (384 * df * df * df) +
         (79 * z9 + 776 * z7 + 1482 * z5 - 1920 * z3 - 945 * z) /
             (92160 * df * df * df * df);
}

struct SideMoments {
  double mean = 0, variance = 0;
};

SideMoments Moments(absl::Span<const double> v, bool log_scale) {
  SideMoments m;
  const double n = static_cast<double>(v.size());
  for (double x : v) m.mean += log_scale ? std::log(x) : x;
  m.mean /= n;
  for (double x : v) {
    const double e = (log_scale ? std::log(x) : x) - m.mean;
    m.variance += e * e;
  }
  m.variance = v.size() > 1 ? m.variance / (n - 1) : 0;
  return m;
}

double Mean(absl::Span<const double> v) {
  double sum = 0;
  for (double x : v) sum += x;
  return v.empty() ? 0 : sum / static_cast<double>(v.size());
}

// The standard error of the change and its degrees of freedom with n_b
// and n_c steps, for per-step variances var_b and var_c: pooled on the log
// scale, Welch-Satterthwaite (rounded down) on the plain one.
std::pair<double, double> ErrorAndDf(bool log_scale, double var_b, double var_c,
                                     double n_b, double n_c) {
  if (log_scale) {
    const double pooled =
        ((n_b - 1) * var_b + (n_c - 1) * var_c) / (n_b + n_c - 2);
    return {std::sqrt(pooled * (1 / n_b + 1 / n_c)), n_b + n_c - 2};
  }
  const double eb = var_b / n_b, ec = var_c / n_c;
  const double se2 = eb + ec;
  const double denominator = eb * eb / (n_b - 1) + ec * ec / (n_c - 1);
  double df = denominator > 0 ? se2 * se2 / denominator : n_b + n_c - 2;
  df = std::max(1.0, std::floor(df + 1e-9));
  return {std::sqrt(se2), df};
}

}  // namespace

double StudentTwoSidedP(double t, double df) {
  if (!std::isfinite(t)) return 0;
  return IncompleteBeta(df / (df + t * t), df / 2, 0.5);
}

double StudentCritical(double p, double df) {
  // Computed once per (p, df) and thread: a diff asks the same few.
  thread_local std::map<std::pair<double, double>, double> cache;
  auto [it, added] = cache.try_emplace({p, df}, 0.0);
  if (!added) return it->second;
  double lo = 0, hi = 1;
  while (StudentTwoSidedP(hi, df) > p && hi < 1e12) hi *= 2;
  for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; ++i) {
    const double mid = (lo + hi) / 2;
    (StudentTwoSidedP(mid, df) > p ? lo : hi) = mid;
  }
  it->second = (lo + hi) / 2;
  return it->second;
}

ChangeTest TestChange(const ChangeInput& in, double alpha) {
  ChangeTest t;
  t.n_b = in.base.size();
  t.n_c = in.current.size();
  t.base_mean = Mean(in.base);
  t.current_mean = Mean(in.current);
  t.estimate = t.current_mean - t.base_mean;
  if (t.n_b < 2 || t.n_c < 2) return t;
  t.tested = true;
  auto positive = [](absl::Span<const double> v) {
    return std::all_of(v.begin(), v.end(), [](double x) { return x > 0; });
  };
  t.log_scale = positive(in.base) && positive(in.current);
  const SideMoments b = Moments(in.base, t.log_scale);
  const SideMoments c = Moments(in.current, t.log_scale);
  // The jitter's variance of a step's value, relative on the log scale
  // (Var(log X) ~ Var(X) / E[X]^2).
  const double jitter_b = t.log_scale
                              ? in.base_jitter / (t.base_mean * t.base_mean)
                              : in.base_jitter;
  const double jitter_c =
      t.log_scale ? in.current_jitter / (t.current_mean * t.current_mean)
                  : in.current_jitter;
  t.var_b = std::max(b.variance, jitter_b);
  t.var_c = std::max(c.variance, jitter_c);
  t.d = c.mean - b.mean;
  t.phi = t.log_scale ? std::log1p(in.floor / t.base_mean) : in.floor;
  const auto [se, df] =
      ErrorAndDf(t.log_scale, t.var_b, t.var_c, static_cast<double>(t.n_b),
                 static_cast<double>(t.n_c));
  t.df = df;
  const double excess = std::fabs(t.d) - t.phi;
  if (se > 0) {
    t.p_value =
        excess <= 0 ? 1.0 : std::min(1.0, StudentTwoSidedP(excess / se, df));
    const double q = StudentCritical(alpha, df);
    t.low = t.d - q * se;
    t.high = t.d + q * se;
  } else {
    t.p_value = excess > 0 ? 0.0 : 1.0;
    t.low = t.high = t.d;
  }
  auto units = [&](double v) {
    return t.log_scale ? t.base_mean * std::expm1(v) : v;
  };
  t.estimate = units(t.d);
  t.ci_low = units(t.low);
  t.ci_high = units(t.high);
  return t;
}

int MoreStepsNeeded(const ChangeTest& t, double alpha, double alpha_change,
                    int cap) {
  if (!t.tested) return cap;
  const double gap = std::fabs(std::fabs(t.d) - t.phi);
  const bool beyond = std::fabs(t.d) > t.phi;
  if (t.InsideFloor() || (beyond && t.p_value <= alpha_change)) return 0;
  if (gap <= 0) return cap;
  const double z = NormalCritical(beyond ? alpha_change : alpha);
  auto decided = [&](int k) {
    const auto [se, df] = ErrorAndDf(t.log_scale, t.var_b, t.var_c,
                                     static_cast<double>(t.n_b + k),
                                     static_cast<double>(t.n_c + k));
    return gap >= ApproxStudentCritical(z, df) * se;
  };
  // The condition only gets easier with k: double, then bisect.
  int hi = 1;
  while (hi < cap && !decided(hi)) hi = std::min(cap, hi * 2);
  if (!decided(hi)) return cap;
  int lo = hi / 2;  // not decided (or 0)
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    (decided(mid) ? hi : lo) = mid;
  }
  return hi;
}

std::vector<double> BenjaminiHochberg(const std::vector<double>& p) {
  std::vector<size_t> order;
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] >= 0) order.push_back(i);
  }
  std::sort(order.begin(), order.end(),
            [&](size_t x, size_t y) { return p[x] < p[y]; });
  std::vector<double> q = p;
  const double tests = static_cast<double>(order.size());
  double running = 1;
  for (size_t r = order.size(); r-- > 0;) {
    const double adjusted = p[order[r]] * tests / static_cast<double>(r + 1);
    running = std::min(running, adjusted);
    q[order[r]] = running;
  }
  return q;
}

}  // namespace tfprof
