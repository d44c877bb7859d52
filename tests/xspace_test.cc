// The XSpace importer (profiler/importers/xspace) on TensorFlow captures:
// the op view against sums computed here from the XSpace decoded with
// protobuf, scopes and step groups, Python stacks, launches, annotations,
// and in-place decoding. (XLA programs: xspace_xla_test.cc.)
#include <simdjson.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "google/protobuf/text_format.h"
#include "profiler/importers/trace_import.h"
#include "profiler/load/loader.h"
#include "profiler/model/model.h"
#include "profiler/views/summary.h"
#include "profiler/views/views.h"
#include "proto/xplane.pb.h"
#include "re2/re2.h"
#include "tests/test_util.h"
#include "tests/trace_test_util.h"

namespace tfprof {
namespace {

using namespace trace_test;  // NOLINT(build/namespaces): the shared helpers

// --- XSpace: independent sums ------------------------------------------

using ::tensorflow::profiler::XEvent;
using ::tensorflow::profiler::XLine;
using ::tensorflow::profiler::XPlane;
using ::tensorflow::profiler::XSpace;
using ::tensorflow::profiler::XStat;

// (start, duration) in microseconds, rounded half up from picoseconds.
std::pair<int64_t, int64_t> XTime(const XLine& line, const XEvent& ev) {
  const __int128 ps =
      static_cast<__int128>(line.timestamp_ns()) * 1000 + ev.offset_ps();
  const __int128 start = (ps + 500000) / 1000000;
  return {static_cast<int64_t>(start), (ev.duration_ps() + 500000) / 1000000};
}

// The same in nanoseconds.
std::pair<int64_t, int64_t> XTimeNs(const XLine& line, const XEvent& ev) {
  const __int128 ps =
      static_cast<__int128>(line.timestamp_ns()) * 1000 + ev.offset_ps();
  return {static_cast<int64_t>((ps + 500) / 1000),
          (ev.duration_ps() + 500) / 1000};
}

// Nanoseconds to the nearest microsecond (halves up; ns >= 0).
int64_t NearestUs(int64_t ns) { return (ns + 500) / 1000; }

std::string XName(const XPlane& p, const XEvent& ev) {
  auto it = p.event_metadata().find(ev.metadata_id());
  return it == p.event_metadata().end() ? "" : it->second.name();
}

// A stat as text (strings, references, integers).
std::string XStatText(const XPlane& p, const XEvent& ev, const char* name) {
  for (const XStat& s : ev.stats()) {
    auto md = p.stat_metadata().find(s.metadata_id());
    if (md == p.stat_metadata().end() || md->second.name() != name) continue;
    if (s.has_str_value()) return s.str_value();
    if (s.has_ref_value()) {
      return p.stat_metadata().at(static_cast<int64_t>(s.ref_value())).name();
    }
    if (s.has_int64_value()) return std::to_string(s.int64_value());
    if (s.has_uint64_value()) return std::to_string(s.uint64_value());
  }
  return "";
}

// "<node>:<OpType>" -> node, type.
bool XOp(const std::string& name, std::string* node, std::string* type) {
  static const RE2 re(R"(([^:\s]+):([A-Za-z_][A-Za-z0-9_]*))");
  return RE2::FullMatch(name, re, node, type);
}

// A host op: a TensorFlow op, or a tf.data iterator (type "Dataset").
bool XHostOp(const std::string& name, std::string* node, std::string* type) {
  if (name.rfind("Iterator::", 0) == 0) {
    *node = name;
    *type = "Dataset";
    return true;
  }
  return XOp(name, node, type);
}

// One op of an XSpace, by (node, type): nanoseconds and runs.
struct XNode {
  int64_t cpu_ns = 0;
  std::map<std::string, int64_t> device_ns;  // stream devices
  int64_t host_runs = 0;
  int64_t line_runs = 0;  // events on a GPU's "TensorFlow Ops" line
  std::string gpu;        // the GPU of the line or of its first linked work
  bool linked_work = false;
  std::set<std::string> linked_gpus;  // every GPU of its linked work
  int64_t bytes = 0;
};
using XNodes = std::map<std::pair<std::string, std::string>, XNode>;

// Host ops of one line, with exclusive times (nesting in microseconds,
// overlaps in nanoseconds); launches and allocations to the innermost op
// around them (found by brute force).
void RawXSpaceHostLine(
    const XPlane& p, const XLine& line, XNodes* nodes,
    std::map<std::string, std::pair<std::string, std::string>>* launch) {
  struct HostOp {
    int64_t start, dur, start_ns, dur_ns, excl_ns;
    std::pair<std::string, std::string> key;
    int64_t bytes = 0;
  };
  std::vector<HostOp> host;
  for (const XEvent& ev : line.events()) {
    std::string node, type;
    if (!XHostOp(XName(p, ev), &node, &type)) continue;
    auto [start, dur] = XTime(line, ev);
    auto [start_ns, dur_ns] = XTimeNs(line, ev);
    host.push_back({start, dur, start_ns, dur_ns, dur_ns, {node, type}});
  }
  auto innermost = [&](int64_t t) {
    int best = -1;
    for (size_t i = 0; i < host.size(); ++i) {
      if (host[i].start <= t && t < host[i].start + host[i].dur &&
          (best < 0 || host[i].start > host[best].start ||
           (host[i].start == host[best].start &&
            host[i].dur < host[best].dur))) {
        best = static_cast<int>(i);
      }
    }
    return best;
  };
  // Nested ops give their time to the parent's exclusive time.
  for (size_t i = 0; i < host.size(); ++i) {
    int parent = -1;
    for (size_t j = 0; j < host.size(); ++j) {
      if (j == i) continue;
      const bool encloses =
          host[j].start <= host[i].start &&
          host[i].start < host[j].start + host[j].dur &&
          (host[j].start < host[i].start || host[j].dur > host[i].dur);
      if (encloses && (parent < 0 || host[j].start > host[parent].start ||
                       (host[j].start == host[parent].start &&
                        host[j].dur < host[parent].dur))) {
        parent = static_cast<int>(j);
      }
    }
    if (parent >= 0) {
      const HostOp& c = host[i];
      HostOp& q = host[parent];
      const int64_t overlap =
          std::min(c.start_ns + c.dur_ns, q.start_ns + q.dur_ns) -
          std::max(c.start_ns, q.start_ns);
      q.excl_ns -= std::max<int64_t>(overlap, 0);
    }
  }
  for (const XEvent& ev : line.events()) {
    const std::string name = XName(p, ev);
    const int64_t start = XTime(line, ev).first;
    const std::string corr = XStatText(p, ev, "correlation_id");
    std::string unused_node, unused_type;
    if (name == "MemoryAllocation") {
      const int owner = innermost(start);
      if (owner >= 0) {
        host[owner].bytes += std::stoll(XStatText(p, ev, "allocation_bytes"));
      }
    } else if (!corr.empty() && !XHostOp(name, &unused_node, &unused_type)) {
      const int owner = innermost(start);
      if (owner >= 0) {
        (*launch)[XStatText(p, ev, "context_id") + "/" + corr] =
            host[owner].key;
      }
    }
  }
  for (const HostOp& h : host) {
    XNode& n = (*nodes)[h.key];
    n.cpu_ns += std::max<int64_t>(h.excl_ns, 0);
    ++n.host_runs;
    n.bytes += h.bytes;
  }
}

// The op a stream event belongs to: its launch's, else the innermost
// annotation's, else "_unlinked/<kind>" (not linked).
std::pair<std::string, std::string> XStreamOp(
    const XPlane& p, const XEvent& ev,
    const std::map<std::string, std::pair<std::string, std::string>>& launch,
    bool* linked) {
  *linked = true;
  const std::string key =
      XStatText(p, ev, "context_id") + "/" + XStatText(p, ev, "correlation_id");
  if (launch.count(key)) return launch.at(key);
  // The innermost annotation: the last "::" part, up to '#'.
  std::string a = XStatText(p, ev, "annotation");
  std::string op;
  while (!a.empty() && op.empty()) {
    size_t sep = a.rfind("::");
    std::string part = sep == std::string::npos ? a : a.substr(sep + 2);
    a = sep == std::string::npos ? "" : a.substr(0, sep);
    op = part.substr(0, part.find('#'));
  }
  std::string node, type;
  if (!op.empty()) {
    if (XOp(op, &node, &type)) return {node, type};
    return {op, op};
  }
  *linked = false;
  const std::string n = XName(p, ev);
  const std::string kind =
      n.rfind("Memcpy", 0) == 0 || n.rfind("Memset", 0) == 0 ? n : "kernel";
  return {"_unlinked/" + kind, kind};
}

Raw RawXSpace(const std::string& bytes) {
  XSpace space;
  REQUIRE(space.ParseFromString(bytes));
  XNodes nodes;
  std::map<std::string, std::pair<std::string, std::string>> launch;
  for (const XPlane& p : space.planes()) {
    if (p.name() != "/host:CPU") continue;
    for (const XLine& line : p.lines()) {
      RawXSpaceHostLine(p, line, &nodes, &launch);
    }
  }
  // GPU activity on the stream lines; op runs on the "TensorFlow Ops" line.
  for (const XPlane& p : space.planes()) {
    if (p.name().rfind("/device:GPU:", 0) != 0) continue;
    const std::string gpu = p.name().substr(12);
    for (const XLine& line : p.lines()) {
      if (line.name() == "TensorFlow Ops") {
        for (const XEvent& ev : line.events()) {
          std::string node, type;
          if (!XOp(XName(p, ev), &node, &type)) continue;
          XNode& n = nodes[{node, type}];
          ++n.line_runs;
          n.gpu = gpu;
        }
        continue;
      }
      if (line.name().rfind("Stream #", 0) != 0) continue;
      const std::string stream =
          line.name().substr(8, line.name().find('(') - 8);
      for (const XEvent& ev : line.events()) {
        const int64_t dur_ns = XTimeNs(line, ev).second;
        bool linked = false;
        XNode& n = nodes[XStreamOp(p, ev, launch, &linked)];
        if (linked && !n.linked_work && n.gpu.empty()) n.gpu = gpu;
        n.linked_work |= linked;
        if (linked) n.linked_gpus.insert(gpu);
        n.device_ns[kGpuPrefix + gpu + "/stream:all"] += dur_ns;
        n.device_ns[kGpuPrefix + gpu + "/stream:" + stream] += dur_ns;
      }
    }
  }
  // Each op's time on a device is rounded once, as a whole.
  Raw raw;
  OpTable& ops = raw.steps[0];
  for (const auto& [key, n] : nodes) {
    Sums& s = ops[key.second];
    s.cpu += NearestUs(n.cpu_ns);
    s.requested += n.bytes;
    if (n.host_runs > 0) {
      // An op whose kernels all ran on one GPU is that GPU's.
      s.runs += n.host_runs;
      raw.devices[n.linked_gpus.size() == 1
                      ? kGpuPrefix + *n.linked_gpus.begin()
                      : std::string(kCpu)] += NearestUs(n.cpu_ns);
    } else if (n.line_runs > 0 || n.linked_work) {
      s.runs += n.line_runs > 0 ? n.line_runs : 1;
      raw.devices[kGpuPrefix + n.gpu] += 0;  // runs, no time
    }
    for (const auto& [device, ns] : n.device_ns) {
      raw.devices[device] += NearestUs(ns);
      if (device.size() > 11 &&
          device.compare(device.size() - 11, 11, "/stream:all") == 0) {
        s.acc += NearestUs(ns);
      }
    }
  }
  return raw;
}

TEST_CASE("XSpaces: the op view equals the raw sums") {
  for (const char* rel : kXSpaces) {
    if (!testing::HaveCorpusFile(rel)) continue;
    INFO(rel);
    absl::StatusOr<ImportedTrace> t = ImportTrace({Corpus(rel)});
    REQUIRE(t.ok());
    CHECK(t->format == TraceFormat::kXSpace);
    Raw raw = RawXSpace(testing::ReadFile(Corpus(rel)));
    CompareDevices(raw.devices, DeviceMicros(*t));
    Model m = ToModel(*t);
    Compare(raw.Total(), OpViewAllSteps(m));
    AllViewsWork(m, *t);
  }
}

TEST_CASE("XSpace: TF op names keep their scopes; steps are step groups") {
  absl::StatusOr<ImportedTrace> t = ImportTrace({Corpus(kXSpaces[0])});
  REQUIRE(t.ok());
  std::set<std::string> names;
  for (const auto& n : t->graph.node()) names.insert(n.name());
  CHECK(names.count("model/conv2d/Conv2D"));
  CHECK(names.count("IteratorGetNext"));
  REQUIRE(t->steps.size() == 1);
  CHECK(t->steps[0].first == 0);  // the group of the one "Steps" event
}

TEST_CASE("XSpace: python stacks, launches, annotations, step groups") {
  XSpace space;
  XPlane* host = space.add_planes();
  host->set_name("/host:CPU");
  auto md = [](XPlane* p, int64_t id, const std::string& name) {
    (*p->mutable_event_metadata())[id].set_id(id);
    (*p->mutable_event_metadata())[id].set_name(name);
  };
  auto smd = [](XPlane* p, int64_t id, const std::string& name) {
    (*p->mutable_stat_metadata())[id].set_id(id);
    (*p->mutable_stat_metadata())[id].set_name(name);
  };
  md(host, 1, "dense/MatMul:MatMul");
  md(host, 2, "cuLaunchKernel");
  md(host, 3, "MemoryAllocation");
  md(host, 4, "agg:Agg");
  smd(host, 10, "correlation_id");
  smd(host, 11, "allocation_bytes");
  smd(host, 12, "allocator_name");
  smd(host, 13, "GPU_0_bfc");
  smd(host, 14, "group_id");
  XLine* line = host->add_lines();
  line->set_id(42);
  line->set_timestamp_ns(1000);  // 1us
  auto ev = [](XLine* l, int64_t md_id, int64_t off_us, int64_t dur_us) {
    XEvent* e = l->add_events();
    e->set_metadata_id(md_id);
    e->set_offset_ps(off_us * 1000000);
    e->set_duration_ps(dur_us * 1000000);
    return e;
  };
  XEvent* op = ev(line, 1, 10, 20);  // 11..31
  XStat* g = op->add_stats();
  g->set_metadata_id(14);
  g->set_int64_value(5);
  XEvent* launch = ev(line, 2, 12, 2);
  XStat* c = launch->add_stats();
  c->set_metadata_id(10);
  c->set_uint64_value(9);
  XEvent* alloc = ev(line, 3, 15, 0);
  XStat* b = alloc->add_stats();
  b->set_metadata_id(11);
  b->set_int64_value(256);
  XStat* a = alloc->add_stats();
  a->set_metadata_id(12);
  a->set_ref_value(13);
  XEvent* agg = line->add_events();  // aggregated: no time, skipped
  agg->set_metadata_id(4);
  agg->set_num_occurrences(3);

  XPlane* py = space.add_planes();
  py->set_name("/host:python-tracer");
  md(py, 1, "$train.py:7 step");
  md(py, 2, "$keras/layers.py:99 call");
  XLine* pyline = py->add_lines();
  pyline->set_id(42);
  pyline->set_timestamp_ns(0);
  ev(pyline, 1, 0, 100);
  ev(pyline, 2, 5, 50);

  XPlane* gpu = space.add_planes();
  gpu->set_name("/device:GPU:2");
  md(gpu, 1, "gemm_kernel");
  md(gpu, 2, "MemcpyD2H");
  md(gpu, 3, "5");
  smd(gpu, 10, "correlation_id");
  smd(gpu, 11, "annotation");
  smd(gpu, 12, "group_id");
  XLine* stream = gpu->add_lines();
  stream->set_id(7);
  stream->set_name("Stream #7(Compute)");
  stream->set_timestamp_ns(0);
  XEvent* k = ev(stream, 1, 20, 30);
  XStat* kc = k->add_stats();
  kc->set_metadata_id(10);
  kc->set_int64_value(9);
  XEvent* copy = ev(stream, 2, 40, 4);
  XStat* an = copy->add_stats();
  an->set_metadata_id(11);
  an->set_str_value("outer/call:PartitionedCall#id=1#::inner/x:Identity#k=v#");
  ev(stream, 2, 60, 1);  // no annotation, no launch
  XLine* steps = gpu->add_lines();
  steps->set_name("Steps");
  XEvent* s = ev(steps, 3, 0, 100);
  XStat* sg = s->add_stats();
  sg->set_metadata_id(12);
  sg->set_int64_value(5);

  absl::StatusOr<ImportedTrace> t =
      ImportTraceContents({"x.xplane.pb"}, {space.SerializeAsString()});
  REQUIRE(t.ok());
  CHECK(t->format == TraceFormat::kXSpace);
  REQUIRE(t->steps.size() == 1);
  CHECK(t->steps[0].first == 5);
  std::map<std::pair<std::string, std::string>, int64_t> micros;
  const tfcore::NodeExecStats* matmul = nullptr;
  for (const auto& dev : t->steps[0].second.step_stats().dev_stats()) {
    for (const auto& ns : dev.node_stats()) {
      micros[{dev.device(), ns.node_name()}] += ns.op_end_rel_micros();
      // (its kernels ran on GPU 2: its host part is placed there)
      if (dev.device() == std::string(kGpuPrefix) + "2" &&
          ns.node_name() == "dense/MatMul") {
        matmul = &ns;
      }
    }
  }
  const std::string gpu2 = std::string(kGpuPrefix) + "2";
  CHECK(micros[{gpu2, "dense/MatMul"}] == 20);
  CHECK(micros.count({kCpu, "dense/MatMul"}) == 0);
  CHECK(micros[{gpu2 + "/stream:all", "dense/MatMul"}] == 30);
  CHECK(micros[{gpu2 + "/stream:7", "dense/MatMul"}] == 30);
  CHECK(micros[{gpu2 + "/stream:all", "inner/x"}] == 4);
  CHECK(micros[{gpu2 + "/stream:all", "_unlinked/MemcpyD2H"}] == 1);
  REQUIRE(matmul != nullptr);
  CHECK(matmul->all_start_micros() == 11);
  REQUIRE(matmul->memory_size() == 1);
  CHECK(matmul->memory(0).allocator_name() == "GPU_0_bfc");
  CHECK(matmul->memory(0).total_bytes() == 256);
  REQUIRE(t->op_log.log_entries_size() == 1);
  const auto& tr = t->op_log.log_entries(0).code_def().traces();
  REQUIRE(tr.size() == 2);
  CHECK(t->op_log.id_to_string().at(tr[0].file_id()) == "train.py");
  CHECK(tr[0].lineno() == 7);
  CHECK(t->op_log.id_to_string().at(tr[1].function_id()) == "call");
  Model m = ToModel(*t);
  AllViewsWork(m, *t);
  OpTable ops = OpView(m, 5);
  CHECK(ops["MatMul"].acc == 30);
  CHECK(ops["Identity"].acc == 4);
  CHECK(ops["MatMul"].requested == 256);
}

// Host threads are named by their lines; two lines of one name (JAX's two
// python3 threads) stay two threads, each named with its line's id.
TEST_CASE("XSpace: host lines of one name are threads apart") {
  XSpace space;
  XPlane* host = space.add_planes();
  host->set_name("/host:CPU");
  (*host->mutable_event_metadata())[1].set_id(1);
  (*host->mutable_event_metadata())[1].set_name("dense/MatMul:MatMul");
  const struct {
    int64_t id;
    const char* name;
    int64_t dur_us;
  } lines[] = {{11, "python3", 30}, {12, "python3", 5}, {13, "main", 7}};
  for (const auto& l : lines) {
    XLine* line = host->add_lines();
    line->set_id(l.id);
    line->set_name(l.name);
    line->set_timestamp_ns(1000);
    XEvent* e = line->add_events();
    e->set_metadata_id(1);
    e->set_offset_ps(l.id * 100000000);  // apart in time
    e->set_duration_ps(l.dur_us * 1000000);
  }
  const std::string path = testing::TempDir() + "/threads.xplane.pb";
  testing::WriteFile(path, space.SerializeAsString());
  InputPaths in;
  in.trace_path = path;
  absl::StatusOr<std::unique_ptr<LoadedProfile>> loaded = LoadProfile(in);
  REQUIRE(loaded.ok());
  std::map<std::string, int64_t> busy;
  for (const DeviceSummary& d : Summarize((*loaded)->model).devices) {
    for (const LaneSummary& l : d.lanes) {
      if (l.thread) busy[l.name] = l.busy_ns;
    }
  }
  const std::map<std::string, int64_t> want = {
      {"host thread /host:CPU/python3 #11", 30000},
      {"host thread /host:CPU/python3 #12", 5000},
      {"host thread /host:CPU/main", 7000}};
  CHECK(busy == want);
}

}  // namespace
}  // namespace tfprof

namespace tfprof {
namespace {

// An XSpace is decoded in place, a line's events when they are imported:
// a concatenation of copies (protobuf merges them into one message with
// the planes repeated) imports as that message would, and an event that
// does not decode is an error naming the file, not a crash.
TEST_CASE("XSpaces decoded in place: copies add up, a bad event is an error") {
  const std::string rel = kXSpaces[0];
  REQUIRE(testing::HaveCorpusFile(rel));
  const std::string one = testing::ReadFile(Corpus(rel));
  const std::string dir = testing::TempDir();
  testing::WriteFile(dir + "/x3.xplane.pb", one + one + one);
  absl::StatusOr<ImportedTrace> t3 = ImportTrace({dir + "/x3.xplane.pb"});
  REQUIRE(t3.ok());
  // Against the raw sums of protobuf's parse of the concatenation.
  Raw raw = RawXSpace(one + one + one);
  // (Times and bytes: an op with no host event runs once per step on its
  // GPU whatever the number of copies, which the raw count does not model.)
  CompareDevices(raw.devices, DeviceMicros(*t3));
  const OpTable want = raw.Total();
  const OpTable got = OpViewAllSteps(ToModel(*t3));
  CHECK(got.size() == want.size());
  for (const auto& [type, w] : want) {
    INFO("op type " << type);
    REQUIRE(got.count(type) == 1);
    CHECK(got.at(type).cpu == w.cpu);
    CHECK(got.at(type).acc == w.acc);
    CHECK(got.at(type).requested == w.requested);
  }

  // A host plane, then a GPU plane whose stream line has one event (field
  // 4) of two bytes 0x08 0x80: a varint cut short.
  auto field = [](char tag, const std::string& value) {
    return std::string(1, tag) + static_cast<char>(value.size()) + value;
  };
  tensorflow::profiler::XSpace host;
  host.add_planes()->set_name("/host:CPU");
  tensorflow::profiler::XLine line;
  line.set_name("Stream #7(Compute)");
  tensorflow::profiler::XPlane gpu;
  gpu.set_name("/device:GPU:0");
  const std::string bytes =
      host.SerializeAsString() +
      field('\x0a',  // planes = 1
            gpu.SerializeAsString() +
                field('\x1a',  // lines = 3
                      line.SerializeAsString() +
                          field('\x22', std::string("\x08\x80", 2))));
  tensorflow::profiler::XSpace check;
  CHECK_FALSE(check.ParseFromString(bytes));  // protobuf refuses it too
  testing::WriteFile(dir + "/bad.xplane.pb", bytes);
  absl::StatusOr<ImportedTrace> bad = ImportTrace({dir + "/bad.xplane.pb"});
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(
      std::string(bad.status().message()),
      Catch::Contains("bad.xplane.pb") && Catch::Contains("corrupt XSpace"));
}

}  // namespace
}  // namespace tfprof
