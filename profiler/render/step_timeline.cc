#include "profiler/render/step_timeline.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "google/protobuf/text_format.h"
#include "profiler/base/device.h"
#include "profiler/base/json_writer.h"
#include "profiler/base/saturate.h"
#include "profiler/render/trace_timeline.h"
#include "re2/re2.h"

namespace tfprof {
namespace {

struct OpLabel {
  std::string name, op;
  std::vector<std::string> inputs;
};

// "name = Op(in1, in2)"; anything else is unknown.
OpLabel ParseOpLabel(const std::string& label) {
  static const RE2* const kLabel = new RE2("^(.*) = (.*)\\((.*)\\)");
  OpLabel l;
  std::string inputs;
  if (!RE2::PartialMatch(label, *kLabel, &l.name, &l.op, &inputs)) {
    return OpLabel{"unknown", "unknown", {}};
  }
  if (!inputs.empty()) l.inputs = absl::StrSplit(inputs, ", ");
  return l;
}

// GPU tracer labels: "... @@name:op#..." or a node name "name:op".
std::pair<std::string, std::string> ParseKernelLabel(const std::string& label,
                                                     std::string node_name) {
  const size_t start = label.find("@@");
  const size_t end = label.find('#');
  if (start != std::string::npos && end != std::string::npos &&
      start + 2 < end) {
    node_name = label.substr(start + 2, end - start - 2);
  }
  std::vector<std::string> fields = absl::StrSplit(node_name, ':');
  fields.push_back("unknown");
  return {fields[0], fields[1]};
}

struct Tensor {
  std::string name;
  int64_t object_id;
  int64_t create_time;
  int64_t pid;
  std::string allocator;
  int64_t bytes;
  std::vector<int64_t> unrefs;
  int64_t last_unref() const {
    return unrefs.empty() ? 0 : *std::max_element(unrefs.begin(), unrefs.end());
  }
};

class Builder {
 public:
  Builder(const tfcore::StepStats& stats, const StepTimelineOptions& opts)
      : stats_(stats), opts_(opts) {}

  std::string Build() {
    PreprocessOpTime();
    AllocatePids();
    AssignLanes();
    AnalyzeTensors();
    ShowCompute();
    if (opts_.show_memory) ShowMemoryCounters();
    Json trace = Json::Object();
    Json& events = trace["traceEvents"];
    events = Json::Array();
    for (Json& e : metadata_) events.Append(std::move(e));
    for (Json& e : events_) events.Append(std::move(e));
    return trace.WritePretty();
  }

 private:
  void PreprocessOpTime() {
    if (opts_.op_time != "gpu" && opts_.op_time != "all") return;
    std::map<std::string, std::pair<int64_t, int64_t>> gpu;  // name -> span
    for (const auto& dev : stats_.dev_stats()) {
      if (!IsStreamAllDevice(dev.device())) continue;
      for (const auto& k : dev.node_stats()) {
        const std::string name =
            ParseKernelLabel(k.timeline_label(), k.node_name()).first;
        const int64_t start = k.all_start_micros();
        const int64_t end = SatAdd(start, k.all_end_rel_micros());
        auto it = gpu.find(name);
        if (it == gpu.end()) {
          gpu[name] = {start, end};
        } else {
          it->second.first = std::min(it->second.first, start);
          it->second.second = std::max(it->second.second, end);
        }
      }
    }
    for (auto& dev : *stats_.mutable_dev_stats()) {
      if (IsStreamAllDevice(dev.device()) ||
          dev.device().find("/job") == std::string::npos) {
        continue;
      }
      for (auto& op : *dev.mutable_node_stats()) {
        auto it = gpu.find(op.node_name());
        if (it == gpu.end()) continue;
        const int64_t end =
            std::max(it->second.second,
                     SatAdd(op.all_start_micros(), op.all_end_rel_micros()));
        if (opts_.op_time == "gpu") op.set_all_start_micros(it->second.first);
        op.set_all_end_rel_micros(SatSub(end, op.all_start_micros()));
      }
    }
  }

  void AllocatePids() {
    allocators_pid_ = next_pid_++;
    metadata_.push_back(TraceProcessName("Allocators", allocators_pid_));
    for (const auto& dev : stats_.dev_stats()) {
      const int64_t compute = next_pid_++;
      const int64_t tensors = next_pid_++;
      device_pids_[dev.device()] = compute;
      tensor_pids_[dev.device()] = tensors;
      metadata_.push_back(TraceProcessName(dev.device() + " Compute", compute));
      metadata_.push_back(TraceProcessName(dev.device() + " Tensors", tensors));
    }
  }

  // Per device, each op goes to the first lane that is free at its start.
  void AssignLanes() {
    for (const auto& dev : stats_.dev_stats()) {
      std::vector<int64_t> lanes = {0};
      std::vector<int64_t>& tids = lanes_[&dev];
      for (const auto& ns : dev.node_stats()) {
        int64_t lane = -1;
        for (size_t i = 0; i < lanes.size(); ++i) {
          if (ns.all_start_micros() > lanes[i]) {
            lane = static_cast<int64_t>(i);
            lanes[i] = SatAdd(ns.all_start_micros(), ns.all_end_rel_micros());
            break;
          }
        }
        if (lane < 0) {
          lane = static_cast<int64_t>(lanes.size());
          lanes.push_back(
              SatAdd(ns.all_start_micros(), ns.all_end_rel_micros()));
        }
        tids.push_back(lane);
      }
    }
  }

  Tensor& Produce(const std::string& name, int64_t time, int64_t pid,
                  const std::string& allocator, int64_t bytes) {
    const int64_t id = static_cast<int64_t>(tensors_.size());
    auto it = tensors_.find(name);
    if (it == tensors_.end()) {
      tensor_order_.push_back(name);
      it = tensors_.emplace(name, Tensor()).first;
    }
    it->second = Tensor{name, id, time, pid, allocator, bytes, {}};
    return it->second;
  }

  void AnalyzeTensors() {
    for (const auto& dev : stats_.dev_stats()) {
      const int64_t device_pid = device_pids_[dev.device()];
      const int64_t tensors_pid = tensor_pids_[dev.device()];
      const std::vector<int64_t>& tids = lanes_[&dev];
      for (int i = 0; i < dev.node_stats_size(); ++i) {
        const auto& ns = dev.node_stats(i);
        const int64_t tid = tids[static_cast<size_t>(i)];
        const int64_t start = ns.all_start_micros();
        const int64_t end = SatAdd(start, ns.all_end_rel_micros());
        for (int k = 0; k < ns.output_size(); ++k) {
          const auto& out = ns.output(k);
          const std::string name =
              k ? absl::StrCat(ns.node_name(), ":", k) : ns.node_name();
          const auto& alloc = out.tensor_description().allocation_description();
          Tensor& t = Produce(name, start, tensors_pid, alloc.allocator_name(),
                              alloc.requested_bytes());
          t.unrefs.push_back(end);
          flow_starts_[name] = std::make_tuple(end, device_pid, tid);
          if (opts_.show_memory) {
            Json n = TraceEvent("N", "Tensor", name, tensors_pid, tid, start);
            n["id"] = t.object_id;
            events_.push_back(std::move(n));
            std::string desc;
            google::protobuf::TextFormat::PrintToString(
                out.tensor_description(), &desc);
            desc.erase(std::remove(desc.begin(), desc.end(), '"'), desc.end());
            Json o = TraceEvent("O", "Tensor", name, tensors_pid, tid,
                                SatSub(end, 1));
            o["id"] = t.object_id;
            Json snapshot = Json::Object();
            snapshot["tensor_description"] = desc;
            Json args = Json::Object();
            args["snapshot"] = std::move(snapshot);
            o["args"] = std::move(args);
            events_.push_back(std::move(o));
          }
        }
      }
    }
  }

  void ShowCompute() {
    int64_t flow_id = 0;
    for (const auto& dev : stats_.dev_stats()) {
      const int64_t pid = device_pids_[dev.device()];
      const DeviceKind kind = KindOfDevice(dev.device());
      const bool gpu_trace = kind == DeviceKind::kStreamAll ||
                             kind == DeviceKind::kStream ||
                             kind == DeviceKind::kMemcpy;
      const std::vector<int64_t>& tids = lanes_[&dev];
      for (int i = 0; i < dev.node_stats_size(); ++i) {
        const auto& ns = dev.node_stats(i);
        const int64_t tid = tids[static_cast<size_t>(i)];
        const int64_t start = ns.all_start_micros();
        const int64_t end = SatAdd(start, ns.all_end_rel_micros());
        std::string name = ns.node_name(), op;
        std::vector<std::string> inputs;
        if (gpu_trace) {
          std::tie(name, op) = ParseKernelLabel(ns.timeline_label(), name);
        } else if (name == "RecvTensor") {
          op = "RecvTensor";
        } else {
          OpLabel l = ParseOpLabel(ns.timeline_label());
          op = l.op;
          inputs = l.inputs;
        }
        Json e = TraceEvent("X", "Op", op, pid, tid, start);
        e["dur"] = ns.all_end_rel_micros();
        Json args = Json::Object();
        args["name"] = name;
        args["op"] = op;
        for (size_t k = 0; k < inputs.size(); ++k) {
          args[absl::StrCat("input", k)] = inputs[k];
        }
        e["args"] = std::move(args);
        events_.push_back(std::move(e));
        if (gpu_trace || ns.node_name() == "RecvTensor") continue;
        for (std::string input : inputs) {
          if (!tensors_.count(input)) {
            // Send/Recv pairs inserted by partitioning: point at the
            // original node.
            const size_t cut = input.rfind("/_");
            if (cut != std::string::npos && cut > 0) input.resize(cut);
          }
          auto it = tensors_.find(input);
          if (it == tensors_.end()) continue;
          it->second.unrefs.push_back(SatSub(end, 1));
          if (!opts_.show_dataflow) continue;
          const auto& [ctime, cpid, ctid] = flow_starts_[input];
          if (cpid == pid && ctid == tid) continue;
          Json s = TraceEvent("s", "DataFlow", input, cpid, ctid, ctime);
          s["id"] = flow_id;
          events_.push_back(std::move(s));
          Json t = TraceEvent("t", "DataFlow", input, pid, tid, start);
          t["id"] = flow_id;
          events_.push_back(std::move(t));
          ++flow_id;
        }
      }
    }
  }

  void ShowMemoryCounters() {
    std::vector<std::string> allocator_order;
    std::map<std::string,
             std::vector<std::tuple<int64_t, int64_t, std::string>>>
        allocations;
    for (const std::string& name : tensor_order_) {
      const Tensor& t = tensors_.at(name);
      Json d = TraceEvent("D", "Tensor", name, t.pid, 0, t.last_unref());
      d["id"] = t.object_id;
      events_.push_back(std::move(d));
      if (!allocations.count(t.allocator))
        allocator_order.push_back(t.allocator);
      auto& list = allocations[t.allocator];
      list.emplace_back(t.create_time, t.bytes, name);
      list.emplace_back(t.last_unref(), -t.bytes, name);
    }
    for (const std::string& allocator : allocator_order) {
      auto& list = allocations[allocator];
      std::sort(list.begin(), list.end());
      int64_t total = 0;
      for (const auto& [time, bytes, name] : list) {
        total += bytes;
        Json c = TraceEvent("C", "Memory", allocator, allocators_pid_, 0, time);
        Json args = Json::Object();
        args[allocator] = total;
        c["args"] = std::move(args);
        events_.push_back(std::move(c));
      }
    }
  }

  tfcore::StepStats stats_;
  const StepTimelineOptions opts_;
  int64_t next_pid_ = 0;
  int64_t allocators_pid_ = 0;
  std::map<std::string, int64_t> device_pids_, tensor_pids_;
  std::map<const tfcore::DeviceStepStats*, std::vector<int64_t>> lanes_;
  std::map<std::string, Tensor> tensors_;
  std::vector<std::string> tensor_order_;
  std::map<std::string, std::tuple<int64_t, int64_t, int64_t>> flow_starts_;
  std::vector<Json> metadata_;
  std::vector<Json> events_;
};

}  // namespace

std::string StepStatsTimeline(const tfcore::StepStats& step_stats,
                              const StepTimelineOptions& options) {
  return Builder(step_stats, options).Build();
}

bool ParseStepRange(const std::string& text, int64_t* first, int64_t* last) {
  const std::vector<std::string> parts = absl::StrSplit(text, '-');
  if (parts.empty() || parts.size() > 2) return false;
  int64_t a = 0, b = 0;
  if (!absl::SimpleAtoi(parts.front(), &a) ||
      !absl::SimpleAtoi(parts.back(), &b) || a < 0 || b < a) {
    return false;
  }
  *first = a;
  *last = b;
  return true;
}

absl::StatusOr<StepTimeline> LoadedStepTimeline(
    const LoadedProfile& profile, int64_t step,
    const StepTimelineOptions& options) {
  const std::map<int64_t, std::string>& files = profile.run_meta_files;
  const Model& model = profile.model;
  StepTimeline out;
  if (files.empty() && HasTraceEvents(model)) {
    if (step < 0 && !model.steps().empty()) step = *model.steps().begin();
    const int64_t last = std::max(step, options.last_step);
    absl::StatusOr<std::string> json =
        TraceStepsTimeline(model, step, last, nullptr);
    if (!json.ok()) return json.status();
    out.step = step;
    out.last_step = last;
    out.json = std::move(*json);
    out.trace_events = true;
    return out;
  }
  if (files.empty()) {
    return absl::FailedPreconditionError(
        "timeline needs the RunMetadata files (--run_meta_path) or a trace; "
        "a ProfileProto keeps neither (the session draws its graph view "
        "instead)");
  }
  if (step < 0) step = files.begin()->first;
  if (options.last_step > step) {
    return absl::InvalidArgumentError(
        "timeline: a range of steps needs a trace's events (RunMetadata "
        "timelines draw one step)");
  }
  auto it = files.find(step);
  if (it == files.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("timeline: no RunMetadata for step ", step));
  }
  tfcore::RunMetadata run_meta;
  absl::Status s = ReadProtoFile(it->second, false, &run_meta);
  if (!s.ok()) return s;
  out.step = step;
  out.last_step = step;
  out.json = StepStatsTimeline(run_meta.step_stats(), options);
  return out;
}

}  // namespace tfprof
