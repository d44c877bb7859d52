// The persistent structures of the four views (scope, graph, op, code):
// their nodes (VNode) and how each view's is built from the model (built
// once per model generation, reused by every query: view_structure.cc),
// and what a query keeps per node while it accounts and filters them
// (view_filter.cc). The query itself is views.cc's. Not a public API.
#ifndef TFPROF_PROFILER_VIEWS_VIEW_STRUCTURE_H_
#define TFPROF_PROFILER_VIEWS_VIEW_STRUCTURE_H_

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/types/span.h"
#include "profiler/base/big_array.h"
#include "profiler/model/model.h"
#include "profiler/views/options.h"
#include "profiler/views/result.h"
#include "re2/re2.h"

namespace tfprof {
namespace view_internal {

// A node of a view's persistent structure. Names are views of the
// structure's own copies (scope and graph views: graph node names, scopes
// as prefixes of them; code view frames) or of the model's strings (op
// types); children are a range of the structure's one array of child
// indices. So a structure of a million nodes is a few allocations, not
// millions.
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

// A structure's nodes: one per node of the view, in memory of their own.
using VNodes = BigVector<VNode>;

struct Structure {
  Structure() = default;
  // Moved, never copied (nodes point into packed_names).
  Structure(Structure&&) = default;
  Structure& operator=(Structure&&) = default;
  Structure(const Structure&) = delete;
  Structure& operator=(const Structure&) = delete;

  bool built = false;
  uint64_t generation = 0;
  uint64_t serial = 0;  // which build of the cache this is (QueryState)
  VNodes nodes;
  int root = -1;
  int64_t unmatched_gradients = 0;
  // Op view grouped by HLO category: the nodes that had one.
  int64_t hlo_categorized = 0;
  // Every node's children, node after node: VNode::children point here.
  std::vector<int> child_store;
  // Names made for the structure (code view frames); stable addresses.
  std::deque<std::string> own_names;
  // The scope and graph views' names, copied into one block in the order
  // the walks read them (not from graph nodes all over the model); moving
  // the structure keeps their addresses.
  BigVector<char> packed_names;

  // Whether it is built for the model as it is now.
  bool Current(const Model& model) const {
    return built && generation == model.generation();
  }
  void Clear() {
    nodes.clear();
    child_store.clear();
    own_names.clear();
    packed_names.clear();
    root = -1;
    unmatched_gradients = 0;
    hlo_categorized = 0;
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

// Each view's structure of `model`, into *s (cleared first).
void BuildScope(const Model& model, Structure* s);
void BuildGraph(const Model& model, Structure* s);
void BuildOp(const Model& model, Structure* s);
// The op view of XLA programs: rows by HLO opcode.
void BuildOpHlo(const Model& model, Structure* s);
void BuildCode(const Model& model, Structure* s);

// --- A query over a structure: its compiled options and per-node state.

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

// Per-query state of every node of a structure.
struct QueryState {
  // Sized for a structure's nodes, zero (but see totals and rows_below);
  // the vectors' memory is kept from the last query (repeated queries then
  // allocate little). Scope and graph nodes take their own stats from
  // `stats`; op and code nodes sum their graph nodes' into `self`.
  void Reset(const VNodes& structure, bool multi) {
    const size_t n = structure.size();
    own_self = multi;
    self.assign(multi ? n : 0, NodeStats());
    account.assign(n, 0);
    // Scope and graph walks write the totals of every node they keep
    // before anything reads them, and the views zero the root's; op and
    // code nodes start from zeros as before.
    if (multi) {
      total.assign(n, Totals());
    } else {
      total.resize(n);
    }
    show.resize(n);
    for (auto& v : show) v.clear();
    rows_below.resize(multi ? 0 : n);
    // (Only op and code nodes pick graph nodes.)
    picked.resize(multi ? n : 0);
    for (auto& v : picked) v.clear();
  }
  // Scope and graph views: makes `ordered` the structure's nodes' own
  // stats from `stats` (zero for scopes and the root), unless it is that
  // already: `serial` names the structure's build and the stats' (the
  // walks then read them front to back, not all over the model's order).
  void OrderStats(const Structure& s, std::pair<uint64_t, uint64_t> serial) {
    structure_nodes = &s.nodes;
    if (ordered_for == serial &&
        (indirect || ordered.size() == s.nodes.size())) {
      return;
    }
    ordered_for = serial;
    indirect = StatsNearlyInOrder(s.nodes);
    if (indirect) {
      BigVector<NodeStats>().swap(ordered);
      return;
    }
    ordered.resize(s.nodes.size());
    for (size_t v = 0; v < s.nodes.size(); ++v) {
      const int64_t i = s.nodes[v].stats_index;
      ordered[v] = i < 0 ? NodeStats() : (*stats)[static_cast<size_t>(i)];
    }
  }
  // Whether reading the structure's nodes in order reads their stats
  // nearly in order too (each mostly a few records after the last): then a
  // copy in the structure's order would only cost its first touch.
  static bool StatsNearlyInOrder(const VNodes& nodes) {
    size_t near = 0, with = 0;
    int64_t last = -1;
    for (const VNode& v : nodes) {
      if (v.stats_index < 0) continue;
      ++with;
      if (v.stats_index > last && v.stats_index - last <= 4) ++near;
      last = v.stats_index;
    }
    return near * 10 >= with * 7;
  }
  // A node's own stats for the query.
  const NodeStats& SelfOf(int n) const {
    if (own_self) return self[n];
    if (!indirect) return ordered[n];
    const int64_t i = (*structure_nodes)[static_cast<size_t>(n)].stats_index;
    return i < 0 ? kNoStats : (*stats)[static_cast<size_t>(i)];
  }
  static inline const NodeStats kNoStats{};
  bool indirect = false;  // SelfOf reads `stats` through the structure
  const VNodes* structure_nodes = nullptr;
  bool own_self = false;
  std::vector<char> account;
  BigVector<NodeStats> self;     // op and code views only
  BigVector<NodeStats> ordered;  // scope and graph views, OrderStats()
  std::pair<uint64_t, uint64_t> ordered_for{0, 0};
  BigVector<Totals> total;
  BigVector<std::vector<int>> show;  // accounted, then displayed children
  // SelectShownTree's lists of shown children, one per depth.
  std::deque<std::vector<int>> shown_scratch;
  // Scope and graph views: the rows of each shown node's displayed subtree,
  // itself included (set by SelectShownTree for the nodes it shows; other
  // entries keep old values), and whether its last walk stopped early.
  std::vector<size_t> rows_below;
  bool walk_cut = false;
  std::vector<std::vector<const GraphNode*>> picked;  // op/code views
  // Every graph node's own stats for the query's step, by GraphNode::index.
  const BigVector<NodeStats>* stats = nullptr;
  const NodeStats& StatsOf(const GraphNode& g) const {
    return (*stats)[g.index];
  }
  // Set by the caller (e.g. on Ctrl-C); the walks stop early when it is.
  const std::atomic<bool>* cancel = nullptr;
  bool Cancelled() const {
    return cancel != nullptr && cancel->load(std::memory_order_relaxed);
  }
};

// Statistics summed into a node's, a node's own as totals, and siblings
// ordered as -order_by says (view_filter.cc).
void AddStats(const NodeStats& s, NodeStats* to);
Totals SelfTotals(const NodeStats& s);
void SortNodes(const Options& opts, const VNodes& nodes, const QueryState& st,
               bool multi, std::vector<int>* v);

// Accounting (which nodes the -account_type_regexes count) and display
// filtering (which accounted nodes the options show), view_filter.cc.
bool AccountMulti(const VNode& v, const Compiled& c, const QueryState& st,
                  std::vector<const GraphNode*>* picked, NodeStats* self);
std::vector<int> AccountTree(const VNodes& nodes, absl::Span<const int> list,
                             const Compiled& c, bool multi, QueryState* st);
std::vector<int> AccountGraph(const VNodes& nodes, absl::Span<const int> list,
                              const Compiled& c, std::vector<char>* visited,
                              QueryState* st);
std::vector<int> SearchRoots(absl::Span<const int> list, const Compiled& c,
                             const VNodes& nodes, const QueryState& st,
                             std::vector<char>* visited);
bool ShouldShowMulti(const VNode& v, int n, const QueryState& st,
                     const Compiled& c, int64_t depth, bool op_view);
std::vector<int> SelectShownTree(const VNodes& nodes,
                                 absl::Span<const int> list, const Compiled& c,
                                 int64_t depth, std::vector<char>* visited,
                                 QueryState* st);
std::vector<int> SelectShownCode(const VNodes& nodes,
                                 absl::Span<const int> list, const Compiled& c,
                                 int64_t depth, QueryState* st);

}  // namespace view_internal
}  // namespace tfprof

#endif  // TFPROF_PROFILER_VIEWS_VIEW_STRUCTURE_H_
