// Saturating int64 arithmetic, and division rounded down or up: statistics from
// hostile or corrupt files can be huge; sums and products stop at the int64
// limits instead of overflowing.
#ifndef TFPROF_PROFILER_BASE_SATURATE_H_
#define TFPROF_PROFILER_BASE_SATURATE_H_

#include <cstdint>
#include <limits>

namespace tfprof {

inline int64_t SatAdd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) {
    return b > 0 ? std::numeric_limits<int64_t>::max()
                 : std::numeric_limits<int64_t>::min();
  }
  return r;
}

inline int64_t SatMul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) {
    return (a < 0) != (b < 0) ? std::numeric_limits<int64_t>::min()
                              : std::numeric_limits<int64_t>::max();
  }
  return r;
}

inline int64_t SatSub(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) {
    return b < 0 ? std::numeric_limits<int64_t>::max()
                 : std::numeric_limits<int64_t>::min();
  }
  return r;
}

// a += b, saturating.
inline void SatInc(int64_t* a, int64_t b) { *a = SatAdd(*a, b); }

// a / b rounded toward minus infinity (b > 0, or b < 0 and a != INT64_MIN).
inline int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
// a / b rounded toward plus infinity (same domain).
inline int64_t CeilDiv(int64_t a, int64_t b) { return -FloorDiv(-a, b); }

}  // namespace tfprof

#endif  // TFPROF_PROFILER_BASE_SATURATE_H_
