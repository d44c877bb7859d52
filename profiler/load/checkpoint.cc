#include "profiler/load/checkpoint.h"

#include <algorithm>
#include <climits>
#include <set>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "profiler/base/crc32c.h"
#include "profiler/base/file.h"
#include "profiler/base/wire.h"
#include "profiler/load/checkpoint_index.h"
#include "profiler/load/checkpoint_values.h"

namespace tfprof {

using checkpoint_internal::DecodeStrings;
using checkpoint_internal::DecodeValues;
using checkpoint_internal::ElementSize;
using checkpoint_internal::Header;
using checkpoint_internal::IndexTable;
using checkpoint_internal::kMaxElements;
using checkpoint_internal::kMaxIndexBytes;
using checkpoint_internal::kMaxTensorBytes;
using checkpoint_internal::kString;
using checkpoint_internal::ParseBundleHeader;
using checkpoint_internal::ParseShape;
using checkpoint_internal::Quote;
using checkpoint_internal::ReaderOf;
using checkpoint_internal::SignedField;

namespace {

// Reads `n` bytes at `offset` of `path` (the caller has bounded n).
absl::Status ReadRange(const std::string& path, uint64_t offset, uint64_t n,
                       std::string* out) {
  absl::StatusOr<InputFile> file = InputFile::OpenRegular(path);
  if (!file.ok()) return file.status();
  out->assign(static_cast<size_t>(n), '\0');
  return file->ReadAt(offset, out->size(), out->data());
}

std::string NotV2Message(const std::string& path, const std::string& prefix) {
  return absl::StrCat(path, ": not a TensorFlow V2 checkpoint (expected ",
                      prefix, ".index and ", prefix, ".data-*)");
}

// `path` without a trailing ".index" or ".data-K-of-N".
std::string PrefixOf(const std::string& path) {
  if (absl::EndsWith(path, ".index") && path.size() > 6) {
    return path.substr(0, path.size() - 6);
  }
  const size_t dot = path.rfind(".data-");
  if (dot == std::string::npos || dot == 0) return path;
  // The rest must be digits "-of-" digits.
  const absl::string_view rest = absl::string_view(path).substr(dot + 6);
  const size_t of = rest.find("-of-");
  if (of == absl::string_view::npos || of == 0 || of + 4 == rest.size()) {
    return path;
  }
  auto digits = [](absl::string_view s) {
    return std::all_of(s.begin(), s.end(),
                       [](char c) { return c >= '0' && c <= '9'; });
  };
  if (!digits(rest.substr(0, of)) || !digits(rest.substr(of + 4))) return path;
  return path.substr(0, dot);
}

}  // namespace

// --- Checkpoint. ------------------------------------------------------------

absl::StatusOr<Checkpoint> Checkpoint::Open(const std::string& path) {
  const std::string prefix = PrefixOf(path);
  const std::string index_path = prefix + ".index";
  absl::StatusOr<uint64_t> index_size = RegularFileSize(index_path);
  if (!index_size.ok()) {
    return absl::NotFoundError(NotV2Message(path, prefix));
  }
  if (*index_size > kMaxIndexBytes) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "%s: %d bytes, more than the %d bytes accepted for a checkpoint index",
        index_path, *index_size, kMaxIndexBytes));
  }
  absl::StatusOr<std::string> contents = ReadFileToString(index_path);
  if (!contents.ok()) return contents.status();
  Checkpoint ckpt;
  ckpt.prefix_ = prefix;
  absl::Status s = ckpt.ReadIndex(index_path, *std::move(contents));
  if (s.ok()) s = ckpt.CheckShards(path);
  if (!s.ok()) return s;
  return ckpt;
}

absl::Status Checkpoint::ReadIndex(const std::string& index_path,
                                   std::string contents) {
  IndexTable table(index_path, std::move(contents));
  bool have_header = false;
  bool have_key = false;
  std::string last_key;
  const std::string no_header = absl::StrCat(
      index_path, ": no bundle header (the entry with the empty key); ",
      NotV2Message(prefix_, prefix_));
  absl::Status s = table.ForEachEntry(
      [&](absl::string_view key, absl::string_view value) -> absl::Status {
        if (have_key && !(absl::string_view(last_key) < key)) {
          return table.Corrupt(
              absl::StrCat("keys out of order at ", Quote(key)));
        }
        have_key = true;
        last_key.assign(key.data(), key.size());
        if (key.empty()) {
          Header h;
          absl::Status hs = ParseBundleHeader(table, value, &h);
          if (!hs.ok()) return hs;
          num_shards_ = static_cast<int>(h.num_shards);
          big_endian_ = h.big_endian;
          have_header = true;
          return absl::OkStatus();
        }
        // "" sorts first, so a header seen later would be out of order.
        if (!have_header) return absl::InvalidArgumentError(no_header);
        // Keys starting with a NUL byte hold one slice of a partitioned
        // tensor; the tensor itself has its own entry (with `slices`).
        if (key[0] == '\0') return absl::OkStatus();
        Entry e;
        const std::string problem = ParseEntry(key, value, num_shards_, &e);
        if (!problem.empty()) return table.Corrupt(problem);
        names_.emplace_back(key);
        entries_.push_back(std::move(e));
        return absl::OkStatus();
      });
  if (!s.ok()) return s;
  if (!have_header) return absl::InvalidArgumentError(no_header);
  return absl::OkStatus();
}

// BundleEntryProto { DataType dtype = 1; TensorShapeProto shape = 2;
//   int32 shard_id = 3; int64 offset = 4; int64 size = 5;
//   fixed32 crc32c = 6; repeated TensorSliceProto slices = 7; }
std::string Checkpoint::ParseEntry(absl::string_view key,
                                   absl::string_view value, int num_shards,
                                   Entry* e) {
  // The tensor's name as messages give it, quoted only for an error.
  auto tensor = [key] { return Quote(key); };
  wire::Reader r = ReaderOf(value);
  uint32_t field;
  int wire_type;
  while (r.Next(&field, &wire_type)) {
    int64_t v = 0;
    const char* bad = nullptr;
    switch (field) {
      case 1:
        if (!SignedField(&r, wire_type, &v) || v < 0 || v > INT_MAX) {
          bad = "dtype";
        }
        e->dtype = static_cast<int>(v);
        break;
      case 2: {
        if (wire_type != wire::kBytes) {
          bad = "shape";
          break;
        }
        const wire::Reader shape = r.Sub();
        if (!r.ok()) {
          bad = "shape";
          break;
        }
        const std::string problem = ParseShape(shape, &e->shape);
        if (!problem.empty())
          return absl::StrCat("tensor ", tensor(), ": ", problem);
        break;
      }
      case 3:
        if (!SignedField(&r, wire_type, &v) || v < 0 || v >= num_shards) {
          return absl::StrCat("tensor ", tensor(), " is in shard ", v,
                              " of a bundle with ", num_shards, " shards");
        }
        e->shard_id = static_cast<int>(v);
        break;
      case 4:
        if (!SignedField(&r, wire_type, &v) || v < 0) bad = "offset";
        e->offset = static_cast<uint64_t>(v);
        break;
      case 5:
        if (!SignedField(&r, wire_type, &v) || v < 0) bad = "size";
        e->size = static_cast<uint64_t>(v);
        break;
      case 6:
        if (wire_type == wire::kFixed32) e->masked_crc = r.Fixed32();
        if (wire_type != wire::kFixed32 || !r.ok()) bad = "crc32c";
        break;
      case 7:
        e->sliced = true;
        if (wire_type == wire::kBytes) r.Skip(wire_type);
        if (wire_type != wire::kBytes || !r.ok()) bad = "slices";
        break;
      default:
        r.Skip(wire_type);
        if (!r.ok()) bad = "unknown field";
        break;
    }
    if (bad != nullptr) {
      return absl::StrCat("bad ", bad, " in the entry for tensor ", tensor());
    }
  }
  if (!r.ok()) return absl::StrCat("malformed entry for tensor ", tensor());
  for (int64_t d : e->shape) {
    const uint64_t dim = static_cast<uint64_t>(d);
    if (dim != 0 && e->num_elements > kMaxElements / dim) {
      return absl::StrCat("tensor ", tensor(), " has too many elements");
    }
    e->num_elements *= dim;
  }
  return "";
}

// Every data shard that an entry names is there.
absl::Status Checkpoint::CheckShards(const std::string& path) const {
  std::set<int> shards_used;
  for (const Entry& e : entries_) shards_used.insert(e.shard_id);
  for (int shard : shards_used) {
    const std::string shard_path = ShardPath(shard);
    if (!RegularFileSize(shard_path).ok()) {
      return absl::NotFoundError(absl::StrCat(NotV2Message(path, prefix_),
                                              ": data shard ", shard_path,
                                              " is missing"));
    }
  }
  return absl::OkStatus();
}

const Checkpoint::Entry* Checkpoint::Find(const std::string& name) const {
  const auto it = std::lower_bound(names_.begin(), names_.end(), name);
  if (it == names_.end() || *it != name) return nullptr;
  return &entries_[static_cast<size_t>(it - names_.begin())];
}

std::string Checkpoint::ShardPath(int shard_id) const {
  return absl::StrFormat("%s.data-%05d-of-%05d", prefix_, shard_id,
                         num_shards_);
}

bool Checkpoint::Has(const std::string& name) const {
  return Find(name) != nullptr;
}

absl::StatusOr<int> Checkpoint::Dtype(const std::string& name) const {
  const Entry* e = Find(name);
  if (e == nullptr) {
    return absl::NotFoundError(absl::StrCat(
        prefix_, ": checkpoint has no tensor named ", Quote(name)));
  }
  return e->dtype;
}

absl::StatusOr<std::vector<int64_t>> Checkpoint::Shape(
    const std::string& name) const {
  const Entry* e = Find(name);
  if (e == nullptr) {
    return absl::NotFoundError(absl::StrCat(
        prefix_, ": checkpoint has no tensor named ", Quote(name)));
  }
  return e->shape;
}

absl::StatusOr<std::string> Checkpoint::ReadTensorBytes(
    const Entry& e, const std::string& shard, const std::string& tensor) const {
  absl::StatusOr<uint64_t> shard_size = RegularFileSize(shard);
  if (!shard_size.ok()) {
    return absl::NotFoundError(absl::StrCat(shard, ": cannot read tensor ",
                                            tensor, ": ",
                                            shard_size.status().message()));
  }
  if (e.offset > *shard_size || e.size > *shard_size - e.offset) {
    return absl::DataLossError(absl::StrFormat(
        "%s: tensor %s at offset %d, size %d lies beyond the end of the shard "
        "(%d bytes; truncated?)",
        shard, tensor, e.offset, e.size, *shard_size));
  }
  if (e.size > kMaxTensorBytes) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "%s: tensor %s is %d bytes, more than the %d this reader loads", shard,
        tensor, e.size, kMaxTensorBytes));
  }
  const size_t elem = ElementSize(e.dtype);
  const uint64_t count = e.num_elements;
  if (e.dtype != kString && (e.size % elem != 0 || e.size / elem != count)) {
    return absl::DataLossError(absl::StrFormat(
        "%s: tensor %s has %d bytes, but its shape holds %d elements of %d "
        "bytes (dtype %d)",
        shard, tensor, e.size, count, elem, e.dtype));
  }
  std::string bytes;
  absl::Status s = ReadRange(shard, e.offset, e.size, &bytes);
  if (!s.ok()) return s;
  return bytes;
}

absl::StatusOr<CheckpointTensor> Checkpoint::Read(
    const std::string& name) const {
  const Entry* e = Find(name);
  if (e == nullptr) {
    return absl::NotFoundError(absl::StrCat(
        prefix_, ": checkpoint has no tensor named ", Quote(name)));
  }
  CheckpointTensor t;
  t.dtype = e->dtype;
  t.shape = e->shape;
  if (e->sliced || (ElementSize(e->dtype) == 0 && e->dtype != kString)) {
    t.supported = false;
    return t;
  }
  const std::string shard = ShardPath(e->shard_id);
  const std::string tensor = Quote(name);
  absl::StatusOr<std::string> bytes = ReadTensorBytes(*e, shard, tensor);
  if (!bytes.ok()) return bytes.status();
  if (e->dtype == kString) {
    absl::Status s = DecodeStrings(*bytes, e->num_elements, e->masked_crc,
                                   big_endian_, shard, tensor, &t.values_str);
    if (!s.ok()) return s;
    return t;
  }
  const uint32_t actual = MaskCrc(Crc32c(bytes->data(), bytes->size()));
  if (actual != e->masked_crc) {
    return absl::DataLossError(absl::StrFormat(
        "%s: crc32c mismatch for tensor %s (stored 0x%08x, computed 0x%08x): "
        "data is corrupt",
        shard, tensor, e->masked_crc, actual));
  }
  DecodeValues(*bytes, e->dtype, e->num_elements, big_endian_, &t);
  return t;
}

}  // namespace tfprof
