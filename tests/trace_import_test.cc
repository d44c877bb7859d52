// Trace import (profiler/trace_import.h): every corpus trace is imported,
// loaded into a Model, and the op view's numbers are compared with sums the
// test computes itself from the raw events (JSON re-parsed here with
// simdjson, XSpaces decoded here with protobuf). Also: the timeline and the
// RunMetadata of one TF run agree, and hostile inputs fail cleanly.
#include "profiler/importers/trace_import.h"

#include <simdjson.h>
#include <zlib.h>

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

#include "google/protobuf/text_format.h"
#include "profiler/model/model.h"
#include "profiler/views/views.h"
#include "proto/xplane.pb.h"
#include "re2/re2.h"
#include "tests/test_util.h"

namespace tfprof {
namespace {

constexpr char kCpu[] = "/job:localhost/replica:0/task:0/device:cpu:0";
constexpr char kGpuPrefix[] = "/job:localhost/replica:0/task:0/device:gpu:";

std::string Corpus(const std::string& rel) { return testing::CorpusFile(rel); }

// --- Independent readers ------------------------------------------------

std::string Inflate(const std::string& gz) {
  z_stream zs;
  std::memset(&zs, 0, sizeof(zs));
  REQUIRE(inflateInit2(&zs, 16 + MAX_WBITS) == Z_OK);
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data()));
  zs.avail_in = static_cast<uInt>(gz.size());
  std::string out;
  int rc = Z_OK;
  while (rc == Z_OK) {
    char buf[1 << 15];
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof(buf);
    rc = inflate(&zs, Z_NO_FLUSH);
    out.append(buf, sizeof(buf) - zs.avail_out);
  }
  inflateEnd(&zs);
  REQUIRE(rc == Z_STREAM_END);
  return out;
}

std::string Gzip(const std::string& data) {
  z_stream zs;
  std::memset(&zs, 0, sizeof(zs));
  REQUIRE(deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS,
                       8, Z_DEFAULT_STRATEGY) == Z_OK);
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  std::string out(deflateBound(&zs, static_cast<uLong>(data.size())), '\0');
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  REQUIRE(deflate(&zs, Z_FINISH) == Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

std::string ReadTrace(const std::string& path) {
  std::string data = testing::ReadFile(path);
  if (data.size() > 2 && static_cast<unsigned char>(data[0]) == 0x1f &&
      static_cast<unsigned char>(data[1]) == 0x8b) {
    return Inflate(data);
  }
  return data;
}

// Rounds like the importer documents: to the nearest microsecond, halves
// away from zero.
int64_t RoundUs(double x) { return static_cast<int64_t>(std::llround(x)); }

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(c));
  return s;
}

bool Canonical(const std::string& device) {
  static const RE2 re(R"(.*/(device:)?(cpu|gpu):\d+)");
  return RE2::FullMatch(Lower(device), re);
}

// Small typed accessors on simdjson DOM values.
using Element = simdjson::dom::element;

bool Has(const Element& e, const char* key) {
  return e[key].error() == simdjson::SUCCESS;
}

std::string Str(const Element& e, const char* key) {
  std::string_view s;
  if (e[key].get_string().get(s) != simdjson::SUCCESS) return "";
  return std::string(s);
}

double Num(const Element& e, const char* key) {
  auto v = e[key];
  double d;
  int64_t i;
  uint64_t u;
  if (v.get_int64().get(i) == simdjson::SUCCESS) return static_cast<double>(i);
  if (v.get_uint64().get(u) == simdjson::SUCCESS) return static_cast<double>(u);
  if (v.get_double().get(d) == simdjson::SUCCESS) return d;
  return NAN;
}

// pid / tid / correlation ids are numbers or strings.
std::string IdText(const Element& e, const char* key) {
  auto v = e[key];
  std::string_view s;
  int64_t i;
  uint64_t u;
  if (v.get_string().get(s) == simdjson::SUCCESS) return std::string(s);
  if (v.get_int64().get(i) == simdjson::SUCCESS) return std::to_string(i);
  if (v.get_uint64().get(u) == simdjson::SUCCESS) return std::to_string(u);
  return "";
}

// --- The model side -------------------------------------------------------

struct Sums {
  int64_t cpu = 0;
  int64_t acc = 0;
  int64_t runs = 0;
  int64_t requested = 0;
  bool Empty() const {
    return cpu == 0 && acc == 0 && runs == 0 && requested == 0;
  }
};
using OpTable = std::map<std::string, Sums>;

void DropEmpty(OpTable* t) {
  for (auto it = t->begin(); it != t->end();) {
    it = it->second.Empty() ? t->erase(it) : std::next(it);
  }
}

void Compare(const OpTable& want_in, const OpTable& got_in) {
  OpTable want = want_in, got = got_in;
  DropEmpty(&want);
  DropEmpty(&got);
  std::set<std::string> keys;
  for (const auto& [k, v] : want) keys.insert(k);
  for (const auto& [k, v] : got) keys.insert(k);
  for (const std::string& k : keys) {
    INFO("op type " << k);
    const Sums w = want.count(k) ? want.at(k) : Sums();
    const Sums g = got.count(k) ? got.at(k) : Sums();
    CHECK(g.cpu == w.cpu);
    CHECK(g.acc == w.acc);
    CHECK(g.runs == w.runs);
    CHECK(g.requested == w.requested);
  }
}

Model ToModel(const ImportedTrace& t) {
  Model m;
  // As the loader does: tfprof's 1us minimum is for TensorFlow inputs.
  m.set_source(t.format == TraceFormat::kKineto   ? ProfileSource::kPyTorch
               : t.format == TraceFormat::kXSpace ? ProfileSource::kXSpace
                                                  : ProfileSource::kTensorFlow);
  m.AddGraph(t.graph);
  for (const auto& [step, rm] : t.steps) REQUIRE(m.AddRunMeta(step, rm).ok());
  m.AddOpLog(t.op_log);
  return m;
}

Options AllRows(int64_t step) {
  Options o;
  o.max_depth = 1 << 30;
  o.step = step;
  return o;
}

// The op view of one step: op type -> its row's own numbers.
OpTable OpView(const Model& m, int64_t step) {
  Views views(&m, nullptr);
  absl::StatusOr<ResultTree> r = views.Query(ViewKind::kOp, AllRows(step));
  REQUIRE(r.ok());
  OpTable t;
  for (size_t c : r->root().children) {
    const ResultNode& n = r->nodes[c];
    Sums& s = t[n.name];
    s.cpu += n.self.cpu_exec_micros;
    s.acc += n.self.accelerator_exec_micros;
    s.runs += n.self.run_count;
    s.requested += n.self.requested_bytes;
  }
  return t;
}

// The op view summed over every step.
OpTable OpViewAllSteps(const Model& m) {
  OpTable total;
  for (int64_t step : m.steps()) {
    for (const auto& [k, s] : OpView(m, step)) {
      Sums& t = total[k];
      t.cpu += s.cpu;
      t.acc += s.acc;
      t.runs += s.runs;
      t.requested += s.requested;
    }
  }
  return total;
}

// Microseconds per device in the imported RunMetadata.
std::map<std::string, int64_t> DeviceMicros(const ImportedTrace& t) {
  std::map<std::string, int64_t> out;
  for (const auto& [step, rm] : t.steps) {
    for (const auto& dev : rm.step_stats().dev_stats()) {
      for (const auto& ns : dev.node_stats()) {
        out[dev.device()] += ns.op_end_rel_micros();
      }
    }
  }
  return out;
}

void CompareDevices(const std::map<std::string, int64_t>& want,
                    const std::map<std::string, int64_t>& got) {
  std::set<std::string> keys;
  for (const auto& [k, v] : want) keys.insert(k);
  for (const auto& [k, v] : got) keys.insert(k);
  for (const std::string& k : keys) {
    INFO("device " << k);
    CHECK((want.count(k) ? want.at(k) : -1) == (got.count(k) ? got.at(k) : -1));
  }
}

// Every view answers on an imported trace; the code view when it has stacks.
void AllViewsWork(const Model& m, const ImportedTrace& t) {
  Views views(&m, nullptr);
  for (ViewKind v : {ViewKind::kScope, ViewKind::kGraph, ViewKind::kOp}) {
    INFO(ViewName(v));
    absl::StatusOr<ResultTree> r = views.Query(v, AllRows(-1));
    REQUIRE(r.ok());
    CHECK(r->nodes.size() > 1);
  }
  bool has_code = false;
  for (const auto& e : t.op_log.log_entries()) has_code |= e.has_code_def();
  CHECK(views.Query(ViewKind::kCode, AllRows(-1)).ok() == has_code);
}

// --- TensorFlow timelines: independent sums ----------------------------

struct Raw {
  std::map<int64_t, OpTable> steps;  // step -> op type -> sums
  std::map<std::string, int64_t> devices;
  OpTable Total() const {
    OpTable t;
    for (const auto& [step, ops] : steps) {
      for (const auto& [k, s] : ops) {
        t[k].cpu += s.cpu;
        t[k].acc += s.acc;
        t[k].runs += s.runs;
        t[k].requested += s.requested;
      }
    }
    return t;
  }
};

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

const char* const kTfTimelines[] = {
    "tf1-timelines/ANNA_timeline_01.json",
    "tf1-timelines/conv_relation_timeline.ctf.json",
    "tf1-timelines/dlprof_mnist_xla_timeline_xla.ctf.json",
    "tf1-timelines/dlprof_timeline.ctf.json",
    "tf1-timelines/mnist-xla_timeline.ctf.json",
    "shiyudian-resnet-tf-dist/timeline-1300001.json",
    "yaroslavvb-stuff/dynamic_stitch_gpu_profile.json",
    "yaroslavvb-stuff/timeline.feed.json",
};

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

// --- PyTorch / Kineto: independent sums --------------------------------

bool KinetoGpu(const std::string& cat) {
  return cat == "kernel" || cat == "Kernel" || cat == "gpu_memcpy" ||
         cat == "Memcpy" || cat == "gpu_memset" || cat == "Memset";
}
bool KinetoRuntime(const std::string& cat) {
  return cat == "cuda_runtime" || cat == "Runtime" || cat == "cuda_driver";
}
bool KinetoSkipped(const std::string& cat) {
  return cat == "Trace" || cat == "gpu_user_annotation" || cat == "cuda_sync" ||
         cat == "python_function";
}
std::string KinetoType(const std::string& name) {
  return name.rfind("ProfilerStep#", 0) == 0 ? "ProfilerStep" : name;
}

Raw RawKineto(const std::string& json) {
  simdjson::dom::parser parser;
  Element root;
  REQUIRE(parser.parse(json).get(root) == simdjson::SUCCESS);
  simdjson::dom::array events;
  REQUIRE(root["traceEvents"].get_array().get(events) == simdjson::SUCCESS);
  struct Ev {
    std::string thread, name, cat, corr, ext;
    int64_t start, dur;
    bool memory = false;
    int64_t bytes = 0;
    int parent = -1;
    int64_t excl = 0;
    int64_t step = 0;
  };
  std::vector<Ev> cpu, gpu;
  for (Element e : events) {
    const std::string ph = Str(e, "ph");
    const std::string cat = Str(e, "cat");
    Ev ev;
    ev.name = Str(e, "name");
    ev.cat = cat;
    ev.start = RoundUs(Num(e, "ts"));
    if (ph == "i" && ev.name == "[memory]") {
      ev.memory = true;
      ev.dur = 0;
      ev.bytes = static_cast<int64_t>(Num(e["args"], "Bytes"));
    } else if (ph == "X" && !KinetoSkipped(cat)) {
      ev.dur = RoundUs(Num(e, "dur"));
    } else {
      continue;
    }
    ev.thread = IdText(e, "pid") + "/" + IdText(e, "tid");
    if (Has(e, "args")) {
      ev.corr = IdText(e["args"], "correlation");
      ev.ext = IdText(e["args"], Has(e["args"], "External id") ? "External id"
                                                               : "external id");
    }
    (KinetoGpu(cat) ? gpu : cpu).push_back(ev);
  }
  // Steps start where ProfilerStep#N events start.
  std::vector<std::pair<int64_t, int64_t>> marks;
  for (const Ev& e : cpu) {
    if (e.name.rfind("ProfilerStep#", 0) == 0) {
      marks.emplace_back(e.start, std::stoll(e.name.substr(13)));
    }
  }
  std::sort(marks.begin(), marks.end());
  auto step_at = [&](int64_t t) -> int64_t {
    if (marks.empty()) return 0;
    int64_t s = marks.front().second;
    for (const auto& [start, step] : marks) {
      if (start <= t) s = step;
    }
    return s;
  };
  // Nesting: by thread, then start, longer first, ops before memory.
  std::vector<int> order(cpu.size());
  for (size_t i = 0; i < cpu.size(); ++i) order[i] = static_cast<int>(i);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    const Ev& x = cpu[a];
    const Ev& y = cpu[b];
    return std::make_tuple(x.thread, x.start, -x.dur, x.memory) <
           std::make_tuple(y.thread, y.start, -y.dur, y.memory);
  });
  std::vector<int> stack;
  std::string thread;
  std::map<int, int64_t> owner_bytes;  // op index -> allocated bytes
  for (int i : order) {
    Ev& e = cpu[i];
    if (e.thread != thread) {
      stack.clear();
      thread = e.thread;
    }
    while (!stack.empty() &&
           cpu[stack.back()].start + cpu[stack.back()].dur <= e.start) {
      stack.pop_back();
    }
    if (e.memory) {
      if (!stack.empty() && e.bytes > 0) owner_bytes[stack.back()] += e.bytes;
      continue;
    }
    e.excl = e.dur;
    e.step = step_at(e.start);
    if (!stack.empty()) {
      Ev& p = cpu[stack.back()];
      e.parent = stack.back();
      p.excl -= std::min(e.start + e.dur, p.start + p.dur) - e.start;
    }
    stack.push_back(i);
  }
  Raw raw;
  std::map<std::string, int> by_corr, by_ext;
  for (size_t i = 0; i < cpu.size(); ++i) {
    const Ev& e = cpu[i];
    if (e.memory) continue;
    const int64_t excl = std::max<int64_t>(e.excl, 0);
    Sums& s = raw.steps[e.step][KinetoType(e.name)];
    s.cpu += excl;
    ++s.runs;
    s.requested += owner_bytes[static_cast<int>(i)];
    raw.devices[kCpu] += excl;
    if (KinetoRuntime(e.cat) && !e.corr.empty()) {
      by_corr.emplace(e.corr, static_cast<int>(i));
    }
    if (!KinetoRuntime(e.cat) && !e.ext.empty()) {
      by_ext.emplace(e.ext, static_cast<int>(i));
    }
  }
  for (const Ev& g : gpu) {
    int launcher = -1;
    if (by_corr.count(g.corr)) {
      launcher = by_corr[g.corr];
      while (KinetoRuntime(cpu[launcher].cat) && cpu[launcher].parent >= 0) {
        launcher = cpu[launcher].parent;
      }
    } else if (by_ext.count(g.ext)) {
      launcher = by_ext[g.ext];
    }
    const std::string type =
        launcher >= 0 ? KinetoType(cpu[launcher].name) : g.cat;
    const int64_t step = launcher >= 0 ? cpu[launcher].step : step_at(g.start);
    raw.steps[step][type].acc += g.dur;
  }
  return raw;
}

// GPU activity per device, straight from the events' args.
std::map<std::string, int64_t> RawKinetoGpuDevices(const std::string& json) {
  simdjson::dom::parser parser;
  Element root;
  REQUIRE(parser.parse(json).get(root) == simdjson::SUCCESS);
  std::map<std::string, int64_t> out;
  for (Element e : root["traceEvents"].get_array()) {
    if (Str(e, "ph") != "X" || !KinetoGpu(Str(e, "cat"))) continue;
    const std::string gpu = IdText(e["args"], "device");
    const int64_t dur = RoundUs(Num(e, "dur"));
    out[kGpuPrefix + gpu + "/stream:all"] += dur;
    out[kGpuPrefix + gpu + "/stream:" + IdText(e["args"], "stream")] += dur;
  }
  return out;
}

const char* const kKinetoTraces[] = {
    "pytorch-kineto/worker0.1623143089861.pt.trace.json.gz",
    "hta/alexnet_benchmark_result_2869224_1695835535_trace.json.gz",
    "hta/cpu_only_rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz",
};

TEST_CASE("PyTorch traces: per step, the op view equals the raw sums") {
  for (const char* rel : kKinetoTraces) {
    if (!testing::HaveCorpusFile(rel)) continue;
    INFO(rel);
    absl::StatusOr<ImportedTrace> t = ImportTrace({Corpus(rel)});
    REQUIRE(t.ok());
    CHECK(t->format == TraceFormat::kKineto);
    const std::string json = ReadTrace(Corpus(rel));
    Raw raw = RawKineto(json);
    // Devices: the host CPU gets the exclusive times, every GPU its kernels
    // and copies on stream:all and on their streams.
    std::map<std::string, int64_t> want = RawKinetoGpuDevices(json);
    want[kCpu] = raw.devices[kCpu];
    CompareDevices(want, DeviceMicros(*t));
    Model m = ToModel(*t);
    std::set<int64_t> raw_steps;
    for (const auto& [step, ops] : raw.steps) raw_steps.insert(step);
    CHECK(m.steps() == raw_steps);
    for (int64_t step : m.steps()) {
      INFO("step " << step);
      Compare(raw.steps[step], OpView(m, step));
    }
    AllViewsWork(m, *t);
  }
}

TEST_CASE("PyTorch traces: names are the nesting of events") {
  absl::StatusOr<ImportedTrace> t = ImportTrace({Corpus(kKinetoTraces[0])});
  REQUIRE(t.ok());
  std::set<std::string> names;
  for (const auto& n : t->graph.node()) {
    names.insert(n.name());
    CHECK(n.name().find(':') == std::string::npos);
  }
  CHECK(
      names.count("ProfilerStep/aten.conv2d/aten.convolution/"
                  "aten._convolution/aten.cudnn_convolution"));
  CHECK(names.count("ProfilerStep"));
  // Steps are the ProfilerStep numbers.
  std::vector<int64_t> steps;
  for (const auto& [step, rm] : t->steps) steps.push_back(step);
  CHECK(steps == std::vector<int64_t>{5, 6, 7, 8, 9, 10});
}

TEST_CASE("PyTorch call stacks become the code view") {
  absl::StatusOr<ImportedTrace> t = ImportTrace({Corpus(kKinetoTraces[0])});
  REQUIRE(t.ok());
  REQUIRE(t->op_log.log_entries_size() > 0);
  bool found = false;
  for (const auto& [id, s] : t->op_log.id_to_string()) {
    found |= s == "resnet50_profiler_api.py";
  }
  CHECK(found);
  Model m = ToModel(*t);
  Views views(&m, nullptr);
  for (int64_t step : m.steps()) {
    INFO("step " << step);
    absl::StatusOr<ResultTree> code =
        views.Query(ViewKind::kCode, AllRows(step));
    REQUIRE(code.ok());
    // The code view accounts exactly the nodes that have a call stack.
    std::set<std::string> with_code;
    for (const auto& e : t->op_log.log_entries()) {
      if (e.has_code_def()) with_code.insert(e.name());
    }
    absl::StatusOr<ResultTree> scope =
        views.Query(ViewKind::kScope, AllRows(step));
    REQUIRE(scope.ok());
    int64_t want = 0;
    for (const ResultNode& n : scope->nodes) {
      if (n.graph_node != nullptr && with_code.count(n.name)) {
        want += n.self.exec_micros;
      }
    }
    CHECK(code->root().total.exec_micros == want);
    CHECK(want > 0);
  }
}

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
      s.runs += n.host_runs;
      raw.devices[kCpu] += NearestUs(n.cpu_ns);
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

const char* const kXSpaces[] = {
    "aoberai-chess-engine/train/plugins/profile/2021_06_16_00_30_02/"
    "aoberai.xplane.pb",
    "tensorflow-profiler-demo/GPU-multi-worker/34.83.195.179_6003.xplane.pb",
};

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
    CHECK(msg.find("expected") != std::string::npos);
    CHECK(msg.find('\n') == std::string::npos);
  }
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

TEST_CASE("Missing files and directories are errors naming them") {
  absl::StatusOr<ImportedTrace> t = ImportTrace({"/nonexistent/trace.json"});
  REQUIRE_FALSE(t.ok());
  CHECK(std::string(t.status().message()).find("/nonexistent/trace.json") !=
        std::string::npos);
  CHECK_FALSE(ImportTrace({testing::CorpusDir()}).ok());
  CHECK_FALSE(ImportTrace({}).ok());
}

// --- Mapping rules on small hand-made traces ---------------------------

TEST_CASE("Kineto: exclusive times, launches, memory, stacks, steps") {
  const std::string json = R"({"schemaVersion": 1, "traceEvents": [
    {"ph": "X", "cat": "python_function", "name": "train.py(10): main",
     "pid": 1, "tid": 1, "ts": 0, "dur": 300},
    {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3",
     "pid": 1, "tid": 1, "ts": 0, "dur": 100},
    {"ph": "X", "cat": "python_function", "name": "model.py(5): forward",
     "pid": 1, "tid": 1, "ts": 5, "dur": 60},
    {"ph": "X", "cat": "cpu_op", "name": "aten::linear",
     "pid": 1, "tid": 1, "ts": 10, "dur": 50, "args": {"flops": 1000}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::addmm",
     "pid": 1, "tid": 1, "ts": 20, "dur": 30},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel",
     "pid": 1, "tid": 1, "ts": 25, "dur": 10, "args": {"correlation": 77}},
    {"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": 22,
     "args": {"Device Type": 1, "Device Id": 0, "Bytes": 4096,
              "Total Allocated": 8192}},
    {"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": 23,
     "args": {"Device Type": 1, "Device Id": 0, "Bytes": -1024}},
    {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": "stream 7",
     "ts": 40, "dur": 80, "args": {"device": 0, "stream": 7,
                                    "correlation": 77}},
    {"ph": "X", "cat": "kernel", "name": "orphan", "pid": 0, "tid": 7,
     "ts": 150, "dur": 5, "args": {"device": 1, "stream": 9,
                                   "correlation": 12345}},
    {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#4",
     "pid": 1, "tid": 1, "ts": 100, "dur": 100},
    {"ph": "X", "cat": "cpu_op", "name": "aten::linear",
     "pid": 1, "tid": 1, "ts": 110, "dur": 20, "args": {"flops": 1000}}
  ]})";
  absl::StatusOr<ImportedTrace> t = ImportTraceContents({"k.json"}, {json});
  REQUIRE(t.ok());
  std::map<std::string, std::string> ops;
  for (const auto& n : t->graph.node()) ops[n.name()] = n.op();
  CHECK(ops["ProfilerStep"] == "ProfilerStep");
  CHECK(ops["ProfilerStep/aten.linear"] == "aten::linear");
  CHECK(ops["ProfilerStep/aten.linear/aten.addmm"] == "aten::addmm");
  CHECK(ops["ProfilerStep/aten.linear/aten.addmm/cudaLaunchKernel"] ==
        "cudaLaunchKernel");
  CHECK(ops["_unlinked/kernel"] == "kernel");
  REQUIRE(t->steps.size() == 2);
  CHECK(t->steps[0].first == 3);
  CHECK(t->steps[1].first == 4);

  // Exclusive times and where each execution went.
  std::map<std::pair<std::string, std::string>, int64_t> micros;
  const tfcore::NodeExecStats* addmm = nullptr;
  for (const auto& [step, rm] : t->steps) {
    for (const auto& dev : rm.step_stats().dev_stats()) {
      for (const auto& ns : dev.node_stats()) {
        micros[{dev.device(), ns.node_name()}] += ns.op_end_rel_micros();
        if (dev.device() == kCpu &&
            ns.node_name() == "ProfilerStep/aten.linear/aten.addmm") {
          addmm = &ns;
        }
      }
    }
  }
  CHECK(micros[{kCpu, "ProfilerStep"}] == 100 - 50 + 100 - 20);
  CHECK(micros[{kCpu, "ProfilerStep/aten.linear"}] == 50 - 30 + 20);
  CHECK(micros[{kCpu, "ProfilerStep/aten.linear/aten.addmm"}] == 30 - 10);
  const std::string gpu0 = std::string(kGpuPrefix) + "0";
  CHECK(micros[{gpu0 + "/stream:all", "ProfilerStep/aten.linear/aten.addmm"}] ==
        80);
  CHECK(micros[{gpu0 + "/stream:7", "ProfilerStep/aten.linear/aten.addmm"}] ==
        80);
  CHECK(
      micros[{std::string(kGpuPrefix) + "1/stream:all", "_unlinked/kernel"}] ==
      5);

  // Memory of addmm: +4096 then -1024 on GPU_0.
  REQUIRE(addmm != nullptr);
  REQUIRE(addmm->memory_size() == 1);
  const auto& mem = addmm->memory(0);
  CHECK(mem.allocator_name() == "GPU_0");
  CHECK(mem.total_bytes() == 4096);
  CHECK(mem.peak_bytes() == 4096);
  CHECK(mem.live_bytes() == 3072);
  CHECK(mem.allocator_bytes_in_use() == 8192);
  CHECK(mem.allocation_records_size() == 2);

  // Call stacks: the enclosing python_function events, outermost first.
  std::map<std::string, std::vector<std::string>> stacks;
  for (const auto& e : t->op_log.log_entries()) {
    for (const auto& tr : e.code_def().traces()) {
      stacks[e.name()].push_back(t->op_log.id_to_string().at(tr.file_id()) +
                                 ":" + std::to_string(tr.lineno()) + ":" +
                                 t->op_log.id_to_string().at(tr.function_id()));
    }
  }
  CHECK(stacks["ProfilerStep/aten.linear"] ==
        std::vector<std::string>{"train.py:10:main", "model.py:5:forward"});
  // Float ops per run.
  for (const auto& e : t->op_log.log_entries()) {
    if (e.name() == "ProfilerStep/aten.linear") CHECK(e.float_ops() == 1000);
  }
  Model m = ToModel(*t);
  AllViewsWork(m, *t);
  // Timestamps start at 0 here: shifted so that tfprof counts them.
  bool shifted = false;
  for (const std::string& n : t->notes) {
    shifted |= n.find("timestamps shifted") != std::string::npos;
  }
  CHECK(shifted);
  CHECK(OpView(m, 3)["aten::linear"].runs == 1);
  CHECK(OpView(m, 4)["aten::linear"].runs == 1);
}

TEST_CASE("Kineto: the older Call stack args give stacks") {
  const std::string json = R"({"traceEvents": [
    {"ph": "X", "cat": "Operator", "name": "aten::add", "pid": 1,
     "tid": "1", "ts": 1, "dur": 2, "args": {"Call stack":
     "lib/ops.py(3): add;main.py(9): <module>"}}]})";
  absl::StatusOr<ImportedTrace> t = ImportTraceContents({"old.json"}, {json});
  REQUIRE(t.ok());
  CHECK(t->format == TraceFormat::kKineto);
  REQUIRE(t->op_log.log_entries_size() == 1);
  const auto& tr = t->op_log.log_entries(0).code_def().traces();
  REQUIRE(tr.size() == 2);
  CHECK(t->op_log.id_to_string().at(tr[0].file_id()) == "main.py");
  CHECK(tr[0].lineno() == 9);
  CHECK(t->op_log.id_to_string().at(tr[1].function_id()) == "add");
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
  o.select = {"bytes"};
  absl::StatusOr<ResultTree> r = views.Query(ViewKind::kScope, o);
  REQUIRE(r.ok());
  bool output_seen = false;
  for (const ResultNode& n : r->nodes) {
    if (n.name == "mm") output_seen = n.self.output_bytes == 512;
  }
  CHECK(output_seen);
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
      if (dev.device() == kCpu && ns.node_name() == "dense/MatMul") {
        matmul = &ns;
      }
    }
  }
  const std::string gpu2 = std::string(kGpuPrefix) + "2";
  CHECK(micros[{kCpu, "dense/MatMul"}] == 20);
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
