// The step timeline of a PyTorch trace beyond its host events and kernels:
// the GPU annotation lane, the allocators' memory counters and a range of
// steps on one clock, each checked against the raw trace events read by the
// tests' own JSON parser (the GPU ranges' times, the [memory] events' totals
// or running sums of their bytes, the ProfilerStep ranges' starts); and the
// command line's `timeline -steps A-B`, checked the same way.
#include "profiler/render/trace_timeline.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "catch2/catch.hpp"
#include "cli/app.h"
#include "profiler/load/loader.h"
#include "tests/json_parse.h"
#include "tests/test_util.h"

namespace tfprof {
namespace {

using testing::JsonValue;

const char kDdpRank0[] = "testdata/ranks/ddp-gloo/ddp2_rank0.pt.trace.json.gz";
const char kWorker0[] =
    "testdata/corpus/pytorch-kineto/worker0.1623143089861.pt.trace.json.gz";
const char kResnet[] = "gpu-h200-2026/resnet.pt.trace.json.gz";

int64_t Ns(const JsonValue& v) { return std::llround(v.number * 1000); }

// Raw starts are kept in microseconds as read (a trace's absolute times in
// nanoseconds do not fit a double's 53 bits), and compared relative to a
// step's start.
int64_t RelNs(double us, double origin_us) {
  return std::llround((us - origin_us) * 1000);
}

struct Range {
  std::string name;
  int64_t start_ns, dur_ns, step;
  double start_us = 0;
};
struct Sample {
  int64_t ns, value;
  double us = 0;
};

// What the raw trace says, read without tfprof's importer.
struct RawTrace {
  std::map<int64_t, double> step_start;  // ProfilerStep#N (CPU) -> us
  std::vector<Range> annotations;        // gpu_user_annotation, with steps
  std::map<std::string, std::vector<Sample>> memory;  // allocator -> samples

  // The step an event starting at `us` counts in: the last ProfilerStep
  // started at or before it (the first before any).
  int64_t StepAt(double us) const {
    int64_t step = step_start.begin()->first;
    double best = -1;
    for (const auto& [s, start] : step_start) {
      if (start <= us && start > best) best = start, step = s;
    }
    return step;
  }
};

RawTrace ReadRaw(const std::string& path) {
  JsonValue doc;
  std::string error;
  REQUIRE(testing::ParseJsonFile(path, &doc, &error));
  RawTrace raw;
  std::map<std::string, double> cpu_ranges;  // External id -> start
  std::vector<std::pair<std::string, const JsonValue*>> gpu;
  struct Mem {
    double us;
    std::string allocator;
    int64_t bytes, total;
    bool has_total;
  };
  std::vector<Mem> mem;
  for (const JsonValue& e : doc.at("traceEvents").array) {
    const std::string cat = e.Has("cat") ? e.at("cat").string : "";
    const std::string& name = e.at("name").string;
    if (e.at("ph").string == "i" && name == "[memory]") {
      const JsonValue& a = e.at("args");
      const int64_t type = std::llround(a.at("Device Type").number);
      const int64_t id = std::llround(a.at("Device Id").number);
      mem.push_back(Mem{e.at("ts").number,
                        type == 0 ? "cpu" : "GPU_" + std::to_string(id),
                        std::llround(a.at("Bytes").number),
                        a.Has("Total Allocated")
                            ? std::llround(a.at("Total Allocated").number)
                            : 0,
                        a.Has("Total Allocated")});
      continue;
    }
    if (e.at("ph").string != "X") continue;
    if (cat != "gpu_user_annotation") {
      if (name.rfind("ProfilerStep#", 0) == 0) {
        raw.step_start[std::stoll(name.substr(13))] = e.at("ts").number;
      }
      if (cat == "user_annotation" && e.at("args").Has("External id")) {
        cpu_ranges[std::to_string(std::llround(
            e.at("args").at("External id").number))] = e.at("ts").number;
      }
    } else {
      gpu.emplace_back(name, &e);
    }
  }
  REQUIRE(!raw.step_start.empty());
  for (const auto& [name, e] : gpu) {
    const std::string ext =
        std::to_string(std::llround(e->at("args").at("External id").number));
    auto it = cpu_ranges.find(ext);
    const int64_t step = it != cpu_ranges.end() ? raw.StepAt(it->second)
                         : name.rfind("ProfilerStep#", 0) == 0
                             ? std::stoll(name.substr(13))
                             : raw.StepAt(e->at("ts").number);
    raw.annotations.push_back(
        Range{name, 0, Ns(e->at("dur")), step, e->at("ts").number});
  }
  // Bytes in use: the trace's Total Allocated, else the running sum of the
  // allocator's Bytes in time order.
  std::stable_sort(mem.begin(), mem.end(),
                   [](const Mem& a, const Mem& b) { return a.us < b.us; });
  std::map<std::string, int64_t> sum;
  for (const Mem& m : mem) {
    sum[m.allocator] += m.bytes;
    raw.memory[m.allocator].push_back(
        Sample{0, m.has_total ? m.total : sum[m.allocator], m.us});
  }
  return raw;
}

std::unique_ptr<LoadedProfile> Load(const std::string& path) {
  InputPaths paths;
  paths.trace_path = path;
  auto loaded = LoadProfile(paths);
  REQUIRE(loaded.ok());
  return std::move(*loaded);
}

// The timeline of steps first..last, parsed.
JsonValue Timeline(const Model& model, int64_t first, int64_t last) {
  absl::StatusOr<std::string> json =
      TraceStepsTimeline(model, first, last, nullptr);
  REQUIRE(json.ok());
  JsonValue tl;
  std::string error;
  REQUIRE(testing::ParseJson(*json, &tl, &error));
  return tl;
}

bool Near(int64_t a, int64_t b) { return std::llabs(a - b) <= 1; }

// The timeline's annotations are the raw GPU ranges of steps first..last,
// at their times from the first step's ProfilerStep start, each on the
// "annotations" lane of a GPU process. Returns how many there are.
size_t CheckAnnotations(const RawTrace& raw, const JsonValue& tl, int64_t first,
                        int64_t last) {
  const double origin = raw.step_start.at(first);
  std::vector<Range> want, got;
  for (const Range& r : raw.annotations) {
    if (r.step >= first && r.step <= last) {
      want.push_back(
          Range{r.name, RelNs(r.start_us, origin), r.dur_ns, r.step});
    }
  }
  std::map<std::pair<int64_t, int64_t>, std::string> threads;
  std::map<int64_t, std::string> processes;
  for (const JsonValue& e : tl.at("traceEvents").array) {
    const int64_t pid = std::llround(e.at("pid").number);
    if (e.at("ph").string == "M" && e.at("name").string == "thread_name") {
      threads[{pid, std::llround(e.at("tid").number)}] =
          e.at("args").at("name").string;
    } else if (e.at("ph").string == "M" &&
               e.at("name").string == "process_name") {
      processes[pid] = e.at("args").at("name").string;
    } else if (e.at("ph").string == "X" && e.at("cat").string == "Annotation") {
      got.push_back(Range{e.at("name").string, Ns(e.at("ts")), Ns(e.at("dur")),
                          std::llround(e.at("args").at("step").number)});
      INFO(e.at("name").string);
      CHECK(threads[{pid, std::llround(e.at("tid").number)}] == "annotations");
      CHECK(processes[pid].find("/device:gpu:") != std::string::npos);
    }
  }
  auto order = [](const Range& a, const Range& b) {
    return std::tie(a.start_ns, a.name) < std::tie(b.start_ns, b.name);
  };
  std::sort(want.begin(), want.end(), order);
  std::sort(got.begin(), got.end(), order);
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO(want[i].name << " at " << want[i].start_ns);
    CHECK(got[i].name == want[i].name);
    CHECK(Near(got[i].start_ns, want[i].start_ns));
    CHECK(Near(got[i].dur_ns, want[i].dur_ns));
    CHECK(got[i].step == want[i].step);
  }
  return got.size();
}

// Each allocator's counter over the events' span [lo, hi]: the raw bytes in
// use before lo (drawn at lo), then every raw sample in the span, in order.
// Returns how many counter events there are.
size_t CheckCounters(const RawTrace& raw, const JsonValue& tl, int64_t first) {
  const double origin = raw.step_start.at(first);
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  std::map<std::string, std::vector<Sample>> got;
  size_t n = 0;
  for (const JsonValue& e : tl.at("traceEvents").array) {
    if (e.at("ph").string == "X" && e.at("cat").string != "Annotation") {
      lo = std::min(lo, Ns(e.at("ts")));
      hi = std::max(hi, Ns(e.at("ts")) + Ns(e.at("dur")));
    } else if (e.at("ph").string == "C") {
      got[e.at("name").string].push_back(
          Sample{Ns(e.at("ts")),
                 std::llround(e.at("args").at("bytes_in_use").number)});
      ++n;
    }
  }
  std::set<std::string> allocators;
  for (const auto& [a, samples] : raw.memory) allocators.insert(a);
  for (const auto& [a, samples] : got) CHECK(allocators.count(a) == 1);
  for (const auto& [allocator, samples] : raw.memory) {
    INFO(allocator);
    std::vector<Sample> want;
    for (const Sample& s : samples) {
      const int64_t t = RelNs(s.us, origin);
      if (t < lo - 1) {
        want.assign(1, Sample{lo, s.value});  // the value at lo
      } else if (t <= hi + 1) {
        want.push_back(Sample{t, s.value});
      }
    }
    const std::vector<Sample>& g = got[allocator];
    // (A sample within a nanosecond of lo may be drawn as carried or not.)
    REQUIRE(std::llabs(static_cast<int64_t>(g.size() - want.size())) <= 1);
    const size_t skip = want.size() > g.size() ? 1 : 0;
    const size_t gskip = g.size() > want.size() ? 1 : 0;
    for (size_t i = 0; i + gskip < g.size() && i + skip < want.size(); ++i) {
      INFO(i << ": " << g[i + gskip].ns << " vs " << want[i + skip].ns);
      CHECK(Near(g[i + gskip].ns, want[i + skip].ns));
      CHECK(g[i + gskip].value == want[i + skip].value);
    }
  }
  return n;
}

TEST_CASE("A DDP rank's step timeline has its GPU annotation lane") {
  const RawTrace raw = ReadRaw(kDdpRank0);
  REQUIRE(raw.annotations.size() == 40);
  const auto loaded = Load(kDdpRank0);
  size_t all = 0;
  for (const auto& [step, start] : raw.step_start) {
    INFO("step " << step);
    all +=
        CheckAnnotations(raw, Timeline(loaded->model, step, step), step, step);
  }
  CHECK(all == raw.annotations.size());  // every one in some step
  // The GPU ranges are mapped now: no "not mapped" note counts them.
  for (const std::string& note : loaded->notes) {
    CHECK(note.find("gpu_user_annotation") == std::string::npos);
  }
}

TEST_CASE("A step timeline's memory counters are the trace's bytes in use") {
  const RawTrace raw = ReadRaw(kWorker0);  // no Total Allocated: the sums
  REQUIRE(raw.memory.count("GPU_0") == 1);
  const auto loaded = Load(kWorker0);
  const int64_t step = 7;
  const JsonValue tl = Timeline(loaded->model, step, step);
  CHECK(CheckCounters(raw, tl, step) > 1000);
  CHECK(CheckAnnotations(raw, tl, step, step) == 0);
}

// A timeline's X events: (category, name, start + shift, duration).
using Event = std::tuple<std::string, std::string, int64_t, int64_t>;
std::multiset<Event> Events(const JsonValue& tl, int64_t shift) {
  std::multiset<Event> out;
  for (const JsonValue& e : tl.at("traceEvents").array) {
    if (e.at("ph").string != "X") continue;
    out.emplace(e.at("cat").string, e.at("name").string, Ns(e.at("ts")) + shift,
                Ns(e.at("dur")));
  }
  return out;
}

// The range's events are each step's alone (`one_step(s)`), moved by the
// steps' start difference, which is the raw ProfilerStep starts'.
void CheckRangeIsStepsShifted(const RawTrace& raw, const Model& model,
                              const JsonValue& range, int64_t first,
                              int64_t last,
                              const std::function<JsonValue(int64_t)>& one) {
  std::multiset<Event> want;
  for (int64_t s = first; s <= last; ++s) {
    if (!raw.step_start.count(s)) continue;
    const int64_t raw_shift =
        RelNs(raw.step_start.at(s), raw.step_start.at(first));
    const int64_t shift = StepOrigin(model, s) - StepOrigin(model, first);
    CHECK(Near(shift, raw_shift));
    for (const Event& e : Events(one(s), shift)) want.insert(e);
  }
  const std::multiset<Event> got = Events(range, 0);
  CHECK(got.size() > 1000);
  CHECK(got == want);
}

// Every GPU event whose correlation id names a runtime call (the raw
// trace's Runtime / cuda_runtime / cuda_driver events) gets an arrow from
// that call to it: the pairs of times, relative to the first GPU event,
// are the raw trace's.
TEST_CASE("Launch arrows join each GPU event to its runtime call") {
  JsonValue doc;
  std::string error;
  REQUIRE(testing::ParseJsonFile(kWorker0, &doc, &error));
  std::map<int64_t, double> call_us;  // correlation -> the call's start
  std::vector<std::pair<int64_t, double>> gpu;  // correlation, start
  for (const JsonValue& e : doc.at("traceEvents").array) {
    if (!e.Has("cat") || e.at("ph").string != "X" || !e.Has("args") ||
        !e.at("args").Has("correlation")) {
      continue;
    }
    const std::string& cat = e.at("cat").string;
    const int64_t id = std::llround(e.at("args").at("correlation").number);
    if (cat == "Runtime" || cat == "cuda_runtime" || cat == "cuda_driver") {
      call_us[id] = e.at("ts").number;
    } else if (cat == "Kernel" || cat == "Memcpy" || cat == "Memset" ||
               cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset") {
      gpu.emplace_back(id, e.at("ts").number);
    }
  }
  REQUIRE(!gpu.empty());
  double origin = gpu.front().second;
  for (const auto& g : gpu) origin = std::min(origin, g.second);
  std::multiset<std::pair<int64_t, int64_t>> expected;
  for (const auto& [id, us] : gpu) {
    auto call = call_us.find(id);
    if (call == call_us.end()) continue;
    expected.emplace(RelNs(call->second, origin), RelNs(us, origin));
  }
  REQUIRE(expected.size() > 1000);

  const auto loaded = Load(kWorker0);
  const std::set<int64_t>& steps = loaded->model.steps();
  const JsonValue tl = Timeline(loaded->model, *steps.begin(), *steps.rbegin());
  double ours_origin = 1e300;
  std::map<int64_t, double> start, finish;              // arrow id -> ts
  std::set<std::tuple<double, int64_t, int64_t>> work;  // ts, pid, tid
  std::map<int64_t, std::pair<int64_t, int64_t>> finish_lane;
  for (const JsonValue& e : tl.at("traceEvents").array) {
    const std::string& ph = e.at("ph").string;
    if (ph == "X" &&
        (e.at("cat").string == "Kernel" || e.at("cat").string == "Memcpy")) {
      ours_origin = std::min(ours_origin, e.at("ts").number);
      work.emplace(e.at("ts").number, std::llround(e.at("pid").number),
                   std::llround(e.at("tid").number));
    } else if (ph == "s" || ph == "f") {
      const int64_t id = std::llround(e.at("id").number);
      (ph == "s" ? start : finish)[id] = e.at("ts").number;
      if (ph == "f") {
        CHECK(e.at("bp").string == "e");
        finish_lane[id] = {std::llround(e.at("pid").number),
                           std::llround(e.at("tid").number)};
      }
    }
  }
  REQUIRE(start.size() == finish.size());
  std::multiset<std::pair<int64_t, int64_t>> ours;
  for (const auto& [id, ts] : start) {
    REQUIRE(finish.count(id) == 1);
    ours.emplace(RelNs(ts, ours_origin), RelNs(finish[id], ours_origin));
    // The arrow ends on the lane of GPU work that starts then.
    CHECK(work.count({finish[id], finish_lane[id].first,
                      finish_lane[id].second}) == 1);
  }
  CHECK(ours == expected);
}

TEST_CASE("A range of steps is drawn on one clock") {
  const RawTrace raw = ReadRaw(kDdpRank0);
  const auto loaded = Load(kDdpRank0);
  auto it = raw.step_start.begin();
  const int64_t first = (++it)->first, last = (++it)->first;
  const JsonValue range = Timeline(loaded->model, first, last);
  CHECK(CheckAnnotations(raw, range, first, last) > 2);
  CheckRangeIsStepsShifted(
      raw, loaded->model, range, first, last,
      [&](int64_t s) { return Timeline(loaded->model, s, s); });
  CHECK_FALSE(TraceStepsTimeline(loaded->model, 1000, 1001, nullptr).ok());
}

// The file `tfprof --trace_path=PATH timeline ARGS... -outfile F` writes,
// parsed; `said` gets what it printed.
JsonValue CliTimeline(const std::vector<std::string>& args,
                      std::string* said = nullptr) {
  const std::string file = testing::TempDir() + "/cli_timeline.json";
  std::vector<std::string> argv = {std::string("--trace_path=") + kDdpRank0,
                                   "timeline"};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.insert(argv.end(), {"-outfile", file});
  std::istringstream in;
  std::ostringstream out, err;
  cli::AppIo io{&in, &out, &err, false};
  INFO(err.str());
  REQUIRE(cli::RunApp(argv, io) == 0);
  if (said != nullptr) *said = out.str();
  JsonValue tl;
  std::string error;
  REQUIRE(testing::ParseJsonFile(file, &tl, &error));
  return tl;
}

TEST_CASE("timeline -steps A-B writes the steps A to B on one clock") {
  const RawTrace raw = ReadRaw(kDdpRank0);
  const auto loaded = Load(kDdpRank0);
  auto it = raw.step_start.begin();
  const int64_t first = (++it)->first;
  std::advance(it, 2);
  const int64_t last = it->first;  // three steps
  std::string said;
  const JsonValue range = CliTimeline(
      {"-steps", std::to_string(first) + "-" + std::to_string(last)}, &said);
  CHECK_THAT(said,
             Catch::StartsWith("Timeline of steps " + std::to_string(first) +
                               "-" + std::to_string(last) +
                               " (the trace's events) written to "));
  CHECK(CheckAnnotations(raw, range, first, last) > 3);
  // Each step as `timeline -step N` writes it, moved onto the range's clock.
  CheckRangeIsStepsShifted(raw, loaded->model, range, first, last,
                           [&](int64_t s) {
                             return CliTimeline({"-step", std::to_string(s)});
                           });
  // -steps N alone is the step N.
  const JsonValue one = CliTimeline({"-steps", std::to_string(first)}, &said);
  CHECK_THAT(said, Catch::StartsWith("Timeline of step " +
                                     std::to_string(first) + " (the trace"));
  CHECK(Events(one, 0) ==
        Events(CliTimeline({"-step", std::to_string(first)}), 0));
  CHECK(CheckAnnotations(raw, one, first, first) > 0);
}

TEST_CASE("resnet (H200): annotations and memory counters of steps 3-5") {
  if (!testing::HaveCorpusFile(kResnet)) return;
  const std::string path = testing::CorpusFile(kResnet);
  const RawTrace raw = ReadRaw(path);
  REQUIRE(raw.annotations.size() == 15);
  const auto loaded = Load(path);
  const JsonValue tl = Timeline(loaded->model, 3, 5);
  CHECK(CheckAnnotations(raw, tl, 3, 5) == 9);
  CHECK(CheckCounters(raw, tl, 3) > 1000);
  size_t all = 0;
  for (int64_t s = 2; s <= 6; ++s) {
    all += CheckAnnotations(raw, Timeline(loaded->model, s, s), s, s);
  }
  CHECK(all == 15);
}

}  // namespace
}  // namespace tfprof
