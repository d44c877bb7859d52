// The query vocabulary: every attribute a query can show (-select), order
// by (-order_by) or a check term can name, parsed once from its name into
// an enum, and the one place a node's figure for an attribute is read.
#ifndef TFPROF_PROFILER_MODEL_ATTRIBUTE_H_
#define TFPROF_PROFILER_MODEL_ATTRIBUTE_H_

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "profiler/base/units.h"

namespace tfprof {

// In tfprof's -select order (an attribute's value is tfprof's id), then
// the node's name, which only -order_by takes.
enum class Attr : uint8_t {
  kBytes,
  kMicros,
  kParams,
  kFloatOps,
  kTensorValue,
  kDevice,
  kOpTypes,
  kOccurrence,
  kInputShapes,
  kAcceleratorMicros,
  kCpuMicros,
  kPeakBytes,
  kResidualBytes,
  kOutputBytes,
  kAcceleratorFlopRate,
  kArithmeticIntensity,
  kRoofline,
  kName,
};
inline constexpr int kAttrCount = static_cast<int>(Attr::kName) + 1;

// The attribute's name as options, outputs and check terms spell it.
const std::string& AttrName(Attr a);
// The attribute a name stands for; nullopt for other words.
std::optional<Attr> ParseAttr(std::string_view name);
// The names of `attrs`, in their order.
std::vector<std::string> AttrNames(const std::vector<Attr>& attrs);

// The -select attributes, in tfprof's order; the -order_by ones likewise.
const std::vector<Attr>& SelectAttrs();
const std::vector<Attr>& OrderByAttrs();

// A count a node adds up over its runs: the nine statistics and the
// number of runs (occurrence). Value() reads these.
bool IsCount(Attr a);

// How an attribute's values are measured (time, bytes, a count).
StatUnit UnitOf(Attr a);

// A node's figure for a count, from NodeStats or any struct with the same
// field names (a view's Totals); 0 for attributes that are not counts.
template <typename Stats>
int64_t Value(const Stats& s, Attr a) {
  switch (a) {
    case Attr::kMicros:
      return s.exec_micros;
    case Attr::kAcceleratorMicros:
      return s.accelerator_exec_micros;
    case Attr::kCpuMicros:
      return s.cpu_exec_micros;
    case Attr::kBytes:
      return s.requested_bytes;
    case Attr::kPeakBytes:
      return s.peak_bytes;
    case Attr::kResidualBytes:
      return s.residual_bytes;
    case Attr::kOutputBytes:
      return s.output_bytes;
    case Attr::kParams:
      return s.parameters;
    case Attr::kFloatOps:
      return s.float_ops;
    case Attr::kOccurrence:
      return s.run_count;
    default:
      return 0;
  }
}

// A set of attributes (-select). Iterates in name order, so outputs list
// attributes as they did when the set held their names.
class AttrSet {
 public:
  AttrSet() = default;
  AttrSet(std::initializer_list<Attr> attrs) {
    for (Attr a : attrs) insert(a);
  }
  bool contains(Attr a) const { return (bits_ >> Bit(a)) & 1u; }
  void insert(Attr a) { bits_ |= uint32_t{1} << Bit(a); }
  void erase(Attr a) { bits_ &= ~(uint32_t{1} << Bit(a)); }
  void clear() { bits_ = 0; }
  bool empty() const { return bits_ == 0; }
  size_t size() const;
  // The members in name order.
  std::vector<Attr> members() const;
  // Their names in name order.
  std::vector<std::string> names() const { return AttrNames(members()); }
  bool operator==(const AttrSet& o) const { return bits_ == o.bits_; }
  bool operator!=(const AttrSet& o) const { return bits_ != o.bits_; }

 private:
  static int Bit(Attr a) { return static_cast<int>(a); }
  uint32_t bits_ = 0;
};

}  // namespace tfprof

#endif  // TFPROF_PROFILER_MODEL_ATTRIBUTE_H_
