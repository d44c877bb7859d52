// A reader for TensorFlow V2 checkpoints ("tensor bundles"). A checkpoint
// with prefix P is
//   P.index                  a LevelDB-format table: key "" holds the
//                            BundleHeaderProto, every other key is a tensor
//                            name whose value is a BundleEntryProto;
//   P.data-0000K-of-0000N    the data shards; a tensor's bytes are
//                            [offset, offset + size) of its shard.
// The index table is read with libleveldb (blocks, their checksums, the
// entries); the protos are decoded with profiler/base/wire.h (no generated
// code, no TensorFlow). Every length read from a file is checked against the
// file's size, and every failure is an absl::Status with a one-line message
// naming the file.
#ifndef TFPROF_PROFILER_LOAD_CHECKPOINT_H_
#define TFPROF_PROFILER_LOAD_CHECKPOINT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
// Crc32c() and MaskCrc(), with which the data shards are checked.
#include "profiler/base/crc32c.h"

namespace tfprof {

struct CheckpointTensor {
  // TensorFlow DataType enum value (1 float, 2 double, 3 int32, 4 uint8,
  // 5 int16, 6 int8, 7 string, 9 int64, 10 bool, 14 bfloat16, 17 uint16,
  // 19 half, 22 uint32, 23 uint64, ...).
  int dtype = 0;
  std::vector<int64_t> shape;  // empty = scalar
  // float, double, half and bfloat16, converted to double.
  std::vector<double> values_double;
  // All integer types and bool (0 or 1). uint64 values above INT64_MAX wrap.
  std::vector<int64_t> values_int64;
  std::vector<std::string> values_str;  // DT_STRING
  // False for values this reader does not decode (complex, quantized,
  // resource and variant dtypes, and tensors saved as slices); dtype and
  // shape are still filled in.
  bool supported = true;
};

class Checkpoint {
 public:
  // Reads the index (names, dtypes, shapes) of the checkpoint at `path`,
  // which may be the prefix, the .index file or one of the data shards.
  // Tensor values are only read by Read().
  static absl::StatusOr<Checkpoint> Open(const std::string& path);

  // The checkpoint prefix (`path` without ".index" or ".data-K-of-N").
  const std::string& prefix() const { return prefix_; }
  int num_shards() const { return num_shards_; }

  // Tensor names, sorted bytewise (the index's order).
  const std::vector<std::string>& names() const { return names_; }
  bool Has(const std::string& name) const;
  absl::StatusOr<int> Dtype(const std::string& name) const;
  absl::StatusOr<std::vector<int64_t>> Shape(const std::string& name) const;
  // Reads one tensor's values from its data shard and checks its crc32c.
  absl::StatusOr<CheckpointTensor> Read(const std::string& name) const;

 private:
  struct Entry {
    int dtype = 0;
    std::vector<int64_t> shape;
    int shard_id = 0;
    uint64_t offset = 0;
    uint64_t size = 0;
    uint64_t num_elements = 1;
    uint32_t masked_crc = 0;  // proto3: absent means 0
    bool sliced = false;
  };

  // Open()'s steps: the index's entries, each tensor's entry, the shards.
  absl::Status ReadIndex(const std::string& index_path, std::string contents);
  // Decodes a BundleEntryProto; returns what is wrong, or "".
  static std::string ParseEntry(absl::string_view key, absl::string_view value,
                                int num_shards, Entry* e);
  absl::Status CheckShards(const std::string& path) const;
  // Read()'s first step: the tensor's bytes, checked against its shard's
  // size and its shape.
  absl::StatusOr<std::string> ReadTensorBytes(const Entry& e,
                                              const std::string& shard,
                                              const std::string& tensor) const;

  // The entry for `name`, or null.
  const Entry* Find(const std::string& name) const;
  std::string ShardPath(int shard_id) const;

  std::string prefix_;
  int num_shards_ = 1;
  bool big_endian_ = false;
  std::vector<std::string> names_;  // sorted
  std::vector<Entry> entries_;      // parallel to names_
};

}  // namespace tfprof

#endif  // TFPROF_PROFILER_LOAD_CHECKPOINT_H_
