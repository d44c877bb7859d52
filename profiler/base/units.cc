#include "profiler/base/units.h"

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

std::string FormatShape(const std::vector<int64_t>& shape) {
  return absl::StrJoin(shape, "x");
}

}  // namespace tfprof
