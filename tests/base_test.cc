// Unit tests of the base utilities that the rest only reach end to end:
// device names, the protobuf wire reader and the JSON writer.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "profiler/base/big_array.h"
#include "profiler/base/device.h"
#include "profiler/base/json_writer.h"
#include "profiler/base/parallel.h"
#include "profiler/base/protos.h"
#include "profiler/base/wire.h"
#include "re2/re2.h"
#include "tests/json_parse.h"

namespace tfprof {
namespace {

// Arrays around the 2 MiB line: from it on, whole 2 MiB pages of their own,
// aligned; below it, the heap; every byte writable, and growth keeps the
// contents.
TEST_CASE("BigVector arrays on pages of their own") {
  for (size_t bytes : {kBigArrayBytes - 1, kBigArrayBytes, kBigArrayBytes + 1,
                       5 * kBigArrayBytes + 3}) {
    INFO(bytes);
    BigVector<char> v(bytes, 'x');
    v.back() = 'y';
    CHECK(v.front() == 'x');
    CHECK(v.back() == 'y');
    const bool own_pages = bytes >= kBigArrayBytes;
#if defined(__linux__)
    CHECK((reinterpret_cast<uintptr_t>(v.data()) % kBigArrayBytes == 0) ==
          own_pages);
#endif
    v.push_back('z');  // (grows into a new array)
    CHECK(v[bytes - 1] == 'y');
    CHECK(v.back() == 'z');
    BigVector<char> w;
    w.swap(v);
    CHECK(w.size() == bytes + 1);
    CHECK(v.empty());
  }
}

TEST_CASE("Devices are classified like tfprof") {
  // tfprof's rules: accelerator time on ".../stream:all", CPU time on
  // canonical placements ".../(device:)?(cpu|gpu):N".
  CHECK(IsStreamAllDevice("/device:gpu:0/stream:all"));
  CHECK_FALSE(IsStreamAllDevice("/device:gpu:0/stream:7"));
  CHECK(IsCanonicalDevice("/job:localhost/replica:0/task:0/device:gpu:0"));
  CHECK(IsCanonicalDevice("/job:worker/replica:0/task:0/cpu:0"));
  CHECK(IsCanonicalDevice("/gpu:0"));
  CHECK_FALSE(IsCanonicalDevice("/device:gpu:0/memcpy"));
  CHECK_FALSE(IsCanonicalDevice("/host:cpu"));
  CHECK_FALSE(IsCanonicalDevice("/device:gpu:0/stream:all"));
  // Case does not matter (RunMetadata writes "GPU", the model lower-cases).
  CHECK(IsCanonicalDevice("/job:localhost/replica:0/task:0/device:GPU:0"));
  CHECK(IsStreamAllDevice("/device:GPU:0/stream:all"));
}

TEST_CASE("Canonical devices are tfprof's regular expression") {
  // The rule as TensorFlow states it, matched on the lower-cased name.
  const RE2 canonical(".*/(device:gpu|gpu|device:cpu|cpu):\\d+");
  const std::vector<std::string> names = {
      "/job:localhost/replica:0/task:0/device:CPU:0",
      "/job:localhost/replica:0/task:0/device:GPU:12",
      "/device:gpu:0/stream:all",
      "/device:gpu:0/stream:14",
      "/device:gpu:0/memcpy",
      "/host:CPU",
      "/cpu:",
      "cpu:0",
      "/cpu:0x",
      "/xcpu:0",
      "/device:tpu:0",
      "/device:cpu:0/cpu:1",
      "/job:w/task:0/gpu:3",
      "",
      ":0",
      "/:0",
      "/device:gpu:",
      "/job:localhost/replica:0/task:0/device:XLA_GPU:0",
  };
  for (const std::string& name : names) {
    INFO(name);
    std::string lower = name;
    for (char& c : lower) c = static_cast<char>(std::tolower(c));
    CHECK(IsCanonicalDevice(name) == RE2::FullMatch(lower, canonical));
  }
}

TEST_CASE("GPU lanes and their owners") {
  CHECK(KindOfDevice("/device:gpu:0/stream:all") == DeviceKind::kStreamAll);
  CHECK(KindOfDevice("/device:GPU:0/stream:7") == DeviceKind::kStream);
  CHECK(KindOfDevice("/device:gpu:0/memcpy") == DeviceKind::kMemcpy);
  CHECK(KindOfDevice("/job:a/device:gpu:1") == DeviceKind::kPlacement);
  CHECK(KindOfDevice("python3 (tid 7)") == DeviceKind::kOther);
  CHECK(LaneOwner("/device:GPU:0/stream:7") == "/device:GPU:0");
  CHECK(LaneOwner("/device:gpu:0/stream:all") == "/device:gpu:0");
  CHECK(LaneOwner("/device:gpu:1/memcpy") == "/device:gpu:1");
  CHECK(LaneOwner("/device:gpu:1") == "/device:gpu:1");
  CHECK(IsPlacedOnAccelerator("/device:GPU:0"));
  CHECK_FALSE(IsPlacedOnAccelerator("/device:cpu:0"));
  CHECK(IsPlacedOnCpu("/device:CPU:0"));
  CHECK(HostDeviceOf("/job:w/replica:0/task:0/device:gpu:12") ==
        "/job:w/replica:0/task:0/device:cpu:0");
  CHECK(HostDeviceOf("/job:w/device:cpu:3") == "/job:w/device:cpu:3");
  CHECK(HostDeviceOf("/gpu:") == "/gpu:");
}

// Wire bytes written by hand, as the protobuf encoding defines them.
std::string Varint(uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
  return out;
}
std::string Tag(uint32_t field, int wire_type) {
  return Varint((uint64_t{field} << 3) | static_cast<uint32_t>(wire_type));
}

TEST_CASE("The wire reader decodes every wire type") {
  std::string msg = Tag(1, wire::kVarint) + Varint(300);
  msg += Tag(2, wire::kBytes) + Varint(5) + "hello";
  msg += Tag(3, wire::kFixed64) +
         std::string("\x01\x02\x03\x04\x05\x06\x07\x08", 8);
  msg += Tag(4, wire::kFixed32) + std::string("\x78\x56\x34\x12", 4);
  msg += Tag(5, wire::kVarint) + Varint(static_cast<uint64_t>(-2));
  std::string packed = Varint(1) + Varint(150) + Varint(3);
  msg += Tag(6, wire::kBytes) + Varint(packed.size()) + packed;
  msg += Tag(6, wire::kVarint) + Varint(7);  // unpacked element
  msg += Tag(7, wire::kStartGroup) + Tag(1, wire::kVarint) + Varint(9) +
         Tag(7, wire::kEndGroup);
  msg += Tag(8, wire::kVarint) + Varint(1);

  wire::Reader r(msg);
  uint32_t field = 0;
  int wt = 0;
  std::vector<int64_t> repeated;
  while (r.Next(&field, &wt)) {
    switch (field) {
      case 1:
        CHECK(r.Int64() == 300);
        break;
      case 2:
        CHECK(r.Bytes() == "hello");
        break;
      case 3:
        CHECK(r.Fixed64() == 0x0807060504030201ull);
        break;
      case 4:
        CHECK(r.Fixed32() == 0x12345678u);
        break;
      case 5:
        CHECK(r.Int64() == -2);
        break;
      case 6:
        r.RepeatedInt64(wt, [&](int64_t v) { repeated.push_back(v); });
        break;
      case 8:
        CHECK(r.Bool());
        break;
      default:
        CHECK(field == 7);
        r.Skip(wt);
    }
  }
  CHECK(r.ok());
  CHECK(field == 8);
  CHECK(repeated == std::vector<int64_t>{1, 150, 3, 7});
}

// Reads the first field's tag of `msg`, then its payload with `read`;
// whether the reader has failed afterwards. (The reader keeps a view of
// `msg`, which outlives it here.)
template <typename Read>
bool FailsReading(const std::string& msg, Read read) {
  wire::Reader r(msg);
  uint32_t field = 0;
  int wt = 0;
  if (!r.Next(&field, &wt)) return !r.ok();
  read(r, wt);
  return !r.ok();
}

TEST_CASE("The wire reader stops on malformed input, never past the end") {
  const auto bytes = [](wire::Reader& r, int) { r.Bytes(); };
  const auto varint = [](wire::Reader& r, int) { r.Int64(); };
  const auto fixed64 = [](wire::Reader& r, int) { r.Fixed64(); };
  const auto skip = [](wire::Reader& r, int wt) { r.Skip(wt); };
  // A length beyond the end.
  CHECK(FailsReading(Tag(2, wire::kBytes) + Varint(50) + "short", bytes));
  // A truncated varint, and one of more than ten bytes.
  CHECK(FailsReading(std::string("\x08\xff\xff", 3), varint));
  CHECK(FailsReading(Tag(1, 0) + std::string(11, '\xff') + "\x01", varint));
  // Field number zero; wire types 6 and 7 do not exist.
  CHECK(FailsReading(Varint(0) + Varint(1), varint));
  CHECK(FailsReading(Tag(1, 6) + "x", skip));
  CHECK(FailsReading(Tag(1, 7) + "x", skip));
  // A truncated fixed64, and a group that is never closed.
  CHECK(FailsReading(Tag(1, wire::kFixed64) + "1234", fixed64));
  CHECK(FailsReading(Tag(1, wire::kStartGroup) + Tag(2, wire::kVarint) + "\x01",
                     skip));
  // The same messages whole are read without failing.
  CHECK_FALSE(FailsReading(Tag(2, wire::kBytes) + Varint(5) + "short", bytes));
  CHECK_FALSE(FailsReading(Tag(1, wire::kFixed64) + "12345678", fixed64));
  CHECK_FALSE(FailsReading(Tag(1, wire::kStartGroup) + Tag(2, wire::kVarint) +
                               "\x01" + Tag(1, wire::kEndGroup),
                           skip));
  // After a failure the reader is done and hands out nothing.
  const std::string msg = Tag(2, wire::kBytes) + Varint(50) + "short";
  wire::Reader r(msg);
  uint32_t field = 0;
  int wt = 0;
  REQUIRE(r.Next(&field, &wt));
  CHECK(r.Bytes().empty());
  CHECK(r.done());
  CHECK(r.remaining() == 0);
  CHECK_FALSE(r.Next(&field, &wt));
}

// A varint read a byte at a time, as the format defines it: the value, the
// bytes it took, or 0 if it is cut off or longer than ten bytes.
size_t ReferenceVarint(const std::string& s, size_t at, uint64_t* v) {
  uint64_t result = 0;
  for (size_t i = 0; i < 10 && at + i < s.size(); ++i) {
    const uint8_t b = static_cast<uint8_t>(s[at + i]);
    result |= static_cast<uint64_t>(b & 0x7f) << (7 * i);
    if ((b & 0x80) == 0) {
      *v = result;
      return i + 1;
    }
  }
  return 0;
}

TEST_CASE("Varints of every length read alike wherever they end") {
  // Values of one to ten bytes, each at the end of the input and with
  // bytes after it (so that eight at once may be read), after a prefix of
  // every length up to 8; and runs of continuation bytes cut off anywhere.
  std::vector<uint64_t> values = {0, 1, 127, 128, 300, ~uint64_t{0}};
  for (int bits = 7; bits < 64; bits += 7) {
    values.push_back((uint64_t{1} << bits) - 1);
    values.push_back(uint64_t{1} << bits);
    values.push_back((uint64_t{1} << bits) +
                     0x5a5a5a5a5a5a5a5aULL % (uint64_t{1} << bits));
  }
  std::vector<std::string> inputs;
  for (uint64_t v : values) {
    for (size_t prefix = 0; prefix <= 8; ++prefix) {
      const std::string head(prefix, '\x01');
      inputs.push_back(head + Varint(v));
      inputs.push_back(head + Varint(v) + std::string(9, '\xff'));
    }
  }
  for (size_t n = 1; n <= 12; ++n) {
    inputs.push_back(std::string(n, '\x80'));
    inputs.push_back(std::string(n, '\xff') + "\x01" + std::string(8, '\x80'));
  }
  for (const std::string& in : inputs) {
    for (size_t at = 0; at < in.size(); ++at) {
      INFO("input of " << in.size() << " bytes, at " << at);
      uint64_t want = 0;
      const size_t took = ReferenceVarint(in, at, &want);
      wire::Reader r(reinterpret_cast<const uint8_t*>(in.data()) + at,
                     reinterpret_cast<const uint8_t*>(in.data()) + in.size());
      uint64_t got = 0;
      const bool ok = r.Varint(&got);
      REQUIRE(ok == (took > 0));
      if (!ok) continue;
      CHECK(got == want);
      CHECK(r.pos() == reinterpret_cast<const uint8_t*>(in.data()) + at + took);
    }
  }
}

TEST_CASE("The JSON writer writes what a strict parser reads back") {
  Json doc = Json::Object();
  doc["name"] = std::string("quote\" back\\ nl\n tab\t ctl\x01 utf8 \xc3\xa9");
  doc["int"] = int64_t{-9007199254740993};
  doc["double"] = 0.25;
  doc["yes"] = true;
  doc["none"] = Json();
  Json list = Json::Array();
  list.Append(1);
  list.Append(Json::Object());
  list.Append(Json::Array());
  doc["list"] = std::move(list);

  for (const std::string& text : {doc.Write(), doc.WritePretty()}) {
    testing::JsonValue v;
    std::string error;
    REQUIRE(testing::ParseJson(text, &v, &error));
    CHECK(v.at("name").string ==
          "quote\" back\\ nl\n tab\t ctl\x01 utf8 \xc3\xa9");
    CHECK(v.at("double").number == 0.25);
    CHECK(v.at("yes").boolean);
    CHECK(v.at("none").kind == testing::JsonValue::kNull);
    REQUIRE(v.at("list").array.size() == 3);
    CHECK(v.at("list").array[0].number == 1);
    CHECK(v.at("list").array[1].kind == testing::JsonValue::kObject);
  }
  // Integers are written exactly (no double rounding).
  CHECK(doc.Write().find("-9007199254740993") != std::string::npos);
  // Write() sorts keys, WritePretty() keeps insertion order.
  const std::string compact = doc.Write();
  CHECK(compact.find("\"double\"") < compact.find("\"name\""));
  const std::string pretty = doc.WritePretty();
  CHECK(pretty.find("\"name\"") < pretty.find("\"double\""));
  CHECK(JsonQuote("a\"b") == "\"a\\\"b\"");
}

}  // namespace
}  // namespace tfprof

namespace tfprof {
namespace {

TEST_CASE("ParallelSort sorts like std::sort, in halves on large inputs") {
  std::mt19937 rng(7);
  for (size_t n : {size_t{0}, size_t{1}, size_t{1000}, kParallelMinItems + 1,
                   3 * kParallelMinItems}) {
    std::vector<std::string> v(n);
    for (std::string& s : v) s = std::to_string(rng() % 100000);
    std::vector<std::string> expected = v;
    std::sort(expected.begin(), expected.end());
    ParallelSort(v.begin(), v.end(), std::less<std::string>());
    CHECK(v == expected);
  }
}

TEST_CASE("RunBoth runs both functions, on two threads or one") {
  for (bool parallel : {false, true}) {
    int a = 0, b = 0;
    RunBoth(
        parallel, [&] { a = 1; }, [&] { b = 2; });
    CHECK(a == 1);
    CHECK(b == 2);
  }
}

// Maps come out in key order whatever order they were filled in (protobuf's
// own map order varies from run to run).
TEST_CASE("DeterministicBytes writes maps in key order") {
  tfpb::ProfileProto p;
  for (int64_t k = 60; k >= 1; --k) {
    (*p.mutable_id_to_string())[k * 7919 % 1000] = "s" + std::to_string(k);
  }
  const std::string bytes = DeterministicBytes(p);
  wire::Reader r(bytes);
  uint32_t field;
  int w;
  std::vector<int64_t> keys;
  while (r.Next(&field, &w)) {
    REQUIRE(field == 4);  // id_to_string
    wire::Reader entry = r.Sub();
    uint32_t f;
    int ew;
    while (entry.Next(&f, &ew)) {
      if (f == 1) {
        keys.push_back(entry.Int64());
      } else {
        entry.Skip(ew);
      }
    }
  }
  REQUIRE(r.ok());
  CHECK(keys.size() == 60);
  CHECK(std::is_sorted(keys.begin(), keys.end()));
  tfpb::ProfileProto back;
  REQUIRE(back.ParseFromString(bytes));
  CHECK(back.id_to_string().size() == 60);
  CHECK(DeterministicBytes(back) == bytes);
}

}  // namespace
}  // namespace tfprof
