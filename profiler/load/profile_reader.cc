#include "profiler/load/profile_reader.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <memory>
#include <new>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "profiler/base/file.h"
#include "profiler/base/parallel.h"
#include "profiler/base/wire.h"
#include "profiler/load/profile_decoder.h"

namespace tfprof {

namespace {

absl::Status Corrupt(const std::string& source, int64_t offset) {
  return absl::InvalidArgumentError(
      absl::StrCat(source,
                   ": not a binary tensorflow.tfprof.ProfileProto (corrupt or "
                   "truncated near byte ",
                   offset, ")"));
}

}  // namespace

absl::StatusOr<Model> DecodeProfileProto(std::string_view bytes,
                                         const std::string& source) {
  ProfileDecoder decoder;
  wire::Reader r(bytes);
  uint32_t field;
  int wt;
  int64_t seq = 0;
  while (r.Next(&field, &wt)) {
    const uint8_t* at = r.pos();
    if (!decoder.Field(field, wt, &r, seq++)) {
      return Corrupt(source,
                     at - reinterpret_cast<const uint8_t*>(bytes.data()));
    }
  }
  if (!r.ok()) return Corrupt(source, static_cast<int64_t>(bytes.size()));
  return decoder.Finish(source);
}

// Bytes a read fills before they are used: not zeroed when a buffer grows.
template <typename T>
struct UninitAllocator : std::allocator<T> {
  template <typename U>
  struct rebind {
    using other = UninitAllocator<U>;
  };
  UninitAllocator() = default;
  template <typename U>
  UninitAllocator(const UninitAllocator<U>&) noexcept {}
  template <typename U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};
using ReadBuffer = std::vector<uint8_t, UninitAllocator<uint8_t>>;

// Reads a file in blocks and hands out one top-level field at a time. The
// next block can be read into a second buffer while the current one is
// decoded (ReadAhead); Fill then takes it from there.
class BlockReader {
 public:
  BlockReader(InputFile* file, size_t block)
      : block_(block == 0 ? kDefaultBlock : block), file_(file) {}

  // Makes at least `n` bytes available from the current position, unless the
  // file ends first.
  absl::Status Fill(size_t n) {
    if (end_ - begin_ >= n) return absl::OkStatus();
    if (ahead_len_ > 0 || ahead_eof_) TakeAhead();
    if (end_ - begin_ >= n || eof_) return absl::OkStatus();
    if (begin_ > 0) {
      std::memmove(buf_.data(), buf_.data() + begin_, end_ - begin_);
      end_ -= begin_;
      begin_ = 0;
    }
    if (buf_.size() < n) buf_.resize(std::max(n, buf_.size() * 2));
    if (buf_.size() < block_) buf_.resize(block_);
    while (end_ < n || end_ < buf_.size() / 2) {
      const size_t want = std::min(buf_.size() - end_, block_);
      absl::StatusOr<size_t> got = file_->Read(buf_.data() + end_, want);
      if (!got.ok()) return got.status();
      end_ += *got;
      total_ += static_cast<int64_t>(*got);
      if (*got < want) {  // Read() stops short only at the end
        eof_ = true;
        break;
      }
    }
    return absl::OkStatus();
  }
  // Reads the next block into the second buffer, if it holds none yet; the
  // current one's bytes stay where they are.
  absl::Status ReadAhead() {
    if (eof_ || ahead_len_ > 0 || ahead_eof_) return absl::OkStatus();
    if (ahead_.size() < kHeadroom + block_) ahead_.resize(kHeadroom + block_);
    while (ahead_len_ < block_) {
      const size_t want = block_ - ahead_len_;
      absl::StatusOr<size_t> got =
          file_->Read(ahead_.data() + kHeadroom + ahead_len_, want);
      if (!got.ok()) return got.status();
      ahead_len_ += *got;
      if (*got < want) {  // Read() stops short only at the end
        ahead_eof_ = true;
        break;
      }
    }
    return absl::OkStatus();
  }
  const uint8_t* data() const { return buf_.data() + begin_; }
  size_t available() const { return end_ - begin_; }
  void Consume(size_t n) { begin_ += n; }
  bool at_end() const { return eof_ && begin_ == end_; }
  int64_t offset() const {
    return total_ - static_cast<int64_t>(end_ - begin_);
  }
  int64_t total_read() const { return total_; }
  size_t block_size() const { return block_; }
  // Bytes left in the file after the current position, if known.
  int64_t left() const {
    return file_->size() < 0 ? -1 : file_->size() - offset();
  }

 private:
  // The block read ahead becomes the buffer, after the bytes not consumed
  // yet (copied into the room left before it, when they fit).
  void TakeAhead() {
    const size_t left = end_ - begin_;
    if (left <= kHeadroom) {
      if (left > 0) {
        std::memcpy(ahead_.data() + kHeadroom - left, buf_.data() + begin_,
                    left);
      }
      buf_.swap(ahead_);
      begin_ = kHeadroom - left;
      end_ = kHeadroom + ahead_len_;
    } else {
      std::memmove(buf_.data(), buf_.data() + begin_, left);
      begin_ = 0;
      end_ = left;
      if (buf_.size() < left + ahead_len_) buf_.resize(left + ahead_len_);
      std::memcpy(buf_.data() + end_, ahead_.data() + kHeadroom, ahead_len_);
      end_ += ahead_len_;
    }
    total_ += static_cast<int64_t>(ahead_len_);
    eof_ = ahead_eof_;
    ahead_len_ = 0;
    ahead_eof_ = false;
  }

  static constexpr size_t kDefaultBlock = 8 << 20;
  // Room before a block read ahead for the bytes left of the current one.
  static constexpr size_t kHeadroom = 1 << 20;
  const size_t block_;
  InputFile* file_;
  ReadBuffer buf_;
  size_t begin_ = 0, end_ = 0;
  int64_t total_ = 0;
  bool eof_ = false;
  ReadBuffer ahead_;
  size_t ahead_len_ = 0;  // bytes read ahead, at ahead_[kHeadroom]
  bool ahead_eof_ = false;
};

namespace {

// True if the bytes look like protobuf text format rather than binary.

}  // namespace

bool LooksLikeProtoText(std::string_view bytes) {
  const size_t n = std::min<size_t>(bytes.size(), 4096);
  for (size_t i = 0; i < n; ++i) {
    const unsigned char c = static_cast<unsigned char>(bytes[i]);
    if (c == '\n' || c == '\r' || c == '\t') continue;
    if (c < 0x20 || c == 0x7f) return false;
  }
  return true;
}

namespace {

// A top-level field that lies whole in the read buffer: its tag's and its
// end's offsets from the buffer's current position.
struct FieldSpan {
  size_t begin = 0;
  size_t end = 0;
  bool node = false;  // a `nodes` entry (the fields shared out)
};

// The whole fields at the start of `data` (none if the first is cut off by
// the buffer's end, or is corrupt: the one-field path then says which).
// `left` is what the file holds from `data` on (-1: unknown).
void WholeFields(const uint8_t* data, size_t size, int64_t left,
                 std::vector<FieldSpan>* spans) {
  spans->clear();
  size_t at = 0;
  while (at < size) {
    wire::Reader r(data + at, data + size);
    uint32_t field;
    int wt;
    if (!r.Next(&field, &wt)) return;
    if (wt == wire::kBytes) {
      uint64_t len = 0;
      if (!r.Varint(&len)) return;
      const size_t header = static_cast<size_t>(r.pos() - (data + at));
      if (left >= 0 && len > static_cast<uint64_t>(left) - at) return;
      if (len > size - at - header) return;
      spans->push_back(FieldSpan{at, at + header + static_cast<size_t>(len),
                                 field == pf::kNodes});
    } else {
      r.Skip(wt);
      if (!r.ok()) return;
      spans->push_back(
          FieldSpan{at, static_cast<size_t>(r.pos() - data), false});
    }
    at = spans->back().end;
  }
}

// Decodes spans[i] with `decoder`; `first_seq` is spans[0]'s place in the
// file. False if it is corrupt.
bool DecodeSpan(const uint8_t* data, const std::vector<FieldSpan>& spans,
                size_t i, int64_t first_seq, ProfileDecoder* decoder) {
  wire::Reader r(data + spans[i].begin, data + spans[i].end);
  uint32_t field = 0;
  int wt = 0;
  r.Next(&field, &wt);  // read once already by WholeFields
  return decoder->Field(field, wt, &r, first_seq + static_cast<int64_t>(i));
}

// Whether the group field at `data` ends within `size` bytes; if so, its
// length goes to `*length`.
bool WholeGroup(const uint8_t* data, size_t size, size_t* length) {
  wire::Reader r(data, data + size);
  uint32_t field = 0;
  int wt = 0;
  if (!r.Next(&field, &wt)) return false;
  r.Skip(wt);
  if (!r.ok()) return false;
  *length = static_cast<size_t>(r.pos() - data);
  return true;
}

// Below this many bytes a batch is decoded on one thread.
constexpr size_t kParallelBatchBytes = 1 << 20;
// The nodes a thread takes at a time.
constexpr size_t kChunkFields = 16;

// Decodes a batch of whole fields. Its nodes go in chunks to whichever of
// `main` and `helper` (on a second thread) is free, so that neither waits
// for the other long (a small batch: to each in turn, on this thread);
// then `main` decodes the other fields, in order (they set the model's own
// fields). With two threads, `main` first reads the next block ahead (its
// status in `*read`). Returns the index of the first
// corrupt field, or -1. (Each decoder stops at its first corrupt field;
// every field before the earlier of the two was decoded by one or the
// other.)
int64_t DecodeBatch(const uint8_t* data, const std::vector<FieldSpan>& spans,
                    int64_t first_seq, size_t parallel_bytes,
                    ProfileDecoder* main, ProfileDecoder* helper, size_t* turn,
                    BlockReader* in, absl::Status* read) {
  const size_t n = spans.size();
  // The nodes of chunk [begin, begin + kChunkFields), with `decoder`; the
  // index of the first corrupt one, or -1.
  const auto chunk = [&](size_t begin, ProfileDecoder* decoder) -> int64_t {
    for (size_t i = begin; i < std::min(n, begin + kChunkFields); ++i) {
      if (spans[i].node && !DecodeSpan(data, spans, i, first_seq, decoder)) {
        return static_cast<int64_t>(i);
      }
    }
    return -1;
  };
  int64_t bad_main = -1, bad_helper = -1;
  if (spans.back().end - spans.front().begin < parallel_bytes ||
      n <= kChunkFields || !HaveSecondCore()) {
    // One thread: the chunks still alternate between the two decoders,
    // across batches (`*turn`), so that small files and small blocks take
    // the same path as large ones.
    for (size_t c = 0; c * kChunkFields < n && bad_main < 0; ++c) {
      bad_main = chunk(c * kChunkFields, (*turn)++ % 2 == 0 ? main : helper);
    }
  } else {
    std::atomic<size_t> next{0};
    const auto nodes = [&](ProfileDecoder* decoder) -> int64_t {
      for (size_t begin; (begin = next.fetch_add(kChunkFields)) < n;) {
        if (const int64_t bad = chunk(begin, decoder); bad >= 0) return bad;
      }
      return -1;
    };
    RunBoth(
        true,
        [&] {
          *read = in->ReadAhead();
          bad_main = nodes(main);
        },
        [&] { bad_helper = nodes(helper); });
  }
  int64_t bad = bad_main < 0     ? bad_helper
                : bad_helper < 0 ? bad_main
                                 : std::min(bad_main, bad_helper);
  const size_t stop = bad < 0 ? n : static_cast<size_t>(bad);
  for (size_t i = 0; i < stop; ++i) {
    if (!spans[i].node && !DecodeSpan(data, spans, i, first_seq, main)) {
      return static_cast<int64_t>(i);
    }
  }
  return bad;
}

}  // namespace

absl::StatusOr<ProfileFileResult> ReadProfileProtoFile(
    const std::string& path, const std::function<void(int64_t)>& progress,
    size_t block_size) {
  absl::StatusOr<InputFile> file = InputFile::Open(path);
  if (!file.ok()) return file.status();
  BlockReader in(&*file, block_size);
  if (absl::Status s = in.Fill(4096); !s.ok()) return s;
  // (A file of nothing but whitespace would parse as an empty text
  // ProfileProto: a binary one cut short after a newline byte, say.)
  const std::string_view head(reinterpret_cast<const char*>(in.data()),
                              in.available());
  if (in.at_end() || (in.available() < 4096 &&
                      head.find_first_not_of(" \t\r\n") == head.npos)) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": empty file", in.at_end() ? "" : " (only whitespace)",
        ", not a ProfileProto"));
  }
  if (LooksLikeProtoText(head)) {
    return absl::FailedPreconditionError("text format");
  }
  ProfileDecoder decoder;
  ProfileDecoder helper(&decoder);
  // Tiny blocks (tests) share out tiny batches too.
  const size_t parallel_bytes =
      std::min(kParallelBatchBytes, in.block_size() / 2);
  std::vector<FieldSpan> spans;
  size_t turn = 0;  // DecodeBatch's alternation on one thread
  int64_t seq = 0;
  int64_t next_report = 64 << 20;
  const auto report = [&] {  // every 64 MiB
    if (progress && in.offset() >= next_report) {
      progress(in.offset());
      next_report = in.offset() + (64 << 20);
    }
  };
  while (true) {
    if (absl::Status s = in.Fill(20); !s.ok()) return s;
    if (in.at_end()) break;
    WholeFields(in.data(), in.available(), in.left(), &spans);
    if (!spans.empty()) {
      absl::Status read;
      const int64_t bad = DecodeBatch(in.data(), spans, seq, parallel_bytes,
                                      &decoder, &helper, &turn, &in, &read);
      if (bad >= 0) {
        return Corrupt(path,
                       in.offset() + static_cast<int64_t>(spans[bad].begin));
      }
      if (!read.ok()) return read;
      seq += static_cast<int64_t>(spans.size());
      in.Consume(spans.back().end);
      report();
      continue;
    }
    // The tag and, for length-delimited fields, the length.
    wire::Reader head(in.data(), in.data() + in.available());
    uint32_t field;
    int wt;
    if (!head.Next(&field, &wt)) return Corrupt(path, in.offset());
    size_t need = 0;
    if (wt == wire::kBytes) {
      uint64_t len = 0;
      if (!head.Varint(&len)) return Corrupt(path, in.offset());
      const size_t header = static_cast<size_t>(head.pos() - in.data());
      // A length beyond the end of the file is corruption, not something to
      // allocate for.
      const int64_t left = in.left();
      if ((left >= 0 && len > static_cast<uint64_t>(left)) ||
          len > (uint64_t{1} << 40)) {
        return Corrupt(path, in.offset());
      }
      need = header + static_cast<size_t>(len);
    } else if (wt == wire::kStartGroup) {
      // (An obsolete group: where it ends is known only by reading it.)
      need = in.available();
      while (!WholeGroup(in.data(), in.available(), &need)) {
        const size_t had = in.available();
        if (absl::Status s = in.Fill(had * 2); !s.ok()) return s;
        if (in.available() == had) break;  // the file ends inside it
      }
    } else {
      need = std::min<size_t>(in.available(), 20);
    }
    if (absl::Status s = in.Fill(need); !s.ok()) return s;
    if (in.available() < need) return Corrupt(path, in.offset());
    wire::Reader r(in.data(), in.data() + std::max(need, in.available()));
    uint32_t f2;
    int w2;
    r.Next(&f2, &w2);
    if (!decoder.Field(field, wt, &r, seq++)) {
      return Corrupt(path, in.offset());
    }
    in.Consume(static_cast<size_t>(r.pos() - in.data()));
    report();
  }
  decoder.Absorb(std::move(helper));
  absl::StatusOr<Model> model = decoder.Finish(path);
  if (!model.ok()) return model.status();
  ProfileFileResult result;
  result.model = std::move(*model);
  result.bytes_read = in.total_read();
  return result;
}

absl::StatusOr<Model> ModelFromProfileProto(const tfpb::ProfileProto& profile) {
  return DecodeProfileProto(profile.SerializeAsString(), "ProfileProto");
}

}  // namespace tfprof
