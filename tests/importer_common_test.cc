// Unit tests of the pieces the trace importers share: the step lookup, the
// per-thread nesting sweep and the JSON scan.
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "profiler/importers/common/json_reader.h"
#include "profiler/importers/common/nesting.h"
#include "profiler/importers/common/steps.h"

namespace tfprof {
namespace trace_internal {
namespace {

// `json` in the padded memory a JsonReader reads.
PaddedBytes Padded(const std::string& json) {
  PaddedBytes bytes;
  char* at = bytes.Reserve(json.size());
  REQUIRE(at != nullptr);
  std::memcpy(at, json.data(), json.size());
  bytes.Commit(json.size());
  bytes.ZeroPadding();
  return bytes;
}

// The scan counts the complete ("X") events, which the TF timeline import
// reserves its records for; other phases are not counted.
TEST_CASE("The JSON scan counts complete events") {
  const std::string json =
      R"({"traceEvents": [)"
      R"({"ph": "M", "name": "process_name", "pid": 1,)"
      R"( "args": {"name": "/job:localhost/replica:0/task:0/cpu:0 Compute"}},)"
      R"({"ph": "X", "name": "A", "pid": 1, "tid": 0, "ts": 1, "dur": 2,)"
      R"( "args": {"name": "a", "op": "A"}},)"
      R"({"ph": "s", "id": 1, "pid": 1, "tid": 0, "ts": 1},)"
      R"({"ph": "X", "name": "B", "pid": 1, "tid": 0, "ts": 3, "dur": 1,)"
      R"( "args": {"name": "b", "op": "B"}},)"
      R"({"ph": "t", "id": 1, "pid": 1, "tid": 0, "ts": 3}]})";
  JsonReader reader(Padded(json));
  JsonTraceScan scan;
  REQUIRE(ScanJsonTrace(&reader, &scan) == simdjson::SUCCESS);
  CHECK(scan.format == TraceFormat::kTfTimeline);
  CHECK(scan.complete_events == 2);
}

// Integers beyond 64 bits (ids, hashes) are read, as doubles that keep
// their digits as ids: two ids that differ in the last digit stay apart.
TEST_CASE("Integers beyond 64 bits keep their digits as ids") {
  const std::string json =
      R"([123456789012345678901234, 123456789012345678901235, -99999999999999999999,)"
      R"( 18446744073709551615, 1212075548353.304000, "x"])";
  JsonReader reader(Padded(json));
  REQUIRE(reader.Start());
  std::vector<std::string> ids;
  std::vector<double> values;
  REQUIRE(reader.ForEachEvent([&](JsonReader::Value& v) {
    JsonScalar s;
    if (!reader.Read(v, &s)) return false;
    ids.push_back(s.IdText().value_or("?"));
    values.push_back(s.type == JsonScalar::Type::kDouble ? s.d : 0);
    return true;
  }));
  REQUIRE(ids.size() == 6);
  CHECK(ids[0] == "123456789012345678901234");
  CHECK(ids[1] == "123456789012345678901235");
  CHECK(ids[2] == "-99999999999999999999");
  CHECK(ids[3] == "18446744073709551615");
  CHECK(ids[5] == "x");
  CHECK(values[0] == 1.2345678901234568e23);
  CHECK(values[2] == -1e20);
  CHECK(values[4] == 1212075548353.304);  // (simdjson's get_number gave 0)
}

TEST_CASE("An event belongs to the step that started last before it") {
  StepStarts steps(/*file_index=*/4);
  steps.Add(300, 12);
  steps.Add(100, 10);
  steps.Add(200, 11);
  steps.Sort();
  REQUIRE(steps.size() == 3);
  CHECK(steps.first_step() == 10);
  CHECK(steps.At(100) == 10);
  CHECK(steps.At(199) == 10);
  CHECK(steps.At(200) == 11);
  CHECK(steps.At(1000000) == 12);
  CHECK(steps.before_first() == 0);
  // Before the first marker: counted in the first step, and counted.
  CHECK(steps.At(50) == 10);
  CHECK(steps.At(99) == 10);
  CHECK(steps.before_first() == 2);
}

TEST_CASE("Without step markers every event is in the file's step") {
  StepStarts steps(/*file_index=*/3);
  steps.Sort();
  CHECK(steps.empty());
  CHECK(steps.At(-5) == 3);
  CHECK(steps.At(123456) == 3);
}

struct Event {
  int thread;
  int64_t start;
  int64_t duration;
  int kind;
};

// The parent of each event by the sweep: the innermost event still open.
std::vector<int32_t> Parents(const std::vector<Event>& events) {
  std::vector<int32_t> order(events.size());
  std::iota(order.begin(), order.end(), 0);
  SortForNesting(
      events, [](const Event& e) { return e.thread; }, &order);
  std::vector<int32_t> parent(events.size(), -1);
  std::vector<int32_t> open;
  int thread = -1;
  for (int32_t i : order) {
    if (events[i].thread != thread) open.clear();
    thread = events[i].thread;
    PopEnded(events, events[i].start, &open);
    if (!open.empty()) parent[i] = open.back();
    open.push_back(i);
  }
  return parent;
}

TEST_CASE("The nesting sweep finds each event's enclosing event") {
  const std::vector<Event> events = {
      {1, 10, 5, 0},   // 0: inside 2
      {1, 0, 100, 0},  // 1: outermost
      {1, 5, 50, 0},   // 2: inside 1
      {1, 55, 10, 0},  // 3: starts where 2 ends: inside 1, not 2
      {2, 12, 1, 0},   // 4: another thread, alone
      {1, 5, 50, 1},   // 5: same span as 2, later kind: inside 2
      {1, 100, 0, 0},  // 6: starts at 1's end: top level
  };
  const std::vector<int32_t> parent = Parents(events);
  CHECK(parent[1] == -1);
  CHECK(parent[2] == 1);
  CHECK(parent[5] == 2);
  CHECK(parent[0] == 5);
  CHECK(parent[3] == 1);
  CHECK(parent[4] == -1);
  CHECK(parent[6] == -1);
}

TEST_CASE("Event ends saturate instead of overflowing") {
  const Event huge{0, INT64_MAX - 5, 100, 0};
  CHECK(EndOf(huge) == INT64_MAX);
}

}  // namespace
}  // namespace trace_internal
}  // namespace tfprof
