// PyTorch profiler (Kineto) traces: Chrome Trace Format JSON with CPU-side
// events (cpu_op / user_annotation / cuda_runtime ..., "Operator" and
// "Runtime" in older traces) that nest on their thread, GPU activity
// (kernel, gpu_memcpy, gpu_memset) on stream lanes linked to the runtime
// call that launched it by a correlation id, ProfilerStep#N ranges as steps,
// python_function events or "Call stack" args for call stacks, and
// "[memory]" instant events.
#include "profiler/importers/kineto/kineto.h"

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

namespace tfprof {
namespace trace_internal {
namespace {

enum class Kind : uint8_t {
  kPython = 0,  // python_function: a call-stack frame
  kCpu = 1,     // a node execution on a CPU thread
  kMemory = 2,  // a "[memory]" instant event
  kGpu = 3,     // kernel / memcpy / memset on a GPU stream
};

// Strings kept once (event names, categories, call stacks, streams, ids),
// by their id as an int32.
int32_t Intern(StringTable* strings, absl::string_view s) {
  return static_cast<int32_t>(
      strings->Id(std::string_view(s.data(), s.size())));
}

// An id ("correlation", "External id") compared as the text it reads as
// (a string, or a number rendered as text): kept as its number when the
// text is one written the canonical way, else as the interned text.
struct IdKey {
  int64_t value = 0;
  int32_t text = kAbsent;  // kNumber, or the string table id of the text

  static constexpr int32_t kAbsent = -2;
  static constexpr int32_t kNumber = -1;

  bool present() const { return text != kAbsent; }
  bool operator==(const IdKey& o) const {
    return value == o.value && text == o.text;
  }
  template <typename H>
  friend H AbslHashValue(H h, const IdKey& k) {
    return H::combine(std::move(h), k.value, k.text);
  }
};

IdKey MakeIdKey(const JsonScalar& v, StringTable* strings) {
  IdKey key;
  if (v.type == JsonScalar::Type::kInt64) {
    key.value = v.i;
    key.text = IdKey::kNumber;
    return key;
  }
  std::optional<std::string> text = v.IdText();
  if (!text.has_value()) return key;
  int64_t number;
  if (absl::SimpleAtoi(*text, &number) && absl::StrCat(number) == *text) {
    key.value = number;
    key.text = IdKey::kNumber;
  } else {
    key.text = Intern(strings, *text);
  }
  return key;
}

// One event that matters, as compact as the passes need it: the JSON is
// gone once the events are collected.
struct Event {
  int64_t start = 0;     // microseconds
  int64_t duration = 0;  // microseconds
  // Filled by the nesting pass (kCpu).
  int64_t exclusive = 0;  // duration minus that of nested kCpu events
  int64_t step = 0;
  int32_t name = 0;      // string table
  int32_t category = 0;  // string table
  int32_t thread = -1;   // index into the thread table (CPU side)
  int32_t parent = -1;   // enclosing kCpu event on the same thread
  int32_t node = -1;
  int32_t depth = 0;    // path components of the node name
  int32_t anchor = -1;  // the event whose name the path extends
  int32_t args = -1;    // kCpu: cpu_args, kMemory: memory_args, kGpu: gpu_args
  // kCpu: the kMemory events that happened inside, a list in order through
  // their next_memory.
  int32_t first_memory = -1;
  int32_t last_memory = -1;
  int32_t next_memory = -1;  // kMemory
  Kind kind = Kind::kCpu;
  bool runtime = false;  // cuda_runtime / cuda_driver style launch call
};

struct CpuArgs {
  std::optional<int64_t> flops;  // args.flops when an integer >= 0
  int32_t call_stack = -1;       // args["Call stack"] (string table)
};

struct MemoryArgs {
  std::optional<int64_t> bytes;
  int64_t device_type = 0;
  int64_t device_id = 0;
  std::optional<int64_t> total_allocated;
};

struct GpuArgs {
  IdKey correlation;
  IdKey external_id;  // "External id", else "external id"
  int64_t device = 0;
  int32_t stream = 0;  // string table
};

// What the importer reads of one event (first occurrences of each key, as
// the DOM parser's at_key() finds them).
struct EventFields {
  JsonScalar ph, name, cat, pid, tid, ts, dur;
  bool has_args = false;  // "args" present, of any type
  JsonScalar correlation, external_id, external_id_lower, flops, call_stack,
      bytes, device_type, device_id, total_allocated, device, stream;

  JsonScalar* Slot(absl::string_view key) {
    switch (key.size()) {
      case 2:
        if (key == "ph") return &ph;
        if (key == "ts") return &ts;
        break;
      case 3:
        if (key == "cat") return &cat;
        if (key == "pid") return &pid;
        if (key == "tid") return &tid;
        if (key == "dur") return &dur;
        break;
      case 4:
        if (key == "name") return &name;
        break;
    }
    return nullptr;
  }
  JsonScalar* ArgSlot(absl::string_view key) {
    switch (key.size()) {
      case 5:
        if (key == "flops") return &flops;
        if (key == "Bytes") return &bytes;
        break;
      case 6:
        if (key == "device") return &device;
        if (key == "stream") return &stream;
        break;
      case 9:
        if (key == "Device Id") return &device_id;
        break;
      case 10:
        if (key == "Call stack") return &call_stack;
        break;
      case 11:
        if (key == "correlation") return &correlation;
        if (key == "External id") return &external_id;
        if (key == "external id") return &external_id_lower;
        if (key == "Device Type") return &device_type;
        break;
      case 15:
        if (key == "Total Allocated") return &total_allocated;
        break;
    }
    return nullptr;
  }
};

bool ReadEvent(JsonReader* reader, JsonReader::Value& event, EventFields* f) {
  *f = EventFields();
  if (!JsonReader::IsObject(event)) return reader->Skip(event);  // no fields
  return reader->ForEachField(
      event, [&](absl::string_view key, JsonReader::Value& value) {
        if (key == "args") {
          if (f->has_args) return reader->Skip(value);
          f->has_args = true;
          if (!JsonReader::IsObject(value)) return reader->Skip(value);
          return reader->ForEachField(
              value, [&](absl::string_view k, JsonReader::Value& v) {
                return reader->ReadFirst(v, f->ArgSlot(k));
              });
        }
        return reader->ReadFirst(value, f->Slot(key));
      });
}

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

absl::Status ImportKineto(JsonReader* reader, const std::string& file,
                          int64_t file_index, TraceBuilder* builder) {
  // --- Collect the events that matter, in one pass over the JSON.
  StringTable strings;
  std::vector<Event> events;
  std::vector<CpuArgs> cpu_args;
  std::vector<MemoryArgs> memory_args;
  std::vector<GpuArgs> gpu_args;
  absl::flat_hash_map<std::string, int32_t> threads;
  // The launching runtime call of a correlation id, the op of an External
  // id (the first CPU event that has it).
  absl::flat_hash_map<IdKey, int32_t> by_correlation;
  absl::flat_hash_map<IdKey, int32_t> by_external_id;
  EventFields f;
  const bool read = reader->ForEachEvent(
      [&](JsonReader::Value& ev) {
        if (!ReadEvent(reader, ev, &f)) return false;
        std::optional<absl::string_view> ph = f.ph.String();
        if (!ph.has_value()) {
          builder->Count(file, "events without a \"ph\" string, skipped");
          return true;
        }
        const absl::string_view name = f.name.String().value_or("");
        const absl::string_view category = f.cat.String().value_or("");
        Event e;
        if (*ph == "i" || *ph == "I") {
          if (name != "[memory]") {
            builder->Count(file,
                           "instant events (other than [memory]) not "
                           "mapped");
            return true;
          }
          e.kind = Kind::kMemory;
        } else if (*ph == "X") {
          if (category == "Trace") return true;  // the profiling session's span
          if (category == "python_function") {
            e.kind = Kind::kPython;
          } else if (IsGpuCategory(category)) {
            e.kind = Kind::kGpu;
          } else if (IsGpuSideNonWork(category)) {
            builder->Count(file, absl::StrCat("\"", category,
                                              "\" events not mapped (GPU-side "
                                              "ranges, not work a node "
                                              "launched)"));
            return true;
          } else {
            e.kind = Kind::kCpu;
            e.runtime = IsRuntimeCategory(category);
          }
        } else if (IsIgnoredPhase(*ph)) {
          return true;
        } else {
          builder->Count(
              file, absl::StrCat("events of phase \"", *ph, "\" not mapped"));
          return true;
        }

        if (!f.ts.Micros(&e.start) ||
            (e.kind != Kind::kMemory &&
             (!f.dur.Micros(&e.duration) || e.duration < 0))) {
          builder->Count(file, "events without a valid ts/dur, skipped");
          return true;
        }
        e.name = Intern(&strings, name);
        e.category = Intern(&strings, category);
        const int32_t index = static_cast<int32_t>(events.size());
        if (e.kind != Kind::kGpu) {
          const std::string key = absl::StrCat(f.pid.IdText().value_or(""), "/",
                                               f.tid.IdText().value_or(""));
          auto [it, inserted] =
              threads.emplace(key, static_cast<int32_t>(threads.size()));
          e.thread = it->second;
        }
        // What the later passes need of the args (a field of any other type
        // than an object has none).
        switch (e.kind) {
          case Kind::kCpu: {
            const IdKey link =
                MakeIdKey(e.runtime ? f.correlation : f.external_id, &strings);
            if (link.present()) {
              (e.runtime ? by_correlation : by_external_id)
                  .emplace(link, index);
            }
            CpuArgs a;
            std::optional<int64_t> flops = f.flops.Int();
            if (flops.has_value() && *flops >= 0) a.flops = flops;
            std::optional<absl::string_view> stack = f.call_stack.String();
            if (stack.has_value()) a.call_stack = Intern(&strings, *stack);
            if (a.flops.has_value() || a.call_stack >= 0) {
              e.args = static_cast<int32_t>(cpu_args.size());
              cpu_args.push_back(a);
            }
            break;
          }
          case Kind::kMemory: {
            MemoryArgs a;
            a.bytes = f.bytes.Int();
            a.device_type = f.device_type.Int().value_or(0);
            a.device_id = f.device_id.Int().value_or(0);
            a.total_allocated = f.total_allocated.Int();
            e.args = static_cast<int32_t>(memory_args.size());
            memory_args.push_back(a);
            break;
          }
          case Kind::kGpu: {
            GpuArgs a;
            a.correlation = MakeIdKey(f.correlation, &strings);
            a.external_id = MakeIdKey(f.external_id, &strings);
            if (!a.external_id.present()) {
              a.external_id = MakeIdKey(f.external_id_lower, &strings);
            }
            a.device = f.device.Int().value_or(0);
            std::string stream = f.stream.IdText().value_or("");
            if (stream.empty()) {
              std::string tid = f.tid.IdText().value_or("0");
              absl::string_view t = tid;
              absl::ConsumePrefix(&t, "stream ");
              stream = std::string(absl::StripAsciiWhitespace(t));
            }
            a.stream = Intern(&strings, stream);
            e.args = static_cast<int32_t>(gpu_args.size());
            gpu_args.push_back(a);
            break;
          }
          case Kind::kPython:
            break;
        }
        events.push_back(e);
        return true;
      },
      /*last_pass=*/true);
  if (!read) return JsonReadError(file);
  // The rest needs no JSON: free the file and the parser's index.
  reader->Close();
  const int32_t n = static_cast<int32_t>(events.size());

  // --- Steps: ProfilerStep#N ranges delimit steps by their start times.
  std::vector<std::pair<int64_t, int64_t>> step_starts;  // (start, step)
  for (const Event& e : events) {
    if (e.kind != Kind::kCpu) continue;
    std::optional<int64_t> step = ProfilerStep(strings.Get(e.name));
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
          Event& op = events[cpu_stack.back()];
          if (op.last_memory < 0) {
            op.first_memory = i;
          } else {
            events[op.last_memory].next_memory = i;
          }
          op.last_memory = i;
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
        const std::string& name = strings.Get(e.name);
        if (e.anchor >= 0) {
          path = absl::StrCat(builder->NodeName(events[e.anchor].node), "/",
                              Component(name));
        } else {
          path = Component(name);
        }
        e.node = builder->Node(path, OpType(name));
        e.step = step_at(e.start);
        if (!py_stack.empty() && !builder->HasCode(e.node)) {
          std::vector<Frame> frames;
          const size_t first =
              py_stack.size() > kMaxFrames ? py_stack.size() - kMaxFrames : 0;
          for (size_t p = first; p < py_stack.size(); ++p) {
            frames.push_back(ParseFrame(strings.Get(events[py_stack[p]].name)));
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
  for (int32_t i = 0; i < n; ++i) {
    Event& e = events[i];
    if (e.kind != Kind::kCpu) continue;
    const TraceBuilder::ExecRef exec =
        builder->AddExec(e.step, kHostCpuDevice, e.node, e.start,
                         std::max<int64_t>(e.exclusive, 0));
    tfcore::NodeExecStats* stat = nullptr;  // made for the first record
    if (e.args >= 0) {
      const CpuArgs& a = cpu_args[e.args];
      if (a.flops.has_value()) builder->AddFloatOps(e.node, *a.flops);
      if (!builder->HasCode(e.node) && a.call_stack >= 0) {
        builder->SetCode(e.node, ParseCallStack(strings.Get(a.call_stack)));
        ++call_stacks;
      }
    }

    // Memory allocated and freed while the event ran (outside its nested
    // events), per allocator.
    std::vector<std::pair<std::string, int64_t>> running;  // allocator, bytes
    for (int32_t m = e.first_memory; m >= 0; m = events[m].next_memory) {
      const Event& mem = events[m];
      const MemoryArgs& margs = memory_args[mem.args];
      std::optional<int64_t> bytes = margs.bytes;
      if (!bytes.has_value()) {
        builder->Count(file, "[memory] events without integer Bytes, skipped");
        continue;
      }
      const std::string allocator =
          AllocatorName(margs.device_type, margs.device_id);
      tfcore::AllocatorMemoryUsed* used = nullptr;
      size_t slot = 0;
      for (; slot < running.size(); ++slot) {
        if (running[slot].first == allocator) break;
      }
      if (slot == running.size()) {
        running.emplace_back(allocator, 0);
        if (stat == nullptr) stat = builder->Details(exec);
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
      if (margs.total_allocated.has_value()) {
        used->set_allocator_bytes_in_use(*margs.total_allocated);
      }
    }
  }

  // --- GPU activity: on ".../stream:all" for the CPU event that launched
  // it, and on the real stream for the device list.
  int64_t unlinked = 0, by_ext = 0;
  for (int32_t i = 0; i < n; ++i) {
    const Event& g = events[i];
    if (g.kind != Kind::kGpu) continue;
    const GpuArgs& a = gpu_args[g.args];
    int32_t launcher = -1;
    auto it = a.correlation.present() ? by_correlation.find(a.correlation)
                                      : by_correlation.end();
    if (it != by_correlation.end()) {
      // The innermost enclosing op of the runtime call; the call itself
      // when it ran outside any op.
      launcher = it->second;
      while (events[launcher].runtime && events[launcher].parent >= 0) {
        launcher = events[launcher].parent;
      }
    } else {
      auto e = a.external_id.present() ? by_external_id.find(a.external_id)
                                       : by_external_id.end();
      if (e != by_external_id.end()) {
        launcher = e->second;
        ++by_ext;
      }
    }
    int32_t node;
    int64_t step;
    const std::string& category = strings.Get(g.category);
    if (launcher >= 0) {
      node = events[launcher].node;
      step = events[launcher].step;
    } else {
      node = builder->Node(absl::StrCat("_unlinked/", Component(category)),
                           category);
      step = step_at(g.start);
      ++unlinked;
    }
    builder->AddExec(step, GpuStreamAllDevice(a.device), node, g.start,
                     g.duration);
    builder->AddExec(step, GpuStreamDevice(a.device, strings.Get(a.stream)),
                     node, g.start, g.duration);
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
  builder->Count(
      file,
      "events overlap the end of the event enclosing them; nested there anyway",
      partial);
  builder->Count(file, "[memory] events outside any op, not mapped",
                 orphan_memory);
  builder->Count(file,
                 "GPU events without a launching runtime call linked to their "
                 "op by External id",
                 by_ext);
  builder->Count(
      file, "GPU events linked to no CPU event: on nodes _unlinked/<category>",
      unlinked);
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
