#include "profiler/base/stats.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numeric>
#include <utility>

namespace tfprof {
namespace {

constexpr size_t kExactLimit = 25;

// P(U <= u) for samples of n and m values without ties: the number of
// orderings with U = k, by the recurrence c(n, m, k) = c(n - 1, m, k - m) +
// c(n, m - 1, k), divided by the number of orderings.
double ExactCdf(size_t n, size_t m, double u) {
  const size_t top = n * m;
  // counts[j][k]: orderings of i values of a and j of b with U = k.
  std::vector<std::vector<double>> counts(m + 1,
                                          std::vector<double>(top + 1, 0));
  for (size_t j = 0; j <= m; ++j) counts[j][0] = 1;  // i = 0
  for (size_t i = 1; i <= n; ++i) {
    std::vector<std::vector<double>> next(m + 1,
                                          std::vector<double>(top + 1, 0));
    next[0][0] = 1;
    for (size_t j = 1; j <= m; ++j) {
      for (size_t k = 0; k <= i * j; ++k) {
        next[j][k] = (k >= j ? counts[j][k - j] : 0) + next[j - 1][k];
      }
    }
    counts = std::move(next);
  }
  const std::vector<double>& c = counts[m];
  const double all = std::accumulate(c.begin(), c.end(), 0.0);
  double below = 0;
  for (size_t k = 0; k <= top && static_cast<double>(k) <= u + 1e-9; ++k) {
    below += c[k];
  }
  return below / all;
}

}  // namespace

double MannWhitneyP(const std::vector<int64_t>& a,
                    const std::vector<int64_t>& b) {
  const size_t n = a.size(), m = b.size();
  if (n == 0 || m == 0) return 1;
  std::vector<std::pair<int64_t, int>> all;
  for (int64_t v : a) all.emplace_back(v, 0);
  for (int64_t v : b) all.emplace_back(v, 1);
  std::sort(all.begin(), all.end());
  // Ranks (1-based, ties averaged), the rank sum of `a` and the ties.
  double rank_sum_a = 0, tie_term = 0;
  bool ties = false;
  for (size_t i = 0; i < all.size();) {
    size_t j = i;
    while (j < all.size() && all[j].first == all[i].first) ++j;
    const double t = static_cast<double>(j - i);
    const double rank =
        (static_cast<double>(i + 1) + static_cast<double>(j)) / 2;
    for (size_t k = i; k < j; ++k) {
      if (all[k].second == 0) rank_sum_a += rank;
    }
    if (t > 1) {
      ties = true;
      tie_term += t * t * t - t;
    }
    i = j;
  }
  const double dn = static_cast<double>(n), dm = static_cast<double>(m);
  const double u = rank_sum_a - dn * (dn + 1) / 2;
  if (!ties && n <= kExactLimit && m <= kExactLimit) {
    const double low = ExactCdf(n, m, u);
    const double high = 1 - ExactCdf(n, m, u - 1);  // P(U >= u)
    return std::min(1.0, 2 * std::min(low, high));
  }
  const double total = dn + dm;
  const double variance =
      dn * dm / 12 * ((total + 1) - tie_term / (total * (total - 1)));
  if (variance <= 0) return 1;  // every value equal
  const double z =
      std::max(0.0, std::abs(u - dn * dm / 2) - 0.5) / std::sqrt(variance);
  return std::min(1.0, std::erfc(z / std::sqrt(2.0)));
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
