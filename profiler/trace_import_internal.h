// Shared pieces of the trace importers (trace_*.cc): the builder that
// accumulates nodes, per-step device statistics, call stacks and notes, and
// small helpers for reading JSON values defensively. Not a public API.
#ifndef TFPROF_PROFILER_TRACE_IMPORT_INTERNAL_H_
#define TFPROF_PROFILER_TRACE_IMPORT_INTERNAL_H_

#include <simdjson.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "profiler/protos.h"
#include "profiler/saturate.h"
#include "profiler/trace_import.h"

namespace tfprof {
namespace trace_internal {

// The device that host (CPU) time of PyTorch and XSpace traces goes on.
inline constexpr char kHostCpuDevice[] =
    "/job:localhost/replica:0/task:0/device:cpu:0";

// The end of every "unknown format" error.
inline constexpr char kExpectedFormats[] =
    "; expected a TensorFlow timeline JSON, a PyTorch profiler (Kineto) JSON "
    "or an XSpace .xplane.pb";

// ".../device:gpu:N/stream:all": where accelerator time is counted.
std::string GpuStreamAllDevice(int64_t gpu);
// ".../device:gpu:N/stream:S": the real stream (device list only).
std::string GpuStreamDevice(int64_t gpu, absl::string_view stream);

// TensorFlow's device classes (on the lower-cased device string), as tfprof
// counts time: canonical devices ".../(device:)?(cpu|gpu):N" get CPU time,
// ".../stream:all" devices get accelerator time, others only show up in
// device lists.
bool IsCanonicalDevice(absl::string_view device);
bool IsStreamAllDevice(absl::string_view device);

// Rounds x to the nearest integer (halves away from zero); nullopt when x is
// not finite or out of range for microsecond arithmetic (|x| >= 2^62).
std::optional<int64_t> RoundToInt64(double x);

// Call stacks keep at most this many (innermost) frames.
inline constexpr size_t kMaxFrames = 128;

// One Python frame of a call stack, outermost first in a stack.
struct Frame {
  std::string file;
  std::string function;
  int32_t lineno = 0;
};

// Accumulates the converted trace. Node names must not contain ':' (the
// model cuts RunMetadata names at the first ':'); Node() replaces any.
class TraceBuilder {
 public:
  TraceBuilder() = default;
  TraceBuilder(const TraceBuilder&) = delete;
  TraceBuilder& operator=(const TraceBuilder&) = delete;

  // The node with this name, created with `op` if new. Returns its index.
  int32_t Node(absl::string_view name, absl::string_view op);
  // The node for (name, op) where one name may come with several op types
  // (TF2 function graphs reuse names): the first type seen gets the name,
  // any other type gets "<name>(<op>)".
  int32_t TypedNode(absl::string_view name, absl::string_view op);
  const std::string& NodeName(int32_t node) const;
  // The node with this name (after the ':' replacement of Node()), if any.
  std::optional<int32_t> FindNode(absl::string_view name) const;
  // Sets the inputs of a node that has none yet.
  void SetInputs(int32_t node, const std::vector<std::string>& inputs);
  // Sets the call stack of a node that has none yet (first one wins).
  void SetCode(int32_t node, const std::vector<Frame>& frames);
  bool HasCode(int32_t node) const { return nodes_[node].code.has_value(); }
  // The canonical device of a node: the first one claimed for it (tfprof
  // keeps one canonical device per node and drops the others' stats).
  const std::string& ClaimCanonicalDevice(int32_t node,
                                          const std::string& device);
  // Records the float ops of one execution of a node.
  void AddFloatOps(int32_t node, int64_t flops);

  // Records one execution of `node` on `device` in `step`: start and
  // duration in microseconds (duration >= 0). The returned stats stay valid
  // until Finish().
  tfcore::NodeExecStats* AddExec(int64_t step, const std::string& device,
                                 int32_t node, int64_t start_micros,
                                 int64_t duration_micros);
  // The first execution of `node` in `step` on a canonical device, if any.
  tfcore::NodeExecStats* FirstCanonicalExec(int64_t step, int32_t node) const;

  // A note printed once: "<file>: <text>".
  void Note(const std::string& file, const std::string& text);
  // Counts an occurrence of something not mapped; Finish() writes one note
  // per (file, what): "<file>: <count> <what>".
  void Count(const std::string& file, const std::string& what, int64_t n = 1);

  int64_t num_execs() const { return num_execs_; }

  // Builds the result. Timestamps are shifted when needed so that every
  // start is > 0 (tfprof ignores executions starting at 0).
  ImportedTrace Finish(TraceFormat format);

 private:
  struct NodeInfo {
    std::string name;
    std::string op;
    std::vector<std::string> inputs;
    std::optional<std::vector<Frame>> code;
    int64_t flops_sum = 0;
    int64_t flops_runs = 0;
    bool flops_uneven = false;
    int64_t flops_first = 0;
    std::string canonical_device;  // as claimed, see ClaimCanonicalDevice
    bool on_canonical = false;
    bool on_stream_all = false;
  };
  struct StepData {
    tfcore::RunMetadata run_meta;
    absl::flat_hash_map<std::string, tfcore::DeviceStepStats*> devices;
    absl::flat_hash_map<int32_t, tfcore::NodeExecStats*> first_canonical;
  };

  std::vector<NodeInfo> nodes_;
  absl::flat_hash_map<std::string, int32_t> by_name_;
  absl::flat_hash_map<std::string, int32_t> by_name_and_op_;
  int64_t retyped_ = 0;
  std::map<int64_t, std::unique_ptr<StepData>> steps_;
  // Device -> 1 canonical, 2 stream:all, 0 other.
  absl::flat_hash_map<std::string, int> device_class_;
  std::vector<std::string> notes_;
  struct Counted {
    std::string file;
    std::string what;
    int64_t n = 0;
  };
  std::vector<Counted> counts_;
  absl::flat_hash_map<std::pair<std::string, std::string>, size_t> count_index_;
  int64_t min_start_ = INT64_MAX;
  int64_t num_execs_ = 0;
};

// --- JSON helpers (simdjson DOM). All return nullopt / false on a missing
// field or a value of another type; none throws.

using JsonElement = simdjson::dom::element;

std::optional<JsonElement> JsonField(const JsonElement& obj,
                                     absl::string_view key);
std::optional<absl::string_view> JsonString(const JsonElement& obj,
                                            absl::string_view key);
// Same, as an out parameter; false (and *out unchanged) if absent.
bool JsonStringTo(const JsonElement& obj, absl::string_view key,
                  absl::string_view* out);
// A time field ("ts", "dur") in whole microseconds, rounded; false if it is
// missing, not a number, or beyond +-2^61 (so a start plus a duration cannot
// overflow).
bool JsonMicros(const JsonElement& obj, absl::string_view key, int64_t* out);
// A number (integer or floating point) as double.
std::optional<double> JsonNumber(const JsonElement& obj, absl::string_view key);
// An integer field; floating point values are accepted when integral.
std::optional<int64_t> JsonInt(const JsonElement& obj, absl::string_view key);
// A number or string rendered as text (for ids that are either).
std::optional<std::string> JsonIdText(const JsonElement& obj,
                                      absl::string_view key);

// Trace-event phases that the importers skip without comment (flow arrows,
// metadata, sample/clock-sync records).
bool IsIgnoredPhase(absl::string_view ph);

// Per-format entry points. `root` is the parsed document; `file` is used in
// notes and errors; `file_index` gives the step of files without steps.
absl::Status ImportTfTimeline(const JsonElement& root, const std::string& file,
                              int64_t file_index, TraceBuilder* builder);
absl::Status ImportKineto(const JsonElement& root, const std::string& file,
                          int64_t file_index, TraceBuilder* builder);
absl::Status ImportXSpace(const std::string& contents, const std::string& file,
                          int64_t file_index, TraceBuilder* builder);

// Format detection on a parsed JSON trace; nullopt if neither.
std::optional<TraceFormat> DetectJsonTraceFormat(const JsonElement& root);
// The trace event array of a Chrome trace: root.traceEvents or the root
// array itself.
std::optional<simdjson::dom::array> TraceEvents(const JsonElement& root);

}  // namespace trace_internal
}  // namespace tfprof

#endif  // TFPROF_PROFILER_TRACE_IMPORT_INTERNAL_H_
