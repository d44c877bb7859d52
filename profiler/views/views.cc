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
#include "profiler/base/large_stack.h"
#include "profiler/base/parallel.h"
#include "profiler/base/saturate.h"
#include "profiler/load/tensor_value.h"
#include "profiler/views/flops.h"
#include "profiler/views/kernels.h"
#include "re2/re2.h"

namespace tfprof {
namespace {

// A compiled regex list, with tfprof's fast path for exactly {".*"}.
class Regexes {
 public:
  explicit Regexes(const std::vector<std::string>& patterns)
      : match_all_(patterns.size() == 1 && patterns[0] == ".*") {
    for (const std::string& p : patterns) {
      res_.push_back(std::make_unique<RE2>(p, RE2::Quiet));
    }
  }
  bool match_all() const { return match_all_; }
  bool empty() const { return res_.empty(); }
  size_t size() const { return res_.size(); }
  bool Matches(size_t i, std::string_view s) const {
    return res_[i]->ok() && RE2::FullMatch(s, *res_[i]);
  }
  bool Any(std::string_view s) const {
    for (size_t i = 0; i < res_.size(); ++i) {
      if (Matches(i, s)) return true;
    }
    return false;
  }

 private:
  bool match_all_;
  std::vector<std::unique_ptr<RE2>> res_;
};

struct Compiled {
  explicit Compiled(const Options& o)
      : opts(o),
        account(o.account_type_regexes),
        start(o.start_name_regexes),
        trim(o.trim_name_regexes),
        show(o.show_name_regexes),
        hide(o.hide_name_regexes) {}
  const Options& opts;
  Regexes account, start, trim, show, hide;

  bool NameShown(std::string_view name) const {
    if (!show.match_all() && !show.Any(name)) return false;
    return !hide.Any(name);
  }
};

// A node of a view's persistent structure. Names are views of the model's
// strings (graph node names, scopes as their prefixes, op types) or of the
// structure's own (code view frames); children are a range of the
// structure's one array of child indices. So a structure of a million nodes
// is a few allocations, not millions.
struct VNode {
  std::string_view name;
  const GraphNode* graph_node = nullptr;  // scope and graph views
  int64_t stats_index = -1;               // graph_node->index, or -1
  // The position of the name among all of the structure's names (equal
  // names, equal ranks): ordering by name compares these.
  int32_t name_rank = 0;
  std::vector<const GraphNode*> members;  // op and code views, by name
  const char* fixed_type = "";            // op type of synthetic nodes
  std::shared_ptr<const CodeFrame> frame;
  absl::Span<const int> children;
};

// Vectors of these grow by moving; a throwing move would make them copy.
static_assert(std::is_nothrow_move_constructible_v<VNode>);
static_assert(std::is_nothrow_move_constructible_v<ResultNode>);

// Per-query state of every node of a structure.
struct QueryState {
  // Sized for a structure's nodes, all zero; the vectors' memory is kept
  // from the last query (repeated queries then allocate little). Scope and
  // graph nodes take their own stats from `stats`; op and code nodes sum
  // their graph nodes' into `self`.
  void Reset(const std::vector<VNode>& structure, bool multi) {
    const size_t n = structure.size();
    vnodes = &structure;
    own_self = multi;
    self.assign(multi ? n : 0, NodeStats());
    account.assign(n, 0);
    total.assign(n, Totals());
    show.resize(n);
    for (auto& v : show) v.clear();
    // (Only op and code nodes pick graph nodes.)
    picked.resize(multi ? n : 0);
    for (auto& v : picked) v.clear();
  }
  // A node's own stats for the query.
  const NodeStats& SelfOf(int n) const {
    if (own_self) return self[n];
    static const NodeStats* const kNone = new NodeStats();
    const int64_t i = (*vnodes)[n].stats_index;
    return i < 0 ? *kNone : (*stats)[static_cast<size_t>(i)];
  }
  const std::vector<VNode>* vnodes = nullptr;
  bool own_self = false;
  std::vector<char> account;
  std::vector<NodeStats> self;  // op and code views only
  std::vector<Totals> total;
  std::vector<std::vector<int>> show;  // accounted, then displayed children
  std::vector<std::vector<const GraphNode*>> picked;  // op/code views
  // Every graph node's own stats for the query's step, by GraphNode::index.
  const std::vector<NodeStats>* stats = nullptr;
  const NodeStats& StatsOf(const GraphNode& g) const {
    return (*stats)[g.index];
  }
  // Set by the caller (e.g. on Ctrl-C); the walks stop early when it is.
  const std::atomic<bool>* cancel = nullptr;
  bool Cancelled() const {
    return cancel != nullptr && cancel->load(std::memory_order_relaxed);
  }
};

struct Structure {
  bool built = false;
  uint64_t generation = 0;
  std::vector<VNode> nodes;
  int root = -1;
  int64_t unmatched_gradients = 0;
  // Every node's children, node after node: VNode::children point here.
  std::vector<int> child_store;
  // Names made for the structure (code view frames); stable addresses.
  std::deque<std::string> own_names;
  // See PackNames().
  std::unique_ptr<char[]> packed_names;

  // Whether it is built for the model as it is now.
  bool Current(const Model& model) const {
    return built && generation == model.generation();
  }
  void Clear() {
    nodes.clear();
    child_store.clear();
    own_names.clear();
    packed_names.reset();
    root = -1;
    unmatched_gradients = 0;
  }
  // Points node i's children at child_store[first[i], first[i + 1]), once
  // child_store is complete (first has one entry per node, and one more).
  void SpanChildren(const std::vector<size_t>& first) {
    for (size_t i = 0; i < nodes.size(); ++i) {
      nodes[i].children = absl::MakeConstSpan(child_store.data() + first[i],
                                              first[i + 1] - first[i]);
    }
  }
  // Sets each node's children from `lists` (one per node, in order).
  void SetChildren(const std::vector<std::vector<int>>& lists) {
    std::vector<size_t> first = {0};
    child_store.clear();
    for (const auto& l : lists) {
      child_store.insert(child_store.end(), l.begin(), l.end());
      first.push_back(child_store.size());
    }
    SpanChildren(first);
  }
  // Copies the names of `order`'s nodes, in that order, into one block of
  // the structure's own, and points the nodes at their copies: a query then
  // reads the names it copies out of memory laid out as it walks, not from
  // graph nodes all over the model.
  void PackNames(absl::Span<const int> order) {
    size_t total = 0;
    for (int i : order) total += nodes[i].name.size();
    packed_names = std::make_unique<char[]>(total);
    char* at = packed_names.get();
    for (int i : order) {
      std::string_view& name = nodes[i].name;
      std::memcpy(at, name.data(), name.size());
      name = std::string_view(at, name.size());
      at += name.size();
    }
  }
  // Ranks the nodes' names (equal names, equal ranks).
  void RankNames() {
    std::vector<int> order(nodes.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
    std::sort(order.begin(), order.end(),
              [&](int a, int b) { return nodes[a].name < nodes[b].name; });
    int32_t rank = 0;
    for (size_t i = 0; i < order.size(); ++i) {
      if (i > 0 && nodes[order[i]].name != nodes[order[i - 1]].name) ++rank;
      nodes[order[i]].name_rank = rank;
    }
  }
};

std::string Basename(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string TraceName(const CodeFrame& f) {
  std::string s = absl::StrCat(Basename(f.file), ":", f.lineno, ":");
  if (f.function.size() < 20) {
    s += f.function;
  } else {
    s += f.function.substr(0, 17) + "...";
  }
  return s;
}

// Gradient ops are named ".../gradients/<forward op>_grad/...".
bool IsGradientNode(const std::string& name, std::string* forward) {
  const size_t prefix = name.find("gradients/");
  const size_t suffix = name.find("_grad/");
  if (prefix == std::string::npos || suffix == std::string::npos) return false;
  const size_t start = prefix + std::string("gradients/").size();
  if (suffix <= start) return false;
  *forward = name.substr(start, suffix - start);
  return true;
}

std::map<int32_t, std::vector<int64_t>> InputShapes(const Model& model,
                                                    const GraphNode& node) {
  std::map<int32_t, std::vector<int64_t>> shapes;
  for (const NodeInput& in : node.inputs) {
    std::vector<int64_t>& dims = shapes[in.index];
    const GraphNode* src = model.Find(*in.name);
    if (src == nullptr || in.slot < 0) continue;
    const std::vector<int64_t>* shape = src->OutputShape(in.slot);
    if (shape != nullptr) dims = *shape;
  }
  return shapes;
}

void AddStats(const NodeStats& s, NodeStats* to) {
  SatInc(&to->run_count, s.run_count);
  SatInc(&to->exec_micros, s.exec_micros);
  SatInc(&to->accelerator_exec_micros, s.accelerator_exec_micros);
  SatInc(&to->cpu_exec_micros, s.cpu_exec_micros);
  SatInc(&to->requested_bytes, s.requested_bytes);
  SatInc(&to->peak_bytes, s.peak_bytes);
  SatInc(&to->residual_bytes, s.residual_bytes);
  SatInc(&to->output_bytes, s.output_bytes);
  SatInc(&to->parameters, s.parameters);
  SatInc(&to->float_ops, s.float_ops);
}

Totals SelfTotals(const NodeStats& s) {
  Totals t;
  t.AddSelf(s);
  return t;
}

// Sorts siblings by -order_by: names ascending, statistics descending.
// Scope and graph views keep ties in their order (a stable sort); op and
// code views use an unstable sort with the same comparisons as tfprof, so
// that ties come out in the same order as TensorFlow's build of tfprof.
void SortNodes(const Options& opts, const std::vector<VNode>& nodes,
               const QueryState& st, bool multi, std::vector<int>* v) {
  if (v->size() < 2) return;
  const std::string& by = opts.order_by;
  int64_t Totals::*field = StatMember<Totals>(by);
  const bool occurrence = by == "occurrence" && multi;
  if (field == nullptr && !occurrence) {
    // By name (also for unknown keys, and occurrence in scope/graph).
    auto less = [&](int a, int b) {
      return nodes[a].name_rank < nodes[b].name_rank;
    };
    // Structures keep children in name order, so this is the common case.
    if (std::is_sorted(v->begin(), v->end(), less)) return;
    if (multi) {
      std::sort(v->begin(), v->end(), less);
    } else {
      std::stable_sort(v->begin(), v->end(), less);
    }
    return;
  }
  if (occurrence) {
    // The number of distinct graph nodes, looked up by position.
    absl::flat_hash_map<int, int64_t> count;
    for (int i : *v) {
      std::set<const GraphNode*> uniq(st.picked[i].begin(), st.picked[i].end());
      count[i] = static_cast<int64_t>(uniq.size());
    }
    auto greater = [&](int a, int b) { return count.at(a) > count.at(b); };
    std::sort(v->begin(), v->end(), greater);
    return;
  }
  auto greater = [&](int a, int b) {
    return st.total[a].*field > st.total[b].*field;
  };
  if (multi) {
    std::sort(v->begin(), v->end(), greater);
  } else {
    std::stable_sort(v->begin(), v->end(), greater);
  }
}

}  // namespace

class ViewCache {
 public:
  Structure scope, graph, op, op_hlo, code;
  // The per-query state, reused by every query (one at a time).
  QueryState query;

  // Every graph node's own stats for `step` (only what ran on devices
  // matching `devices`), by GraphNode::index: computed in the model's
  // (memory) order, and kept while the model's data, the step and the
  // devices stay the same, so repeated queries do not compute them again.
  const std::vector<NodeStats>& StatsFor(
      const Model& model, int64_t step, const std::vector<std::string>& devices,
      bool pytorch_rule) {
    if (!StatsKept(model, step, devices, pytorch_rule)) {
      stats_.resize(model.size());
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
        for (const auto& g : model.nodes()) {
          stats_[g->index] = model.StatsOn(*g, step, keep);
        }
      }
      if (pytorch_rule) {
        // PyTorch's with_flops count where the trace has one.
        for (const auto& g : model.nodes()) {
          if (g->pytorch_float_ops < 0) continue;
          NodeStats& st = stats_[g->index];
          st.float_ops = SatMul(g->pytorch_float_ops, st.run_count);
        }
      }
      stats_valid_ = true;
      stats_pytorch_rule_ = pytorch_rule;
      stats_step_ = step;
      stats_version_ = model.version();
      stats_devices_ = devices;
    }
    return stats_;
  }

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
  std::vector<NodeStats> stats_;
  std::vector<std::string> stats_devices_;
  bool stats_valid_ = false;
  bool stats_pytorch_rule_ = false;
  int64_t stats_step_ = 0;
  uint64_t stats_version_ = 0;
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

absl::Status CheckStep(const Model& model, int64_t step) {
  if (step < 0 || model.steps().count(step)) return absl::OkStatus();
  std::string avail;
  for (int64_t s : model.steps()) absl::StrAppend(&avail, " ", s);
  return absl::NotFoundError(absl::StrCat(
      "-step ", step, " not found; available steps:",
      avail.empty() ? " none (no RunMetadata was loaded)" : avail));
}

namespace {

// ---------------------------------------------------------------------------
// Building the structures.

void BuildScope(const Model& model, Structure* s) {
  s->Clear();
  // Keys are views of graph node names (a scope is a prefix of one), which
  // live as long as the model. Nodes are taken in the model's order (the
  // sort below orders them with their scopes).
  const size_t n = model.size();
  // Room for every node and as many scopes (reserved, not touched).
  s->nodes.reserve(2 * n + 1);
  absl::flat_hash_map<std::string_view, int> index;
  index.reserve(n + n / 2);
  auto add = [&](std::string_view name, const GraphNode* g) {
    auto [it, added] =
        index.try_emplace(name, static_cast<int>(s->nodes.size()));
    VNode& v = added ? s->nodes.emplace_back() : s->nodes[it->second];
    if (added) {
      v.name = name;
      v.fixed_type = kScopeParentType;
    }
    if (g != nullptr && v.graph_node == nullptr) {
      v.graph_node = g;
      v.stats_index = static_cast<int64_t>(g->index);
      v.fixed_type = "";
    }
  };
  for (const auto& node : model.nodes()) {
    const GraphNode* g = node.get();
    const std::string_view name = g->name;
    add(name, g);
    // Its scopes; once one exists, so do all above it.
    for (size_t slash = name.rfind('/'); slash != std::string_view::npos;
         slash = name.rfind('/', slash - 1)) {
      const std::string_view scope = name.substr(0, slash);
      if (index.contains(scope)) break;
      add(scope, nullptr);
      if (slash == 0) break;
    }
  }
  VNode& root = s->nodes.emplace_back();
  root.name = kRootName;
  root.fixed_type = kScopeParentType;
  s->root = static_cast<int>(s->nodes.size() - 1);
  // Children in name order: every node but the root is one node's child.
  // (Sorted as (name, node) pairs: comparisons do not load the nodes.)
  std::vector<std::pair<std::string_view, int>> order;
  order.reserve(s->nodes.size() - 1);
  for (size_t i = 0; i + 1 < s->nodes.size(); ++i) {
    order.emplace_back(s->nodes[i].name, static_cast<int>(i));
  }
  ParallelSort(order.begin(), order.end(),
               [](const auto& a, const auto& b) { return a < b; });
  std::vector<int> parent(order.size());
  std::vector<size_t> first(s->nodes.size() + 1, 0);
  for (size_t r = 0; r < order.size(); ++r) {
    const int i = order[r].second;
    s->nodes[i].name_rank = static_cast<int32_t>(r);
    const std::string_view name = order[r].first;
    const size_t slash = name.rfind('/');
    parent[i] = slash == std::string_view::npos
                    ? s->root
                    : index.at(name.substr(0, slash));
    ++first[parent[i] + 1];
  }
  s->nodes[s->root].name_rank = static_cast<int32_t>(order.size());
  for (size_t i = 1; i < first.size(); ++i) first[i] += first[i - 1];
  s->child_store.resize(order.size());
  std::vector<size_t> next(first.begin(), first.end() - 1);
  for (const auto& [name, i] : order) s->child_store[next[parent[i]]++] = i;
  std::vector<int> by_rank(order.size());
  for (size_t r = 0; r < order.size(); ++r) by_rank[r] = order[r].second;
  order = {};
  s->PackNames(by_rank);
  s->SpanChildren(first);
}

void BuildGraph(const Model& model, Structure* s) {
  s->Clear();
  const std::vector<const GraphNode*>& by_name = model.NodesByName();
  s->nodes.resize(by_name.size() + 1);
  // Structure position by model position (GraphNode::index).
  std::vector<int> position(model.size(), -1);
  for (size_t i = 0; i < by_name.size(); ++i) {
    VNode& v = s->nodes[i];
    v.name = by_name[i]->name;
    v.graph_node = by_name[i];
    v.stats_index = static_cast<int64_t>(by_name[i]->index);
    v.name_rank = static_cast<int32_t>(i);
    position[by_name[i]->index] = static_cast<int>(i);
  }
  // A node's children are its inputs that are nodes, in input order; the
  // root's (last) are the nodes that are no node's input.
  std::vector<size_t> first(by_name.size() + 2, 0);
  std::vector<char> is_input(by_name.size(), 0);
  for (size_t i = 0; i < by_name.size(); ++i) {
    first[i] = s->child_store.size();
    for (const NodeInput& in : by_name[i]->inputs) {
      const GraphNode* src = model.Find(*in.name);
      if (src == nullptr) continue;
      const int k = position[src->index];
      is_input[k] = 1;
      s->child_store.push_back(k);
    }
  }
  first[by_name.size()] = s->child_store.size();
  VNode& root = s->nodes.back();
  root.name = kRootName;
  root.fixed_type = kGraphParentType;
  root.name_rank = static_cast<int32_t>(by_name.size());
  s->root = static_cast<int>(by_name.size());
  for (size_t i = 0; i < by_name.size(); ++i) {
    if (!is_input[i]) s->child_store.push_back(static_cast<int>(i));
  }
  first[by_name.size() + 1] = s->child_store.size();
  s->SpanChildren(first);
  std::vector<int> in_order(by_name.size());
  for (size_t i = 0; i < in_order.size(); ++i)
    in_order[i] = static_cast<int>(i);
  s->PackNames(in_order);
}

void BuildOp(const Model& model, Structure* s) {
  s->Clear();
  std::map<std::string_view, int> index;
  for (const GraphNode* g : model.NodesByName()) {
    auto [it, added] =
        index.try_emplace(g->op, static_cast<int>(s->nodes.size()));
    if (added) s->nodes.emplace_back().name = g->op;
    s->nodes[it->second].members.push_back(g);  // names arrive sorted
  }
  std::vector<std::vector<int>> children(s->nodes.size() + 1);
  for (const auto& [name, i] : index) children.back().push_back(i);
  s->nodes.emplace_back().name = kRootName;
  s->root = static_cast<int>(s->nodes.size() - 1);
  s->SetChildren(children);
  s->RankNames();
}

// The op view grouped by HLO category (-op_group hlo): nodes of XLA
// programs by their category attribute, other nodes by op type.
void BuildOpHlo(const Model& model, Structure* s) {
  s->Clear();
  std::map<std::string, int> index;
  for (const GraphNode* g : model.NodesByName()) {
    std::optional<tfcore::AttrValue> category;
    if (!g->attrs.empty()) category = g->FindAttr(kXlaCategoryAttr);
    const std::string& key =
        category.has_value() && category->value_case() == tfcore::AttrValue::kS
            ? category->s()
            : g->op;
    auto [it, added] =
        index.try_emplace(key, static_cast<int>(s->nodes.size()));
    if (added) s->nodes.emplace_back().name = s->own_names.emplace_back(key);
    s->nodes[it->second].members.push_back(g);
  }
  std::vector<std::vector<int>> children(s->nodes.size() + 1);
  for (const auto& [name, i] : index) children.back().push_back(i);
  s->nodes.emplace_back().name = kRootName;
  s->root = static_cast<int>(s->nodes.size() - 1);
  s->SetChildren(children);
  s->RankNames();
}

void BuildCode(const Model& model, Structure* s) {
  s->Clear();
  // Children of each code node by name (names are unique among siblings).
  absl::flat_hash_map<std::pair<int, std::string_view>, int> child_index;
  std::vector<std::vector<int>> children(1);
  s->nodes.emplace_back().name = kRootName;
  s->root = 0;
  auto add_child = [&](int parent, std::string name,
                       const CodeFrame& frame) -> int {
    auto it = child_index.find(std::make_pair(parent, std::string_view(name)));
    if (it != child_index.end()) return it->second;
    const int id = static_cast<int>(s->nodes.size());
    VNode& v = s->nodes.emplace_back();
    v.name = s->own_names.emplace_back(std::move(name));
    v.frame = std::make_shared<const CodeFrame>(frame);
    child_index.emplace(std::make_pair(parent, v.name), id);
    children.emplace_back();
    children[parent].push_back(id);
    return id;
  };
  // Members by name; nodes mostly arrive in name order.
  auto add_member = [&](int id, const GraphNode* g) {
    auto& m = s->nodes[id].members;
    if (m.empty() || m.back()->name < g->name) {
      m.push_back(g);
      return;
    }
    auto it = std::lower_bound(m.begin(), m.end(), g,
                               [](const GraphNode* a, const GraphNode* b) {
                                 return a->name < b->name;
                               });
    if (it == m.end() || (*it)->name != g->name) m.insert(it, g);
  };
  // The leaf of a node's call stack (of its gradient's, with `gradient`),
  // or -1 if it has none. Nodes whose call stacks are the same bytes share
  // it: a model's ops come from few source lines, so few stacks are decoded.
  const std::string kSuffix = " (gradient)";
  absl::flat_hash_map<std::string_view, int> leaf_of_stack[2];
  auto leaf = [&](const GraphNode& g, bool gradient) -> int {
    auto [it, added] = leaf_of_stack[gradient].try_emplace(g.code, -1);
    if (!added) return it->second;
    int cur = -1;
    for (CodeFrame f : model.CallStack(g)) {
      std::string name = TraceName(f);
      if (gradient) {
        name += kSuffix;
        f.function += kSuffix;
      }
      cur = add_child(cur < 0 ? s->root : cur, std::move(name), f);
    }
    it->second = cur;
    return cur;
  };

  absl::flat_hash_map<std::string_view, bool> has_stack;
  auto HasCallStack = [&](const GraphNode& g) {
    auto [it, added] = has_stack.try_emplace(g.code, false);
    if (added) it->second = !model.CallStack(g).empty();
    return it->second;
  };
  std::map<std::string, std::vector<const GraphNode*>> gradients;
  absl::flat_hash_map<std::string_view, const GraphNode*> forwards;
  std::string forward;
  for (const GraphNode* g : model.NodesByName()) {
    if (g->code.empty()) continue;
    if (IsGradientNode(g->name, &forward)) {
      if (HasCallStack(*g)) gradients[forward].push_back(g);
      continue;
    }
    const int id = leaf(*g, false);
    if (id < 0) continue;
    forwards[g->name] = g;
    add_member(id, g);
  }
  for (const auto& [forward, grads] : gradients) {
    auto it = forwards.find(forward);
    if (it == forwards.end()) {
      ++s->unmatched_gradients;
      continue;
    }
    const int id = leaf(*it->second, true);
    for (const GraphNode* g : grads) add_member(id, g);
  }
  s->SetChildren(children);
  s->RankNames();
}

// ---------------------------------------------------------------------------
// Accounting.

bool AccountSingle(const VNode& v, const Compiled& c) {
  if (c.account.match_all()) return true;
  if (v.graph_node == nullptr) return c.account.Any(v.fixed_type);
  for (const std::string& t : v.graph_node->op_types) {
    if (c.account.Any(t)) return true;
  }
  return false;
}

// Picks the members of an op/code node whose op types match the account
// regexes (once per matching regex, as tfprof does) and sums their stats.
bool AccountMulti(const VNode& v, const Compiled& c, const QueryState& st,
                  std::vector<const GraphNode*>* picked, NodeStats* self) {
  picked->clear();
  *self = NodeStats();
  if (!c.account.empty()) {
    if (c.account.match_all()) {
      *picked = v.members;
    } else {
      for (size_t r = 0; r < c.account.size(); ++r) {
        for (const GraphNode* g : v.members) {
          for (const std::string& t : g->op_types) {
            if (c.account.Matches(r, t)) {
              picked->push_back(g);
              break;
            }
          }
        }
      }
    }
  }
  for (const GraphNode* g : *picked) AddStats(st.StatsOf(*g), self);
  if (picked->empty()) return c.account.match_all();
  return true;
}

// Scope and code views: a node is kept if it is accounted or has kept
// descendants; its total is its own stats plus its kept children's totals.
// Appends the kept nodes among `list` to *kept; each node's kept children go
// to st->show[n], whose memory is reused from query to query.
void AccountTreeInto(const std::vector<VNode>& nodes,
                     absl::Span<const int> list, const Compiled& c, bool multi,
                     QueryState* st, std::vector<int>* kept) {
  for (int n : list) {
    if (st->Cancelled()) break;
    std::vector<int>& kept_children = st->show[n];
    kept_children.clear();
    AccountTreeInto(nodes, nodes[n].children, c, multi, st, &kept_children);
    if (multi) {
      st->account[n] =
          AccountMulti(nodes[n], c, *st, &st->picked[n], &st->self[n]);
    } else {
      st->account[n] = AccountSingle(nodes[n], c);  // own stats: SelfOf()
    }
    if (st->account[n] || !kept_children.empty()) {
      st->total[n] = SelfTotals(st->SelfOf(n));
      for (int k : kept_children) st->total[n].Add(st->total[k]);
      kept->push_back(n);
    }
  }
}

std::vector<int> AccountTree(const std::vector<VNode>& nodes,
                             absl::Span<const int> list, const Compiled& c,
                             bool multi, QueryState* st) {
  std::vector<int> kept;
  AccountTreeInto(nodes, list, c, multi, st, &kept);
  return kept;
}

// Graph view: depth first with a visited set; non-accounted nodes are dropped
// and pass their accounted descendants up.
void AccountGraphInto(const std::vector<VNode>& nodes,
                      absl::Span<const int> list, const Compiled& c,
                      std::vector<char>* visited, QueryState* st,
                      std::vector<int>* kept) {
  for (int n : list) {
    if (st->Cancelled()) break;
    if ((*visited)[n]) continue;
    (*visited)[n] = 1;
    std::vector<int>& kept_children = st->show[n];
    kept_children.clear();
    AccountGraphInto(nodes, nodes[n].children, c, visited, st, &kept_children);
    st->account[n] = AccountSingle(nodes[n], c);  // own stats: SelfOf()
    if (st->account[n]) {
      st->total[n] = SelfTotals(st->SelfOf(n));
      for (int k : kept_children) st->total[n].Add(st->total[k]);
      kept->push_back(n);
    } else {
      kept->insert(kept->end(), kept_children.begin(), kept_children.end());
      kept_children.clear();
    }
  }
}

std::vector<int> AccountGraph(const std::vector<VNode>& nodes,
                              absl::Span<const int> list, const Compiled& c,
                              std::vector<char>* visited, QueryState* st) {
  std::vector<int> kept;
  AccountGraphInto(nodes, list, c, visited, st, &kept);
  return kept;
}

// start_name_regexes: the first matching nodes on each branch.
std::vector<int> SearchRoots(absl::Span<const int> list, const Compiled& c,
                             const std::vector<VNode>& nodes,
                             const QueryState& st, std::vector<char>* visited) {
  std::vector<int> res;
  for (int n : list) {
    if (visited != nullptr) {
      if ((*visited)[n]) continue;
      (*visited)[n] = 1;
    }
    if (c.start.Any(nodes[n].name)) {
      res.push_back(n);
      continue;
    }
    std::vector<int> sub = SearchRoots(st.show[n], c, nodes, st, visited);
    res.insert(res.end(), sub.begin(), sub.end());
  }
  return res;
}

// ---------------------------------------------------------------------------
// Display filtering.

bool ShouldShowSingle(const VNode& v, int n, const QueryState& st,
                      const Compiled& c, int64_t depth) {
  if (v.name == kRootName) return true;
  const Options& o = c.opts;
  const Totals& t = st.total[n];
  const NodeStats& s = st.SelfOf(n);
  if (t.requested_bytes < o.min_bytes || t.peak_bytes < o.min_peak_bytes ||
      t.residual_bytes < o.min_residual_bytes ||
      t.output_bytes < o.min_output_bytes || t.exec_micros < o.min_micros ||
      t.accelerator_exec_micros < o.min_accelerator_micros ||
      t.cpu_exec_micros < o.min_cpu_micros || s.parameters < o.min_params ||
      s.float_ops < o.min_float_ops || s.run_count < o.min_occurrence ||
      depth > o.max_depth) {
    return false;
  }
  return c.NameShown(v.name);
}

bool ShouldShowMulti(const VNode& v, int n, const QueryState& st,
                     const Compiled& c, int64_t depth, bool op_view) {
  if (v.name == kRootName) return true;
  const Options& o = c.opts;
  const Totals& t = st.total[n];
  if (t.requested_bytes < o.min_bytes || t.peak_bytes < o.min_peak_bytes ||
      t.residual_bytes < o.min_residual_bytes ||
      t.output_bytes < o.min_output_bytes || t.exec_micros < o.min_micros ||
      t.accelerator_exec_micros < o.min_accelerator_micros ||
      t.cpu_exec_micros < o.min_cpu_micros || t.parameters < o.min_params ||
      t.float_ops < o.min_float_ops || depth > o.max_depth) {
    return false;
  }
  if (op_view && o.min_occurrence > 0) {
    std::set<const GraphNode*> uniq(st.picked[n].begin(), st.picked[n].end());
    if (o.min_occurrence > static_cast<int64_t>(uniq.size())) return false;
  }
  return c.NameShown(v.name);
}

// Scope and graph views. Returns the shown nodes among `list` (hidden nodes
// hand up their shown descendants).
std::vector<int> SelectShownTree(const std::vector<VNode>& nodes,
                                 absl::Span<const int> list, const Compiled& c,
                                 int64_t depth, std::vector<char>* visited,
                                 QueryState* st) {
  std::vector<int> shown;
  for (int n : list) {
    if (st->Cancelled()) break;
    if (visited != nullptr) {
      if ((*visited)[n]) continue;
      (*visited)[n] = 1;
    }
    const bool show = ShouldShowSingle(nodes[n], n, *st, c, depth);
    std::vector<int> shown_children;
    if (!c.trim.Any(nodes[n].name) && depth <= c.opts.max_depth) {
      shown_children =
          SelectShownTree(nodes, st->show[n], c, depth + 1, visited, st);
    }
    if (show) {
      if (c.opts.account_displayed_op_only) {
        st->total[n] = SelfTotals(st->SelfOf(n));
      }
      SortNodes(c.opts, nodes, *st, false, &shown_children);
      if (c.opts.account_displayed_op_only) {
        for (int k : shown_children) st->total[n].Add(st->total[k]);
      }
      st->show[n] = std::move(shown_children);
      shown.push_back(n);
    } else {
      shown.insert(shown.end(), shown_children.begin(), shown_children.end());
    }
  }
  return shown;
}

// Code view: trimmed or too-deep nodes are dropped with their subtree.
std::vector<int> SelectShownCode(const std::vector<VNode>& nodes,
                                 absl::Span<const int> list, const Compiled& c,
                                 int64_t depth, QueryState* st) {
  std::vector<int> shown;
  for (int n : list) {
    if (st->Cancelled()) break;
    // The root is always shown (tfprof crashed on -max_depth 0 here).
    const bool is_root = nodes[n].name == kRootName && depth == 1;
    if (!is_root && (c.trim.Any(nodes[n].name) || depth > c.opts.max_depth)) {
      continue;
    }
    const bool show = ShouldShowMulti(nodes[n], n, *st, c, depth, false);
    std::vector<int> shown_children =
        SelectShownCode(nodes, st->show[n], c, depth + 1, st);
    if (show) {
      SortNodes(c.opts, nodes, *st, true, &shown_children);
      st->show[n] = std::move(shown_children);
      shown.push_back(n);
    } else {
      shown.insert(shown.end(), shown_children.begin(), shown_children.end());
    }
  }
  return shown;
}

// ---------------------------------------------------------------------------
// Exporting the displayed tree.

class Exporter {
 public:
  Exporter(const Checkpoint* ckpt, const std::vector<VNode>& nodes,
           const QueryState& st, const Options& opts, ResultTree* out)
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
    out_->nodes.reserve(out_->nodes.size() + count);
  }

  size_t ExportSingle(int n) {
    const size_t id = NewNode(n);
    const VNode& v = nodes_[n];
    ResultNode& r = out_->nodes[id];
    if (v.graph_node != nullptr) {
      r.graph_node = v.graph_node;
    } else {
      r.fixed_type = v.fixed_type;
    }
    if (opts_.Selected("tensor_value") && ckpt_ != nullptr &&
        v.name != kRootName && ckpt_->Has(std::string(v.name))) {
      absl::StatusOr<CheckpointTensor> t = ckpt_->Read(std::string(v.name));
      if (t.ok()) {
        TensorDisplay d = FormatTensor(*t);
        if (d.supported) {
          out_->nodes[id].tensor = std::make_shared<TensorValue>(
              TensorValue{std::move(d.proto), std::move(d.text)});
        }
      } else {
        out_->notes.push_back(std::string(t.status().message()));
      }
    }
    for (int k : st_.show[n]) {
      const size_t child = ExportSingle(k);
      out_->nodes[id].children.push_back(child);
    }
    return id;
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
    ResultNode& r = out_->nodes.emplace_back();
    r.name = std::string(nodes_[n].name);
    r.account = st_.account[n] != 0;
    r.self = st_.SelfOf(n);
    r.total = st_.total[n];
    return out_->nodes.size() - 1;
  }

  const Checkpoint* ckpt_;
  const std::vector<VNode>& nodes_;
  const QueryState& st_;
  const Options& opts_;
  ResultTree* out_;
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
  const std::vector<VNode>& nodes = st.nodes;
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
  Exporter e(checkpoint, nodes, q, opts, &out);
  e.ReserveTree(root);
  if (multi) {
    e.ExportMulti(root, true);
  } else {
    e.ExportSingle(root);
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
  const std::vector<VNode>& nodes = st.nodes;
  const int root = st.root;
  std::vector<char> visited(nodes.size(), 0);
  std::vector<int> roots =
      AccountGraph(nodes, nodes[root].children, c, &visited, &q);
  for (int n : roots) q.total[root].Add(q.total[n]);
  if (!c.start.match_all()) {
    std::fill(visited.begin(), visited.end(), 0);
    roots = SearchRoots(roots, c, nodes, q, &visited);
  }
  std::fill(visited.begin(), visited.end(), 0);
  q.show[root] = roots;
  q.account[root] = 0;
  SelectShownTree(nodes, {root}, c, 1, &visited, &q);
  if (q.Cancelled()) return absl::CancelledError("query interrupted");
  Exporter e(checkpoint, nodes, q, out.options, &out);
  e.ReserveTree(root);
  e.ExportSingle(root);
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
  const std::vector<VNode>& nodes = st.nodes;
  const int root = st.root;
  const Options& opts = out.options;
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
  if (tree->options.Selected("float_ops") &&
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

absl::StatusOr<ResultTree> Views::QueryOnThisStack(ViewKind view,
                                                   const Options& opts) {
  absl::Status s = ValidateOptions(opts);
  if (!s.ok()) return s;
  s = CheckStep(*model_, opts.step);
  if (!s.ok()) return s;
  const bool pytorch_rule = opts.flops_rule == "pytorch";
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
  const std::vector<NodeStats>* stats = nullptr;
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
  ResultTree out;
  out.view = view;
  out.model = model_;
  out.options = opts;
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
      NoteFlopsRule(*model_, &*result);
      return result;
  }
  if (result.ok() && opts.show_kernels) AttachKernels(*model_, &*result);
  if (result.ok()) NoteFlopsRule(*model_, &*result);
  return result;
}

}  // namespace tfprof
