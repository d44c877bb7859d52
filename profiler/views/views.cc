#include "profiler/views/views.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <set>
#include <type_traits>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/types/span.h"
#include "profiler/base/device.h"
#include "profiler/base/large_stack.h"
#include "profiler/base/parallel.h"
#include "profiler/base/saturate.h"
#include "profiler/load/tensor_value.h"
#include "profiler/views/flops.h"
#include "profiler/views/kernels.h"
#include "profiler/views/view_structure.h"
#include "re2/re2.h"

namespace tfprof {
namespace {

using view_internal::AccountGraph;
using view_internal::AccountMulti;
using view_internal::AccountTree;
using view_internal::AddStats;
using view_internal::BuildCode;
using view_internal::BuildGraph;
using view_internal::BuildOp;
using view_internal::BuildOpHlo;
using view_internal::BuildScope;
using view_internal::Compiled;
using view_internal::QueryState;
using view_internal::Regexes;
using view_internal::SearchRoots;
using view_internal::SelectShownCode;
using view_internal::SelectShownTree;
using view_internal::SelfTotals;
using view_internal::ShouldShowMulti;
using view_internal::SortNodes;
using view_internal::Structure;
using view_internal::VNode;
using view_internal::VNodes;

// Vectors of these grow by moving; a throwing move would make them copy.
static_assert(std::is_nothrow_move_constructible_v<VNode>);
static_assert(std::is_nothrow_move_constructible_v<ResultNode>);

std::map<int32_t, std::vector<int64_t>> InputShapes(const Model& model,
                                                    const GraphNode& node) {
  std::map<int32_t, std::vector<int64_t>> shapes;
  for (const NodeInput& in : node.inputs) {
    std::vector<int64_t>& dims = shapes[in.index];
    const GraphNode* src = model.InputNode(in);
    if (src == nullptr || in.slot < 0) continue;
    const std::vector<int64_t>* shape = src->OutputShape(in.slot);
    if (shape != nullptr) dims = *shape;
  }
  return shapes;
}

}  // namespace

class ViewCache {
 public:
  Structure scope, graph, op, op_hlo, code;
  uint64_t structure_builds = 0;  // Structure::serial
  // The per-query state, reused by every query (one at a time).
  QueryState query;
  // The rows of a tree given back (Views::Recycle), for the next scope,
  // graph or code query to write over.
  std::vector<ResultNode> spare_rows;

  // Every graph node's own stats for `step` (only what ran on devices
  // matching `devices`), by GraphNode::index: computed in the model's
  // (memory) order, and kept while the model's data, the step and the
  // devices stay the same, so repeated queries do not compute them again.
  const BigVector<NodeStats>& StatsFor(const Model& model, int64_t step,
                                       const std::vector<std::string>& devices,
                                       bool pytorch_rule) {
    if (!StatsKept(model, step, devices, pytorch_rule)) {
      stats_.resize(model.size());
      devices_note_.clear();
      if (devices.size() == 1 && devices[0] == ".*") {
        for (const auto& g : model.nodes()) stats_[g->index] = g->Stats(step);
      } else {
        const Regexes res(devices);
        absl::flat_hash_map<std::string_view, bool> seen;
        const DeviceFilter keep = [&](std::string_view d) {
          auto [it, added] = seen.emplace(d, false);
          if (added) it->second = res.Any(std::string(d));
          return it->second;
        };
        bool counted = false;  // any time or run on the matched devices
        for (const auto& g : model.nodes()) {
          NodeStats& st = stats_[g->index] = model.StatsOn(*g, step, keep);
          counted = counted || st.run_count != 0 || st.exec_micros != 0;
        }
        devices_note_ = counted ? "" : DevicesNote(seen);
      }
      if (pytorch_rule) {
        // PyTorch's with_flops count where the trace has one.
        for (const auto& g : model.nodes()) {
          if (g->pytorch_float_ops < 0) continue;
          NodeStats& st = stats_[g->index];
          st.float_ops = SatMul(g->pytorch_float_ops, st.run_count);
        }
      }
      if (model.ranks() > 1) {
        // Several ranks' traces: the mean per rank.
        for (NodeStats& st : stats_)
          st.DivideBy(model.ranks(), /*nearest=*/true);
      }
      stats_valid_ = true;
      ++stats_serial_;
      stats_pytorch_rule_ = pytorch_rule;
      stats_step_ = step;
      stats_version_ = model.version();
      stats_devices_ = devices;
    }
    return stats_;
  }

  // Which computation of StatsFor() the kept statistics are.
  uint64_t stats_serial() const { return stats_serial_; }
  // A note for the user when the kept statistics' -device_regexes matched
  // no device that counts time; else empty.
  const std::string& devices_note() const { return devices_note_; }
  // Whether StatsFor() has these statistics already.
  bool StatsKept(const Model& model, int64_t step,
                 const std::vector<std::string>& devices,
                 bool pytorch_rule) const {
    return stats_valid_ && stats_step_ == step &&
           stats_pytorch_rule_ == pytorch_rule &&
           stats_version_ == model.version() && stats_.size() == model.size() &&
           stats_devices_ == devices;
  }

 private:
  // When nothing was counted: what -device_regexes matched among the
  // devices the nodes name, `seen` (device -> matched), as a note; empty
  // when a device that counts time matched (the step had nothing there).
  static std::string DevicesNote(
      const absl::flat_hash_map<std::string_view, bool>& seen) {
    if (seen.empty()) return "";  // the nodes name no devices
    std::string example;
    int matches = 0;
    for (const auto& [device, matched] : seen) {
      if (!matched) continue;
      const DeviceKind kind = KindOfDevice(device);
      if (kind == DeviceKind::kPlacement || kind == DeviceKind::kStreamAll) {
        return "";
      }
      ++matches;
      if (example.empty() || device < example) example = std::string(device);
    }
    if (example.empty()) {
      return "note: -device_regexes matches none of the devices the nodes "
             "ran on: no time or runs are counted";
    }
    return absl::StrCat(
        "note: -device_regexes matches only devices that count no time (",
        example, matches > 1 ? ", ..." : "",
        "): time counts on a GPU's .../stream:all and on placements "
        "such as .../gpu:0; the kernel view lists one stream's kernels");
  }

  BigVector<NodeStats> stats_;
  std::string devices_note_;
  std::vector<std::string> stats_devices_;
  bool stats_valid_ = false;
  bool stats_pytorch_rule_ = false;
  int64_t stats_step_ = 0;
  uint64_t stats_version_ = 0;
  uint64_t stats_serial_ = 0;  // counts the stats computed
};

const char* ViewName(ViewKind view) {
  switch (view) {
    case ViewKind::kScope:
      return "scope";
    case ViewKind::kGraph:
      return "graph";
    case ViewKind::kOp:
      return "op";
    case ViewKind::kCode:
      return "code";
    case ViewKind::kKernel:
      return "kernel";
  }
  return "?";
}

std::optional<ViewKind> ViewNamed(const std::string& name) {
  for (ViewKind v : {ViewKind::kScope, ViewKind::kGraph, ViewKind::kOp,
                     ViewKind::kCode, ViewKind::kKernel}) {
    if (name == ViewName(v)) return v;
  }
  return std::nullopt;
}

void Totals::Add(const Totals& o) {
  SatInc(&definition_count, o.definition_count);
  SatInc(&run_count, o.run_count);
  SatInc(&exec_micros, o.exec_micros);
  SatInc(&accelerator_exec_micros, o.accelerator_exec_micros);
  SatInc(&cpu_exec_micros, o.cpu_exec_micros);
  SatInc(&requested_bytes, o.requested_bytes);
  SatInc(&peak_bytes, o.peak_bytes);
  SatInc(&residual_bytes, o.residual_bytes);
  SatInc(&output_bytes, o.output_bytes);
  SatInc(&parameters, o.parameters);
  SatInc(&float_ops, o.float_ops);
}

void Totals::AddSelf(const NodeStats& s) {
  SatInc(&definition_count, 1);
  SatInc(&run_count, s.run_count);
  SatInc(&exec_micros, s.exec_micros);
  SatInc(&accelerator_exec_micros, s.accelerator_exec_micros);
  SatInc(&cpu_exec_micros, s.cpu_exec_micros);
  SatInc(&requested_bytes, s.requested_bytes);
  SatInc(&peak_bytes, s.peak_bytes);
  SatInc(&residual_bytes, s.residual_bytes);
  SatInc(&output_bytes, s.output_bytes);
  SatInc(&parameters, s.parameters);
  SatInc(&float_ops, s.float_ops);
}

void ResultNode::Reset() {
  name.clear();
  account = false;
  self = NodeStats();
  total = Totals();
  fixed_type = "";
  // (Member lists are made anew by the views that fill them: kept, their
  // memory would only ride along in other views' rows.)
  if (members.capacity() != 0) std::vector<MemberNode>().swap(members);
  if (leaf_members.capacity() != 0) {
    std::vector<MemberNode>().swap(leaf_members);
  }
  tensor.reset();
  frame.reset();
  graph_node = nullptr;
  kernel.reset();
  flops.reset();
  children.clear();
}

std::string StepList(const Model& model) {
  const std::set<int64_t>& steps = model.steps();
  constexpr size_t kEnds = 10;
  std::string out;
  size_t i = 0;
  for (int64_t s : steps) {
    if (steps.size() > 2 * kEnds && i == kEnds) {
      absl::StrAppend(&out, " ...");
    }
    if (steps.size() <= 2 * kEnds || i < kEnds || i >= steps.size() - kEnds) {
      absl::StrAppend(&out, out.empty() ? "" : " ", s);
    }
    ++i;
  }
  if (steps.size() > 2 * kEnds) {
    absl::StrAppend(&out, " (", steps.size(), " steps)");
  }
  return out;
}

absl::Status CheckStep(const Model& model, int64_t step) {
  if (step < 0 || model.steps().count(step)) return absl::OkStatus();
  return absl::NotFoundError(
      absl::StrCat("-step ", step, " not found; available steps: ",
                   model.steps().empty() ? "none (no RunMetadata was loaded)"
                                         : StepList(model)));
}

namespace {

// ---------------------------------------------------------------------------
// Exporting the displayed tree.

class Exporter {
 public:
  Exporter(const Checkpoint* ckpt, const VNodes& nodes, const QueryState& st,
           const Options& opts, ResultTree* out)
      : ckpt_(ckpt), nodes_(nodes), st_(st), opts_(opts), out_(out) {}

  // Sizes the output for the displayed tree below `n` (so that the node
  // vector is allocated once).
  void ReserveTree(int n) {
    size_t count = 0;
    std::vector<int> stack = {n};
    while (!stack.empty()) {
      const int k = stack.back();
      stack.pop_back();
      ++count;
      stack.insert(stack.end(), st_.show[k].begin(), st_.show[k].end());
    }
    ReserveRows(count);
  }

  // Sizes the output for `count` rows. Rows the output holds already are
  // recycled ones (Views::Recycle), written over from the first; when they
  // are far more than this tree needs they are dropped, not kept in a small
  // result.
  void ReserveRows(size_t count) {
    if (out_->nodes.capacity() > 2 * count + 1024) {
      std::vector<ResultNode>().swap(out_->nodes);
    }
    out_->nodes.reserve(count);
  }

  // Drops the recycled rows this tree did not need (after the export).
  void Finish() {
    out_->nodes.erase(out_->nodes.begin() + static_cast<ptrdiff_t>(used_),
                      out_->nodes.end());
  }

  // Scope and graph views: writes the shown tree below `root` in preorder,
  // each row at the place its subtrees' row counts (QueryState::rows_below)
  // give it. A large tree is written on both cores: the rows above a set of
  // subtrees here (at most 64 nodes opened), then those subtrees split
  // between the two threads.
  void ExportPlaced(int root) {
    const size_t count = st_.rows_below[root];
    ReserveRows(count);
    out_->nodes.resize(count);
    used_ = count;
    // (Tensor values read the checkpoint and add notes: one thread.)
    const bool tensors = opts_.Selected(Attr::kTensorValue) && ckpt_ != nullptr;
    if (count < kParallelMinItems || tensors) {
      const Placed top = {root, 0};
      WriteSubtrees(&top, &top + 1);
      return;
    }
    // Opens the largest subtree (its row written here, its children parts
    // in its place) until none holds an eighth of the rows, or a leaf is
    // the largest; the parts stay in row order.
    std::vector<Placed> parts = {{root, 0}};
    for (int opened = 0; opened < 64; ++opened) {
      auto largest = std::max_element(
          parts.begin(), parts.end(), [this](const Placed& a, const Placed& b) {
            return st_.rows_below[a.node] < st_.rows_below[b.node];
          });
      const Placed open = *largest;
      if (st_.rows_below[open.node] * 8 <= count ||
          st_.show[open.node].empty()) {
        break;
      }
      WriteRow(open.node, open.row);
      std::vector<Placed> children;
      size_t next = open.row + 1;
      for (int k : st_.show[open.node]) {
        children.push_back({k, next});
        next += st_.rows_below[k];
      }
      largest = parts.erase(largest);
      parts.insert(largest, children.begin(), children.end());
    }
    // Cut where half of the parts' rows are before: each thread writes one
    // stretch of the rows.
    size_t all = 0;
    for (const Placed& p : parts) all += st_.rows_below[p.node];
    size_t cut = 0;
    for (size_t before = 0; cut < parts.size() && before * 2 < all; ++cut) {
      before += st_.rows_below[parts[cut].node];
    }
    RunBoth(
        true, [&] { WriteSubtrees(parts.data(), parts.data() + cut); },
        [&] {
          WriteSubtrees(parts.data() + cut, parts.data() + parts.size());
        });
  }

  size_t ExportMulti(int n, bool recurse) {
    const size_t id = NewNode(n);
    const VNode& v = nodes_[n];
    ResultNode& r = out_->nodes[id];
    r.members = Members(n);
    r.frame = v.frame;
    if (recurse) {
      for (int k : st_.show[n]) {
        const size_t child = ExportMulti(k, true);
        out_->nodes[id].children.push_back(child);
      }
      // A displayed leaf of the code view carries the graph nodes of every
      // true leaf below it (pprof samples are made from them).
      if (st_.show[n].empty() && v.frame != nullptr) {
        std::vector<MemberNode> leaves;
        CollectLeafMembers(n, &leaves);
        out_->nodes[id].leaf_members = std::move(leaves);
      }
    }
    return id;
  }

  // A node of the shown tree and the row it is written to.
  struct Placed {
    int node;
    size_t row;
  };

  // Writes the rows of the subtrees at [begin, end), each front to back.
  void WriteSubtrees(const Placed* begin, const Placed* end) {
    std::vector<Placed> stack;
    for (const Placed* top = begin; top != end; ++top) {
      stack.push_back(*top);
      while (!stack.empty()) {
        const Placed p = stack.back();
        stack.pop_back();
        WriteRow(p.node, p.row);
        const std::vector<size_t>& children = out_->nodes[p.row].children;
        const std::vector<int>& shown = st_.show[p.node];
        for (size_t i = shown.size(); i-- > 0;) {
          stack.push_back({shown[i], children[i]});
        }
      }
    }
  }

  // One row of a scope or graph node, and its children's places.
  void WriteRow(int n, size_t row) {
    ResultNode& r = out_->nodes[row];
    r.Reset();
    Fill(n, &r);
    const VNode& v = nodes_[n];
    if (v.graph_node != nullptr) {
      r.graph_node = v.graph_node;
    } else {
      r.fixed_type = v.fixed_type;
    }
    if (opts_.Selected(Attr::kTensorValue) && ckpt_ != nullptr &&
        v.name != kRootName && ckpt_->Has(std::string(v.name))) {
      absl::StatusOr<CheckpointTensor> t = ckpt_->Read(std::string(v.name));
      if (t.ok()) {
        TensorDisplay d = FormatTensor(*t);
        if (d.supported) {
          r.tensor = std::make_shared<TensorValue>(
              TensorValue{std::move(d.proto), std::move(d.text)});
        }
      } else {
        out_->notes.push_back(std::string(t.status().message()));
      }
    }
    r.children.reserve(st_.show[n].size());
    size_t next = row + 1;
    for (int k : st_.show[n]) {
      r.children.push_back(next);
      next += st_.rows_below[k];
    }
  }

  void CollectLeafMembers(int n, std::vector<MemberNode>* out) {
    if (!nodes_[n].children.empty()) {
      for (int c : nodes_[n].children) CollectLeafMembers(c, out);
      return;
    }
    std::vector<MemberNode> m = Members(n);
    out->insert(out->end(), m.begin(), m.end());
  }

  // The graph nodes picked for a multi node, by name, each once.
  std::vector<MemberNode> Members(int n) {
    std::vector<const GraphNode*> uniq = st_.picked[n];
    auto by_name = [](const GraphNode* a, const GraphNode* b) {
      return a->name < b->name;
    };
    // (Members are kept by name: usually there is nothing to sort.)
    if (!std::is_sorted(uniq.begin(), uniq.end(), by_name)) {
      std::sort(uniq.begin(), uniq.end(), by_name);
    }
    uniq.erase(std::unique(uniq.begin(), uniq.end()), uniq.end());
    std::vector<MemberNode> members;
    members.reserve(uniq.size());
    for (const GraphNode* g : uniq) {
      members.push_back(MemberNode{g, st_.StatsOf(*g)});
    }
    return members;
  }

 private:
  size_t NewNode(int n) {
    ResultNode* r = nullptr;
    if (used_ < out_->nodes.size()) {
      r = &out_->nodes[used_];
      r->Reset();
    } else {
      r = &out_->nodes.emplace_back();
    }
    Fill(n, r);
    return used_++;
  }

  // What every view's row takes from its node.
  void Fill(int n, ResultNode* r) const {
    r->name.assign(nodes_[n].name.data(), nodes_[n].name.size());
    r->account = st_.account[n] != 0;
    r->self = st_.SelfOf(n);
    r->total = st_.total[n];
  }

  const Checkpoint* ckpt_;
  const VNodes& nodes_;
  const QueryState& st_;
  const Options& opts_;
  ResultTree* out_;
  size_t used_ = 0;  // rows written
};

}  // namespace

std::vector<std::string> NodeDevices(const ResultTree& tree,
                                     const ResultNode& node) {
  if (tree.view == ViewKind::kKernel && node.kernel != nullptr) {
    return node.kernel->streams;
  }
  // Traces also name the streams a node's kernels ran on (tfprof's own
  // inputs keep its output: the placement only).
  const bool streams = tree.model->source() != ProfileSource::kTensorFlow;
  std::set<std::string> devices;
  auto add = [&](const GraphNode& g) {
    if (!g.canonical_device().empty()) devices.insert(g.canonical_device());
    if (!streams) return;
    for (uint32_t s : tree.model->KernelStreams(g)) {
      devices.insert(tree.model->activity().String(s));
    }
  };
  if (tree.view == ViewKind::kOp || tree.view == ViewKind::kCode) {
    for (const MemberNode& m : node.members) {
      if (m.device().empty()) devices.insert("");
      add(*m.node);
    }
  } else if (node.graph_node != nullptr) {
    add(*node.graph_node);
  }
  return {devices.begin(), devices.end()};
}

std::vector<std::string> NodeOpTypes(const ResultTree& tree,
                                     const ResultNode& node) {
  if (IsFlatView(tree.view) || tree.view == ViewKind::kCode) {
    std::set<std::string> types;
    for (const MemberNode& m : node.members) {
      types.insert(m.node->op_types.begin(), m.node->op_types.end());
    }
    return {types.begin(), types.end()};
  }
  if (node.graph_node != nullptr) {
    return {node.graph_node->op_types.begin(), node.graph_node->op_types.end()};
  }
  return {node.fixed_type};
}

const std::vector<int64_t>& NodeShape(const ResultNode& node) {
  static const std::vector<int64_t>* const kNone = new std::vector<int64_t>();
  return node.graph_node != nullptr ? node.graph_node->shape : *kNone;
}

std::map<int32_t, std::vector<int64_t>> NodeInputShapes(
    const ResultTree& tree, const ResultNode& node) {
  if (node.graph_node == nullptr || tree.model == nullptr) return {};
  return InputShapes(*tree.model, *node.graph_node);
}

std::map<int32_t, std::vector<int64_t>> NodeInputShapes(
    const ResultTree& tree, const MemberNode& member) {
  if (member.node == nullptr || tree.model == nullptr) return {};
  return InputShapes(*tree.model, *member.node);
}

namespace {

using BuildFn = void (*)(const Model&, Structure*);

// Where the view's structure is kept, and how it is built.
Structure* StructureSlot(ViewCache* cache, ViewKind view, OpGrouping grouping,
                         BuildFn* build) {
  switch (view) {
    case ViewKind::kScope:
      *build = BuildScope;
      return &cache->scope;
    case ViewKind::kGraph:
      *build = BuildGraph;
      return &cache->graph;
    case ViewKind::kOp:
      if (grouping == OpGrouping::kHlo) {
        *build = BuildOpHlo;
        return &cache->op_hlo;
      }
      *build = BuildOp;
      return &cache->op;
    case ViewKind::kCode:
    case ViewKind::kKernel:  // (not built from graph nodes)
      break;
  }
  *build = BuildCode;
  return &cache->code;
}

// The view's structure, built on first use and again when the model changed.
Structure* CachedStructure(ViewCache* cache, const Model& model, ViewKind view,
                           OpGrouping grouping) {
  BuildFn build = nullptr;
  Structure* st = StructureSlot(cache, view, grouping, &build);
  if (!st->Current(model)) {
    build(model, st);
    st->built = true;
    st->generation = model.generation();
    st->serial = ++cache->structure_builds;
  }
  return st;
}

// Scope and code views: a tree of name scopes, or of call-stack frames
// (whose nodes may have several ops: "multi").
absl::StatusOr<ResultTree> QueryTreeView(const Structure& st, const Compiled& c,
                                         const Checkpoint* checkpoint,
                                         bool multi, QueryState* qs,
                                         ResultTree out) {
  QueryState& q = *qs;
  const VNodes& nodes = st.nodes;
  const int root = st.root;
  const Options& opts = out.options;
  if (multi && opts.account_displayed_op_only) {
    out.notes.push_back(
        "note: the code view ignores -account_displayed_op_only");
  }
  if (multi && st.unmatched_gradients > 0) {
    out.notes.push_back(absl::StrCat(
        st.unmatched_gradients,
        " gradient op names have no forward op with a call stack; they are "
        "not shown"));
  }
  std::vector<int> roots =
      AccountTree(nodes, nodes[root].children, c, multi, &q);
  q.total[root] = Totals();
  for (int n : roots) q.total[root].Add(q.total[n]);
  if (!c.start.match_all()) roots = SearchRoots(roots, c, nodes, q, nullptr);
  q.show[root] = roots;
  if (multi) {
    SelectShownCode(nodes, {root}, c, 1, &q);
  } else {
    SelectShownTree(nodes, {root}, c, 1, nullptr, &q);
  }
  // The root's own stats are zero and it is never accounted.
  q.account[root] = 0;
  if (q.Cancelled() || q.walk_cut) {
    return absl::CancelledError("query interrupted");
  }
  Exporter e(checkpoint, nodes, q, opts, &out);
  if (multi) {
    e.ReserveTree(root);
    e.ExportMulti(root, true);
    e.Finish();
  } else {
    e.ExportPlaced(root);
  }
  if (q.Cancelled()) return absl::CancelledError("query interrupted");
  return out;
}

// Graph view: the dataflow from the graph's outputs to their inputs, each
// node accounted once.
absl::StatusOr<ResultTree> QueryGraphView(const Structure& st,
                                          const Compiled& c,
                                          const Checkpoint* checkpoint,
                                          QueryState* qs, ResultTree out) {
  QueryState& q = *qs;
  const VNodes& nodes = st.nodes;
  const int root = st.root;
  std::vector<char> visited(nodes.size(), 0);
  std::vector<int> roots =
      AccountGraph(nodes, nodes[root].children, c, &visited, &q);
  q.total[root] = Totals();
  for (int n : roots) q.total[root].Add(q.total[n]);
  if (!c.start.match_all()) {
    std::fill(visited.begin(), visited.end(), 0);
    roots = SearchRoots(roots, c, nodes, q, &visited);
  }
  std::fill(visited.begin(), visited.end(), 0);
  q.show[root] = roots;
  q.account[root] = 0;
  SelectShownTree(nodes, {root}, c, 1, &visited, &q);
  // (The export trusts the walk's row counts: only a whole walk's.)
  if (q.Cancelled() || q.walk_cut) {
    return absl::CancelledError("query interrupted");
  }
  Exporter e(checkpoint, nodes, q, out.options, &out);
  e.ExportPlaced(root);
  return out;
}

// Cumulative totals of the op view's rows (`rows` in display order): each
// row's total covers itself and every row below it; the root's, all rows.
void CumulativeTotals(const std::vector<int>& rows, int root, QueryState* q,
                      bool from_self) {
  int prev = -1;
  for (auto it = rows.rbegin(); it != rows.rend(); ++it) {
    if (from_self) q->total[*it] = SelfTotals(q->SelfOf(*it));
    if (prev >= 0) q->total[*it].Add(q->total[prev]);
    prev = *it;
  }
  q->total[root] = Totals();
  if (prev >= 0) q->total[root].Add(q->total[prev]);
}

// Op view: a flat list of op types.
ResultTree QueryOpView(const Structure& st, const Compiled& c,
                       const Checkpoint* checkpoint, QueryState* qs,
                       ResultTree out) {
  QueryState& q = *qs;
  const VNodes& nodes = st.nodes;
  const int root = st.root;
  const Options& opts = out.options;
  if (opts.op_group == OpGrouping::kHlo && st.hlo_categorized == 0) {
    out.notes.push_back(
        "note: -op_group hlo: no node of this profile is an XLA program's "
        "instruction; the ops are grouped by their framework type");
  }
  std::vector<int> ops(nodes[root].children.begin(),
                       nodes[root].children.end());
  for (int n : ops) {
    q.account[n] = AccountMulti(nodes[n], c, q, &q.picked[n], &q.self[n]);
    q.total[n] = SelfTotals(q.self[n]);
  }
  SortNodes(opts, nodes, q, true, &ops);
  std::vector<int> accounted;
  for (int n : ops) {
    if (q.account[n]) accounted.push_back(n);
  }
  CumulativeTotals(accounted, root, &q, /*from_self=*/false);

  size_t start = 0;
  if (!(c.start.empty() || c.start.match_all())) {
    start = accounted.size();
    for (size_t i = 0; i < accounted.size(); ++i) {
      if (c.start.Any(nodes[accounted[i]].name)) {
        start = i;
        break;
      }
    }
  }
  std::vector<int> shown;
  int64_t depth = 0;
  for (size_t i = start; i < accounted.size(); ++i, ++depth) {
    const int n = accounted[i];
    if (c.trim.Any(nodes[n].name) || depth > opts.max_depth) break;
    if (ShouldShowMulti(nodes[n], n, q, c, depth, true)) shown.push_back(n);
  }
  if (opts.account_displayed_op_only) {
    CumulativeTotals(shown, root, &q, /*from_self=*/true);
  }
  q.account[root] = 0;
  Exporter e(checkpoint, nodes, q, opts, &out);
  out.nodes.reserve(shown.size() + 1);
  e.ExportMulti(root, false);
  for (int n : shown) {
    const size_t child = e.ExportMulti(n, false);
    out.nodes[0].children.push_back(child);
  }
  return out;
}

// Says which float ops a PyTorch trace's nodes carry, when they are shown.
void NoteFlopsRule(const Model& model, ResultTree* tree) {
  if (tree->options.Selected(Attr::kFloatOps) &&
      model.source() == ProfileSource::kPyTorch) {
    tree->notes.push_back(absl::StrCat(
        "float_ops by the ", tree->options.flops_rule, " rule (-flops_rule)"));
  }
}

}  // namespace

Views::Views(const Model* model, const Checkpoint* checkpoint)
    : model_(model),
      checkpoint_(checkpoint),
      cache_(std::make_unique<ViewCache>()) {}

Views::~Views() = default;

absl::StatusOr<ResultTree> Views::Query(ViewKind view, const Options& opts) {
  absl::StatusOr<ResultTree> result = absl::InternalError("query not run");
  RunWithLargeStack([&] { result = QueryOnThisStack(view, opts); });
  return result;
}

void Views::Recycle(ResultTree tree) {
  if (tree.model != model_) return;
  if (tree.nodes.capacity() >= cache_->spare_rows.capacity()) {
    cache_->spare_rows.swap(tree.nodes);
  }
}

absl::StatusOr<ResultTree> Views::QueryOnThisStack(ViewKind view,
                                                   const Options& opts) {
  absl::Status s = ValidateOptions(opts);
  if (!s.ok()) return s;
  s = CheckStep(*model_, opts.step);
  if (!s.ok()) return s;
  const bool pytorch_rule = opts.flops_rule == "pytorch";
  // Recycled rows are kept from one query to the next only: a query that
  // does not write over them (op, kernel) frees them first, so that they
  // add nothing to its memory.
  if (view == ViewKind::kOp || view == ViewKind::kKernel) {
    std::vector<ResultNode>().swap(cache_->spare_rows);
  }
  if (view == ViewKind::kKernel) {
    absl::StatusOr<ResultTree> kernels = QueryKernelView(*model_, opts);
    if (kernels.ok()) AttachFlopFacts(*model_, &*kernels);
    return kernels;
  }
  if (view == ViewKind::kCode && !model_->has_code_traces()) {
    return absl::FailedPreconditionError(
        "the code view needs Python call stacks: load an op log with code "
        "traces (--op_log_path) or a ProfileProto that has them");
  }
  // The view's structure and every node's statistics for the step do not
  // depend on each other: on a large model, when either is to be made (a
  // cold query), they are made on two cores.
  BuildFn unused;
  const bool cold =
      !StructureSlot(cache_.get(), view, opts.op_group, &unused)
           ->Current(*model_) ||
      !cache_->StatsKept(*model_, opts.step, opts.device_regexes, pytorch_rule);
  const Structure* structure = nullptr;
  const BigVector<NodeStats>* stats = nullptr;
  RunBoth(
      cold && model_->size() >= kParallelMinItems,
      [&] {
        structure = CachedStructure(cache_.get(), *model_, view, opts.op_group);
      },
      [&] {
        stats = &cache_->StatsFor(*model_, opts.step, opts.device_regexes,
                                  pytorch_rule);
      });
  const Structure& st = *structure;
  const Compiled c(opts);
  QueryState& q = cache_->query;
  q.Reset(st.nodes, view == ViewKind::kOp || view == ViewKind::kCode);
  q.cancel = cancel_;
  q.stats = stats;
  if (view == ViewKind::kScope || view == ViewKind::kGraph) {
    q.OrderStats(st, {st.serial, cache_->stats_serial()});
  }
  ResultTree out;
  out.view = view;
  out.model = model_;
  out.options = opts;
  if (view != ViewKind::kOp) out.nodes = std::move(cache_->spare_rows);
  cache_->spare_rows.clear();
  absl::StatusOr<ResultTree> result;
  switch (view) {
    case ViewKind::kScope:
    case ViewKind::kCode:
      result = QueryTreeView(st, c, checkpoint_, view == ViewKind::kCode, &q,
                             std::move(out));
      break;
    case ViewKind::kGraph:
      result = QueryGraphView(st, c, checkpoint_, &q, std::move(out));
      break;
    case ViewKind::kOp:
    case ViewKind::kKernel:
      result = QueryOpView(st, c, checkpoint_, &q, std::move(out));
      AttachFlopFacts(*model_, &*result);
      break;
  }
  if (result.ok() && opts.show_kernels && view != ViewKind::kOp) {
    AttachKernels(*model_, &*result);
  }
  if (result.ok()) NoteFlopsRule(*model_, &*result);
  if (result.ok() && !cache_->devices_note().empty()) {
    result->notes.push_back(cache_->devices_note());
  }
  return result;
}

}  // namespace tfprof
