// TensorFlow timelines (tensorflow.python.client.timeline, ProfilerHook):
// Chrome Trace Format JSON in which every process is "<device> Compute" or
// "<device> Tensors" and every op is an "X" event with args.name (the node)
// and args.op (its type). One file is one step.
#include "profiler/importers/tf_timeline/tf_timeline.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "profiler/base/device.h"
#include "re2/re2.h"

namespace tfprof {
namespace trace_internal {
namespace {

// A GPU stream or memcpy lane event, kept to sum accelerator time when the
// timeline has no ".../stream:all" lane for that GPU.
struct LaneEvent {
  int32_t gpu = 0;  // the device before "/stream:" or "/memcpy" (GpuTable)
  int32_t node = 0;
  int64_t start = 0;
  int64_t duration = 0;
  bool memcpy = false;
};

// The GPUs of the lanes as written, and their lower-case forms (which is
// what identifies a GPU).
struct GpuTable {
  std::vector<std::string> names;
  std::vector<int32_t> keys;  // per name: index into `lower`
  std::vector<std::string> lower;
  absl::flat_hash_map<std::string, int32_t> name_ids;
  absl::flat_hash_map<std::string, int32_t> lower_ids;

  int32_t Id(const std::string& gpu) {
    auto [it, inserted] =
        name_ids.emplace(gpu, static_cast<int32_t>(names.size()));
    if (inserted) {
      names.push_back(gpu);
      const std::string l = absl::AsciiStrToLower(gpu);
      auto [lit, lnew] =
          lower_ids.emplace(l, static_cast<int32_t>(lower.size()));
      if (lnew) lower.push_back(l);
      keys.push_back(lit->second);
    }
    return it->second;
  }
};

// Identifies a copy recorded on both a stream lane and the memcpy lane.
struct LaneKey {
  int32_t gpu;  // GpuTable::lower
  int32_t node;
  int64_t start;
  int64_t duration;
  bool operator==(const LaneKey& o) const {
    return gpu == o.gpu && node == o.node && start == o.start &&
           duration == o.duration;
  }
  template <typename H>
  friend H AbslHashValue(H h, const LaneKey& k) {
    return H::combine(std::move(h), k.gpu, k.node, k.start, k.duration);
  }
};

// What the importer reads of one event (first occurrences of each key, as
// the DOM parser's at_key() finds them).
struct EventFields : TraceEventFields {
  JsonScalar args_name, args_op;
  // args.input0, args.input1, ...: (index, name) of every string field.
  std::vector<std::pair<int, absl::string_view>> inputs;
  bool has_snapshot = false;  // args.snapshot present, of any type
  JsonScalar tensor_description;

  void Clear() {
    ClearEventFields();
    args_name = args_op = tensor_description = JsonScalar();
    has_snapshot = false;
    inputs.clear();
  }
};

// One member of an event's args.
bool ReadArg(JsonReader* reader, absl::string_view key,
             JsonReader::Value& value, EventFields* f) {
  if (key == "name") return reader->ReadFirst(value, &f->args_name);
  if (key == "op") return reader->ReadFirst(value, &f->args_op);
  if (key == "snapshot") {
    if (f->has_snapshot) return reader->Skip(value);
    f->has_snapshot = true;
    if (!JsonReader::IsObject(value)) return reader->Skip(value);
    return reader->ForEachField(
        value, [&](absl::string_view k, JsonReader::Value& v) {
          if (k == "tensor_description") {
            return reader->ReadFirst(v, &f->tensor_description);
          }
          return reader->Skip(v);
        });
  }
  int index;
  if (absl::StartsWith(key, "input") &&
      absl::SimpleAtoi(key.substr(5), &index) && index >= 0) {
    JsonScalar input;
    if (!reader->Read(value, &input)) return false;
    if (input.type == JsonScalar::Type::kString) {
      f->inputs.emplace_back(index, input.str);
    }
    return true;
  }
  return reader->Skip(value);
}

bool ReadEvent(JsonReader* reader, JsonReader::Value& event, EventFields* f) {
  f->Clear();
  return ReadTraceEvent(reader, event, f,
                        [&](absl::string_view key, JsonReader::Value& value) {
                          return ReadArg(reader, key, value, f);
                        });
}

// The inputs of an op event: args.input0, args.input1, ... in index order.
std::vector<std::string> Inputs(const EventFields& f) {
  std::vector<std::pair<int, absl::string_view>> found = f.inputs;
  std::sort(found.begin(), found.end());
  std::vector<std::string> inputs;
  inputs.reserve(found.size());
  for (const auto& [index, name] : found) inputs.emplace_back(name);
  return inputs;
}

// Reads the allocation of an output tensor from the text-format
// TensorDescription of a show_memory timeline (quotes removed by TF).
bool ParseAllocation(absl::string_view text,
                     tfcore::AllocationDescription* alloc) {
  static const RE2* const kRequested = new RE2("requested_bytes: (\\d+)");
  static const RE2* const kAllocated = new RE2("allocated_bytes: (\\d+)");
  static const RE2* const kAllocator = new RE2("allocator_name: ([^\\s}]+)");
  static const RE2* const kPtr = new RE2("ptr: (\\d+)");
  const size_t pos = text.find("allocation_description");
  if (pos == absl::string_view::npos) return false;
  const re2::StringPiece body(text.data() + pos, text.size() - pos);
  int64_t requested = 0, allocated = 0;
  uint64_t ptr = 0;
  std::string allocator;
  const bool has_requested = RE2::PartialMatch(body, *kRequested, &requested);
  const bool has_allocated = RE2::PartialMatch(body, *kAllocated, &allocated);
  if (!has_requested && !has_allocated) return false;
  alloc->set_requested_bytes(requested);
  alloc->set_allocated_bytes(allocated);
  if (RE2::PartialMatch(body, *kAllocator, &allocator)) {
    alloc->set_allocator_name(allocator);
  }
  if (RE2::PartialMatch(body, *kPtr, &ptr)) alloc->set_ptr(ptr);
  return true;
}

// One timeline's import (one step): executions go to the builder as events
// are read; GPU lanes, notes and output tensors follow.
class TfTimelineImport {
 public:
  TfTimelineImport(const JsonTraceScan& scan, const std::string& file,
                   int64_t step, TraceBuilder* builder)
      : processes_(scan.processes),
        complete_events_(static_cast<size_t>(scan.complete_events)),
        file_(file),
        step_(step),
        builder_(builder) {}

  absl::Status Run(JsonReader* reader) {
    // Most complete events are an execution, and one on a canonical device
    // also a host span.
    builder_->ExpectExecs(complete_events_);
    builder_->activity()->ReserveHostSpans(complete_events_);
    if (!reader->ForEachEvent(
            [&](JsonReader::Value& ev) {
              if (!ReadEvent(reader, ev, &fields_)) return false;
              OnEvent(fields_);
              return true;
            },
            /*last_pass=*/true)) {
      return JsonReadError(file_);
    }
    builder_->ExpectExecs(0);  // (if no event made the step)
    // The rest needs no JSON.
    reader->Close();
    SumStreamLanes();
    NoteDevices();
    AddOutputs();
    return absl::OkStatus();
  }

 private:
  struct Snapshot {
    std::string tensor;
    std::string description;
  };

  void OnEvent(const EventFields& ev);
  // Events of other phases than X: counted, snapshots kept. True if `ph`
  // was one of them.
  bool OnOtherPhase(absl::string_view ph, const EventFields& ev);
  // The device of an op event ("<device> Compute" process), or nullopt.
  std::optional<std::string> DeviceOf(const EventFields& ev);
  // The node of an op event (args.name/args.op, else its name), or nullopt.
  std::optional<int32_t> NodeOf(const EventFields& ev);
  // Files the execution under the device's kind (canonical, stream:all,
  // stream/memcpy lane, other).
  void ClassifyDevice(const std::string& device, DeviceKind kind, int32_t node,
                      int64_t start, int64_t duration, const EventFields& ev);
  // Accelerator time of GPUs without a stream:all lane: the stream lanes,
  // plus memcpy-lane events that no stream lane has (TF records most copies
  // on both).
  void SumStreamLanes();
  void NoteDevices();
  // Output tensors (show_memory timelines): "node" or "node:slot".
  void AddOutputs();

  const absl::flat_hash_map<std::string, std::string>& processes_;
  const size_t complete_events_;
  const std::string& file_;
  const int64_t step_;
  TraceBuilder* builder_;
  EventFields fields_;
  std::vector<LaneEvent> lanes_;
  GpuTable lane_gpus_;
  absl::flat_hash_set<std::string> gpus_with_stream_all_;
  absl::flat_hash_set<std::string> gpu_devices_;  // canonical GPU devices
  absl::flat_hash_map<std::string, int64_t> no_time_devices_;
  std::vector<Snapshot> snapshots_;
};

bool TfTimelineImport::OnOtherPhase(absl::string_view ph,
                                    const EventFields& ev) {
  if (ph == "O") {
    std::optional<absl::string_view> name = ev.name.String();
    std::optional<absl::string_view> desc = ev.tensor_description.String();
    if (name.has_value() && desc.has_value()) {
      snapshots_.push_back({std::string(*name), std::string(*desc)});
    } else {
      builder_->Count(file_,
                      "object snapshots (ph O) without a tensor "
                      "description, not mapped");
    }
  } else if (ph == "N" || ph == "D") {
    builder_->Count(file_,
                    "tensor lifetime events (ph N/D) not mapped "
                    "(output sizes come from their O snapshots)");
  } else if (ph == "C") {
    builder_->Count(file_,
                    "allocator counter samples (ph C) not mapped "
                    "(allocator-wide totals, not per node)");
  } else if (IsIgnoredPhase(ph)) {
    // Nothing to do.
  } else if (ph != "X") {
    builder_->Count(file_,
                    absl::StrCat("events of phase \"", ph, "\" not mapped"));
  } else {
    return false;
  }
  return true;
}

std::optional<std::string> TfTimelineImport::DeviceOf(const EventFields& ev) {
  std::optional<std::string> pid = ev.pid.IdText();
  auto proc = pid.has_value() ? processes_.find(*pid) : processes_.end();
  if (proc == processes_.end()) {
    builder_->Count(file_,
                    "op events in a process without a process_name, "
                    "skipped");
    return std::nullopt;
  }
  std::string device = proc->second;
  if (!absl::EndsWith(device, " Compute")) {
    builder_->Count(file_, absl::StrCat("op events in process \"", device,
                                        "\" (not \"<device> Compute\"), "
                                        "skipped"));
    return std::nullopt;
  }
  device.resize(device.size() - 8);
  return device;
}

std::optional<int32_t> TfTimelineImport::NodeOf(const EventFields& ev) {
  absl::string_view node_name, op;
  std::optional<absl::string_view> ev_name = ev.name.String();
  std::optional<absl::string_view> args_name = ev.args_name.String();
  std::optional<absl::string_view> args_op = ev.args_op.String();
  bool has_node_name = args_name.has_value();
  if (has_node_name) node_name = *args_name;
  if (args_op.has_value()) op = *args_op;
  if (!has_node_name && ev_name.has_value()) {
    node_name = *ev_name;
    has_node_name = true;
  }
  if (!args_op.has_value() && ev_name.has_value()) op = *ev_name;
  if (!has_node_name) {
    builder_->Count(file_, "op events without args.name or name, skipped");
    return std::nullopt;
  }
  // tfprof drops the runtime's bookkeeping entries the same way.
  if (node_name == "_SOURCE" || node_name == "RecvTensor") {
    builder_->Count(file_, absl::StrCat("\"", node_name,
                                        "\" events dropped (runtime "
                                        "bookkeeping; tfprof drops them too)"));
    return std::nullopt;
  }
  return builder_->Node(node_name, op);
}

void TfTimelineImport::OnEvent(const EventFields& ev) {
  std::optional<absl::string_view> ph = ev.ph.String();
  if (!ph.has_value()) {
    builder_->Count(file_, "events without a \"ph\" string, skipped");
    return;
  }
  if (OnOtherPhase(*ph, ev)) return;
  std::optional<std::string> device = DeviceOf(ev);
  if (!device.has_value()) return;
  int64_t start = 0, duration = 0;
  if (!ev.ts.Micros(&start) || !ev.dur.Micros(&duration) || duration < 0) {
    builder_->Count(file_, "op events without a valid ts/dur, skipped");
    return;
  }
  std::optional<int32_t> node = NodeOf(ev);
  if (!node.has_value()) return;
  const DeviceKind kind = builder_->KindOf(*device);
  const bool canonical = kind == DeviceKind::kPlacement;
  if (canonical) {
    // tfprof keeps one canonical device per node (the first it sees) and
    // drops the node's executions on any other; do it here, visibly.
    const std::string& first = builder_->ClaimCanonicalDevice(*node, *device);
    if (!absl::EqualsIgnoreCase(first, *device)) {
      builder_->Count(
          file_,
          absl::StrCat("executions of \"", builder_->NodeName(*node), "\" on ",
                       *device, " dropped: the node ran on ", first,
                       " first (tfprof keeps one canonical device per node)"));
      return;
    }
  }
  builder_->AddExecMicros(step_, *device, *node, start, duration);
  ClassifyDevice(*device, kind, *node, start, duration, ev);
  if (canonical) {
    // The op as the timeline drew it, on its device's "Compute" row.
    Activity* activity = builder_->activity();
    const absl::string_view name = ev.name.String().value_or("");
    activity->AddHostSpan(
        HostSpan{SatMul(start, 1000), SatMul(duration, 1000), step_,
                 activity->Intern(std::string_view(name.data(), name.size())),
                 activity->Intern(builder_->NodeName(*node)),
                 activity->Intern(absl::StrCat(absl::AsciiStrToLower(*device),
                                               " Compute"))});
  }
}

void TfTimelineImport::ClassifyDevice(const std::string& device,
                                      DeviceKind kind, int32_t node,
                                      int64_t start, int64_t duration,
                                      const EventFields& ev) {
  switch (kind) {
    case DeviceKind::kPlacement:
      if (ev.has_args) builder_->SetInputs(node, Inputs(ev));
      if (IsPlacedOnAccelerator(device)) gpu_devices_.insert(device);
      break;
    case DeviceKind::kStreamAll:
      gpus_with_stream_all_.insert(
          absl::AsciiStrToLower(std::string(LaneOwner(device))));
      break;
    case DeviceKind::kStream:
    case DeviceKind::kMemcpy:
      lanes_.push_back({lane_gpus_.Id(std::string(LaneOwner(device))), node,
                        start, duration, kind == DeviceKind::kMemcpy});
      break;
    case DeviceKind::kOther:
      ++no_time_devices_[device];
  }
}

void TfTimelineImport::SumStreamLanes() {
  std::vector<bool> summed(lane_gpus_.lower.size());
  for (size_t k = 0; k < summed.size(); ++k) {
    summed[k] = !gpus_with_stream_all_.contains(lane_gpus_.lower[k]);
  }
  absl::flat_hash_map<LaneKey, int64_t> on_streams;
  for (const LaneEvent& e : lanes_) {
    const int32_t key = lane_gpus_.keys[e.gpu];
    if (!e.memcpy && summed[key]) {
      ++on_streams[LaneKey{key, e.node, e.start, e.duration}];
    }
  }
  std::map<std::string, std::pair<int64_t, int64_t>> synthesized;  // sorted
  for (const LaneEvent& e : lanes_) {
    const int32_t key = lane_gpus_.keys[e.gpu];
    if (!summed[key]) continue;
    if (e.memcpy) {
      auto it = on_streams.find(LaneKey{key, e.node, e.start, e.duration});
      if (it != on_streams.end() && it->second > 0) {
        --it->second;  // the same copy, already counted from its stream
        continue;
      }
    }
    const std::string& gpu = lane_gpus_.names[e.gpu];
    builder_->AddExecMicros(step_, gpu + "/stream:all", e.node, e.start,
                            e.duration);
    auto& [n, micros] = synthesized[gpu];
    ++n;
    micros = SatAdd(micros, e.duration);
  }
  for (const auto& [gpu, sums] : synthesized) {
    builder_->Note(
        file_, absl::StrCat("no ", gpu,
                            "/stream:all lane: its accelerator "
                            "time is summed from its stream lanes (",
                            sums.first, " events, ", sums.second,
                            "us; copies on both a stream and the memcpy lane "
                            "counted once)"));
  }
}

void TfTimelineImport::NoteDevices() {
  if (!gpu_devices_.empty() && lanes_.empty() &&
      gpus_with_stream_all_.empty()) {
    builder_->Note(file_,
                   "ops ran on a GPU but the timeline has no stream "
                   "lanes: it holds no accelerator time");
  }
  const std::map<std::string, int64_t> others(no_time_devices_.begin(),
                                              no_time_devices_.end());
  for (const auto& [device, n] : others) {
    builder_->Note(file_, absl::StrCat(n, " events on device \"", device,
                                       "\": listed as the nodes' devices, but "
                                       "tfprof counts no time there (neither "
                                       "a canonical nor a stream:all device)"));
  }
}

void TfTimelineImport::AddOutputs() {
  for (const Snapshot& s : snapshots_) {
    std::string name = s.tensor;
    int32_t slot = 0;
    const size_t colon = name.rfind(':');
    if (colon != std::string::npos &&
        absl::SimpleAtoi(name.substr(colon + 1), &slot) && slot >= 0) {
      name.resize(colon);
    } else {
      slot = 0;
    }
    std::optional<int32_t> node = builder_->FindNode(name);
    const TraceBuilder::ExecRef exec =
        node.has_value() ? builder_->FirstCanonicalExec(step_, *node)
                         : TraceBuilder::ExecRef();
    tfcore::AllocationDescription alloc;
    if (!exec || !ParseAllocation(s.description, &alloc)) {
      builder_->Count(file_,
                      "tensor snapshots without a node execution or an "
                      "allocation description, not mapped");
      continue;
    }
    builder_->Details(exec)->outputs.push_back(OutputRecord{
        slot, std::max(alloc.allocated_bytes(), alloc.requested_bytes()),
        alloc.ptr()});
  }
}

}  // namespace

absl::Status ImportTfTimeline(JsonReader* reader, const JsonTraceScan& scan,
                              const std::string& file, int64_t file_index,
                              TraceBuilder* builder) {
  return TfTimelineImport(scan, file, file_index, builder).Run(reader);
}

}  // namespace trace_internal
}  // namespace tfprof
