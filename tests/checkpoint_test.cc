// The V2 checkpoint reader: TensorFlow's own test checkpoints, bundles built
// here byte by byte (every dtype, several blocks and shards, big-endian), and
// missing, foreign, truncated and corrupt inputs.
#include "profiler/load/checkpoint.h"

#include <stdlib.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tests/test_util.h"

namespace tfprof {
namespace {

// --- Files and directories. -------------------------------------------------

// TensorFlow's test checkpoints (bundled in testdata/corpus).
std::string CorpusRoot() {
  const std::string index =
      testing::CorpusFile("tf-testdata/current/ckpt.index");
  return index.substr(
      0, index.size() - std::string("/tf-testdata/current/ckpt.index").size());
}

std::string CurrentCkpt() { return CorpusRoot() + "/tf-testdata/current/ckpt"; }
std::string OldCkpt() { return CorpusRoot() + "/tf-testdata/tf-1.2/ckpt"; }

// A fresh directory, removed with its contents at the end of the test.
class ScratchDir {
 public:
  ScratchDir() {
    const char* base = std::getenv("TEST_TMPDIR");
    std::string tmpl =
        std::string(base != nullptr ? base : "/tmp") + "/ckpt_test.XXXXXX";
    if (::mkdtemp(tmpl.data()) != nullptr) path_ = tmpl;
  }
  ~ScratchDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

void Spit(const std::string& path, const std::string& contents) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
}

std::string Message(const absl::Status& s) { return std::string(s.message()); }

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// Every error is one line.
void CheckOneLine(const absl::Status& s) {
  CHECK_FALSE(s.ok());
  CHECK_FALSE(Message(s).empty());
  CHECK_FALSE(Contains(Message(s), "\n"));
}

// --- An independent writer of tensor bundles, for the synthetic cases. ------

// Bit-at-a-time CRC-32C, deliberately unlike the reader's table version.
uint32_t SlowCrc32c(const std::string& s, uint32_t crc = 0) {
  crc = ~crc;
  for (unsigned char c : s) {
    crc ^= c;
    for (int k = 0; k < 8; ++k)
      crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1)));
  }
  return ~crc;
}
uint32_t Masked(uint32_t crc) {
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

std::string Varint(uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
  return out;
}

// An unsigned integer of `width` bytes.
std::string Int(uint64_t v, size_t width, bool big_endian = false) {
  std::string out(width, '\0');
  for (size_t i = 0; i < width; ++i) {
    out[big_endian ? width - 1 - i : i] = static_cast<char>(v & 0xff);
    v >>= 8;
  }
  return out;
}

std::string Ints(std::initializer_list<uint64_t> values, size_t width,
                 bool big_endian = false) {
  std::string out;
  for (uint64_t v : values) out += Int(v, width, big_endian);
  return out;
}

uint64_t BitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
uint64_t BitsOf(double d) {
  uint64_t u;
  std::memcpy(&u, &d, 8);
  return u;
}

// Protobuf fields.
std::string VarintField(int field, uint64_t v) {
  return Varint(static_cast<uint64_t>(field) << 3) + Varint(v);
}
std::string BytesField(int field, const std::string& s) {
  return Varint((static_cast<uint64_t>(field) << 3) | 2) + Varint(s.size()) + s;
}
std::string Fixed32Field(int field, uint32_t v) {
  return Varint((static_cast<uint64_t>(field) << 3) | 5) + Int(v, 4);
}

std::string ShapeProto(const std::vector<int64_t>& dims) {
  std::string out;
  for (int64_t d : dims) {
    out += BytesField(2, VarintField(1, static_cast<uint64_t>(d)));
  }
  return out;
}

std::string HeaderProto(int num_shards, bool big_endian = false,
                        int min_consumer = 0) {
  std::string version = VarintField(1, 1);
  if (min_consumer != 0) version += VarintField(2, min_consumer);
  std::string out = VarintField(1, num_shards);
  if (big_endian) out += VarintField(2, 1);
  return out + BytesField(3, version);
}

struct EntryFields {
  int dtype = 1;
  std::vector<int64_t> shape;
  int shard = 0;
  uint64_t offset = 0;
  uint64_t size = 0;
  uint32_t masked_crc = 0;
  bool sliced = false;
};

std::string EntryProto(const EntryFields& e) {
  std::string out = VarintField(1, static_cast<uint64_t>(e.dtype));
  out += BytesField(2, ShapeProto(e.shape));
  if (e.shard != 0) out += VarintField(3, static_cast<uint64_t>(e.shard));
  if (e.offset != 0) out += VarintField(4, e.offset);
  if (e.size != 0) out += VarintField(5, e.size);
  if (e.masked_crc != 0) out += Fixed32Field(6, e.masked_crc);
  if (e.sliced) out += BytesField(7, BytesField(1, VarintField(1, 0)));
  return out;
}

using KeyValues = std::vector<std::pair<std::string, std::string>>;

// One LevelDB block: prefix-compressed entries, a restart point every 2.
std::string Block(const KeyValues& kvs) {
  std::string out;
  std::vector<uint32_t> restarts;
  std::string last;
  for (size_t i = 0; i < kvs.size(); ++i) {
    const std::string& key = kvs[i].first;
    size_t shared = 0;
    if (i % 2 == 0) {
      restarts.push_back(static_cast<uint32_t>(out.size()));
    } else {
      while (shared < last.size() && shared < key.size() &&
             last[shared] == key[shared]) {
        ++shared;
      }
    }
    out += Varint(shared) + Varint(key.size() - shared) +
           Varint(kvs[i].second.size()) + key.substr(shared) + kvs[i].second;
    last = key;
  }
  if (restarts.empty()) restarts.push_back(0);
  for (uint32_t r : restarts) out += Int(r, 4);
  return out + Int(restarts.size(), 4);
}

// A LevelDB table from raw data blocks; index entry i is (index[i].first,
// the handle of blocks[index[i].second]).
std::string RawTable(const std::vector<std::string>& blocks,
                     const std::vector<std::pair<std::string, size_t>>& index,
                     char compression = 0) {
  std::string file;
  auto append_block = [&](const std::string& contents) {
    const std::string handle = Varint(file.size()) + Varint(contents.size());
    const std::string typed = contents + std::string(1, compression);
    file += typed + Int(Masked(SlowCrc32c(typed)), 4);
    return handle;
  };
  std::vector<std::string> handles;
  for (const std::string& b : blocks) handles.push_back(append_block(b));
  KeyValues index_kvs;
  for (const auto& [key, block] : index) {
    index_kvs.emplace_back(key, handles.at(block));
  }
  const std::string meta_handle = append_block(Block({}));
  const std::string index_handle = append_block(Block(index_kvs));
  std::string footer = meta_handle + index_handle;
  footer.resize(40, '\0');
  return file + footer + Int(0xdb4775248b80fb57ull, 8);
}

// A LevelDB table holding `kvs` in that order, `per_block` entries a block.
std::string Table(const KeyValues& kvs, size_t per_block = 3,
                  char compression = 0) {
  std::vector<std::string> blocks;
  std::vector<std::pair<std::string, size_t>> index;
  for (size_t i = 0; i < kvs.size(); i += per_block) {
    const size_t end = std::min(kvs.size(), i + per_block);
    const KeyValues chunk(kvs.begin() + static_cast<std::ptrdiff_t>(i),
                          kvs.begin() + static_cast<std::ptrdiff_t>(end));
    index.emplace_back(chunk.back().first, blocks.size());
    blocks.push_back(Block(chunk));
  }
  return RawTable(blocks, index, compression);
}

// Collects tensors into shards and writes PREFIX.index and the shards.
class BundleWriter {
 public:
  explicit BundleWriter(int num_shards = 1, bool big_endian = false)
      : big_endian_(big_endian), shards_(static_cast<size_t>(num_shards)) {}

  bool big_endian() const { return big_endian_; }

  void Add(const std::string& name, int dtype, std::vector<int64_t> shape,
           const std::string& bytes, int shard = 0) {
    AddRaw(name, dtype, std::move(shape), bytes, Masked(SlowCrc32c(bytes)),
           shard);
  }

  // TensorFlow's string layout: varint lengths, the masked crc of the
  // lengths taken as 4-byte integers, then the bytes. The entry's crc covers
  // those integers, the 4 checksum bytes and the bytes.
  void AddStrings(const std::string& name, std::vector<int64_t> shape,
                  const std::vector<std::string>& values) {
    std::string lengths, as_ints, strings;
    for (const std::string& v : values) {
      lengths += Varint(v.size());
      as_ints += Int(v.size(), 4, big_endian_);
      strings += v;
    }
    const std::string checksum =
        Int(Masked(SlowCrc32c(as_ints)), 4, big_endian_);
    const uint32_t crc = SlowCrc32c(as_ints + checksum + strings);
    AddRaw(name, 7, std::move(shape), lengths + checksum + strings, Masked(crc),
           0);
  }

  void AddRaw(const std::string& name, int dtype, std::vector<int64_t> shape,
              const std::string& bytes, uint32_t masked_crc, int shard) {
    EntryFields e;
    e.dtype = dtype;
    e.shape = std::move(shape);
    e.shard = shard;
    std::string& data = shards_[static_cast<size_t>(shard)];
    e.offset = data.size();
    e.size = bytes.size();
    e.masked_crc = masked_crc;
    data += bytes;
    AddEntry(name, EntryProto(e));
  }

  // Any value under any key (kept sorted unless `unsorted` at Write()).
  void AddEntry(const std::string& key, const std::string& value) {
    entries_[key] = value;
  }

  std::string IndexBytes(bool with_header = true, char compression = 0,
                         int min_consumer = 0) const {
    KeyValues kvs;
    if (with_header) {
      kvs.emplace_back("", HeaderProto(static_cast<int>(shards_.size()),
                                       big_endian_, min_consumer));
    }
    for (const auto& kv : entries_) kvs.push_back(kv);
    return Table(kvs, 3, compression);
  }

  void Write(const std::string& prefix) const {
    Spit(prefix + ".index", IndexBytes());
    WriteShards(prefix);
  }

  void WriteShards(const std::string& prefix) const {
    for (size_t i = 0; i < shards_.size(); ++i) {
      char name[64];
      std::snprintf(name, sizeof(name), ".data-%05zu-of-%05zu", i,
                    shards_.size());
      Spit(prefix + name, shards_[i]);
    }
  }

 private:
  bool big_endian_;
  std::vector<std::string> shards_;
  std::map<std::string, std::string> entries_;
};

// --- The tests. -------------------------------------------------------------

TEST_CASE("crc32c: standard check values, extension, masking") {
  CHECK(Crc32c("123456789", 9) == 0xE3069283u);
  // RFC 3720 (iSCSI) test vectors.
  const std::string zeros(32, '\0'), ones(32, '\xff');
  std::string ascending;
  for (int i = 0; i < 32; ++i) ascending.push_back(static_cast<char>(i));
  CHECK(Crc32c(zeros.data(), zeros.size()) == 0x8A9136AAu);
  CHECK(Crc32c(ones.data(), ones.size()) == 0x62A8AB43u);
  CHECK(Crc32c(ascending.data(), ascending.size()) == 0x46DD794Eu);
  CHECK(Crc32c("", 0) == 0u);
  CHECK(Crc32cExtend(Crc32c("1234", 4), "56789", 5) == 0xE3069283u);
  for (uint32_t c : {0u, 1u, 0xE3069283u, 0xffffffffu}) {
    CHECK(UnmaskCrc(MaskCrc(c)) == c);
    CHECK(MaskCrc(c) != c);
  }
}

TEST_CASE("TensorFlow's current test checkpoint: names, dtypes, shapes") {
  REQUIRE_FALSE(CorpusRoot().empty());
  auto ckpt = Checkpoint::Open(CurrentCkpt());
  REQUIRE(ckpt.ok());
  CHECK(ckpt->prefix() == CurrentCkpt());
  CHECK(ckpt->num_shards() == 1);
  CHECK(ckpt->names() == std::vector<std::string>{"DW", "DW2", "ScalarW"});
  for (const std::string& n : ckpt->names()) {
    CHECK(ckpt->Has(n));
    CHECK(*ckpt->Dtype(n) == 1);  // DT_FLOAT
  }
  CHECK_FALSE(ckpt->Has("dw"));
  CHECK_FALSE(ckpt->Has(""));
  CHECK(*ckpt->Shape("DW") == std::vector<int64_t>{3, 3, 3, 6});
  CHECK(*ckpt->Shape("DW2") == std::vector<int64_t>{2, 2, 6, 12});
  CHECK(ckpt->Shape("ScalarW")->empty());
}

TEST_CASE("TensorFlow's current test checkpoint: values") {
  auto ckpt = Checkpoint::Open(CurrentCkpt());
  REQUIRE(ckpt.ok());
  // Expected values were decoded independently with a Python script using
  // only `struct`: it walks the index table, decodes each BundleEntryProto
  // (DW: offset 0, size 648; DW2: offset 648, size 1152; ScalarW: offset
  // 1800, size 4), checks the masked crc32c, and unpacks '<f' floats from
  // ckpt.data-00000-of-00001; the literals are Python's repr() of them.
  auto dw = ckpt->Read("DW");
  REQUIRE(dw.ok());
  CHECK(dw->supported);
  CHECK(dw->dtype == 1);
  CHECK(dw->shape == std::vector<int64_t>{3, 3, 3, 6});
  CHECK(dw->values_int64.empty());
  CHECK(dw->values_str.empty());
  REQUIRE(dw->values_double.size() == 162);
  CHECK(dw->values_double[0] == -0.0005343154189176857);
  CHECK(dw->values_double[1] == -0.0008960202103480697);
  CHECK(dw->values_double[2] == -0.00041723946924321353);
  CHECK(dw->values_double[3] == 0.000414439506130293);
  CHECK(dw->values_double[161] == -0.00041782917105592787);

  auto dw2 = ckpt->Read("DW2");
  REQUIRE(dw2.ok());
  REQUIRE(dw2->values_double.size() == 288);
  CHECK(dw2->values_double[0] == -0.0006064770859666169);
  CHECK(dw2->values_double[1] == -0.0010577948996797204);
  CHECK(dw2->values_double[287] == -0.0006334479548968375);

  auto scalar = ckpt->Read("ScalarW");
  REQUIRE(scalar.ok());
  CHECK(scalar->shape.empty());
  REQUIRE(scalar->values_double.size() == 1);
  CHECK(scalar->values_double[0] == 0.0020255178678780794);
}

TEST_CASE("The prefix, the .index file and a data shard open the same") {
  for (const std::string& p : {CurrentCkpt(), CurrentCkpt() + ".index",
                               CurrentCkpt() + ".data-00000-of-00001"}) {
    INFO(p);
    auto ckpt = Checkpoint::Open(p);
    REQUIRE(ckpt.ok());
    CHECK(ckpt->prefix() == CurrentCkpt());
    CHECK(ckpt->names().size() == 3);
    CHECK(ckpt->Read("ScalarW").ok());
  }
}

TEST_CASE("TensorFlow 1.2's test checkpoint (also a V2 bundle)") {
  REQUIRE_FALSE(CorpusRoot().empty());
  auto ckpt = Checkpoint::Open(OldCkpt());
  REQUIRE(ckpt.ok());
  CHECK(ckpt->names() ==
        std::vector<std::string>{"conv2d/bias", "conv2d/kernel",
                                 "conv2d_1/bias", "conv2d_1/kernel"});
  const std::map<std::string, std::vector<int64_t>> shapes = {
      {"conv2d/bias", {5}},
      {"conv2d/kernel", {3, 3, 3, 5}},
      {"conv2d_1/bias", {5}},
      {"conv2d_1/kernel", {3, 3, 5, 5}}};
  for (const auto& [name, shape] : shapes) {
    INFO(name);
    CHECK(*ckpt->Dtype(name) == 1);
    CHECK(*ckpt->Shape(name) == shape);
    auto t = ckpt->Read(name);
    REQUIRE(t.ok());
    int64_t count = 1;
    for (int64_t d : shape) count *= d;
    CHECK(static_cast<int64_t>(t->values_double.size()) == count);
  }
  // Decoded independently as for the current checkpoint (Python `struct`).
  // The biases were saved at their initial value, zero.
  for (const char* bias : {"conv2d/bias", "conv2d_1/bias"}) {
    auto b = ckpt->Read(bias);
    REQUIRE(b.ok());
    CHECK(b->values_double == std::vector<double>(5, 0.0));
  }
  auto k = ckpt->Read("conv2d/kernel");
  REQUIRE(k.ok());
  CHECK(k->values_double[0] == -0.11313840746879578);
  CHECK(k->values_double[1] == 0.2614307403564453);
  CHECK(k->values_double[134] == 0.2495538592338562);
  auto k1 = ckpt->Read("conv2d_1/kernel");
  REQUIRE(k1.ok());
  CHECK(k1->values_double[0] == -0.0017051398754119873);
  CHECK(k1->values_double[224] == 0.049174219369888306);
}

TEST_CASE("Every decoded dtype, over several blocks and two shards") {
  ScratchDir dir;
  REQUIRE_FALSE(dir.path().empty());
  BundleWriter w(2);
  w.Add("f32", 1, {2}, Ints({BitsOf(1.5f), BitsOf(-0.25f)}, 4));
  w.Add("f64", 2, {1, 2}, Ints({BitsOf(3.25), BitsOf(-1e300)}, 8), 1);
  w.Add("i32", 3, {3},
        Ints({0, 0xffffffffu, 0x7fffffffu}, 4));  // 0, -1, INT32_MAX
  w.Add("u8", 4, {2}, Ints({0, 255}, 1));
  w.Add("i16", 5, {2}, Ints({0x8000, 300}, 2), 1);
  w.Add("i8", 6, {2}, Ints({0x80, 0x7f}, 1));
  w.Add("i64", 9, {2}, Ints({0x8000000000000000ull, 123456789012ull}, 8));
  w.Add("bool", 10, {3}, Ints({1, 0, 1}, 1));
  // bfloat16: 1.0, -0.5, 3.140625 (the top half of pi's float bits).
  w.Add("bf16", 14, {3}, Ints({0x3F80, 0xBF00, 0x4049}, 2));
  w.Add("u16", 17, {}, Ints({65535}, 2));
  // half: 1.0, -2.0, 65504 (largest), 2^-24 (smallest subnormal), inf.
  w.Add("half", 19, {5}, Ints({0x3C00, 0xC000, 0x7BFF, 0x0001, 0x7C00}, 2));
  w.Add("u32", 22, {1}, Ints({4000000000u}, 4));
  w.Add("u64", 23, {2}, Ints({7, 0xffffffffffffffffull}, 8));
  w.Add("empty", 1, {0, 4}, "");
  w.AddStrings("str", {2, 2},
               {"", "hello", std::string("a\0b", 3), std::string(300, 'x')});
  w.AddStrings("str_empty", {0}, {});
  w.Add("complex", 8, {1}, Ints({0, 0}, 4));  // DT_COMPLEX64: not decoded
  // A partitioned tensor: its entry lists slices; the slice data sits under
  // a key starting with a NUL byte, which is not a tensor name.
  EntryFields sliced;
  sliced.shape = {4};
  sliced.sliced = true;
  w.AddEntry("part", EntryProto(sliced));
  w.AddEntry(std::string("\0\x01part", 6), EntryProto(EntryFields()));
  const std::string prefix = dir.path() + "/all";
  w.Write(prefix);

  auto ckpt = Checkpoint::Open(prefix);
  REQUIRE(ckpt.ok());
  CHECK(ckpt->num_shards() == 2);
  CHECK(ckpt->names() == std::vector<std::string>{
                             "bf16", "bool", "complex", "empty", "f32", "f64",
                             "half", "i16", "i32", "i64", "i8", "part", "str",
                             "str_empty", "u16", "u32", "u64", "u8"});
  auto read = [&](const std::string& name) {
    INFO(name);
    auto t = ckpt->Read(name);
    if (!t.ok()) FAIL(Message(t.status()));
    CHECK(t->dtype == *ckpt->Dtype(name));
    CHECK(t->shape == *ckpt->Shape(name));
    return *t;
  };
  using D = std::vector<double>;
  using I = std::vector<int64_t>;
  CHECK(read("f32").values_double == D{1.5, -0.25});
  CHECK(read("f64").values_double == D{3.25, -1e300});
  CHECK(read("f64").shape == I{1, 2});
  CHECK(read("i32").values_int64 == I{0, -1, 2147483647});
  CHECK(read("u8").values_int64 == I{0, 255});
  CHECK(read("i16").values_int64 == I{-32768, 300});
  CHECK(read("i8").values_int64 == I{-128, 127});
  CHECK(read("i64").values_int64 ==
        I{std::numeric_limits<int64_t>::min(), 123456789012});
  CHECK(read("bool").values_int64 == I{1, 0, 1});
  CHECK(read("bf16").values_double == D{1.0, -0.5, 3.140625});
  CHECK(read("u16").values_int64 == I{65535});
  CHECK(read("u16").shape.empty());
  CHECK(read("half").values_double ==
        D{1.0, -2.0, 65504.0, std::ldexp(1.0, -24),
          std::numeric_limits<double>::infinity()});
  CHECK(read("u32").values_int64 == I{4000000000});
  CHECK(read("u64").values_int64 == I{7, -1});  // above INT64_MAX wraps
  CHECK(read("empty").values_double.empty());
  CHECK(read("empty").supported);
  const CheckpointTensor s = read("str");
  CHECK(s.values_str == std::vector<std::string>{"", "hello",
                                                 std::string("a\0b", 3),
                                                 std::string(300, 'x')});
  CHECK(s.values_double.empty());
  CHECK(read("str_empty").values_str.empty());
  const CheckpointTensor c = read("complex");
  CHECK_FALSE(c.supported);
  CHECK(c.dtype == 8);
  CHECK(c.shape == I{1});
  CHECK(c.values_double.empty());
  const CheckpointTensor part = read("part");
  CHECK_FALSE(part.supported);
  CHECK(part.shape == I{4});

  // The copy used by callers (Open() by value, then moved) still works.
  Checkpoint copy = *ckpt;
  CHECK(copy.Read("i8")->values_int64 == I{-128, 127});
}

TEST_CASE("Big-endian bundles are byte-swapped") {
  ScratchDir dir;
  BundleWriter w(1, /*big_endian=*/true);
  w.Add("f", 1, {2}, Ints({BitsOf(2.5f), BitsOf(-8.0f)}, 4, true));
  w.Add("i", 3, {2}, Ints({0xfffffffe, 77}, 4, true));
  w.Add("h", 19, {1}, Ints({0x3C00}, 2, true));
  w.AddStrings("s", {2}, {"ab", "cde"});
  const std::string prefix = dir.path() + "/be";
  w.Write(prefix);
  auto ckpt = Checkpoint::Open(prefix);
  REQUIRE(ckpt.ok());
  CHECK(ckpt->Read("f")->values_double == std::vector<double>{2.5, -8.0});
  CHECK(ckpt->Read("i")->values_int64 == std::vector<int64_t>{-2, 77});
  CHECK(ckpt->Read("h")->values_double == std::vector<double>{1.0});
  auto s = ckpt->Read("s");
  REQUIRE(s.ok());
  CHECK(s->values_str == std::vector<std::string>{"ab", "cde"});
}

TEST_CASE("Missing files and files that are not V2 checkpoints") {
  REQUIRE_FALSE(CorpusRoot().empty());
  ScratchDir dir;
  const std::string missing = dir.path() + "/nothing/ckpt";
  auto r = Checkpoint::Open(missing);
  REQUIRE_FALSE(r.ok());
  CheckOneLine(r.status());
  CHECK(r.status().code() == absl::StatusCode::kNotFound);
  CHECK(Message(r.status()) ==
        missing + ": not a TensorFlow V2 checkpoint (expected " + missing +
            ".index and " + missing + ".data-*)");

  // Not a checkpoint at all: the graph text next to the test checkpoint.
  const std::string graph = CorpusRoot() + "/tf-testdata/current/graph.pbtxt";
  r = Checkpoint::Open(graph);
  REQUIRE_FALSE(r.ok());
  CHECK(Contains(Message(r.status()),
                 graph + ": not a TensorFlow V2 checkpoint (expected " + graph +
                     ".index"));

  // A V1 checkpoint is one table file at the path itself, with no .index.
  BundleWriter v1;
  v1.AddEntry("", BytesField(1, VarintField(1, 1)));
  const std::string v1_path = dir.path() + "/model.ckpt-1000";
  Spit(v1_path, v1.IndexBytes(/*with_header=*/false));
  r = Checkpoint::Open(v1_path);
  REQUIRE_FALSE(r.ok());
  CHECK(Contains(Message(r.status()), "not a TensorFlow V2 checkpoint"));

  // A text file under the index's name: bad magic.
  Spit(dir.path() + "/text.index", std::string(100, 'x') + "\n");
  r = Checkpoint::Open(dir.path() + "/text");
  REQUIRE_FALSE(r.ok());
  CheckOneLine(r.status());
  CHECK(Contains(Message(r.status()), dir.path() + "/text.index"));
  CHECK(Contains(Message(r.status()), "bad magic number"));

  // A table without the bundle header (key "").
  BundleWriter headless;
  headless.Add("t", 1, {}, Ints({0}, 4));
  Spit(dir.path() + "/headless.index", headless.IndexBytes(false));
  headless.WriteShards(dir.path() + "/headless");
  r = Checkpoint::Open(dir.path() + "/headless");
  REQUIRE_FALSE(r.ok());
  CHECK(Contains(Message(r.status()), "no bundle header"));
  CHECK(Contains(Message(r.status()), "not a TensorFlow V2 checkpoint"));

  // The index without its data shard.
  Spit(dir.path() + "/nodata.index", Slurp(CurrentCkpt() + ".index"));
  r = Checkpoint::Open(dir.path() + "/nodata");
  REQUIRE_FALSE(r.ok());
  CheckOneLine(r.status());
  CHECK(Contains(Message(r.status()), "nodata.data-00000-of-00001 is missing"));

  // A directory is not an index.
  std::filesystem::create_directory(dir.path() + "/dir.index");
  CHECK_FALSE(Checkpoint::Open(dir.path() + "/dir").ok());

  // An unknown tensor.
  auto ckpt = Checkpoint::Open(CurrentCkpt());
  REQUIRE(ckpt.ok());
  for (const std::string& name : {std::string("nope"), std::string("a\nb")}) {
    auto t = ckpt->Read(name);
    REQUIRE_FALSE(t.ok());
    CheckOneLine(t.status());
    CHECK(t.status().code() == absl::StatusCode::kNotFound);
    CHECK_FALSE(ckpt->Dtype(name).ok());
    CHECK_FALSE(ckpt->Shape(name).ok());
  }
}

TEST_CASE("Truncated and byte-flipped copies of the index") {
  ScratchDir dir;
  const std::string index = Slurp(CurrentCkpt() + ".index");
  const std::string data = Slurp(CurrentCkpt() + ".data-00000-of-00001");
  REQUIRE(index.size() == 194);
  const std::string prefix = dir.path() + "/ckpt";
  Spit(prefix + ".data-00000-of-00001", data);

  // Every proper prefix of the file is rejected with a one-line message
  // naming the index.
  for (size_t cut = 0; cut < index.size(); ++cut) {
    INFO("cut at " << cut);
    Spit(prefix + ".index", index.substr(0, cut));
    auto r = Checkpoint::Open(prefix);
    REQUIRE_FALSE(r.ok());
    CheckOneLine(r.status());
    CHECK(Contains(Message(r.status()), prefix + ".index"));
  }
  Spit(prefix + ".index", index.substr(0, 20));
  CHECK(Contains(Message(Checkpoint::Open(prefix).status()), "truncated"));

  // Single-byte flips: the block checksums catch every flip inside the data
  // and index blocks; flips elsewhere (the unused metaindex block, footer
  // padding) may still load, and then must read correctly.
  for (size_t i = 0; i < index.size(); ++i) {
    for (int bit : {0, 7}) {
      INFO("flip bit " << bit << " of byte " << i);
      std::string bad = index;
      bad[i] = static_cast<char>(bad[i] ^ (1 << bit));
      Spit(prefix + ".index", bad);
      auto r = Checkpoint::Open(prefix);
      if (!r.ok()) {
        CheckOneLine(r.status());
        continue;
      }
      CHECK(r->names() == std::vector<std::string>{"DW", "DW2", "ScalarW"});
      for (const std::string& n : r->names()) CHECK(r->Read(n).ok());
    }
  }
  // The first data block holds the header and the entries (bytes 0..108).
  std::string bad = index;
  bad[30] ^= 0x10;
  Spit(prefix + ".index", bad);
  auto r = Checkpoint::Open(prefix);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == absl::StatusCode::kDataLoss);
  CHECK(Contains(Message(r.status()), "corrupt block at offset 0"));
}

TEST_CASE("Corrupt or short data shards") {
  ScratchDir dir;
  const std::string index = Slurp(CurrentCkpt() + ".index");
  const std::string data = Slurp(CurrentCkpt() + ".data-00000-of-00001");
  const std::string prefix = dir.path() + "/ckpt";
  const std::string shard = prefix + ".data-00000-of-00001";
  Spit(prefix + ".index", index);

  // One flipped bit in DW's bytes: DW fails its checksum, the rest read.
  std::string flipped = data;
  flipped[5] ^= 0x01;
  Spit(shard, flipped);
  auto ckpt = Checkpoint::Open(prefix);
  REQUIRE(ckpt.ok());
  auto dw = ckpt->Read("DW");
  REQUIRE_FALSE(dw.ok());
  CheckOneLine(dw.status());
  CHECK(dw.status().code() == absl::StatusCode::kDataLoss);
  CHECK(Contains(Message(dw.status()), "crc32c mismatch for tensor 'DW'"));
  CHECK(Contains(Message(dw.status()), shard));
  CHECK(ckpt->Read("DW2").ok());
  CHECK(ckpt->Read("ScalarW").ok());

  // Cut short: the tensors past the end are reported, not read.
  Spit(shard, data.substr(0, 1000));
  auto dw2 = ckpt->Read("DW2");
  REQUIRE_FALSE(dw2.ok());
  CHECK(Contains(Message(dw2.status()), "'DW2' at offset 648, size 1152"));
  CHECK(Contains(Message(dw2.status()), "beyond the end of the shard"));
  CHECK(ckpt->Read("DW").ok());

  // The shard removed after Open().
  std::filesystem::remove(shard);
  auto gone = ckpt->Read("DW");
  REQUIRE_FALSE(gone.ok());
  CHECK(Contains(Message(gone.status()), shard));
}

TEST_CASE("Hostile index contents give clear errors") {
  ScratchDir dir;
  int n = 0;
  // Writes `w`'s bundle under a fresh prefix and opens it.
  auto open = [&](const BundleWriter& w, const std::string& index) {
    const std::string prefix = dir.path() + "/b" + std::to_string(n++);
    Spit(prefix + ".index", index);
    w.WriteShards(prefix);
    return Checkpoint::Open(prefix);
  };
  auto open_error = [&](const BundleWriter& w, const std::string& index) {
    auto r = open(w, index);
    if (r.ok()) {
      FAIL("opened");
      return std::string();
    }
    CheckOneLine(r.status());
    return Message(r.status());
  };
  auto entry_error = [&](const EntryFields& e) {
    BundleWriter w;
    w.AddEntry("t", EntryProto(e));
    return open_error(w, w.IndexBytes());
  };
  auto read_error = [&](const BundleWriter& w) {
    auto r = open(w, w.IndexBytes());
    if (!r.ok()) {
      FAIL(Message(r.status()));
      return std::string();
    }
    auto t = r->Read(r->names().at(0));
    if (t.ok()) {
      FAIL("read");
      return std::string();
    }
    CheckOneLine(t.status());
    return Message(t.status());
  };

  SECTION("snappy-compressed blocks") {
    BundleWriter w;
    w.Add("t", 1, {}, Ints({0}, 4));
    auto r = open(w, w.IndexBytes(true, /*compression=*/1));
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == absl::StatusCode::kUnimplemented);
    CHECK(Contains(Message(r.status()),
                   ".index: snappy-compressed checkpoint index is not "
                   "supported"));
    CHECK(Contains(open_error(w, w.IndexBytes(true, 7)),
                   "unknown block compression type 7"));
  }
  SECTION("a newer format version") {
    BundleWriter w;
    CHECK(Contains(open_error(w, w.IndexBytes(true, 0, /*min_consumer=*/2)),
                   "min_consumer 2"));
  }
  SECTION("bad shard counts and shard ids") {
    BundleWriter w;
    w.AddEntry("", HeaderProto(0));
    CHECK(Contains(open_error(w, w.IndexBytes(false)), "0 data shards"));
    w.AddEntry("", HeaderProto(1000000));
    CHECK(Contains(open_error(w, w.IndexBytes(false)), "1000000 data shards"));
    w.AddEntry("", BytesField(1, "x"));  // wrong wire type
    CHECK(Contains(open_error(w, w.IndexBytes(false)), "malformed bundle"));
    EntryFields e;
    e.shard = 3;
    CHECK(Contains(entry_error(e), "'t' is in shard 3 of a bundle with 1"));
  }
  SECTION("bad entries") {
    EntryFields e;
    e.shape = {-1};
    CHECK(Contains(entry_error(e), "'t': shape has a dimension of -1"));
    e.shape = {1 << 30, 1 << 30, 1 << 30};
    CHECK(Contains(entry_error(e), "'t' has too many elements"));
    e.shape = std::vector<int64_t>(300, 1);
    CHECK(Contains(entry_error(e), "too many dimensions"));
    e.shape = {};
    e.dtype = -1;
    CHECK(Contains(entry_error(e), "bad dtype in the entry for tensor 't'"));
    BundleWriter w;
    w.AddEntry("t", EntryProto(EntryFields()) + "\x08");  // cut varint
    CHECK(Contains(open_error(w, w.IndexBytes()), "'t'"));
    w.AddEntry("t", std::string("\x0b\x0c", 2));  // a group
    CHECK(Contains(open_error(w, w.IndexBytes()), "'t'"));
    w.AddEntry("t", std::string("\x00\x01", 2));  // field number 0
    CHECK(Contains(open_error(w, w.IndexBytes()), "'t'"));
    w.AddEntry("t", VarintField(2, 1));  // shape as a varint
    CHECK(Contains(open_error(w, w.IndexBytes()), "bad shape"));
    w.AddEntry("t", BytesField(2, BytesField(2, "\x08")));  // cut dim
    CHECK(Contains(open_error(w, w.IndexBytes()), "malformed shape"));
    w.AddEntry("t", BytesField(2, VarintField(3, 1)));  // unknown rank
    CHECK(Contains(open_error(w, w.IndexBytes()), "unknown rank"));
    w.AddEntry("t", BytesField(9, std::string(2, 'z')) +
                        EntryProto(EntryFields()));  // unknown field: fine
    CHECK(open(w, w.IndexBytes()).ok());
  }
  SECTION("keys out of order") {
    KeyValues kvs = {{"", HeaderProto(1)},
                     {"b", EntryProto(EntryFields())},
                     {"a", EntryProto(EntryFields())}};
    CHECK(Contains(open_error(BundleWriter(), Table(kvs)),
                   "keys out of order at 'a'"));
    kvs[2].first = "b";  // a duplicate
    CHECK(Contains(open_error(BundleWriter(), Table(kvs)), "out of order"));
  }
  SECTION("bad block structure") {
    // A data block whose entry claims more bytes than the block has.
    std::string block = Block({{"", HeaderProto(1)}});
    block[2] = 0x7f;  // the value's length
    CHECK(Contains(open_error(BundleWriter(), RawTable({block}, {{"", 0}})),
                   "past the end of its block"));
    // More restart points than the block can hold; one outside the block.
    block = Block({{"", HeaderProto(1)}});
    std::string restarts = block;
    restarts.replace(restarts.size() - 4, 4, Int(1000, 4));
    CHECK(Contains(open_error(BundleWriter(), RawTable({restarts}, {{"", 0}})),
                   "1000 restart points"));
    restarts = block;
    restarts.replace(restarts.size() - 8, 4, Int(500, 4));
    CHECK(Contains(open_error(BundleWriter(), RawTable({restarts}, {{"", 0}})),
                   "restart point outside its block"));
    CHECK(Contains(open_error(BundleWriter(), RawTable({"ab"}, {{"", 0}})),
                   "block shorter than 4 bytes"));
    // A malformed block handle in the index block.
    std::string bad_handle = Block({{"", "\xff"}});
    const std::string typed = bad_handle + std::string(1, '\0');
    std::string file = typed + Int(Masked(SlowCrc32c(typed)), 4);
    std::string footer =
        Varint(0) + Varint(0) + Varint(0) + Varint(bad_handle.size());
    footer.resize(40, '\0');
    file += footer + Int(0xdb4775248b80fb57ull, 8);
    CHECK(Contains(open_error(BundleWriter(), file), "malformed block handle"));
    // Block handles far beyond the end of the file.
    std::string good = BundleWriter().IndexBytes();
    std::string far = good;
    const std::string huge_handle = Varint(1ull << 62) + Varint(1ull << 62);
    far.replace(far.size() - 48, huge_handle.size() * 2,
                huge_handle + huge_handle);
    CHECK(Contains(open_error(BundleWriter(), far), "runs past the end"));
  }
  SECTION("work stays proportional to the file's size") {
    // One 4 KB block referenced 1000 times by the index block.
    std::string many_restarts(4000, '\0');
    many_restarts += Int(1000, 4);  // 1000 restart points, all at 0
    std::vector<std::pair<std::string, size_t>> index = {{"", 0}};
    std::vector<std::string> blocks = {Block({{"", HeaderProto(1)}}),
                                       many_restarts};
    for (int i = 0; i < 1000; ++i) index.emplace_back("x", 1);
    CHECK(Contains(open_error(BundleWriter(), RawTable(blocks, index)),
                   "referenced over and over"));
    // Keys that each extend the previous one by a byte: 4 bytes of file,
    // ever longer names (quadratic in total).
    std::string grow =
        Varint(0) + Varint(0) + Varint(HeaderProto(1).size()) + HeaderProto(1);
    for (size_t len = 1; len <= 4000; ++len) {
      grow += Varint(len - 1) + Varint(1) + Varint(0) + "k";
    }
    grow += Int(0, 4) + Int(1, 4);
    CHECK(Contains(open_error(BundleWriter(), RawTable({grow}, {{"k", 0}})),
                   "implausibly long"));
    // The same shape with 300 keys is fine: names up to 300 bytes.
    std::string few =
        Varint(0) + Varint(0) + Varint(HeaderProto(1).size()) + HeaderProto(1);
    for (size_t len = 1; len <= 300; ++len) {
      few += Varint(len - 1) + Varint(1) + Varint(0) + "k";
    }
    few += Int(0, 4) + Int(1, 4);
    auto r = open(BundleWriter(), RawTable({few}, {{"k", 0}}));
    REQUIRE(r.ok());
    CHECK(r->names().size() == 300);
    CHECK(r->names().back() == std::string(300, 'k'));
    CHECK(r->Read(r->names().back())->values_double.empty());
  }
  SECTION("data sizes and offsets") {
    BundleWriter w;
    w.AddRaw("t", 1, {4}, Ints({0, 0}, 4), Masked(SlowCrc32c(Ints({0, 0}, 4))),
             0);
    CHECK(Contains(read_error(w), "has 8 bytes, but its shape holds 4"));

    BundleWriter far;
    EntryFields e;
    e.shape = {2};
    e.offset = 1ull << 40;
    e.size = 8;
    far.AddEntry("t", EntryProto(e));
    far.Add("u", 1, {}, Ints({0}, 4));  // the shard exists, 4 bytes
    CHECK(Contains(read_error(far), "beyond the end of the shard"));
    e.offset = 0;
    e.size = 1ull << 62;
    far.AddEntry("t", EntryProto(e));
    CHECK(Contains(read_error(far), "beyond the end of the shard"));
  }
  SECTION("corrupt string tensors") {
    BundleWriter good;
    good.AddStrings("s", {2}, {"ab", "c"});
    auto ok = open(good, good.IndexBytes());
    REQUIRE(ok.ok());
    REQUIRE(ok->Read("s").ok());
    const std::string prefix = ok->prefix();
    const std::string shard = prefix + ".data-00000-of-00001";
    const std::string data = Slurp(shard);  // 02 01 | crc | a b c
    REQUIRE(data.size() == 2 + 4 + 3);
    for (size_t i = 0; i < data.size(); ++i) {
      std::string bad = data;
      bad[i] ^= 0x04;
      Spit(shard, bad);
      auto t = ok->Read("s");
      REQUIRE_FALSE(t.ok());
      CheckOneLine(t.status());
      CHECK(Contains(Message(t.status()), "string tensor 's'"));
      CHECK(Contains(Message(t.status()),
                     i < 6 ? "crc32c mismatch" : "data is corrupt"));
    }
    // A length running past the end, with consistent checksums.
    BundleWriter w;
    const std::string lengths = Varint(200);
    const std::string as_int = Int(200, 4);
    const std::string checksum = Int(Masked(SlowCrc32c(as_int)), 4);
    const std::string bytes = lengths + checksum + "xyz";
    w.AddRaw("s", 7, {1}, bytes, Masked(SlowCrc32c(as_int + checksum + "xyz")),
             0);
    CHECK(Contains(read_error(w), "runs past the end"));
    // More elements than bytes.
    BundleWriter many;
    many.AddRaw("s", 7, {1000}, "abc", 0, 0);
    CHECK(Contains(read_error(many), "1000 elements cannot fit in 3 bytes"));
  }
}

}  // namespace
}  // namespace tfprof
