// advise on TensorFlow's GPU test profile and on hand-made models.
#include "profiler/advise/advisor.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "google/protobuf/text_format.h"
#include "profiler/base/units.h"
#include "profiler/load/loader.h"
#include "profiler/render/summary.h"
#include "profiler/views/summary.h"
#include "tests/corpus_util.h"
#include "tests/json_parse.h"
#include "tests/test_util.h"

namespace tfprof {
namespace {

TEST_CASE("advise on tf-testdata: utilization, NHWC, expensive ops") {
  auto loaded = LoadProfile(testing::TfTestData());
  REQUIRE(loaded.ok());
  Views views(&(*loaded)->model, nullptr);
  std::vector<std::string> notes;
  auto advice =
      Advise((*loaded)->model, &views, DefaultAdvisorOptions(), &notes);
  REQUIRE(advice.ok());
  // gpu:0 runs kernels for 404us (226 + 178) of a 4.5ms span: the numbers
  // of the op view golden (tfdata_op_all) and the run_meta's timestamps.
  CHECK(RenderAdvice(*advice) ==
        "\nAcceleratorUtilizationChecker:\n"
        "device: /job:localhost/replica:0/task:0/gpu:0 low utilization: 0.09\n"
        "\nOperationChecker:\n"
        "Found operation using NHWC data_format on GPU. Maybe NCHW is faster.\n"
        "\nExpensiveOperationChecker:\n"
        "top 1 operation type: Conv2D, cpu: 4.49ms, accelerator: 404us, total: "
        "4.89ms (98.87%)\n"
        "top 2 operation type: _retval_Conv2D_1_0_0, cpu: 41us, accelerator: "
        "0us, total: 41us (0.83%)\n"
        "top 3 operation type: VariableV2, cpu: 13us, accelerator: 0us, total: "
        "13us (0.26%)\n"
        "top 1 graph node: Conv2D, cpu: 4.07ms, accelerator: 226us, total: "
        "4.29ms\n"
        "top 2 graph node: Conv2D_1, cpu: 419us, accelerator: 178us, total: "
        "597us\n");
  REQUIRE(notes.size() == 1);  // no call stacks in this op log
}

TEST_CASE("advise: checkers can be chosen, unknown names are errors") {
  auto loaded = LoadProfile(testing::TfTestData());
  REQUIRE(loaded.ok());
  Views views(&(*loaded)->model, nullptr);
  tfpb::AdvisorOptionsProto only;
  (*only.mutable_checkers())["OperationChecker"];
  auto advice = Advise((*loaded)->model, &views, only);
  REQUIRE(advice.ok());
  CHECK(advice->checkers().size() == 1);
  tfpb::AdvisorOptionsProto bad;
  (*bad.mutable_checkers())["NoSuchChecker"];
  CHECK_FALSE(Advise((*loaded)->model, &views, bad).ok());
  // Of several bad entries, the first by name is reported (the same one
  // every run, whatever order the options' maps iterate in).
  tfpb::AdvisorOptionsProto many;
  for (const char* name : {"Zz", "Mm", "Bb", "Yy", "Cc", "Xx"}) {
    (*many.mutable_checkers())[name];
  }
  auto first = Advise((*loaded)->model, &views, many);
  REQUIRE_FALSE(first.ok());
  CHECK(
      std::string(first.status().message()).rfind("unknown checker 'Bb'", 0) ==
      0);
  tfpb::AdvisorOptionsProto options;
  auto& c = (*options.mutable_checkers())["ExpensiveOperationChecker"];
  for (const char* key : {"zz", "top", "qq", "aa"}) {
    (*c.mutable_options())[key] = "1";
  }
  auto option = Advise((*loaded)->model, &views, options);
  REQUIRE_FALSE(option.ok());
  CHECK(
      std::string(option.status().message()).rfind("unknown option 'aa'", 0) ==
      0);
}

TEST_CASE("advise: checker options top and threshold") {
  auto loaded = LoadProfile(testing::TfTestData());
  REQUIRE(loaded.ok());
  Views views(&(*loaded)->model, nullptr);
  tfpb::AdvisorOptionsProto o;
  (*(*o.mutable_checkers())["ExpensiveOperationChecker"]
        .mutable_options())["top"] = "1";
  (*(*o.mutable_checkers())["AcceleratorUtilizationChecker"]
        .mutable_options())["threshold"] = "0.05";
  auto advice = Advise((*loaded)->model, &views, o);
  REQUIRE(advice.ok());
  CHECK(RenderAdvice(*advice) ==
        "\nAcceleratorUtilizationChecker:\n"
        "device: /job:localhost/replica:0/task:0/gpu:0 utilization: 0.09\n"
        "\nExpensiveOperationChecker:\n"
        "top 1 operation type: Conv2D, cpu: 4.49ms, accelerator: 404us, "
        "total: 4.89ms (98.87%)\n"
        "top 1 graph node: Conv2D, cpu: 4.07ms, accelerator: 226us, total: "
        "4.29ms\n");
  (*(*o.mutable_checkers())["ExpensiveOperationChecker"]
        .mutable_options())["top"] = "zero";
  CHECK_FALSE(Advise((*loaded)->model, &views, o).ok());
  tfpb::AdvisorOptionsProto bad;
  (*(*bad.mutable_checkers())["OperationChecker"].mutable_options())["x"] = "1";
  CHECK_FALSE(Advise((*loaded)->model, &views, bad).ok());
}

TEST_CASE("advise without RunMetadata skips what needs it") {
  Model m;
  tfcore::GraphDef g;
  REQUIRE(google::protobuf::TextFormat::ParseFromString(
      R"pb(node { name: "bn/BatchNorm/mul" op: "Mul" })pb", &g));
  m.AddGraph(g);
  Views views(&m, nullptr);
  std::vector<std::string> notes;
  auto advice = Advise(m, &views, DefaultAdvisorOptions(), &notes);
  REQUIRE(advice.ok());
  CHECK(RenderAdvice(*advice) ==
        "\nAcceleratorUtilizationChecker:\n"
        "\nOperationChecker:\n"
        "Maybe use faster FusedBatchNorm instead of BatchNorm\n"
        "\nExpensiveOperationChecker:\n");
  CHECK(notes.size() == 2);
}

// ---------------------------------------------------------------------------
// The checkers beyond tfprof's own, on hand-made runs.

namespace extra {

constexpr char kCpu[] = "/job:localhost/replica:0/task:0/device:cpu:0";
constexpr char kGpu[] = "/job:localhost/replica:0/task:0/device:gpu:0";
constexpr char kAll[] = "/device:gpu:0/stream:all";
constexpr char kMemcpy[] = "/device:gpu:0/memcpy";

struct Stat {
  std::string node;
  std::string device;
  int64_t start;
  int64_t duration;
};

// A model with the given ops (name -> op type) and one RunMetadata per
// step.
Model Build(const std::map<std::string, std::string>& ops,
            const std::vector<std::vector<Stat>>& steps,
            const std::map<std::string, int64_t>& float_ops = {}) {
  Model m;
  tfcore::GraphDef g;
  for (const auto& [name, op] : ops) {
    auto* n = g.add_node();
    n->set_name(name);
    n->set_op(op);
  }
  m.AddGraph(g);
  tfpb::OpLogProto log;
  for (const auto& [name, flops] : float_ops) {
    auto* e = log.add_log_entries();
    e->set_name(name);
    e->set_float_ops(flops);
  }
  m.AddOpLog(log);
  for (size_t s = 0; s < steps.size(); ++s) {
    tfcore::RunMetadata rm;
    std::map<std::string, tfcore::DeviceStepStats*> devs;
    for (const Stat& st : steps[s]) {
      auto*& d = devs[st.device];
      if (d == nullptr) {
        d = rm.mutable_step_stats()->add_dev_stats();
        d->set_device(st.device);
      }
      auto* ns = d->add_node_stats();
      ns->set_node_name(st.node);
      ns->set_all_start_micros(st.start);
      ns->set_op_end_rel_micros(st.duration);
    }
    rm.mutable_step_stats();
    REQUIRE(m.AddRunMeta(static_cast<int64_t>(s), rm).ok());
  }
  return m;
}

struct Run {
  std::vector<std::string> reports;
  std::vector<std::string> notes;
};

Run Check(const Model& m, const std::string& checker,
          std::map<std::string, std::string> opts = {}) {
  Views views(&m, nullptr);
  tfpb::AdvisorOptionsProto o;
  auto& c = (*o.mutable_checkers())[checker];
  for (const auto& [k, v] : opts) (*c.mutable_options())[k] = v;
  Run r;
  auto advice = Advise(m, &views, o, &r.notes);
  REQUIRE(advice.ok());
  for (const auto& rep : advice->checkers().at(checker).reports()) {
    r.reports.push_back(rep);
  }
  return r;
}

TEST_CASE("HostDeviceCopyChecker: copies as a share of the step") {
  const std::map<std::string, std::string> ops = {{"mm", "MatMul"},
                                                  {"edge_1_x", "_Recv"}};
  // A 1000us step: 400us of copies.
  Model heavy = Build(ops, {{{"mm", kGpu, 1000, 1000},
                             {"edge_1_x:MEMCPYHtoD", kMemcpy, 1100, 300},
                             {"edge_1_x:MEMCPYHtoD", kMemcpy, 1500, 100}}});
  Run r = Check(heavy, "HostDeviceCopyChecker");
  REQUIRE(r.reports.size() == 3);
  CHECK(r.reports[0] ==
        "memcpy: 400us per step in 2 copies, 40.0% of the step wall time "
        "(1.00ms)\n"
        "  /device:gpu:0/memcpy: 400us per step in 2 copies");
  CHECK(r.reports[1] ==
        "largest copies:\n"
        "  edge_1_x on /device:gpu:0/memcpy, step 0: 300us\n"
        "  edge_1_x on /device:gpu:0/memcpy, step 0: 100us");
  CHECK(r.reports[2].rfind("Host-device copies take 40.0% of the step.", 0) ==
        0);
  // 1% of the step: reported, not a problem.
  Model light = Build(ops, {{{"mm", kGpu, 1000, 1000},
                             {"edge_1_x:MEMCPYHtoD", kMemcpy, 1100, 10}}});
  r = Check(light, "HostDeviceCopyChecker");
  REQUIRE(r.reports.size() == 2);
  CHECK(r.reports[0].find("1.0% of the step wall time (1.00ms), below the "
                          "threshold") != std::string::npos);
  // No memcpy lanes: says so, no reports.
  Model none = Build(ops, {{{"mm", kGpu, 1000, 1000}}});
  r = Check(none, "HostDeviceCopyChecker");
  CHECK(r.reports.empty());
  REQUIRE(r.notes.size() == 1);
  CHECK(r.notes[0].find("no memcpy activity") != std::string::npos);
}

TEST_CASE("CpuFallbackChecker: CPU ops in an accelerator run") {
  const std::map<std::string, std::string> ops = {
      {"mm", "MatMul"}, {"cast", "Cast"}, {"recv", "_Recv"}};
  Model m = Build(ops, {{{"mm", kGpu, 10, 100},
                         {"mm", kAll, 20, 50},
                         {"cast", kCpu, 200, 60},
                         {"recv", kCpu, 300, 500}}});
  Run r = Check(m, "CpuFallbackChecker");
  REQUIRE(r.reports.size() == 2);
  // 60us of 710us; _Recv is host plumbing and not counted.
  CHECK(r.reports[0] ==
        "1 ops ran on the CPU in a run with an accelerator: 60us per step, "
        "8.5% of all op time\n"
        "  cast (Cast) on /job:localhost/replica:0/task:0/device:cpu:0: 60us "
        "(8.5%)");
  CHECK(r.reports[1].rfind("Check their placement", 0) == 0);
  // A raised threshold: listed, no advice.
  r = Check(m, "CpuFallbackChecker", {{"threshold", "0.5"}});
  CHECK(r.reports.size() == 1);
  // A CPU-only run: nothing to compare.
  Model cpu = Build(ops, {{{"cast", kCpu, 200, 60}}});
  r = Check(cpu, "CpuFallbackChecker");
  CHECK(r.reports.empty());
  CHECK(r.notes.size() == 1);
}

TEST_CASE("AcceleratorIdleChecker: gaps and the host ops in them") {
  const std::map<std::string, std::string> ops = {
      {"a", "MatMul"}, {"b", "MatMul"}, {"next", "IteratorGetNext"}};
  // Kernels at [100,200) and [900,1000): a 700us gap while the host reads
  // input.
  Model m = Build(ops, {{{"a", kGpu, 90, 10},
                         {"a", kAll, 100, 100},
                         {"next", kCpu, 250, 600},
                         {"b", kGpu, 880, 10},
                         {"b", kAll, 900, 100}}});
  Run r = Check(m, "AcceleratorIdleChecker");
  REQUIRE(r.reports.size() == 3);
  CHECK(r.reports[0] ==
        "/device:gpu:0: idle 77.8% of its kernel span (700us of 900us per "
        "step, in 1 gaps of at least 50us over 1 step)");
  CHECK(r.reports[1] ==
        "largest gaps:\n"
        "  700us on /device:gpu:0, step 0 at +110us: on the host meanwhile: "
        "next (IteratorGetNext) 600us, b (MatMul) 10us");
  CHECK(r.reports[2].rfind("The accelerator waits for input", 0) == 0);
  // Host work between kernels: the fusion advice names the framework's way.
  const std::map<std::string, std::string> host_ops = {
      {"a", "MatMul"}, {"b", "MatMul"}, {"host", "Mul"}};
  for (ProfileSource source :
       {ProfileSource::kTensorFlow, ProfileSource::kPyTorch}) {
    Model launch = Build(host_ops, {{{"a", kAll, 100, 100},
                                     {"host", kCpu, 250, 600},
                                     {"b", kAll, 900, 100}}});
    launch.set_source(source);
    r = Check(launch, "AcceleratorIdleChecker");
    REQUIRE(r.reports.size() == 3);
    const bool torch = source == ProfileSource::kPyTorch;
    CHECK(r.reports[2].find("waits for the host") != std::string::npos);
    CHECK((r.reports[2].find("torch.compile") != std::string::npos) == torch);
    CHECK((r.reports[2].find("XLA") != std::string::npos) == !torch);
  }
  // Back-to-back kernels: no gap.
  Model busy = Build(ops, {{{"a", kAll, 100, 100}, {"b", kAll, 200, 100}}});
  r = Check(busy, "AcceleratorIdleChecker");
  REQUIRE(r.reports.size() == 1);
  CHECK(r.reports[0].find("idle 0.0%") != std::string::npos);
  CHECK(r.reports[0].find("below the threshold") != std::string::npos);
}

// Host ops with the same overlap are listed by name, not in the order of
// their addresses (which changed from run to run). "x_host" is made after
// "y_host" (it is in no graph: made as its stat is read).
TEST_CASE("AcceleratorIdleChecker: host ops tied in a gap are listed by name") {
  const std::map<std::string, std::string> ops = {
      {"a", "MatMul"}, {"b", "MatMul"}, {"y_host", "Mul"}};
  Model m = Build(ops, {{{"a", kAll, 100, 100},
                         {"y_host", kCpu, 300, 200},
                         {"x_host", kCpu, 300, 200},
                         {"b", kAll, 900, 100}}});
  Run r = Check(m, "AcceleratorIdleChecker");
  REQUIRE(r.reports.size() >= 2);
  CHECK(r.reports[1].find("on the host meanwhile: x_host (x_host) 200us, "
                          "y_host (Mul) 200us") != std::string::npos);
}

TEST_CASE("StepTimeChecker: the slow step and the node behind it") {
  const std::map<std::string, std::string> ops = {{"a", "MatMul"},
                                                  {"save", "SaveV2"}};
  std::vector<std::vector<Stat>> steps;
  for (int s = 0; s < 5; ++s) {
    const int64_t t0 = 10000 * (s + 1);
    steps.push_back({{"a", kCpu, t0, 100}});
    if (s == 3) steps.back().push_back({"save", kCpu, t0 + 100, 300});
  }
  Model m = Build(ops, steps);
  Run r = Check(m, "StepTimeChecker");
  REQUIRE(r.reports.size() == 3);
  CHECK(r.reports[0] ==
        "5 steps (wall time): median 100us, fastest 100us (step 0), slowest "
        "400us (step 3)");
  CHECK(r.reports[1] ==
        "step 3: 400us, 300.0% slower than the median; nodes that differ "
        "most: save +300us (300us here, 0us usually)");
  // Even steps: nothing to report.
  steps[3].pop_back();
  r = Check(Build(ops, steps), "StepTimeChecker");
  REQUIRE(r.reports.size() == 2);
  CHECK(r.reports[1] == "no step is more than 25% away from the median");
  // Two steps are too few.
  steps.resize(2);
  r = Check(Build(ops, steps), "StepTimeChecker");
  CHECK(r.reports.empty());
  CHECK(r.notes.size() == 1);
}

TEST_CASE("FlopsCoverageChecker: timed arithmetic ops without float_ops") {
  const std::map<std::string, std::string> ops = {{"mm", "MatMul"},
                                                  {"mm2", "MatMul"},
                                                  {"conv", "Conv2D"},
                                                  {"id", "Identity"}};
  const std::vector<std::vector<Stat>> steps = {{{"mm", kCpu, 1, 100},
                                                 {"mm2", kCpu, 200, 100},
                                                 {"conv", kCpu, 400, 500},
                                                 {"id", kCpu, 1000, 300}}};
  Model partial = Build(ops, steps, {{"mm", 1000}});
  Run r = Check(partial, "FlopsCoverageChecker");
  REQUIRE(r.reports.size() == 2);
  CHECK(r.reports[0] ==
        "FLOP totals miss arithmetic ops taking 60.0% of the op time "
        "(600us):\n"
        "  Conv2D: 1 of 1 nodes without float_ops, 500us (50.0%)\n"
        "  MatMul: 1 of 2 nodes without float_ops, 100us (10.0%)");
  Model covered = Build(ops, steps, {{"mm", 1}, {"mm2", 1}, {"conv", 1}});
  r = Check(covered, "FlopsCoverageChecker");
  REQUIRE(r.reports.size() == 1);
  CHECK(r.reports[0].rfind("every arithmetic op type", 0) == 0);
  Model bare = Build(ops, steps);
  r = Check(bare, "FlopsCoverageChecker");
  REQUIRE(r.reports.size() == 2);
  CHECK(r.reports[0].rfind("no node has float_ops", 0) == 0);
}

TEST_CASE("MemoryChecker: peak and residual holders, or a note") {
  Model m;
  tfcore::GraphDef g;
  auto* big = g.add_node();
  big->set_name("big");
  big->set_op("big");
  auto* small = g.add_node();
  small->set_name("small");
  small->set_op("small");
  m.AddGraph(g);
  auto rm = testing::ParseTextProto<tfcore::RunMetadata>(R"pb(
    step_stats {
      dev_stats {
        device: "/job:localhost/replica:0/task:0/device:gpu:0"
        node_stats {
          node_name: "big"
          all_start_micros: 10
          op_end_rel_micros: 5
          memory {
            allocator_name: "GPU_0_bfc"
            total_bytes: 3000
            peak_bytes: 3000
            live_bytes: 2000
            allocator_bytes_in_use: 9000
          }
        }
        node_stats {
          node_name: "small"
          all_start_micros: 20
          op_end_rel_micros: 5
          memory {
            allocator_name: "GPU_0_bfc"
            total_bytes: 1000
            peak_bytes: 1000
          }
        }
      }
    })pb");
  REQUIRE(m.AddRunMeta(0, rm).ok());
  Run r = Check(m, "MemoryChecker", {{"top", "1"}});
  REQUIRE(r.reports.size() == 4);
  CHECK(r.reports[0] ==
        "largest peak memory (4.00KB summed over all nodes):\n"
        "  big (big, /job:localhost/replica:0/task:0/device:gpu:0): 3.00KB "
        "(75.0%), peak 3.00KB, residual 2.00KB");
  CHECK(r.reports[1] ==
        "largest residual memory (still allocated after the op ran) (2.00KB "
        "summed "
        "over all nodes):\n"
        "  big (big, /job:localhost/replica:0/task:0/device:gpu:0): 2.00KB "
        "(100.0%), peak 3.00KB, residual 2.00KB");
  CHECK(r.reports[2] ==
        "/job:localhost/replica:0/task:0/device:gpu:0: allocator peak in use "
        "9.00KB, reached after big");
  Model none = Build({{"a", "Add"}}, {{{"a", kCpu, 1, 1}}});
  r = Check(none, "MemoryChecker");
  CHECK(r.reports.empty());
  CHECK(r.notes.size() == 1);
}

TEST_CASE("advise -checker all on real GPU runs") {
  // TensorFlow's GPU test run and the dynamic_stitch GPU RunMetadata: every
  // checker runs, the new ones report what these runs show.
  auto tfdata = LoadProfile(testing::TfTestData());
  REQUIRE(tfdata.ok());
  Views views(&(*tfdata)->model, nullptr);
  auto advice = Advise((*tfdata)->model, &views, AllAdvisorOptions());
  REQUIRE(advice.ok());
  const std::string text = RenderAdvice(*advice);
  CHECK(text.find("\nAcceleratorIdleChecker:\n"
                  "/gpu:0: idle 83.9% of its kernel span (3.71ms of 4.42ms "
                  "per step, in 5 gaps of at least 50us over 1 step)\n") !=
        std::string::npos);
  CHECK(text.find("\nCpuFallbackChecker:\n1 ops ran on the CPU in a run with "
                  "an accelerator: 41us per step, 0.8% of all op time, below "
                  "the threshold\n") != std::string::npos);

  InputPaths in;
  in.run_meta_path =
      testing::CorpusFile("yaroslavvb-stuff/dynamic_stitch_gpu_profile.pbtxt");
  auto stitch = LoadProfile(in);
  REQUIRE(stitch.ok());
  Views sv(&(*stitch)->model, nullptr);
  advice = Advise((*stitch)->model, &sv, AllAdvisorOptions());
  REQUIRE(advice.ok());
  const auto& copies = advice->checkers().at("HostDeviceCopyChecker");
  REQUIRE(copies.reports_size() == 2);
  // The wall time is the RunMetadata's first start (_SOURCE) to its last
  // all_end, as TensorFlow's timeline draws the step.
  CHECK(copies.reports(0) ==
        "memcpy: 21us per step in 20 copies, 0.1% of the step wall time "
        "(15.11ms), below the threshold\n"
        "  /gpu:0/memcpy: 21us per step in 20 copies");
}

TEST_CASE("advise runs the checkers that fit the input by default") {
  // A PyTorch trace: the idle, copy, step, memory and MFU checkers, none
  // of tfprof's TensorFlow three; a TensorFlow profile: those three.
  const std::string kineto = testing::CorpusFile(
      "pytorch-kineto/worker0.1623143089861.pt.trace.json.gz");
  InputPaths in;
  in.trace_path = kineto;
  auto loaded = LoadProfile(in);
  REQUIRE(loaded.ok());
  const Model& model = (*loaded)->model;
  const tfpb::AdvisorOptionsProto trace_options =
      DefaultAdvisorOptions(model.source());
  std::set<std::string> chosen;
  for (const auto& [name, o] : trace_options.checkers()) chosen.insert(name);
  CHECK(chosen ==
        std::set<std::string>{"AcceleratorIdleChecker", "HostDeviceCopyChecker",
                              "LayoutConversionChecker", "MemoryChecker",
                              "MfuChecker", "StepTimeChecker"});
  const tfpb::AdvisorOptionsProto tf_options = DefaultAdvisorOptions();
  std::set<std::string> tf;
  for (const auto& [name, o] : tf_options.checkers()) tf.insert(name);
  CHECK(tf == std::set<std::string>{"AcceleratorUtilizationChecker",
                                    "ExpensiveOperationChecker",
                                    "OperationChecker"});
  // The copy checker reads the trace's Memcpy and Memset events: their
  // time and count per ProfilerStep, recomputed from the raw events.
  testing::JsonValue doc;
  std::string error;
  REQUIRE(testing::ParseJsonFile(kineto, &doc, &error));
  double copy_us = 0;
  int64_t copies = 0, steps = 0;
  for (const testing::JsonValue& e : doc.at("traceEvents").array) {
    if (!e.Has("cat") || !e.Has("ph") || e.at("ph").string != "X") continue;
    const std::string& cat = e.at("cat").string;
    if (cat == "Memcpy" || cat == "Memset" || cat == "gpu_memcpy" ||
        cat == "gpu_memset") {
      copy_us += e.at("dur").number;
      ++copies;
    }
    if (e.at("name").string.rfind("ProfilerStep#", 0) == 0) ++steps;
  }
  REQUIRE(copies > 0);
  REQUIRE(steps == static_cast<int64_t>(model.steps().size()));
  Views views(&model, nullptr);
  auto advice = Advise(model, &views, trace_options);
  REQUIRE(advice.ok());
  const auto& report = advice->checkers().at("HostDeviceCopyChecker");
  REQUIRE(report.reports_size() == 2);
  CHECK_THAT(
      report.reports(0),
      Catch::StartsWith(absl::StrCat(
          "memcpy: ", FormatNanos(static_cast<int64_t>(copy_us * 1000 / steps)),
          " per step in ", copies / steps, " copies")));
  CHECK_THAT(report.reports(1), Catch::Contains("Memcpy HtoD"));
}

// Sets and small copies last under a microsecond: the copy checker adds
// them in nanoseconds, as recorded (H200 ResNet-50, corpus; 70 of its 74
// copies and sets per step are sets of 0.7-0.9us).
TEST_CASE("HostDeviceCopyChecker: copies under a microsecond count") {
  const std::string rel = "gpu-h200-2026/resnet.pt.trace.json.gz";
  if (!testing::HaveCorpusFile(rel)) return;
  const std::string file = testing::CorpusFile(rel);
  testing::JsonValue doc;
  std::string error;
  REQUIRE(testing::ParseJsonFile(file, &doc, &error));
  int64_t copy_ns = 0, copies = 0, steps = 0;
  for (const testing::JsonValue& e : doc.at("traceEvents").array) {
    if (!e.Has("cat") || !e.Has("dur")) continue;
    const std::string& cat = e.at("cat").string;
    if (cat == "gpu_memcpy" || cat == "gpu_memset") {
      copy_ns += std::llround(e.at("dur").number * 1000);
      ++copies;
    }
    if (cat != "gpu_user_annotation" &&
        e.at("name").string.rfind("ProfilerStep#", 0) == 0) {
      ++steps;
    }
  }
  REQUIRE(steps == 5);
  InputPaths in;
  in.trace_path = file;
  auto loaded = LoadProfile(in);
  REQUIRE(loaded.ok());
  Views views(&(*loaded)->model, nullptr);
  auto advice = Advise((*loaded)->model, &views,
                       DefaultAdvisorOptions((*loaded)->model.source()));
  REQUIRE(advice.ok());
  const auto& report = advice->checkers().at("HostDeviceCopyChecker");
  REQUIRE(report.reports_size() >= 1);
  CHECK_THAT(report.reports(0),
             Catch::StartsWith(absl::StrCat(
                 "memcpy: ",
                 FormatNanos(static_cast<int64_t>(static_cast<double>(copy_ns) /
                                                  steps)),
                 " per step in ", copies / steps, " copies")));
}

// MemoryChecker starts with each allocator's own peak, the run's memory
// peak: on the H200 ResNet-50 (corpus) the most torch.cuda.max_allocated()
// read in a profiled step.
// MemoryChecker's reports on a model.
// A trace of the corpus, loaded.
std::unique_ptr<LoadedProfile> LoadTrace(const std::string& rel) {
  InputPaths in;
  in.trace_path = testing::CorpusFile(rel);
  auto loaded = LoadProfile(in);
  REQUIRE(loaded.ok());
  return std::move(*loaded);
}

std::vector<std::string> MemoryCheckerReports(const Model& model) {
  Views views(&model, nullptr);
  tfpb::AdvisorOptionsProto options;
  (*options.mutable_checkers())["MemoryChecker"];
  auto advice = Advise(model, &views, options);
  REQUIRE(advice.ok());
  const auto& report = advice->checkers().at("MemoryChecker");
  return {report.reports().begin(), report.reports().end()};
}

// Whether MemoryChecker's first report on a corpus trace lists `allocator`
// with a peak of `bytes`.
void CheckAllocatorPeak(const std::string& rel, const std::string& allocator,
                        double bytes) {
  InputPaths in;
  in.trace_path = testing::CorpusFile(rel);
  auto loaded = LoadProfile(in);
  REQUIRE(loaded.ok());
  const std::vector<std::string> reports =
      MemoryCheckerReports((*loaded)->model);
  REQUIRE(!reports.empty());
  CHECK_THAT(reports[0],
             Catch::Contains(absl::StrCat("  ", allocator, ": ",
                                          FormatMemory(std::llround(bytes)))));
}

TEST_CASE("MemoryChecker: the allocator's peak as the framework reads it") {
  const double most = testing::TorchMaxAllocated("resnet");
  if (most < 0) return;
  CheckAllocatorPeak("gpu-h200-2026/resnet.pt.trace.json.gz", "GPU_0", most);
}

// A TF2 capture whose ops hold memory and whose trace has memory events:
// the allocator's peak is said once, from the events (the bytes in use as
// ops ended, a sample of it, read as a second, smaller peak: 2.02MB).
TEST_CASE("MemoryChecker: one peak per allocator when the trace has events") {
  const auto loaded = LoadTrace(
      "aoberai-chess-engine/train/plugins/profile/2021_06_16_00_30_02/"
      "aoberai.xplane.pb");
  const std::vector<std::string> reports = MemoryCheckerReports(loaded->model);
  REQUIRE(reports.size() >= 3);
  CHECK_THAT(reports[0], Catch::Contains("GPU_0_bfc: 3.45MB in step 0"));
  CHECK_THAT(reports[1], Catch::Contains("largest peak memory"));
  for (const std::string& r : reports) {
    CHECK(r.find("allocator peak in use") == std::string::npos);
  }
}

// An XSpace's launch-bound advice fits how the run used XLA: with command
// buffers on (their host updates may be the gaps), off, or no XLA at all.
TEST_CASE("AcceleratorIdleChecker: XLA advice fits the run") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"gpu-h200-2026/jax_lm_cb.xplane.pb.gz",
       "compare a run with them off (XLA_FLAGS=--xla_gpu_enable_command_"
       "buffer=)"},
      {"gpu-h200-2026/jax_lm_nocb.xplane.pb.gz",
       "try XLA's CUDA-graph command buffers"},
      {"aoberai-chess-engine/train/plugins/profile/2021_06_16_00_30_02/"
       "aoberai.xplane.pb",
       "Fuse small ops (tf.function(jit_compile=True), or jax.jit)"}};
  for (const auto& [file, advice] : cases) {
    INFO(file);
    const auto loaded = LoadTrace(file);
    const Run r = Check(loaded->model, "AcceleratorIdleChecker");
    REQUIRE_FALSE(r.reports.empty());
    CHECK_THAT(r.reports.back(), Catch::Contains(advice));
  }
}

// Kernels replayed in command buffers keep their time on command_buffer
// nodes while their instructions carry the float ops: MfuChecker does not
// count that time as without float ops, so the same program with and without
// command buffers has about the same share without (58.8% and 58.6%; 78.3%
// with the buffers' time counted).
TEST_CASE("MfuChecker: command buffers' kernels are not time without flops") {
  std::vector<double> shares;
  for (const char* file : {"gpu-h200-2026/jax_lm_cb.xplane.pb.gz",
                           "gpu-h200-2026/jax_lm_nocb.xplane.pb.gz"}) {
    INFO(file);
    const auto loaded = LoadTrace(file);
    const Run r = Check(loaded->model, "MfuChecker");
    std::string line;
    for (const std::string& rep : r.reports) {
      if (rep.find("no float ops") != std::string::npos) line = rep;
    }
    REQUIRE_FALSE(line.empty());
    shares.push_back(std::stod(line.substr(0, line.find('%'))));
    CHECK((line.find("in XLA command buffers") != std::string::npos) ==
          (std::string(file).find("_cb") != std::string::npos));
  }
  CHECK(std::abs(shares[0] - shares[1]) < 1.0);
}

// A JAX program's allocations are made outside any host op: the checker
// still reports the allocator's peak from the memory events, which is
// memory_stats()'s peak_bytes_in_use (jax_refs.json).
TEST_CASE("MemoryChecker: an XSpace without op memory has its allocator peak") {
  const std::string file = "gpu-h200-2026/jax_lm_nocb.xplane.pb.gz";
  if (!testing::HaveCorpusFile(file)) return;
  testing::JsonValue refs;
  std::string error;
  REQUIRE(testing::ParseJson(
      testing::ReadFile(testing::CorpusFile("gpu-h200-2026/jax_refs.json")),
      &refs, &error));
  const testing::JsonValue& run = refs.at("jax_nocb");
  CheckAllocatorPeak(file, "GPU_0_bfc",
                     run.at("memory_stats").at("peak_bytes_in_use").number);
}

// A trace's op runs on the host whatever memory it allocates: MemoryChecker
// does not print the op's host device beside GPU memory, and the summary
// says where a GPU's work came from when no node is placed on it.
TEST_CASE("Trace memory and GPUs are not labelled with the host's device") {
  InputPaths in;
  in.trace_path = testing::CorpusFile(
      "pytorch-kineto/worker0.1623143089861.pt.trace.json.gz");
  auto loaded = LoadProfile(in);
  REQUIRE(loaded.ok());
  bool listed = false;
  for (const std::string& r : MemoryCheckerReports((*loaded)->model)) {
    if (r.rfind("largest peak memory", 0) != 0) continue;
    listed = true;
    CHECK(r.find("(aten::cudnn_convolution)") != std::string::npos);
    CHECK(r.find("device:cpu:0") == std::string::npos);
  }
  CHECK(listed);
  const std::string summary =
      RenderSummary(Summarize((*loaded)->model), &**loaded);
  CHECK(summary.find("device:gpu:0                 0 nodes (its work "
                     "launched by host ops), ") != std::string::npos);
}

// One checker's reports on a trace, run as `advise -checker NAME` runs it
// (at least one report).
std::vector<std::string> ReportsOn(const std::string& trace,
                                   const std::string& checker) {
  InputPaths in;
  in.trace_path = trace;
  auto loaded = LoadProfile(in);
  REQUIRE(loaded.ok());
  const Model& model = (*loaded)->model;
  Views views(&model, nullptr);
  tfpb::AdvisorOptionsProto options;
  (*options.mutable_checkers())[checker];
  auto advice = Advise(model, &views, options);
  REQUIRE(advice.ok());
  const auto& report = advice->checkers().at(checker);
  REQUIRE(report.reports_size() >= 1);
  return {report.reports().begin(), report.reports().end()};
}

// The accelerator's gaps of at least 50us in a Kineto trace, from the raw
// events: each kernel, copy and set belongs to the step whose ProfilerStep
// range holds its launching runtime call; per step, the device work is
// merged to the nanosecond and the gaps between merged runs counted.
std::pair<int64_t, int64_t> RawIdleGaps(const std::string& path) {
  testing::JsonValue doc;
  std::string error;
  REQUIRE(testing::ParseJsonFile(path, &doc, &error));
  const auto ns = [](double us) { return std::llround(us * 1000); };
  std::vector<std::pair<int64_t, int64_t>> steps;  // ProfilerStep ranges
  std::map<int64_t, int64_t> launch;               // correlation -> ts
  std::vector<std::tuple<int64_t, int64_t, int64_t>> work;  // corr, ts, end
  for (const testing::JsonValue& e : doc.at("traceEvents").array) {
    if (!e.Has("ph") || e.at("ph").string != "X" || !e.Has("cat")) continue;
    const std::string& cat = e.at("cat").string;
    const int64_t ts = ns(e.at("ts").number);
    const int64_t end = ts + ns(e.at("dur").number);
    if (cat == "cpu_op" || cat == "user_annotation") {
      if (e.at("name").string.rfind("ProfilerStep#", 0) == 0) {
        steps.emplace_back(ts, end);
      }
    } else if (cat == "cuda_runtime" || cat == "cuda_driver") {
      launch[std::llround(e.at("args").at("correlation").number)] = ts;
    } else if (cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset") {
      work.emplace_back(std::llround(e.at("args").at("correlation").number), ts,
                        end);
    }
  }
  std::map<size_t, std::vector<std::pair<int64_t, int64_t>>> by_step;
  for (const auto& [corr, ts, end] : work) {
    const auto l = launch.find(corr);
    if (l == launch.end()) continue;
    for (size_t s = 0; s < steps.size(); ++s) {
      if (l->second >= steps[s].first && l->second < steps[s].second) {
        by_step[s].emplace_back(ts, end);
      }
    }
  }
  int64_t gaps = 0, idle = 0;
  for (auto& [step, v] : by_step) {
    std::sort(v.begin(), v.end());
    int64_t covered = v.front().first;
    for (const auto& [ts, end] : v) {
      if (ts - covered >= 50000) {
        ++gaps;
        idle += ts - covered;
      }
      covered = std::max(covered, end);
    }
  }
  return {gaps, idle};
}

// Gaps just under the minimum are not gaps: the Llama capture has gaps of
// 49.5-49.99us that microsecond times would round up to 50us.
TEST_CASE("AcceleratorIdleChecker: gaps measured to the nanosecond") {
  const std::string rel = "gpu-h200-2026/llama_gqa_dev.pt.trace.json.gz";
  if (!testing::HaveCorpusFile(rel)) return;
  const std::string path = testing::CorpusFile(rel);
  const auto [gaps, idle_ns] = RawIdleGaps(path);
  const std::string first = ReportsOn(path, "AcceleratorIdleChecker")[0];
  const int64_t steps = 5;  // the capture's ProfilerSteps
  CHECK_THAT(first,
             Catch::Contains(absl::StrCat(
                 "(", FormatTime((idle_ns / steps + 500) / 1000), " of ")));
  CHECK_THAT(first, Catch::Contains(absl::StrCat("in ", gaps,
                                                 " gaps of at least 50us over ",
                                                 steps, " steps")));
}

// The copy checker's step wall time is the mean of the ProfilerStep ranges
// as recorded (Llama: 38.509ms), not of spans widened to whole
// microseconds.
TEST_CASE("HostDeviceCopyChecker: the step wall time as recorded") {
  const std::string rel = "gpu-h200-2026/llama_gqa_dev.pt.trace.json.gz";
  if (!testing::HaveCorpusFile(rel)) return;
  const std::string path = testing::CorpusFile(rel);
  testing::JsonValue doc;
  std::string error;
  REQUIRE(testing::ParseJsonFile(path, &doc, &error));
  int64_t wall_ns = 0, steps = 0;
  for (const testing::JsonValue& e : doc.at("traceEvents").array) {
    if (!e.Has("cat") || e.at("cat").string != "user_annotation") continue;
    if (e.at("name").string.rfind("ProfilerStep#", 0) != 0) continue;
    wall_ns += std::llround(e.at("dur").number * 1000);
    ++steps;
  }
  REQUIRE(steps == 5);
  CHECK_THAT(ReportsOn(path, "HostDeviceCopyChecker")[0],
             Catch::Contains(absl::StrCat("of the step wall time (",
                                          FormatNanos(wall_ns / steps), ")")));
}

// LayoutConversionChecker's first report on a corpus trace, and the share
// of kernel time in layout conversions recomputed from the raw events
// (kernels named nchwToNhwc or nhwcToNchw: cuDNN's).
void CheckLayoutConversions(const std::string& rel, bool advice_expected) {
  if (!testing::HaveCorpusFile(rel)) return;
  const std::string path = testing::CorpusFile(rel);
  testing::JsonValue doc;
  std::string error;
  REQUIRE(testing::ParseJsonFile(path, &doc, &error));
  double all_us = 0, conversion_us = 0;
  for (const testing::JsonValue& e : doc.at("traceEvents").array) {
    // "kernel" (Kineto today), "Kernel" (2021's traces).
    if (!e.Has("cat") || !e.Has("dur") ||
        (e.at("cat").string != "kernel" && e.at("cat").string != "Kernel")) {
      continue;
    }
    all_us += e.at("dur").number;
    const std::string& name = e.at("name").string;
    if (name.find("nchwToNhwc") != std::string::npos ||
        name.find("nhwcToNchw") != std::string::npos) {
      conversion_us += e.at("dur").number;
    }
  }
  REQUIRE(all_us > 0);
  const std::vector<std::string> reports =
      ReportsOn(path, "LayoutConversionChecker");
  const std::string share =
      absl::StrFormat("%.1f%%", 100 * conversion_us / all_us);
  CHECK_THAT(reports[0],
             Catch::Contains(conversion_us > 0
                                 ? absl::StrCat(share, " of the kernel time")
                                 : std::string(": none in ")));
  const std::string& last = reports.back();
  CHECK((last.find("channels_last") != std::string::npos) == advice_expected);
}

// ResNet-50 in NCHW on the H200 (corpus): cuDNN converts to NHWC and back
// around its convolutions; the channels_last run converts nothing.
TEST_CASE("LayoutConversionChecker: cuDNN's conversions in an NCHW run") {
  CheckLayoutConversions("gpu-h200-2026/resnet_nchw.pt.trace.json.gz", true);
  CheckLayoutConversions("gpu-h200-2026/resnet.pt.trace.json.gz", false);
  CheckLayoutConversions(
      "pytorch-kineto/worker0.1623143089861.pt.trace.json.gz", false);
  // HTA's NCCL sample: an NCHW model in float32, 9.3% converting.
  CheckLayoutConversions("hta/nccl_data.json.gz", true);
}

TEST_CASE("advise gives TensorFlow graph advice to TensorFlow inputs only") {
  // The PyTorch trace has BatchNorm in node names (CudnnBatchNormBackward)
  // and no FusedBatchNorm: the two conditions of TensorFlow's advice.
  InputPaths in;
  in.trace_path = testing::CorpusFile(
      "pytorch-kineto/worker0.1623143089861.pt.trace.json.gz");
  auto loaded = LoadProfile(in);
  REQUIRE(loaded.ok());
  const Model& model = (*loaded)->model;
  CHECK(model.source() == ProfileSource::kPyTorch);
  bool batch_norm_name = false;
  for (const GraphNode* n : model.NodesByName()) {
    if (n->name.find("BatchNorm") != std::string::npos) batch_norm_name = true;
  }
  REQUIRE(batch_norm_name);
  Views views(&(*loaded)->model, nullptr);
  std::vector<std::string> notes;
  auto advice = Advise(model, &views, AllAdvisorOptions(), &notes);
  REQUIRE(advice.ok());
  CHECK(advice->checkers().at("OperationChecker").reports_size() == 0);
  CHECK(RenderAdvice(*advice).find("FusedBatchNorm") == std::string::npos);
  bool noted = false;
  for (const std::string& n : notes) {
    if (n.find("OperationChecker skipped: its advice is for TensorFlow "
               "graphs, and this profile is a PyTorch (Kineto) trace") !=
        std::string::npos) {
      noted = true;
    }
  }
  CHECK(noted);
  // A TensorFlow profile still gets it (tf-testdata: NHWC on GPU).
  auto tf = LoadProfile(testing::TfTestData());
  REQUIRE(tf.ok());
  CHECK((*tf)->model.source() == ProfileSource::kTensorFlow);
}

}  // namespace extra
}  // namespace
}  // namespace tfprof
