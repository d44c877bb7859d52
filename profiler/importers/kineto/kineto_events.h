// The compact form of a Kineto trace's events as the importer's passes use
// them (the JSON is gone once they are collected), the reading of one
// event's fields and args, and what its category and name say.
#ifndef TFPROF_PROFILER_IMPORTERS_KINETO_KINETO_EVENTS_H_
#define TFPROF_PROFILER_IMPORTERS_KINETO_KINETO_EVENTS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/strings/string_view.h"
#include "profiler/importers/common/json_reader.h"
#include "profiler/importers/common/trace_builder.h"
#include "profiler/importers/kineto/kineto_args.h"
#include "profiler/importers/kineto/torch_flops.h"
#include "profiler/model/activity.h"
#include "profiler/model/string_table.h"

namespace tfprof {
namespace trace_internal {

enum class Kind : uint8_t {
  kPython = 0,  // python_function: a call-stack frame
  kCpu = 1,     // a node execution on a CPU thread
  kMemory = 2,  // a "[memory]" instant event
  kGpu = 3,     // kernel / memcpy / memset on a GPU stream
  // A kCpu record that is its parent's only child and has its name (aten::div
  // calling aten::div on a wrapped scalar): PyTorch's profiler merges it into
  // its parent (one run, the parent's time), and so does the import.
  kMerged = 4,
};

// Strings kept once (event names, categories, call stacks, streams, ids),
// by their id as an int32.
inline int32_t Intern(StringTable* strings, absl::string_view s) {
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

// The key of an id as read (absent when the value is not an id).
IdKey MakeIdKey(const JsonScalar& v, StringTable* strings);

// One event that matters, as compact as the passes need it: the JSON is
// gone once the events are collected.
struct Event {
  int64_t start = 0;     // microseconds
  int64_t duration = 0;  // microseconds
  // As read (all but kGpu), for the nesting and the activity record.
  int64_t start_ns = 0;
  int64_t duration_ns = 0;
  // Filled by the nesting pass (kCpu).
  int64_t exclusive_ns = 0;  // duration minus that of nested kCpu events
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
  // The float ops of an op with a formula (TorchFlops), and whether a
  // nested record counts its computation instead (the extended rule).
  std::optional<TorchOpFlops> torch;
  bool nested_counted = false;
};

struct MemoryArgs {
  int64_t time_ns = 0;
  uint64_t address = 0;
  std::optional<int64_t> bytes;
  int64_t device_type = 0;
  int64_t device_id = 0;
  std::optional<int64_t> total_allocated;
};

struct GpuArgs {
  int32_t launch = -1;  // "regs:R shm:S grid:x,y,z block:x,y,z" (strings)
  int64_t start_ns = 0;
  int64_t duration_ns = 0;
  IdKey correlation;
  IdKey external_id;  // "External id", else "external id"
  int64_t device = 0;
  int32_t stream = 0;  // string table
};

// What the importer reads of one event (first occurrences of each key, as
// the DOM parser's at_key() finds them).
struct EventFields : TraceEventFields {
  JsonScalar correlation, external_id, external_id_lower, flops, call_stack,
      bytes, device_type, device_id, total_allocated, device, stream, addr,
      registers, shared_memory, seq, seq_num, process_group;
  JsonInts grid, block;
  // The slot an args key is read into, or null for keys not read.
  JsonScalar* ArgSlot(absl::string_view key);
};

// --- How an event's category and name are read.
// Kernels, copies and sets on a GPU stream (current and older categories).
bool IsGpuCategory(absl::string_view cat);
// A runtime or driver call that launches GPU work (cuda_runtime, ...).
bool IsRuntimeCategory(absl::string_view cat);
// Copy, set or kernel, from a GPU event's category.
WorkKind WorkKindOf(absl::string_view category);
// GPU-side events that are not work a node launched.
bool IsGpuSideNonWork(absl::string_view cat);
// "ProfilerStep#12" -> 12 (not a step marker: nullopt).
std::optional<int64_t> ProfilerStep(absl::string_view name);
// One path component (see ScopeComponent); ProfilerStep#N ranges are all
// "ProfilerStep".
std::string Component(absl::string_view name);
// The op type of a CPU event: its name ("ProfilerStep" for the markers,
// "_unnamed" for none).
std::string OpType(absl::string_view name);

// A kernel's launch as XSpace's kernel_details writes it:
// "regs:R shm:S grid:x,y,z block:x,y,z".
std::string LaunchText(const EventFields& f);

// Reads one event's fields, its args' slots and its shapes; false on a JSON
// error.
bool ReadEvent(JsonReader* reader, JsonReader::Value& event, EventFields* f,
               ShapeArgs* shapes);

}  // namespace trace_internal
}  // namespace tfprof

#endif  // TFPROF_PROFILER_IMPORTERS_KINETO_KINETO_EVENTS_H_
