// The PyTorch profiler (Kineto) importer (profiler/importers/kineto): every
// corpus trace's op view per step against sums computed here from the raw
// events, names from nesting, call stacks, and the mapping rules on
// hand-made traces.
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
#include "profiler/views/steps.h"
#include "profiler/views/views.h"
#include "proto/xplane.pb.h"
#include "re2/re2.h"
#include "tests/test_util.h"
#include "tests/trace_test_util.h"

namespace tfprof {
namespace {

using namespace trace_test;  // NOLINT(build/namespaces): the shared helpers

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

// The autograd engine's ops, by name, as PyTorch releases record them.
bool AutogradName(const std::string& name) {
  static const re2::RE2 kBare("[A-Za-z0-9_]+Backward[0-9]*");
  return name.rfind("autograd::engine::evaluate_function", 0) == 0 ||
         (name.size() >= 14 &&
          name.compare(name.size() - 14, 14, "AccumulateGrad") == 0) ||
         re2::RE2::FullMatch(name, kBare);
}

// Backward on the autograd threads, as the importer's docs state it: the
// top-level ranges of a thread that records autograd ops, starting inside a
// ProfilerStep span of the step thread, are that step's; the step thread's
// own time (outside its nested ops) from the first such range's start to
// the last one's end is its wait: it leaves the ProfilerStep's own time, and
// what of it no adopted range covers is a "backward_wait" run. Counted here
// microsecond by microsecond. `wait(step, uncovered)` gets each.
template <typename Ev, typename Wait>
void AdoptBackward(std::vector<Ev>* cpu, Wait wait) {
  std::string step_thread;
  std::set<std::string> autograd;
  for (const Ev& e : *cpu) {
    if (e.memory) continue;
    if (e.name.rfind("ProfilerStep#", 0) == 0 && step_thread.empty()) {
      step_thread = e.thread;
    } else if (AutogradName(e.name)) {
      autograd.insert(e.thread);
    }
  }
  autograd.erase(step_thread);
  for (Ev& p : *cpu) {
    if (p.memory || p.thread != step_thread ||
        p.name.rfind("ProfilerStep#", 0) != 0) {
      continue;
    }
    const int64_t end = p.start + p.dur;
    std::vector<const Ev*> roots;
    for (const Ev& r : *cpu) {
      if (!r.memory && r.parent < 0 && autograd.count(r.thread) &&
          r.start >= p.start && r.start < end) {
        roots.push_back(&r);
      }
    }
    if (roots.empty()) continue;
    int64_t lo = end, hi = p.start;
    for (const Ev* r : roots) {
      lo = std::min(lo, r->start);
      hi = std::max(hi, r->start + r->dur);
    }
    hi = std::min(hi, end);
    std::vector<char> own(static_cast<size_t>(std::max<int64_t>(hi - lo, 0)),
                          1);
    std::vector<char> work(own.size(), 0);
    auto mark = [&](const Ev& e, std::vector<char>* v, char value) {
      for (int64_t t = std::max(e.start, lo); t < std::min(e.start + e.dur, hi);
           ++t) {
        (*v)[static_cast<size_t>(t - lo)] = value;
      }
    };
    const int index = static_cast<int>(&p - cpu->data());
    for (const Ev& c : *cpu) {
      if (!c.memory && c.parent == index) mark(c, &own, 0);
    }
    for (const Ev* r : roots) mark(*r, &work, 1);
    int64_t waited = 0, uncovered = 0;
    for (size_t t = 0; t < own.size(); ++t) {
      waited += own[t];
      uncovered += own[t] && !work[t];
    }
    p.excl -= waited;
    wait(p.step, uncovered);
  }
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
  // PyTorch's profiler merges a record into its parent when it is the
  // parent's only child and has its name: the parent keeps its time and the
  // record's children, memory and kernels; the record counts no run.
  std::vector<int> kids(cpu.size(), 0);
  for (const Ev& e : cpu) {
    if (!e.memory && e.parent >= 0) ++kids[static_cast<size_t>(e.parent)];
  }
  std::vector<bool> merged(cpu.size(), false);
  for (size_t i = 0; i < cpu.size(); ++i) {
    const Ev& e = cpu[i];
    merged[i] = !e.memory && e.parent >= 0 &&
                kids[static_cast<size_t>(e.parent)] == 1 &&
                cpu[static_cast<size_t>(e.parent)].name == e.name;
  }
  auto kept = [&](int i) {
    while (i >= 0 && merged[static_cast<size_t>(i)]) {
      i = cpu[static_cast<size_t>(i)].parent;
    }
    return i;
  };
  for (size_t i = 0; i < cpu.size(); ++i) {
    if (!merged[i]) continue;
    const int into = kept(static_cast<int>(i));
    cpu[static_cast<size_t>(into)].excl += cpu[i].excl;
    owner_bytes[into] += owner_bytes[static_cast<int>(i)];
  }
  Raw raw;
  AdoptBackward(&cpu, [&](int64_t step, int64_t wait) {
    Sums& w = raw.steps[step]["backward_wait"];
    w.cpu += wait;
    ++w.runs;
    raw.devices[kCpu] += wait;
  });
  std::map<std::string, int> by_corr, by_ext;
  for (size_t i = 0; i < cpu.size(); ++i) {
    const Ev& e = cpu[i];
    if (e.memory || merged[i]) continue;
    const int64_t excl = std::max<int64_t>(e.excl, 0);
    Sums& s = raw.steps[e.step][KinetoType(e.name)];
    s.cpu += excl;
    ++s.runs;
    s.requested += owner_bytes[static_cast<int>(i)];
    raw.devices[kCpu] += excl;
    if (KinetoRuntime(e.cat) && !e.corr.empty()) {
      by_corr.emplace(e.corr, static_cast<int>(i));
    }
  }
  for (size_t i = 0; i < cpu.size(); ++i) {
    const Ev& e = cpu[i];
    if (!e.memory && !KinetoRuntime(e.cat) && !e.ext.empty()) {
      by_ext.emplace(e.ext, kept(static_cast<int>(i)));
    }
  }
  for (const Ev& g : gpu) {
    int launcher = -1;
    if (by_corr.count(g.corr)) {
      launcher = by_corr[g.corr];
      while (KinetoRuntime(cpu[launcher].cat) && cpu[launcher].parent >= 0) {
        launcher = cpu[launcher].parent;
      }
      launcher = kept(launcher);
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
  InputPaths in;
  in.trace_path = Corpus(kKinetoTraces[0]);
  absl::StatusOr<std::unique_ptr<LoadedProfile>> loaded = LoadProfile(in);
  REQUIRE(loaded.ok());
  std::set<std::string> names;
  for (const auto& n : (*loaded)->model.nodes()) names.insert(n->name);
  // The events' own names, "::" and all, one level each.
  CHECK(
      names.count("ProfilerStep/aten::conv2d/aten::convolution/"
                  "aten::_convolution/aten::cudnn_convolution"));
  CHECK(names.count("ProfilerStep"));
  CHECK(names.count("ProfilerStep/aten.conv2d") == 0);
  // Steps are the ProfilerStep numbers (the TF1 export's steps too).
  absl::StatusOr<ImportedTrace> t = ImportTrace({Corpus(kKinetoTraces[0])});
  REQUIRE(t.ok());
  std::vector<int64_t> steps;
  for (const auto& [step, rm] : t->steps) steps.push_back(step);
  CHECK(steps == std::vector<int64_t>{5, 6, 7, 8, 9, 10});
  std::vector<int64_t> model_steps((*loaded)->model.steps().begin(),
                                   (*loaded)->model.steps().end());
  CHECK(model_steps == steps);
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
  CHECK(ops[Tf1("ProfilerStep/aten::linear")] == "aten::linear");
  CHECK(ops[Tf1("ProfilerStep/aten::linear/aten::addmm")] == "aten::addmm");
  CHECK(ops[Tf1("ProfilerStep/aten::linear/aten::addmm/cudaLaunchKernel")] ==
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
            ns.node_name() == Tf1("ProfilerStep/aten::linear/aten::addmm")) {
          addmm = &ns;
        }
      }
    }
  }
  CHECK(micros[{kCpu, "ProfilerStep"}] == 100 - 50 + 100 - 20);
  CHECK(micros[{kCpu, Tf1("ProfilerStep/aten::linear")}] == 50 - 30 + 20);
  CHECK(micros[{kCpu, Tf1("ProfilerStep/aten::linear/aten::addmm")}] ==
        30 - 10);
  const std::string gpu0 = std::string(kGpuPrefix) + "0";
  CHECK(micros[{gpu0 + "/stream:all",
                Tf1("ProfilerStep/aten::linear/aten::addmm")}] == 80);
  CHECK(micros[{gpu0 + "/stream:7",
                Tf1("ProfilerStep/aten::linear/aten::addmm")}] == 80);
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
  CHECK(stacks[Tf1("ProfilerStep/aten::linear")] ==
        std::vector<std::string>{"train.py:10:main", "model.py:5:forward"});
  // Float ops per run.
  for (const auto& e : t->op_log.log_entries()) {
    if (e.name() == Tf1("ProfilerStep/aten::linear"))
      CHECK(e.float_ops() == 1000);
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

// The CPU time of each node over every step of a trace.
std::map<std::string, int64_t> CpuMicrosByNode(const ImportedTrace& t) {
  std::map<std::string, int64_t> micros;
  for (const auto& [step, rm] : t.steps) {
    for (const auto& dev : rm.step_stats().dev_stats()) {
      if (dev.device() != kCpu) continue;
      for (const auto& ns : dev.node_stats()) {
        micros[ns.node_name()] += ns.op_end_rel_micros();
      }
    }
  }
  return micros;
}

TEST_CASE("Kineto: the legacy autograd profiler's export and its nesting") {
  // torch.autograd.profiler without Kineto: a bare array, no categories,
  // process "CPU functions". aten::addmm starts inside aten::linear but
  // ends after it: that profiler's key_averages() does not nest it there.
  const std::string events = R"(
    {"name": "aten::linear", "ph": "X", "ts": 1000, "dur": 50,
     "tid": 1, "pid": "CPU functions", "args": {}},
    {"name": "aten::t", "ph": "X", "ts": 1001, "dur": 5,
     "tid": 1, "pid": "CPU functions", "args": {}},
    {"name": "aten::addmm", "ph": "X", "ts": 1010, "dur": 45,
     "tid": 1, "pid": "CPU functions", "args": {}},
    {"name": "aten::relu", "ph": "X", "ts": 1060, "dur": 10,
     "tid": 1, "pid": "CPU functions", "args": {}})";
  absl::StatusOr<ImportedTrace> t =
      ImportTraceContents({"legacy.json"}, {"[" + events + "]"});
  REQUIRE(t.ok());
  CHECK(t->format == TraceFormat::kKineto);
  std::map<std::string, std::string> ops;
  for (const auto& n : t->graph.node()) ops[n.name()] = n.op();
  CHECK(ops == std::map<std::string, std::string>{
                   {Tf1("aten::linear"), "aten::linear"},
                   {Tf1("aten::linear/aten::t"), "aten::t"},
                   {Tf1("aten::addmm"), "aten::addmm"},
                   {Tf1("aten::relu"), "aten::relu"}});
  // Self times as key_averages() counts them: linear loses only aten::t.
  CHECK(CpuMicrosByNode(*t) ==
        std::map<std::string, int64_t>{{Tf1("aten::linear"), 50 - 5},
                                       {Tf1("aten::linear/aten::t"), 5},
                                       {Tf1("aten::addmm"), 45},
                                       {Tf1("aten::relu"), 10}});
  bool noted = false;
  for (const std::string& n : t->notes) {
    noted |= n.find("legacy autograd profiler") != std::string::npos;
  }
  CHECK(noted);

  // The same events as a Kineto trace (categories, an object): the same
  // rule (PyTorch's EventList builds one tree for both), counted in a note.
  std::string kineto = events;
  for (size_t at = 0; (at = kineto.find("\"args\"", at)) != std::string::npos;
       at += 20) {
    kineto.replace(at, 6, "\"cat\": \"cpu_op\", \"args\"");
  }
  absl::StatusOr<ImportedTrace> k =
      ImportTraceContents({"k.json"}, {"{\"traceEvents\": [" + kineto + "]}"});
  REQUIRE(k.ok());
  const std::map<std::string, int64_t> nested = CpuMicrosByNode(*k);
  CHECK(nested == CpuMicrosByNode(*t));
  bool counted = false;
  for (const std::string& n : k->notes) {
    CHECK(n.find("legacy autograd profiler") == std::string::npos);
    counted |= n.find("1 events end after the event open at their start") !=
               std::string::npos;
  }
  CHECK(counted);
}

// PyTorch's profiler merges a record into its parent when it is the
// parent's only child and has its name (aten::div on a tensor calling
// aten::div on a wrapped scalar): one run, the parent's time less its
// grandchildren's. A record with a sibling stays.
TEST_CASE("Kineto: an only child of its own name merges into its parent") {
  const std::string json = R"({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "aten::div", "pid": 1, "tid": 1,
     "ts": 100, "dur": 40, "args": {}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::div", "pid": 1, "tid": 1,
     "ts": 105, "dur": 30, "args": {}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::empty", "pid": 1, "tid": 1,
     "ts": 110, "dur": 4, "args": {}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::mul", "pid": 1, "tid": 1,
     "ts": 200, "dur": 40, "args": {}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::mul", "pid": 1, "tid": 1,
     "ts": 205, "dur": 20, "args": {}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::empty", "pid": 1, "tid": 1,
     "ts": 230, "dur": 5, "args": {}}]})";
  absl::StatusOr<ImportedTrace> t = ImportTraceContents({"dup.json"}, {json});
  REQUIRE(t.ok());
  CHECK(CpuMicrosByNode(*t) ==
        std::map<std::string, int64_t>{{Tf1("aten::div"), 40 - 4},
                                       {Tf1("aten::div/aten::empty"), 4},
                                       {Tf1("aten::mul"), 40 - 20 - 5},
                                       {Tf1("aten::mul/aten::mul"), 20},
                                       {Tf1("aten::mul/aten::empty"), 5}});
  bool noted = false;
  for (const std::string& n : t->notes) {
    noted |= n.find("1 records merged into their parent") != std::string::npos;
  }
  CHECK(noted);
}

// A step's host transfers (gloo ranges) count inside its wall time: HTA's
// CPU-only rank has one ProfilerStep, and most of its all_reduce ranges
// start after it ends. Communication is their union clipped to the step,
// idle the rest of the step, both recomputed here from the raw events.
TEST_CASE("Kineto: host communication counts inside the step") {
  const char* rel =
      "hta/cpu_only_rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz";
  if (!testing::HaveCorpusFile(rel)) return;
  const std::string json = ReadTrace(Corpus(rel));
  simdjson::dom::parser parser;
  Element root;
  REQUIRE(parser.parse(json).get(root) == simdjson::SUCCESS);
  double step_start = -1, step_end = -1;
  std::vector<std::pair<double, double>> gloo;
  for (Element e : root["traceEvents"]) {
    if (Str(e, "ph") != "X") continue;
    const std::string name = Str(e, "name");
    const double ts = Num(e, "ts"), end = ts + Num(e, "dur");
    if (name.rfind("ProfilerStep#", 0) == 0) {
      step_start = ts;
      step_end = end;
    } else if (name.rfind("gloo:", 0) == 0) {
      gloo.emplace_back(ts, end);
    }
  }
  REQUIRE(step_end > step_start);
  std::sort(gloo.begin(), gloo.end());
  double comm = 0, open = 0, close = -1;
  for (auto [a, b] : gloo) {
    a = std::max(a, step_start);
    b = std::min(b, step_end);
    if (a >= b) continue;
    if (a > close) {
      comm += std::max(close - open, 0.0);
      open = a;
      close = b;
    } else {
      close = std::max(close, b);
    }
  }
  comm += std::max(close - open, 0.0);
  InputPaths in;
  in.trace_path = Corpus(rel);
  absl::StatusOr<std::unique_ptr<LoadedProfile>> loaded = LoadProfile(in);
  REQUIRE(loaded.ok());
  const StepTable table = ComputeSteps((*loaded)->model);
  REQUIRE(table.rows.size() == 1);
  const StepRow& row = table.rows[0];
  CHECK(std::abs(row.wall_ns / 1e3 - (step_end - step_start)) < 0.01);
  CHECK(std::abs(row.communication_ns / 1e3 - comm) < 0.01);
  CHECK(row.communication_ns <= row.wall_ns);
  CHECK(std::abs(row.idle_ns / 1e3 - (step_end - step_start - comm)) < 0.01);
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

// A trace whose events all have unusable times says why nothing loaded.
TEST_CASE("Kineto: no usable event says what was skipped") {
  const std::string json = R"({"schemaVersion": 1, "traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1,
     "ts": 100, "dur": -5},
    {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1,
     "ts": 1e300, "dur": 5},
    {"cat": "cpu_op", "name": "aten::mul", "pid": 1, "tid": 1, "ts": 1}]})";
  absl::StatusOr<ImportedTrace> t = ImportTraceContents({"bad.json"}, {json});
  REQUIRE(!t.ok());
  CHECK(t.status().message() ==
        "bad.json: no executions found (no timed events that map to nodes); "
        "2 events without a valid ts/dur, skipped; 1 events without a "
        "\"ph\" string, skipped");
  // Several files: each count names its file.
  absl::StatusOr<ImportedTrace> two =
      ImportTraceContents({"a.json", "b.json"}, {json, json});
  REQUIRE(!two.ok());
  CHECK(two.status().message() ==
        "the trace files: no executions found (no timed events that map to "
        "nodes); a.json: 2 events without a valid ts/dur, skipped; a.json: 1 "
        "events without a \"ph\" string, skipped; b.json: 2 events without "
        "a valid ts/dur, skipped; b.json: 1 events without a \"ph\" string, "
        "skipped");
}

}  // namespace
}  // namespace tfprof
