// The TensorFlow timeline importer (profiler/importers/tf_timeline): every
// corpus timeline's op view against sums computed here from the raw events,
// several files as steps, a timeline and the RunMetadata of the same run,
// and the mapping rules on a hand-made timeline.
#include <simdjson.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "google/protobuf/text_format.h"
#include "profiler/importers/trace_import.h"
#include "profiler/load/loader.h"
#include "profiler/model/model.h"
#include "profiler/render/render_steps.h"
#include "profiler/views/diff.h"
#include "profiler/views/flops.h"
#include "profiler/views/steps.h"
#include "profiler/views/views.h"
#include "proto/xplane.pb.h"
#include "re2/re2.h"
#include "tests/test_util.h"
#include "tests/trace_test_util.h"

namespace tfprof {
namespace {

using namespace trace_test;  // NOLINT(build/namespaces): the shared helpers

// --- TensorFlow timelines: independent sums ----------------------------

void RawTfTimeline(const std::string& json, int64_t step, Raw* raw) {
  simdjson::dom::parser parser;
  Element root;
  REQUIRE(parser.parse(json).get(root) == simdjson::SUCCESS);
  simdjson::dom::array events;
  REQUIRE(root["traceEvents"].get_array().get(events) == simdjson::SUCCESS);
  std::map<std::string, std::string> process;
  for (Element e : events) {
    if (Str(e, "ph") == "M" && Str(e, "name") == "process_name") {
      process[IdText(e, "pid")] = Str(e["args"], "name");
    }
  }
  struct Op {
    std::string device, node;
    int64_t ts, dur;
  };
  std::vector<Op> ops;
  std::map<std::string, std::string> node_op;  // first seen wins
  for (Element e : events) {
    if (Str(e, "ph") != "X") continue;
    std::string pname = process[IdText(e, "pid")];
    const std::string suffix = " Compute";
    REQUIRE(pname.size() > suffix.size());
    REQUIRE(pname.substr(pname.size() - suffix.size()) == suffix);
    Op op{pname.substr(0, pname.size() - suffix.size()), Str(e["args"], "name"),
          RoundUs(Num(e, "ts")), RoundUs(Num(e, "dur"))};
    if (op.node == "_SOURCE" || op.node == "RecvTensor") continue;
    node_op.emplace(op.node, Str(e["args"], "op"));
    ops.push_back(op);
  }
  OpTable& table = raw->steps[step];
  // Which GPUs have a stream:all lane.
  std::set<std::string> with_all;
  auto gpu_of = [](const std::string& dev, bool* memcpy) -> std::string {
    const std::string l = Lower(dev);
    *memcpy = false;
    size_t p = l.find("/stream:");
    if (p != std::string::npos) return l.substr(0, p);
    if (l.size() > 7 && l.substr(l.size() - 7) == "/memcpy") {
      *memcpy = true;
      return l.substr(0, l.size() - 7);
    }
    return "";
  };
  for (const Op& op : ops) {
    if (Lower(op.device).find("stream:all") != std::string::npos) {
      bool m;
      with_all.insert(gpu_of(op.device, &m));
    }
  }
  std::multiset<std::tuple<std::string, std::string, int64_t, int64_t>>
      stream_copies;
  for (const Op& op : ops) {
    bool memcpy;
    const std::string gpu = gpu_of(op.device, &memcpy);
    if (!gpu.empty() && !memcpy &&
        Lower(op.device).find("stream:all") == std::string::npos) {
      stream_copies.insert({gpu, op.node, op.ts, op.dur});
    }
  }
  std::map<std::string, std::string> canonical_of;  // first one wins
  for (const Op& op : ops) {
    if (Canonical(op.device)) {
      const std::string& first =
          canonical_of.emplace(op.node, op.device).first->second;
      if (first != op.device) continue;  // tfprof keeps one per node
    }
    raw->devices[op.device] += op.dur;
    Sums& s = table[node_op[op.node]];
    bool memcpy;
    const std::string gpu = gpu_of(op.device, &memcpy);
    if (Canonical(op.device)) {
      s.cpu += std::max<int64_t>(op.dur, 1);
      ++s.runs;
    } else if (Lower(op.device).find("stream:all") != std::string::npos) {
      s.acc += std::max<int64_t>(op.dur, 1);
    } else if (!gpu.empty() && !with_all.count(gpu)) {
      if (memcpy) {
        auto it = stream_copies.find({gpu, op.node, op.ts, op.dur});
        if (it != stream_copies.end()) {
          stream_copies.erase(it);
          continue;
        }
      }
      s.acc += std::max<int64_t>(op.dur, 1);
      const size_t cut =
          memcpy ? op.device.size() - 7 : Lower(op.device).find("/stream:");
      raw->devices[op.device.substr(0, cut) + "/stream:all"] += op.dur;
    }
  }
}

TEST_CASE("TF timelines: the op view equals sums of the raw events") {
  for (const char* rel : kTfTimelines) {
    if (!testing::HaveCorpusFile(rel)) continue;
    INFO(rel);
    absl::StatusOr<ImportedTrace> t = ImportTrace({Corpus(rel)});
    REQUIRE(t.ok());
    CHECK(t->format == TraceFormat::kTfTimeline);
    REQUIRE(t->steps.size() == 1);
    CHECK(t->steps[0].first == 0);
    Raw raw;
    RawTfTimeline(ReadTrace(Corpus(rel)), 0, &raw);
    CompareDevices(raw.devices, DeviceMicros(*t));
    Model m = ToModel(*t);
    Compare(raw.steps[0], OpView(m, 0));
    AllViewsWork(m, *t);
  }
}

// A timeline's copies (op type MEMCPY<kind>, named by their edge) are the
// steps table's memcpy and its other stream events its kernels: each the
// union of its events on the GPU's stream and memcpy lanes, recomputed here.
TEST_CASE("TF timelines: steps tell copies from kernels") {
  for (const char* rel : kTfTimelines) {
    if (!testing::HaveCorpusFile(rel)) continue;
    INFO(rel);
    simdjson::dom::parser parser;
    Element root;
    const std::string json = ReadTrace(Corpus(rel));
    REQUIRE(parser.parse(json).get(root) == simdjson::SUCCESS);
    std::map<std::string, std::string> process;
    for (Element e : root["traceEvents"]) {
      if (Str(e, "ph") == "M" && Str(e, "name") == "process_name") {
        process[IdText(e, "pid")] = Lower(Str(e["args"], "name"));
      }
    }
    std::vector<std::pair<int64_t, int64_t>> kernels, copies;
    int64_t launches = 0;
    bool gpu_work = false;  // any event on a stream or memcpy lane
    for (Element e : root["traceEvents"]) {
      if (Str(e, "ph") != "X") continue;
      const std::string& p = process[IdText(e, "pid")];
      gpu_work = gpu_work || p.find("/stream:") != std::string::npos ||
                 p.find("/memcpy") != std::string::npos;
      const bool lane = (p.find("/stream:") != std::string::npos &&
                         p.find("/stream:all") == std::string::npos) ||
                        p.find("/memcpy ") != std::string::npos;
      if (!lane) continue;
      const int64_t ts = RoundUs(Num(e, "ts"));
      const int64_t end = ts + RoundUs(Num(e, "dur"));
      const bool copy = Str(e["args"], "op").rfind("MEMCPY", 0) == 0;
      // (the memcpy lane repeats its stream events: its Assign kernels too)
      if (!copy && p.find("/memcpy ") != std::string::npos) continue;
      (copy ? copies : kernels).emplace_back(ts, end);
      launches += copy ? 0 : 1;
    }
    auto union_us = [](std::vector<std::pair<int64_t, int64_t>> v) {
      std::sort(v.begin(), v.end());
      int64_t total = 0, open = INT64_MIN, close = INT64_MIN;
      for (const auto& [a, b] : v) {
        if (a > close) {
          total += close - open;
          open = a;
          close = b;
        } else {
          close = std::max(close, b);
        }
      }
      return v.empty() ? 0 : total + close - open;
    };
    absl::StatusOr<ImportedTrace> t = ImportTrace({Corpus(rel)});
    REQUIRE(t.ok());
    Model m = ToModel(*t);
    const StepTable table = ComputeSteps(m);
    REQUIRE(table.rows.size() == 1);
    CHECK(table.rows[0].compute_ns == union_us(kernels) * 1000);
    CHECK(table.rows[0].memcpy_ns == union_us(copies) * 1000);
    CHECK(table.rows[0].kernels == launches);
    // Idle is the wall time without GPU work: a capture with none (CPU
    // only) has no idle time to speak of, shown as unknown, not 0.
    CHECK(table.Known(&StepRow::idle_ns) == gpu_work);
    const bool idle_null = RenderStepsJson(table).find(
                               "\"idle_micros\": null") != std::string::npos;
    CHECK(idle_null == !gpu_work);
  }
}

TEST_CASE("TF timelines: several files are several steps") {
  const std::vector<std::string> files = {
      Corpus("tf1-timelines/dlprof_timeline.ctf.json"),
      Corpus("tf1-timelines/dlprof_mnist_xla_timeline_xla.ctf.json"),
      Corpus("tf1-timelines/dlprof_timeline.ctf.json")};
  absl::StatusOr<ImportedTrace> t = ImportTrace(files);
  REQUIRE(t.ok());
  REQUIRE(t->steps.size() == 3);
  Model m = ToModel(*t);
  for (int64_t step = 0; step < 3; ++step) {
    INFO("step " << step);
    CHECK(t->steps[step].first == step);
    Raw raw;
    RawTfTimeline(ReadTrace(files[step]), step, &raw);
    Compare(raw.steps[step], OpView(m, step));
  }
  // The same file twice gives the same numbers in both of its steps.
  const OpTable first = OpView(m, 0);
  const OpTable again = OpView(m, 2);
  REQUIRE(first.size() == again.size());
  for (const auto& [op, sums] : first) {
    INFO("op type " << op);
    CHECK(again.at(op).cpu == sums.cpu);
    CHECK(again.at(op).acc == sums.acc);
    CHECK(again.at(op).runs == sums.runs);
  }
}

// The RunMetadata of the same run, loaded the TF1 way.
TEST_CASE("TF timeline and RunMetadata of one run give the same op view") {
  absl::StatusOr<ImportedTrace> t =
      ImportTrace({Corpus("yaroslavvb-stuff/dynamic_stitch_gpu_profile.json")});
  REQUIRE(t.ok());
  tfcore::RunMetadata rm;
  REQUIRE(google::protobuf::TextFormat::ParseFromString(
      testing::ReadFile(
          Corpus("yaroslavvb-stuff/dynamic_stitch_gpu_profile.pbtxt")),
      &rm));
  // A timeline event spans all_start .. all_start + all_end_rel (TF's
  // timeline writes that, not op_end_rel), so that is what it can match.
  tfcore::RunMetadata as_timeline = rm;
  int64_t stream_micros = 0;
  std::map<std::string, int64_t> stream_by_op;
  for (auto& dev : *as_timeline.mutable_step_stats()->mutable_dev_stats()) {
    const bool stream = dev.device().find("/stream:") != std::string::npos;
    for (auto& ns : *dev.mutable_node_stats()) {
      ns.set_op_end_rel_micros(ns.all_end_rel_micros());
      if (stream) {
        const std::string& name = ns.node_name();
        stream_micros += std::max<int64_t>(ns.all_end_rel_micros(), 1);
        stream_by_op[name.substr(name.find(':') + 1)] +=
            std::max<int64_t>(ns.all_end_rel_micros(), 1);
      }
    }
  }
  // The run's partition graphs give the op types.
  Model from_rm;
  for (const auto& g : rm.partition_graphs()) from_rm.AddGraph(g);
  REQUIRE(from_rm.AddRunMeta(0, as_timeline).ok());
  Model from_trace = ToModel(*t);
  const OpTable a = OpView(from_rm, 0);
  const OpTable b = OpView(from_trace, 0);
  int64_t shared = 0;
  for (const auto& [op, s] : a) {
    if (!b.count(op) || s.runs == 0) continue;  // names only in one of them
    INFO("op type " << op);
    ++shared;
    CHECK(b.at(op).cpu == s.cpu);
    CHECK(b.at(op).runs == s.runs);
  }
  CHECK(shared == 4);  // Const, Identity, Range, DynamicStitch
  // The RunMetadata has no stream:all device: its GPU time is on the
  // streams, which the import sums into stream:all.
  int64_t acc = 0;
  for (const auto& [op, s] : b) {
    acc += s.acc;
    if (s.acc > 0) {
      INFO("op type " << op);
      CHECK(s.acc == stream_by_op[op]);
    }
  }
  CHECK(acc == stream_micros);
  // Every node execution starts where the RunMetadata says.
  std::map<std::string, int64_t> starts;
  for (const auto& dev : rm.step_stats().dev_stats()) {
    if (!Canonical(dev.device())) continue;
    for (const auto& ns : dev.node_stats()) {
      starts[ns.node_name()] = ns.all_start_micros();
    }
  }
  for (const auto& dev : t->steps[0].second.step_stats().dev_stats()) {
    if (!Canonical(dev.device())) continue;
    for (const auto& ns : dev.node_stats()) {
      INFO(ns.node_name());
      CHECK(starts[ns.node_name()] == ns.all_start_micros());
    }
  }
}

TEST_CASE("TF timeline: stream lanes, memcpy duplicates, output tensors") {
  const std::string json = R"({"traceEvents": [
    {"ph": "M", "pid": 1, "name": "process_name",
     "args": {"name": "/job:w/replica:0/task:0/gpu:0 Compute"}},
    {"ph": "M", "pid": 2, "name": "process_name",
     "args": {"name": "/gpu:0/stream:7 Compute"}},
    {"ph": "M", "pid": 3, "name": "process_name",
     "args": {"name": "/gpu:0/memcpy Compute"}},
    {"ph": "M", "pid": 4, "name": "process_name",
     "args": {"name": "/job:w/replica:0/task:0/gpu:0 Tensors"}},
    {"ph": "X", "pid": 1, "tid": 0, "ts": 100, "dur": 10, "cat": "Op",
     "name": "MatMul", "args": {"name": "mm", "op": "MatMul",
                                "input0": "a", "input1": "b:1"}},
    {"ph": "X", "pid": 2, "tid": 0, "ts": 105, "dur": 40, "cat": "Op",
     "name": "MatMul", "args": {"name": "mm", "op": "MatMul"}},
    {"ph": "X", "pid": 2, "tid": 0, "ts": 150, "dur": 3, "cat": "Op",
     "name": "MEMCPYHtoD", "args": {"name": "edge_1_a", "op": "MEMCPYHtoD"}},
    {"ph": "X", "pid": 3, "tid": 0, "ts": 150, "dur": 3, "cat": "Op",
     "name": "MEMCPYHtoD", "args": {"name": "edge_1_a", "op": "MEMCPYHtoD"}},
    {"ph": "X", "pid": 3, "tid": 0, "ts": 160, "dur": 2, "cat": "Op",
     "name": "MEMCPYDtoH", "args": {"name": "edge_2_b", "op": "MEMCPYDtoH"}},
    {"ph": "O", "pid": 4, "tid": 0, "ts": 109, "name": "mm", "id": 1,
     "cat": "Tensor", "args": {"snapshot": {"tensor_description":
     "dtype: DT_FLOAT\nshape {\n}\nallocation_description {\nrequested_bytes: 400\nallocated_bytes: 512\nallocator_name: GPU_0_bfc\nptr: 1234\n}\n"}}},
    {"ph": "C", "pid": 0, "ts": 100, "name": "GPU_0_bfc",
     "args": {"GPU_0_bfc": 512}}
  ]})";
  absl::StatusOr<ImportedTrace> t = ImportTraceContents({"tl.json"}, {json});
  REQUIRE(t.ok());
  std::map<std::pair<std::string, std::string>, int64_t> micros;
  const tfcore::NodeExecStats* mm = nullptr;
  for (const auto& dev : t->steps.at(0).second.step_stats().dev_stats()) {
    for (const auto& ns : dev.node_stats()) {
      micros[{dev.device(), ns.node_name()}] += ns.op_end_rel_micros();
      if (ns.node_name() == "mm" && Canonical(dev.device())) mm = &ns;
    }
  }
  CHECK(micros[{"/gpu:0/stream:all", "mm"}] == 40);
  CHECK(micros[{"/gpu:0/stream:all", "edge_1_a"}] == 3);  // counted once
  CHECK(micros[{"/gpu:0/stream:all", "edge_2_b"}] == 2);  // memcpy lane only
  REQUIRE(mm != nullptr);
  REQUIRE(mm->output_size() == 1);
  CHECK(mm->output(0)
            .tensor_description()
            .allocation_description()
            .allocated_bytes() == 512);
  for (const auto& n : t->graph.node()) {
    if (n.name() == "mm") {
      CHECK(std::vector<std::string>(n.input().begin(), n.input().end()) ==
            std::vector<std::string>{"a", "b:1"});
    }
  }
  Model m = ToModel(*t);
  OpTable ops = OpView(m, 0);
  CHECK(ops["MatMul"].cpu == 10);
  CHECK(ops["MatMul"].acc == 40);
  CHECK(ops["MatMul"].runs == 1);
  Views views(&m, nullptr);
  Options o = AllRows(0);
  o.select = {Attr::kBytes};
  absl::StatusOr<ResultTree> r = views.Query(ViewKind::kScope, o);
  REQUIRE(r.ok());
  bool output_seen = false;
  for (const ResultNode& n : r->nodes) {
    if (n.name == "mm") output_seen = n.self.output_bytes == 512;
  }
  CHECK(output_seen);
}

// A ProfileProto keeps the nodes' accelerator time but no device records:
// its steps table says the kernels, copies and device span are unknown. The
// RunMetadata of the same run has its GPU streams: kernels are counted
// (here recounted from the raw RunMetadata).
TEST_CASE("steps: unknown device columns of a ProfileProto are not zeros") {
  InputPaths profile;
  profile.profile_path = testing::SourceDir() + "/testdata/sample/profile";
  auto p = LoadProfile(profile);
  REQUIRE(p.ok());
  const StepTable pt = ComputeSteps((*p)->model);
  REQUIRE(pt.rows.size() == 1);
  CHECK(pt.rows[0].accelerator_ns > 0);
  CHECK_FALSE(pt.kernel_records);
  CHECK_FALSE(pt.copy_records);
  // MFU's peak: which GPU ran is what is not known.
  CHECK(ComputeRunFlops((*p)->model, pt, PeakOverride())
            .peak.unknown.find("no kernel records") != std::string::npos);
  std::istringstream text(RenderStepsText(pt));
  std::string line;
  std::getline(text, line);  // "1 steps (...)"
  std::getline(text, line);  // the header
  std::getline(text, line);
  std::vector<std::string> cells = absl::StrSplit(line, ' ', absl::SkipEmpty());
  REQUIRE(cells.size() >= 8);
  CHECK(cells[4] == "-");  // memcpy
  CHECK(cells[6] == "-");  // kernels
  CHECK(cells[7] == "-");  // device span
  const std::string json = RenderStepsJson(pt);
  CHECK(json.find("\"kernels\": null") != std::string::npos);
  CHECK(json.find("\"device_span_micros\": null") != std::string::npos);
  const std::vector<std::string> csv = absl::StrSplit(RenderStepsCsv(pt), '\n');
  REQUIRE(csv.size() >= 2);
  const std::vector<std::string> head = absl::StrSplit(csv[0], ',');
  const std::vector<std::string> row = absl::StrSplit(csv[1], ',');
  REQUIRE(head.size() == row.size());
  const std::set<std::string> unknown = {"memcpy_micros", "kernels",
                                         "device_span_micros"};
  const std::set<std::string> known = {
      "step",           "wall_micros", "accelerator_micros",
      "compute_micros", "idle_micros", "flops"};
  for (size_t i = 0; i < head.size(); ++i) {
    INFO(head[i]);
    if (unknown.count(head[i])) CHECK(row[i].empty());
    if (known.count(head[i])) CHECK_FALSE(row[i].empty());
  }

  const std::string dir = Corpus("tf-testdata/current");
  InputPaths tf1;
  tf1.graph_path = dir + "/graph.pbtxt";
  tf1.run_meta_path = dir + "/run_meta";
  auto r = LoadProfile(tf1);
  REQUIRE(r.ok());
  const StepTable rt = ComputeSteps((*r)->model);
  REQUIRE(rt.rows.size() == 1);
  CHECK(rt.kernel_records);
  CHECK(rt.copy_records);
  tfcore::RunMetadata rm;
  REQUIRE(rm.ParseFromString(testing::ReadFile(dir + "/run_meta")));
  int64_t kernels = 0;
  for (const auto& dev : rm.step_stats().dev_stats()) {
    const std::string& d = dev.device();
    if (d.find("/stream:") == std::string::npos ||
        d.find("/stream:all") != std::string::npos) {
      continue;
    }
    for (const auto& ns : dev.node_stats()) {
      // (A copy's node name is MEMCPY..., its label the op it copied for.)
      if (ns.node_name().rfind("MEMCPY", 0) != 0) ++kernels;
    }
  }
  CHECK(kernels > 0);
  CHECK(rt.rows[0].kernels == kernels);
  CHECK(RenderStepsJson(rt).find(absl::StrCat("\"kernels\": ", kernels)) !=
        std::string::npos);
  // diff: what the base does not know is not recorded there, not a change
  // from zero.
  const StepsDiff d = DiffSteps(pt, rt, DiffOptions());
  int checked = 0;
  for (const StepsDiffRow& row : d.rows) {
    INFO(row.measure);
    if (row.measure == "peak_bytes") continue;  // neither records memory
    CHECK(row.current_recorded);
    const bool unknown = row.measure == "kernels" || row.measure == "memcpy_ns";
    CHECK(row.base_recorded == !unknown);
    checked += unknown ? 1 : 0;
  }
  CHECK(checked == 2);
}

}  // namespace
}  // namespace tfprof
