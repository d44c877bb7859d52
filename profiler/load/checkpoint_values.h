// Decoding the tensor values of a TensorFlow V2 checkpoint's data shards:
// the dtypes read, their sizes, fixed-size values in either byte order and
// DT_STRING tensors with their checksums. Part of the checkpoint reader
// (checkpoint.h); not a public API.
#ifndef TFPROF_PROFILER_LOAD_CHECKPOINT_VALUES_H_
#define TFPROF_PROFILER_LOAD_CHECKPOINT_VALUES_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "profiler/load/checkpoint.h"

namespace tfprof {
namespace checkpoint_internal {

// TensorFlow DataType values decoded here.
enum : int {
  kFloat = 1,
  kDouble = 2,
  kInt32 = 3,
  kUint8 = 4,
  kInt16 = 5,
  kInt8 = 6,
  kString = 7,
  kInt64 = 9,
  kBool = 10,
  kBfloat16 = 14,
  kUint16 = 17,
  kHalf = 19,
  kUint32 = 22,
  kUint64 = 23,
};

// Bytes per element of the fixed-size dtypes decoded here; 0 for the rest.
size_t ElementSize(int dtype);

// Two's complement reinterpretations, without implementation-defined casts.
inline int64_t AsInt64(uint64_t v) {
  int64_t s;
  std::memcpy(&s, &v, sizeof(s));
  return s;
}

// A DT_STRING tensor's bytes: count varint64 lengths; the masked crc32c of
// those lengths (each taken as a 4-byte integer, or 8 bytes above 2^32-1) in
// 4 bytes; then the strings' bytes. The entry's crc32c covers the same
// integers, the 4 checksum bytes and the strings' bytes.
absl::Status DecodeStrings(absl::string_view bytes, uint64_t count,
                           uint32_t masked_crc, bool big_endian,
                           const std::string& shard, const std::string& tensor,
                           std::vector<std::string>* out);

// The values of a fixed-size dtype (bytes holds exactly count elements).
void DecodeValues(absl::string_view bytes, int dtype, uint64_t count,
                  bool big_endian, CheckpointTensor* t);

}  // namespace checkpoint_internal
}  // namespace tfprof

#endif  // TFPROF_PROFILER_LOAD_CHECKPOINT_VALUES_H_
