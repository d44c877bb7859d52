#include "profiler/load/checkpoint.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <set>
#include <string_view>
#include <system_error>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "leveldb/env.h"
#include "leveldb/iterator.h"
#include "leveldb/options.h"
#include "leveldb/slice.h"
#include "leveldb/status.h"
#include "leveldb/table.h"
#include "profiler/base/crc32c.h"
#include "profiler/base/file.h"
#include "profiler/base/wire.h"

namespace tfprof {
namespace {

// LevelDB table layout, as far as it is checked here before libleveldb
// reads a block.
constexpr uint64_t kTableMagic = 0xdb4775248b80fb57ull;
constexpr size_t kFooterSize = 48;  // two padded block handles + magic
constexpr size_t kHandlesSize = 40;
constexpr size_t kBlockTrailerSize = 5;  // compression type + masked crc
constexpr char kNoCompression = 0;
constexpr char kSnappyCompression = 1;

// Limits on what this reader accepts.
constexpr uint64_t kMaxIndexBytes = uint64_t{256} << 20;
constexpr int64_t kMaxShards = 99999;  // shard names use %05d
constexpr size_t kMaxRank = 254;       // TensorFlow's own limit
constexpr uint64_t kMaxElements = uint64_t{1} << 62;
constexpr int64_t kReaderVersion = 1;  // bundle format version read here
// Largest tensor Read() loads (bytes in the shard).
constexpr uint64_t kMaxTensorBytes = uint64_t{1} << 31;

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

// A name from the file, quoted and escaped so a message stays on one line.
std::string Quote(absl::string_view name) {
  return absl::StrCat("'", absl::CHexEscape(name), "'");
}

// The wire reader over bytes held as an absl::string_view.
wire::Reader ReaderOf(absl::string_view s) {
  return wire::Reader(std::string_view(s.data(), s.size()));
}

absl::string_view ViewOf(const leveldb::Slice& s) {
  return absl::string_view(s.data(), s.size());
}

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

// Two's complement reinterpretations, without implementation-defined casts.
int64_t AsInt64(uint64_t v) {
  int64_t s;
  std::memcpy(&s, &v, sizeof(s));
  return s;
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

// --- Files. -----------------------------------------------------------------

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

// --- The protos, decoded with the wire reader. ------------------------------

// A varint field holding a (sign-extended) int32 or an int64.
bool SignedField(wire::Reader* r, int wire_type, int64_t* v) {
  uint64_t u;
  if (wire_type != wire::kVarint || !r->Varint(&u)) return false;
  *v = AsInt64(u);
  return true;
}

struct Header {
  int64_t num_shards = 0;
  bool big_endian = false;
  int64_t min_consumer = 0;
  bool bad_consumer = false;  // this reader's version is listed as bad
};

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

// BundleHeaderProto { int32 num_shards = 1; Endianness endianness = 2;
//                     VersionDef version = 3; }
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

// TensorShapeProto { repeated Dim dim = 2; bool unknown_rank = 3; }
// Dim { int64 size = 1; string name = 2; }
// Returns an empty string or what is wrong.
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

// --- The .index table, read with libleveldb. --------------------------------
//
// libleveldb decodes the blocks, checks their crc32c and iterates the
// entries. Checked here first, before it reads a block, is what it does not
// check or does not report clearly:
//  * the block lies inside the file: leveldb allocates a block's size before
//    reading it, so a hostile handle (2^62 bytes) would throw std::bad_alloc
//    inside the library;
//  * the blocks read in total stay proportional to the file's size (a block
//    listed over and over), and so do the keys (ever longer shared prefixes);
//  * the block is uncompressed (leveldb would try snappy; TensorFlow never
//    compresses a bundle's index) and its restart array fits: leveldb reads
//    a block whose restart points are off as empty, or starts it mid-entry.
// The data blocks' handles are in the index block, which is read with
// leveldb as well: as the one data block of a view of the file whose footer
// (in a tail past the file's end) names a one-entry index block pointing at
// it.

struct BlockHandle {
  uint64_t offset = 0;
  uint64_t size = 0;
};

bool ReadHandle(wire::Reader* r, BlockHandle* h) {
  return r->Varint(&h->offset) && r->Varint(&h->size);
}

void PutHandle(const BlockHandle& h, std::string* out) {
  wire::PutVarint(out, h.offset);
  wire::PutVarint(out, h.size);
}

// The tail that, after a file of `file_size` bytes, makes a table whose only
// data block is `block` of that file: a one-entry index block (key "", value
// the block's handle) and a footer naming it.
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

// A table in memory as leveldb reads it: the file, then `tail` (empty for
// the file itself). leveldb reads whole blocks and the footer, each inside
// one of the two parts, and uses the bytes in place.
class MemoryFile final : public leveldb::RandomAccessFile {
 public:
  MemoryFile(absl::string_view file, std::string tail)
      : file_(file), tail_(std::move(tail)) {}

  uint64_t size() const { return file_.size() + tail_.size(); }

  leveldb::Status Read(uint64_t offset, size_t n, leveldb::Slice* result,
                       char* /*scratch*/) const override {
    absl::string_view part = file_;
    if (offset >= file_.size()) {
      part = tail_;
      offset -= file_.size();
    }
    if (offset > part.size() || n > part.size() - offset) {
      *result = leveldb::Slice();
      return leveldb::Status::IOError("read outside the index");
    }
    *result = leveldb::Slice(part.data() + offset, n);
    return leveldb::Status::OK();
  }

 private:
  absl::string_view file_;
  std::string tail_;
};

// The whole .index file, checked as above and read with leveldb.
class IndexTable {
 public:
  IndexTable(std::string path, std::string contents)
      : path_(std::move(path)),
        file_(std::move(contents)),
        block_budget_(2 * uint64_t{file_.size()} + 4096),
        key_budget_(32 * uint64_t{file_.size()} + (uint64_t{1} << 20)) {}

  const std::string& path() const { return path_; }

  absl::Status Corrupt(absl::string_view what) const {
    return absl::DataLossError(absl::StrCat(path_, ": corrupt index: ", what));
  }

  // Checks the footer and every block, then calls fn(key, value) for each
  // entry of the table, in order, stopping at the first error.
  template <typename Fn>
  absl::Status ForEachEntry(Fn fn) {
    absl::Status s = ReadFooter();
    if (!s.ok()) return s;
    s = ForEachDataBlock(
        [this](const BlockHandle& h) { return CheckBlock(h); });
    if (!s.ok()) return s;
    MemoryFile file(file_, "");
    return Scan(&file, [&](absl::string_view key, absl::string_view value) {
      if (key.size() > key_budget_) {
        return Corrupt("keys are implausibly long in total");
      }
      key_budget_ -= key.size();
      return fn(key, value);
    });
  }

 private:
  // Whether the block at `h` and its trailer lie before the footer (which
  // ReadFooter() has found).
  bool InFile(const BlockHandle& h) const {
    const uint64_t limit = file_.size() - kFooterSize;
    return h.offset <= limit && h.size <= limit - h.offset &&
           kBlockTrailerSize <= limit - h.offset - h.size;
  }

  absl::Status ReadFooter();
  absl::Status CheckBlock(const BlockHandle& h);
  absl::Status CheckBlockContents(const BlockHandle& h) const;
  absl::Status CheckRestarts(absl::string_view block) const;
  absl::Status ChecksumError(const BlockHandle& h) const;
  absl::Status FromLevelDb(const leveldb::Status& s);
  absl::Status FindCorruptBlock();

  // Opens `file` as a table with leveldb and calls fn(key, value) for each
  // entry, in order, stopping at the first error (leveldb's or fn's).
  template <typename Fn>
  absl::Status Scan(MemoryFile* file, Fn fn) {
    leveldb::Options options;
    options.paranoid_checks = true;  // check the index block's crc32c too
    leveldb::Table* opened = nullptr;
    leveldb::Status s =
        leveldb::Table::Open(options, file, file->size(), &opened);
    if (!s.ok()) return FromLevelDb(s);
    const std::unique_ptr<leveldb::Table> table(opened);
    leveldb::ReadOptions read;
    read.verify_checksums = true;
    read.fill_cache = false;
    const std::unique_ptr<leveldb::Iterator> it(table->NewIterator(read));
    // The status is checked at every step: past a block that fails, the
    // iterator goes on with the next block and keeps the error for later.
    for (it->SeekToFirst();; it->Next()) {
      s = it->status();
      if (!s.ok()) return FromLevelDb(s);
      if (!it->Valid()) return absl::OkStatus();
      absl::Status done = fn(ViewOf(it->key()), ViewOf(it->value()));
      if (!done.ok()) return done;
    }
  }

  // Calls fn(handle) for each data block the index block lists, in order.
  template <typename Fn>
  absl::Status ForEachDataBlock(Fn fn) {
    MemoryFile view(file_, OneBlockTableTail(file_.size(), index_));
    return Scan(&view, [&](absl::string_view key, absl::string_view value) {
      wire::Reader r = ReaderOf(value);
      BlockHandle h;
      if (!ReadHandle(&r, &h)) {
        return Corrupt(
            absl::StrCat("malformed block handle at index key ", Quote(key)));
      }
      return fn(h);
    });
  }

  std::string path_;
  std::string file_;
  uint64_t block_budget_;  // bytes of blocks still allowed
  uint64_t key_budget_;    // bytes of whole keys still allowed
  BlockHandle index_;      // the index block
  bool finding_corrupt_block_ = false;
};

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

// The bundle header (the entry with the empty key), checked.
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

// --- Tensor values. ---------------------------------------------------------

// A DT_STRING tensor's bytes: count varint64 lengths; the masked crc32c of
// those lengths (each taken as a 4-byte integer, or 8 bytes above 2^32-1) in
// 4 bytes; then the strings' bytes. The entry's crc32c covers the same
// integers, the 4 checksum bytes and the strings' bytes.
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
  wire::Reader r = ReaderOf(bytes);
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

// The values of a fixed-size dtype (bytes holds exactly count elements).
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
