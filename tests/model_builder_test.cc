// Unit tests of the model-building API (profiler/model/model_builder.h):
// each record type on a small hand-made model with figures worked out by
// hand, and the trace importers' direct writes checked against the same
// trace read through its TF1 export (GraphDef + RunMetadata + OpLogProto).
#include "profiler/model/model_builder.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "profiler/importers/common/trace_builder.h"
#include "profiler/importers/trace_import.h"
#include "profiler/load/loader.h"
#include "tests/test_util.h"

namespace tfprof {
namespace {

constexpr char kCpu[] = "/job:localhost/replica:0/task:0/device:CPU:0";
constexpr char kGpu[] = "/job:localhost/replica:0/task:0/device:GPU:0";
constexpr char kGpuAll[] =
    "/job:localhost/replica:0/task:0/device:GPU:0/stream:all";
constexpr char kGpuStream[] =
    "/job:localhost/replica:0/task:0/device:GPU:0/stream:7";

ExecRecord Exec(int64_t start, int64_t duration) {
  ExecRecord e;
  e.start_micros = start;
  e.duration_micros = duration;
  e.all_end_rel_micros = duration;
  return e;
}

TEST_CASE("ModelBuilder: nodes, inputs with slots and control inputs") {
  Model m;
  ModelBuilder b(&m);
  bool created = false;
  GraphNode* a = b.Node("a", "Const", &created);
  CHECK(created);
  CHECK(b.Node("a", "Other", &created) == a);
  CHECK_FALSE(created);
  CHECK(a->op == "Const");
  GraphNode* mm = b.Node("mm", "MatMul");
  // TensorFlow keeps one slot per input name: the last one given.
  b.SetInputs(mm, {"a", "b:1", "^a", "b:2"});
  REQUIRE(mm->inputs.size() == 4);
  CHECK(mm->inputs[0].node == a);
  CHECK(mm->inputs[0].slot == 0);
  CHECK(*mm->inputs[1].name == "b");
  CHECK(mm->inputs[1].node == nullptr);  // no node "b" (yet)
  CHECK(mm->inputs[1].slot == 2);
  CHECK(mm->inputs[2].node == a);
  CHECK(mm->inputs[3].index == 3);
  // A node keeps its first inputs.
  b.SetInputs(mm, {"c"});
  CHECK(mm->inputs.size() == 4);
  CHECK(m.size() == 2);
  // Only ":<digits>" at the end is an output slot: a trace's names keep
  // their other ':'.
  GraphNode* aten = b.Node("ProfilerStep/aten::mm", "aten::mm");
  GraphNode* scoped = b.Node("f/enc:0/dot.1", "dot");
  GraphNode* user = b.Node("user", "add");
  b.SetInputs(user, {"ProfilerStep/aten::mm", "f/enc:0/dot.1:2", "a:3"});
  REQUIRE(user->inputs.size() == 3);
  CHECK(user->inputs[0].node == aten);
  CHECK(user->inputs[0].slot == 0);
  CHECK(user->inputs[1].node == scoped);
  CHECK(user->inputs[1].slot == 2);
  CHECK(user->inputs[2].node == a);
  CHECK(user->inputs[2].slot == 3);
}

TEST_CASE("ModelBuilder: attributes, float ops, op types, call stacks") {
  Model m;
  ModelBuilder b(&m);
  GraphNode* n = b.Node("fusion.1", "fusion");
  b.SetStringAttrs(n, {{kXlaCategoryAttr, "fusion(kLoop)"}, {"k", "v"}});
  std::optional<tfcore::AttrValue> cat = n->FindAttr(kXlaCategoryAttr);
  REQUIRE(cat.has_value());
  CHECK(cat->s() == "fusion(kLoop)");
  CHECK(n->FindAttr("k")->s() == "v");
  b.SetFloatOps(n, 1000);
  CHECK(n->float_ops == 1000);
  b.SetFloatOps(n, 0);  // unknown: kept
  CHECK(n->float_ops == 1000);
  b.AddOpType(n, "extra");
  CHECK(n->op_types.count("extra") == 1);
  CHECK(n->op_types.count("fusion") == 1);

  CHECK_FALSE(m.has_code_traces());
  b.SetCode(n, {{"train.py", "main", 10}, {"model.py", "forward", 42}});
  CHECK(m.has_code_traces());
  std::vector<CodeFrame> stack = m.CallStack(*n);
  REQUIRE(stack.size() == 2);
  CHECK(stack[0].file == "train.py");
  CHECK(stack[0].function == "main");
  CHECK(stack[0].lineno == 10);
  CHECK(stack[1].file == "model.py");
  CHECK(stack[1].lineno == 42);
  // Strings are shared between stacks; the first stack is kept.
  GraphNode* other = b.Node("other", "Add");
  b.SetCode(other, {{"train.py", "step", 3}});
  b.SetCode(other, {{"x.py", "y", 1}});
  CHECK(m.CallStack(*other)[0].function == "step");
  CHECK(m.id_to_string().size() == 5);  // train.py main model.py forward step
}

TEST_CASE("ModelBuilder: executions by device kind, runs and spans") {
  Model m;
  m.set_source(ProfileSource::kPyTorch);
  ModelBuilder b(&m);
  GraphNode* n = b.Node("mm", "MatMul");
  const int32_t cpu = b.Device(kCpu);
  const int32_t gpu = b.Device(kGpu);
  const int32_t all = b.Device(kGpuAll);
  const int32_t stream = b.Device(kGpuStream);
  CHECK(b.Device(kCpu) == cpu);  // classified once
  b.BeginStep(3);
  b.AddExec(n, cpu, Exec(100, 10));
  b.AddExec(n, cpu, Exec(200, 5));
  b.AddExec(n, gpu, Exec(300, 7));  // a second canonical device: dropped
  b.AddExec(n, all, Exec(120, 40));
  b.AddExec(n, stream, Exec(120, 40));
  b.AddExec(nullptr, cpu, Exec(50, 1));  // bookkeeping: the span only
  b.EndStep();

  REQUIRE(n->execs.size() == 1);
  const StepExec& e = n->execs[0];
  CHECK(e.step == 3);
  CHECK(e.run_count == 2);
  CHECK(e.cpu_micros == 15);
  CHECK(e.accelerator_micros == 40);
  CHECK(n->canonical_device() == absl::AsciiStrToLower(kCpu));
  CHECK(m.steps() == std::set<int64_t>{3});
  CHECK(m.run_spans().at(3).start_micros == 50);
  CHECK(m.run_spans().at(3).end_micros == 307);  // the dropped one too
  const ExecDetail d = m.Detail(e);
  CHECK(d.all_start_micros == 100);
  CHECK(d.latest_end_micros == 205);
  REQUIRE(d.other_execs.size() == 1);  // the single stream
  CHECK(d.other_execs[0].times.size() == 1);
  CHECK(d.devices.size() == 3);  // cpu, stream:all, stream:7
  CHECK_FALSE(m.miss_accelerator_stream());
  CHECK(m.run_coverage() == Approx(1.0));
}

// A device an importer has classified keeps its kind: a lane named as no
// TensorFlow device is, told to be the aggregated stream, counts
// accelerator time; the same name classified here counts none.
TEST_CASE("ModelBuilder: a device's kind as the importer gave it") {
  constexpr char kLane[] = "/job:localhost/replica:0/task:0/device:GPU:0/all";
  REQUIRE(KindOfDevice(absl::AsciiStrToLower(kLane)) == DeviceKind::kOther);
  for (const bool told : {true, false}) {
    Model m;
    m.set_source(ProfileSource::kPyTorch);
    ModelBuilder b(&m);
    GraphNode* n = b.Node("mm", "MatMul");
    const int32_t cpu = b.Device(kCpu);
    const int32_t lane =
        told ? b.Device(kLane, DeviceKind::kStreamAll) : b.Device(kLane);
    b.BeginStep(1);
    b.AddExec(n, cpu, Exec(100, 10));
    b.AddExec(n, lane, Exec(105, 30));
    b.EndStep();
    REQUIRE(n->execs.size() == 1);
    CHECK(n->execs[0].accelerator_micros == (told ? 30 : 0));
    CHECK(n->execs[0].cpu_micros == 10);
  }
}

// A TensorFlow stream record's kernel names its launching node: the part
// of a RunMetadata's "<node>:<OpType>" before the ':', or a node's own
// name whole (a TF timeline's node may be named with a ':').
TEST_CASE("ModelBuilder: stream work names its node whole") {
  Model m;
  m.set_source(ProfileSource::kTensorFlow);
  ModelBuilder b(&m);
  GraphNode* n = b.Node("scope/foo:Bar", "Bar");
  const int32_t stream = b.Device(kGpuStream);
  b.BeginStep(1);
  ExecRecord from_node = Exec(100, 10);
  b.AddExec(n, stream, from_node);
  ExecRecord from_raw = Exec(200, 10);
  from_raw.raw_name = "scope/foo:Bar";
  b.AddExec(n, stream, from_raw);
  b.EndStep();
  std::vector<std::string> ops;
  for (const DeviceWork& w : m.activity().work()) {
    ops.push_back(m.activity().String(w.op));
  }
  CHECK(ops == std::vector<std::string>{"scope/foo:Bar", "scope/foo"});
}

TEST_CASE("ModelBuilder: a zero-length TensorFlow op counts 1us") {
  Model tf;
  ModelBuilder b(&tf);
  GraphNode* n = b.Node("n", "Add");
  b.BeginStep(0);
  b.AddExec(n, b.Device(kCpu), Exec(10, 0));
  b.EndStep();
  CHECK(n->execs[0].cpu_micros == 1);

  Model torch;
  torch.set_source(ProfileSource::kPyTorch);
  ModelBuilder t(&torch);
  GraphNode* p = t.Node("n", "Add");
  t.BeginStep(0);
  t.AddExec(p, t.Device(kCpu), Exec(10, 0));
  t.EndStep();
  CHECK(p->execs[0].cpu_micros == 0);
}

TEST_CASE("ModelBuilder: memory of an execution on its own device") {
  Model m;
  ModelBuilder b(&m);
  GraphNode* n = b.Node("conv", "Conv2D");
  ExecMemoryRecord mem;
  AllocatorRecord& gpu = mem.allocators.emplace_back();
  gpu.allocator = "GPU_0_bfc";
  gpu.total_bytes = 4096;
  gpu.peak_bytes = 3072;
  gpu.live_bytes = 1024;
  gpu.bytes_in_use = 9000;
  gpu.allocations = {{101, 4096}, {105, -3072}};
  AllocatorRecord& host = mem.allocators.emplace_back();
  host.allocator = "cpu";
  host.total_bytes = 100;
  host.peak_bytes = 100;
  host.allocations = {{102, 100}};
  mem.outputs = {{1, 512, 77}, {0, 256, 88}};
  mem.has_memory_stats = true;
  mem.temp_bytes = 10;
  mem.persistent_bytes = 20;
  ExecRecord e = Exec(100, 10);
  e.memory = &mem;
  b.BeginStep(0);
  b.AddExec(n, b.Device(kGpu), e);
  ExecRecord elsewhere = Exec(100, 10);
  elsewhere.memory = &mem;  // not the canonical device: no memory
  b.AddExec(n, b.Device(kGpuAll), elsewhere);
  b.EndStep();

  const StepExec& s = n->execs[0];
  // requested: allocators' totals + persistent + temp; peak likewise;
  // residual: live + persistent.
  CHECK(s.requested_bytes == 4096 + 100 + 20 + 10);
  CHECK(s.peak_bytes == 3072 + 100 + 20 + 10);
  CHECK(s.residual_bytes == 1024 + 20);
  CHECK(s.output_bytes == 512 + 256);
  const ExecDetail d = m.Detail(s);
  REQUIRE(d.memory_execs.size() == 1);
  const MemoryExec& me = d.memory_execs[0];
  CHECK(me.memory_micros == 110);
  CHECK(me.accelerator_temp_bytes == 10);  // placed on a GPU
  CHECK(me.accelerator_persistent_bytes == 20);
  CHECK(me.host_temp_bytes == 0);
  CHECK(me.allocator_bytes_in_use == 9000);
  REQUIRE(me.output_memory.size() == 2);
  CHECK(me.output_memory[0].slot == 0);  // by slot
  CHECK(me.output_memory[0].ptr == 88);
  // Only GPU allocators' records are kept.
  REQUIRE(d.allocations.size() == 2);
  CHECK(d.allocations[1].alloc_bytes == -3072);
}

TEST_CASE("ModelBuilder: a GPU placement without stream:all misses streams") {
  Model m;
  ModelBuilder b(&m);
  GraphNode* n = b.Node("n", "Add");
  b.BeginStep(0);
  b.AddExec(n, b.Device(kGpu), Exec(10, 3));
  b.EndStep();
  CHECK(m.miss_accelerator_stream());
}

TEST_CASE("ModelBuilder: node by node, flushed, work kept in step order") {
  Model m;  // TensorFlow input: stream records are accelerator work
  ModelBuilder b(&m);
  GraphNode* x = b.Node("x", "Conv2D");
  GraphNode* y = b.Node("y", "MatMul");
  const int32_t stream = b.Device(kGpuStream);
  const int32_t gpu = b.Device(kGpu);
  b.BeginStep(0);
  // The step's order: y's kernel, then x's, both starting at 50.
  ExecRecord xk = Exec(50, 4), yk = Exec(50, 6);
  xk.place = 1;
  yk.place = 0;
  b.AddExec(x, gpu, Exec(40, 2));
  b.AddExec(x, stream, xk);
  b.FlushNode(x);
  CHECK(x->execs[0].detail != nullptr);  // stored before the step ends
  CHECK(x->execs[0].cpu_micros == 2);
  b.AddExec(y, stream, yk);
  b.EndStep();
  const std::vector<DeviceWork>& work = m.activity().work();
  REQUIRE(work.size() == 2);
  CHECK(m.activity().String(work[0].op) == "y");
  CHECK(m.activity().String(work[1].op) == "x");
  CHECK(work[0].duration_ns == 6000);
}

// --- The importers' direct writes against their TF1 export

// Two kernels that start together on two streams, given node by node in the
// opposite order to the step's device order: the work keeps the order the
// RunMetadata export gives it.
TEST_CASE("TraceBuilder: node by node, work in the RunMetadata order") {
  const auto build = [](trace_internal::TraceBuilder* t) {
    const int32_t a = t->Node("a", "Conv2D");  // node 0
    const int32_t b = t->Node("b", "MatMul");  // node 1
    const std::string s2 = trace_internal::GpuStreamDevice(0, "2");
    const std::string s1 = trace_internal::GpuStreamDevice(0, "1");
    t->AddExec(0, s2, b, 100000, 5000);  // stream 2 is the step's first
    t->AddExec(0, s1, a, 100000, 7000);
    t->AddExec(0, kCpu, a, 90000, 1000);
    t->AddExec(0, kCpu, b, 95000, 1000);
    t->Finish(TraceFormat::kTfTimeline);
  };
  trace_internal::TraceBuilder direct_trace;
  build(&direct_trace);
  Model direct;
  ModelBuilder builder(&direct);
  direct_trace.WriteNodes(&builder);
  direct_trace.WriteSteps(&builder);

  trace_internal::TraceBuilder export_trace;
  build(&export_trace);
  Model via_tf1;
  via_tf1.AddGraph(export_trace.TakeGraph());
  int64_t step = 0;
  tfcore::RunMetadata rm;
  while (export_trace.NextStep(&step, &rm)) {
    REQUIRE(via_tf1.AddRunMeta(step, rm).ok());
  }
  const auto ops = [](const Model& m) {
    std::vector<std::string> out;
    for (const DeviceWork& w : m.activity().work()) {
      out.push_back(absl::StrCat(m.activity().String(w.op), "@",
                                 m.activity().String(w.stream)));
    }
    return out;
  };
  REQUIRE(ops(via_tf1).size() == 2);
  CHECK(ops(via_tf1)[0].substr(0, 2) == "b@");  // stream 2's first
  CHECK(ops(direct) == ops(via_tf1));
  CHECK(direct.SerializedProfileProto() == via_tf1.SerializedProfileProto());
  // Written once: the export has nothing left after a model took it.
  CHECK(direct_trace.TakeGraph().node_size() == 0);
  CHECK_FALSE(direct_trace.NextStep(&step, &rm));
}

// What a model holds, as bytes: the nodes (save's ProfileProto) and what a
// ProfileProto does not keep.
std::string Fingerprint(const Model& m) {
  std::string out = m.SerializedProfileProto();
  for (const auto& [step, span] : m.run_spans()) {
    out += absl::StrCat("|span ", step, " ", span.start_micros, " ",
                        span.end_micros);
  }
  for (const DeviceWork& w : m.activity().work()) {
    out += absl::StrCat("|work ", w.start_ns, " ", w.duration_ns, " ",
                        m.activity().String(w.name), " ",
                        m.activity().String(w.op));
  }
  out +=
      absl::StrCat("|coverage ", m.run_coverage(), " miss ",
                   m.miss_accelerator_stream(), " code ", m.has_code_traces());
  for (const auto& n : m.nodes()) {
    out += absl::StrCat("|", n->name, " ", n->mean_over_steps, " ",
                        n->pytorch_float_ops, " ", n->cost_bytes);
  }
  return out;
}

TEST_CASE("Trace importers write the model their TF1 export reads as") {
  const std::vector<std::string> traces = {
      "hta/cpu_only_rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz",
      "pytorch-kineto/worker0.1623143089861.pt.trace.json.gz",
      "gpu-h200-2026/jax_lm_nocb.xplane.pb.gz",
      "tf1-timelines/dlprof_timeline.ctf.json",
      "yaroslavvb-stuff/dynamic_stitch_gpu_profile.json",
  };
  for (const std::string& rel : traces) {
    SECTION(rel) {
      const std::string path = testing::BundledCorpusDir() + "/" + rel;
      InputPaths paths;
      paths.trace_path = path;
      absl::StatusOr<std::unique_ptr<LoadedProfile>> direct =
          LoadProfile(paths);
      REQUIRE(direct.ok());

      absl::StatusOr<ImportedTrace> t = ImportTrace({path});
      REQUIRE(t.ok());
      Model via_tf1;
      via_tf1.set_source((*direct)->model.source());
      via_tf1.AddGraph(t->graph);
      via_tf1.AddOpLog(t->op_log);
      via_tf1.set_activity(std::move(t->activity));
      for (const auto& [step, rm] : t->steps) {
        REQUIRE(via_tf1.AddRunMeta(step, rm).ok());
      }
      via_tf1.MeanOverAllSteps();
      CHECK((*direct)->model.size() > 0);
      // (A TF1 RunMetadata cuts node names at a ':', so the export writes
      // "aten::mm" as "aten..mm": both sides are compared with '.' for ':'.)
      std::string a = Fingerprint((*direct)->model);
      std::string b = Fingerprint(via_tf1);
      std::replace(a.begin(), a.end(), ':', '.');
      std::replace(b.begin(), b.end(), ':', '.');
      CHECK(a.size() == b.size());
      // (The offset of the first difference, not the binary bytes.)
      size_t first_difference = 0;
      while (first_difference < std::min(a.size(), b.size()) &&
             a[first_difference] == b[first_difference]) {
        ++first_difference;
      }
      CHECK(first_difference == std::max(a.size(), b.size()));
    }
  }
}

}  // namespace
}  // namespace tfprof
