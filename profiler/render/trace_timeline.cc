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
    const std::string gpu = stream.substr(0, cut);
    auto [g, gadded] = gpus_.emplace(
        gpu, pid_base_ + kFirstGpuPid + static_cast<int>(gpus_.size()));
    if (gadded) NameProcess(g->second, gpu);
    auto [s, sadded] =
        streams_.emplace(stream, static_cast<int>(streams_.size()) + 1);
    if (sadded) {
      Name(g->second, s->second,
           cut == std::string::npos ? stream : stream.substr(cut + 1));
    }
    return {g->second, s->second};
  }

 private:
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

}  // namespace

bool HasTraceEvents(const Model& model) {
  return !model.activity().host().empty() || !model.activity().work().empty();
}

int64_t StepEventsWriter::Add(const Model& model, int64_t step,
                              const std::set<std::string>* nodes,
                              int64_t shift_ns, const std::string& label,
                              int pid_base) {
  const Activity& a = model.activity();
  Lanes lanes(pid_base, label, &meta_);
  int64_t n = 0;
  auto shown = [&](uint32_t node) {
    return nodes == nullptr || nodes->count(a.String(node)) != 0;
  };
  for (const HostSpan& h : a.host()) {
    if (h.step != step || !shown(h.node)) continue;
    AppendEvent(a.String(h.name), "Op", lanes.Host(a.String(h.thread)),
                SatAdd(h.start_ns, shift_ns), h.duration_ns,
                absl::StrCat("\"node\": ", JsonQuote(a.String(h.node)),
                             ", \"step\": ", h.step),
                &events_);
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
                lanes.Stream(a.String(w.stream)), SatAdd(w.start_ns, shift_ns),
                w.duration_ns, args, &events_);
    ++n;
  }
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
  if (!HasTraceEvents(model)) {
    return absl::FailedPreconditionError(
        "this profile keeps no trace events (a timeline of trace events needs "
        "a PyTorch/Kineto trace or an XSpace; RunMetadata steps have the "
        "timeline command)");
  }
  StepEventsWriter writer;
  if (writer.Add(model, step, nodes, -StepOrigin(model, step), "", 0) == 0) {
    return absl::NotFoundError(
        absl::StrCat("no trace events in step ", step,
                     nodes != nullptr ? " for the displayed nodes" : ""));
  }
  return writer.Finish();
}

}  // namespace tfprof
