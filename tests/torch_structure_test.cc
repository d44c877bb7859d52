// How PyTorch's step structure is imported (profiler/importers/kineto/
// torch_structure): backward's ranges on the autograd threads go under the
// ProfilerStep they ran in, the step thread's wait for them is a
// "backward_wait" of its own, and record_function ranges are the code of the
// line that opened them, not of the profiler's __enter__. Checked on
// hand-made traces and on real ones against their raw events.
#include "profiler/importers/kineto/torch_structure.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "profiler/importers/trace_import.h"
#include "profiler/model/model.h"
#include "profiler/views/views.h"
#include "tests/json_parse.h"
#include "tests/test_util.h"
#include "tests/trace_test_util.h"

namespace tfprof {
namespace {

using trace_internal::BackwardWait;
using trace_internal::Frame;
using trace_internal::NanoRange;
using namespace trace_test;  // NOLINT(build/namespaces): the shared helpers

TEST_CASE("Autograd engine ops are told by their names") {
  using trace_internal::IsAutogradEngineOp;
  CHECK(IsAutogradEngineOp(
      "autograd::engine::evaluate_function: ConvolutionBackward0"));
  CHECK(IsAutogradEngineOp("torch::autograd::AccumulateGrad"));
  CHECK(IsAutogradEngineOp("CudnnBatchNormBackward"));
  CHECK(IsAutogradEngineOp("ReluBackward1"));
  CHECK_FALSE(IsAutogradEngineOp("aten::convolution_backward"));
  CHECK_FALSE(IsAutogradEngineOp("aten::threshold_backward"));
  CHECK_FALSE(IsAutogradEngineOp("Backward"));
  CHECK_FALSE(IsAutogradEngineOp("ProfilerStep#3"));
}

TEST_CASE("The step thread's wait is its own time while backward runs") {
  // Span [0, 1000); its own ops [100, 300) and [650, 680); backward's
  // ranges [400, 600) and [620, 700): the window is [400, 700), of which
  // the step's own time is 300 - 30 = 270, covered by backward for
  // 200 + (650 - 620) + (700 - 680) = 250.
  const BackwardWait w = trace_internal::MeasureBackwardWait(
      {0, 1000}, {{100, 300}, {650, 680}}, {{620, 700}, {400, 600}});
  CHECK(w.start_ns == 400);
  CHECK(w.wait_ns == 270);
  CHECK(w.covered_ns == 250);
  // Backward overhanging the span: the window ends with the span.
  const BackwardWait over =
      trace_internal::MeasureBackwardWait({0, 500}, {}, {{400, 900}});
  CHECK(over.wait_ns == 100);
  CHECK(over.covered_ns == 100);
  CHECK(trace_internal::MeasureBackwardWait({0, 500}, {}, {}).wait_ns == 0);
}

TEST_CASE("record_function's own frames are dropped from a range's stack") {
  auto frames = [](std::vector<std::string> files) {
    std::vector<Frame> out;
    for (const std::string& f : files) out.push_back(Frame{f, "f", 1});
    return out;
  };
  auto files = [](const std::vector<Frame>& fs) {
    std::vector<std::string> out;
    for (const Frame& f : fs) out.push_back(f.file);
    return out;
  };
  // ProfilerStep: <module> -> torch/profiler step() -> __enter__.
  std::vector<Frame> step = frames({"train.py", "/x/torch/profiler/profiler.py",
                                    "/x/torch/autograd/profiler.py"});
  trace_internal::DropProfilerFrames(&step);
  CHECK(files(step) == std::vector<std::string>{"train.py"});
  // A range opened by torch's own code keeps that code's frame.
  std::vector<Frame> opt =
      frames({"train.py", "/x/torch/optim/optimizer.py",
              "/x/torch/autograd/profiler.py", "/x/torch/_ops.py"});
  trace_internal::DropProfilerFrames(&opt);
  CHECK(files(opt) ==
        std::vector<std::string>{"train.py", "/x/torch/optim/optimizer.py"});
  // No profiler frame: unchanged.
  std::vector<Frame> plain = frames({"train.py", "/x/torch/nn/module.py"});
  trace_internal::DropProfilerFrames(&plain);
  CHECK(plain.size() == 2);
}

// A step thread (tid 1) and an autograd thread (tid 2), times in us.
constexpr char kBackwardTrace[] = R"({"traceEvents": [
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1",
   "pid": 1, "tid": 1, "ts": 1000, "dur": 1000},
  {"ph": "X", "cat": "cpu_op", "name": "aten::linear",
   "pid": 1, "tid": 1, "ts": 1100, "dur": 200},
  {"ph": "X", "cat": "cpu_op",
   "name": "autograd::engine::evaluate_function: AddmmBackward0",
   "pid": 1, "tid": 2, "ts": 1400, "dur": 200},
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm",
   "pid": 1, "tid": 2, "ts": 1420, "dur": 160},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel",
   "pid": 1, "tid": 2, "ts": 1430, "dur": 10, "args": {"correlation": 5}},
  {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7,
   "ts": 1450, "dur": 90, "args": {"device": 0, "stream": 7,
                                   "correlation": 5}},
  {"ph": "X", "cat": "cpu_op", "name": "torch::autograd::AccumulateGrad",
   "pid": 1, "tid": 2, "ts": 1650, "dur": 50},
  {"ph": "X", "cat": "cpu_op", "name": "torch::autograd::AccumulateGrad",
   "pid": 1, "tid": 2, "ts": 2500, "dur": 30}
]})";

TEST_CASE("Backward's ranges go under the ProfilerStep they ran in") {
  absl::StatusOr<ImportedTrace> t =
      ImportTraceContents({"backward.json"}, {kBackwardTrace});
  REQUIRE(t.ok());
  std::map<std::string, std::string> ops;
  for (const auto& n : t->graph.node()) ops[n.name()] = n.op();
  const std::string backward = "ProfilerStep/backward";
  CHECK(ops[backward] == "backward_wait");
  CHECK(
      ops[Tf1(backward + "/autograd::engine::evaluate_function: AddmmBackward0"
                         "/aten::mm")] == "aten::mm");
  CHECK(ops[Tf1(backward + "/torch::autograd::AccumulateGrad")] ==
        "torch::autograd::AccumulateGrad");
  // The range after the last step's span stays where it is.
  CHECK(ops.count(Tf1("torch::autograd::AccumulateGrad")) == 1);

  Model m = ToModel(*t);
  Views views(&m, nullptr);
  absl::StatusOr<ResultTree> scope = views.Query(ViewKind::kScope, AllRows(1));
  REQUIRE(scope.ok());
  std::map<std::string, const ResultNode*> rows;
  for (const ResultNode& n : scope->nodes) rows[n.name] = &n;
  REQUIRE(rows.count("ProfilerStep"));
  REQUIRE(rows.count(backward));
  // The window [1400, 1700) is the step's own time (its op ran before):
  // 300us leave the step's own 1000 - 200; backward covers 200 + 50.
  CHECK(rows["ProfilerStep"]->self.cpu_exec_micros == 1000 - 200 - 300);
  CHECK(rows[backward]->self.cpu_exec_micros == 300 - 250);
  CHECK(rows[backward]->total.cpu_exec_micros == 300);
  // The step's total is its span, and backward's kernel is in it.
  CHECK(rows["ProfilerStep"]->total.cpu_exec_micros == 1000);
  CHECK(rows["ProfilerStep"]->total.accelerator_exec_micros == 90);
  bool noted = false;
  for (const std::string& n : t->notes) {
    noted = noted ||
            n.find("2 ranges of the autograd threads") != std::string::npos;
  }
  CHECK(noted);
}

// --- Real traces ---------------------------------------------------------

struct RawRange {
  int64_t tid = 0;
  std::string name;
  double ts = 0, dur = 0;
};

// The CPU-side ranges of a Kineto trace, and the ProfilerStep ones.
std::vector<RawRange> CpuRanges(const std::string& path,
                                std::map<int64_t, RawRange>* steps) {
  testing::JsonValue doc;
  std::string error;
  REQUIRE(testing::ParseJsonFile(path, &doc, &error));
  std::vector<RawRange> out;
  for (const testing::JsonValue& e : doc.at("traceEvents").array) {
    if (!e.Has("ph") || e.at("ph").string != "X" || !e.Has("cat")) continue;
    const std::string& cat = e.at("cat").string;
    if (cat != "cpu_op" && cat != "user_annotation") continue;
    RawRange r;
    const testing::JsonValue& tid = e.at("tid");
    r.tid = tid.kind == testing::JsonValue::kNumber
                ? static_cast<int64_t>(tid.number)
                : std::stoll(tid.string);
    r.name = e.at("name").string;
    r.ts = e.at("ts").number;
    r.dur = e.at("dur").number;
    if (r.name.rfind("ProfilerStep#", 0) == 0) {
      (*steps)[std::stoll(r.name.substr(13))] = r;
    }
    out.push_back(r);
  }
  return out;
}

TEST_CASE("Real backward passes are inside their steps") {
  // The bundled copy of a DDP rank (testdata/ranks), then the corpus'.
  std::vector<std::string> paths = {
      "testdata/ranks/ddp-gloo/ddp2_rank0.pt.trace.json.gz"};
  for (const char* rel : {"gpu-h200-2026/resnet.pt.trace.json.gz",
                          "ddp-gloo-2026/ddp2_rank0.pt.trace.json.gz"}) {
    if (testing::HaveCorpusFile(rel)) paths.push_back(testing::CorpusFile(rel));
  }
  for (const std::string& path : paths) {
    INFO(path);
    std::map<int64_t, RawRange> steps;
    const std::vector<RawRange> ranges = CpuRanges(path, &steps);
    REQUIRE(!steps.empty());
    const int64_t step_tid = steps.begin()->second.tid;
    // The autograd thread's top-level ranges, by step (an independent
    // sweep: a range is top-level when it starts after the last one ended).
    std::vector<RawRange> autograd;
    for (const RawRange& r : ranges) {
      if (r.tid != step_tid &&
          r.name.rfind("autograd::engine::evaluate_function", 0) == 0) {
        autograd.push_back(r);
      }
    }
    REQUIRE(!autograd.empty());
    const int64_t autograd_tid = autograd.front().tid;
    std::vector<RawRange> thread;
    for (const RawRange& r : ranges) {
      if (r.tid == autograd_tid) thread.push_back(r);
    }
    std::sort(thread.begin(), thread.end(), [](const auto& a, const auto& b) {
      return a.ts != b.ts ? a.ts < b.ts : a.dur > b.dur;
    });
    std::map<int64_t, double> root_micros;
    double open_until = -1;
    for (const RawRange& r : thread) {
      if (r.ts < open_until) continue;
      open_until = r.ts + r.dur;
      for (const auto& [n, s] : steps) {
        if (r.ts >= s.ts && r.ts < s.ts + s.dur) root_micros[n] += r.dur;
      }
    }
    absl::StatusOr<ImportedTrace> t = ImportTrace({path});
    REQUIRE(t.ok());
    Model m = ToModel(*t);
    Views views(&m, nullptr);
    for (const auto& [n, s] : steps) {
      INFO("step " << n);
      absl::StatusOr<ResultTree> scope =
          views.Query(ViewKind::kScope, AllRows(n));
      REQUIRE(scope.ok());
      const ResultNode* step = nullptr;
      const ResultNode* backward = nullptr;
      for (size_t c : scope->root().children) {
        const ResultNode& row = scope->nodes[c];
        // No backward range is left outside the step.
        CHECK(row.name.rfind("autograd.engine", 0) == std::string::npos);
        if (row.name == "ProfilerStep") step = &row;
      }
      for (const ResultNode& row : scope->nodes) {
        if (row.name == "ProfilerStep/backward") backward = &row;
      }
      REQUIRE(step != nullptr);
      REQUIRE(backward != nullptr);
      // Backward holds the autograd thread's work, and its total is no more
      // than the step's span.
      CHECK(static_cast<double>(backward->total.cpu_exec_micros) >=
            root_micros[n] - 2.0 * static_cast<double>(thread.size()) /
                                 static_cast<double>(steps.size()));
      CHECK(static_cast<double>(backward->total.cpu_exec_micros) <= s.dur);
      // The step's CPU total stays its span (the wait moved, it was not
      // added twice), within the backward work that overlapped the step
      // thread's own ops.
      CHECK(static_cast<double>(step->total.cpu_exec_micros) ==
            Approx(s.dur).epsilon(0.005));
      // Backward's kernels are in the step; with no other thread
      // launching (no communication threads), every kernel is.
      CHECK(backward->total.accelerator_exec_micros > 0);
      if (path.find("resnet") != std::string::npos) {
        CHECK(step->total.accelerator_exec_micros ==
              scope->root().total.accelerator_exec_micros);
      }
    }
  }
}

TEST_CASE("record_function ranges are the code of the line that opened them") {
  const std::string rel = kKinetoTraces[0];
  if (!testing::HaveCorpusFile(rel)) return;
  absl::StatusOr<ImportedTrace> t = ImportTrace({testing::CorpusFile(rel)});
  REQUIRE(t.ok());
  const auto& strings = t->op_log.id_to_string();
  std::map<std::string, std::string> leaf;
  for (const auto& e : t->op_log.log_entries()) {
    const auto& traces = e.code_def().traces();
    if (traces.empty()) continue;
    const auto& last = traces[traces.size() - 1];
    leaf[e.name()] = strings.at(last.file_id()) + ":" +
                     std::to_string(last.lineno()) + ":" +
                     strings.at(last.function_id());
  }
  // The raw Call stacks of these ranges start with profiler.py's
  // __enter__ (see the trace): their code is the caller's line.
  CHECK(leaf["ProfilerStep"] == "resnet50_profiler_api.py:54:<module>");
  const std::string loader =
      "ProfilerStep/"
      "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__";
  const std::string want = "/torch/utils/data/dataloader.py:518:__next__";
  CHECK(leaf[loader].size() > want.size());
  CHECK(leaf[loader].rfind(want) == leaf[loader].size() - want.size());
  for (const auto& [name, where] : leaf) {
    INFO(name);
    CHECK(where.find("profiler.py") == std::string::npos);
  }
}

}  // namespace
}  // namespace tfprof
