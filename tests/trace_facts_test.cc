// Steps, kernels, devices, ops and peak memory of traces, checked against
// figures no tfprof code computes: xprof's own analyses of the same capture
// (kernel_stats.pb, tensorflow_stats.pb, overview_page.pb,
// memory_profile.json.gz, decoded with
// their protos or a JSON parser), and for Kineto traces the raw events read
// by the tests' own JSON parser.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "catch2/catch.hpp"
#include "profiler/load/loader.h"
#include "profiler/render/render_memory.h"
#include "profiler/render/render_text.h"
#include "profiler/render/summary.h"
#include "profiler/render/trace_timeline.h"
#include "profiler/views/memory.h"
#include "profiler/views/steps.h"
#include "profiler/views/views.h"
#include "proto/xplane.pb.h"
#include "proto/xprof_analyses.pb.h"
#include "tests/corpus_util.h"
#include "tests/json_parse.h"
#include "tests/test_util.h"
#include "tests/trace_facts_util.h"

namespace tfprof {
namespace {

using testing::CorpusFile;
using testing::JsonValue;

using testing::JsonInt;
using testing::kAoberai;
using testing::KernelRows;
using testing::kKineto;
using testing::LoadTrace;
using testing::ReadJsonGz;

TEST_CASE("Kernel view agrees with xprof's kernel_stats.pb") {
  const std::string xplane = CorpusFile(std::string(kAoberai) + "xplane.pb");
  xprof::KernelStatsDb db;
  REQUIRE(db.ParseFromString(testing::ReadFile(
      CorpusFile(std::string(kAoberai) + "kernel_stats.pb"))));
  std::map<std::string, std::pair<int64_t, int64_t>> expected;
  for (const xprof::KernelReport& k : db.reports()) {
    expected[k.name()].first += k.occurrences();
    expected[k.name()].second += static_cast<int64_t>(k.total_duration_ns());
  }
  REQUIRE(expected.size() == 57);
  const auto rows = KernelRows(LoadTrace(xplane)->model);
  REQUIRE(rows.size() == expected.size());
  for (const auto& [name, want] : expected) {
    INFO(name);
    REQUIRE(rows.count(name) == 1);
    CHECK(rows.at(name).first == want.first);
    const double got = static_cast<double>(rows.at(name).second);
    CHECK(std::abs(got - want.second) <= 0.01 * want.second);
  }
}

TEST_CASE("Each op's self time and runs agree with xprof's tensorflow_stats") {
  // xprof's per-op table (without idle time): for each op on the host and on
  // the device, its occurrences and self time in microseconds. Ours: the
  // scope view's own figures of the op's node (cpu time for the host,
  // accelerator time for the device), each op's nanoseconds rounded once.
  xprof::TfStatsDatabase db;
  REQUIRE(db.ParseFromString(testing::ReadFile(
      CorpusFile(std::string(kAoberai) + "tensorflow_stats.pb"))));
  const auto& records = db.without_idle().tf_stats_record();
  REQUIRE(records.size() == 122);
  const auto loaded =
      LoadTrace(CorpusFile(std::string(kAoberai) + "xplane.pb"));
  Views views(&loaded->model, nullptr);
  Options o;
  o.max_depth = 1000000;
  o.account_displayed_op_only = false;
  absl::StatusOr<ResultTree> r = views.Query(ViewKind::kScope, o);
  REQUIRE(r.ok());
  std::map<std::string, const ResultNode*> by_name;
  for (const ResultNode& n : r->nodes) by_name[n.name] = &n;
  double host_us = 0, device_us = 0;
  for (const xprof::TfStatsRecord& rec : records) {
    // tf.data stages are "Iterator::A::B" there, scopes "Iterator/A/B" here;
    // a few op names keep their ":Type" there.
    std::string name = rec.op_name();
    for (size_t at; (at = name.find("::")) != std::string::npos;) {
      name.replace(at, 2, "/");
    }
    if (rec.op_type() != "Dataset" && name.find(':') != std::string::npos) {
      name = name.substr(0, name.find(':'));
    }
    INFO(rec.host_or_device() << " " << name);
    REQUIRE(by_name.count(name) == 1);
    const NodeStats& self = by_name.at(name)->self;
    const bool device = rec.host_or_device() == "Device";
    REQUIRE((device || rec.host_or_device() == "Host"));
    const int64_t ours =
        device ? self.accelerator_exec_micros : self.cpu_exec_micros;
    CHECK(std::abs(ours - rec.total_self_time_in_us()) <= 0.5 + 1e-6);
    CHECK(self.run_count == rec.occurrences());
    (device ? device_us : host_us) += rec.total_self_time_in_us();
  }
  // Totals within a microsecond per op.
  CHECK(std::abs(r->root().total.accelerator_exec_micros - device_us) <= 104);
  CHECK(std::abs(r->root().total.cpu_exec_micros - host_us) <= 18);
}

TEST_CASE("Step wall time agrees with xprof's overview page") {
  xprof::OverviewPage page;
  REQUIRE(page.ParseFromString(testing::ReadFile(
      CorpusFile(std::string(kAoberai) + "overview_page.pb"))));
  const double want_ms = page.input_analysis().step_time_summary().average();
  REQUIRE(want_ms > 16.0);  // 16.77 ms: not tfprof's summed node time
  const auto loaded =
      LoadTrace(CorpusFile(std::string(kAoberai) + "xplane.pb"));
  const StepTable t = ComputeSteps(loaded->model);
  REQUIRE(t.rows.size() == 1);
  CHECK(t.rows[0].from_markers);
  CHECK(std::abs(t.rows[0].wall_ns / 1e6 - want_ms) <= 0.001 * want_ms);
  const ProfileSummary s = Summarize(loaded->model);
  CHECK(std::abs(s.wall.mean_ns / 1e6 - want_ms) <= 0.001 * want_ms);
}

TEST_CASE("Peak memory agrees with xprof's memory profile") {
  const JsonValue profile =
      ReadJsonGz(CorpusFile(std::string(kAoberai) + "memory_profile.json.gz"));
  const auto loaded =
      LoadTrace(CorpusFile(std::string(kAoberai) + "xplane.pb"));
  const ProfileSummary s = Summarize(loaded->model);
  const JsonValue& per = profile.at("memoryProfilePerAllocator");
  REQUIRE(per.object.size() == 2);
  for (const auto& [allocator, v] : per.object) {
    INFO(allocator);
    const int64_t want =
        JsonInt(v.at("profileSummary").at("peakStats").at("peakBytesInUse"));
    REQUIRE(s.allocator_peak_bytes.count(allocator) == 1);
    CHECK(s.allocator_peak_bytes.at(allocator) == want);
  }
  const StepTable t = ComputeSteps(loaded->model);
  CHECK(t.rows[0].peak_bytes == 3450368);
  CHECK(t.rows[0].peak_allocator == "GPU_0_bfc");
}

TEST_CASE("Allocations live at the peak agree with xprof's memory profile") {
  // xprof's memory profile lists every allocation event of the capture with
  // its address and the heap bytes in use after it. Replaying those events
  // by address up to xprof's peak gives the blocks live at the peak; the
  // bytes in use before the first event, less the blocks freed later, are
  // what no event accounts for. (xprof's own activeAllocations list one
  // block more than this replay of its events: snapshot 55, a 256-byte block
  // freed before the peak; and not the two blocks freed after it.)
  const JsonValue profile =
      ReadJsonGz(CorpusFile(std::string(kAoberai) + "memory_profile.json.gz"));
  const auto loaded =
      LoadTrace(CorpusFile(std::string(kAoberai) + "xplane.pb"));
  const std::vector<AllocatorPeak> peaks = ComputeMemoryPeaks(loaded->model);
  REQUIRE(peaks.size() == 2);
  for (const AllocatorPeak& p : peaks) {
    INFO(p.allocator);
    const JsonValue& a =
        profile.at("memoryProfilePerAllocator").at(p.allocator);
    const auto& snaps = a.at("memoryProfileSnapshots").array;
    REQUIRE(!snaps.empty());
    const int64_t peak_ps =
        JsonInt(a.at("profileSummary").at("peakStatsTimePs"));
    std::map<int64_t, int64_t> live;  // address -> bytes
    // Blocks freed after the peak that no event allocated before the free:
    // allocated before the capture, so live at the peak.
    std::map<int64_t, int64_t> older;
    std::set<int64_t> allocated_after;
    for (const JsonValue& snap : snaps) {
      const JsonValue& m = snap.at("activityMetadata");
      const int64_t address = JsonInt(m.at("address"));
      const bool alloc = m.at("memoryActivity").string == "ALLOCATION";
      if (JsonInt(snap.at("timeOffsetPs")) > peak_ps) {
        if (alloc) {
          allocated_after.insert(address);
        } else if (!live.count(address) && !allocated_after.count(address)) {
          older[address] = JsonInt(m.at("allocationBytes"));
        } else {
          allocated_after.erase(address);
        }
      } else if (alloc) {
        live[address] = JsonInt(m.at("allocationBytes"));
      } else {
        live.erase(address);
      }
    }
    std::multiset<int64_t> want, want_older, got, got_older;
    for (const auto& [address, bytes] : live) want.insert(bytes);
    for (const auto& [address, bytes] : older) want_older.insert(bytes);
    int64_t older_bytes = 0;
    for (const LiveAllocation& l : p.live) {
      (l.before_trace ? got_older : got).insert(l.bytes);
      if (l.before_trace) older_bytes += l.bytes;
      CHECK((l.before_trace ? older : live)
                .count(static_cast<int64_t>(l.address)) == 1);
    }
    CHECK(got == want);
    CHECK(got_older == want_older);
    const JsonValue& first = snaps[0];
    const int64_t first_bytes =
        JsonInt(first.at("activityMetadata").at("allocationBytes"));
    const int64_t before =
        JsonInt(first.at("aggregationStats").at("heapAllocatedBytes")) -
        (first.at("activityMetadata").at("memoryActivity").string ==
                 "ALLOCATION"
             ? first_bytes
             : -first_bytes);
    CHECK(p.untraced_bytes == before - older_bytes);
    CHECK(p.samples == static_cast<int64_t>(snaps.size()));
    CHECK(p.peak_step == 0);
  }
}

TEST_CASE("Memory CSV and counter tracks carry every allocation event") {
  const auto loaded =
      LoadTrace(CorpusFile(std::string(kAoberai) + "xplane.pb"));
  const Model& m = loaded->model;
  const std::string csv = RenderMemoryCsv(m);
  CHECK(csv.rfind("allocator,time_micros,bytes_in_use,bytes,op,address\n", 0) ==
        0);
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 1 + 194 + 10);
  JsonValue trace;
  std::string error;
  REQUIRE(testing::ParseJson(RenderMemoryTimeline(m), &trace, &error));
  std::map<std::string, int64_t> peak;
  int64_t counters = 0;
  for (const JsonValue& e : trace.at("traceEvents").array) {
    if (e.at("ph").string != "C") continue;
    ++counters;
    int64_t& p = peak[e.at("name").string];
    p = std::max(p, JsonInt(e.at("args").at("bytes_in_use")));
  }
  CHECK(counters == 194 + 10);
  CHECK(peak["GPU_0_bfc"] == 3450368);
  CHECK(peak["gpu_host_bfc"] == 4864);
}

// A pid or tid as text.
std::string Id(const JsonValue& v) {
  return v.kind == JsonValue::kString ? v.string : std::to_string(JsonInt(v));
}

// The raw events of a Kineto trace, read with the tests' JSON parser.
struct KinetoFacts {
  std::map<int64_t, std::pair<double, double>> steps;         // ts, dur (us)
  std::map<std::string, std::pair<int64_t, double>> kernels;  // n, dur (us)
  // Launch dimensions per kernel name, as "regs:R shm:S grid:x,y,z
  // block:x,y,z" where the args have grid and block.
  std::map<std::string, std::set<std::string>> launches;
  int64_t peak_gpu_bytes = -1;
  // "<pid>/<tid>" -> [ts, ts + dur) of its Operator and Runtime events (us).
  std::map<std::string, std::vector<std::pair<double, double>>> threads;
};

KinetoFacts ReadKineto(const std::string& path) {
  const JsonValue doc = ReadJsonGz(path);
  KinetoFacts f;
  struct Memory {
    double ts;
    int64_t total, bytes;
  };
  std::vector<Memory> gpu_memory;
  for (const JsonValue& e : doc.at("traceEvents").array) {
    if (!e.Has("ph") || !e.Has("name")) continue;
    const std::string& name = e.at("name").string;
    const std::string cat = e.Has("cat") ? e.at("cat").string : "";
    if (e.at("ph").string == "X" && name.rfind("ProfilerStep#", 0) == 0) {
      f.steps[std::stoll(name.substr(13))] = {e.at("ts").number,
                                              e.at("dur").number};
    }
    if (e.at("ph").string == "X" &&
        (cat == "Operator" || cat == "Runtime" || cat == "cpu_op")) {
      f.threads[Id(e.at("pid")) + "/" + Id(e.at("tid"))].emplace_back(
          e.at("ts").number, e.at("ts").number + e.at("dur").number);
    }
    if (e.at("ph").string == "X" && (cat == "kernel" || cat == "Kernel")) {
      auto& k = f.kernels[name];
      ++k.first;
      k.second += e.at("dur").number;
      const JsonValue& a = e.at("args");
      if (a.Has("grid") && a.Has("block")) {
        auto dims = [&](const JsonValue& v) {
          std::string out;
          for (const JsonValue& d : v.array) {
            out += (out.empty() ? "" : ",") + std::to_string(JsonInt(d));
          }
          return out;
        };
        auto num = [&](const char* key) {
          return a.Has(key) ? JsonInt(a.at(key)) : 0;
        };
        f.launches[name].insert(
            "regs:" + std::to_string(num("registers per thread")) +
            " shm:" + std::to_string(num("shared memory")) +
            " grid:" + dims(a.at("grid")) + " block:" + dims(a.at("block")));
      }
    } else if (name == "[memory]" && e.Has("args")) {
      const JsonValue& a = e.at("args");
      if (a.Has("Device Type") && a.at("Device Type").number == 1) {
        gpu_memory.push_back(
            {e.at("ts").number,
             a.Has("Total Allocated") ? JsonInt(a.at("Total Allocated")) : -1,
             JsonInt(a.at("Bytes"))});
      }
    }
  }
  // The allocator's bytes in use where recorded, else a running sum of the
  // allocations and frees in time order.
  std::stable_sort(
      gpu_memory.begin(), gpu_memory.end(),
      [](const Memory& x, const Memory& y) { return x.ts < y.ts; });
  int64_t in_use = 0;
  for (const Memory& m : gpu_memory) {
    in_use = m.total >= 0 ? m.total : in_use + m.bytes;
    f.peak_gpu_bytes = std::max(f.peak_gpu_bytes, in_use);
  }
  return f;
}

TEST_CASE("Kineto steps, kernels and peak memory agree with the raw events") {
  const std::string path = CorpusFile(kKineto);
  const KinetoFacts want = ReadKineto(path);
  REQUIRE(want.steps.size() == 6);
  const auto loaded = LoadTrace(path);
  const StepTable t = ComputeSteps(loaded->model);
  REQUIRE(t.rows.size() == want.steps.size());
  for (const StepRow& r : t.rows) {
    INFO("step " << r.step);
    REQUIRE(want.steps.count(r.step) == 1);
    CHECK(r.from_markers);
    CHECK(std::llround(want.steps.at(r.step).second * 1000) == r.wall_ns);
    CHECK(r.peak_allocator == "GPU_0");
  }
  const auto rows = KernelRows(loaded->model);
  REQUIRE(rows.size() == want.kernels.size());
  int64_t launches = 0;
  for (const auto& [name, k] : want.kernels) {
    INFO(name);
    REQUIRE(rows.count(name) == 1);
    CHECK(rows.at(name).first == k.first);
    CHECK(std::abs(rows.at(name).second - k.second * 1000) <= 1.0 * k.first);
    launches += k.first;
  }
  CHECK(launches == 8772);
  const ProfileSummary s = Summarize(loaded->model);
  // Each host thread's busy time per step: the union of its Operator and
  // Runtime events over the six steps.
  for (const auto& [thread, v] : want.threads) {
    INFO(thread);
    std::vector<std::pair<double, double>> iv = v;
    std::sort(iv.begin(), iv.end());
    double busy = 0, end = -1e300;
    for (const auto& [b, e] : iv) {
      if (e > std::max(b, end)) busy += e - std::max(b, end);
      end = std::max(end, e);
    }
    REQUIRE(s.LaneBusy("host thread " + thread) >= 0);
    CHECK(std::abs(s.LaneBusy("host thread " + thread) - busy * 1000 / 6) <= 1);
  }
  CHECK(want.threads.size() == 2);
  REQUIRE(s.allocator_peak_bytes.count("GPU_0") == 1);
  CHECK(s.allocator_peak_bytes.at("GPU_0") == want.peak_gpu_bytes);
  // The host threads are lanes of the CPU; GPU 0 holds its stream and the
  // PyTorch allocator GPU_0.
  const DeviceSummary* cpu = s.FindDevice("host thread 25738/25772");
  REQUIRE(cpu != nullptr);
  CHECK(cpu->name == "/job:localhost/replica:0/task:0/device:cpu:0");
  const DeviceSummary* gpu =
      s.FindDevice("/job:localhost/replica:0/task:0/device:gpu:0");
  REQUIRE(gpu != nullptr);
  CHECK(gpu->peak_bytes() == want.peak_gpu_bytes);
  CHECK(gpu->allocators.front().first == "GPU_0");
}

TEST_CASE("summary lists every GPU of an XSpace, busy as its streams are") {
  for (const std::string& rel :
       {std::string(kAoberai) + "xplane.pb",
        std::string("tensorflow-profiler-demo/GPU-multi-worker/"
                    "34.83.195.179_6003.xplane.pb")}) {
    if (!testing::HaveCorpusFile(rel)) continue;
    INFO(rel);
    const std::string path = CorpusFile(rel);
    tensorflow::profiler::XSpace space;
    REQUIRE(space.ParseFromString(testing::ReadFile(path)));
    // Per GPU plane: each stream line's events and all of them, in ns.
    using Spans = std::vector<std::pair<int64_t, int64_t>>;
    std::map<int, std::map<std::string, Spans>> planes;
    for (const auto& plane : space.planes()) {
      if (plane.name().rfind("/device:GPU:", 0) != 0) continue;
      auto& lines = planes[std::stoi(plane.name().substr(12))];
      for (const auto& line : plane.lines()) {
        if (line.name().rfind("Stream #", 0) != 0) continue;
        const std::string id = line.name().substr(8, line.name().find('(') - 8);
        for (const auto& ev : line.events()) {
          const int64_t start =
              line.timestamp_ns() + (ev.offset_ps() + 500) / 1000;
          lines[id].emplace_back(start,
                                 start + (ev.duration_ps() + 500) / 1000);
          lines["all"].emplace_back(lines[id].back());
        }
      }
    }
    auto union_ns = [](Spans v) {
      std::sort(v.begin(), v.end());
      int64_t busy = 0, end = INT64_MIN;
      for (const auto& [b, e] : v) {
        if (e > std::max(b, end)) busy += e - std::max(b, end);
        end = std::max(end, e);
      }
      return busy;
    };
    const auto loaded = LoadTrace(path);
    const ProfileSummary s = Summarize(loaded->model);
    const int64_t steps = std::max<int64_t>(s.steps, 1);
    for (const auto& [gpu, lines] : planes) {
      const std::string name =
          "/job:localhost/replica:0/task:0/device:gpu:" + std::to_string(gpu);
      INFO(name);
      const DeviceSummary* d = s.FindDevice(name);
      REQUIRE(d != nullptr);
      CHECK(d->name == name);
      if (lines.empty()) {
        CHECK(d->lanes.empty());
        continue;
      }
      CHECK(d->busy_ns == union_ns(lines.at("all")) / steps);
      CHECK(d->lanes.size() == lines.size() - 1);
      for (const auto& [id, spans] : lines) {
        if (id == "all") continue;
        CHECK(s.LaneBusy(name + "/stream:" + id) == union_ns(spans) / steps);
      }
      // Its allocator, "GPU_<n>_bfc", when the capture has one.
      const std::string bfc = "GPU_" + std::to_string(gpu) + "_bfc";
      if (s.allocator_peak_bytes.count(bfc)) {
        REQUIRE(!d->allocators.empty());
        CHECK(d->allocators.front().first == bfc);
      }
    }
  }
}

TEST_CASE("A Kineto step's timeline has the trace's own events and times") {
  const std::string path = CorpusFile(kKineto);
  const JsonValue doc = ReadJsonGz(path);
  // Step 7 runs from its ProfilerStep#7 to the start of ProfilerStep#8.
  double s7 = 0, s8 = 0;
  for (const JsonValue& e : doc.at("traceEvents").array) {
    if (!e.Has("name") || e.at("ph").string != "X") continue;
    if (e.at("name").string == "ProfilerStep#7") s7 = e.at("ts").number;
    if (e.at("name").string == "ProfilerStep#8") s8 = e.at("ts").number;
  }
  REQUIRE(s8 > s7);
  std::multiset<std::tuple<std::string, int64_t, int64_t>> want, got;
  for (const JsonValue& e : doc.at("traceEvents").array) {
    if (!e.Has("cat") || e.at("ph").string != "X") continue;
    const std::string& cat = e.at("cat").string;
    const double ts = e.at("ts").number;
    if ((cat == "Operator" || cat == "Runtime") && ts >= s7 && ts < s8) {
      want.emplace(e.at("name").string, std::llround((ts - s7) * 1000),
                   std::llround(e.at("dur").number * 1000));
    }
  }
  const auto loaded = LoadTrace(path);
  absl::StatusOr<std::string> json =
      TraceEventsTimeline(loaded->model, 7, nullptr);
  REQUIRE(json.ok());
  JsonValue tl;
  std::string error;
  REQUIRE(testing::ParseJson(*json, &tl, &error));
  int64_t kernels = 0;
  for (const JsonValue& e : tl.at("traceEvents").array) {
    if (e.at("ph").string != "X") continue;
    if (e.at("cat").string == "Op") {
      got.emplace(e.at("name").string, std::llround(e.at("ts").number * 1000),
                  std::llround(e.at("dur").number * 1000));
    } else if (e.at("cat").string == "Kernel") {
      ++kernels;
    }
  }
  CHECK(want.size() > 1000);
  CHECK(got == want);
  CHECK(kernels == 1462);  // as the steps table counts them
}

TEST_CASE("A TensorFlow timeline's step timeline has its events again") {
  // The ops of the "<device> Compute" rows (but the runtime's _SOURCE) and
  // the kernels of the "/gpu:0/stream:N" rows, by node name, at their times
  // from the step's first event.
  const std::string path =
      CorpusFile("yaroslavvb-stuff/dynamic_stitch_gpu_profile.json");
  JsonValue doc;
  std::string error;
  REQUIRE(testing::ParseJson(testing::ReadFile(path), &doc, &error));
  std::map<int64_t, std::string> process;
  for (const JsonValue& e : doc.at("traceEvents").array) {
    if (e.at("ph").string == "M" && e.at("name").string == "process_name") {
      process[JsonInt(e.at("pid"))] = e.at("args").at("name").string;
    }
  }
  using Event = std::tuple<std::string, int64_t, int64_t>;  // name, ts, dur
  std::multiset<Event> ops, kernels;
  int64_t t0 = INT64_MAX;
  for (const JsonValue& e : doc.at("traceEvents").array) {
    if (e.at("ph").string != "X" ||
        e.at("args").at("name").string == "_SOURCE") {
      continue;
    }
    const std::string& p = process.at(JsonInt(e.at("pid")));
    const int64_t ts = JsonInt(e.at("ts")), dur = JsonInt(e.at("dur"));
    if (p.find("/stream:") != std::string::npos) {
      kernels.emplace(e.at("args").at("name").string, ts, dur);
    } else if (p.rfind("/job:", 0) == 0) {
      ops.emplace(e.at("args").at("name").string, ts, dur);
    } else {
      continue;  // the memcpy row repeats the streams' copies
    }
    t0 = std::min(t0, ts);
  }
  auto from_t0 = [&](const std::multiset<Event>& in) {
    std::multiset<Event> out;
    for (const auto& [name, ts, dur] : in) out.emplace(name, ts - t0, dur);
    return out;
  };
  REQUIRE(ops.size() == 25);
  REQUIRE(kernels.size() == 20);
  const auto loaded = LoadTrace(path);
  absl::StatusOr<std::string> json =
      TraceEventsTimeline(loaded->model, 0, nullptr);
  REQUIRE(json.ok());
  JsonValue tl;
  REQUIRE(testing::ParseJson(*json, &tl, &error));
  std::multiset<Event> got_ops, got_kernels;
  for (const JsonValue& e : tl.at("traceEvents").array) {
    if (e.at("ph").string != "X") continue;
    (e.at("cat").string == "Op" ? got_ops : got_kernels)
        .emplace(
            e.at("args").at(e.at("cat").string == "Op" ? "node" : "op").string,
            std::llround(e.at("ts").number), std::llround(e.at("dur").number));
  }
  CHECK(got_ops == from_t0(ops));
  CHECK(got_kernels == from_t0(kernels));
}

TEST_CASE("An XSpace step's timeline has its kernels at their own times") {
  const auto loaded =
      LoadTrace(CorpusFile(std::string(kAoberai) + "xplane.pb"));
  absl::StatusOr<std::string> json =
      TraceEventsTimeline(loaded->model, 0, nullptr);
  REQUIRE(json.ok());
  JsonValue tl;
  std::string error;
  REQUIRE(testing::ParseJson(*json, &tl, &error));
  int64_t kernels = 0, kernel_ns = 0;
  for (const JsonValue& e : tl.at("traceEvents").array) {
    if (e.at("ph").string == "X" && e.at("cat").string == "Kernel") {
      ++kernels;
      kernel_ns += std::llround(e.at("dur").number * 1000);
    }
  }
  // kernel_stats.pb: 145 launches, 719,853 ns in all.
  CHECK(kernels == 145);
  CHECK(kernel_ns == 719853);
  CHECK_FALSE(TraceEventsTimeline(loaded->model, 5, nullptr).ok());
}

// An XSpace's kernels per name (launches, ns), its step groups' spans
// (xprof's step time: a group's longest marker, the first of equals), and
// each GPU's stream events (kernels, copies and sets) as [start, end).
struct XSpaceFacts {
  std::map<std::string, std::pair<int64_t, int64_t>> kernels;
  std::map<int64_t, std::pair<int64_t, int64_t>> steps;  // group: start, end
  std::map<std::string, std::vector<std::pair<int64_t, int64_t>>> streams;
  std::map<std::string, bool> ran_kernels;  // by GPU plane
};

XSpaceFacts ReadXSpace(const std::string& path) {
  tensorflow::profiler::XSpace space;
  REQUIRE(space.ParseFromString(testing::ReadFile(path)));
  XSpaceFacts f;
  for (const auto& plane : space.planes()) {
    if (plane.name().rfind("/device:GPU:", 0) != 0) continue;
    std::map<std::string, int64_t> stat_ids;
    for (const auto& [id, md] : plane.stat_metadata()) stat_ids[md.name()] = id;
    auto has_stat = [&](const auto& stats, const std::string& name) {
      auto it = stat_ids.find(name);
      if (it == stat_ids.end()) return false;
      for (const auto& st : stats) {
        if (st.metadata_id() == it->second) return true;
      }
      return false;
    };
    for (const auto& line : plane.lines()) {
      const bool stream = line.name().rfind("Stream #", 0) == 0;
      for (const auto& ev : line.events()) {
        const auto& md = plane.event_metadata().at(ev.metadata_id());
        const int64_t start =
            line.timestamp_ns() + (ev.offset_ps() + 500) / 1000;
        const int64_t dur = (ev.duration_ps() + 500) / 1000;
        if (stream) f.streams[plane.name()].emplace_back(start, start + dur);
        if (stream && md.name().rfind("Memcpy", 0) != 0 &&
            md.name().rfind("Memset", 0) != 0 &&
            !has_stat(ev.stats(), "memcpy_details") &&
            !has_stat(md.stats(), "memcpy_details")) {
          auto& k = f.kernels[md.name()];
          ++k.first;
          k.second += dur;
          f.ran_kernels[plane.name()] = true;
        }
        if (line.name() != "Steps") continue;
        auto it = stat_ids.find("group_id");
        REQUIRE(it != stat_ids.end());
        for (const auto& st : ev.stats()) {
          if (st.metadata_id() != it->second) continue;
          const int64_t g = st.int64_value() != 0
                                ? st.int64_value()
                                : static_cast<int64_t>(st.uint64_value());
          auto [span, added] =
              f.steps.emplace(g, std::make_pair(start, start + dur));
          if (dur > span->second.second - span->second.first) {
            span->second = {start, start + dur};
          }
        }
      }
    }
  }
  return f;
}

TEST_CASE("Every corpus trace's kernels and steps agree with its raw events") {
  int64_t checked = 0;
  for (const testing::CorpusCase& c : testing::CorpusCases()) {
    const std::string& path = c.paths.trace_path;
    const bool xspace =
        path.size() > 10 && path.substr(path.size() - 10) == ".xplane.pb";
    const bool kineto = path.find(".pt.trace.json") != std::string::npos ||
                        path.find("_trace.json.gz") != std::string::npos;
    if (!xspace && !kineto) continue;
    INFO(c.name);
    std::map<std::string, std::pair<int64_t, int64_t>> kernels;
    std::map<int64_t, int64_t> walls;  // step -> ns
    std::map<std::string, std::set<std::string>> launches;
    int64_t one_step_accelerator = -1;  // a one-step XSpace's, ns
    int64_t first_marker = -1;          // an XSpace's first step start, ns
    if (xspace) {
      const XSpaceFacts f = ReadXSpace(path);
      kernels = f.kernels;
      for (const auto& [g, span] : f.steps) {
        walls[g] = span.second - span.first;
        if (first_marker < 0 || span.first < first_marker) {
          first_marker = span.first;
        }
      }
      // With one step every stream event is in it: its accelerator time is
      // the mean, over the GPUs that ran kernels, of each one's busy time.
      if (f.steps.size() == 1 && !f.ran_kernels.empty()) {
        int64_t sum = 0;
        for (const auto& [gpu, ran] : f.ran_kernels) {
          std::vector<std::pair<int64_t, int64_t>> v = f.streams.at(gpu);
          std::sort(v.begin(), v.end());
          int64_t end = INT64_MIN;
          for (const auto& [a, b] : v) {
            if (b > end) sum += b - std::max(a, end);
            end = std::max(end, b);
          }
        }
        one_step_accelerator = sum / static_cast<int64_t>(f.ran_kernels.size());
      }
    } else {
      const KinetoFacts f = ReadKineto(path);
      launches = f.launches;
      for (const auto& [name, k] : f.kernels) {
        kernels[name] = {k.first, std::llround(k.second * 1000)};
      }
      for (const auto& [step, span] : f.steps) {
        walls[step] = std::llround(span.second * 1000);
      }
    }
    const auto loaded = LoadTrace(path);
    if (!kernels.empty()) {
      const auto rows = KernelRows(loaded->model);
      REQUIRE(rows.size() == kernels.size());
      for (const auto& [name, k] : kernels) {
        INFO(name);
        REQUIRE(rows.count(name) == 1);
        CHECK(rows.at(name).first == k.first);
        CHECK(std::abs(rows.at(name).second - k.second) <= k.first);
      }
    }
    if (!launches.empty()) {
      Views views(&loaded->model, nullptr);
      Options o;
      o.max_depth = 1000000;
      absl::StatusOr<ResultTree> r = views.Query(ViewKind::kKernel, o);
      REQUIRE(r.ok());
      for (size_t c : r->root().children) {
        const ResultNode& n = r->nodes[c];
        INFO(n.name);
        const std::set<std::string>& want = launches[n.name];
        CHECK(std::set<std::string>(n.kernel->launch.begin(),
                                    n.kernel->launch.end()) == want);
      }
    }
    // A kernel row's launches are all of the steps' (its time is per step):
    // the text row says over how many steps.
    if (!kernels.empty() && !walls.empty()) {
      Views views(&loaded->model, nullptr);
      Options o;
      o.max_depth = 1000000;
      absl::StatusOr<ResultTree> r = views.Query(ViewKind::kKernel, o);
      REQUIRE(r.ok());
      // The text row of each kernel, by its name.
      std::map<std::string, std::string> lines;
      for (absl::string_view l : absl::StrSplit(RenderText(*r), '\n')) {
        lines[std::string(l.substr(0, l.find("  ")))] = std::string(l);
      }
      const int64_t steps = static_cast<int64_t>(walls.size());
      for (size_t c : r->root().children) {
        const ResultNode& n = r->nodes[c];
        INFO(n.name);
        CHECK(n.kernel->steps == steps);
        CHECK(n.kernel->ranks == 1);
        CHECK(n.kernel->launches == kernels.at(n.name).first);
        CHECK(n.self.run_count == n.kernel->launches / steps);
        const std::string cell =
            steps > 1 ? absl::StrCat(" ", n.kernel->launches, " launches over ",
                                     steps, " steps, ")
                      : absl::StrCat(" ", n.kernel->launches, " launches, ");
        REQUIRE(lines.count(n.name) == 1);
        CHECK(lines.at(n.name).find(cell) != std::string::npos);
      }
      // One step's rows are that step's launches.
      o.step = walls.begin()->first;
      absl::StatusOr<ResultTree> one = views.Query(ViewKind::kKernel, o);
      REQUIRE(one.ok());
      for (size_t c : one->root().children) {
        const ResultNode& n = one->nodes[c];
        CHECK(n.kernel->steps == 1);
        CHECK(n.self.run_count == n.kernel->launches);
      }
    }
    // Memory times count from the first step's marker, as xprof's do.
    if (first_marker >= 0) CHECK(MemoryOrigin(loaded->model) == first_marker);
    const StepTable t = ComputeSteps(loaded->model);
    for (const StepRow& r : t.rows) {
      INFO("step " << r.step);
      CHECK(r.from_markers == (walls.count(r.step) == 1));
      if (walls.count(r.step) == 1) CHECK(r.wall_ns == walls.at(r.step));
      if (one_step_accelerator >= 0) {
        CHECK(std::abs(r.accelerator_ns - one_step_accelerator) <= 1);
      }
    }
    ++checked;
  }
  CHECK(checked >= 4);  // the bundled Kineto, HTA and XSpace traces
}

TEST_CASE("RunMetadata steps run from the first start to the last end") {
  const InputPaths paths = testing::TfTestData();
  auto loaded = LoadProfile(paths);
  REQUIRE(loaded.ok());
  tfcore::RunMetadata rm;
  REQUIRE(rm.ParseFromString(testing::ReadFile(paths.run_meta_path)));
  int64_t first = INT64_MAX, last = INT64_MIN;
  for (const auto& dev : rm.step_stats().dev_stats()) {
    for (const auto& ns : dev.node_stats()) {
      if (ns.all_start_micros() <= 0) continue;
      first = std::min(first, ns.all_start_micros());
      last = std::max(last, ns.all_start_micros() + ns.all_end_rel_micros());
    }
  }
  const StepTable t = ComputeSteps((*loaded)->model);
  REQUIRE(t.rows.size() == 1);
  CHECK_FALSE(t.rows[0].from_markers);
  CHECK(t.rows[0].wall_ns == (last - first) * 1000);
  CHECK(t.rows[0].peak_bytes == -1);
}

TEST_CASE("Zero-length PyTorch events add no time") {
  // A 100us op with three zero-length ops inside: 100us in all, not 103us.
  const std::string dir = testing::TempDir();
  testing::WriteFile(dir + "/t.json",
                     R"({"traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "outer", "pid": 1, "tid": 1, "ts": 1000, "dur": 100},
  {"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 1010, "dur": 0},
  {"ph": "X", "cat": "cpu_op", "name": "b", "pid": 1, "tid": 1, "ts": 1020, "dur": 0},
  {"ph": "X", "cat": "cpu_op", "name": "c", "pid": 1, "tid": 1, "ts": 1030, "dur": 0}
]})");
  const auto loaded = LoadTrace(dir + "/t.json");
  Views views(&loaded->model, nullptr);
  absl::StatusOr<ResultTree> r = views.Query(ViewKind::kScope, Options());
  REQUIRE(r.ok());
  CHECK(r->root().total.exec_micros == 100);
  CHECK(r->root().total.run_count == 4);
}

}  // namespace
}  // namespace tfprof
