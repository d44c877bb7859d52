// tfprof's number formats: times, bytes, counts and shapes.
#ifndef TFPROF_PROFILER_BASE_UNITS_H_
#define TFPROF_PROFILER_BASE_UNITS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace tfprof {

// Counts: 999, 1.00k, 2.50m, 3.00b.
std::string FormatNumber(int64_t n);
// Microseconds: 999us, 1.00ms, 2.50sec.
std::string FormatTime(int64_t micros);
// Bytes, decimal units: 999B, 1.00KB, 2.50MB (no GB, as tfprof).
std::string FormatMemory(int64_t bytes);
// A statistic by its attribute's unit: times for "*micros", bytes for
// "*bytes", counts otherwise; negative values (changes) with a '-', and
// with `sign`, positive ones with a '+'.
std::string FormatStat(const std::string& attribute, int64_t value,
                       bool sign = false);
// A time given in nanoseconds, for reading: "850ns", "12.345us", "1.234ms",
// "2.500sec".
std::string FormatNanos(int64_t ns);
// Nanoseconds as exact decimal microseconds ("1234.567"), for CSV and JSON.
std::string NanosAsMicros(int64_t ns);
// Float ops and rates with SI prefixes, 4 significant digits: "1.047
// TFLOP", "989.4 TFLOP/s"; bandwidth "4.8 TB/s".
std::string FormatFlopCount(double flops);
std::string FormatFlopRate(double flops_per_sec);
std::string FormatBandwidth(double bytes_per_sec);
// Dims joined with "x": 3x3x3x6.
std::string FormatShape(const std::vector<int64_t>& shape);

// The kind of unit an attribute's values have: times ("*micros",
// microseconds), bytes ("*bytes") or counts (everything else).
enum class StatUnit { kTime, kBytes, kCount, kFraction };
// micros/bytes attributes are times/sizes, mfu a fraction, the rest counts.
StatUnit UnitOfStat(const std::string& attribute);
// A value as typed: a number (fractions and exponents: 0.35, 3e14) with an
// optional unit of its kind: us, ms, s for times (in microseconds; none:
// us), B, KB, MB, GB for bytes (decimal), k, m, b, t for counts, % for
// fractions ("35%" is 0.35).
absl::StatusOr<double> ParseStatNumber(const std::string& text, StatUnit unit);
// The same rounded to an integer.
absl::StatusOr<int64_t> ParseStatValue(const std::string& text, StatUnit unit);

}  // namespace tfprof

#endif  // TFPROF_PROFILER_BASE_UNITS_H_
