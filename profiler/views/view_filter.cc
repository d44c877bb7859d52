#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "profiler/base/saturate.h"
#include "profiler/views/view_structure.h"

namespace tfprof {
namespace view_internal {

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
  // Totals().AddSelf(s), whose sums start at zero and cannot saturate.
  Totals t;
  t.definition_count = 1;
  t.run_count = s.run_count;
  t.exec_micros = s.exec_micros;
  t.accelerator_exec_micros = s.accelerator_exec_micros;
  t.cpu_exec_micros = s.cpu_exec_micros;
  t.requested_bytes = s.requested_bytes;
  t.peak_bytes = s.peak_bytes;
  t.residual_bytes = s.residual_bytes;
  t.output_bytes = s.output_bytes;
  t.parameters = s.parameters;
  t.float_ops = s.float_ops;
  return t;
}

// Sorts siblings by -order_by: names ascending, statistics descending.
// Scope and graph views keep ties in their order (a stable sort); op and
// code views use an unstable sort with the same comparisons as tfprof, so
// that ties come out in the same order as TensorFlow's build of tfprof.
void SortNodes(const Options& opts, const VNodes& nodes, const QueryState& st,
               bool multi, std::vector<int>* v) {
  if (v->size() < 2) return;
  const Attr by = opts.order_by;
  const bool occurrence = by == Attr::kOccurrence && multi;
  if (by == Attr::kName || (by == Attr::kOccurrence && !multi)) {
    // By name (also occurrence in scope/graph, as tfprof does).
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
    return Value(st.total[a], by) > Value(st.total[b], by);
  };
  if (multi) {
    std::sort(v->begin(), v->end(), greater);
  } else {
    std::stable_sort(v->begin(), v->end(), greater);
  }
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
void AccountTreeInto(const VNodes& nodes, absl::Span<const int> list,
                     const Compiled& c, bool multi, QueryState* st,
                     std::vector<int>* kept) {
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

std::vector<int> AccountTree(const VNodes& nodes, absl::Span<const int> list,
                             const Compiled& c, bool multi, QueryState* st) {
  std::vector<int> kept;
  AccountTreeInto(nodes, list, c, multi, st, &kept);
  return kept;
}

// Graph view: depth first with a visited set; non-accounted nodes are dropped
// and pass their accounted descendants up.
void AccountGraphInto(const VNodes& nodes, absl::Span<const int> list,
                      const Compiled& c, std::vector<char>* visited,
                      QueryState* st, std::vector<int>* kept) {
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

std::vector<int> AccountGraph(const VNodes& nodes, absl::Span<const int> list,
                              const Compiled& c, std::vector<char>* visited,
                              QueryState* st) {
  std::vector<int> kept;
  AccountGraphInto(nodes, list, c, visited, st, &kept);
  return kept;
}

// start_name_regexes: the first matching nodes on each branch.
std::vector<int> SearchRoots(absl::Span<const int> list, const Compiled& c,
                             const VNodes& nodes, const QueryState& st,
                             std::vector<char>* visited) {
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

namespace {

// SelectShownTree's walk, appending the shown nodes among `list` to *shown.
// A node's shown children are gathered in its depth's scratch list and
// copied into the node's list: both keep their memory from query to query
// (a repeated query allocates no lists).
void SelectShownTreeInto(const VNodes& nodes, absl::Span<const int> list,
                         const Compiled& c, int64_t depth,
                         std::vector<char>* visited, QueryState* st,
                         std::vector<int>* shown) {
  const size_t level = static_cast<size_t>(depth);
  if (st->shown_scratch.size() <= level) st->shown_scratch.resize(level + 1);
  // (A deque: deeper levels added below keep this reference valid.)
  std::vector<int>& shown_children = st->shown_scratch[level];
  for (int n : list) {
    if (st->Cancelled()) {
      st->walk_cut = true;
      break;
    }
    if (visited != nullptr) {
      if ((*visited)[n]) continue;
      (*visited)[n] = 1;
    }
    const bool show = ShouldShowSingle(nodes[n], n, *st, c, depth);
    shown_children.clear();
    if (!c.trim.Any(nodes[n].name) && depth <= c.opts.max_depth) {
      SelectShownTreeInto(nodes, st->show[n], c, depth + 1, visited, st,
                          &shown_children);
    }
    if (show) {
      if (c.opts.account_displayed_op_only) {
        st->total[n] = SelfTotals(st->SelfOf(n));
      }
      SortNodes(c.opts, nodes, *st, false, &shown_children);
      if (c.opts.account_displayed_op_only) {
        for (int k : shown_children) st->total[n].Add(st->total[k]);
      }
      size_t rows = 1;
      for (int k : shown_children) rows += st->rows_below[k];
      st->rows_below[n] = rows;
      st->show[n].assign(shown_children.begin(), shown_children.end());
      shown->push_back(n);
    } else {
      shown->insert(shown->end(), shown_children.begin(), shown_children.end());
    }
  }
}

}  // namespace

// Scope and graph views. Returns the shown nodes among `list` (hidden nodes
// hand up their shown descendants).
std::vector<int> SelectShownTree(const VNodes& nodes,
                                 absl::Span<const int> list, const Compiled& c,
                                 int64_t depth, std::vector<char>* visited,
                                 QueryState* st) {
  std::vector<int> shown;
  st->walk_cut = false;
  SelectShownTreeInto(nodes, list, c, depth, visited, st, &shown);
  return shown;
}

// Code view: trimmed or too-deep nodes are dropped with their subtree.
std::vector<int> SelectShownCode(const VNodes& nodes,
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

}  // namespace view_internal
}  // namespace tfprof
