// The XSpace importer on XLA programs (JAX): name stacks, the HLO reader's
// FLOPs, loops and kernel names on hand-built modules; steps, instruction
// nodes, runs and FLOPs on a hand-built capture; and the real JAX captures
// (gpu-h200-2026/jax_lm_*) against figures recomputed here from the raw
// XSpace and HLO (the tests' own decoding and arithmetic) and JAX's own
// account (jax_refs.json).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "catch2/catch.hpp"
#include "profiler/advise/advisor.h"
#include "profiler/base/gzip.h"
#include "profiler/importers/xspace/xla_programs.h"
#include "profiler/load/loader.h"
#include "profiler/render/summary.h"
#include "profiler/render/trace_timeline.h"
#include "profiler/views/diff.h"
#include "profiler/views/steps.h"
#include "profiler/views/views.h"
#include "proto/hlo.pb.h"
#include "proto/xplane.pb.h"
#include "tests/json_parse.h"
#include "tests/test_util.h"

namespace tfprof {
namespace {

namespace hlo = ::tfprof::xla;
using ::tensorflow::profiler::XEvent;
using ::tensorflow::profiler::XLine;
using ::tensorflow::profiler::XPlane;
using ::tensorflow::profiler::XSpace;
using ::tensorflow::profiler::XStat;
using trace_internal::HloInstruction;
using trace_internal::NameStack;
using trace_internal::ParseNameStack;
using trace_internal::XlaModule;

// --- Name stacks --------------------------------------------------------

TEST_CASE("JAX name stacks: wrappers stripped, backward marked, op type") {
  NameStack f =
      ParseNameStack("jit(train_step)/jvp(block0)/attention/dot_general");
  CHECK(f.scopes ==
        std::vector<std::string>{"train_step", "block0", "attention"});
  CHECK_FALSE(f.backward);
  CHECK(f.op_type == "dot_general");

  NameStack b =
      ParseNameStack("jit(train_step)/transpose(jvp(block0))/mlp/dot_general");
  CHECK(b.scopes == std::vector<std::string>{"train_step", "block0", "mlp"});
  CHECK(b.backward);
  CHECK(b.op_type == "dot_general");

  // An einsum level is a scope; empty wrappers vanish; nested jit names.
  NameStack e = ParseNameStack(
      "jit(f)/transpose(jvp())/jit(_var)/bqhd,bkhd->bhqk/reduce_sum");
  CHECK(e.scopes == std::vector<std::string>{"f", "_var", "bqhd,bkhd->bhqk"});
  CHECK(e.backward);
  CHECK(e.op_type == "reduce_sum");

  // A bracketed suffix is not part of the type; a last level that is not
  // an op type stays a scope.
  CHECK(ParseNameStack("jit(f)/reduce_precision[bits=8]").op_type ==
        "reduce_precision");
  NameStack n = ParseNameStack("jit(f)/MyLayer");
  CHECK(n.op_type.empty());
  CHECK(n.scopes == std::vector<std::string>{"f", "MyLayer"});
  CHECK(ParseNameStack("").scopes.empty());
  // vmap, remat and checkpoint are wrappers too; other calls are scopes.
  CHECK(ParseNameStack("vmap(remat(checkpoint(g)))/while/body/add").scopes ==
        std::vector<std::string>{"g", "while", "body"});
  CHECK(ParseNameStack("foo(bar)/add").scopes ==
        std::vector<std::string>{"foo(bar)"});
}

// --- The HLO reader on a hand-built module -------------------------------

hlo::ShapeProto Shape(std::vector<int64_t> dims, int type = 16 /* BF16 */) {
  hlo::ShapeProto s;
  s.set_element_type(type);
  for (int64_t d : dims) s.add_dimensions(d);
  return s;
}

hlo::HloInstructionProto* Instr(hlo::HloComputationProto* c, int64_t id,
                                const std::string& name,
                                const std::string& opcode,
                                std::vector<int64_t> dims,
                                std::vector<int64_t> operands = {}) {
  hlo::HloInstructionProto* i = c->add_instructions();
  i->set_id(id);
  i->set_name(name);
  i->set_opcode(opcode);
  *i->mutable_shape() = Shape(dims);
  for (int64_t o : operands) i->add_operand_ids(o);
  return i;
}

// entry: p0 [64,128], p1 [128,256], dot.1 = p0 x p1; gemm_fusion_dot.7
// fusing an [8,16] x [16,32] dot; a cuBLAS call [32,100] x [100,64]; a
// convolution; a while loop (trip count 5) whose body holds a dot; one
// bitcast between the fusion and the cuBLAS call.
std::string TestModule() {
  hlo::HloProto proto;
  hlo::HloModuleProto* m = proto.mutable_hlo_module();
  m->set_name("jit_step");
  m->set_entry_computation_id(1);
  // The fused computation (id 2).
  hlo::HloComputationProto* fused = m->add_computations();
  fused->set_id(2);
  fused->set_name("fused_computation");
  Instr(fused, 20, "param_0", "parameter", {8, 16});
  Instr(fused, 21, "param_1", "parameter", {16, 32});
  Instr(fused, 22, "dot.2", "dot", {8, 32}, {20, 21})
      ->mutable_dot_dimension_numbers()
      ->add_lhs_contracting_dimensions(1);
  // The loop body (id 3) and condition (id 4).
  hlo::HloComputationProto* body = m->add_computations();
  body->set_id(3);
  body->set_name("body");
  Instr(body, 30, "param.3", "parameter", {4, 10});
  Instr(body, 31, "dot.3", "dot", {4, 4}, {30, 30})
      ->mutable_dot_dimension_numbers()
      ->add_lhs_contracting_dimensions(1);
  hlo::HloComputationProto* cond = m->add_computations();
  cond->set_id(4);
  cond->set_name("cond");
  Instr(cond, 40, "param.4", "parameter", {4, 10});
  // The entry computation (id 1).
  hlo::HloComputationProto* e = m->add_computations();
  e->set_id(1);
  e->set_name("main");
  Instr(e, 1, "p0", "parameter", {64, 128});
  Instr(e, 2, "p1", "parameter", {128, 256});
  hlo::HloInstructionProto* dot =
      Instr(e, 3, "dot.1", "dot", {64, 256}, {1, 2});
  dot->mutable_dot_dimension_numbers()->add_lhs_contracting_dimensions(1);
  dot->mutable_metadata()->set_op_name("jit(step)/jvp(layer)/dot_general");
  dot->mutable_metadata()->set_stack_frame_id(2);
  hlo::HloInstructionProto* fusion =
      Instr(e, 4, "gemm_fusion_dot.7", "fusion", {8, 32}, {1, 2});
  fusion->set_fusion_kind("kCustom");
  fusion->add_called_computation_ids(2);
  Instr(e, 5, "bitcast.1", "bitcast", {32, 100}, {4});
  hlo::HloInstructionProto* gemm =
      Instr(e, 6, "custom-call.1", "custom-call", {}, {5, 2});
  gemm->mutable_shape()->set_element_type(13);  // (result, workspace)
  *gemm->mutable_shape()->add_tuple_shapes() = Shape({32, 64});
  *gemm->mutable_shape()->add_tuple_shapes() = Shape({1024}, 6);
  gemm->set_custom_call_target("__cublas$lt$matmul");
  gemm->set_backend_config(
      R"({"gemm_backend_config":{"dot_dimension_numbers":)"
      R"({"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":)"
      R"(["0"]}}})");
  // Convolution: input [2,3,8,8] (NCHW), kernel [4,3,3,3] (OIHW), output
  // [2,4,6,6].
  Instr(e, 7, "input", "parameter", {2, 3, 8, 8});
  Instr(e, 8, "kernel", "parameter", {4, 3, 3, 3});
  hlo::HloInstructionProto* conv =
      Instr(e, 9, "convolution.1", "convolution", {2, 4, 6, 6}, {7, 8});
  auto* dn = conv->mutable_convolution_dimension_numbers();
  dn->set_kernel_output_feature_dimension(0);
  dn->set_kernel_input_feature_dimension(1);
  dn->add_kernel_spatial_dimensions(2);
  dn->add_kernel_spatial_dimensions(3);
  hlo::HloInstructionProto* loop =
      Instr(e, 10, "while.1", "while", {4, 10}, {1});
  loop->add_called_computation_ids(4);
  loop->add_called_computation_ids(3);
  loop->set_backend_config(R"({"known_trip_count":{"n":"5"}})");
  // The call stack: frame 2 (line 20 in f) called from frame 1 (line 7 in
  // main).
  hlo::StackFrameIndexProto* s = m->mutable_stack_frame_index();
  s->add_file_names("model.py");
  s->add_function_names("main");
  s->add_function_names("f");
  auto* l1 = s->add_file_locations();
  l1->set_file_name_id(1);
  l1->set_function_name_id(1);
  l1->set_line(7);
  auto* l2 = s->add_file_locations();
  l2->set_file_name_id(1);
  l2->set_function_name_id(2);
  l2->set_line(20);
  auto* f1 = s->add_stack_frames();
  f1->set_file_location_id(1);
  auto* f2 = s->add_stack_frames();
  f2->set_file_location_id(2);
  f2->set_parent_frame_id(1);
  return proto.SerializeAsString();
}

TEST_CASE("HLO: FLOPs of dots, fusions, cuBLAS calls and convolutions") {
  XlaModule m;
  REQUIRE(m.Parse(TestModule()));
  CHECK(m.name() == "jit_step");
  CHECK(m.FunctionName() == "step");
  const HloInstruction* dot = m.Find("dot.1");
  REQUIRE(dot != nullptr);
  CHECK(dot->flops == 2 * 64 * 256 * 128);
  CHECK(dot->category == "dot");
  // bf16 operands; bytes read and written: both operands and the result.
  CHECK(dot->flop_type == 16);
  CHECK(dot->bytes == 2 * (64 * 128 + 128 * 256 + 64 * 256));
  const HloInstruction* fusion = m.Find("gemm_fusion_dot.7");
  REQUIRE(fusion != nullptr);
  CHECK(fusion->flops == 2 * 8 * 32 * 16);
  CHECK(fusion->category == "fusion(kCustom)");
  const HloInstruction* gemm = m.Find("custom-call.1");
  REQUIRE(gemm != nullptr);
  CHECK(gemm->flops == 2 * 32 * 64 * 100);
  CHECK(gemm->category == "custom-call(__cublas$lt$matmul)");
  const HloInstruction* conv = m.Find("convolution.1");
  REQUIRE(conv != nullptr);
  CHECK(conv->flops == 2 * (2 * 4 * 6 * 6) * (3 * 3 * 3));
  // Fused instructions are not device-level; loop bodies run 5 times.
  CHECK(m.Find("dot.2") == nullptr);
  const HloInstruction* in_loop = m.Find("dot.3");
  REQUIRE(in_loop != nullptr);
  CHECK(in_loop->runs_per_execution == 5);
  CHECK(in_loop->flops == 2 * 4 * 4 * 10);
  CHECK(dot->runs_per_execution == 1);
  CHECK(m.unknown_trip_counts() == 0);
  // XLA's kernel names; pass-through instructions have none.
  CHECK(m.FindByKernelName("gemm_fusion_dot_7") == fusion);
  CHECK(m.FindByKernelName("custom_call_1") == gemm);
  CHECK(m.FindByKernelName("bitcast_1") == nullptr);
  // Operands, and the call stack outermost first.
  REQUIRE(gemm->operands.size() == 2);
  CHECK(m.Operand(*gemm, gemm->operands[0])->name == "bitcast.1");
  const auto stack = m.CallStack(dot->stack_frame_id);
  REQUIRE(stack.size() == 2);
  CHECK(stack[0].function == "main");
  CHECK(stack[0].lineno == 7);
  CHECK(stack[1].function == "f");
  CHECK(stack[1].lineno == 20);
  CHECK(stack[1].file == "model.py");
  CHECK(m.CallStack(99).empty());
  CHECK_FALSE(XlaModule().Parse("\xff\xff not a proto"));
}

// --- A hand-built JAX capture -------------------------------------------

// Adds stat metadata `name` to a plane (once) and returns its id.
int64_t StatId(XPlane* p, const std::string& name) {
  for (const auto& [id, md] : p->stat_metadata()) {
    if (md.name() == name) return id;
  }
  const int64_t id = static_cast<int64_t>(p->stat_metadata_size()) + 1;
  (*p->mutable_stat_metadata())[id].set_id(id);
  (*p->mutable_stat_metadata())[id].set_name(name);
  return id;
}

int64_t EventId(XPlane* p, const std::string& name) {
  for (const auto& [id, md] : p->event_metadata()) {
    if (md.name() == name) return id;
  }
  const int64_t id = static_cast<int64_t>(p->event_metadata_size()) + 1;
  (*p->mutable_event_metadata())[id].set_id(id);
  (*p->mutable_event_metadata())[id].set_name(name);
  return id;
}

XEvent* Event(XPlane* p, XLine* line, const std::string& name, int64_t start_us,
              int64_t duration_us) {
  XEvent* e = line->add_events();
  e->set_metadata_id(EventId(p, name));
  e->set_offset_ps(start_us * 1000000);
  e->set_duration_ps(duration_us * 1000000);
  return e;
}

void IntStat(XPlane* p, XEvent* e, const std::string& name, int64_t v) {
  XStat* s = e->add_stats();
  s->set_metadata_id(StatId(p, name));
  s->set_int64_value(v);
}

void StrStat(XPlane* p, XEvent* e, const std::string& name,
             const std::string& v) {
  XStat* s = e->add_stats();
  s->set_metadata_id(StatId(p, name));
  s->set_str_value(v);
}

// Two steps (step_num 3 and 4), each a `train` root around a dispatch that
// launches the module's dot and fusion (and, in step 4, a kernel of no
// instruction inside a command buffer, and one matched by name).
std::string TestCapture() {
  XSpace space;
  XPlane* meta = space.add_planes();
  meta->set_name("/host:metadata");
  XStat* version = meta->add_stats();
  version->set_metadata_id(StatId(meta, "jax_version"));
  version->set_str_value("0.0-test");
  auto& module = (*meta->mutable_event_metadata())[1];
  module.set_id(1);
  module.set_name("jit_step(42)");
  XStat* h = module.add_stats();
  h->set_metadata_id(StatId(meta, "Hlo Proto"));
  h->set_bytes_value(TestModule());
  XStat* pid = module.add_stats();
  pid->set_metadata_id(StatId(meta, "program_id"));
  pid->set_int64_value(42);

  XPlane* host = space.add_planes();
  host->set_name("/host:CPU");
  XLine* main = host->add_lines();
  main->set_id(1);
  main->set_name("python3");
  main->set_timestamp_ns(1000000);
  XPlane* gpu = space.add_planes();
  gpu->set_name("/device:GPU:0");
  XLine* stream = gpu->add_lines();
  stream->set_id(7);
  stream->set_name("Stream #7(Compute)");
  stream->set_timestamp_ns(1000000);
  int64_t corr = 0;
  auto kernel = [&](int64_t step, const std::string& name,
                    const std::string& hlo_op, int64_t launch_us,
                    int64_t start_us, int64_t dur_us) {
    XEvent* launch = Event(host, main, name, launch_us, 1);
    IntStat(host, launch, "correlation_id", ++corr);
    XEvent* k = Event(gpu, stream, name, start_us, dur_us);
    IntStat(gpu, k, "correlation_id", corr);
    StrStat(gpu, k, "hlo_op", hlo_op);
    StrStat(gpu, k, "hlo_module", "jit_step");
    IntStat(gpu, k, "program_id", 42);
    IntStat(gpu, k, "scope_range_id", 100 + step);
  };
  for (int64_t step : {3, 4}) {
    const int64_t t = step == 3 ? 0 : 1000;
    XEvent* root = Event(host, main, "train", t, 500);
    IntStat(host, root, "_r", 1);
    IntStat(host, root, "step_num", step);
    Event(host, main, "PjitFunction(step)", t + 10, 100);
    kernel(step, "dot_kernel", "dot.1", t + 20, t + 200, 40);
    kernel(step, "gemm_fusion_dot_7", "gemm_fusion_dot.7", t + 30, t + 250, 10);
    if (step == 4) {
      kernel(step, "nvjet_gemm", "command_buffer_0", t + 40, t + 300, 30);
      kernel(step, "convolution_1", "command_buffer_0", t + 41, t + 340, 20);
    }
  }
  return space.SerializeAsString();
}

std::unique_ptr<LoadedProfile> LoadBytes(const std::string& bytes) {
  const std::string path = testing::TempDir() + "/capture.xplane.pb";
  testing::WriteFile(path, bytes);
  InputPaths paths;
  paths.trace_path = path;
  auto loaded = LoadProfile(paths);
  REQUIRE(loaded.ok());
  return std::move(*loaded);
}

TEST_CASE("A JAX capture: root steps, instruction nodes, runs and FLOPs") {
  const auto loaded = LoadBytes(TestCapture());
  const Model& m = loaded->model;
  CHECK(m.steps() == std::set<int64_t>{3, 4});
  const StepTable steps = ComputeSteps(m);
  REQUIRE(steps.rows.size() == 2);
  for (const StepRow& r : steps.rows) {
    CHECK(r.from_markers);
    CHECK(r.wall_ns == 500000);
  }
  CHECK(steps.rows[0].device_span_ns == 250000 - 200000 + 10000);
  CHECK(steps.rows[1].device_span_ns == 360000 - 200000);
  // The dot: its scope, its framework type, its HLO category, its call
  // stack; one run per module execution, with its FLOPs.
  const GraphNode* dot = m.Find("step/layer/dot.1");
  REQUIRE(dot != nullptr);
  CHECK(dot->op == "dot_general");
  REQUIRE(dot->FindAttr(kXlaCategoryAttr).has_value());
  CHECK(dot->FindAttr(kXlaCategoryAttr)->s() == "dot");
  CHECK(dot->float_ops == 2 * 64 * 256 * 128);
  CHECK(dot->Stats(3).run_count == 1);
  CHECK(dot->Stats(3).accelerator_exec_micros == 40);
  const auto stack = m.CallStack(*dot);
  REQUIRE(stack.size() == 2);
  CHECK(stack[1].function == "f");
  // Instructions without kernels but with FLOPs run too (the cuBLAS call,
  // the convolution, the loop's dot five times).
  const GraphNode* gemm = m.Find("step/custom-call.1");
  REQUIRE(gemm != nullptr);
  CHECK(gemm->Stats(3).run_count == 1);
  CHECK(gemm->Stats(3).float_ops == 2 * 32 * 64 * 100);
  CHECK(gemm->Stats(3).accelerator_exec_micros == 0);
  const GraphNode* loop_dot = m.Find("step/dot.3");
  REQUIRE(loop_dot != nullptr);
  CHECK(loop_dot->Stats(4).run_count == 5);
  CHECK(loop_dot->Stats(4).float_ops == 5 * 2 * 4 * 4 * 10);
  // The cuBLAS call reads the fusion (through the bitcast).
  REQUIRE(gemm->inputs.size() == 1);
  CHECK(*gemm->inputs[0].name == "step/gemm_fusion_dot.7");
  // Step 4's command buffer: a kernel named after an instruction goes on
  // it, the other stays on the command buffer's node.
  const GraphNode* conv = m.Find("step/convolution.1");
  REQUIRE(conv != nullptr);
  CHECK(conv->Stats(4).accelerator_exec_micros == 20);
  const GraphNode* cb = m.Find("step/command_buffer_0");
  REQUIRE(cb != nullptr);
  CHECK(cb->Stats(4).accelerator_exec_micros == 30);
  CHECK(cb->op == "command_buffer");
  // Host events of a JAX capture are nodes of their own, nested by path.
  CHECK(m.Find("train/PjitFunction(step)") != nullptr);
  // Every instruction's FLOPs, once per step.
  int64_t step_flops = 0;
  for (const auto& n : m.nodes()) step_flops += n->Stats(3).float_ops;
  CHECK(step_flops == 2 * 64 * 256 * 128 + 2 * 8 * 32 * 16 + 2 * 32 * 64 * 100 +
                          2 * 2 * 4 * 6 * 6 * 27 + 5 * 2 * 4 * 4 * 10);
  // -op_group hlo groups by category.
  Views views(&m, nullptr);
  Options o;
  o.max_depth = 1000;
  o.op_group = OpGrouping::kHlo;
  absl::StatusOr<ResultTree> r = views.Query(ViewKind::kOp, o);
  REQUIRE(r.ok());
  std::set<std::string> groups;
  for (size_t c : r->root().children) groups.insert(r->nodes[c].name);
  CHECK(groups.count("fusion(kCustom)") == 1);
  CHECK(groups.count("custom-call(__cublas$lt$matmul)") == 1);
  CHECK(groups.count("command_buffer") == 1);
  CHECK(groups.count("dot_general") == 0);
  auto noted = [](const ResultTree& t) {
    for (const std::string& n : t.notes) {
      if (n.find("-op_group hlo: no node") != std::string::npos) return true;
    }
    return false;
  };
  CHECK(!noted(*r));
  // Without XLA programs the grouping is the framework's, and says so.
  InputPaths in;
  in.profile_path = testing::SourceDir() + "/testdata/sample/profile";
  absl::StatusOr<std::unique_ptr<LoadedProfile>> plain = LoadProfile(in);
  REQUIRE(plain.ok());
  Views plain_views(&(*plain)->model, nullptr);
  absl::StatusOr<ResultTree> hlo = plain_views.Query(ViewKind::kOp, o);
  o.op_group = OpGrouping::kFramework;
  absl::StatusOr<ResultTree> framework = plain_views.Query(ViewKind::kOp, o);
  REQUIRE(hlo.ok());
  REQUIRE(framework.ok());
  CHECK(noted(*hlo));
  CHECK(!noted(*framework));
  REQUIRE(hlo->nodes.size() == framework->nodes.size());
  for (size_t i = 0; i < hlo->nodes.size(); ++i) {
    CHECK(hlo->nodes[i].name == framework->nodes[i].name);
  }
}

// --- The real JAX captures ------------------------------------------------

const char kCb[] = "gpu-h200-2026/jax_lm_cb.xplane.pb.gz";
const char kNoCb[] = "gpu-h200-2026/jax_lm_nocb.xplane.pb.gz";

// What the raw capture says, by the tests' own reading.
struct RawJax {
  // step_num -> the train event's duration, ns.
  std::map<int64_t, int64_t> train_ns;
  // Device events: total ns, ns of events with an hlo_op, and per step
  // (by the launch's train span) the total ns.
  int64_t device_ns = 0, hlo_ns = 0;
  std::map<int64_t, int64_t> device_ns_by_step;
  // Kernels inside command buffers (hlo_op not an instruction): ns of those
  // whose name is an instruction's with '.' and '-' made '_', and of the
  // rest.
  int64_t matched_ns = 0, unmatched_ns = 0;
  // FLOPs of one execution of the training step's module.
  double step_flops = 0;
};

double Prod(const hlo::ShapeProto& s) {
  double p = 1;
  for (int64_t d : s.dimensions()) p *= static_cast<double>(d);
  return p;
}

// dot and cuBLAS FLOPs of the train step module, written apart from the
// importer: 2 x result elements x contracting size.
double ModuleFlops(const hlo::HloModuleProto& m) {
  std::map<int64_t, const hlo::HloComputationProto*> comps;
  std::map<int64_t, const hlo::HloInstructionProto*> by_id;
  for (const auto& c : m.computations()) {
    comps[c.id()] = &c;
    for (const auto& i : c.instructions()) by_id[i.id()] = &i;
  }
  double total = 0;
  for (const auto& c : m.computations()) {
    for (const auto& i : c.instructions()) {
      const hlo::ShapeProto* lhs = i.operand_ids_size() > 0
                                       ? &by_id.at(i.operand_ids(0))->shape()
                                       : nullptr;
      if (i.opcode() == "dot") {
        double k = 1;
        for (int64_t d : i.dot_dimension_numbers().lhs_contracting_dimensions())
          k *= static_cast<double>(lhs->dimensions(static_cast<int>(d)));
        total += 2 * Prod(i.shape()) * k;
      } else if (i.opcode() == "custom-call" &&
                 i.custom_call_target().find("cublas") != std::string::npos) {
        const std::string& bc = i.backend_config();
        const size_t at = bc.find("\"lhs_contracting_dimensions\":[\"");
        REQUIRE(at != std::string::npos);
        const int d = bc[at + 31] - '0';
        total += 2 * Prod(i.shape().tuple_shapes(0)) *
                 static_cast<double>(lhs->dimensions(d));
      }
    }
  }
  return total;
}

int64_t IntValue(const XStat& s) {
  return s.value_case() == XStat::kUint64Value
             ? static_cast<int64_t>(s.uint64_value())
             : s.int64_value();
}

RawJax ReadJax(const std::string& rel) {
  absl::StatusOr<std::string> bytes =
      Gunzip(testing::ReadFile(testing::CorpusFile(rel)));
  REQUIRE(bytes.ok());
  XSpace space;
  REQUIRE(space.ParseFromString(*bytes));
  RawJax raw;
  auto stat_ids = [](const XPlane& p) {
    std::map<std::string, int64_t> ids;
    for (const auto& [id, md] : p.stat_metadata()) ids[md.name()] = id;
    return ids;
  };
  auto find = [](const XEvent& e, const XPlane& p, int64_t id) -> const XStat* {
    for (const XStat& s : e.stats())
      if (s.metadata_id() == id) return &s;
    auto md = p.event_metadata().find(e.metadata_id());
    if (md == p.event_metadata().end()) return nullptr;
    for (const XStat& s : md->second.stats())
      if (s.metadata_id() == id) return &s;
    return nullptr;
  };
  std::set<std::string> instructions;  // of the train step module's entry
  std::map<std::pair<int64_t, int64_t>, int64_t> train_spans;  // ns -> step
  std::map<int64_t, int64_t> launch_step;  // correlation -> step
  for (const XPlane& p : space.planes()) {
    auto ids = stat_ids(p);
    if (p.name() == "/host:metadata") {
      for (const auto& [id, md] : p.event_metadata()) {
        if (md.name().rfind("jit_train_step", 0) != 0) continue;
        for (const XStat& s : md.stats()) {
          if (s.metadata_id() != ids["Hlo Proto"]) continue;
          hlo::HloProto h;
          REQUIRE(h.ParseFromString(s.bytes_value()));
          raw.step_flops = ModuleFlops(h.hlo_module());
          for (const auto& c : h.hlo_module().computations()) {
            if (c.id() != h.hlo_module().entry_computation_id()) continue;
            for (const auto& i : c.instructions())
              instructions.insert(i.name());
          }
        }
      }
    }
    if (p.name() != "/host:CPU") continue;
    for (const XLine& l : p.lines()) {
      for (const XEvent& e : l.events()) {
        if (p.event_metadata().at(e.metadata_id()).name() != "train") continue;
        const XStat* step = find(e, p, ids["step_num"]);
        REQUIRE(step != nullptr);
        const int64_t start = l.timestamp_ns() + e.offset_ps() / 1000;
        raw.train_ns[IntValue(*step)] = e.duration_ps() / 1000;
        train_spans[{start, start + e.duration_ps() / 1000}] = IntValue(*step);
      }
    }
    for (const XLine& l : p.lines()) {
      for (const XEvent& e : l.events()) {
        const XStat* c = find(e, p, ids["correlation_id"]);
        if (c == nullptr) continue;
        const int64_t t = l.timestamp_ns() + e.offset_ps() / 1000;
        for (const auto& [span, step] : train_spans) {
          if (t >= span.first && t < span.second) {
            launch_step[IntValue(*c)] = step;
          }
        }
      }
    }
  }
  for (const XPlane& p : space.planes()) {
    if (p.name().rfind("/device:GPU:", 0) != 0) continue;
    auto ids = stat_ids(p);
    for (const XLine& l : p.lines()) {
      for (const XEvent& e : l.events()) {
        const int64_t ns = (e.duration_ps() + 500) / 1000;
        raw.device_ns += ns;
        const XStat* c = find(e, p, ids["correlation_id"]);
        if (c != nullptr && launch_step.count(IntValue(*c))) {
          raw.device_ns_by_step[launch_step.at(IntValue(*c))] += ns;
        }
        const XStat* op = find(e, p, ids["hlo_op"]);
        if (op == nullptr) continue;
        raw.hlo_ns += ns;
        if (instructions.count(op->str_value())) continue;
        const std::string& name = p.event_metadata().at(e.metadata_id()).name();
        bool matched = false;
        for (const std::string& i : instructions) {
          std::string k = i;
          std::replace(k.begin(), k.end(), '.', '_');
          std::replace(k.begin(), k.end(), '-', '_');
          matched |= k == name && i.rfind("bitcast", 0) != 0 &&
                     i.rfind("get-tuple", 0) != 0 && i.rfind("param", 0) != 0;
        }
        (matched ? raw.matched_ns : raw.unmatched_ns) += ns;
      }
    }
  }
  return raw;
}

std::unique_ptr<LoadedProfile> LoadCorpus(const std::string& rel) {
  InputPaths paths;
  paths.trace_path = testing::CorpusFile(rel);
  auto loaded = LoadProfile(paths);
  REQUIRE(loaded.ok());
  return std::move(*loaded);
}

// Every node's accelerator ns in one step and in total, by name.
std::map<std::string, int64_t> AcceleratorMicros(const Model& m, int64_t step) {
  std::map<std::string, int64_t> out;
  for (const auto& n : m.nodes()) {
    out[n->name] = n->Stats(step).accelerator_exec_micros;
  }
  return out;
}

TEST_CASE("JAX captures: 8 steps, each its train marker's span") {
  for (const char* rel : {kCb, kNoCb}) {
    if (!testing::HaveCorpusFile(rel)) continue;
    INFO(rel);
    const RawJax raw = ReadJax(rel);
    REQUIRE(raw.train_ns.size() == 8);
    const auto loaded = LoadCorpus(rel);
    const StepTable t = ComputeSteps(loaded->model);
    REQUIRE(t.rows.size() == 8);
    for (const StepRow& r : t.rows) {
      INFO("step " << r.step);
      REQUIRE(raw.train_ns.count(r.step) == 1);
      const double want = static_cast<double>(raw.train_ns.at(r.step));
      CHECK(std::abs(r.wall_ns - want) <= 0.01 * want);
      CHECK(r.from_markers);
      CHECK(r.device_span_ns > 0);
      CHECK(r.device_span_ns <= r.wall_ns);
    }
  }
}

TEST_CASE("JAX captures: device time on HLO instructions, FLOPs, memory") {
  testing::JsonValue refs;
  if (!testing::HaveCorpusFile("gpu-h200-2026/jax_refs.json")) return;
  std::string error;
  REQUIRE(testing::ParseJson(
      testing::ReadFile(testing::CorpusFile("gpu-h200-2026/jax_refs.json")),
      &refs, &error));
  for (const char* rel : {kCb, kNoCb}) {
    if (!testing::HaveCorpusFile(rel)) continue;
    INFO(rel);
    const bool cb = std::string(rel) == kCb;
    const RawJax raw = ReadJax(rel);
    const auto loaded = LoadCorpus(rel);
    const Model& m = loaded->model;
    // Per step, the nodes' accelerator time adds up to the device events
    // launched in that step (each node's time rounded to a microsecond).
    for (int64_t step = 0; step < 8; ++step) {
      int64_t sum = 0, nodes = 0;
      for (const auto& [name, us] : AcceleratorMicros(m, step)) {
        sum += us;
        nodes += us > 0;
      }
      const int64_t want = raw.device_ns_by_step.at(step);
      CHECK(std::abs(sum * 1000 - want) <= 1000 * nodes);
    }
    // Where the time went: instruction nodes (by their category attribute)
    // and command-buffer nodes.
    int64_t on_instructions = 0, on_buffers = 0, all = 0;
    for (const auto& n : m.nodes()) {
      int64_t ns = 0;
      for (int64_t s = 0; s < 8; ++s) {
        ns += n->Stats(s).accelerator_exec_micros * 1000;
      }
      all += ns;
      std::optional<tfcore::AttrValue> cat = n->FindAttr(kXlaCategoryAttr);
      if (!cat.has_value()) continue;
      if (cat->s() == "command_buffer") {
        on_buffers += ns;
      } else {
        on_instructions += ns;
      }
    }
    if (!cb) {
      CHECK(on_instructions >= 0.99 * all);
      CHECK(on_buffers == 0);
    } else {
      // Every kernel named after an instruction is on an instruction; the
      // rest stays on the command buffers (each node's time rounded once a
      // step).
      const double matched = static_cast<double>(raw.matched_ns);
      CHECK(std::abs(on_instructions - matched) <= 0.01 * matched);
      const double unmatched = static_cast<double>(raw.unmatched_ns);
      CHECK(std::abs(on_buffers - unmatched) <= 0.01 * unmatched);
      CHECK(on_buffers > 0);
    }
    // FLOPs per step: the HLO's (recomputed here) and the hand count.
    for (int64_t step = 0; step < 8; ++step) {
      double flops = 0;
      for (const auto& n : m.nodes()) flops += n->Stats(step).float_ops;
      CHECK(std::abs(flops - raw.step_flops) <= 1e-6 * raw.step_flops);
      CHECK(std::abs(flops - 0.876e12) <= 0.01 * 0.876e12);
    }
    // MFU against the H200's bf16 dense peak (4096 FLOP/cycle/SM x 132 SMs
    // x 1.83 GHz): the HLO's FLOPs over the train markers' mean span.
    double wall = 0;
    for (const auto& [step, ns] : raw.train_ns) wall += ns * 1e-9 / 8;
    const ProfileSummary summary = Summarize(m);
    REQUIRE(summary.flops.mfu.has_value());
    CHECK(summary.flops.peak.dtype == Dtype::kBf16);
    CHECK_FALSE(summary.flops.peak.dtype_assumed);
    CHECK(
        *summary.flops.mfu ==
        Approx(raw.step_flops / wall / (4096.0 * 132 * 1.83e9)).epsilon(0.002));
    // The GPU allocator's peak is JAX's peak_bytes_in_use.
    const StepTable t = ComputeSteps(m);
    int64_t peak = 0;
    for (const StepRow& r : t.rows) peak = std::max(peak, r.peak_bytes);
    const double want = refs.at(cb ? "jax_cb" : "jax_nocb")
                            .at("memory_stats")
                            .at("peak_bytes_in_use")
                            .number;
    CHECK(peak == static_cast<int64_t>(want));
  }
}

TEST_CASE("JAX command buffers: each kernel on the instruction it ran for") {
  // XLA compiles identical fusions (the four blocks' matmul fusions, ...)
  // once and names the kernel after one of them. In the command-buffer
  // capture each instruction must still get its own kernels: about the time
  // the capture without command buffers, whose events name their
  // instruction, gives it (both are runs of one program on one GPU).
  if (!testing::HaveCorpusFile(kCb) || !testing::HaveCorpusFile(kNoCb)) return;
  const auto cb = LoadCorpus(kCb);
  const auto nocb = LoadCorpus(kNoCb);
  int64_t compared = 0;
  for (const auto& n : nocb->model.nodes()) {
    std::optional<tfcore::AttrValue> cat = n->FindAttr(kXlaCategoryAttr);
    if (!cat.has_value() || cat->s().rfind("fusion", 0) != 0) continue;
    const GraphNode* other = cb->model.Find(n->name);
    REQUIRE(other != nullptr);
    INFO(n->name);
    const int64_t want = n->Stats(-1).accelerator_exec_micros;
    const int64_t got = other->Stats(-1).accelerator_exec_micros;
    CHECK(std::abs(got - want) <= std::max<int64_t>(3, want / 4));
    ++compared;
  }
  CHECK(compared > 150);
}

// Every stream event whose context and correlation ids name a launch call
// on a host line gets an arrow from that call to it in the trace
// timeline: the pairs of times, relative to the first GPU event, are the
// raw capture's.
TEST_CASE("JAX captures: launch arrows join each GPU event to its launch") {
  if (!testing::HaveCorpusFile(kNoCb)) return;
  absl::StatusOr<std::string> bytes =
      Gunzip(testing::ReadFile(testing::CorpusFile(kNoCb)));
  REQUIRE(bytes.ok());
  XSpace space;
  REQUIRE(space.ParseFromString(*bytes));
  // A stat of the event or of its metadata, as text.
  auto stat = [](const XPlane& p, const XEvent& e, const std::string& name) {
    for (const auto& [id, md] : p.stat_metadata()) {
      if (md.name() != name) continue;
      std::vector<const XStat*> all;
      for (const XStat& s : e.stats()) all.push_back(&s);
      auto em = p.event_metadata().find(e.metadata_id());
      if (em != p.event_metadata().end()) {
        for (const XStat& s : em->second.stats()) all.push_back(&s);
      }
      for (const XStat* s : all) {
        if (s->metadata_id() == id) return std::to_string(IntValue(*s));
      }
    }
    return std::string();
  };
  auto start_ns = [](const XLine& line, const XEvent& e) {
    return line.timestamp_ns() + (e.offset_ps() + 500) / 1000;
  };
  std::map<std::string, int64_t> launch;  // "<context>/<correlation>" -> ns
  std::vector<std::pair<std::string, int64_t>> gpu;
  for (const XPlane& p : space.planes()) {
    const bool host = p.name() == "/host:CPU";
    if (!host && p.name().rfind("/device:GPU:", 0) != 0) continue;
    for (const XLine& line : p.lines()) {
      for (const XEvent& e : line.events()) {
        const std::string corr = stat(p, e, "correlation_id");
        if (corr.empty()) continue;
        const std::string key = stat(p, e, "context_id") + "/" + corr;
        if (host) {
          launch[key] = start_ns(line, e);
        } else {
          gpu.emplace_back(key, start_ns(line, e));
        }
      }
    }
  }
  REQUIRE(!gpu.empty());
  int64_t origin = gpu.front().second;
  for (const auto& g : gpu) origin = std::min(origin, g.second);
  std::multiset<std::pair<int64_t, int64_t>> expected;
  for (const auto& [key, ns] : gpu) {
    auto l = launch.find(key);
    if (l != launch.end()) expected.emplace(l->second - origin, ns - origin);
  }
  REQUIRE(expected.size() > 1000);

  const auto loaded = LoadCorpus(kNoCb);
  const std::set<int64_t>& steps = loaded->model.steps();
  absl::StatusOr<std::string> json = TraceStepsTimeline(
      loaded->model, *steps.begin(), *steps.rbegin(), nullptr);
  REQUIRE(json.ok());
  testing::JsonValue tl;
  std::string error;
  REQUIRE(testing::ParseJson(*json, &tl, &error));
  double ours_origin = 1e300;
  std::map<int64_t, std::pair<double, double>> arrows;  // id -> s, f
  for (const testing::JsonValue& e : tl.at("traceEvents").array) {
    const std::string& ph = e.at("ph").string;
    if (ph == "X" &&
        (e.at("cat").string == "Kernel" || e.at("cat").string == "Memcpy")) {
      ours_origin = std::min(ours_origin, e.at("ts").number);
    } else if (ph == "s") {
      arrows[std::llround(e.at("id").number)].first = e.at("ts").number;
    } else if (ph == "f") {
      arrows[std::llround(e.at("id").number)].second = e.at("ts").number;
    }
  }
  std::multiset<std::pair<int64_t, int64_t>> ours;
  for (const auto& [id, times] : arrows) {
    ours.emplace(std::llround((times.first - ours_origin) * 1000),
                 std::llround((times.second - ours_origin) * 1000));
  }
  CHECK(ours.size() == expected.size());
  CHECK(ours == expected);
}

TEST_CASE("JAX captures: scope, code and graph views of the program") {
  for (const char* rel : {kCb, kNoCb}) {
    if (!testing::HaveCorpusFile(rel)) continue;
    INFO(rel);
    const auto loaded = LoadCorpus(rel);
    const Model& m = loaded->model;
    Views views(&m, nullptr);
    Options o;
    o.max_depth = 1000;
    absl::StatusOr<ResultTree> scope = views.Query(ViewKind::kScope, o);
    REQUIRE(scope.ok());
    std::map<std::string, const ResultNode*> by_name;
    for (const ResultNode& n : scope->nodes) by_name[n.name] = &n;
    for (int b = 0; b < 4; ++b) {
      for (const char* part : {"attention", "mlp"}) {
        const std::string name =
            "train_step/block" + std::to_string(b) + "/" + part;
        INFO(name);
        REQUIRE(by_name.count(name) == 1);
        // Forward instructions directly under it, backward ones below.
        const ResultNode& n = *by_name.at(name);
        bool forward = false, backward = false;
        for (size_t c : n.children) {
          const std::string& child = scope->nodes[c].name;
          if (child == name + "/backward") {
            backward = scope->nodes[c].total.accelerator_exec_micros > 0;
          } else if (scope->nodes[c].total.accelerator_exec_micros > 0) {
            forward = true;
          }
        }
        CHECK(forward);
        CHECK(backward);
      }
    }
    absl::StatusOr<ResultTree> code = views.Query(ViewKind::kCode, o);
    REQUIRE(code.ok());
    std::set<std::string> functions;
    for (const ResultNode& n : code->nodes) {
      if (n.name.find("dev_jax.py:") != std::string::npos &&
          n.total.accelerator_exec_micros > 0) {
        functions.insert(n.name.substr(n.name.rfind(':') + 1));
      }
    }
    for (const char* f : {"forward", "loss_fn", "train_step"}) {
      CHECK(functions.count(f) == 1);
    }
    // The graph: instructions read the instructions that made their inputs.
    const GraphNode* g =
        m.Find(std::string(rel) == kNoCb
                   ? "train_step/block0/mlp/backward/loop_add_fusion.4"
                   : "train_step/block0/mlp/backward/loop_add_fusion.4");
    REQUIRE(g != nullptr);
    CHECK_FALSE(g->inputs.empty());
    // The op view: framework op types.
    absl::StatusOr<ResultTree> op = views.Query(ViewKind::kOp, o);
    REQUIRE(op.ok());
    std::set<std::string> types;
    for (size_t c : op->root().children) types.insert(op->nodes[c].name);
    CHECK(types.count("dot_general") == 1);
    CHECK(types.count("reduce_sum") == 1);
  }
}

TEST_CASE("JAX captures: diff on every view, advice without TensorFlow") {
  if (!testing::HaveCorpusFile(kCb) || !testing::HaveCorpusFile(kNoCb)) return;
  const auto base = LoadCorpus(kNoCb);
  const auto cur = LoadCorpus(kCb);
  Views bv(&base->model, nullptr), cv(&cur->model, nullptr);
  Options o;
  o.max_depth = 4;
  for (ViewKind v : {ViewKind::kScope, ViewKind::kGraph, ViewKind::kOp,
                     ViewKind::kCode, ViewKind::kKernel}) {
    absl::StatusOr<DiffTree> d =
        QueryDiff(v, o, DiffOptions(), &bv, base->model, &cv, cur->model);
    REQUIRE(d.ok());
    CHECK(d->nodes.size() > 1);
    // Only the current run has command buffers: the diff says why its ops
    // seem faster.
    bool noted = false;
    for (const std::string& n : d->notes) {
      noted |= absl::StrContains(
          n,
          "the current run ran kernels in XLA command buffers and the base "
          "run did not");
    }
    CHECK(noted);
  }
  // Two runs alike in this: no such note.
  absl::StatusOr<DiffTree> same = QueryDiff(ViewKind::kOp, o, DiffOptions(),
                                            &bv, base->model, &bv, base->model);
  REQUIRE(same.ok());
  for (const std::string& n : same->notes) {
    CHECK_FALSE(absl::StrContains(n, "command buffers"));
  }
  for (const auto& loaded : {&base, &cur}) {
    Views views(&(*loaded)->model, nullptr);
    auto advice = Advise((*loaded)->model, &views, AllAdvisorOptions());
    REQUIRE(advice.ok());
    const std::string text = RenderAdvice(*advice);
    CHECK(text.find("FusedBatchNorm") == std::string::npos);
    CHECK(text.find("data_format") == std::string::npos);
    // XLA chose the layouts: nothing converts between them.
    CHECK(text.find("layout conversions (NCHW <-> NHWC): none in ") !=
          std::string::npos);
  }
}

}  // namespace
}  // namespace tfprof
