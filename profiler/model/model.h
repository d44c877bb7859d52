// The in-memory stats model: one GraphNode per graph (or trace) node, with
// its per-step execution records. Independent of how the data was loaded:
// GraphDef + RunMetadata, a ProfileProto, or other trace formats all feed the
// same structures.
//
// Thread rules: building a model (Add*, set_*, moving it) is one thread's
// job, with no reader running. Once built, any number of threads may read
// it at once through its const methods: the indexes built on first use
// (NodesByName, KernelStreams) are built under their own locks and then
// only read.
#ifndef TFPROF_PROFILER_MODEL_MODEL_H_
#define TFPROF_PROFILER_MODEL_MODEL_H_

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "absl/status/statusor.h"
#include "profiler/base/device.h"
#include "profiler/base/name_keyed.h"
#include "profiler/base/protos.h"
#include "profiler/base/saturate.h"
#include "profiler/model/activity.h"
#include "profiler/model/string_table.h"

namespace tfprof {

// The name of the synthetic root node of every view.
inline constexpr char kRootName[] = "_TFProfRoot";
// Op type given to the scope view's intermediate name-scope nodes.
inline constexpr char kScopeParentType[] = "_kTFScopeParent";
// Op type given to the graph view's root.
inline constexpr char kGraphParentType[] = "_TFGraphParent";
// The node attribute that holds a node's HLO category when it is an
// instruction of an XLA program ("fusion(kLoop)", "custom-call(<target>)",
// "command_buffer"); the op view groups by it with -op_group hlo.
inline constexpr char kXlaCategoryAttr[] = "_xla_category";
// Op type given to nodes that have a variable in the checkpoint.
inline constexpr char kCheckpointVariableType[] = "_checkpoint_variables";

// A TensorShapeProto as a vector of dims; a scalar with known rank is {1}, an
// unknown rank is {}.
std::vector<int64_t> ShapeToVec(const tfcore::TensorShapeProto& shape);

struct TimeInterval {
  int64_t start_micros = 0;
  int64_t duration_micros = 0;
};

struct TimeSpan {
  int64_t start_micros = 0;
  int64_t end_micros = 0;
};

struct DeviceTimes {
  std::string_view device;  // interned: valid as long as the model
  std::vector<TimeInterval> times;
};

struct OutputMemory {
  int32_t slot = 0;
  int64_t bytes = 0;
  uint64_t ptr = 0;
};

// Memory of one execution of a node (while loops execute a node many times).
struct MemoryExec {
  int64_t memory_micros = 0;
  int64_t host_temp_bytes = 0;
  int64_t host_persistent_bytes = 0;
  int64_t accelerator_temp_bytes = 0;
  int64_t accelerator_persistent_bytes = 0;
  int64_t requested_bytes = 0;
  int64_t peak_bytes = 0;
  int64_t residual_bytes = 0;
  int64_t output_bytes = 0;
  int64_t allocator_bytes_in_use = 0;
  std::vector<OutputMemory> output_memory;  // sorted by slot
};

// MemoryExec's numbers in the order of ExecMemory's field numbers (1-10).
inline constexpr int kMemoryExecFields = 10;
inline constexpr int64_t MemoryExec::*kMemoryExecField[kMemoryExecFields] = {
    &MemoryExec::memory_micros,
    &MemoryExec::host_temp_bytes,
    &MemoryExec::host_persistent_bytes,
    &MemoryExec::accelerator_temp_bytes,
    &MemoryExec::accelerator_persistent_bytes,
    &MemoryExec::requested_bytes,
    &MemoryExec::peak_bytes,
    &MemoryExec::residual_bytes,
    &MemoryExec::output_bytes,
    &MemoryExec::allocator_bytes_in_use};

struct Allocation {
  int64_t alloc_micros = 0;
  int64_t alloc_bytes = 0;  // negative: a deallocation
};

// The detailed records of one node in one step: what timelines, the memory
// tracker and ProfileProto output need. The model keeps them compactly
// encoded (see Model::Detail); queries use the sums in StepExec instead.
struct ExecDetail {
  int64_t all_start_micros = 0;                // the earliest start (0: none)
  int64_t latest_end_micros = 0;               // the latest end
  std::vector<DeviceTimes> accelerator_execs;  // sorted by device
  std::vector<DeviceTimes> cpu_execs;          // sorted by device
  std::vector<MemoryExec> memory_execs;
  std::vector<Allocation> allocations;
  std::vector<std::string_view> devices;  // sorted, unique
  // Times on devices that count no time in tfprof's statistics (memcpy
  // lanes, single GPU streams, ...), kept for the advisor. From RunMetadata
  // only: a ProfileProto does not carry them.
  std::vector<DeviceTimes> other_execs;  // sorted by device

  void Clear();
};

// Everything recorded for one node in one step: what queries need, and
// the rest encoded (72 bytes a step: the largest part of a big model).
struct StepExec {
  int64_t step = 0;
  int64_t run_count = 0;

  // Sums over the detailed records.
  int64_t accelerator_micros = 0;
  int64_t cpu_micros = 0;
  int64_t requested_bytes = 0;
  int64_t peak_bytes = 0;
  int64_t residual_bytes = 0;
  int64_t output_bytes = 0;

  // The encoded ExecDetail (a varint length, then the bytes), owned by the
  // model; null when there is nothing to record.
  const uint8_t* detail = nullptr;

  int64_t exec_micros() const { return SatAdd(accelerator_micros, cpu_micros); }
};

// The statistics of one node for one query step.
struct NodeStats {
  int64_t run_count = 0;
  int64_t exec_micros = 0;
  int64_t accelerator_exec_micros = 0;
  int64_t cpu_exec_micros = 0;
  int64_t requested_bytes = 0;
  int64_t peak_bytes = 0;
  int64_t residual_bytes = 0;
  int64_t output_bytes = 0;
  int64_t parameters = 0;
  int64_t float_ops = 0;

  // Divides the figures that add up over runs (counts, times, bytes, float
  // ops; not parameters) by n > 0, rounding toward zero as tfprof does, or
  // to the nearest integer (halves away from zero).
  void DivideBy(int64_t n, bool nearest = false);
};

// One frame of a Python call stack, resolved to strings.
struct CodeFrame {
  std::string file;
  std::string function;
  std::string line;  // source text, old profiles only
  int32_t lineno = 0;
  int32_t func_start_line = 0;
};

// A node's op types: a sorted set of strings interned in the model.
class OpTypes {
 public:
  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = std::string;
    using difference_type = std::ptrdiff_t;
    using pointer = const std::string*;
    using reference = const std::string&;
    explicit const_iterator(const std::string* const* p) : p_(p) {}
    const std::string& operator*() const { return **p_; }
    const std::string* operator->() const { return *p_; }
    const_iterator& operator++() {
      ++p_;
      return *this;
    }
    bool operator==(const const_iterator& o) const { return p_ == o.p_; }
    bool operator!=(const const_iterator& o) const { return p_ != o.p_; }

   private:
    const std::string* const* p_;
  };
  const_iterator begin() const { return const_iterator(data()); }
  const_iterator end() const { return const_iterator(data() + size()); }
  size_t size() const {
    return !many_.empty() ? many_.size() : one_ != nullptr ? 1 : 0;
  }
  bool empty() const { return one_ == nullptr; }
  bool count(std::string_view t) const;
  // `interned` must outlive the node (the model's string table).
  void insert(const std::string* interned);

 private:
  const std::string* const* data() const {
    return many_.empty() ? &one_ : many_.data();
  }
  // Most nodes have one type, kept in place; two or more are all in
  // `many_` (sorted), and `one_` stays the first of them.
  const std::string* one_ = nullptr;
  std::vector<const std::string*> many_;
};

class DetailEncoder;  // detail_encoder.h

// One input of a node (GraphDef order, control inputs included).
class GraphNode;

struct NodeInput {
  int32_t index = 0;
  // The output slot TensorFlow looks up for this input's name (its
  // src_output_index, which keeps one slot per input name); -1 if unknown.
  int32_t slot = -1;
  const std::string* name = nullptr;  // owned by the model
  // The input's node, when it existed as the input was added (else null:
  // Model::InputNode looks the name up).
  const GraphNode* node = nullptr;
};

// Tensor shapes by slot, sorted by slot.
using ShapeList = std::vector<std::pair<int32_t, std::vector<int64_t>>>;

// What only some nodes have: graphs' shapes and attributes, call stacks.
// Held apart from the node, so that the many nodes of a trace that have
// none of it stay small.
struct NodeDetails {
  ShapeList output_shapes;
  // Input shapes as stored in a ProfileProto (only written back, never shown:
  // shown input shapes are derived from the inputs' output shapes).
  ShapeList stored_input_shapes;
  // The attributes, serialized as a ProfileNode holding only its attrs map
  // (decoded on demand: few queries need them).
  std::string attrs;
  // The call stack as a serialized CodeDef; empty when there is none.
  std::string code;
};

class GraphNode {
 public:
  int64_t id = 0;
  size_t index = 0;  // position in Model::nodes()
  std::string name;
  std::string op;
  // Devices, interned in the model ("" when unknown).
  const std::string& canonical_device() const { return *canonical_device_; }
  const std::string& host_device() const { return *host_device_; }
  int64_t float_ops = 0;  // per run, from the op log
  // Traces with shapes (PyTorch): per run, the float ops by PyTorch's own
  // with_flops rule (-1: none recorded, the same as float_ops), the bytes
  // the counted computation reads and writes (0: unknown), and the element
  // type of its float ops.
  int64_t pytorch_float_ops = -1;
  int64_t cost_bytes = 0;
  Dtype dtype = Dtype::kUnknown;
  // Float ops per run by PyTorch's rule, or by the extended (default) one.
  int64_t FloatOpsPerRun(bool pytorch_rule) const {
    return pytorch_rule && pytorch_float_ops >= 0 ? pytorch_float_ops
                                                  : float_ops;
  }
  std::vector<int64_t> shape;  // from the "shape" attr (variables)
  OpTypes op_types;
  std::vector<NodeInput> inputs;  // sorted by index
  // The facts a node may lack (see NodeDetails); mutable_*() makes room for
  // them on first use.
  const ShapeList& output_shapes() const { return Details().output_shapes; }
  ShapeList* mutable_output_shapes() { return &MutableDetails().output_shapes; }
  const ShapeList& stored_input_shapes() const {
    return Details().stored_input_shapes;
  }
  ShapeList* mutable_stored_input_shapes() {
    return &MutableDetails().stored_input_shapes;
  }
  const std::string& attrs() const { return Details().attrs; }
  std::string* mutable_attrs() { return &MutableDetails().attrs; }
  const std::string& code() const { return Details().code; }
  std::string* mutable_code() { return &MutableDetails().code; }
  std::vector<StepExec> execs;  // sorted by step
  // For -step -1: 0, tfprof's mean over the steps the node ran in (rounded
  // toward zero); else the mean over this many steps, rounded to the
  // nearest (traces: every step of the capture, so that nodes add up to
  // the mean step, as the framework's per-step figures do).
  int64_t mean_over_steps = 0;

  const StepExec* FindExec(int64_t step) const;
  // Set from a string interned in the node's model.
  void set_canonical_device(const std::string* d) { canonical_device_ = d; }
  void set_host_device(const std::string* d) { host_device_ = d; }
  const std::vector<int64_t>* OutputShape(int32_t slot) const;
  std::optional<tfcore::AttrValue> FindAttr(std::string_view key) const;
  std::map<std::string, tfcore::AttrValue> Attrs() const;
  static const std::string* EmptyString();

  // Stats for a step; step < 0 averages over the steps this node ran in
  // (integer division, as tfprof does).
  NodeStats Stats(int64_t step) const;
  // Product of the shape dims; 0 if any dim is unknown.
  int64_t Parameters() const;

 private:
  const NodeDetails& Details() const {
    return details_ != nullptr ? *details_ : NoDetails();
  }
  NodeDetails& MutableDetails() {
    if (details_ == nullptr) details_ = std::make_unique<NodeDetails>();
    return *details_;
  }
  static const NodeDetails& NoDetails();

  const std::string* canonical_device_ = EmptyString();
  const std::string* host_device_ = EmptyString();
  std::unique_ptr<NodeDetails> details_;
};

// Whether a device (an interned, lower-case device name) is kept.
using DeviceFilter = std::function<bool(std::string_view device)>;

// What wrote a profile's inputs, for advice that applies to one framework:
// TensorFlow (ProfileProto, GraphDef + RunMetadata, TF timelines), PyTorch
// (Kineto traces) or a TF2/JAX profiler capture (XSpace).
enum class ProfileSource { kTensorFlow, kPyTorch, kXSpace };

class Model {
 public:
  Model();
  Model(Model&&) noexcept;
  Model& operator=(Model&&) noexcept;
  ~Model();

  // The TF1 inputs. AddGraph and AddRunMeta read through ModelBuilder
  // (model_builder.h), which is how everything else (trace importers)
  // writes a model; AddOpLog merges into the nodes directly.
  // Adds the nodes of a graph that are not present yet, with their inputs,
  // shapes and attributes.
  void AddGraph(const tfcore::GraphDef& graph);
  // Adds one step of RunMetadata. Fails (and changes nothing) when it has no
  // step stats.
  absl::Status AddRunMeta(int64_t step, const tfcore::RunMetadata& run_meta);
  // Merges op types, float ops and call stacks of an op log.
  void AddOpLog(const tfpb::OpLogProto& op_log);
  // Marks the nodes that have a variable in a checkpoint.
  void AddCheckpointVariables(const std::vector<std::string>& names);

  // (The other way: ModelFromProfileProto in load/profile_reader.h.)
  tfpb::ProfileProto ToProfileProto() const;
  // ToProfileProto's bytes with every map in key order: the same model
  // always serializes to the same bytes (what `save` writes).
  std::string SerializedProfileProto() const;

  size_t size() const { return nodes_.size(); }
  const GraphNode* Find(std::string_view name) const;
  // The node an input reads, or null when its name is no node's.
  const GraphNode* InputNode(const NodeInput& in) const {
    return in.node != nullptr ? in.node : Find(*in.name);
  }
  // All nodes in name order.
  const std::vector<const GraphNode*>& NodesByName() const;
  // Whether that order is made already (a ProfileProto load makes it).
  bool HasNameOrder() const { return sorted_.valid.load(); }
  // Sorts nodes by name (NodesByName's order; of equal names, any order),
  // on both cores when `parallel` and there are many.
  static void SortByName(std::vector<const GraphNode*>* nodes, bool parallel);
  // All nodes in insertion (id) order.
  const std::vector<std::unique_ptr<GraphNode>>& nodes() const {
    return nodes_;
  }

  // The detailed records of a node's step.
  ExecDetail Detail(const StepExec& exec) const;
  void DetailInto(const StepExec& exec, ExecDetail* out) const;

  const std::set<int64_t>& steps() const { return steps_; }
  // Each RunMetadata step's span: its first execution start to its last
  // execution end (all_end_rel, or op_end_rel when later), over every node
  // stat with a start (bookkeeping entries and nodes of no graph included).
  // Not kept by a ProfileProto.
  const std::map<int64_t, TimeSpan>& run_spans() const { return run_spans_; }
  const std::map<int64_t, std::string>& id_to_string() const {
    return id_to_string_;
  }
  bool has_code_traces() const { return has_code_traces_; }
  // kTensorFlow unless a trace importer says otherwise (a ProfileProto does
  // not record it).
  ProfileSource source() const { return source_; }
  void set_source(ProfileSource source) { source_ = source; }
  // How many ranks' traces the model holds (1 unless set): the views show
  // the mean per rank, their sum divided by this.
  int64_t ranks() const { return ranks_; }
  void set_ranks(int64_t ranks) { ranks_ = std::max<int64_t>(ranks, 1); }
  // Makes -step -1 the mean over all of the model's steps for every node
  // (GraphNode::mean_over_steps): for traces, once their steps are added.
  void MeanOverAllSteps();
  // Whether it did (the kernel view then divides by every step too).
  bool means_over_all_steps() const { return mean_over_all_steps_; }
  // What a trace recorded beyond the node statistics (empty for other
  // inputs).
  const Activity& activity() const { return activity_; }
  // Also gives the nodes the costs it records (NodeCost).
  void set_activity(Activity activity);
  // The GPU streams the accelerator work a node launched ran on (activity
  // string ids, sorted); empty for none. Indexed on first use.
  const std::vector<uint32_t>& KernelStreams(const GraphNode& node) const;
  bool miss_accelerator_stream() const { return miss_accelerator_stream_; }
  // Share of graph nodes that appeared in some RunMetadata.
  double run_coverage() const;
  // Changes whenever nodes are added (views cache their structures on it).
  uint64_t generation() const { return generation_; }
  // Changes whenever anything is added: nodes, steps, op logs, checkpoint
  // types (views cache statistics on it).
  uint64_t version() const { return version_; }

  // A node's stats counting only what ran on kept devices: CPU and
  // accelerator time on kept devices, runs on kept CPU devices, memory and
  // parameters when the node is placed on a kept device; for step < 0
  // averaged over the steps with anything kept (GraphNode::Stats' rule).
  // With every device kept, equal to node.Stats(step) for RunMetadata input.
  NodeStats StatsOn(const GraphNode& node, int64_t step,
                    const DeviceFilter& keep) const;

  // The call stack of a node, resolved; empty if it has none.
  std::vector<CodeFrame> CallStack(const GraphNode& node) const;

  // Bytes held by the detailed step records (for the benchmark).
  size_t detail_bytes() const { return arena_used_; }

 private:
  friend class ModelBuilder;  // the one way in (model_builder.h)

  GraphNode* FindMutable(std::string_view name);
  GraphNode* NewNode(const std::string& name, const std::string& op);
  void AddOpType(GraphNode* node, std::string_view type) {
    node->op_types.insert(strings_.Intern(type));
  }
  // Encodes `detail` into the arena and stores it and its sums in `exec`.
  // Device ids come from `ids` when set (a decoder on another thread
  // interning into the model that will own the record), else from strings_.
  void StoreExec(const ExecDetail& detail, StepExec* exec,
                 SharedInterner* ids = nullptr);
  // Stores the record `encoder` closed as exec's detail.
  void StoreEncoded(const DetailEncoder& encoder, StepExec* exec);
  // Writes `body` into the arena after its varint length; returns where.
  const uint8_t* StoreFramed(std::string_view body);

  std::vector<std::unique_ptr<GraphNode>> nodes_;
  // The nodes by name: one pointer per node, hashed and compared by the
  // name, which stays in the node.
  struct NameOfNode {
    std::string_view operator()(const GraphNode* n) const { return n->name; }
  };
  NameKeyed<GraphNode*, NameOfNode>::Set by_name_;
  // NodesByName's order, built on first use after nodes were added (or
  // given by ModelBuilder::SetNameOrder). Moved with the nodes it points
  // to.
  struct SortedIndex {
    SortedIndex() = default;
    SortedIndex(SortedIndex&& o) noexcept { *this = std::move(o); }
    SortedIndex& operator=(SortedIndex&& o) noexcept {
      if (this == &o) return *this;
      valid.store(o.valid.load());
      nodes = std::move(o.nodes);
      o.valid.store(false);
      o.nodes.clear();
      return *this;
    }
    std::mutex mutex;
    std::atomic<bool> valid{false};
    std::vector<const GraphNode*> nodes;
  };
  mutable SortedIndex sorted_;
  StringTable strings_;
  struct ArenaChunk {
    std::unique_ptr<uint8_t[]> data;
    size_t size = 0;
    size_t used = 0;
  };
  std::vector<ArenaChunk> arena_;
  size_t arena_used_ = 0;
  std::unique_ptr<DetailEncoder> encoder_;  // StoreExec's, made at first use
  std::set<int64_t> steps_;
  std::map<int64_t, TimeSpan> run_spans_;
  std::map<int64_t, std::string> id_to_string_;
  // The ids of the nodes that ran on a canonical device.
  absl::flat_hash_set<int64_t> covered_ids_;
  bool has_code_traces_ = false;
  ProfileSource source_ = ProfileSource::kTensorFlow;
  int64_t ranks_ = 1;
  bool mean_over_all_steps_ = false;
  Activity activity_;
  // KernelStreams' index (node index -> streams), built for `version`; a
  // moved model builds it again.
  struct StreamIndex {
    StreamIndex() = default;
    StreamIndex(StreamIndex&&) noexcept {}
    StreamIndex& operator=(StreamIndex&&) noexcept {
      version = 0;
      streams.clear();
      return *this;
    }
    std::mutex mutex;
    uint64_t version = 0;
    absl::flat_hash_map<size_t, std::vector<uint32_t>> streams;
  };
  mutable StreamIndex stream_index_;
  bool miss_accelerator_stream_ = false;
  uint64_t generation_ = 0;
  uint64_t version_ = 1;
};

}  // namespace tfprof

#endif  // TFPROF_PROFILER_MODEL_MODEL_H_
