#include "profiler/model/attribute.h"

#include <algorithm>
#include <array>

namespace tfprof {
namespace {

// Indexed by Attr.
const std::array<std::string, kAttrCount>& Names() {
  static const auto* names = new std::array<std::string, kAttrCount>{
      "bytes",
      "micros",
      "params",
      "float_ops",
      "tensor_value",
      "device",
      "op_types",
      "occurrence",
      "input_shapes",
      "accelerator_micros",
      "cpu_micros",
      "peak_bytes",
      "residual_bytes",
      "output_bytes",
      "accelerator_flop_rate",
      "arithmetic_intensity",
      "roofline",
      "name",
  };
  return *names;
}

// Every attribute, sorted by name.
const std::vector<Attr>& ByName() {
  static const std::vector<Attr> v = [] {
    std::vector<Attr> all;
    for (int i = 0; i < kAttrCount; ++i) all.push_back(static_cast<Attr>(i));
    std::sort(all.begin(), all.end(),
              [](Attr a, Attr b) { return AttrName(a) < AttrName(b); });
    return all;
  }();
  return v;
}

}  // namespace

const std::string& AttrName(Attr a) { return Names()[static_cast<int>(a)]; }

std::optional<Attr> ParseAttr(std::string_view name) {
  for (int i = 0; i < kAttrCount; ++i) {
    if (Names()[i] == name) return static_cast<Attr>(i);
  }
  return std::nullopt;
}

std::vector<std::string> AttrNames(const std::vector<Attr>& attrs) {
  std::vector<std::string> out;
  out.reserve(attrs.size());
  for (Attr a : attrs) out.emplace_back(AttrName(a));
  return out;
}

const std::vector<Attr>& SelectAttrs() {
  static const std::vector<Attr> v = [] {
    std::vector<Attr> all;
    for (int i = 0; i < kAttrCount; ++i) {
      if (static_cast<Attr>(i) != Attr::kName) all.push_back(Attr(i));
    }
    return all;
  }();
  return v;
}

const std::vector<Attr>& OrderByAttrs() {
  static const std::vector<Attr> v = {Attr::kName,
                                      Attr::kBytes,
                                      Attr::kPeakBytes,
                                      Attr::kResidualBytes,
                                      Attr::kOutputBytes,
                                      Attr::kMicros,
                                      Attr::kAcceleratorMicros,
                                      Attr::kCpuMicros,
                                      Attr::kParams,
                                      Attr::kFloatOps,
                                      Attr::kOccurrence};
  return v;
}

bool IsCount(Attr a) {
  switch (a) {
    case Attr::kMicros:
    case Attr::kAcceleratorMicros:
    case Attr::kCpuMicros:
    case Attr::kBytes:
    case Attr::kPeakBytes:
    case Attr::kResidualBytes:
    case Attr::kOutputBytes:
    case Attr::kParams:
    case Attr::kFloatOps:
    case Attr::kOccurrence:
      return true;
    default:
      return false;
  }
}

StatUnit UnitOf(Attr a) {
  // (As UnitOfStat reads the names; attribute_test checks they agree.)
  switch (a) {
    case Attr::kMicros:
    case Attr::kAcceleratorMicros:
    case Attr::kCpuMicros:
      return StatUnit::kTime;
    case Attr::kBytes:
    case Attr::kPeakBytes:
    case Attr::kResidualBytes:
    case Attr::kOutputBytes:
      return StatUnit::kBytes;
    default:
      return StatUnit::kCount;
  }
}

size_t AttrSet::size() const {
  size_t n = 0;
  for (uint32_t b = bits_; b != 0; b &= b - 1) ++n;
  return n;
}

std::vector<Attr> AttrSet::members() const {
  std::vector<Attr> out;
  for (Attr a : ByName()) {
    if (contains(a)) out.push_back(a);
  }
  return out;
}

}  // namespace tfprof
