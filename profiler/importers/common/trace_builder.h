// The builder shared by the trace importers: it accumulates nodes, per-step
// executions on devices, call stacks and notes, and writes them into a
// model through ModelBuilder (or, as an export, into the GraphDef,
// RunMetadata and OpLogProto TensorFlow's profiler reads). Not a public API.
#ifndef TFPROF_PROFILER_IMPORTERS_COMMON_TRACE_BUILDER_H_
#define TFPROF_PROFILER_IMPORTERS_COMMON_TRACE_BUILDER_H_

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "profiler/base/name_keyed.h"
#include "profiler/base/protos.h"
#include "profiler/base/saturate.h"
#include "profiler/importers/common/trace_format.h"
#include "profiler/model/model.h"
#include "profiler/model/model_builder.h"

namespace tfprof {
namespace trace_internal {

// The device that host (CPU) time of PyTorch and XSpace traces goes on.
inline constexpr char kHostCpuDevice[] =
    "/job:localhost/replica:0/task:0/device:cpu:0";

// The end of every "unknown format" error.
inline constexpr char kExpectedFormats[] =
    "; expected a TensorFlow timeline JSON, a PyTorch profiler (Kineto) JSON "
    "or an XSpace .xplane.pb";

// The error for a binary file that is no trace tfprof reads; `parsed`:
// whether its bytes parse as an XSpace protobuf (then it has no /host: or
// /device: plane). Says more when the name calls it an XSpace or a .pb.
absl::Status NotAKnownTrace(const std::string& name, bool parsed);

// ".../device:gpu:N": where a GPU op is placed (a run, no time).
std::string GpuDevice(int64_t gpu);
// ".../device:gpu:N/stream:all": where accelerator time is counted.
std::string GpuStreamAllDevice(int64_t gpu);
// ".../device:gpu:N/stream:S": the real stream (device list only).
std::string GpuStreamDevice(int64_t gpu, absl::string_view stream);

// An event name as one level of a node's path: '/' replaced so that it is
// one scope level ("a/b" -> "a_b"; "aten::mm" stays); "" -> "_unnamed".
std::string ScopeComponent(absl::string_view name);

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

// Accumulates the converted trace. Node names are the events' own, ':'
// included ("aten::mm"); the TF1 export alone, whose RunMetadata cuts a
// node name at its first ':', writes them with '.' (TF1Name).
//
// Executions are kept as small records (node, device, start, duration);
// only executions with memory or outputs also have a record of those.
// After the import, WriteNodes() then WriteSteps() write the model, each
// step freed once written. (The TF1 export instead: TakeGraph(),
// TakeOpLog(), NextStep().)
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
  // The node "_unlinked/<name>" (op type `op`) that takes accelerator work
  // whose launching op is not known.
  int32_t UnlinkedNode(absl::string_view name, absl::string_view op) {
    return Node(absl::StrCat("_unlinked/", name), op);
  }
  const std::string& NodeName(int32_t node) const;
  // The node with this name, if any.
  std::optional<int32_t> FindNode(absl::string_view name) const;
  // Sets the inputs of a node that has none yet.
  void SetInputs(int32_t node, const std::vector<std::string>& inputs);
  // Sets the call stack of a node that has none yet (first one wins).
  void SetCode(int32_t node, const std::vector<Frame>& frames);
  bool HasCode(int32_t node) const { return nodes_[node].code != nullptr; }
  // Sets a string attribute of a node (a NodeDef attr of the graph; the
  // first value set for a key is kept).
  void SetAttr(int32_t node, absl::string_view key, absl::string_view value);
  // A device's kind (KindOfDevice), classified once per device name.
  DeviceKind KindOf(const std::string& device) {
    return device_kind_[static_cast<size_t>(Device(device))];
  }
  // The canonical device of a node: the first one claimed for it (tfprof
  // keeps one canonical device per node and drops the others' stats).
  const std::string& ClaimCanonicalDevice(int32_t node,
                                          const std::string& device);
  // Records the float ops of one execution of a node.
  void AddFloatOps(int32_t node, int64_t flops);
  // What an importer computed of one execution's float ops besides their
  // count (AddFloatOps'): PyTorch's own with_flops count, the bytes read and
  // written, and the element type. Called once per execution of a node
  // that has any (with zeros where one has none), like AddFloatOps; the
  // model gets the per-run averages and the element type of most float ops
  // (Activity::node_costs()).
  struct OpCost {
    int64_t pytorch_float_ops = 0;
    int64_t bytes = 0;
    Dtype dtype = Dtype::kUnknown;
    int64_t float_ops = 0;  // weighs the element type
  };
  void AddOpCost(int32_t node, const OpCost& cost);

  struct StepData;
  // An execution recorded by AddExec().
  struct ExecRef {
    StepData* step = nullptr;
    uint32_t index = 0;
    explicit operator bool() const { return step != nullptr; }
  };
  // Records one execution of `node` on `device` in `step`: start and
  // duration in nanoseconds (duration >= 0). The RunMetadata of a step
  // rounds each start to the nearest microsecond and the durations so that
  // a node's durations on a device add up to their rounded sum: each is the
  // rounded running total after it minus the rounded total before it (so
  // many short events are not each rounded, and zero stays zero).
  ExecRef AddExec(int64_t step, const std::string& device, int32_t node,
                  int64_t start_ns, int64_t duration_ns);
  // The next step AddExec() begins gets room for `n` executions (a large
  // trace's records then take what they need, not up to twice that).
  void ExpectExecs(size_t n) { expected_execs_ = n; }
  // The same in whole microseconds (inputs with no finer resolution).
  ExecRef AddExecMicros(int64_t step, const std::string& device, int32_t node,
                        int64_t start_micros, int64_t duration_micros) {
    return AddExec(step, device, node, SatMul(start_micros, 1000),
                   SatMul(duration_micros, 1000));
  }
  // Where the memory and outputs of an execution go (made on first use).
  // Valid until the execution's step is written.
  ExecMemoryRecord* Details(ExecRef exec);
  // The first execution of `node` in `step` on a canonical device, if any.
  ExecRef FirstCanonicalExec(int64_t step, int32_t node) const;
  // Moves the executions recorded on `from` of the nodes in `to` to the
  // device each is mapped to (an op whose host part ran for a GPU: it
  // belongs to that GPU, as in a RunMetadata).
  void MoveExecs(const std::string& from,
                 const absl::flat_hash_map<int32_t, std::string>& to);

  // A note printed once: "<file>: <text>".
  void Note(const std::string& file, const std::string& text);
  // Counts an occurrence of something not mapped; Finish() writes one note
  // per (file, what) with a count above 0: "<file>: <count> <what>".
  void Count(const std::string& file, const std::string& what, int64_t n = 1);
  // What was counted so far, "<count> <what>" each, joined by "; " (the
  // reasons, when a file gave nothing to import).
  std::string CountsText() const;

  int64_t num_execs() const { return num_execs_; }
  // The file whose executions AddExec() records next (its index in the
  // load); touched() then lists the steps it added to, each once (the
  // import checks that no two files of one run share a step).
  void BeginFile(int64_t file) {
    file_ = file;
    touched_.clear();
  }
  const std::vector<int64_t>& touched() const { return touched_; }

  // What the trace records beyond the node statistics (steps' own spans,
  // accelerator work, memory in use), filled by the importer in
  // nanoseconds; sorted by Finish().
  Activity* activity() { return &activity_; }

  // Ends the import: the notes are complete, and timestamps are shifted
  // (as the steps are built) when needed so that every start is > 0
  // (tfprof ignores executions starting at 0). Then, once each:
  void Finish(TraceFormat format);
  TraceFormat format() const { return format_; }
  const std::vector<std::string>& notes() const { return notes_; }
  // The nodes (inputs, attributes, float ops, call stacks) and the activity
  // record into the model; frees them.
  void WriteNodes(ModelBuilder* builder);
  // Then (after WriteNodes, else it does nothing) every step's executions,
  // in step order, each freed once written; after the last one everything
  // but the notes.
  void WriteSteps(ModelBuilder* builder);

  // The TF1 export, instead of WriteNodes/WriteSteps (once each; nothing
  // after WriteNodes):
  // one NodeDef per node (frees the nodes' inputs).
  tfcore::GraphDef TakeGraph();
  // Call stacks and float ops (frees the nodes' call stacks).
  tfpb::OpLogProto TakeOpLog();
  // The activity record, its per-node costs naming the nodes as the export
  // does (before NextStep). (Its other records keep the names' ':', and the
  // GraphDef's inputs are written as given: only nodes named without ':'
  // link to them there.)
  Activity TakeActivity();
  // The next step's RunMetadata, in step order (its records are freed, and
  // after the last one everything but the notes); false after the last.
  bool NextStep(int64_t* step, tfcore::RunMetadata* run_meta);

  struct Exec {
    int64_t start_ns = 0;
    int64_t duration_ns = 0;
    int32_t node = 0;
    int32_t device = 0;
  };
  struct StepData {
    int64_t file = -1;  // the last file that added to it (BeginFile)
    std::vector<Exec> execs;
    // Memory and outputs by execution index.
    absl::flat_hash_map<uint32_t, std::unique_ptr<ExecMemoryRecord>> details;
    absl::flat_hash_map<int32_t, uint32_t> first_canonical;
  };

 private:
  struct NodeInfo {
    std::string name;
    int32_t op = 0;                 // ops_
    int32_t canonical_device = -1;  // devices_, see ClaimCanonicalDevice
    bool on_canonical = false;
    bool on_stream_all = false;
    // Inputs, each as a 4-byte length and the bytes.
    std::string inputs;
    std::unique_ptr<std::vector<Frame>> code;
    // String attributes (made on the first one: few nodes have any).
    std::unique_ptr<std::vector<std::pair<std::string, std::string>>> attrs;
  };
  struct FloatOps {
    int64_t sum = 0;
    int64_t runs = 0;
    int64_t first = 0;
    bool uneven = false;
  };
  struct CostSum {
    int64_t pytorch = 0, bytes = 0, runs = 0;
    int64_t by_dtype[8] = {};  // float ops (or runs) by Dtype
  };

  int32_t Op(absl::string_view op);
  int32_t Device(const std::string& device);
  // A node's op type for the model ("" becomes its name).
  const std::string& OpOf(const NodeInfo& info) const {
    return info.op == 0 ? info.name : ops_.Get(info.op);
  }
  // A node's float ops per run; 0 when none were recorded.
  int64_t FloatOpsPerRun(int32_t node) const;
  // Calls fn(device, node, record) for the step's executions, grouped by
  // device in the order of each device's first execution (a RunMetadata's
  // order), in microseconds: starts rounded and shifted (Finish()), and
  // each (node, device)'s durations rounded as their running total.
  // `by_node`: each node's executions together instead, in that order, each
  // record's `place` its place in the device order.
  template <typename Fn>
  void WalkStep(StepData* data, bool by_node, Fn fn);
  // Each node's mean costs into the activity record, by name (TF1Name'd).
  void AddNodeCosts(bool tf1_names);
  // Frees the nodes (after WriteNodes, or the last step of the export).
  void FreeNodes();
  // Frees everything but the notes (after the last step).
  void FreeAfterLastStep();

  // Hashes and compares node indices by their names, and names with
  // indices (heterogeneous lookup), so that the index holds 4 bytes a node.
  struct NameOfNode {
    const std::deque<NodeInfo>* nodes = nullptr;
    std::string_view operator()(int32_t i) const { return (*nodes)[i].name; }
  };
  using NodesByName = NameKeyed<int32_t, NameOfNode>;

  std::deque<NodeInfo> nodes_;
  // The nodes by name (until WriteNodes frees the names).
  NodesByName::Set by_name_ = NodesByName::Make(NameOfNode{&nodes_});
  absl::flat_hash_map<std::string, int32_t> by_name_and_op_;
  StringTable ops_;  // op types, "" first
  StringTable devices_;
  // Per device, its kind (classified once: the model is told it).
  std::vector<DeviceKind> device_kind_;
  absl::flat_hash_map<int32_t, FloatOps> flops_;
  std::map<int32_t, CostSum> costs_;
  int64_t retyped_ = 0;
  std::map<int64_t, std::unique_ptr<StepData>> steps_;
  std::vector<std::string> notes_;
  struct Counted {
    std::string file;
    std::string what;
    int64_t n = 0;
  };
  std::vector<Counted> counts_;
  absl::flat_hash_map<std::pair<std::string, std::string>, size_t> count_index_;
  Activity activity_;
  std::vector<GraphNode*> model_nodes_;  // by node index, from WriteNodes
  bool nodes_written_ = false;           // by WriteNodes (then freed)
  int64_t min_start_ns_ = INT64_MAX;
  int64_t num_execs_ = 0;
  int64_t file_ = 0;              // BeginFile
  std::vector<int64_t> touched_;  // steps file_ added to
  size_t expected_execs_ = 0;     // ExpectExecs
  TraceFormat format_ = TraceFormat::kTfTimeline;
  int64_t shift_ = 0;
};

// The memory of one execution: what was allocated and freed while it ran,
// per allocator (live bytes, peak, total allocated, and one allocation
// record each), written into the execution's details on first use.
class ExecMemory {
 public:
  ExecMemory(TraceBuilder* builder, TraceBuilder::ExecRef exec)
      : builder_(builder), exec_(exec) {}
  // `bytes` allocated (> 0) or freed (< 0) on `allocator` at `micros`;
  // `in_use`: the allocator's bytes in use then, where recorded.
  void Record(const std::string& allocator, int64_t bytes, int64_t micros,
              std::optional<int64_t> in_use);

 private:
  TraceBuilder* builder_;
  TraceBuilder::ExecRef exec_;
  ExecMemoryRecord* record_ = nullptr;  // made for the first record
  // This execution's allocators: live bytes, and where in record_.
  struct Live {
    std::string allocator;
    int64_t bytes = 0;
    size_t index = 0;
  };
  std::vector<Live> live_;
};

}  // namespace trace_internal
}  // namespace tfprof

#endif  // TFPROF_PROFILER_IMPORTERS_COMMON_TRACE_BUILDER_H_
