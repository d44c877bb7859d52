#include "profiler/render/trace_timeline.h"

#include <algorithm>
#include <climits>
#include <map>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "profiler/base/json_writer.h"
#include "profiler/base/saturate.h"
#include "profiler/base/units.h"

namespace tfprof {
namespace {

constexpr int kHostPid = 1;
constexpr int kFirstGpuPid = 100;

// Chrome trace lanes: a process per GPU (the part of the stream name before
// "/stream:"), a thread per host thread or stream, with their names.
class Lanes {
 public:
  std::pair<int, int> Host(const std::string& thread) {
    auto [it, added] = host_.emplace(thread, static_cast<int>(host_.size()));
    if (added) Name(kHostPid, it->second + 1, thread);
    return {kHostPid, it->second + 1};
  }
  std::pair<int, int> Stream(const std::string& stream) {
    const size_t cut = stream.rfind("/stream:");
    const std::string gpu = stream.substr(0, cut);
    auto [g, gadded] =
        gpus_.emplace(gpu, kFirstGpuPid + static_cast<int>(gpus_.size()));
    if (gadded) {
      absl::StrAppend(&meta_,
                      ",\n{\"name\": \"process_name\", \"ph\": \"M\", "
                      "\"pid\": ",
                      g->second, ", \"args\": {\"name\": ", JsonQuote(gpu),
                      "}}");
    }
    auto [s, sadded] =
        streams_.emplace(stream, static_cast<int>(streams_.size()) + 1);
    if (sadded) {
      Name(g->second, s->second,
           cut == std::string::npos ? stream : stream.substr(cut + 1));
    }
    return {g->second, s->second};
  }
  const std::string& metadata() const { return meta_; }

 private:
  void Name(int pid, int tid, const std::string& name) {
    absl::StrAppend(
        &meta_, ",\n{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": ", pid,
        ", \"tid\": ", tid, ", \"args\": {\"name\": ", JsonQuote(name), "}}");
  }
  std::map<std::string, int> host_, gpus_, streams_;
  std::string meta_ =
      "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 1, \"args\": "
      "{\"name\": \"Host\"}}";
};

// The step's start: its own span where known, else its first event.
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

void AppendEvent(const std::string& name, const char* cat,
                 std::pair<int, int> lane, int64_t start, int64_t dur,
                 const std::string& args, std::string* out) {
  absl::StrAppend(
      out, ",\n{\"name\": ", JsonQuote(name), ", \"cat\": \"", cat,
      "\", \"ph\": \"X\", \"pid\": ", lane.first, ", \"tid\": ", lane.second,
      ", \"ts\": ", NanosAsMicros(start), ", \"dur\": ", NanosAsMicros(dur),
      ", \"args\": {", args, "}}");
}

}  // namespace

bool HasTraceEvents(const Model& model) {
  return !model.activity().host().empty() || !model.activity().work().empty();
}

absl::StatusOr<std::string> TraceEventsTimeline(
    const Model& model, int64_t step, const std::set<std::string>* nodes) {
  if (!HasTraceEvents(model)) {
    return absl::FailedPreconditionError(
        "this profile keeps no trace events (a timeline of trace events needs "
        "a PyTorch/Kineto trace or an XSpace; RunMetadata steps have the "
        "timeline command)");
  }
  const Activity& a = model.activity();
  const int64_t origin = StepOrigin(model, step);
  Lanes lanes;
  std::string events;
  int64_t n = 0;
  auto shown = [&](uint32_t node) {
    return nodes == nullptr || nodes->count(a.String(node)) != 0;
  };
  for (const HostSpan& h : a.host()) {
    if (h.step != step || !shown(h.node)) continue;
    AppendEvent(a.String(h.name), "Op", lanes.Host(a.String(h.thread)),
                SatAdd(h.start_ns, -origin), h.duration_ns,
                absl::StrCat("\"node\": ", JsonQuote(a.String(h.node)),
                             ", \"step\": ", h.step),
                &events);
    ++n;
  }
  for (const DeviceWork& w : a.work()) {
    if (w.step != step || !shown(w.op)) continue;
    std::string args = absl::StrCat("\"op\": ", JsonQuote(a.String(w.op)),
                                    ", \"step\": ", w.step);
    if (w.launch != 0) {
      absl::StrAppend(&args, ", \"launch\": ", JsonQuote(a.String(w.launch)));
    }
    AppendEvent(a.String(w.name),
                w.kind == WorkKind::kKernel ? "Kernel" : "Memcpy",
                lanes.Stream(a.String(w.stream)), SatAdd(w.start_ns, -origin),
                w.duration_ns, args, &events);
    ++n;
  }
  if (n == 0) {
    return absl::NotFoundError(
        absl::StrCat("no trace events in step ", step,
                     nodes != nullptr ? " for the displayed nodes" : ""));
  }
  return absl::StrCat("{\"displayTimeUnit\": \"ns\", \"traceEvents\": [\n",
                      lanes.metadata(), events, "\n]}\n");
}

}  // namespace tfprof
