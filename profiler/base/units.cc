#include "profiler/base/units.h"

#include <climits>
#include <cmath>
#include <vector>

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

StatUnit UnitOfStat(const std::string& attr) {
  if (absl::StrContains(attr, "micros")) return StatUnit::kTime;
  if (absl::StrContains(attr, "bytes")) return StatUnit::kBytes;
  if (attr == "mfu") return StatUnit::kFraction;
  return StatUnit::kCount;
}

namespace {

// The scale of a value's unit suffix, or an error naming the choices.
struct NamedScale {
  const char* name;
  double scale;
};
constexpr NamedScale kTimeUnits[] = {
    {"", 1}, {"us", 1}, {"ms", 1e3}, {"s", 1e6}, {"sec", 1e6}};
constexpr NamedScale kByteUnits[] = {
    {"", 1}, {"B", 1}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}};
constexpr NamedScale kCountUnits[] = {
    {"", 1}, {"k", 1e3}, {"m", 1e6}, {"b", 1e9}, {"t", 1e12}};

template <size_t N>
absl::StatusOr<double> ScaleIn(const NamedScale (&units)[N],
                               const std::string& key, const char* kind,
                               const std::string& suffix,
                               const std::string& text) {
  std::vector<std::string> names;
  for (const NamedScale& u : units) {
    if (key == u.name) return u.scale;
    if (*u.name != '\0' && std::string(u.name) != "sec") {
      names.push_back(u.name);
    }
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown ", kind, " unit '", suffix, "' in '", text, "' (",
                   absl::StrJoin(names, ", "), ")"));
}

absl::StatusOr<double> UnitScale(const std::string& suffix,
                                 const std::string& text, StatUnit unit) {
  switch (unit) {
    case StatUnit::kTime:
      return ScaleIn(kTimeUnits, suffix, "time", suffix, text);
    case StatUnit::kBytes:
      return ScaleIn(kByteUnits, absl::AsciiStrToUpper(suffix), "size", suffix,
                     text);
    case StatUnit::kFraction:
      if (suffix.empty()) return 1.0;
      if (suffix == "%") return 0.01;
      return absl::InvalidArgumentError(
          absl::StrCat("unknown unit '", suffix, "' in '", text,
                       "' (a fraction such as 0.35, or a percentage such as "
                       "35%)"));
    case StatUnit::kCount:
      break;
  }
  return ScaleIn(kCountUnits, suffix, "count", suffix, text);
}

}  // namespace

absl::StatusOr<double> ParseStatNumber(const std::string& text, StatUnit unit) {
  auto digit = [&](size_t i) {
    return i < text.size() &&
           absl::ascii_isdigit(static_cast<unsigned char>(text[i]));
  };
  size_t split = 0;
  while (digit(split) || (split < text.size() && text[split] == '.')) ++split;
  // An exponent: 3e14, 1.5E-3.
  if (split > 0 && split < text.size() &&
      (text[split] == 'e' || text[split] == 'E')) {
    size_t e = split + 1;
    if (e < text.size() && (text[e] == '+' || text[e] == '-')) ++e;
    if (digit(e)) {
      while (digit(e)) ++e;
      split = e;
    }
  }
  double number;
  if (split == 0 || !absl::SimpleAtod(text.substr(0, split), &number)) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected a number, got '", text, "'"));
  }
  absl::StatusOr<double> scale = UnitScale(text.substr(split), text, unit);
  if (!scale.ok()) return scale.status();
  const double v = number * *scale;
  if (!(v < 9.2e18)) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", text, "' is too large"));
  }
  return v;
}

absl::StatusOr<int64_t> ParseStatValue(const std::string& text, StatUnit unit) {
  absl::StatusOr<double> v = ParseStatNumber(text, unit);
  if (!v.ok()) return v.status();
  return static_cast<int64_t>(std::llround(*v));
}

}  // namespace tfprof
