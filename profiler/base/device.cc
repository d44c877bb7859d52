#include "profiler/base/device.h"

#include <cstddef>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/strip.h"

namespace tfprof {
namespace {

// abseil's string functions take absl::string_view, which is not
// std::string_view in every build of abseil.
absl::string_view Absl(std::string_view s) { return {s.data(), s.size()}; }

bool EqualsNoCase(std::string_view a, std::string_view b) {
  return absl::EqualsIgnoreCase(Absl(a), Absl(b));
}

bool EndsWithNoCase(std::string_view s, std::string_view suffix) {
  return absl::EndsWithIgnoreCase(Absl(s), Absl(suffix));
}

constexpr std::string_view kStreamLane = "/stream:";
constexpr std::string_view kMemcpyLane = "/memcpy";

// The position of the last case-insensitive occurrence of `what`, or npos.
size_t RFindNoCase(std::string_view s, std::string_view what) {
  if (what.size() > s.size()) return std::string_view::npos;
  for (size_t at = s.size() - what.size() + 1; at-- > 0;) {
    if (EqualsNoCase(s.substr(at, what.size()), what)) return at;
  }
  return std::string_view::npos;
}

// "/cpu", "/gpu", "/device:cpu" or "/device:gpu" ending `s`, then ":N".
bool EndsInPlacement(std::string_view s) {
  size_t digits = 0;
  while (digits < s.size() && absl::ascii_isdigit(static_cast<unsigned char>(
                                  s[s.size() - 1 - digits]))) {
    ++digits;
  }
  if (digits == 0 || digits == s.size()) return false;
  s.remove_suffix(digits);
  if (s.back() != ':') return false;
  s.remove_suffix(1);
  for (std::string_view kind : {"/cpu", "/gpu", "/device:cpu", "/device:gpu"}) {
    if (EndsWithNoCase(s, kind)) return true;
  }
  return false;
}

}  // namespace

DeviceKind KindOfDevice(std::string_view device) {
  if (IsStreamAllDevice(device)) return DeviceKind::kStreamAll;
  if (RFindNoCase(device, kStreamLane) != std::string_view::npos) {
    return DeviceKind::kStream;
  }
  if (EndsWithNoCase(device, kMemcpyLane)) return DeviceKind::kMemcpy;
  if (EndsInPlacement(device)) return DeviceKind::kPlacement;
  return DeviceKind::kOther;
}

bool IsCanonicalDevice(std::string_view device) {
  return EndsInPlacement(device);
}

bool IsStreamAllDevice(std::string_view device) {
  return RFindNoCase(device, "stream:all") != std::string_view::npos;
}

bool IsPlacedOnAccelerator(std::string_view device) {
  return RFindNoCase(device, "gpu") != std::string_view::npos;
}

bool IsPlacedOnCpu(std::string_view device) {
  return RFindNoCase(device, "cpu") != std::string_view::npos;
}

std::string HostDeviceOf(std::string_view placement) {
  std::string host;
  size_t i = 0;
  while (i < placement.size()) {
    size_t digits = 0;
    if (EqualsNoCase(placement.substr(i, 4), "gpu:")) {
      while (i + 4 + digits < placement.size() &&
             absl::ascii_isdigit(
                 static_cast<unsigned char>(placement[i + 4 + digits]))) {
        ++digits;
      }
    }
    if (digits > 0) {
      host += "cpu:0";
      i += 4 + digits;
    } else {
      host += placement[i++];
    }
  }
  return host;
}

std::optional<Processor> ProcessorOfDevice(std::string_view device) {
  const std::string_view owner = LaneOwner(device);
  if (!EndsInPlacement(owner)) return std::nullopt;
  const size_t colon = owner.rfind(':');
  Processor p;
  p.gpu = EndsWithNoCase(owner.substr(0, colon), "gpu");
  if (!absl::SimpleAtoi(Absl(owner.substr(colon + 1)), &p.index)) {
    return std::nullopt;
  }
  return p;
}

std::optional<Processor> ProcessorOfAllocator(std::string_view allocator) {
  const std::string name = absl::AsciiStrToLower(Absl(allocator));
  if (absl::StrContains(name, "host") || absl::StartsWith(name, "cpu")) {
    return Processor{false, 0};
  }
  absl::string_view rest = name;
  if (!absl::ConsumePrefix(&rest, "gpu_")) return std::nullopt;
  const size_t digits = rest.find_first_not_of("0123456789");
  Processor p{true, 0};
  if (digits == 0 || !absl::SimpleAtoi(rest.substr(0, digits), &p.index)) {
    return std::nullopt;
  }
  rest.remove_prefix(digits == absl::string_view::npos ? rest.size() : digits);
  if (!rest.empty() && rest != "_bfc") return std::nullopt;
  return p;
}

std::string_view LaneOwner(std::string_view device) {
  size_t at = RFindNoCase(device, kStreamLane);
  if (at == std::string_view::npos && EndsWithNoCase(device, kMemcpyLane)) {
    at = device.size() - kMemcpyLane.size();
  }
  return at == std::string_view::npos ? device : device.substr(0, at);
}

}  // namespace tfprof
