// Statistics for comparing two runs: a rank test on per-step values and a
// false-discovery-rate correction over many such tests.
#ifndef TFPROF_PROFILER_BASE_STATS_H_
#define TFPROF_PROFILER_BASE_STATS_H_

#include <cstdint>
#include <vector>

namespace tfprof {

// The two-sided p-value of the Mann-Whitney U test (Wilcoxon rank-sum) that
// samples `a` and `b` come from the same distribution. Exact for samples of
// at most 25 values each without ties; otherwise the normal approximation
// with the tie correction and a continuity correction. 1 when either sample
// is empty or every value is equal.
double MannWhitneyP(const std::vector<int64_t>& a,
                    const std::vector<int64_t>& b);

// Benjamini-Hochberg adjusted p-values (q-values), in the order given: a
// test is significant at false discovery rate `alpha` when its q <= alpha.
// Entries < 0 (no test) are left out and stay as they are.
std::vector<double> BenjaminiHochberg(const std::vector<double>& p);

}  // namespace tfprof

#endif  // TFPROF_PROFILER_BASE_STATS_H_
