#include "profiler/base/units.h"

#include <climits>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace tfprof {

std::string FormatNumber(int64_t n) {
  if (n < 1000) return absl::StrFormat("%d", n);
  if (n < 1000000) return absl::StrFormat("%.2fk", n / 1000.0);
  if (n < 1000000000) return absl::StrFormat("%.2fm", n / 1000000.0);
  return absl::StrFormat("%.2fb", n / 1000000000.0);
}

std::string FormatTime(int64_t micros) {
  if (micros < 1000) return absl::StrFormat("%dus", micros);
  if (micros < 1000000) return absl::StrFormat("%.2fms", micros / 1000.0);
  return absl::StrFormat("%.2fsec", micros / 1000000.0);
}

std::string FormatMemory(int64_t bytes) {
  if (bytes < 1000) return absl::StrFormat("%dB", bytes);
  if (bytes < 1000000) return absl::StrFormat("%.2fKB", bytes / 1000.0);
  return absl::StrFormat("%.2fMB", bytes / 1000000.0);
}

std::string FormatStat(const std::string& attribute, int64_t value, bool sign) {
  const char* prefix = value < 0 ? "-" : sign && value > 0 ? "+" : "";
  const int64_t magnitude =
      value < 0 ? (value == INT64_MIN ? INT64_MAX : -value) : value;
  std::string text;
  if (absl::EndsWith(attribute, "micros")) {
    text = FormatTime(magnitude);
  } else if (absl::EndsWith(attribute, "bytes")) {
    text = FormatMemory(magnitude);
  } else {
    text = FormatNumber(magnitude);
  }
  return prefix + text;
}

std::string FormatNanos(int64_t ns) {
  if (ns < 1000) return absl::StrFormat("%dns", ns);
  if (ns < 1000000) return absl::StrFormat("%.3fus", ns / 1e3);
  if (ns < 1000000000) return absl::StrFormat("%.3fms", ns / 1e6);
  return absl::StrFormat("%.3fsec", ns / 1e9);
}

std::string NanosAsMicros(int64_t ns) {
  const char* sign = ns < 0 ? "-" : "";
  // |INT64_MIN| does not fit: take the digits from the unsigned value.
  const uint64_t abs = ns < 0 ? 0 - static_cast<uint64_t>(ns) : ns;
  return absl::StrFormat("%s%d.%03d", sign, abs / 1000, abs % 1000);
}

namespace {

std::string WithPrefix(double v, const char* unit) {
  static const char* const kPrefixes[] = {"", "k", "M", "G", "T", "P", "E"};
  size_t i = 0;
  while (v >= 999.95 && i + 1 < sizeof(kPrefixes) / sizeof(kPrefixes[0])) {
    v /= 1000;
    ++i;
  }
  return absl::StrFormat("%.4g %s%s", v, kPrefixes[i], unit);
}

}  // namespace

std::string FormatFlopCount(double flops) { return WithPrefix(flops, "FLOP"); }
std::string FormatFlopRate(double flops_per_sec) {
  return WithPrefix(flops_per_sec, "FLOP/s");
}
std::string FormatBandwidth(double bytes_per_sec) {
  return WithPrefix(bytes_per_sec, "B/s");
}

std::string FormatShape(const std::vector<int64_t>& shape) {
  return absl::StrJoin(shape, "x");
}

}  // namespace tfprof
