// Trace import (profiler/importers/trace_import.h) across formats: format
// detection, refused inputs, hostile and malformed files, missing files.
// Each format's own mapping is tested in its room (tf_timeline_test,
// kineto_test, xspace_test, xspace_xla_test).
#include "profiler/importers/trace_import.h"

#include <simdjson.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cctype>
#include <cmath>
#include <cstring>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "google/protobuf/text_format.h"
#include "profiler/model/model.h"
#include "profiler/views/views.h"
#include "proto/xplane.pb.h"
#include "re2/re2.h"
#include "tests/test_util.h"
#include "tests/trace_test_util.h"

namespace tfprof {
namespace {

using namespace trace_test;  // NOLINT(build/namespaces): the shared helpers

// --- Format detection and errors -----------------------------------------

TEST_CASE("JSON traces are indexed by the fastest kernel this CPU runs") {
  // simdjson lists its kernels best first; the one it chose at run time must
  // be the first this CPU supports (never one it does not: no illegal
  // instruction on an older CPU).
  std::string best;
  for (const simdjson::implementation* impl :
       simdjson::get_available_implementations()) {
    if (impl->supported_by_runtime_system()) {
      best = impl->name();
      break;
    }
  }
  INFO("chosen " << JsonKernelName() << ", best supported " << best);
  CHECK(JsonKernelName() == best);
  CHECK(simdjson::get_active_implementation()->supported_by_runtime_system());
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx2")) CHECK(JsonKernelName() != "fallback");
#endif
}

TEST_CASE("Formats are detected from the content") {
  struct Case {
    const char* rel;
    TraceFormat format;
  };
  for (const Case& c : {Case{kTfTimelines[3], TraceFormat::kTfTimeline},
                        Case{kKinetoTraces[1], TraceFormat::kKineto},
                        Case{kXSpaces[0], TraceFormat::kXSpace}}) {
    INFO(c.rel);
    absl::StatusOr<TraceFormat> f =
        DetectTraceFormat(c.rel, ReadTrace(Corpus(c.rel)));
    REQUIRE(f.ok());
    CHECK(*f == c.format);
  }
}

TEST_CASE("Traces of other kinds are refused with the expected formats") {
  for (const char* rel :
       {"aoberai-chess-engine/train/plugins/profile/2021_06_16_00_30_02/"
        "aoberai.trace.json.gz",
        "yaroslavvb-stuff/dynamic_stitch_gpu_profile.pbtxt",
        "tensorflow-profiler-demo/GPU-input-bound/localhost.overview_page.pb",
        "aoberai-chess-engine/train/plugins/profile/2021_06_16_00_30_02/"
        "aoberai.memory_profile.json.gz"}) {
    if (!testing::HaveCorpusFile(rel)) continue;
    INFO(rel);
    absl::StatusOr<ImportedTrace> t = ImportTrace({Corpus(rel)});
    REQUIRE_FALSE(t.ok());
    const std::string msg(t.status().message());
    CHECK(msg.find(rel) != std::string::npos);
    // xprof's analyses point to the capture they were drawn from.
    const bool analysis = absl::EndsWith(rel, ".overview_page.pb");
    CHECK(msg.find(analysis ? "load the capture's <host>.xplane.pb"
                            : "expected") != std::string::npos);
    CHECK(msg.find('\n') == std::string::npos);
    // xprof's trace viewer file points to the capture it was drawn from.
    const bool export_hint =
        msg.find(".xplane.pb beside it") != std::string::npos;
    CHECK(export_hint == (absl::EndsWith(rel, ".trace.json.gz") || analysis));
  }
}

// An XSpace cut short says so, whether or not its name says XSpace.
TEST_CASE("A truncated XSpace is named as such") {
  const std::string xs = testing::ReadFile(Corpus(kXSpaces[0]));
  const std::string cut = xs.substr(0, xs.size() / 3);
  for (const char* name : {"cut.xplane.pb", "cut.pb"}) {
    INFO(name);
    absl::StatusOr<ImportedTrace> t = ImportTraceContents({name}, {cut});
    REQUIRE_FALSE(t.ok());
    CHECK(std::string(t.status().message()).find("truncated or corrupt") !=
          std::string::npos);
  }
  absl::StatusOr<ImportedTrace> t = ImportTraceContents({"cut.bin"}, {cut});
  REQUIRE_FALSE(t.ok());
  CHECK(std::string(t.status().message()).find("truncated") ==
        std::string::npos);
}

TEST_CASE("All files of one import must have one format") {
  absl::StatusOr<ImportedTrace> t =
      ImportTrace({Corpus(kTfTimelines[3]), Corpus(kKinetoTraces[2])});
  REQUIRE_FALSE(t.ok());
  CHECK(std::string(t.status().message()).find("one format") !=
        std::string::npos);
}

TEST_CASE("Hostile inputs fail cleanly or import what is valid") {
  const std::vector<std::pair<std::string, bool>> cases = {
      // contents, should import
      {"", false},
      {"   ", false},
      {"{", false},
      {"[", false},
      {"{\"traceEvents\": [", false},
      {"{\"traceEvents\": 5}", false},
      {"{\"traceEvents\": []}", false},
      {"[]", false},
      {"null", false},
      {"\x1f\x8b\x08\x00garbage", false},
      {std::string("\x08\x96\x01\x12\x04\xff\xfe\x00\x01", 9), false},
      {"{\"schemaVersion\": 1, \"traceEvents\": [{\"ph\": \"X\"}]}", false},
      // Wrong types everywhere.
      {"{\"schemaVersion\": 1, \"traceEvents\": [{\"ph\": 1, \"ts\": \"x\"},"
       "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": 5, \"ts\": [], "
       "\"dur\": {}}, {\"ph\": \"X\", \"cat\": \"kernel\", \"ts\": 1, "
       "\"dur\": 1, \"args\": 7}, 42, \"s\", null]}",
       true},
      // Huge and non-finite numbers.
      {"{\"schemaVersion\": 1, \"traceEvents\": [{\"ph\": \"X\", \"ts\": "
       "99999999999999999999999}]}",
       false},  // beyond 64 bits: the JSON library refuses it
      {"{\"schemaVersion\": 1, \"traceEvents\": [{\"ph\": \"X\", \"cat\": "
       "\"cpu_op\", \"name\": \"a\", \"ts\": 1e300, \"dur\": 1}, {\"ph\": "
       "\"X\", \"cat\": \"cpu_op\", \"name\": \"b\", \"ts\": "
       "18446744073709551615, \"dur\": -5}, {\"ph\": \"X\", \"cat\": "
       "\"cpu_op\", \"name\": \"c\", \"ts\": 9.2e18, \"dur\": 9.2e18}, "
       "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"ok\", \"ts\": 10, "
       "\"dur\": 3}]}",
       true},
      // A TF timeline whose events lack what they need.
      {"{\"traceEvents\": [{\"ph\": \"M\", \"pid\": 1, \"name\": "
       "\"process_name\", \"args\": {\"name\": \"/cpu:0 Compute\"}}, "
       "{\"ph\": \"X\", \"pid\": 1, \"cat\": \"Op\", \"args\": {\"name\": "
       "\"a\", \"op\": \"A\"}}, {\"ph\": \"X\", \"pid\": 2, \"ts\": 1, "
       "\"dur\": 1, \"cat\": \"Op\", \"args\": {\"name\": \"b\", \"op\": "
       "\"B\"}}, {\"ph\": \"X\", \"pid\": 1, \"ts\": 5, \"dur\": 2, \"cat\": "
       "\"Op\", \"args\": {\"name\": \"c:0\", \"op\": \"C\", \"input0\": 3, "
       "\"input1\": \"a\", \"inputx\": \"q\"}}]}",
       true},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    INFO("case " << i);
    absl::StatusOr<ImportedTrace> t =
        ImportTraceContents({"hostile.json"}, {cases[i].first});
    CHECK(t.ok() == cases[i].second);
    if (!t.ok()) {
      const std::string msg(t.status().message());
      CHECK(msg.rfind("hostile.json: ", 0) == 0);
      CHECK(msg.find('\n') == std::string::npos);
    } else {
      Model m = ToModel(*t);
      AllViewsWork(m, *t);
      for (const auto& n : t->graph.node()) {
        CHECK(n.name().find(':') == std::string::npos);
      }
    }
  }
}

TEST_CASE("Deep nesting keeps names and stacks bounded") {
  std::string json = "{\"schemaVersion\": 1, \"traceEvents\": [";
  const int kDepth = 3000;
  for (int i = 0; i < kDepth; ++i) {
    json +=
        "{\"ph\": \"X\", \"cat\": \"python_function\", \"name\": "
        "\"f.py(" +
        std::to_string(i) +
        "): f\", \"pid\": 1, \"tid\": 1, "
        "\"ts\": " +
        std::to_string(1 + i) +
        ", \"dur\": " + std::to_string(4 * kDepth - 2 * i) + "},";
    json += "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"op" +
            std::to_string(i) +
            "\", \"pid\": 1, \"tid\": 1, \"ts\": " + std::to_string(1 + i) +
            ", \"dur\": " + std::to_string(4 * kDepth - 2 * i - 1) + "},";
  }
  json.back() = ']';
  json += "}";
  absl::StatusOr<ImportedTrace> t = ImportTraceContents({"deep.json"}, {json});
  REQUIRE(t.ok());
  size_t longest = 0;
  for (const auto& n : t->graph.node()) {
    longest = std::max(longest, n.name().size());
  }
  CHECK(longest < 64 * 8);  // at most 64 components of "opNNNN"
  for (const auto& e : t->op_log.log_entries()) {
    CHECK(e.code_def().traces_size() <= 128);
  }
  Model m = ToModel(*t);
  AllViewsWork(m, *t);
}

TEST_CASE("Malformed JSON errors say where") {
  absl::StatusOr<ImportedTrace> t = ImportTraceContents(
      {"bad.json"}, {"{\"traceEvents\": [\n  {\"ph\": \"X\",,}\n]}"});
  REQUIRE_FALSE(t.ok());
  const std::string msg(t.status().message());
  CHECK(msg.find("bad.json: malformed JSON") == 0);
  CHECK(msg.find("line 2") != std::string::npos);
  // A file cut short says so, at its end (a JSON trace copied in part).
  t = ImportTraceContents(
      {"cut.json"},
      {"{\"traceEvents\": [\n  {\"ph\": \"X\", \"name\": \"a]{\"},\n"});
  REQUIRE_FALSE(t.ok());
  INFO(t.status().message());
  CHECK(std::string(t.status().message())
            .find("at the end of the file (line 3, column 1 (byte 48)): 2 "
                  "arrays or objects are still open (is the file cut "
                  "short?)") != std::string::npos);
  // A bracket that closes the wrong thing is no truncation.
  t = ImportTraceContents({"bad.json"}, {"{\"traceEvents\": [}"});
  REQUIRE_FALSE(t.ok());
  CHECK(std::string(t.status().message()).find("cut short") ==
        std::string::npos);
  // Nor is an error early in a file whose brackets then seem not to
  // balance (a stray quote) while the file ends in its closing bracket.
  std::string late(200, ' ');
  t = ImportTraceContents(
      {"quote.json"},
      {"{\"traceEvents\": [\n  {\"ph\": \"X\", \"name\": \"a\"b\"},\n" + late +
       "{\"ph\": \"X\"}\n]}\n"});
  REQUIRE_FALSE(t.ok());
  INFO(t.status().message());
  CHECK(std::string(t.status().message()).find("cut short") ==
        std::string::npos);
}

TEST_CASE("Truncated and corrupt gzip files are errors") {
  const std::string gz = testing::ReadFile(Corpus(kKinetoTraces[2]));
  absl::StatusOr<ImportedTrace> t =
      ImportTraceContents({"cut.json.gz"}, {gz.substr(0, gz.size() / 2)});
  REQUIRE_FALSE(t.ok());
  CHECK(std::string(t.status().message()).find("truncated gzip") !=
        std::string::npos);
  std::string bad = gz;
  bad[bad.size() / 2] ^= 0x55;
  bad[bad.size() / 2 + 1] ^= 0x55;
  t = ImportTraceContents({"bad.json.gz"}, {bad});
  CHECK_FALSE(t.ok());
  t = ImportTraceContents({"twice.gz"}, {Gzip(gz)});
  REQUIRE_FALSE(t.ok());
  CHECK(std::string(t.status().message()).find("gzip inside gzip") !=
        std::string::npos);
  // Compressed and plain give the same import; detection sees through gzip.
  const std::string plain = ReadTrace(Corpus(kTfTimelines[3]));
  absl::StatusOr<ImportedTrace> a = ImportTraceContents({"p.json"}, {plain});
  absl::StatusOr<ImportedTrace> b =
      ImportTraceContents({"p.json.gz"}, {Gzip(plain)});
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(a->steps[0].second.SerializeAsString() ==
        b->steps[0].second.SerializeAsString());
  absl::StatusOr<TraceFormat> f = DetectTraceFormat("g", Gzip(plain));
  REQUIRE(f.ok());
  CHECK(*f == TraceFormat::kTfTimeline);
}

// What Windows editors and Python's json module write is JSON too: a UTF-8
// byte order mark before it, integers beyond 64 bits (hashes, ids) in
// fields tfprof does not read. Such a file imports as the plain one does.
TEST_CASE("A byte order mark and integers beyond 64 bits are read") {
  const std::string plain = ReadTrace(Corpus(kKinetoTraces[2]));
  absl::StatusOr<ImportedTrace> a = ImportTraceContents({"p.json"}, {plain});
  REQUIRE(a.ok());
  std::string big = plain;
  size_t args = 0, changed = 0;
  while ((args = big.find("\"args\": {", args)) != std::string::npos) {
    args += 9;
    big.insert(args,
               "\"hash\": 123456789012345678901234, \"neg\": "
               "-99999999999999999999, \"list\": [1, 18446744073709551616], ");
    ++changed;
  }
  REQUIRE(changed > 10);
  const std::string bom = "\xEF\xBB\xBF";
  for (const std::string& variant :
       {bom + plain, big, Gzip(bom + big), bom + "  \n" + plain}) {
    absl::StatusOr<TraceFormat> f = DetectTraceFormat("v.json", variant);
    REQUIRE(f.ok());
    CHECK(*f == TraceFormat::kKineto);
    absl::StatusOr<ImportedTrace> b =
        ImportTraceContents({"v.json"}, {variant});
    REQUIRE(b.ok());
    REQUIRE(b->steps.size() == a->steps.size());
    for (size_t i = 0; i < a->steps.size(); ++i) {
      CHECK(a->steps[i].second.SerializeAsString() ==
            b->steps[i].second.SerializeAsString());
    }
    CHECK(a->graph.SerializeAsString() == b->graph.SerializeAsString());
  }
  // Still refused: a leading zero.
  CHECK_FALSE(ImportTraceContents({"bad.json"},
                                  {"{\"traceEvents\": [{\"ph\": \"X\", \"ts\": "
                                   "0123456789012345678901}]}"})
                  .ok());
  // After the mark comes JSON, judged as such (not "not a known format").
  absl::StatusOr<ImportedTrace> empty =
      ImportTraceContents({"e.json"}, {bom + "{}"});
  REQUIRE_FALSE(empty.ok());
  CHECK(std::string(empty.status().message())
            .find("JSON without a "
                  "traceEvents array") != std::string::npos);
}

// Times written with trailing zeros ("1212075548353.304000", 19 significant
// digits) are the same times: simdjson 3.0's get_number() read them as 0.
TEST_CASE("Times with 19 or more significant digits are read exactly") {
  const std::string plain = ReadTrace(Corpus(kKinetoTraces[2]));
  std::string padded;
  size_t changed = 0;
  for (size_t i = 0; i < plain.size();) {
    const bool ts = plain.compare(i, 6, "\"ts\": ") == 0;
    const bool dur = plain.compare(i, 7, "\"dur\": ") == 0;
    if (!ts && !dur) {
      padded += plain[i++];
      continue;
    }
    size_t end = i + (ts ? 6 : 7);
    while (end < plain.size() &&
           (std::isdigit(plain[end]) || plain[end] == '.')) {
      ++end;
    }
    const std::string number = plain.substr(i, end - i);
    padded += number;
    if (number.find('.') != std::string::npos) {
      padded += ts ? "000" : "000000000000000";
      ++changed;
    }
    i = end;
  }
  REQUIRE(changed > 20);
  absl::StatusOr<ImportedTrace> a = ImportTraceContents({"p.json"}, {plain});
  absl::StatusOr<ImportedTrace> b = ImportTraceContents({"z.json"}, {padded});
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  REQUIRE(a->steps.size() == b->steps.size());
  for (size_t i = 0; i < a->steps.size(); ++i) {
    CHECK(a->steps[i].second.SerializeAsString() ==
          b->steps[i].second.SerializeAsString());
  }
}

TEST_CASE("Missing files and directories are errors naming them") {
  absl::StatusOr<ImportedTrace> t = ImportTrace({"/nonexistent/trace.json"});
  REQUIRE_FALSE(t.ok());
  CHECK(std::string(t.status().message()).find("/nonexistent/trace.json") !=
        std::string::npos);
  CHECK_FALSE(ImportTrace({testing::CorpusDir()}).ok());
  CHECK_FALSE(ImportTrace({}).ok());
}

}  // namespace
}  // namespace tfprof
