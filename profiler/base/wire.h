// A minimal reader of the protobuf wire format over a byte range, for the
// hot loading paths that decode straight into the model instead of building
// protobuf message objects first. Every read is bounds-checked; on malformed
// input the reader stops and ok() turns false (it never reads past `end`).
#ifndef TFPROF_PROFILER_BASE_WIRE_H_
#define TFPROF_PROFILER_BASE_WIRE_H_

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace tfprof {
namespace wire {

enum WireType : int {
  kVarint = 0,
  kFixed64 = 1,
  kBytes = 2,
  kStartGroup = 3,
  kEndGroup = 4,
  kFixed32 = 5,
};

class Reader {
 public:
  Reader() = default;
  Reader(const uint8_t* begin, const uint8_t* end) : p_(begin), end_(end) {}
  explicit Reader(std::string_view s)
      : p_(reinterpret_cast<const uint8_t*>(s.data())),
        end_(reinterpret_cast<const uint8_t*>(s.data()) + s.size()) {}

  bool ok() const { return ok_; }
  bool done() const { return !ok_ || p_ >= end_; }
  const uint8_t* pos() const { return p_; }
  size_t remaining() const { return ok_ ? static_cast<size_t>(end_ - p_) : 0; }
  // Marks the input as malformed (e.g. a field of the wrong wire type).
  void Fail() { ok_ = false; }

  // Reads the next field's tag. False at the end of input or on error.
  bool Next(uint32_t* field, int* wire_type) {
    if (done()) return false;
    uint64_t tag;
    if (!Varint(&tag)) return false;
    *field = static_cast<uint32_t>(tag >> 3);
    *wire_type = static_cast<int>(tag & 7);
    if (*field == 0 || (tag >> 3) > 0x1fffffff) return Fail(), false;
    return true;
  }

  bool Varint(uint64_t* v) {
    uint64_t result = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p_ >= end_) return Fail(), false;
      const uint8_t b = *p_++;
      result |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) {
        *v = result;
        return true;
      }
    }
    return Fail(), false;  // more than 10 bytes
  }
  int64_t Int64() {
    uint64_t v = 0;
    Varint(&v);
    return static_cast<int64_t>(v);
  }
  int32_t Int32() { return static_cast<int32_t>(Int64()); }
  bool Bool() { return Int64() != 0; }
  uint64_t Fixed64() {
    if (remaining() < 8) return Fail(), 0;
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | p_[i];
    p_ += 8;
    return v;
  }
  uint32_t Fixed32() {
    if (remaining() < 4) return Fail(), 0;
    uint32_t v = 0;
    for (int i = 3; i >= 0; --i) v = (v << 8) | p_[i];
    p_ += 4;
    return v;
  }
  // A length-delimited field's payload.
  std::string_view Bytes() {
    uint64_t n = 0;
    if (!Varint(&n)) return {};
    if (n > remaining()) return Fail(), std::string_view();
    std::string_view s(reinterpret_cast<const char*>(p_), n);
    p_ += n;
    return s;
  }
  Reader Sub() {
    std::string_view s = Bytes();
    if (!ok_) {
      Reader r;
      r.ok_ = false;
      return r;
    }
    return Reader(s);
  }
  // Skips a field's payload of the given wire type.
  void Skip(int wire_type) {
    switch (wire_type) {
      case kVarint: {
        uint64_t v;
        Varint(&v);
        break;
      }
      case kFixed64:
        Fixed64();
        break;
      case kBytes:
        Bytes();
        break;
      case kFixed32:
        Fixed32();
        break;
      case kStartGroup:
        SkipGroup();
        break;
      default:
        Fail();
    }
  }

  // A repeated int64 field, packed or not; calls f(value) for each.
  // Other wire types are skipped, as protobuf's parser treats them as
  // unknown fields.
  template <typename F>
  void RepeatedInt64(int wire_type, F f) {
    if (wire_type == kVarint) {
      f(Int64());
    } else if (wire_type == kBytes) {
      Reader packed = Sub();
      while (!packed.done()) f(packed.Int64());
      if (!packed.ok()) Fail();
    } else {
      Skip(wire_type);  // an unexpected wire type: skipped as unknown
    }
  }

 private:
  void SkipGroup() {
    // Groups are obsolete; skip nested fields up to the matching end.
    for (int depth = 1; depth > 0;) {
      uint32_t field;
      int wt;
      if (!Next(&field, &wt)) return Fail();
      if (wt == kStartGroup) {
        ++depth;
      } else if (wt == kEndGroup) {
        --depth;
      } else {
        Skip(wt);
      }
    }
  }

  const uint8_t* p_ = nullptr;
  const uint8_t* end_ = nullptr;
  bool ok_ = true;
};

// Writers for the compact encodings the model keeps in memory (and the
// checkpoint reader's small synthetic table blocks).
inline void PutVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}
// Writes a varint at `at` (room for ten bytes); returns the end.
inline char* PutVarintAt(char* at, uint64_t v) {
  while (v >= 0x80) {
    *at++ = static_cast<char>(v | 0x80);
    v >>= 7;
  }
  *at++ = static_cast<char>(v);
  return at;
}
// Little-endian fixed-width integers, as Fixed32() and Fixed64() read them.
inline void PutFixed32(std::string* out, uint32_t v) {
  for (int i = 0; i < 4; ++i, v >>= 8) out->push_back(static_cast<char>(v));
}
inline void PutFixed64(std::string* out, uint64_t v) {
  for (int i = 0; i < 8; ++i, v >>= 8) out->push_back(static_cast<char>(v));
}
inline uint64_t ZigZag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
inline int64_t UnZigZag(uint64_t v) {
  return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
}

}  // namespace wire
}  // namespace tfprof

#endif  // TFPROF_PROFILER_BASE_WIRE_H_
