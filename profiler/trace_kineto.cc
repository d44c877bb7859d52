// PyTorch profiler (Kineto) traces: Chrome Trace Format JSON with CPU-side
// events (cpu_op / user_annotation / cuda_runtime ..., "Operator" and
// "Runtime" in older traces) that nest on their thread, GPU activity
// (kernel, gpu_memcpy, gpu_memset) on stream lanes linked to the runtime
// call that launched it by a correlation id, ProfilerStep#N ranges as steps,
// python_function events or "Call stack" args for call stacks, and
// "[memory]" instant events.
#include <algorithm>
#include <cstdint>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "profiler/trace_import_internal.h"

namespace tfprof {
namespace trace_internal {
namespace {

enum class Kind : uint8_t {
  kPython = 0,  // python_function: a call-stack frame
  kCpu = 1,     // a node execution on a CPU thread
  kMemory = 2,  // a "[memory]" instant event
  kGpu = 3,     // kernel / memcpy / memset on a GPU stream
};

struct Event {
  Kind kind = Kind::kCpu;
  bool runtime = false;  // cuda_runtime / cuda_driver style launch call
  int32_t thread = -1;   // index into the thread table (CPU side)
  int64_t start = 0;     // microseconds
  int64_t duration = 0;  // microseconds
  JsonElement json;      // the event itself
  absl::string_view name;
  absl::string_view category;
  // Filled by the nesting pass (kCpu).
  int32_t parent = -1;    // enclosing kCpu event on the same thread
  int64_t exclusive = 0;  // duration minus that of nested kCpu events
  int32_t node = -1;
  int64_t step = 0;
  std::vector<int32_t> memory;  // kMemory events that happened inside
  int32_t depth = 0;            // path components of the node name
  int32_t anchor = -1;          // the event whose name the path extends
};

// Node names nest at most this deep; deeper events are named as if they
// were children of their ancestor at this depth (keeps names bounded).
constexpr int32_t kMaxPathDepth = 64;

bool IsGpuCategory(absl::string_view cat) {
  return cat == "kernel" || cat == "Kernel" || cat == "gpu_memcpy" ||
         cat == "Memcpy" || cat == "gpu_memset" || cat == "Memset";
}

bool IsRuntimeCategory(absl::string_view cat) {
  return cat == "cuda_runtime" || cat == "Runtime" || cat == "cuda_driver" ||
         cat == "Driver" || cat == "hip_runtime" || cat == "hip_driver" ||
         cat == "xpu_runtime" || cat == "privateuse1_runtime" ||
         cat == "mtia_runtime";
}

// GPU-side events that are not work a node launched.
bool IsGpuSideNonWork(absl::string_view cat) {
  return cat == "gpu_user_annotation" || cat == "cuda_sync" ||
         cat == "cuda_profiler_range" || cat == "gpu_instant_event";
}

// "ProfilerStep#12" -> 12.
std::optional<int64_t> ProfilerStep(absl::string_view name) {
  if (!absl::ConsumePrefix(&name, "ProfilerStep#")) return std::nullopt;
  int64_t step;
  // Negative steps mean "average" to tfprof: not a step marker.
  if (!absl::SimpleAtoi(name, &step) || step < 0) return std::nullopt;
  return step;
}

// One path component: the event name with ':' and '/' replaced, so that it
// is one scope level and tfprof does not cut it ("aten::mm" -> "aten.mm").
std::string Component(absl::string_view name) {
  if (ProfilerStep(name).has_value()) return "ProfilerStep";
  std::string out;
  out.reserve(name.size());
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (c == ':') {
      if (i + 1 < name.size() && name[i + 1] == ':') ++i;
      out += '.';
    } else if (c == '/') {
      out += '_';
    } else {
      out += c;
    }
  }
  if (out.empty()) out = "_unnamed";
  return out;
}

std::string OpType(absl::string_view name) {
  if (ProfilerStep(name).has_value()) return "ProfilerStep";
  if (name.empty()) return "_unnamed";
  return std::string(name);
}

// "path/file.py(123): function" -> frame; anything else is a function name.
Frame ParseFrame(absl::string_view text) {
  Frame f;
  const size_t close = text.find("): ");
  const size_t open =
      close == absl::string_view::npos ? close : text.rfind('(', close);
  int32_t line = 0;
  if (open != absl::string_view::npos &&
      absl::SimpleAtoi(text.substr(open + 1, close - open - 1), &line)) {
    f.file = std::string(text.substr(0, open));
    f.lineno = line;
    f.function = std::string(text.substr(close + 3));
  } else {
    f.function = std::string(text);
  }
  return f;
}

// "Call stack" args: frames joined by ';', innermost first.
std::vector<Frame> ParseCallStack(absl::string_view text) {
  std::vector<Frame> frames;
  for (absl::string_view part : absl::StrSplit(text, ';', absl::SkipEmpty())) {
    frames.push_back(ParseFrame(part));
  }
  std::reverse(frames.begin(), frames.end());
  if (frames.size() > kMaxFrames) {
    frames.erase(frames.begin(), frames.end() - kMaxFrames);
  }
  return frames;
}

std::string AllocatorName(int64_t device_type, int64_t device_id) {
  // c10::DeviceType: 0 = CPU, 1 = CUDA.
  if (device_type == 0) return "cpu";
  if (device_type == 1) return absl::StrCat("GPU_", device_id);
  return absl::StrCat("device_type_", device_type, "_", device_id);
}

}  // namespace

absl::Status ImportKineto(const JsonElement& root, const std::string& file,
                          int64_t file_index, TraceBuilder* builder) {
  std::optional<simdjson::dom::array> array = TraceEvents(root);
  if (!array.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat(file, ": no traceEvents array"));
  }

  // --- Collect the events that matter.
  std::vector<Event> events;
  events.reserve(array->size());
  absl::flat_hash_map<std::string, int32_t> threads;
  for (JsonElement ev : *array) {
    std::optional<absl::string_view> ph = JsonString(ev, "ph");
    if (!ph.has_value()) {
      builder->Count(file, "events without a \"ph\" string, skipped");
      continue;
    }
    std::optional<absl::string_view> name = JsonString(ev, "name");
    std::optional<absl::string_view> cat = JsonString(ev, "cat");
    Event e;
    e.json = ev;
    e.name = name.value_or("");
    e.category = cat.value_or("");
    if (*ph == "i" || *ph == "I") {
      if (e.name != "[memory]") {
        builder->Count(file,
                       "instant events (other than [memory]) not "
                       "mapped");
        continue;
      }
      e.kind = Kind::kMemory;
    } else if (*ph == "X") {
      if (e.category == "Trace") continue;  // the profiling session's span
      if (e.category == "python_function") {
        e.kind = Kind::kPython;
      } else if (IsGpuCategory(e.category)) {
        e.kind = Kind::kGpu;
      } else if (IsGpuSideNonWork(e.category)) {
        builder->Count(file, absl::StrCat("\"", e.category,
                                          "\" events not mapped (GPU-side "
                                          "ranges, not work a node "
                                          "launched)"));
        continue;
      } else {
        e.kind = Kind::kCpu;
        e.runtime = IsRuntimeCategory(e.category);
      }
    } else if (IsIgnoredPhase(*ph)) {
      continue;
    } else {
      builder->Count(file,
                     absl::StrCat("events of phase \"", *ph, "\" not mapped"));
      continue;
    }

    if (!JsonMicros(ev, "ts", &e.start) ||
        (e.kind != Kind::kMemory &&
         (!JsonMicros(ev, "dur", &e.duration) || e.duration < 0))) {
      builder->Count(file, "events without a valid ts/dur, skipped");
      continue;
    }
    if (e.kind != Kind::kGpu) {
      const std::string key =
          absl::StrCat(JsonIdText(ev, "pid").value_or(""), "/",
                       JsonIdText(ev, "tid").value_or(""));
      auto [it, inserted] =
          threads.emplace(key, static_cast<int32_t>(threads.size()));
      e.thread = it->second;
    }
    events.push_back(std::move(e));
  }
  const int32_t n = static_cast<int32_t>(events.size());

  // --- Steps: ProfilerStep#N ranges delimit steps by their start times.
  std::vector<std::pair<int64_t, int64_t>> step_starts;  // (start, step)
  for (const Event& e : events) {
    if (e.kind != Kind::kCpu) continue;
    std::optional<int64_t> step = ProfilerStep(e.name);
    if (step.has_value()) step_starts.emplace_back(e.start, *step);
  }
  std::sort(step_starts.begin(), step_starts.end());
  int64_t before_first_step = 0;
  auto step_at = [&](int64_t t) -> int64_t {
    if (step_starts.empty()) return file_index;
    auto it = std::upper_bound(
        step_starts.begin(), step_starts.end(),
        std::make_pair(t, std::numeric_limits<int64_t>::max()));
    if (it == step_starts.begin()) {
      ++before_first_step;
      return step_starts.front().second;
    }
    return std::prev(it)->second;
  };

  // --- Nesting on each thread: sort once by (thread, start, longer first),
  // then sweep with a stack of open CPU events and one of Python frames.
  std::vector<int32_t> order;
  order.reserve(n);
  for (int32_t i = 0; i < n; ++i) {
    if (events[i].kind != Kind::kGpu) order.push_back(i);
  }
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    const Event& x = events[a];
    const Event& y = events[b];
    if (x.thread != y.thread) return x.thread < y.thread;
    if (x.start != y.start) return x.start < y.start;
    if (x.duration != y.duration) return x.duration > y.duration;
    if (x.kind != y.kind) return x.kind < y.kind;
    return a < b;
  });
  std::vector<int32_t> cpu_stack, py_stack;
  int32_t current_thread = -1;
  int64_t partial = 0, orphan_memory = 0, call_stacks = 0, too_deep = 0;
  auto end_of = [&](int32_t i) {
    return SatAdd(events[i].start, events[i].duration);
  };
  for (int32_t i : order) {
    Event& e = events[i];
    if (e.thread != current_thread) {
      cpu_stack.clear();
      py_stack.clear();
      current_thread = e.thread;
    }
    while (!cpu_stack.empty() && end_of(cpu_stack.back()) <= e.start) {
      cpu_stack.pop_back();
    }
    while (!py_stack.empty() && end_of(py_stack.back()) <= e.start) {
      py_stack.pop_back();
    }
    switch (e.kind) {
      case Kind::kPython:
        py_stack.push_back(i);
        break;
      case Kind::kMemory:
        if (cpu_stack.empty()) {
          ++orphan_memory;
        } else {
          events[cpu_stack.back()].memory.push_back(i);
        }
        break;
      case Kind::kCpu: {
        e.exclusive = e.duration;
        std::string path;
        if (!cpu_stack.empty()) {
          Event& parent = events[cpu_stack.back()];
          e.parent = cpu_stack.back();
          const int64_t parent_end = end_of(cpu_stack.back());
          const int64_t inside =
              std::min(end_of(i), parent_end) - e.start;  // >= 0
          if (end_of(i) > parent_end) ++partial;
          parent.exclusive -= inside;
          if (parent.depth < kMaxPathDepth) {
            e.anchor = e.parent;
            e.depth = parent.depth + 1;
          } else {
            e.anchor = parent.anchor;
            e.depth = parent.depth;
            ++too_deep;
          }
        } else {
          e.depth = 1;
        }
        if (e.anchor >= 0) {
          path = absl::StrCat(builder->NodeName(events[e.anchor].node), "/",
                              Component(e.name));
        } else {
          path = Component(e.name);
        }
        e.node = builder->Node(path, OpType(e.name));
        e.step = step_at(e.start);
        if (!py_stack.empty() && !builder->HasCode(e.node)) {
          std::vector<Frame> frames;
          const size_t first =
              py_stack.size() > kMaxFrames ? py_stack.size() - kMaxFrames : 0;
          for (size_t p = first; p < py_stack.size(); ++p) {
            frames.push_back(ParseFrame(events[py_stack[p]].name));
          }
          builder->SetCode(e.node, frames);
        }
        cpu_stack.push_back(i);
        break;
      }
      case Kind::kGpu:
        break;
    }
  }

  // --- CPU executions, with their memory, call stacks and float ops.
  absl::flat_hash_map<std::string, int32_t> by_correlation;
  absl::flat_hash_map<std::string, int32_t> by_external_id;
  for (int32_t i = 0; i < n; ++i) {
    Event& e = events[i];
    if (e.kind != Kind::kCpu) continue;
    tfcore::NodeExecStats* stat =
        builder->AddExec(e.step, kHostCpuDevice, e.node, e.start,
                         std::max<int64_t>(e.exclusive, 0));
    std::optional<JsonElement> args = JsonField(e.json, "args");
    if (args.has_value()) {
      if (e.runtime) {
        std::optional<std::string> corr = JsonIdText(*args, "correlation");
        if (corr.has_value()) by_correlation.emplace(*corr, i);
      } else {
        std::optional<std::string> ext = JsonIdText(*args, "External id");
        if (ext.has_value()) by_external_id.emplace(*ext, i);
      }
      std::optional<int64_t> flops = JsonInt(*args, "flops");
      if (flops.has_value() && *flops >= 0)
        builder->AddFloatOps(e.node, *flops);
      if (!builder->HasCode(e.node)) {
        std::optional<absl::string_view> stack =
            JsonString(*args, "Call stack");
        if (stack.has_value()) {
          builder->SetCode(e.node, ParseCallStack(*stack));
          ++call_stacks;
        }
      }
    }

    // Memory allocated and freed while the event ran (outside its nested
    // events), per allocator.
    std::vector<std::pair<std::string, int64_t>> running;  // allocator, bytes
    for (int32_t m : e.memory) {
      const Event& mem = events[m];
      std::optional<JsonElement> margs = JsonField(mem.json, "args");
      std::optional<int64_t> bytes =
          margs.has_value() ? JsonInt(*margs, "Bytes") : std::nullopt;
      if (!bytes.has_value()) {
        builder->Count(file, "[memory] events without integer Bytes, skipped");
        continue;
      }
      const std::string allocator =
          AllocatorName(JsonInt(*margs, "Device Type").value_or(0),
                        JsonInt(*margs, "Device Id").value_or(0));
      tfcore::AllocatorMemoryUsed* used = nullptr;
      size_t slot = 0;
      for (; slot < running.size(); ++slot) {
        if (running[slot].first == allocator) break;
      }
      if (slot == running.size()) {
        running.emplace_back(allocator, 0);
        used = stat->add_memory();
        used->set_allocator_name(allocator);
      } else {
        used = stat->mutable_memory(static_cast<int>(slot));
      }
      int64_t& live = running[slot].second;
      live = SatAdd(live, *bytes);
      if (*bytes > 0)
        used->set_total_bytes(SatAdd(used->total_bytes(), *bytes));
      used->set_peak_bytes(std::max(used->peak_bytes(), live));
      used->set_live_bytes(std::max<int64_t>(live, 0));
      tfcore::AllocationRecord* rec = used->add_allocation_records();
      rec->set_alloc_micros(mem.start);
      rec->set_alloc_bytes(*bytes);
      std::optional<int64_t> in_use = JsonInt(*margs, "Total Allocated");
      if (in_use.has_value()) used->set_allocator_bytes_in_use(*in_use);
    }
  }

  // --- GPU activity: on ".../stream:all" for the CPU event that launched
  // it, and on the real stream for the device list.
  int64_t unlinked = 0, by_ext = 0;
  for (int32_t i = 0; i < n; ++i) {
    const Event& g = events[i];
    if (g.kind != Kind::kGpu) continue;
    std::optional<JsonElement> args = JsonField(g.json, "args");
    int32_t launcher = -1;
    if (args.has_value()) {
      std::optional<std::string> corr = JsonIdText(*args, "correlation");
      auto it =
          corr.has_value() ? by_correlation.find(*corr) : by_correlation.end();
      if (it != by_correlation.end()) {
        // The innermost enclosing op of the runtime call; the call itself
        // when it ran outside any op.
        launcher = it->second;
        while (events[launcher].runtime && events[launcher].parent >= 0) {
          launcher = events[launcher].parent;
        }
      } else {
        std::optional<std::string> ext = JsonIdText(*args, "External id");
        if (!ext.has_value()) ext = JsonIdText(*args, "external id");
        auto e =
            ext.has_value() ? by_external_id.find(*ext) : by_external_id.end();
        if (e != by_external_id.end()) {
          launcher = e->second;
          ++by_ext;
        }
      }
    }
    int32_t node;
    int64_t step;
    if (launcher >= 0) {
      node = events[launcher].node;
      step = events[launcher].step;
    } else {
      node = builder->Node(absl::StrCat("_unlinked/", Component(g.category)),
                           g.category);
      step = step_at(g.start);
      ++unlinked;
    }
    int64_t gpu = 0;
    std::string stream;
    if (args.has_value()) {
      gpu = JsonInt(*args, "device").value_or(0);
      stream = JsonIdText(*args, "stream").value_or("");
    }
    if (stream.empty()) {
      std::string tid = JsonIdText(g.json, "tid").value_or("0");
      absl::string_view t = tid;
      absl::ConsumePrefix(&t, "stream ");
      stream = std::string(absl::StripAsciiWhitespace(t));
    }
    builder->AddExec(step, GpuStreamAllDevice(gpu), node, g.start, g.duration);
    builder->AddExec(step, GpuStreamDevice(gpu, stream), node, g.start,
                     g.duration);
  }

  if (!step_starts.empty()) {
    builder->Note(file, absl::StrCat("steps from ProfilerStep ranges: ",
                                     step_starts.size(),
                                     "; each step runs from the start of its "
                                     "ProfilerStep to the start of the next"));
  }
  if (before_first_step > 0) {
    builder->Note(file,
                  absl::StrCat(before_first_step,
                               " events before the first ProfilerStep counted "
                               "in step ",
                               step_starts.front().second));
  }
  if (partial > 0) {
    builder->Note(file, absl::StrCat(partial,
                                     " events overlap the end of the event "
                                     "enclosing them; nested there anyway"));
  }
  if (orphan_memory > 0) {
    builder->Note(file, absl::StrCat(orphan_memory,
                                     " [memory] events outside any op, not "
                                     "mapped"));
  }
  if (by_ext > 0) {
    builder->Note(file, absl::StrCat(by_ext,
                                     " GPU events without a launching runtime "
                                     "call linked to their op by External "
                                     "id"));
  }
  if (unlinked > 0) {
    builder->Note(file, absl::StrCat(unlinked,
                                     " GPU events linked to no CPU event: on "
                                     "nodes _unlinked/<category>"));
  }
  if (too_deep > 0) {
    builder->Note(file, absl::StrCat(too_deep, " events nested deeper than ",
                                     kMaxPathDepth,
                                     " levels: named as children of their "
                                     "ancestor at that depth"));
  }
  if (call_stacks > 0) {
    builder->Note(file, "call stacks taken from \"Call stack\" args");
  }
  return absl::OkStatus();
}

}  // namespace trace_internal
}  // namespace tfprof
