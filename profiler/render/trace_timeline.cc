#include "profiler/render/trace_timeline.h"

#include <algorithm>
#include <climits>
#include <iterator>
#include <map>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "profiler/base/json_writer.h"
#include "profiler/base/saturate.h"
#include "profiler/base/units.h"
#include "profiler/views/views.h"

namespace tfprof {
namespace {

constexpr int kHostPid = 1;
constexpr int kMemoryPid = 2;
constexpr int kFirstGpuPid = 100;
// The annotation lane's thread in each GPU's process (streams count from 1).
constexpr int kAnnotationTid = 0;

// Chrome trace lanes of one trace: a process for the host and one per GPU
// (the part of the stream name before "/stream:"), a thread per host thread
// or stream, with their names; process ids from `pid_base`, process names
// after `label` when there is one.
class Lanes {
 public:
  Lanes(int pid_base, std::string label, std::string* meta)
      : pid_base_(pid_base), label_(std::move(label)), meta_(meta) {
    // One trace's timeline names its host process first, always.
    if (label_.empty()) NameProcess(pid_base_ + kHostPid, "Host");
  }
  std::pair<int, int> Host(const std::string& thread) {
    if (host_.empty() && !label_.empty()) {
      NameProcess(pid_base_ + kHostPid, "Host");
    }
    auto [it, added] = host_.emplace(thread, static_cast<int>(host_.size()));
    if (added) Name(pid_base_ + kHostPid, it->second + 1, thread);
    return {pid_base_ + kHostPid, it->second + 1};
  }
  std::pair<int, int> Stream(const std::string& stream) {
    const size_t cut = stream.rfind("/stream:");
    const int pid = Gpu(stream.substr(0, cut));
    auto [s, sadded] =
        streams_.emplace(stream, static_cast<int>(streams_.size()) + 1);
    if (sadded) {
      Name(pid, s->second,
           cut == std::string::npos ? stream : stream.substr(cut + 1));
    }
    return {pid, s->second};
  }
  // The annotation lane of the GPU a stream belongs to, above its streams.
  std::pair<int, int> Annotations(const std::string& stream) {
    const int pid = Gpu(stream.substr(0, stream.rfind("/stream:")));
    if (annotated_.insert(pid).second) {
      Name(pid, kAnnotationTid, "annotations");
      absl::StrAppend(meta_,
                      ",\n{\"name\": \"thread_sort_index\", \"ph\": \"M\", "
                      "\"pid\": ",
                      pid, ", \"tid\": ", kAnnotationTid,
                      ", \"args\": {\"sort_index\": -1}}");
    }
    return {pid, kAnnotationTid};
  }
  // The process of the allocators' counters.
  int Memory() {
    if (!memory_named_) NameProcess(pid_base_ + kMemoryPid, "Memory");
    memory_named_ = true;
    return pid_base_ + kMemoryPid;
  }

 private:
  int Gpu(const std::string& gpu) {
    auto [g, added] = gpus_.emplace(
        gpu, pid_base_ + kFirstGpuPid + static_cast<int>(gpus_.size()));
    if (added) NameProcess(g->second, gpu);
    return g->second;
  }
  void NameProcess(int pid, const std::string& name) {
    absl::StrAppend(
        meta_, meta_->empty() ? "" : ",\n",
        "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": ", pid,
        ", \"args\": {\"name\": ",
        JsonQuote(label_.empty() ? name : absl::StrCat(label_, ": ", name)),
        "}}");
    if (label_.empty()) return;
    // Ranks' processes in rank order.
    absl::StrAppend(meta_,
                    ",\n{\"name\": \"process_sort_index\", \"ph\": \"M\", "
                    "\"pid\": ",
                    pid, ", \"args\": {\"sort_index\": ", pid, "}}");
  }
  void Name(int pid, int tid, const std::string& name) {
    absl::StrAppend(
        meta_, ",\n{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": ", pid,
        ", \"tid\": ", tid, ", \"args\": {\"name\": ", JsonQuote(name), "}}");
  }
  int pid_base_;
  std::string label_;
  std::string* meta_;
  std::map<std::string, int> host_, gpus_, streams_;
  std::set<int> annotated_;
  bool memory_named_ = false;
};

void AppendEvent(const std::string& name, const char* cat,
                 std::pair<int, int> lane, int64_t start, int64_t dur,
                 const std::string& args, std::string* out) {
  absl::StrAppend(
      out, ",\n{\"name\": ", JsonQuote(name), ", \"cat\": \"", cat,
      "\", \"ph\": \"X\", \"pid\": ", lane.first, ", \"tid\": ", lane.second,
      ", \"ts\": ", NanosAsMicros(start), ", \"dur\": ", NanosAsMicros(dur),
      ", \"args\": {", args, "}}");
}

// The time each host thread's drawn events cover, so that a launch arrow
// starts only inside an event on the timeline.
class DrawnHostTime {
 public:
  void Add(uint32_t thread, int64_t start, int64_t duration) {
    spans_[thread].emplace_back(start, SatAdd(start, duration));
  }
  // Merges each thread's spans (after the last Add).
  void Finish() {
    for (auto& [thread, v] : spans_) {
      std::sort(v.begin(), v.end());
      size_t out = 0;
      for (const auto& s : v) {
        if (out > 0 && s.first <= v[out - 1].second) {
          v[out - 1].second = std::max(v[out - 1].second, s.second);
        } else {
          v[out++] = s;
        }
      }
      v.resize(out);
    }
  }
  bool Covers(uint32_t thread, int64_t t) const {
    auto it = spans_.find(thread);
    if (it == spans_.end()) return false;
    const auto& v = it->second;
    auto s =
        std::upper_bound(v.begin(), v.end(), t,
                         [](int64_t x, const std::pair<int64_t, int64_t>& p) {
                           return x < p.first;
                         });
    return s != v.begin() && t <= std::prev(s)->second;
  }

 private:
  std::map<uint32_t, std::vector<std::pair<int64_t, int64_t>>> spans_;
};

// A Chrome flow arrow `id` from the launch call on `host` at `call_ns` to
// the work it launched on `stream` at `work_ns` (bound to the slices that
// enclose those times).
void AppendLaunchArrow(int64_t id, std::pair<int, int> host, int64_t call_ns,
                       std::pair<int, int> stream, int64_t work_ns,
                       std::string* out) {
  absl::StrAppend(out,
                  ",\n{\"name\": \"launch\", \"cat\": \"launch\", \"ph\": "
                  "\"s\", \"id\": ",
                  id, ", \"pid\": ", host.first, ", \"tid\": ", host.second,
                  ", \"ts\": ", NanosAsMicros(call_ns), "}");
  absl::StrAppend(out,
                  ",\n{\"name\": \"launch\", \"cat\": \"launch\", \"ph\": "
                  "\"f\", \"bp\": \"e\", \"id\": ",
                  id, ", \"pid\": ", stream.first, ", \"tid\": ", stream.second,
                  ", \"ts\": ", NanosAsMicros(work_ns), "}");
}

// Each allocator's bytes in use over [lo, hi]: the value it had at `lo`
// (its last sample before), then every sample in the span, as Chrome
// counter events (memory samples are sorted by allocator, then time).
void AppendMemoryCounters(const Activity& a, int64_t lo, int64_t hi,
                          int64_t shift_ns, Lanes* lanes, std::string* out) {
  const std::vector<MemorySample>& memory = a.memory();
  auto counter = [&](const MemorySample& m, int64_t t) {
    absl::StrAppend(
        out, ",\n{\"name\": ", JsonQuote(a.String(m.allocator)),
        ", \"cat\": \"Memory\", \"ph\": \"C\", \"pid\": ", lanes->Memory(),
        ", \"ts\": ", NanosAsMicros(SatAdd(t, shift_ns)),
        ", \"args\": {\"bytes_in_use\": ", m.bytes_in_use, "}}");
  };
  // Binary searches for each allocator's samples and its first one at or
  // after lo: no walk of the samples outside the span.
  for (size_t i = 0; i < memory.size();) {
    const size_t end = static_cast<size_t>(
        std::upper_bound(memory.begin() + static_cast<ptrdiff_t>(i),
                         memory.end(), memory[i].allocator,
                         [](uint32_t id, const MemorySample& m) {
                           return id < m.allocator;
                         }) -
        memory.begin());
    const auto first = std::lower_bound(
        memory.begin() + static_cast<ptrdiff_t>(i),
        memory.begin() + static_cast<ptrdiff_t>(end), lo,
        [](const MemorySample& m, int64_t t) { return m.time_ns < t; });
    size_t k = static_cast<size_t>(first - memory.begin());
    if (k > i) counter(memory[k - 1], lo);
    for (; k < end && memory[k].time_ns <= hi; ++k)
      counter(memory[k], memory[k].time_ns);
    i = end;
  }
}

}  // namespace

bool HasTraceEvents(const Model& model) {
  return !model.activity().host().empty();
}

int64_t StepEventsWriter::Add(const Model& model, int64_t step,
                              const std::set<std::string>* nodes,
                              int64_t shift_ns, const std::string& label,
                              int pid_base) {
  return AddSteps(model, step, step, nodes, shift_ns, label, pid_base);
}

int64_t StepEventsWriter::AddSteps(const Model& model, int64_t first,
                                   int64_t last,
                                   const std::set<std::string>* nodes,
                                   int64_t shift_ns, const std::string& label,
                                   int pid_base) {
  const Activity& a = model.activity();
  Lanes lanes(pid_base, label, &meta_);
  int64_t n = 0;
  int64_t lo = INT64_MAX, hi = INT64_MIN;  // the events' span
  auto in = [&](int64_t step) { return step >= first && step <= last; };
  auto shown = [&](uint32_t node) {
    return nodes == nullptr || nodes->count(a.String(node)) != 0;
  };
  auto span = [&](int64_t start, int64_t dur) {
    lo = std::min(lo, start);
    hi = std::max(hi, SatAdd(start, dur));
    ++n;
  };
  DrawnHostTime drawn;
  for (const HostSpan& h : a.host()) {
    if (!in(h.step) || !shown(h.node)) continue;
    drawn.Add(h.thread, h.start_ns, h.duration_ns);
    AppendEvent(a.String(h.name), "Op", lanes.Host(a.String(h.thread)),
                SatAdd(h.start_ns, shift_ns), h.duration_ns,
                absl::StrCat("\"node\": ", JsonQuote(a.String(h.node)),
                             ", \"step\": ", h.step),
                &events_);
    span(h.start_ns, h.duration_ns);
  }
  drawn.Finish();
  for (const DeviceWork& w : a.work()) {
    if (!in(w.step) || !shown(w.op)) continue;
    std::string args = absl::StrCat("\"op\": ", JsonQuote(a.String(w.op)),
                                    ", \"step\": ", w.step);
    if (w.launch != 0) {
      absl::StrAppend(&args, ", \"launch\": ", JsonQuote(a.String(w.launch)));
    }
    const std::pair<int, int> stream = lanes.Stream(a.String(w.stream));
    AppendEvent(a.String(w.name),
                w.kind == WorkKind::kKernel ? "Kernel" : "Memcpy", stream,
                SatAdd(w.start_ns, shift_ns), w.duration_ns, args, &events_);
    span(w.start_ns, w.duration_ns);
    // An arrow from the launch call, when an event drawn on its thread
    // holds it.
    if (w.launch_ns != DeviceWork::kNoLaunch &&
        drawn.Covers(w.launch_thread, w.launch_ns)) {
      AppendLaunchArrow(++flows_, lanes.Host(a.String(w.launch_thread)),
                        SatAdd(w.launch_ns, shift_ns), stream,
                        SatAdd(w.start_ns, shift_ns), &events_);
    }
  }
  if (n == 0) return 0;
  // The ranges the program marked, as the GPUs saw them, on a lane above
  // each GPU's streams.
  for (const DeviceAnnotation& d : a.annotations()) {
    if (!in(d.step)) continue;
    AppendEvent(a.String(d.name), "Annotation",
                lanes.Annotations(a.String(d.stream)),
                SatAdd(d.start_ns, shift_ns), d.duration_ns,
                absl::StrCat("\"step\": ", d.step), &events_);
  }
  AppendMemoryCounters(a, lo, hi, shift_ns, &lanes, &events_);
  return n;
}

std::string StepEventsWriter::Finish() const {
  return absl::StrCat("{\"displayTimeUnit\": \"ns\", \"traceEvents\": [\n",
                      meta_, events_, "\n]}\n");
}

int64_t StepOrigin(const Model& model, int64_t step) {
  const Activity& a = model.activity();
  for (const StepSpan& s : a.steps()) {
    if (s.step == step) return s.start_ns;
  }
  int64_t origin = INT64_MAX;
  for (const HostSpan& h : a.host()) {
    if (h.step == step) origin = std::min(origin, h.start_ns);
  }
  for (const DeviceWork& w : a.work()) {
    if (w.step == step) origin = std::min(origin, w.start_ns);
  }
  return origin == INT64_MAX ? 0 : origin;
}

absl::StatusOr<std::string> TraceEventsTimeline(
    const Model& model, int64_t step, const std::set<std::string>* nodes) {
  return TraceStepsTimeline(model, step, step, nodes);
}

absl::StatusOr<std::string> TraceStepsTimeline(
    const Model& model, int64_t first, int64_t last,
    const std::set<std::string>* nodes) {
  if (!HasTraceEvents(model)) {
    return absl::FailedPreconditionError(
        "this profile keeps no trace events (a timeline of trace events needs "
        "a PyTorch/Kineto trace or an XSpace; RunMetadata steps have the "
        "timeline command)");
  }
  StepEventsWriter writer;
  if (writer.AddSteps(model, first, last, nodes, -StepOrigin(model, first), "",
                      0) == 0) {
    // Steps the input does not have: say which it has.
    const auto at = model.steps().lower_bound(first);
    const bool no_step = at == model.steps().end() || *at > last;
    if (no_step && first == last) {
      absl::Status missing = CheckStep(model, first);
      if (!missing.ok()) return missing;
    }
    std::string steps;
    if (no_step && !model.steps().empty()) {
      steps = absl::StrCat(" (steps: ", StepList(model), ")");
    }
    return absl::NotFoundError(absl::StrCat(
        "no trace events in step", first == last ? " " : "s ", first,
        first == last ? "" : absl::StrCat("-", last),
        nodes != nullptr ? " for the displayed nodes" : "", steps));
  }
  return writer.Finish();
}

}  // namespace tfprof
