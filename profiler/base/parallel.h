// Work split over the machine's cores where it is large enough to gain.
#ifndef TFPROF_PROFILER_BASE_PARALLEL_H_
#define TFPROF_PROFILER_BASE_PARALLEL_H_

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <thread>

namespace tfprof {

// Below this many elements one thread does the work (starting a thread
// costs more than it gains).
inline constexpr size_t kParallelMinItems = 1 << 15;

// Whether a second thread can run at the same time as this one.
inline bool HaveSecondCore() {
  static const bool have = std::thread::hardware_concurrency() >= 2;
  return have;
}

// Runs a() and b() at the same time (b on a new thread) when `parallel`,
// else one after the other; returns when both are done.
template <typename A, typename B>
void RunBoth(bool parallel, A a, B b) {
  if (!parallel || !HaveSecondCore()) {
    a();
    b();
    return;
  }
  std::thread other(b);
  a();
  other.join();
}

// std::sort of [begin, end) by `less`, the two halves sorted at the same
// time on large inputs and then merged. Not stable, like std::sort (the
// order of equivalent elements may differ from std::sort's).
template <typename It, typename Less>
void ParallelSort(It begin, It end, Less less) {
  const size_t n = static_cast<size_t>(std::distance(begin, end));
  if (n < kParallelMinItems) {
    std::sort(begin, end, less);
    return;
  }
  const It mid = begin + static_cast<std::ptrdiff_t>(n / 2);
  RunBoth(
      true, [&] { std::sort(begin, mid, less); },
      [&] { std::sort(mid, end, less); });
  std::inplace_merge(begin, mid, end, less);
}

}  // namespace tfprof

#endif  // TFPROF_PROFILER_BASE_PARALLEL_H_
