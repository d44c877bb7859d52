// The result tree a view returns for one query. Renderers (text, proto,
// JSON, timeline, pprof) turn it into output; views never print.
#ifndef TFPROF_PROFILER_VIEWS_RESULT_H_
#define TFPROF_PROFILER_VIEWS_RESULT_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "profiler/base/protos.h"
#include "profiler/model/model.h"
#include "profiler/views/options.h"

namespace tfprof {

enum class ViewKind { kScope, kGraph, kOp, kCode, kKernel };

const char* ViewName(ViewKind view);
// The view called `name` ("scope", ...), or nullopt.
std::optional<ViewKind> ViewNamed(const std::string& name);
// The flat views, whose rows group graph nodes: op (by type) and kernel (by
// the kernels the nodes launched).
inline bool IsFlatView(ViewKind view) {
  return view == ViewKind::kOp || view == ViewKind::kKernel;
}

// Totals of a node: its own stats plus those of the descendants that count
// under the view's accounting rule.
struct Totals {
  int64_t definition_count = 0;
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

  void Add(const Totals& o);
  void AddSelf(const NodeStats& s);
};

// A graph node inside an op-type (op view) or code-line (code view) node.
struct MemberNode {
  const GraphNode* node = nullptr;  // valid while the Model lives
  NodeStats stats;

  const std::string& name() const { return node->name; }
  // The canonical device, may be empty.
  const std::string& device() const { return node->canonical_device(); }
};

// A checkpoint tensor as shown: the proto TensorFlow returns and its text.
struct TensorValue {
  tfpb::TFProfTensorProto proto;
  std::string text;
};

// What the kernel view knows of one kernel name, over the launches in the
// query's steps (not averaged).
struct KernelFacts {
  int64_t launches = 0;
  int64_t total_ns = 0;
  int64_t min_ns = 0;
  int64_t max_ns = 0;
  std::vector<std::string> streams;  // where it ran, sorted
  std::vector<std::string> launch;   // launch dimensions as recorded, sorted
  int64_t unlinked_launches = 0;     // launches of no known op
  // What the launches and durations above are summed over: the query's
  // steps (1 for -step N) and the job's ranks. The row's own figures are
  // these sums divided by steps * ranks.
  int64_t steps = 1;
  int64_t ranks = 1;
};

// A kernel's mean launch, rounded to the nearest nanosecond (0 when none).
inline int64_t KernelMeanNanos(const KernelFacts& k) {
  return k.launches > 0 ? (k.total_ns + k.launches / 2) / k.launches : 0;
}

// Float-op figures of an op or kernel row, for -select
// accelerator_flop_rate, arithmetic_intensity and roofline (views/flops.h).
struct FlopFacts {
  // Bytes the row's counted computations read and write, and the element
  // type of most of their float ops (per step, as the row's stats).
  int64_t bytes = 0;
  Dtype dtype = Dtype::kUnknown;
  double flop_rate = -1;  // float ops / accelerator time, FLOP/s; <0 n/a
  // The accelerator time the rate divides, per step: an op row's nodes
  // that have float ops (its others' time is no part of the computation
  // counted); a kernel row's whole time.
  int64_t rate_micros = 0;
  double intensity = -1;      // FLOP per byte; <0 n/a
  double roof = 0;            // attainable FLOP/s at that intensity; 0 n/a
  double peak = 0;            // the dtype's compute peak (one device)
  bool memory_bound = false;  // the roof is bandwidth x intensity
  double roof_fraction = -1;  // flop_rate / roof; <0 n/a
  // Kernel rows: float ops split from ops that launched several kernels.
  bool split = false;
};

struct ResultNode {
  std::string name;
  // False for nodes that only hold accounted descendants; their own stats
  // print as "--".
  bool account = false;
  NodeStats self;
  Totals total;
  // The op type of a synthetic node (scope parents, the root); a constant.
  const char* fixed_type = "";
  std::vector<MemberNode> members;  // op/code: graph nodes, by name
  // Code view, displayed leaves only: the graph nodes of all true leaves
  // below (in tree order), for pprof samples.
  std::vector<MemberNode> leaf_members;
  // Checkpoint value (scope/graph with -select tensor_value).
  std::shared_ptr<const TensorValue> tensor;
  // Code view: the source frame of this node (null for the root).
  std::shared_ptr<const CodeFrame> frame;
  // Scope and graph views: the model node (null for synthetic nodes). Valid
  // while the Model lives.
  const GraphNode* graph_node = nullptr;
  // Kernel view rows: the kernel's launches, durations and streams.
  std::shared_ptr<const KernelFacts> kernel;
  // Op and kernel view rows, when -select asks for float-op figures.
  std::shared_ptr<FlopFacts> flops;
  std::vector<size_t> children;  // indices into ResultTree::nodes

  // Makes this row as a new one is, keeping the memory of its name and
  // lists (a recycled row, Views::Recycle, reused without allocating).
  void Reset();
};

struct ResultTree {
  ViewKind view = ViewKind::kScope;
  // The model queried; graph_node and member pointers point into it.
  const Model* model = nullptr;
  Options options;
  std::vector<ResultNode> nodes;  // nodes[0] is the root, _TFProfRoot
  // Messages for the user that are not part of the report (e.g. notes about
  // ignored options); each is one line.
  std::vector<std::string> notes;

  const ResultNode& root() const { return nodes[0]; }
};

// The runs of an op or kernel view row: the kernel's launches, or the sum
// over the row's graph nodes.
inline int64_t FlatRowRuns(const ResultNode& n) {
  if (n.kernel != nullptr) return n.self.run_count;
  int64_t runs = 0;
  for (const MemberNode& m : n.members) runs += m.stats.run_count;
  return runs;
}

// Attributes derived from the model when a result is rendered (computing
// them for every displayed node up front would cost memory for nothing).
// Devices: scope/graph: the node's canonical device, if any; op/code: the
// set of its graph nodes' canonical devices (an empty one included, as
// tfprof prints it). For traces (not TensorFlow inputs), also the GPU
// streams the nodes' kernels ran on. Sorted.
std::vector<std::string> NodeDevices(const ResultTree& tree,
                                     const ResultNode& node);
// Op types, sorted: the graph node's, the union of the members', or the
// synthetic node's fixed type.
std::vector<std::string> NodeOpTypes(const ResultTree& tree,
                                     const ResultNode& node);
// The shape of a variable (scope/graph nodes), else empty.
const std::vector<int64_t>& NodeShape(const ResultNode& node);
// Input shapes by input index (scope/graph nodes, and op/code members).
std::map<int32_t, std::vector<int64_t>> NodeInputShapes(const ResultTree& tree,
                                                        const ResultNode& node);
std::map<int32_t, std::vector<int64_t>> NodeInputShapes(
    const ResultTree& tree, const MemberNode& member);

}  // namespace tfprof

#endif  // TFPROF_PROFILER_VIEWS_RESULT_H_
