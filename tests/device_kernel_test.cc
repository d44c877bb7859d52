// Devices and kernels of traces: -device_regexes, -select device,
// -show_kernels and the kernel view, checked against the traces' raw events
// and against queries that keep every device.
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "catch2/catch.hpp"
#include "profiler/load/loader.h"
#include "profiler/views/views.h"
#include "proto/xplane.pb.h"
#include "tests/corpus_util.h"
#include "tests/json_parse.h"
#include "tests/test_util.h"
#include "tests/trace_facts_util.h"

namespace tfprof {
namespace {

using testing::CorpusFile;
using testing::JsonInt;
using testing::JsonValue;
using testing::kAoberai;
using testing::KernelRows;
using testing::kKineto;
using testing::LoadTrace;
using testing::ReadJsonGz;

Totals RootTotals(const Model& model, const std::string& devices) {
  Views views(&model, nullptr);
  Options o;
  o.device_regexes = {devices};
  absl::StatusOr<ResultTree> r = views.Query(ViewKind::kScope, o);
  REQUIRE(r.ok());
  return r->root().total;
}

TEST_CASE("device_regexes keeps what ran on matching devices") {
  for (const std::string& file :
       {CorpusFile(std::string(kAoberai) + "xplane.pb"), std::string()}) {
    std::unique_ptr<LoadedProfile> loaded;
    if (file.empty()) {
      auto l = LoadProfile(testing::TfTestData());
      REQUIRE(l.ok());
      loaded = std::move(*l);
    } else {
      loaded = LoadTrace(file);
    }
    const Model& m = loaded->model;
    // Every device kept by a regex other than the fast path's ".*": the
    // same figures, node by node.
    Views all(&m, nullptr), slow(&m, nullptr);
    Options o;
    o.select = {Attr::kMicros, Attr::kBytes, Attr::kOccurrence};
    Options o2 = o;
    o2.device_regexes = {"nothing", ".*"};
    auto a = all.Query(ViewKind::kScope, o);
    auto b = slow.Query(ViewKind::kScope, o2);
    REQUIRE(a.ok());
    REQUIRE(b.ok());
    REQUIRE(a->nodes.size() == b->nodes.size());
    for (size_t i = 0; i < a->nodes.size(); ++i) {
      INFO(a->nodes[i].name);
      CHECK(a->nodes[i].self.exec_micros == b->nodes[i].self.exec_micros);
      CHECK(a->nodes[i].self.run_count == b->nodes[i].self.run_count);
      CHECK(a->nodes[i].self.requested_bytes ==
            b->nodes[i].self.requested_bytes);
    }
    const Totals t = RootTotals(m, ".*");
    const Totals gpu = RootTotals(m, ".*gpu.*");
    const Totals cpu = RootTotals(m, ".*cpu.*");
    CHECK(gpu.cpu_exec_micros + cpu.cpu_exec_micros == t.cpu_exec_micros);
    CHECK(cpu.accelerator_exec_micros == 0);
    CHECK(gpu.accelerator_exec_micros == t.accelerator_exec_micros);
    CHECK(RootTotals(m, "no device").exec_micros == 0);
  }
}

TEST_CASE("device_regexes reaches each GPU of a multi-GPU XSpace") {
  const std::string rel =
      "tensorflow-profiler-demo/GPU-multi-worker/34.83.195.179_6003.xplane.pb";
  if (!testing::HaveCorpusFile(rel)) return;
  const std::string path = CorpusFile(rel);
  tensorflow::profiler::XSpace space;
  REQUIRE(space.ParseFromString(testing::ReadFile(path)));
  std::map<int, std::pair<double, int64_t>> per_gpu;  // us, events
  for (const auto& plane : space.planes()) {
    if (plane.name().rfind("/device:GPU:", 0) != 0) continue;
    const int gpu = std::stoi(plane.name().substr(12));
    for (const auto& line : plane.lines()) {
      if (line.name().rfind("Stream #", 0) != 0) continue;
      for (const auto& ev : line.events()) {
        per_gpu[gpu].first += ev.duration_ps() / 1e6;
        ++per_gpu[gpu].second;
      }
    }
  }
  REQUIRE(per_gpu.size() >= 2);
  const auto loaded = LoadTrace(path);
  for (const auto& [gpu, want] : per_gpu) {
    INFO("gpu " << gpu);
    const Totals t =
        RootTotals(loaded->model, ".*gpu:" + std::to_string(gpu) + "/.*");
    // Each event's time is rounded to a microsecond once.
    CHECK(std::abs(t.accelerator_exec_micros - want.first) <=
          0.5 * want.second + 1);
    CHECK(t.cpu_exec_micros == 0);
  }
}

TEST_CASE("select device names the streams an op's kernels ran on") {
  // Every GPU event of the PyTorch trace is on device 0, stream 7: an op with
  // accelerator time lists that stream beside its host placement; the others
  // only the host.
  const JsonValue doc = ReadJsonGz(CorpusFile(kKineto));
  std::set<std::string> streams;
  for (const JsonValue& e : doc.at("traceEvents").array) {
    if (!e.Has("cat") || !e.Has("args")) continue;
    const std::string& cat = e.at("cat").string;
    if (cat == "Kernel" || cat == "Memcpy" || cat == "Memset") {
      streams.insert(std::to_string(JsonInt(e.at("args").at("device"))) + "/" +
                     std::to_string(JsonInt(e.at("args").at("stream"))));
    }
  }
  REQUIRE(streams == std::set<std::string>{"0/7"});
  const auto loaded = LoadTrace(CorpusFile(kKineto));
  Views views(&loaded->model, nullptr);
  Options o;
  o.max_depth = 1000000;
  o.account_displayed_op_only = false;
  int64_t with_kernels = 0;
  for (ViewKind view : {ViewKind::kScope, ViewKind::kOp}) {
    absl::StatusOr<ResultTree> r = views.Query(view, o);
    REQUIRE(r.ok());
    for (const ResultNode& n : r->nodes) {
      if (&n == &r->root()) continue;
      INFO(n.name);
      std::vector<std::string> want = {
          "/job:localhost/replica:0/task:0/device:cpu:0"};
      if (n.self.accelerator_exec_micros > 0) {
        want.push_back("/job:localhost/replica:0/task:0/device:gpu:0/stream:7");
        ++with_kernels;
      }
      CHECK(NodeDevices(*r, n) == want);
    }
  }
  CHECK(with_kernels > 50);
}

TEST_CASE("show_kernels lists each op's kernels under it") {
  const auto loaded =
      LoadTrace(CorpusFile(std::string(kAoberai) + "xplane.pb"));
  Views views(&loaded->model, nullptr);
  Options o;
  o.max_depth = 1000;
  o.show_kernels = true;
  absl::StatusOr<ResultTree> r = views.Query(ViewKind::kScope, o);
  REQUIRE(r.ok());
  int64_t launches = 0, ops = 0;
  for (const ResultNode& n : r->nodes) {
    int64_t kernel_micros = 0, kernels = 0;
    for (size_t c : n.children) {
      const ResultNode& k = r->nodes[c];
      if (std::string(k.fixed_type) != "_kernel") continue;
      ++kernels;
      launches += k.self.run_count;
      kernel_micros += k.self.accelerator_exec_micros;
    }
    if (kernels == 0) continue;
    ++ops;
    INFO(n.name);
    // The op's accelerator time is its kernels' (each rounded once).
    CHECK(std::abs(kernel_micros - n.self.accelerator_exec_micros) <= kernels);
  }
  CHECK(ops > 20);
  // Every launch of a known op, as the kernel view counts them.
  Options k;
  k.max_depth = 1000;
  absl::StatusOr<ResultTree> kv = views.Query(ViewKind::kKernel, k);
  REQUIRE(kv.ok());
  int64_t linked = 0;
  for (size_t c : kv->root().children) {
    linked +=
        kv->nodes[c].kernel->launches - kv->nodes[c].kernel->unlinked_launches;
  }
  CHECK(launches == linked);
}

TEST_CASE("Kernels of RunMetadata GPU streams, by op type") {
  // TensorFlow's RunMetadata keeps one node stat per kernel on its stream
  // (".../stream:N"), labelled "<node>:<OpType> <launch dimensions>";
  // copies are named MEMCPY... or carry num_bytes.
  const InputPaths paths = testing::TfTestData();
  tfcore::RunMetadata rm;
  REQUIRE(rm.ParseFromString(testing::ReadFile(paths.run_meta_path)));
  std::map<std::string, std::pair<int64_t, int64_t>> want;
  for (const auto& dev : rm.step_stats().dev_stats()) {
    const std::string& d = dev.device();
    const size_t at = d.find("/stream:");
    if (at == std::string::npos || d.substr(at) == "/stream:all") continue;
    for (const auto& ns : dev.node_stats()) {
      const std::string& label = ns.timeline_label();
      if (ns.node_name().find("MEMCPY") != std::string::npos ||
          label.find("num_bytes") != std::string::npos) {
        continue;
      }
      const std::string head = label.substr(0, label.find(' '));
      auto& k = want[head.substr(head.find(':') + 1)];
      ++k.first;
      k.second += ns.op_end_rel_micros() * 1000;
    }
  }
  REQUIRE(!want.empty());
  auto loaded = LoadProfile(paths);
  REQUIRE(loaded.ok());
  CHECK(KernelRows((*loaded)->model) == want);
}

TEST_CASE(
    "The kernel view rejects orders and minimums a kernel has no figure for") {
  InputPaths paths;
  paths.trace_path =
      CorpusFile("pytorch-kineto/worker0.1623143089861.pt.trace.json.gz");
  auto loaded = LoadProfile(paths);
  REQUIRE(loaded.ok());
  Views views(&(*loaded)->model, nullptr);
  for (const char* bad : {"bytes", "cpu_micros", "params", "peak_bytes"}) {
    Options o;
    REQUIRE(SetOption("order_by", bad, &o).ok());
    absl::StatusOr<ResultTree> r = views.Query(ViewKind::kKernel, o);
    REQUIRE_FALSE(r.ok());
    CHECK(std::string(r.status().message()) ==
          std::string("invalid value '") + bad +
              "' for option -order_by: the kernel view orders by name, "
              "micros, accelerator_micros, occurrence, float_ops");
  }
  // Likewise the minimums of figures a kernel does not have.
  for (const char* bad : {"min_bytes", "min_peak_bytes", "min_residual_bytes",
                          "min_output_bytes", "min_cpu_micros", "min_params"}) {
    Options o;
    REQUIRE(SetOption(bad, "1000000", &o).ok());
    absl::StatusOr<ResultTree> r = views.Query(ViewKind::kKernel, o);
    REQUIRE_FALSE(r.ok());
    CHECK(std::string(r.status().message())
              .rfind(std::string("option -") + bad +
                         ": a kernel has no bytes, CPU time or parameters",
                     0) == 0);
  }
  // The orders it has sort by their figure, largest first.
  Options o;
  o.order_by = Attr::kOccurrence;
  o.max_depth = 1000;
  absl::StatusOr<ResultTree> r = views.Query(ViewKind::kKernel, o);
  REQUIRE(r.ok());
  const std::vector<size_t>& rows = r->root().children;
  REQUIRE(rows.size() > 10);
  for (size_t i = 1; i < rows.size(); ++i) {
    CHECK(r->nodes[rows[i - 1]].self.run_count >=
          r->nodes[rows[i]].self.run_count);
  }
}

TEST_CASE("The kernel view needs kernels") {
  InputPaths paths;
  paths.run_meta_path =
      CorpusFile("yaroslavvb-stuff/dynamic_stitch_gpu_profile.pbtxt");
  auto loaded = LoadProfile(paths);  // copies only
  REQUIRE(loaded.ok());
  Views views(&(*loaded)->model, nullptr);
  absl::StatusOr<ResultTree> r = views.Query(ViewKind::kKernel, Options());
  REQUIRE_FALSE(r.ok());
  CHECK(std::string(r.status().message()).find("kernel view needs") !=
        std::string::npos);
}

// The kernel view's root is every kernel's time per step summed in
// nanoseconds and rounded once (Llama: 16112.63us per step from the raw
// kernels, not the 16114us its rows' rounded microseconds add up to), and
// a row's mean launch is rounded, not cut.
TEST_CASE("The kernel view's root and means are rounded once") {
  const std::string rel = "gpu-h200-2026/llama_gqa_dev.pt.trace.json.gz";
  if (!testing::HaveCorpusFile(rel)) return;
  const std::string path = testing::CorpusFile(rel);
  const testing::JsonValue doc = testing::ReadJsonGz(path);
  double kernel_us = 0;
  int64_t steps = 0;
  std::map<std::string, std::pair<int64_t, int64_t>> raw;  // launches, ns
  for (const testing::JsonValue& e : doc.at("traceEvents").array) {
    if (!e.Has("cat") || !e.Has("ph") || e.at("ph").string != "X") continue;
    if (e.at("cat").string == "kernel") {
      kernel_us += e.at("dur").number;
      auto& k = raw[e.at("name").string];
      ++k.first;
      k.second += std::llround(e.at("dur").number * 1000);
    }
    if (e.at("name").string.rfind("ProfilerStep#", 0) == 0 &&
        e.at("cat").string == "user_annotation") {
      ++steps;
    }
  }
  REQUIRE(steps == 5);
  auto loaded = testing::LoadTrace(path);
  Views views(&loaded->model, nullptr);
  Options o;
  o.max_depth = 1000000;
  absl::StatusOr<ResultTree> r = views.Query(ViewKind::kKernel, o);
  REQUIRE(r.ok());
  CHECK(r->root().total.accelerator_exec_micros ==
        std::llround(kernel_us / static_cast<double>(steps)));
  for (size_t c : r->root().children) {
    const ResultNode& n = r->nodes[c];
    INFO(n.name);
    REQUIRE(raw.count(n.name) == 1);
    const auto [launches, ns] = raw.at(n.name);
    CHECK(
        KernelMeanNanos(*n.kernel) ==
        std::llround(static_cast<double>(ns) / static_cast<double>(launches)));
  }
}

// tfprof counts accelerator time on a GPU's stream:all and CPU time on the
// placements: a -device_regexes matching only single streams counts nothing
// in the views, and says why (the kernel view does list that stream's
// kernels); one matching nothing says so too.
TEST_CASE("device_regexes that match no time-counting device are noted") {
  const std::string path =
      testing::CorpusFile("gpu-h200-2026/jax_lm_nocb.xplane.pb.gz");
  auto loaded = LoadTrace(path);
  Views views(&loaded->model, nullptr);
  const auto notes_of = [&](ViewKind view, const std::string& devices) {
    Options o;
    o.device_regexes = {devices};
    absl::StatusOr<ResultTree> r = views.Query(view, o);
    REQUIRE(r.ok());
    std::string all;
    for (const std::string& n : r->notes) all += n + "\n";
    return std::make_pair(r->root().total, all);
  };
  const std::string no_time = "devices that count no time";
  for (ViewKind view : {ViewKind::kScope, ViewKind::kOp, ViewKind::kGraph}) {
    const auto [stream, stream_notes] = notes_of(view, ".*stream:14.*");
    CHECK(stream.exec_micros == 0);
    CHECK(stream_notes.find(no_time) != std::string::npos);
    CHECK(stream_notes.find("stream:14") != std::string::npos);
    const auto [all, all_notes] = notes_of(view, ".*stream:all.*");
    CHECK(all.accelerator_exec_micros > 0);
    CHECK(all_notes.find("-device_regexes") == std::string::npos);
    const auto [none, none_notes] = notes_of(view, ".*no-such-device.*");
    CHECK(none.exec_micros == 0);
    CHECK(none_notes.find("matches none of the devices") != std::string::npos);
    // The default counts everything and notes nothing.
    const auto [every, every_notes] = notes_of(view, ".*");
    CHECK(every_notes.find("-device_regexes") == std::string::npos);
  }
  Options k;
  k.device_regexes = {".*stream:14.*"};
  absl::StatusOr<ResultTree> kernels = views.Query(ViewKind::kKernel, k);
  REQUIRE(kernels.ok());
  CHECK(kernels->root().total.accelerator_exec_micros > 0);
}

}  // namespace
}  // namespace tfprof
