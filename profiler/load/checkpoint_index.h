// The index of a TensorFlow V2 checkpoint: its .index file, a LevelDB
// table read with libleveldb after checks of what libleveldb does not check
// (see IndexTable), and the protos in it (bundle header, shapes), decoded
// with the wire reader. Part of the checkpoint reader (checkpoint.h); not a
// public API.
#ifndef TFPROF_PROFILER_LOAD_CHECKPOINT_INDEX_H_
#define TFPROF_PROFILER_LOAD_CHECKPOINT_INDEX_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "leveldb/env.h"
#include "leveldb/iterator.h"
#include "leveldb/options.h"
#include "leveldb/slice.h"
#include "leveldb/status.h"
#include "leveldb/table.h"
#include "profiler/base/wire.h"

namespace tfprof {
namespace checkpoint_internal {

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

// A name from the file, quoted and escaped so a message stays on one line.
inline std::string Quote(absl::string_view name) {
  return absl::StrCat("'", absl::CHexEscape(name), "'");
}

// The wire reader over bytes held as an absl::string_view.
inline wire::Reader ReaderOf(absl::string_view s) {
  return wire::Reader(std::string_view(s.data(), s.size()));
}

inline absl::string_view ViewOf(const leveldb::Slice& s) {
  return absl::string_view(s.data(), s.size());
}

// --- The protos, decoded with the wire reader.

// A varint field holding a (sign-extended) int32 or an int64.
bool SignedField(wire::Reader* r, int wire_type, int64_t* v);

struct Header {
  int64_t num_shards = 0;
  bool big_endian = false;
  int64_t min_consumer = 0;
  bool bad_consumer = false;  // this reader's version is listed as bad
};

// BundleHeaderProto { int32 num_shards = 1; Endianness endianness = 2;
//                     VersionDef version = 3; }
bool ParseHeader(absl::string_view bytes, Header* h);

// TensorShapeProto { repeated Dim dim = 2; bool unknown_rank = 3; }
// Dim { int64 size = 1; string name = 2; }
// Returns an empty string or what is wrong.
std::string ParseShape(wire::Reader r, std::vector<int64_t>* dims);

// --- The .index table, read with libleveldb.
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

bool ReadHandle(wire::Reader* r, BlockHandle* h);
void PutHandle(const BlockHandle& h, std::string* out);

// The tail that, after a file of `file_size` bytes, makes a table whose only
// data block is `block` of that file: a one-entry index block (key "", value
// the block's handle) and a footer naming it.
std::string OneBlockTableTail(uint64_t file_size, const BlockHandle& block);

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

// The bundle header (the entry with the empty key), checked.
absl::Status ParseBundleHeader(const IndexTable& table, absl::string_view value,
                               Header* h);

}  // namespace checkpoint_internal
}  // namespace tfprof

#endif  // TFPROF_PROFILER_LOAD_CHECKPOINT_INDEX_H_
