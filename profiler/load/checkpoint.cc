#include "profiler/load/checkpoint.h"

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <system_error>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/io/coded_stream.h"

namespace tfprof {
namespace {

using google::protobuf::io::CodedInputStream;

// LevelDB table layout.
constexpr uint64_t kTableMagic = 0xdb4775248b80fb57ull;
constexpr size_t kFooterSize = 48;  // two padded block handles + magic
constexpr size_t kHandlesSize = 40;
constexpr size_t kBlockTrailerSize = 5;  // compression type + masked crc
constexpr uint8_t kNoCompression = 0;
constexpr uint8_t kSnappyCompression = 1;

// Limits on what this reader accepts.
constexpr uint64_t kMaxIndexBytes = uint64_t{256} << 20;
constexpr int64_t kMaxShards = 99999;  // shard names use %05d
constexpr size_t kMaxRank = 254;       // TensorFlow's own limit
constexpr uint64_t kMaxElements = uint64_t{1} << 62;
constexpr int64_t kReaderVersion = 1;  // bundle format version read here

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

// Protobuf wire types.
enum : int {
  kVarint = 0,
  kFixed64 = 1,
  kLengthDelimited = 2,
  kFixed32 = 5,
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

constexpr std::array<uint32_t, 256> MakeCrcTable() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int bit = 0; bit < 8; ++bit) {
      c = (c & 1) != 0 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    }
    table[i] = c;
  }
  return table;
}
constexpr std::array<uint32_t, 256> kCrcTable = MakeCrcTable();

// A name from the file, quoted and escaped so a message stays on one line.
std::string Quote(absl::string_view name) {
  return absl::StrCat("'", absl::CHexEscape(name), "'");
}

uint32_t LoadLE32(const char* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

uint64_t LoadLE64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
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

// The size of the regular file at `path`.
absl::StatusOr<uint64_t> RegularFileSize(const std::string& path) {
  std::error_code ec;
  const std::filesystem::file_status st = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(st)) {
    return absl::NotFoundError(absl::StrCat(path, ": no such file"));
  }
  if (ec || !std::filesystem::is_regular_file(st)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not a regular file"));
  }
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) {
    return absl::UnavailableError(
        absl::StrCat(path, ": cannot get the file size (", ec.message(), ")"));
  }
  return static_cast<uint64_t>(size);
}

// Reads `n` bytes at `offset` of `path` (the caller has bounded n).
absl::Status ReadRange(const std::string& path, uint64_t offset, uint64_t n,
                       std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(absl::StrCat(path, ": cannot open for reading"));
  }
  out->assign(static_cast<size_t>(n), '\0');
  in.seekg(static_cast<std::streamoff>(offset));
  if (n > 0) in.read(out->data(), static_cast<std::streamsize>(n));
  if (!in || static_cast<uint64_t>(in.gcount()) != n) {
    return absl::DataLossError(absl::StrFormat(
        "%s: short read: wanted %d bytes at offset %d (file truncated?)", path,
        n, offset));
  }
  return absl::OkStatus();
}

// --- Hand decoding of protobuf messages with CodedInputStream. -------------

// A stream over `bytes`, which is never larger than kMaxIndexBytes or a
// checked tensor size, so its length fits an int.
class Message {
 public:
  explicit Message(absl::string_view bytes)
      : bytes_(bytes),
        in_(reinterpret_cast<const uint8_t*>(bytes.data()),
            static_cast<int>(bytes.size())) {}

  bool AtEnd() const { return Position() >= bytes_.size(); }
  size_t Position() const { return static_cast<size_t>(in_.CurrentPosition()); }

  // The next field's number and wire type; false on a malformed tag.
  bool NextField(int* field, int* wire_type) {
    const uint32_t tag = in_.ReadTag();
    *field = static_cast<int>(tag >> 3);
    *wire_type = static_cast<int>(tag & 7);
    return *field != 0;
  }
  bool Varint(int wire_type, uint64_t* v) {
    return wire_type == kVarint && in_.ReadVarint64(v);
  }
  // A varint holding a (sign-extended) int32 or an int64.
  bool Signed(int wire_type, int64_t* v) {
    uint64_t u;
    if (!Varint(wire_type, &u)) return false;
    *v = AsInt64(u);
    return true;
  }
  bool Fixed32(int wire_type, uint32_t* v) {
    return wire_type == kFixed32 && in_.ReadLittleEndian32(v);
  }
  // A length-delimited payload, as a view into the message's bytes.
  bool Bytes(int wire_type, absl::string_view* out) {
    uint64_t n;
    if (wire_type != kLengthDelimited || !in_.ReadVarint64(&n)) return false;
    const size_t pos = Position();
    if (n > bytes_.size() - pos) return false;
    *out = bytes_.substr(pos, static_cast<size_t>(n));
    return in_.Skip(static_cast<int>(n));
  }
  // Skips `n` raw bytes.
  bool SkipRaw(uint64_t n) {
    return n <= static_cast<uint64_t>(INT_MAX) && in_.Skip(static_cast<int>(n));
  }
  // Skips a field's payload. Groups (wire types 3 and 4) are rejected: they
  // are not used by these messages and would need nesting.
  bool Skip(int wire_type) {
    uint64_t unused;
    absl::string_view unused_bytes;
    switch (wire_type) {
      case kVarint:
        return in_.ReadVarint64(&unused);
      case kFixed64:
        return in_.Skip(8);
      case kLengthDelimited:
        return Bytes(wire_type, &unused_bytes);
      case kFixed32:
        return in_.Skip(4);
      default:
        return false;
    }
  }

 private:
  absl::string_view bytes_;
  CodedInputStream in_;
};

struct Header {
  int64_t num_shards = 0;
  bool big_endian = false;
  int64_t min_consumer = 0;
  bool bad_consumer = false;  // this reader's version is listed as bad
};

// VersionDef { int32 producer = 1; int32 min_consumer = 2;
//              repeated int32 bad_consumers = 3; }
bool ParseVersion(absl::string_view bytes, Header* h) {
  Message m(bytes);
  while (!m.AtEnd()) {
    int field, wire;
    if (!m.NextField(&field, &wire)) return false;
    int64_t v;
    if (field == 2) {
      if (!m.Signed(wire, &h->min_consumer)) return false;
    } else if (field == 3 && wire == kVarint) {
      if (!m.Signed(wire, &v)) return false;
      if (v == kReaderVersion) h->bad_consumer = true;
    } else if (field == 3) {  // packed
      absl::string_view packed;
      if (!m.Bytes(wire, &packed)) return false;
      Message p(packed);
      while (!p.AtEnd()) {
        if (!p.Signed(kVarint, &v)) return false;
        if (v == kReaderVersion) h->bad_consumer = true;
      }
    } else if (!m.Skip(wire)) {
      return false;
    }
  }
  return true;
}

// BundleHeaderProto { int32 num_shards = 1; Endianness endianness = 2;
//                     VersionDef version = 3; }
bool ParseHeader(absl::string_view bytes, Header* h) {
  Message m(bytes);
  while (!m.AtEnd()) {
    int field, wire;
    if (!m.NextField(&field, &wire)) return false;
    if (field == 1) {
      if (!m.Signed(wire, &h->num_shards)) return false;
    } else if (field == 2) {
      int64_t e;
      if (!m.Signed(wire, &e) || (e != 0 && e != 1)) return false;
      h->big_endian = e == 1;
    } else if (field == 3) {
      absl::string_view version;
      if (!m.Bytes(wire, &version) || !ParseVersion(version, h)) return false;
    } else if (!m.Skip(wire)) {
      return false;
    }
  }
  return true;
}

// TensorShapeProto { repeated Dim dim = 2; bool unknown_rank = 3; }
// Dim { int64 size = 1; string name = 2; }
// Returns an empty string or what is wrong.
std::string ParseShape(absl::string_view bytes, std::vector<int64_t>* dims) {
  Message m(bytes);
  while (!m.AtEnd()) {
    int field, wire;
    if (!m.NextField(&field, &wire)) return "malformed shape";
    if (field == 2) {
      absl::string_view dim_bytes;
      if (!m.Bytes(wire, &dim_bytes)) return "malformed shape";
      if (dims->size() >= kMaxRank) return "shape has too many dimensions";
      int64_t size = 0;
      Message dim(dim_bytes);
      while (!dim.AtEnd()) {
        int dim_field, dim_wire;
        if (!dim.NextField(&dim_field, &dim_wire)) return "malformed shape";
        if (dim_field == 1) {
          if (!dim.Signed(dim_wire, &size)) return "malformed shape";
        } else if (!dim.Skip(dim_wire)) {
          return "malformed shape";
        }
      }
      if (size < 0) return absl::StrCat("shape has a dimension of ", size);
      dims->push_back(size);
    } else if (field == 3) {
      uint64_t unknown_rank;
      if (!m.Varint(wire, &unknown_rank)) return "malformed shape";
      if (unknown_rank != 0) return "shape has unknown rank";
    } else if (!m.Skip(wire)) {
      return "malformed shape";
    }
  }
  return "";
}

// --- LevelDB table blocks. --------------------------------------------------

struct BlockHandle {
  uint64_t offset = 0;
  uint64_t size = 0;
};

bool DecodeHandle(absl::string_view bytes, BlockHandle* h) {
  Message m(bytes);
  uint64_t offset, size;
  if (!m.Varint(kVarint, &offset) || !m.Varint(kVarint, &size)) return false;
  h->offset = offset;
  h->size = size;
  return true;
}

// The whole .index file, and checked access to its blocks. Work is bounded
// by the file's size even for hostile tables: blocks read more than once
// and keys that grow through prefix sharing use up a budget.
class Table {
 public:
  Table(std::string path, std::string contents)
      : path_(std::move(path)),
        file_(std::move(contents)),
        block_budget_(2 * uint64_t{file_.size()} + 4096),
        key_budget_(32 * uint64_t{file_.size()} + (uint64_t{1} << 20)) {}

  const std::string& path() const { return path_; }

  absl::Status Corrupt(absl::string_view what) const {
    return absl::DataLossError(absl::StrCat(path_, ": corrupt index: ", what));
  }

  // Checks the footer and returns the index block's handle.
  absl::Status ReadFooter(BlockHandle* index) const {
    if (file_.size() < kFooterSize) {
      return absl::DataLossError(absl::StrFormat(
          "%s: truncated: %d bytes, shorter than a %d-byte table footer", path_,
          file_.size(), kFooterSize));
    }
    const char* footer = file_.data() + file_.size() - kFooterSize;
    const uint64_t magic = LoadLE64(footer + kHandlesSize);
    if (magic != kTableMagic) {
      return absl::DataLossError(absl::StrFormat(
          "%s: bad magic number 0x%016x (expected 0x%016x): truncated, or not "
          "a TensorFlow V2 checkpoint index",
          path_, magic, kTableMagic));
    }
    Message m(absl::string_view(footer, kHandlesSize));
    uint64_t meta_offset, meta_size, offset, size;
    if (!m.Varint(kVarint, &meta_offset) || !m.Varint(kVarint, &meta_size) ||
        !m.Varint(kVarint, &offset) || !m.Varint(kVarint, &size)) {
      return Corrupt("malformed footer");
    }
    index->offset = offset;
    index->size = size;
    return absl::OkStatus();
  }

  // The contents of the block at `h`, after checking its bounds, checksum
  // and compression type.
  absl::Status ReadBlock(const BlockHandle& h, absl::string_view* contents) {
    const uint64_t limit = file_.size() - kFooterSize;
    if (h.offset > limit || h.size > limit - h.offset ||
        kBlockTrailerSize > limit - h.offset - h.size) {
      return absl::DataLossError(absl::StrFormat(
          "%s: truncated or corrupt: block at offset %d of size %d runs past "
          "the end of the %d-byte file",
          path_, h.offset, h.size, file_.size()));
    }
    if (h.size > block_budget_) {
      return Corrupt("the same blocks are referenced over and over");
    }
    block_budget_ -= h.size;
    const char* p = file_.data() + h.offset;
    const size_t n = static_cast<size_t>(h.size);
    const uint32_t stored = LoadLE32(p + n + 1);
    const uint32_t actual = MaskCrc(Crc32c(p, n + 1));
    if (stored != actual) {
      return absl::DataLossError(absl::StrFormat(
          "%s: corrupt block at offset %d: crc32c mismatch (stored 0x%08x, "
          "computed 0x%08x)",
          path_, h.offset, stored, actual));
    }
    const uint8_t type = static_cast<uint8_t>(p[n]);
    if (type == kSnappyCompression) {
      return absl::UnimplementedError(absl::StrCat(
          path_, ": snappy-compressed checkpoint index is not supported"));
    }
    if (type != kNoCompression) {
      return Corrupt(absl::StrCat("unknown block compression type ",
                                  static_cast<int>(type)));
    }
    *contents = absl::string_view(p, n);
    return absl::OkStatus();
  }

  // Calls fn(key, value) for each entry of a block, in order, undoing the
  // prefix compression of keys.
  template <typename Fn>
  absl::Status ForEachEntry(absl::string_view block, Fn fn) {
    if (block.size() < 4) return Corrupt("block shorter than 4 bytes");
    const uint32_t num_restarts = LoadLE32(block.data() + block.size() - 4);
    if (num_restarts > (block.size() - 4) / 4) {
      return Corrupt(absl::StrCat("block claims ", num_restarts,
                                  " restart points, more than fit"));
    }
    const size_t entries_end = block.size() - 4 - size_t{num_restarts} * 4;
    for (uint32_t i = 0; i < num_restarts; ++i) {
      if (LoadLE32(block.data() + entries_end + size_t{i} * 4) > entries_end) {
        return Corrupt("restart point outside its block");
      }
    }
    const absl::string_view entries = block.substr(0, entries_end);
    Message m(entries);
    std::string key;
    while (!m.AtEnd()) {
      uint64_t shared, non_shared, value_size;
      if (!m.Varint(kVarint, &shared) || !m.Varint(kVarint, &non_shared) ||
          !m.Varint(kVarint, &value_size)) {
        return Corrupt("malformed block entry");
      }
      const size_t pos = m.Position();
      const size_t left = entries.size() - pos;
      if (shared > key.size() || non_shared > left ||
          value_size > left - non_shared) {
        return Corrupt("block entry runs past the end of its block");
      }
      key.resize(static_cast<size_t>(shared));
      key.append(entries.data() + pos, static_cast<size_t>(non_shared));
      if (key.size() > key_budget_) {
        return Corrupt("keys are implausibly long in total");
      }
      key_budget_ -= key.size();
      const absl::string_view value =
          entries.substr(pos + static_cast<size_t>(non_shared),
                         static_cast<size_t>(value_size));
      if (!m.SkipRaw(non_shared + value_size)) {
        return Corrupt("block entry runs past the end of its block");
      }
      absl::Status s = fn(key, value);
      if (!s.ok()) return s;
    }
    return absl::OkStatus();
  }

 private:
  std::string path_;
  std::string file_;
  uint64_t block_budget_;  // bytes of blocks still allowed
  uint64_t key_budget_;    // bytes of whole keys still allowed
};

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

uint32_t Crc32cExtend(uint32_t crc, const char* data, size_t n) {
  uint32_t c = ~crc;
  for (size_t i = 0; i < n; ++i) {
    c = kCrcTable[(c ^ static_cast<uint8_t>(data[i])) & 0xff] ^ (c >> 8);
  }
  return ~c;
}

uint32_t MaskCrc(uint32_t crc) {
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

uint32_t UnmaskCrc(uint32_t masked) {
  const uint32_t rot = masked - 0xa282ead8u;
  return (rot >> 17) | (rot << 15);
}

namespace {

// Largest tensor Read() loads (bytes in the shard).
constexpr uint64_t kMaxTensorBytes = uint64_t{1} << 31;

bool DecodeVarint64(const char** p, const char* end, uint64_t* v) {
  uint64_t result = 0;
  for (int shift = 0; shift <= 63 && *p < end; shift += 7) {
    const uint8_t b = static_cast<uint8_t>(*(*p)++);
    if (shift == 63 && b > 1) return false;  // more than 64 bits
    result |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) {
      *v = result;
      return true;
    }
  }
  return false;
}

// Stores `v` as an n-byte integer in the given byte order.
void StoreUnsigned(uint64_t v, size_t n, bool big_endian, char* out) {
  for (size_t i = 0; i < n; ++i) {
    const size_t k = big_endian ? n - 1 - i : i;
    out[k] = static_cast<char>(static_cast<uint8_t>(v & 0xff));
    v >>= 8;
  }
}

}  // namespace

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
  std::string contents;
  absl::Status s = ReadRange(index_path, 0, *index_size, &contents);
  if (!s.ok()) return s;
  Table table(index_path, std::move(contents));
  BlockHandle index_handle;
  s = table.ReadFooter(&index_handle);
  if (!s.ok()) return s;
  absl::string_view index_block;
  s = table.ReadBlock(index_handle, &index_block);
  if (!s.ok()) return s;

  Checkpoint ckpt;
  ckpt.prefix_ = prefix;
  bool have_header = false;
  bool have_key = false;
  std::string last_key;
  std::set<int> shards_used;
  const std::string no_header = absl::StrCat(
      index_path, ": no bundle header (the entry with the empty key); ",
      NotV2Message(prefix, prefix));

  auto on_entry = [&](const std::string& key,
                      absl::string_view value) -> absl::Status {
    if (have_key && !(last_key < key)) {
      return table.Corrupt(absl::StrCat("keys out of order at ", Quote(key)));
    }
    have_key = true;
    last_key = key;
    if (key.empty()) {
      Header h;
      if (!ParseHeader(value, &h)) {
        return table.Corrupt("malformed bundle header");
      }
      if (h.num_shards < 1 || h.num_shards > kMaxShards) {
        return table.Corrupt(absl::StrCat("the bundle header gives ",
                                          h.num_shards, " data shards"));
      }
      if (h.min_consumer > kReaderVersion || h.bad_consumer) {
        return absl::FailedPreconditionError(absl::StrCat(
            index_path,
            ": the checkpoint's format version needs a newer "
            "reader (min_consumer ",
            h.min_consumer, ", this reader is version ", kReaderVersion, ")"));
      }
      ckpt.num_shards_ = static_cast<int>(h.num_shards);
      ckpt.big_endian_ = h.big_endian;
      have_header = true;
      return absl::OkStatus();
    }
    // "" sorts first, so a header seen later would be out of order anyway.
    if (!have_header) return absl::InvalidArgumentError(no_header);
    // Keys starting with a NUL byte hold one slice of a partitioned tensor;
    // the tensor itself has its own entry (with `slices`).
    if (key[0] == '\0') return absl::OkStatus();

    // BundleEntryProto { DataType dtype = 1; TensorShapeProto shape = 2;
    //   int32 shard_id = 3; int64 offset = 4; int64 size = 5;
    //   fixed32 crc32c = 6; repeated TensorSliceProto slices = 7; }
    Entry e;
    Message m(value);
    while (!m.AtEnd()) {
      int field, wire;
      if (!m.NextField(&field, &wire)) {
        return table.Corrupt(
            absl::StrCat("malformed entry for tensor ", Quote(key)));
      }
      int64_t v = 0;
      const char* bad = nullptr;
      switch (field) {
        case 1:
          if (!m.Signed(wire, &v) || v < 0 || v > INT_MAX) bad = "dtype";
          e.dtype = static_cast<int>(v);
          break;
        case 2: {
          absl::string_view shape;
          if (!m.Bytes(wire, &shape)) {
            bad = "shape";
            break;
          }
          const std::string problem = ParseShape(shape, &e.shape);
          if (!problem.empty()) {
            return table.Corrupt(
                absl::StrCat("tensor ", Quote(key), ": ", problem));
          }
          break;
        }
        case 3:
          if (!m.Signed(wire, &v) || v < 0 || v >= ckpt.num_shards_) {
            return table.Corrupt(absl::StrCat(
                "tensor ", Quote(key), " is in shard ", v, " of a bundle with ",
                ckpt.num_shards_, " shards"));
          }
          e.shard_id = static_cast<int>(v);
          break;
        case 4:
          if (!m.Signed(wire, &v) || v < 0) bad = "offset";
          e.offset = static_cast<uint64_t>(v);
          break;
        case 5:
          if (!m.Signed(wire, &v) || v < 0) bad = "size";
          e.size = static_cast<uint64_t>(v);
          break;
        case 6:
          if (!m.Fixed32(wire, &e.masked_crc)) bad = "crc32c";
          break;
        case 7:
          e.sliced = true;
          if (wire != kLengthDelimited || !m.Skip(wire)) bad = "slices";
          break;
        default:
          if (!m.Skip(wire)) bad = "unknown field";
          break;
      }
      if (bad != nullptr) {
        return table.Corrupt(
            absl::StrCat("bad ", bad, " in the entry for tensor ", Quote(key)));
      }
    }
    for (int64_t d : e.shape) {
      const uint64_t dim = static_cast<uint64_t>(d);
      if (dim != 0 && e.num_elements > kMaxElements / dim) {
        return table.Corrupt(
            absl::StrCat("tensor ", Quote(key), " has too many elements"));
      }
      e.num_elements *= dim;
    }
    shards_used.insert(e.shard_id);
    ckpt.names_.push_back(key);
    ckpt.entries_.push_back(std::move(e));
    return absl::OkStatus();
  };

  s = table.ForEachEntry(
      index_block,
      [&](const std::string& key, absl::string_view value) -> absl::Status {
        BlockHandle h;
        if (!DecodeHandle(value, &h)) {
          return table.Corrupt(
              absl::StrCat("malformed block handle at index key ", Quote(key)));
        }
        absl::string_view block;
        absl::Status bs = table.ReadBlock(h, &block);
        if (!bs.ok()) return bs;
        return table.ForEachEntry(block, on_entry);
      });
  if (!s.ok()) return s;
  if (!have_header) return absl::InvalidArgumentError(no_header);
  for (int shard : shards_used) {
    const std::string shard_path = ckpt.ShardPath(shard);
    if (!RegularFileSize(shard_path).ok()) {
      return absl::NotFoundError(absl::StrCat(NotV2Message(path, prefix),
                                              ": data shard ", shard_path,
                                              " is missing"));
    }
  }
  return ckpt;
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
  const size_t elem = ElementSize(e->dtype);
  if (e->sliced || (elem == 0 && e->dtype != kString)) {
    t.supported = false;
    return t;
  }
  const std::string shard = ShardPath(e->shard_id);
  const std::string tensor = Quote(name);
  absl::StatusOr<uint64_t> shard_size = RegularFileSize(shard);
  if (!shard_size.ok()) {
    return absl::NotFoundError(absl::StrCat(shard, ": cannot read tensor ",
                                            tensor, ": ",
                                            shard_size.status().message()));
  }
  if (e->offset > *shard_size || e->size > *shard_size - e->offset) {
    return absl::DataLossError(absl::StrFormat(
        "%s: tensor %s at offset %d, size %d lies beyond the end of the shard "
        "(%d bytes; truncated?)",
        shard, tensor, e->offset, e->size, *shard_size));
  }
  if (e->size > kMaxTensorBytes) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "%s: tensor %s is %d bytes, more than the %d this reader loads", shard,
        tensor, e->size, kMaxTensorBytes));
  }
  const uint64_t count = e->num_elements;
  if (e->dtype != kString && (e->size % elem != 0 || e->size / elem != count)) {
    return absl::DataLossError(absl::StrFormat(
        "%s: tensor %s has %d bytes, but its shape holds %d elements of %d "
        "bytes (dtype %d)",
        shard, tensor, e->size, count, elem, e->dtype));
  }
  std::string bytes;
  absl::Status s = ReadRange(shard, e->offset, e->size, &bytes);
  if (!s.ok()) return s;
  const bool be = big_endian_;

  if (e->dtype == kString) {
    // count varint64 lengths; the masked crc32c of those lengths (each
    // taken as a 4-byte integer, or 8 bytes above 2^32-1) in 4 bytes; then
    // the strings' bytes. The entry's crc32c covers the same integers, the
    // 4 checksum bytes and the strings' bytes.
    auto corrupt = [&](absl::string_view what) {
      return absl::DataLossError(
          absl::StrCat(shard, ": string tensor ", tensor, ": ", what));
    };
    if (count == 0 && bytes.empty()) return t;  // no lengths, no checksum
    if (count > bytes.size()) {
      return corrupt(absl::StrCat(count, " elements cannot fit in ",
                                  bytes.size(), " bytes"));
    }
    const char* p = bytes.data();
    const char* const end = p + bytes.size();
    std::vector<uint64_t> lengths;
    lengths.reserve(static_cast<size_t>(count));
    uint32_t crc = 0;
    for (uint64_t i = 0; i < count; ++i) {
      uint64_t len;
      if (!DecodeVarint64(&p, end, &len)) {
        return corrupt("truncated or malformed string lengths");
      }
      char buf[8];
      const size_t width = len <= 0xffffffffu ? 4 : 8;
      StoreUnsigned(len, width, be, buf);
      crc = Crc32cExtend(crc, buf, width);
      lengths.push_back(len);
    }
    if (end - p < 4) return corrupt("missing the checksum of the lengths");
    const uint32_t stored = static_cast<uint32_t>(LoadUnsigned(p, 4, be));
    if (stored != MaskCrc(crc)) {
      return corrupt(absl::StrFormat(
          "crc32c mismatch in the lengths (stored 0x%08x, computed 0x%08x)",
          stored, MaskCrc(crc)));
    }
    crc = Crc32cExtend(crc, p, 4);
    p += 4;
    crc = Crc32cExtend(crc, p, static_cast<size_t>(end - p));
    if (MaskCrc(crc) != e->masked_crc) {
      return corrupt(absl::StrFormat(
          "crc32c mismatch (stored 0x%08x, computed 0x%08x): data is corrupt",
          e->masked_crc, MaskCrc(crc)));
    }
    t.values_str.reserve(lengths.size());
    for (uint64_t len : lengths) {
      if (len > static_cast<uint64_t>(end - p)) {
        return corrupt("a string runs past the end of the tensor");
      }
      t.values_str.emplace_back(p, static_cast<size_t>(len));
      p += len;
    }
    if (p != end) {
      return corrupt(
          absl::StrCat(end - p, " unexpected bytes after the strings"));
    }
    return t;
  }

  const uint32_t actual = MaskCrc(Crc32c(bytes.data(), bytes.size()));
  if (actual != e->masked_crc) {
    return absl::DataLossError(absl::StrFormat(
        "%s: crc32c mismatch for tensor %s (stored 0x%08x, computed 0x%08x): "
        "data is corrupt",
        shard, tensor, e->masked_crc, actual));
  }
  const bool is_double = e->dtype == kFloat || e->dtype == kDouble ||
                         e->dtype == kHalf || e->dtype == kBfloat16;
  if (is_double) {
    t.values_double.reserve(static_cast<size_t>(count));
  } else {
    t.values_int64.reserve(static_cast<size_t>(count));
  }
  const char* p = bytes.data();
  for (uint64_t i = 0; i < count; ++i, p += elem) {
    const uint64_t raw = LoadUnsigned(p, elem, be);
    switch (e->dtype) {
      case kFloat:
        t.values_double.push_back(FloatBits(static_cast<uint32_t>(raw)));
        break;
      case kDouble:
        t.values_double.push_back(DoubleBits(raw));
        break;
      case kHalf:
        t.values_double.push_back(HalfToDouble(static_cast<uint16_t>(raw)));
        break;
      case kBfloat16:
        t.values_double.push_back(FloatBits(static_cast<uint32_t>(raw) << 16));
        break;
      case kInt8:
      case kInt16:
      case kInt32:
      case kInt64:
        t.values_int64.push_back(SignExtend(raw, elem));
        break;
      case kBool:
        t.values_int64.push_back(raw != 0 ? 1 : 0);
        break;
      default:  // uint8, uint16, uint32, uint64
        t.values_int64.push_back(AsInt64(raw));
        break;
    }
  }
  return t;
}

}  // namespace tfprof
