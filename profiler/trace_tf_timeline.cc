// TensorFlow timelines (tensorflow.python.client.timeline, ProfilerHook):
// Chrome Trace Format JSON in which every process is "<device> Compute" or
// "<device> Tensors" and every op is an "X" event with args.name (the node)
// and args.op (its type). One file is one step.
#include <algorithm>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "profiler/trace_import_internal.h"
#include "re2/re2.h"

namespace tfprof {
namespace trace_internal {
namespace {

// A GPU stream or memcpy lane event, kept to sum accelerator time when the
// timeline has no ".../stream:all" lane for that GPU.
struct LaneEvent {
  std::string gpu;  // the device before "/stream:" or "/memcpy"
  int32_t node = 0;
  int64_t start = 0;
  int64_t duration = 0;
  bool memcpy = false;
};

// Identifies a copy recorded on both a stream lane and the memcpy lane.
struct LaneKey {
  std::string gpu;
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

// "<gpu>/stream:N" or "<gpu>/memcpy" -> <gpu>; else false.
bool SplitGpuLane(const std::string& device, std::string* gpu, bool* memcpy) {
  const std::string lower = absl::AsciiStrToLower(device);
  size_t pos = lower.rfind("/stream:");
  if (pos != std::string::npos &&
      lower.find("stream:all") == std::string::npos) {
    *gpu = device.substr(0, pos);
    *memcpy = false;
    return true;
  }
  if (absl::EndsWith(lower, "/memcpy")) {
    *gpu = device.substr(0, device.size() - 7);
    *memcpy = true;
    return true;
  }
  return false;
}

// The inputs of an op event: args.input0, args.input1, ... in index order.
std::vector<std::string> Inputs(const JsonElement& args) {
  std::vector<std::pair<int, std::string>> found;
  simdjson::dom::object obj;
  if (args.get_object().get(obj) != simdjson::SUCCESS) return {};
  for (auto field : obj) {
    const absl::string_view key(field.key.data(), field.key.size());
    if (!absl::StartsWith(key, "input")) continue;
    int index;
    if (!absl::SimpleAtoi(key.substr(5), &index) || index < 0) continue;
    std::string_view value;
    if (field.value.get_string().get(value) != simdjson::SUCCESS) continue;
    found.emplace_back(index, std::string(value));
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> inputs;
  inputs.reserve(found.size());
  for (auto& [index, name] : found) inputs.push_back(std::move(name));
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

}  // namespace

absl::Status ImportTfTimeline(const JsonElement& root, const std::string& file,
                              int64_t file_index, TraceBuilder* builder) {
  std::optional<simdjson::dom::array> events = TraceEvents(root);
  if (!events.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat(file, ": no traceEvents array"));
  }
  const int64_t step = file_index;

  // Processes: pid -> name.
  absl::flat_hash_map<std::string, std::string> processes;
  for (JsonElement ev : *events) {
    if (JsonString(ev, "ph") != "M" || JsonString(ev, "name") != "process_name")
      continue;
    std::optional<std::string> pid = JsonIdText(ev, "pid");
    std::optional<JsonElement> args = JsonField(ev, "args");
    if (!pid.has_value() || !args.has_value()) continue;
    std::optional<absl::string_view> name = JsonString(*args, "name");
    if (name.has_value()) processes[*pid] = std::string(*name);
  }

  std::vector<LaneEvent> lanes;
  absl::flat_hash_set<std::string> gpus_with_stream_all;
  absl::flat_hash_set<std::string> gpu_devices;  // canonical GPU devices
  absl::flat_hash_map<std::string, int64_t> no_time_devices;
  struct Snapshot {
    std::string tensor;
    std::string description;
  };
  std::vector<Snapshot> snapshots;

  for (JsonElement ev : *events) {
    std::optional<absl::string_view> ph = JsonString(ev, "ph");
    if (!ph.has_value()) {
      builder->Count(file, "events without a \"ph\" string, skipped");
      continue;
    }
    if (*ph == "O") {
      std::optional<absl::string_view> name = JsonString(ev, "name");
      std::optional<JsonElement> args = JsonField(ev, "args");
      std::optional<JsonElement> snap =
          args.has_value() ? JsonField(*args, "snapshot") : std::nullopt;
      std::optional<absl::string_view> desc =
          snap.has_value() ? JsonString(*snap, "tensor_description")
                           : std::nullopt;
      if (name.has_value() && desc.has_value()) {
        snapshots.push_back({std::string(*name), std::string(*desc)});
      } else {
        builder->Count(file,
                       "object snapshots (ph O) without a tensor "
                       "description, not mapped");
      }
      continue;
    }
    if (*ph == "N" || *ph == "D") {
      builder->Count(file,
                     "tensor lifetime events (ph N/D) not mapped "
                     "(output sizes come from their O snapshots)");
      continue;
    }
    if (*ph == "C") {
      builder->Count(file,
                     "allocator counter samples (ph C) not mapped "
                     "(allocator-wide totals, not per node)");
      continue;
    }
    if (IsIgnoredPhase(*ph)) continue;
    if (*ph != "X") {
      builder->Count(file,
                     absl::StrCat("events of phase \"", *ph, "\" not mapped"));
      continue;
    }

    std::optional<std::string> pid = JsonIdText(ev, "pid");
    auto proc = pid.has_value() ? processes.find(*pid) : processes.end();
    if (proc == processes.end()) {
      builder->Count(file,
                     "op events in a process without a process_name, "
                     "skipped");
      continue;
    }
    std::string device = proc->second;
    if (absl::EndsWith(device, " Compute")) {
      device.resize(device.size() - 8);
    } else {
      builder->Count(file, absl::StrCat("op events in process \"", device,
                                        "\" (not \"<device> Compute\"), "
                                        "skipped"));
      continue;
    }

    int64_t start = 0, duration = 0;
    if (!JsonMicros(ev, "ts", &start) || !JsonMicros(ev, "dur", &duration) ||
        duration < 0) {
      builder->Count(file, "op events without a valid ts/dur, skipped");
      continue;
    }

    std::optional<JsonElement> args = JsonField(ev, "args");
    absl::string_view ev_name, node_name, op;
    const bool has_ev_name = JsonStringTo(ev, "name", &ev_name);
    bool has_node_name = false, has_op = false;
    if (args.has_value()) {
      has_node_name = JsonStringTo(*args, "name", &node_name);
      has_op = JsonStringTo(*args, "op", &op);
    }
    if (!has_node_name && has_ev_name) {
      node_name = ev_name;
      has_node_name = true;
    }
    if (!has_op && has_ev_name) op = ev_name;
    if (!has_node_name) {
      builder->Count(file, "op events without args.name or name, skipped");
      continue;
    }
    // tfprof drops the runtime's bookkeeping entries the same way.
    if (node_name == "_SOURCE" || node_name == "RecvTensor") {
      builder->Count(file, absl::StrCat("\"", node_name,
                                        "\" events dropped (runtime "
                                        "bookkeeping; tfprof drops them too)"));
      continue;
    }

    const int32_t node = builder->Node(node_name, op);
    const bool canonical = IsCanonicalDevice(device);
    if (canonical) {
      // tfprof keeps one canonical device per node (the first it sees) and
      // drops the node's executions on any other; do it here, visibly.
      const std::string& first = builder->ClaimCanonicalDevice(node, device);
      if (!absl::EqualsIgnoreCase(first, device)) {
        builder->Count(
            file,
            absl::StrCat("executions of \"", builder->NodeName(node), "\" on ",
                         device, " dropped: the node ran on ", first,
                         " first (tfprof keeps one canonical device per "
                         "node)"));
        continue;
      }
    }
    builder->AddExec(step, device, node, start, duration);

    std::string gpu;
    bool memcpy = false;
    if (canonical) {
      if (args.has_value()) builder->SetInputs(node, Inputs(*args));
      if (absl::StrContains(absl::AsciiStrToLower(device), "gpu")) {
        gpu_devices.insert(device);
      }
    } else if (IsStreamAllDevice(device)) {
      const std::string lower = absl::AsciiStrToLower(device);
      gpus_with_stream_all.insert(
          absl::AsciiStrToLower(device.substr(0, lower.find("/stream:all"))));
    } else if (SplitGpuLane(device, &gpu, &memcpy)) {
      lanes.push_back({gpu, node, start, duration, memcpy});
    } else {
      ++no_time_devices[device];
    }
  }

  // Accelerator time of GPUs without a stream:all lane: the stream lanes,
  // plus memcpy-lane events that no stream lane has (TF records most copies
  // on both).
  absl::flat_hash_map<LaneKey, int64_t> on_streams;
  for (const LaneEvent& e : lanes) {
    if (!e.memcpy) {
      ++on_streams[LaneKey{absl::AsciiStrToLower(e.gpu), e.node, e.start,
                           e.duration}];
    }
  }
  absl::flat_hash_map<std::string, std::pair<int64_t, int64_t>> synthesized;
  for (const LaneEvent& e : lanes) {
    const std::string gpu_key = absl::AsciiStrToLower(e.gpu);
    if (gpus_with_stream_all.contains(gpu_key)) continue;
    if (e.memcpy) {
      auto it = on_streams.find(LaneKey{gpu_key, e.node, e.start, e.duration});
      if (it != on_streams.end() && it->second > 0) {
        --it->second;  // the same copy, already counted from its stream
        continue;
      }
    }
    builder->AddExec(step, e.gpu + "/stream:all", e.node, e.start, e.duration);
    auto& [n, micros] = synthesized[e.gpu];
    ++n;
    micros = SatAdd(micros, e.duration);
  }
  std::vector<std::string> gpus;
  for (const auto& [gpu, unused] : synthesized) gpus.push_back(gpu);
  std::sort(gpus.begin(), gpus.end());
  for (const std::string& gpu : gpus) {
    builder->Note(
        file, absl::StrCat("no ", gpu,
                           "/stream:all lane: its accelerator "
                           "time is summed from its stream lanes (",
                           synthesized[gpu].first, " events, ",
                           synthesized[gpu].second,
                           "us; copies on both a stream and the memcpy lane "
                           "counted once)"));
  }
  if (!gpu_devices.empty() && lanes.empty() && gpus_with_stream_all.empty()) {
    builder->Note(file,
                  "ops ran on a GPU but the timeline has no stream "
                  "lanes: it holds no accelerator time");
  }
  std::vector<std::string> others;
  for (const auto& [device, n] : no_time_devices) others.push_back(device);
  std::sort(others.begin(), others.end());
  for (const std::string& device : others) {
    builder->Note(file, absl::StrCat(no_time_devices[device],
                                     " events on device \"", device,
                                     "\": listed as the nodes' devices, but "
                                     "tfprof counts no time there (neither a "
                                     "canonical nor a stream:all device)"));
  }

  // Output tensors (show_memory timelines): "node" or "node:slot".
  for (const Snapshot& s : snapshots) {
    std::string name = s.tensor;
    int32_t slot = 0;
    const size_t colon = name.rfind(':');
    if (colon != std::string::npos &&
        absl::SimpleAtoi(name.substr(colon + 1), &slot) && slot >= 0) {
      name.resize(colon);
    } else {
      slot = 0;
    }
    std::optional<int32_t> node = builder->FindNode(name);
    tfcore::NodeExecStats* stat =
        node.has_value() ? builder->FirstCanonicalExec(step, *node) : nullptr;
    tfcore::AllocationDescription alloc;
    if (stat == nullptr || !ParseAllocation(s.description, &alloc)) {
      builder->Count(file,
                     "tensor snapshots without a node execution or an "
                     "allocation description, not mapped");
      continue;
    }
    tfcore::NodeOutput* out = stat->add_output();
    out->set_slot(slot);
    *out->mutable_tensor_description()->mutable_allocation_description() =
        alloc;
  }
  return absl::OkStatus();
}

}  // namespace trace_internal
}  // namespace tfprof
