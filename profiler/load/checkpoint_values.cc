#include "profiler/load/checkpoint_values.h"

#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "profiler/base/crc32c.h"
#include "profiler/base/wire.h"

namespace tfprof {
namespace checkpoint_internal {
namespace {

// An unsigned integer of `n` bytes (n <= 8) in the given byte order.
uint64_t LoadUnsigned(const char* p, size_t n, bool big_endian) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) {
    const size_t k = big_endian ? i : n - 1 - i;
    v = (v << 8) | static_cast<uint8_t>(p[k]);
  }
  return v;
}

// Stores `v` as an n-byte integer in the given byte order.
void StoreUnsigned(uint64_t v, size_t n, bool big_endian, char* out) {
  for (size_t i = 0; i < n; ++i) {
    const size_t k = big_endian ? n - 1 - i : i;
    out[k] = static_cast<char>(static_cast<uint8_t>(v & 0xff));
    v >>= 8;
  }
}

int64_t SignExtend(uint64_t v, size_t bytes) {
  if (bytes < 8 && (v >> (bytes * 8 - 1)) != 0)
    v |= ~uint64_t{0} << (bytes * 8);
  return AsInt64(v);
}

double HalfToDouble(uint16_t h) {
  const int exponent = (h >> 10) & 0x1f;
  const int mantissa = h & 0x3ff;
  double v;
  if (exponent == 0) {
    v = std::ldexp(mantissa, -24);  // zero or subnormal
  } else if (exponent == 31) {
    v = mantissa == 0 ? std::numeric_limits<double>::infinity()
                      : std::numeric_limits<double>::quiet_NaN();
  } else {
    v = std::ldexp(mantissa + 1024, exponent - 25);
  }
  return (h & 0x8000) != 0 ? -v : v;
}

double FloatBits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

double DoubleBits(uint64_t bits) {
  double d;
  std::memcpy(&d, &bits, sizeof(d));
  return d;
}

}  // namespace

size_t ElementSize(int dtype) {
  switch (dtype) {
    case kUint8:
    case kInt8:
    case kBool:
      return 1;
    case kInt16:
    case kUint16:
    case kHalf:
    case kBfloat16:
      return 2;
    case kFloat:
    case kInt32:
    case kUint32:
      return 4;
    case kDouble:
    case kInt64:
    case kUint64:
      return 8;
    default:
      return 0;
  }
}

absl::Status DecodeStrings(absl::string_view bytes, uint64_t count,
                           uint32_t masked_crc, bool big_endian,
                           const std::string& shard, const std::string& tensor,
                           std::vector<std::string>* out) {
  auto corrupt = [&](absl::string_view what) {
    return absl::DataLossError(
        absl::StrCat(shard, ": string tensor ", tensor, ": ", what));
  };
  if (count == 0 && bytes.empty()) return absl::OkStatus();  // no checksum
  if (count > bytes.size()) {
    return corrupt(absl::StrCat(count, " elements cannot fit in ", bytes.size(),
                                " bytes"));
  }
  wire::Reader r(std::string_view(bytes.data(), bytes.size()));
  std::vector<uint64_t> lengths;
  lengths.reserve(static_cast<size_t>(count));
  uint32_t crc = 0;
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t len;
    if (!r.Varint(&len))
      return corrupt("truncated or malformed string lengths");
    char buf[8];
    const size_t width = len <= 0xffffffffu ? 4 : 8;
    StoreUnsigned(len, width, big_endian, buf);
    crc = Crc32cExtend(crc, buf, width);
    lengths.push_back(len);
  }
  const char* p = reinterpret_cast<const char*>(r.pos());
  const char* const end = bytes.data() + bytes.size();
  if (end - p < 4) return corrupt("missing the checksum of the lengths");
  const uint32_t stored = static_cast<uint32_t>(LoadUnsigned(p, 4, big_endian));
  if (stored != MaskCrc(crc)) {
    return corrupt(absl::StrFormat(
        "crc32c mismatch in the lengths (stored 0x%08x, computed 0x%08x)",
        stored, MaskCrc(crc)));
  }
  crc = Crc32cExtend(crc, p, 4);
  p += 4;
  crc = Crc32cExtend(crc, p, static_cast<size_t>(end - p));
  if (MaskCrc(crc) != masked_crc) {
    return corrupt(absl::StrFormat(
        "crc32c mismatch (stored 0x%08x, computed 0x%08x): data is corrupt",
        masked_crc, MaskCrc(crc)));
  }
  out->reserve(lengths.size());
  for (uint64_t len : lengths) {
    if (len > static_cast<uint64_t>(end - p)) {
      return corrupt("a string runs past the end of the tensor");
    }
    out->emplace_back(p, static_cast<size_t>(len));
    p += len;
  }
  if (p != end) {
    return corrupt(
        absl::StrCat(end - p, " unexpected bytes after the strings"));
  }
  return absl::OkStatus();
}

void DecodeValues(absl::string_view bytes, int dtype, uint64_t count,
                  bool big_endian, CheckpointTensor* t) {
  const size_t elem = ElementSize(dtype);
  const bool is_double = dtype == kFloat || dtype == kDouble ||
                         dtype == kHalf || dtype == kBfloat16;
  if (is_double) {
    t->values_double.reserve(static_cast<size_t>(count));
  } else {
    t->values_int64.reserve(static_cast<size_t>(count));
  }
  const char* p = bytes.data();
  for (uint64_t i = 0; i < count; ++i, p += elem) {
    const uint64_t raw = LoadUnsigned(p, elem, big_endian);
    switch (dtype) {
      case kFloat:
        t->values_double.push_back(FloatBits(static_cast<uint32_t>(raw)));
        break;
      case kDouble:
        t->values_double.push_back(DoubleBits(raw));
        break;
      case kHalf:
        t->values_double.push_back(HalfToDouble(static_cast<uint16_t>(raw)));
        break;
      case kBfloat16:
        t->values_double.push_back(FloatBits(static_cast<uint32_t>(raw) << 16));
        break;
      case kInt8:
      case kInt16:
      case kInt32:
      case kInt64:
        t->values_int64.push_back(SignExtend(raw, elem));
        break;
      case kBool:
        t->values_int64.push_back(raw != 0 ? 1 : 0);
        break;
      default:  // uint8, uint16, uint32, uint64
        t->values_int64.push_back(AsInt64(raw));
        break;
    }
  }
}

}  // namespace checkpoint_internal
}  // namespace tfprof
