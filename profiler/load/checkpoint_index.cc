#include "profiler/load/checkpoint_index.h"

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "profiler/base/crc32c.h"
#include "profiler/load/checkpoint_values.h"

namespace tfprof {
namespace checkpoint_internal {
namespace {

// VersionDef { int32 producer = 1; int32 min_consumer = 2;
//              repeated int32 bad_consumers = 3; }
bool ParseVersion(wire::Reader r, Header* h) {
  uint32_t field;
  int wire_type;
  while (r.Next(&field, &wire_type)) {
    if (field == 2) {
      if (!SignedField(&r, wire_type, &h->min_consumer)) return false;
    } else if (field == 3) {  // packed or not
      if (wire_type != wire::kVarint && wire_type != wire::kBytes) {
        return false;
      }
      r.RepeatedInt64(wire_type, [h](int64_t v) {
        if (v == kReaderVersion) h->bad_consumer = true;
      });
    } else {
      r.Skip(wire_type);
    }
  }
  return r.ok();
}

}  // namespace

bool SignedField(wire::Reader* r, int wire_type, int64_t* v) {
  uint64_t u;
  if (wire_type != wire::kVarint || !r->Varint(&u)) return false;
  *v = AsInt64(u);
  return true;
}

bool ParseHeader(absl::string_view bytes, Header* h) {
  wire::Reader r = ReaderOf(bytes);
  uint32_t field;
  int wire_type;
  while (r.Next(&field, &wire_type)) {
    if (field == 1) {
      if (!SignedField(&r, wire_type, &h->num_shards)) return false;
    } else if (field == 2) {
      int64_t e;
      if (!SignedField(&r, wire_type, &e) || (e != 0 && e != 1)) return false;
      h->big_endian = e == 1;
    } else if (field == 3) {
      if (wire_type != wire::kBytes) return false;
      const wire::Reader version = r.Sub();
      if (!r.ok() || !ParseVersion(version, h)) return false;
    } else {
      r.Skip(wire_type);
    }
  }
  return r.ok();
}

std::string ParseShape(wire::Reader r, std::vector<int64_t>* dims) {
  uint32_t field;
  int wire_type;
  while (r.Next(&field, &wire_type)) {
    if (field == 2) {
      if (wire_type != wire::kBytes) return "malformed shape";
      wire::Reader dim = r.Sub();
      if (!r.ok()) return "malformed shape";
      if (dims->size() >= kMaxRank) return "shape has too many dimensions";
      int64_t size = 0;
      uint32_t dim_field;
      int dim_wire_type;
      while (dim.Next(&dim_field, &dim_wire_type)) {
        if (dim_field == 1) {
          if (!SignedField(&dim, dim_wire_type, &size)) {
            return "malformed shape";
          }
        } else {
          dim.Skip(dim_wire_type);
        }
      }
      if (!dim.ok()) return "malformed shape";
      if (size < 0) return absl::StrCat("shape has a dimension of ", size);
      dims->push_back(size);
    } else if (field == 3) {
      uint64_t unknown_rank;
      if (wire_type != wire::kVarint || !r.Varint(&unknown_rank)) {
        return "malformed shape";
      }
      if (unknown_rank != 0) return "shape has unknown rank";
    } else {
      r.Skip(wire_type);
    }
  }
  return r.ok() ? "" : "malformed shape";
}

bool ReadHandle(wire::Reader* r, BlockHandle* h) {
  return r->Varint(&h->offset) && r->Varint(&h->size);
}

void PutHandle(const BlockHandle& h, std::string* out) {
  wire::PutVarint(out, h.offset);
  wire::PutVarint(out, h.size);
}

std::string OneBlockTableTail(uint64_t file_size, const BlockHandle& block) {
  std::string handle;
  PutHandle(block, &handle);
  std::string index;
  wire::PutVarint(&index, 0);  // key bytes shared with the previous key
  wire::PutVarint(&index, 0);  // key bytes of its own
  wire::PutVarint(&index, handle.size());
  index += handle;
  wire::PutFixed32(&index, 0);  // one restart point, at the start
  wire::PutFixed32(&index, 1);
  const BlockHandle index_handle{file_size, index.size()};
  index.push_back(kNoCompression);
  std::string tail = index;
  wire::PutFixed32(&tail, MaskCrc(Crc32c(index.data(), index.size())));
  std::string footer;
  PutHandle(index_handle, &footer);  // metaindex: unread without filters
  PutHandle(index_handle, &footer);
  footer.resize(kHandlesSize, '\0');
  wire::PutFixed64(&footer, kTableMagic);
  return tail + footer;
}

// Checks the footer and the index block's handle.
absl::Status IndexTable::ReadFooter() {
  if (file_.size() < kFooterSize) {
    return absl::DataLossError(absl::StrFormat(
        "%s: truncated: %d bytes, shorter than a %d-byte table footer", path_,
        file_.size(), kFooterSize));
  }
  const absl::string_view footer =
      absl::string_view(file_).substr(file_.size() - kFooterSize);
  const uint64_t magic = ReaderOf(footer.substr(kHandlesSize)).Fixed64();
  if (magic != kTableMagic) {
    return absl::DataLossError(absl::StrFormat(
        "%s: bad magic number 0x%016x (expected 0x%016x): truncated, or not "
        "a TensorFlow V2 checkpoint index",
        path_, magic, kTableMagic));
  }
  wire::Reader r = ReaderOf(footer.substr(0, kHandlesSize));
  BlockHandle metaindex;
  if (!ReadHandle(&r, &metaindex) || !ReadHandle(&r, &index_)) {
    return Corrupt("malformed footer");
  }
  return CheckBlock(index_);
}

// Before leveldb reads the block at `h`: it lies before the footer, the
// blocks read stay within the budget, and its contents pass the checks.
absl::Status IndexTable::CheckBlock(const BlockHandle& h) {
  if (!InFile(h)) {
    return absl::DataLossError(absl::StrFormat(
        "%s: truncated or corrupt: block at offset %d of size %d runs past "
        "the end of the %d-byte file",
        path_, h.offset, h.size, file_.size()));
  }
  if (h.size > block_budget_) {
    return Corrupt("the same blocks are referenced over and over");
  }
  block_budget_ -= h.size;
  return CheckBlockContents(h);
}

// The compression type and the restart array. A block that fails these
// checks and its crc32c too is reported as corrupt: that is the first fault.
absl::Status IndexTable::CheckBlockContents(const BlockHandle& h) const {
  const size_t offset = static_cast<size_t>(h.offset);
  const size_t size = static_cast<size_t>(h.size);
  const char type = file_[offset + size];
  absl::Status s;
  if (type == kSnappyCompression) {
    s = absl::UnimplementedError(absl::StrCat(
        path_, ": snappy-compressed checkpoint index is not supported"));
  } else if (type != kNoCompression) {
    s = Corrupt(absl::StrCat("unknown block compression type ",
                             static_cast<int>(static_cast<uint8_t>(type))));
  } else {
    s = CheckRestarts(absl::string_view(file_).substr(offset, size));
  }
  if (s.ok()) return s;
  absl::Status crc = ChecksumError(h);
  return crc.ok() ? s : crc;
}

// A block ends with its restart points (offsets of entries that share no
// key bytes) and their count, 4 bytes each.
absl::Status IndexTable::CheckRestarts(absl::string_view block) const {
  if (block.size() < 4) return Corrupt("block shorter than 4 bytes");
  const uint32_t num_restarts =
      ReaderOf(block.substr(block.size() - 4)).Fixed32();
  if (num_restarts > (block.size() - 4) / 4) {
    return Corrupt(absl::StrCat("block claims ", num_restarts,
                                " restart points, more than fit"));
  }
  const size_t entries_end = block.size() - 4 - size_t{num_restarts} * 4;
  wire::Reader restarts = ReaderOf(block.substr(entries_end));
  for (uint32_t i = 0; i < num_restarts; ++i) {
    const uint32_t restart = restarts.Fixed32();
    if (restart > entries_end) {
      return Corrupt("restart point outside its block");
    }
    // leveldb starts iterating a block at its first restart point.
    if (i == 0 && restart != 0 && entries_end > 0) {
      return Corrupt("block's first restart point is not at its start");
    }
  }
  if (num_restarts == 0 && entries_end > 0) {
    return Corrupt("block has entries but no restart points");
  }
  return absl::OkStatus();
}

// An error if the block at `h` fails its crc32c (none for a block outside
// the file, which CheckBlock() reports).
absl::Status IndexTable::ChecksumError(const BlockHandle& h) const {
  if (!InFile(h)) return absl::OkStatus();
  const char* p = file_.data() + h.offset;
  const size_t n = static_cast<size_t>(h.size);
  const uint32_t stored = ReaderOf(absl::string_view(p + n + 1, 4)).Fixed32();
  const uint32_t actual = MaskCrc(Crc32c(p, n + 1));  // with the type byte
  if (stored == actual) return absl::OkStatus();
  return absl::DataLossError(absl::StrFormat(
      "%s: corrupt block at offset %d: crc32c mismatch (stored 0x%08x, "
      "computed 0x%08x)",
      path_, h.offset, stored, actual));
}

// A leveldb error as ours. leveldb names neither the file nor the block:
// after a checksum mismatch, the block is looked up.
absl::Status IndexTable::FromLevelDb(const leveldb::Status& s) {
  const std::string what = s.ToString();
  if (absl::StrContains(what, "checksum mismatch") && !finding_corrupt_block_) {
    return FindCorruptBlock();
  }
  if (absl::StrContains(what, "bad entry in block")) {
    return Corrupt(
        "a block entry is malformed or runs past the end of its block");
  }
  return Corrupt(absl::CHexEscape(what));
}

// The first block, in the order leveldb reads them, that fails its crc32c.
absl::Status IndexTable::FindCorruptBlock() {
  absl::Status s = ChecksumError(index_);
  if (!s.ok()) return s;
  finding_corrupt_block_ = true;
  s = ForEachDataBlock(
      [this](const BlockHandle& h) { return ChecksumError(h); });
  finding_corrupt_block_ = false;
  return s.ok() ? Corrupt("block checksum mismatch") : s;
}

absl::Status ParseBundleHeader(const IndexTable& table, absl::string_view value,
                               Header* h) {
  if (!ParseHeader(value, h)) return table.Corrupt("malformed bundle header");
  if (h->num_shards < 1 || h->num_shards > kMaxShards) {
    return table.Corrupt(absl::StrCat("the bundle header gives ", h->num_shards,
                                      " data shards"));
  }
  if (h->min_consumer > kReaderVersion || h->bad_consumer) {
    return absl::FailedPreconditionError(absl::StrCat(
        table.path(),
        ": the checkpoint's format version needs a newer reader (min_consumer ",
        h->min_consumer, ", this reader is version ", kReaderVersion, ")"));
  }
  return absl::OkStatus();
}

}  // namespace checkpoint_internal
}  // namespace tfprof
