// The one way into a Model (its only friend): nodes (with inputs,
// attributes, float ops and call stacks), devices, and each step's
// executions with their memory, in plain records. The trace importers write
// through it directly; the TF1 readers (Model::AddGraph, AddRunMeta) turn
// their messages into the same calls; the ProfileProto decoder, whose
// records are already per node and step, uses its bulk part.
#ifndef TFPROF_PROFILER_MODEL_MODEL_BUILDER_H_
#define TFPROF_PROFILER_MODEL_MODEL_BUILDER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "profiler/base/device.h"
#include "profiler/model/activity.h"
#include "profiler/model/model.h"

namespace tfprof {

// What one allocator recorded while an execution ran.
struct AllocatorRecord {
  std::string allocator;
  int64_t total_bytes = 0;   // allocated in all
  int64_t peak_bytes = 0;    // the most live at once
  int64_t live_bytes = 0;    // still live at the end
  int64_t bytes_in_use = 0;  // the allocator's own figure, 0 if unknown
  std::vector<Allocation> allocations;  // in the order they happened
};

// One output tensor of an execution.
struct OutputRecord {
  int32_t slot = 0;
  int64_t bytes = 0;  // the larger of the allocated and requested bytes
  uint64_t ptr = 0;
};

// The memory of one execution (what TensorFlow's NodeExecStats carries).
struct ExecMemoryRecord {
  std::vector<AllocatorRecord> allocators;
  std::vector<OutputRecord> outputs;
  bool has_memory_stats = false;
  int64_t temp_bytes = 0;
  int64_t persistent_bytes = 0;

  bool empty() const {
    return allocators.empty() && outputs.empty() && !has_memory_stats;
  }
};

// One execution of a node on a device, in microseconds. A start <= 0 is no
// time (tfprof ignores such executions' times and memory).
struct ExecRecord {
  int64_t start_micros = 0;
  int64_t duration_micros = 0;     // the op's own end, relative to its start
  int64_t all_end_rel_micros = 0;  // the end with its outputs, >= 0
  const ExecMemoryRecord* memory = nullptr;  // null: none
  // TensorFlow inputs' GPU stream records only: the stat's node name as
  // written ("<node>:<OpType>", "MEMCPY...") and its timeline label.
  std::string_view raw_name;
  std::string_view label;
  // Where the execution comes in its step, when a step's executions are
  // given out of their order (node by node, say): the order of the step's
  // accelerator work records. -1: in the order given.
  int64_t place = -1;
};

// One frame of a call stack as the builder takes it.
struct CodeLocation {
  std::string_view file;
  std::string_view function;
  int32_t lineno = 0;
};

class ModelBuilder {
 public:
  explicit ModelBuilder(Model* model) : model_(model) {}
  ModelBuilder(const ModelBuilder&) = delete;
  ModelBuilder& operator=(const ModelBuilder&) = delete;

  Model& model() { return *model_; }

  // --- Nodes
  // The node named `name`; a new one (op type `op`) if there is none.
  // `*created` (when given) says which.
  GraphNode* Node(std::string_view name, std::string_view op,
                  bool* created = nullptr);
  // Sets the inputs of a node that has none: "name", "name:slot" or
  // "^name" (a control input), in order. Each refers to the node of that
  // name when one exists, so add the nodes first.
  void SetInputs(GraphNode* node, const std::vector<std::string_view>& in);
  // Sets a node's string attributes (a node that has none yet).
  void SetStringAttrs(
      GraphNode* node,
      const std::vector<std::pair<std::string, std::string>>& attrs);
  // Adds an op type to a node's types.
  void AddOpType(GraphNode* node, std::string_view type);
  // The float ops of one run (0: unknown, nothing set).
  void SetFloatOps(GraphNode* node, int64_t per_run);
  // Gives a node a call stack (outermost frame first) if it has none.
  void SetCode(GraphNode* node, const std::vector<CodeLocation>& frames);
  // Everything else a trace recorded (steps' spans, accelerator work, memory
  // in use, node costs); after the nodes, which its costs name.
  void SetActivity(Activity activity) {
    model_->set_activity(std::move(activity));
  }

  // --- Devices: an id for a device name, classified once: as `kind` where
  // the caller has classified it already (a trace importer), else here.
  int32_t Device(std::string_view device,
                 std::optional<DeviceKind> kind = std::nullopt);

  // --- Steps: BeginStep, the step's executions, EndStep; one step at a time.
  void BeginStep(int64_t step);
  // Marks a device as used in the step (AddExec does too): a step that
  // places work on an accelerator and has no "stream:all" lane misses the
  // accelerator streams (Model::miss_accelerator_stream()).
  void DeviceInStep(int32_t device);
  // One execution of `node` (null: a runtime bookkeeping entry, which only
  // widens the step's span). `covered`: the node counts as a graph node
  // that ran (run_coverage()).
  void AddExec(GraphNode* node, int32_t device, const ExecRecord& exec,
               bool covered = true);
  // Stores a node's record for the step now: it has no more executions in
  // it (else EndStep stores every node's). Keeps a big step's pending
  // records to one node's.
  void FlushNode(GraphNode* node);
  void EndStep();

  // --- Bulk: a decoder of the model's own saved form (a ProfileProto), whose
  // records are already per node and step (ExecDetail), made on two
  // threads: nodes made apart and adopted at the end.
  StringTable* strings() { return &model_->strings_; }
  void SetHasCodeTraces(bool has) { model_->has_code_traces_ = has; }
  void AddStep(int64_t step) { model_->steps_.insert(step); }
  void SetIdString(int64_t id, std::string s) {
    model_->id_to_string_[id] = std::move(s);
  }
  void SetMissAcceleratorStream(bool miss) {
    model_->miss_accelerator_stream_ = miss;
  }
  // A node's step record (see Model::StoreExec; `ids`: the thread's way
  // into the strings of the model that will own it).
  void StoreDetail(const ExecDetail& detail, StepExec* exec,
                   SharedInterner* ids) {
    model_->StoreExec(detail, exec, ids);
  }
  // A node's step record written by a decoder directly (`encoder` closed;
  // its device ids from the model's strings).
  void StoreEncoded(const DetailEncoder& encoder, StepExec* exec) {
    model_->StoreEncoded(encoder, exec);
  }
  // Takes the records `other` stored (its nodes are adopted one by one).
  void TakeRecords(Model* other);
  // Adopting `n` nodes: ReserveNames(n), then the nodes' names (a name's
  // first claim holds it: ClaimName returns the node that does), then
  // AdoptNodes(n) and each kept node at its place (from any thread, one
  // place each), then Adopted().
  void ReserveNames(size_t n) { model_->by_name_.reserve(n); }
  GraphNode* ClaimName(GraphNode* node) {
    return *model_->by_name_.insert(node).first;
  }
  void AdoptNodes(size_t n) { model_->nodes_.resize(n); }
  void Adopt(size_t index, std::unique_ptr<GraphNode> node) {
    node->index = index;
    model_->nodes_[index] = std::move(node);
  }
  void Adopted();
  // After Adopted(): the model's nodes in name order (Model::SortByName's),
  // for the model to keep rather than sort them at the first query. Ignored
  // unless it holds as many nodes as the model.
  void SetNameOrder(std::vector<const GraphNode*> order);

 private:
  struct DeviceInfo {
    std::string name;  // lower case
    DeviceKind kind = DeviceKind::kOther;
    bool accelerator = false;
  };

  // The execution's times and memory into its node's pending record.
  void Record(GraphNode* node, const DeviceInfo& dev, const ExecRecord& exec);
  // A TensorFlow GPU stream record as accelerator work (Activity).
  void StreamWork(const GraphNode* graph_node, const DeviceInfo& dev,
                  const ExecRecord& exec);

  Model* model_;
  std::vector<DeviceInfo> devices_;
  absl::flat_hash_map<std::string, int32_t> device_ids_;
  absl::flat_hash_map<std::string, int64_t> string_ids_;  // call stacks'
  int64_t next_string_id_ = 0;
  // The step being written.
  int64_t step_ = 0;
  bool has_gpu_scheduling_ = false;
  bool has_gpu_stream_ = false;
  absl::flat_hash_map<GraphNode*, ExecDetail> pending_;
  // The step's accelerator work, each with its place in the step.
  std::vector<std::pair<int64_t, DeviceWork>> work_;
};

}  // namespace tfprof

#endif  // TFPROF_PROFILER_MODEL_MODEL_BUILDER_H_
