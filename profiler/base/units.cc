#include "profiler/base/units.h"

#include <climits>
#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
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

std::string FormatShape(const std::vector<int64_t>& shape) {
  return absl::StrJoin(shape, "x");
}

StatUnit UnitOfStat(const std::string& attr) {
  if (absl::StrContains(attr, "micros")) return StatUnit::kTime;
  if (absl::StrContains(attr, "bytes")) return StatUnit::kBytes;
  return StatUnit::kCount;
}

absl::StatusOr<int64_t> ParseStatValue(const std::string& text, StatUnit unit) {
  size_t split = 0;
  while (split < text.size() &&
         (absl::ascii_isdigit(static_cast<unsigned char>(text[split])) ||
          text[split] == '.')) {
    ++split;
  }
  double number;
  if (split == 0 || !absl::SimpleAtod(text.substr(0, split), &number)) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected a number, got '", text, "'"));
  }
  const std::string suffix = text.substr(split);
  double scale = 1;
  if (unit == StatUnit::kTime) {
    if (suffix.empty() || suffix == "us") {
      scale = 1;
    } else if (suffix == "ms") {
      scale = 1e3;
    } else if (suffix == "s" || suffix == "sec") {
      scale = 1e6;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown time unit '", suffix, "' in '", text, "' (us, ms, s)"));
    }
  } else if (unit == StatUnit::kBytes) {
    const std::string s = absl::AsciiStrToUpper(suffix);
    if (s.empty() || s == "B") {
      scale = 1;
    } else if (s == "KB") {
      scale = 1e3;
    } else if (s == "MB") {
      scale = 1e6;
    } else if (s == "GB") {
      scale = 1e9;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown size unit '", suffix, "' in '", text, "' (B, KB, MB, GB)"));
    }
  } else {
    if (suffix.empty()) {
      scale = 1;
    } else if (suffix == "k") {
      scale = 1e3;
    } else if (suffix == "m") {
      scale = 1e6;
    } else if (suffix == "b") {
      scale = 1e9;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown count unit '", suffix, "' in '", text, "' (k, m, b)"));
    }
  }
  const double v = number * scale;
  if (!(v < 9.2e18)) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", text, "' is too large"));
  }
  return static_cast<int64_t>(std::llround(v));
}

}  // namespace tfprof
