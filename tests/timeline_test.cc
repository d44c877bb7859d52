// Timelines parse as JSON and are structurally valid Chrome traces; the
// graph timeline of a real GPU run matches TensorFlow's own timeline of it.
#include <catch2/catch.hpp>
#include <limits>
#include <map>
#include <set>

#include "profiler/load/loader.h"
#include "profiler/render/step_timeline.h"
#include "profiler/render/view_timeline.h"
#include "profiler/views/views.h"
#include "tests/corpus_util.h"
#include "tests/json_parse.h"
#include "tests/test_util.h"

namespace tfprof {
namespace {

using testing::JsonValue;

// Checks the Trace Event Format rules we rely on; returns the events.
std::vector<JsonValue> CheckTrace(const std::string& json) {
  JsonValue doc;
  std::string error;
  REQUIRE(testing::ParseJson(json, &doc, &error));
  REQUIRE(doc.kind == JsonValue::kObject);
  REQUIRE(doc.Has("traceEvents"));
  const std::vector<JsonValue>& events = doc.at("traceEvents").array;
  std::map<int64_t, int> flow_starts, flow_ends;
  // pid -> tid -> intervals, to check that lanes never overlap.
  std::map<std::pair<int64_t, int64_t>, std::vector<std::pair<double, double>>>
      lanes;
  for (const JsonValue& e : events) {
    REQUIRE(e.Has("ph"));
    REQUIRE(e.Has("pid"));
    const std::string& ph = e.at("ph").string;
    if (ph == "M") {
      CHECK(e.at("name").string == "process_name");
      CHECK(e.at("args").Has("name"));
      continue;
    }
    REQUIRE(e.Has("ts"));
    REQUIRE(e.Has("tid"));
    REQUIRE(e.Has("name"));
    if (ph == "X") {
      REQUIRE(e.Has("dur"));
      CHECK(e.at("dur").number >= 0);
      lanes[{static_cast<int64_t>(e.at("pid").number),
             static_cast<int64_t>(e.at("tid").number)}]
          .emplace_back(e.at("ts").number,
                        e.at("ts").number + e.at("dur").number);
    } else if (ph == "s" || ph == "t") {
      const int64_t id = static_cast<int64_t>(e.at("id").number);
      (ph == "s" ? flow_starts : flow_ends)[id]++;
    } else if (ph == "N" || ph == "O" || ph == "D") {
      CHECK(e.Has("id"));  // object lifetime events
    } else {
      CHECK(ph == "C");
      CHECK(e.at("args").kind == JsonValue::kObject);
    }
  }
  CHECK(flow_starts == flow_ends);
  for (auto& [lane, intervals] : lanes) {
    std::sort(intervals.begin(), intervals.end());
    for (size_t i = 1; i < intervals.size(); ++i) {
      CHECK(intervals[i].first >= intervals[i - 1].second);
    }
  }
  return events;
}

TEST_CASE("Graph timeline of TensorFlow's GPU test run") {
  auto loaded = LoadProfile(testing::TfTestData());
  REQUIRE(loaded.ok());
  Views views(&(*loaded)->model, nullptr);
  Options o;
  o.step = 0;
  o.max_depth = 1000;
  auto r = views.Query(ViewKind::kGraph, o);
  REQUIRE(r.ok());
  Timeline t = GraphTimeline(*r, (*loaded)->model, 0);
  CHECK(t.json.back() == '\n');
  std::vector<JsonValue> events = CheckTrace(t.json);
  std::vector<std::string> processes;
  std::set<std::string> names;
  for (const JsonValue& e : events) {
    if (e.at("ph").string == "M") {
      processes.push_back(e.at("args").at("name").string);
    }
    if (e.at("ph").string == "X") names.insert(e.at("name").string);
  }
  CHECK(processes ==
        std::vector<std::string>{
            "Op execution threads: /gpu:0/stream:all",
            "Op scheduling threads: /job:localhost/replica:0/task:0/gpu:0",
            "Op scheduling threads: /job:localhost/replica:0/task:0/cpu:0",
            "mem usage on:/job:localhost/replica:0/task:0/gpu:0",
            "mem usage on:/job:localhost/replica:0/task:0/gpu:0 allocations"});
  CHECK(names.count("Conv2D") == 1);
  CHECK(names.count("_retval_Conv2D_1_0_0") == 1);
  REQUIRE(t.messages.size() == 1);
  CHECK(t.messages[0] ==
        "/job:localhost/replica:0/task:0/gpu:0 peak memory: 0.01 MB");
}

TEST_CASE("Graph timeline matches TensorFlow's timeline of the same run") {
  // dynamic_stitch_gpu_profile.{pbtxt,json} are one run: its RunMetadata
  // and the timeline TensorFlow's client library drew from it.
  InputPaths p;
  p.run_meta_path =
      testing::CorpusFile("yaroslavvb-stuff/dynamic_stitch_gpu_profile.pbtxt");
  auto loaded = LoadProfile(p);
  REQUIRE(loaded.ok());
  Views views(&(*loaded)->model, nullptr);
  Options o;
  o.step = 0;
  o.max_depth = 1000;
  auto r = views.Query(ViewKind::kGraph, o);
  REQUIRE(r.ok());
  std::vector<JsonValue> ours =
      CheckTrace(GraphTimeline(*r, (*loaded)->model, 0).json);
  JsonValue theirs;
  std::string error;
  REQUIRE(testing::ParseJson(
      testing::ReadFile(testing::CorpusFile(
          "yaroslavvb-stuff/dynamic_stitch_gpu_profile.json")),
      &theirs, &error));
  // TensorFlow's "gpu:0 Compute" ops: name (args.name) -> (start, duration).
  std::map<int64_t, std::string> pid_names;
  for (const JsonValue& e : theirs.at("traceEvents").array) {
    if (e.at("ph").string == "M" && e.at("name").string == "process_name") {
      pid_names[static_cast<int64_t>(e.at("pid").number)] =
          e.at("args").at("name").string;
    }
  }
  std::map<std::string, std::pair<double, double>> tf_ops;
  for (const JsonValue& e : theirs.at("traceEvents").array) {
    if (e.at("ph").string != "X") continue;
    const std::string& proc =
        pid_names[static_cast<int64_t>(e.at("pid").number)];
    if (proc != "/job:localhost/replica:0/task:0/gpu:0 Compute") continue;
    tf_ops[e.at("args").at("name").string] = {e.at("ts").number,
                                              e.at("dur").number};
  }
  REQUIRE(tf_ops.size() > 10);
  std::map<std::string, std::pair<double, double>> our_ops;
  for (const JsonValue& e : ours) {
    if (e.at("ph").string == "X") {
      our_ops[e.at("name").string] = {e.at("ts").number, e.at("dur").number};
    }
  }
  // Every op TensorFlow drew on the gpu:0 scheduling lane is ours too, at the
  // same start. tfprof's duration is the op's own time (op_end_rel); the
  // client timeline draws until all_end_rel, so ours is never longer (up to
  // the 1us tfprof gives zero-length ops).
  int compared = 0;
  for (const auto& [name, t] : tf_ops) {
    INFO(name);
    if (name == "_SOURCE") continue;  // bookkeeping, not a node
    auto it = our_ops.find(name);
    REQUIRE(it != our_ops.end());
    CHECK(it->second.first == t.first);
    CHECK(it->second.second <= t.second + 1.0);
    ++compared;
  }
  CHECK(compared >= 10);
}

TEST_CASE("Scope timeline: one process per depth, children inside parents") {
  auto loaded = LoadProfile(testing::TfTestData());
  REQUIRE(loaded.ok());
  Views views(&(*loaded)->model, nullptr);
  auto r = views.Query(ViewKind::kScope, Options());
  REQUIRE(r.ok());
  std::vector<JsonValue> events = CheckTrace(TreeTimeline(*r).json);
  REQUIRE(events.size() >= 2);
  CHECK(events[0].at("args").at("name").string == "Scope:0");
  CHECK(events[1].at("name").string == "_TFProfRoot");
  CHECK(events[1].at("dur").number == r->root().total.exec_micros);
}

TEST_CASE("Flame layout copes with children longer than their parent") {
  // tfprof aborted here; we lay the children out and the viewer shows them.
  ResultTree r;
  r.view = ViewKind::kScope;
  r.nodes.resize(3);
  r.nodes[0].name = "_TFProfRoot";
  r.nodes[0].total.exec_micros = 10;
  r.nodes[0].children = {1, 2};
  r.nodes[1].name = "a";
  r.nodes[1].total.exec_micros = 8;
  r.nodes[2].name = "b";
  r.nodes[2].total.exec_micros = 8;
  std::vector<JsonValue> events = CheckTrace(TreeTimeline(r).json);
  int regions = 0;
  for (const JsonValue& e : events) regions += e.at("ph").string == "X";
  CHECK(regions == 3);
}

}  // namespace
}  // namespace tfprof

namespace tfprof {
namespace {

bool SameJson(const JsonValue& a, const JsonValue& b) {
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case JsonValue::kNull:
      return true;
    case JsonValue::kBool:
      return a.boolean == b.boolean;
    case JsonValue::kNumber:
      return a.number == b.number;
    case JsonValue::kString:
      return a.string == b.string;
    case JsonValue::kArray:
      if (a.array.size() != b.array.size()) return false;
      for (size_t i = 0; i < a.array.size(); ++i) {
        if (!SameJson(a.array[i], b.array[i])) return false;
      }
      return true;
    case JsonValue::kObject:
      if (a.object.size() != b.object.size()) return false;
      for (const auto& [k, v] : a.object) {
        if (!b.Has(k) || !SameJson(v, b.at(k))) return false;
      }
      return true;
  }
  return false;
}

TEST_CASE(
    "Step timeline equals TensorFlow's timeline of the same RunMetadata") {
  tfcore::RunMetadata rm;
  REQUIRE(
      ReadProtoFile(testing::CorpusFile(
                        "yaroslavvb-stuff/dynamic_stitch_gpu_profile.pbtxt"),
                    true, &rm)
          .ok());
  StepTimelineOptions opts;
  opts.show_dataflow = false;  // the reference was drawn without arrows
  const std::string ours = StepStatsTimeline(rm.step_stats(), opts);
  std::vector<JsonValue> our_events = CheckTrace(ours);
  JsonValue theirs;
  std::string error;
  REQUIRE(testing::ParseJson(
      testing::ReadFile(testing::CorpusFile(
          "yaroslavvb-stuff/dynamic_stitch_gpu_profile.json")),
      &theirs, &error));
  const auto& their_events = theirs.at("traceEvents").array;
  REQUIRE(our_events.size() == their_events.size());
  for (size_t i = 0; i < our_events.size(); ++i) {
    INFO(i);
    CHECK(SameJson(our_events[i], their_events[i]));
  }
}

TEST_CASE("Step timeline with dataflow and memory is a valid trace") {
  tfcore::RunMetadata rm;
  REQUIRE(ReadProtoFile(testing::CorpusFile("tf-testdata/current/run_meta"),
                        false, &rm)
              .ok());
  StepTimelineOptions opts;
  opts.show_memory = true;
  for (const char* op_time : {"schedule", "gpu", "all"}) {
    opts.op_time = op_time;
    std::vector<JsonValue> events =
        CheckTrace(StepStatsTimeline(rm.step_stats(), opts));
    std::map<std::string, int> phases;
    for (const JsonValue& e : events) phases[e.at("ph").string]++;
    CHECK(phases["M"] == 1 + 2 * rm.step_stats().dev_stats_size());
    CHECK(phases["N"] == phases["O"]);
    CHECK(phases["C"] > 0);
    CHECK(phases["D"] > 0);
  }
}

// A RunMetadata whose ops end past the int64 range (a corrupt or hostile
// file): times stop at the limit, none wraps around to a negative time.
TEST_CASE("Step timelines saturate huge end times") {
  tfcore::RunMetadata rm;
  REQUIRE(ReadProtoFile(testing::CorpusFile("tf-testdata/current/run_meta"),
                        false, &rm)
              .ok());
  for (auto& dev : *rm.mutable_step_stats()->mutable_dev_stats()) {
    for (auto& ns : *dev.mutable_node_stats()) {
      ns.set_all_end_rel_micros(std::numeric_limits<int64_t>::max());
      ns.set_op_end_rel_micros(std::numeric_limits<int64_t>::max());
    }
  }
  StepTimelineOptions opts;
  opts.show_memory = true;
  for (const char* op_time : {"schedule", "gpu", "all"}) {
    opts.op_time = op_time;
    INFO(op_time);
    int negative = 0, tensors = 0;
    for (const JsonValue& e :
         CheckTrace(StepStatsTimeline(rm.step_stats(), opts))) {
      if (!e.Has("ts")) continue;
      negative += e.at("ts").number < 0 ? 1 : 0;
      tensors += e.at("ph").string == "O" ? 1 : 0;
    }
    CHECK(tensors > 0);
    CHECK(negative == 0);
  }
}

}  // namespace
}  // namespace tfprof
