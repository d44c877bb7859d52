#include "profiler/views/view_structure.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <set>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"

namespace tfprof {
namespace view_internal {
namespace {

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

// A flat structure's nodes (`index`: name -> node, in name order) made the
// children of a new root.
template <typename Index>
void FinishUnderRoot(const Index& index, Structure* s) {
  std::vector<std::vector<int>> children(s->nodes.size() + 1);
  for (const auto& [name, i] : index) children.back().push_back(i);
  s->nodes.emplace_back().name = kRootName;
  s->root = static_cast<int>(s->nodes.size() - 1);
  s->SetChildren(children);
  s->RankNames();
}

// The order in which a query first reaches the nodes of a graph given as
// child lists (node v's children are kids[first[v], first[v + 1])): depth
// first from `root`, children in order, then the nodes the walk does not
// reach, in their order. Returns the nodes in that order.
std::vector<int> WalkOrder(const std::vector<size_t>& first,
                           const std::vector<int>& kids, int root) {
  const size_t n = first.size() - 1;
  std::vector<int> order;
  order.reserve(n);
  std::vector<char> reached(n, 0);
  std::vector<std::pair<int, size_t>> stack;  // node, next child
  auto reach = [&](int v) {
    reached[v] = 1;
    order.push_back(v);
    stack.emplace_back(v, first[v]);
  };
  reach(root);
  while (!stack.empty()) {
    auto& [v, next] = stack.back();
    if (next == first[v + 1]) {
      stack.pop_back();
      continue;
    }
    const int c = kids[next++];
    if (!reached[c]) reach(c);
  }
  for (size_t v = 0; v < n; ++v) {
    if (!reached[v]) order.push_back(static_cast<int>(v));
  }
  return order;
}

// Asks for the memory at `p` ahead of its use (a hint only; nothing where
// the compiler has no such builtin).
inline void FetchAhead(const void* p) {
#if defined(__GNUC__)
  __builtin_prefetch(p);
#else
  (void)p;
#endif
}

// The length of the longest common prefix of a and b, compared eight bytes
// at a time (names in name order share long prefixes).
size_t CommonPrefixLength(std::string_view a, std::string_view b) {
  const size_t most = std::min(a.size(), b.size());
  size_t i = 0;
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && \
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  for (; i + 8 <= most; i += 8) {
    uint64_t x, y;
    std::memcpy(&x, a.data() + i, 8);
    std::memcpy(&y, b.data() + i, 8);
    // The first differing byte is the lowest one set in x ^ y.
    if (x != y) return i + static_cast<size_t>(__builtin_ctzll(x ^ y) / 8);
  }
#endif
  while (i < most && a[i] == b[i]) ++i;
  return i;
}

}  // namespace

// ---------------------------------------------------------------------------
// Building the structures.

namespace {

// What BuildScope's first walk finds, in one read of each graph node: the
// nodes' names copied into one block in name order (node i's is
// names[name_at[i], name_at[i + 1])), their model indices, the scopes (each
// a prefix of its first descendant's copy) and each node's innermost scope.
struct ScopeScan {
  struct Scope {
    size_t at;  // the name: names[at, at + size)
    size_t size;
    int parent;  // a scope, or -1 for the root
    int vnode = -1;
  };
  std::vector<size_t> name_at;
  std::vector<int64_t> model_index;
  std::vector<Scope> scopes;
  std::vector<int> node_parent;  // a scope, or -1 for the root
};

// Scopes are prefixes of graph node names (up to a '/'). The names that
// start with "scope/" are one run of the model's names in name order, so
// walking them in that order finds each scope at its first descendant, and
// the scopes a name shares with the name before it are the ones it does
// not create: no name is hashed or looked up.
ScopeScan ScanScopes(const std::vector<const GraphNode*>& by_name,
                     BigVector<char>* names) {
  ScopeScan out;
  size_t name_bytes = 0;  // sized first: fresh memory is costly to grow
  for (const GraphNode* g : by_name) name_bytes += g->name.size();
  names->reserve(name_bytes);
  out.name_at.assign(by_name.size() + 1, 0);
  out.model_index.resize(by_name.size());
  out.node_parent.resize(by_name.size());
  std::vector<ScopeScan::Scope>& scopes = out.scopes;
  std::vector<int> chain;  // the previous name's scopes, shortest first
  for (size_t i = 0; i < by_name.size(); ++i) {
    const std::string& full = by_name[i]->name;
    out.model_index[i] = static_cast<int64_t>(by_name[i]->index);
    const size_t at = out.name_at[i] = names->size();
    // (The next nodes, and their names, are fetched ahead.)
    if (i + 16 < by_name.size()) {
      FetchAhead(by_name[i + 16]);
      FetchAhead(by_name[i + 8]->name.data());
    }
    names->insert(names->end(), full.begin(), full.end());
    const std::string_view name(names->data() + at, full.size());
    const std::string_view prev =
        i == 0 ? std::string_view()
               : std::string_view(names->data() + out.name_at[i - 1],
                                  at - out.name_at[i - 1]);
    const size_t common = CommonPrefixLength(name, prev);
    // A scope of the previous name is one of this name's if it is shorter
    // than their common prefix (the '/' after it is then common too).
    while (!chain.empty() && scopes[chain.back()].size >= common) {
      chain.pop_back();
    }
    size_t from = chain.empty() ? 0 : scopes[chain.back()].size + 1;
    for (size_t slash = name.find('/', from); slash != std::string_view::npos;
         slash = name.find('/', slash + 1)) {
      scopes.push_back({at, slash, chain.empty() ? -1 : chain.back()});
      chain.push_back(static_cast<int>(scopes.size() - 1));
    }
    out.node_parent[i] = chain.empty() ? -1 : chain.back();
  }
  out.name_at[by_name.size()] = names->size();
  return out;
}

}  // namespace

void BuildScope(const Model& model, Structure* s) {
  s->Clear();
  // The scopes and the nodes, merged in name order. Each graph node is read
  // once (ScanScopes): the merge, and later the walks, read the names front
  // to back from the structure's own copy.
  const std::vector<const GraphNode*>& by_name = model.NodesByName();
  const BigVector<char>& names = s->packed_names;
  ScopeScan scan = ScanScopes(by_name, &s->packed_names);
  const std::vector<size_t>& name_at = scan.name_at;
  std::vector<ScopeScan::Scope>& scopes = scan.scopes;
  auto node_name = [&](size_t i) {
    return std::string_view(names.data() + name_at[i],
                            name_at[i + 1] - name_at[i]);
  };
  auto scope_name = [&](int k) {
    return std::string_view(names.data() + scopes[k].at, scopes[k].size);
  };
  // Scopes in name order, merged with the nodes: the structure's nodes are
  // then in name order (a scope named as a node is that node).
  std::vector<int> scope_order(scopes.size());
  for (size_t k = 0; k < scope_order.size(); ++k) {
    scope_order[k] = static_cast<int>(k);
  }
  std::sort(scope_order.begin(), scope_order.end(),
            [&](int a, int b) { return scope_name(a) < scope_name(b); });
  s->nodes.reserve(by_name.size() + scopes.size() + 1);
  std::vector<int> node_vnode(by_name.size());
  for (size_t i = 0, k = 0; i < by_name.size() || k < scope_order.size();) {
    const int v = static_cast<int>(s->nodes.size());
    VNode& node = s->nodes.emplace_back();
    node.name_rank = v;
    const std::string_view scope = k < scope_order.size()
                                       ? scope_name(scope_order[k])
                                       : std::string_view();
    const bool take_node = i < by_name.size() &&
                           (k == scope_order.size() || node_name(i) <= scope);
    if (k < scope_order.size() && (!take_node || node_name(i) == scope)) {
      node.name = scope;
      node.fixed_type = kScopeParentType;
      scopes[scope_order[k++]].vnode = v;
    }
    if (take_node) {
      node.name = node_name(i);
      node.graph_node = by_name[i];
      node.stats_index = scan.model_index[i];
      node.fixed_type = "";
      node_vnode[i++] = v;
    }
  }
  VNode& root = s->nodes.emplace_back();
  root.name = kRootName;
  root.fixed_type = kScopeParentType;
  s->root = static_cast<int>(s->nodes.size() - 1);
  root.name_rank = s->root;
  // Each node's parent; children in name order (the nodes' order).
  std::vector<int> parent(s->nodes.size() - 1);
  auto vnode_of = [&](int scope) {
    return scope < 0 ? s->root : scopes[scope].vnode;
  };
  for (const ScopeScan::Scope& sc : scopes) {
    parent[sc.vnode] = vnode_of(sc.parent);
  }
  for (size_t i = 0; i < by_name.size(); ++i) {
    parent[node_vnode[i]] = vnode_of(scan.node_parent[i]);
  }
  std::vector<size_t> first(s->nodes.size() + 1, 0);
  for (int p : parent) ++first[p + 1];
  for (size_t i = 1; i < first.size(); ++i) first[i] += first[i - 1];
  s->child_store.resize(parent.size());
  std::vector<size_t> next(first.begin(), first.end() - 1);
  for (size_t v = 0; v < parent.size(); ++v) {
    s->child_store[next[parent[v]]++] = static_cast<int>(v);
  }
  s->SpanChildren(first);
}

void BuildGraph(const Model& model, Structure* s) {
  s->Clear();
  // A node's children are its inputs that are nodes, in input order; the
  // root's are the nodes that are no node's input. The nodes are numbered
  // in name order first (the root last), and laid out in the order a query
  // first reaches them: the walks then read the structure's arrays and
  // names front to back instead of all over memory. Ranks and child order
  // are those of name order, so results do not depend on the layout.
  const std::vector<const GraphNode*>& by_name = model.NodesByName();
  const int n = static_cast<int>(by_name.size());  // the root is node n
  std::vector<int> position(model.size(), -1);     // by GraphNode::index
  size_t name_bytes = 0;
  for (int i = 0; i < n; ++i) {
    position[by_name[i]->index] = i;
    name_bytes += by_name[i]->name.size();
  }
  std::vector<size_t> first(n + 2, 0);
  std::vector<int> kids;
  std::vector<char> is_input(n, 0);
  for (int i = 0; i < n; ++i) {
    // (Each node's inputs, and their nodes, are fetched ahead.)
    if (i + 8 < n) FetchAhead(by_name[i + 8]->inputs.data());
    if (i + 4 < n) {
      for (const NodeInput& in : by_name[i + 4]->inputs) FetchAhead(in.node);
    }
    first[i] = kids.size();
    for (const NodeInput& in : by_name[i]->inputs) {
      const GraphNode* src = model.InputNode(in);
      if (src == nullptr) continue;
      const int k = position[src->index];
      if (k < 0) continue;  // (not among the named nodes)
      is_input[k] = 1;
      kids.push_back(k);
    }
  }
  first[n] = kids.size();
  for (int i = 0; i < n; ++i) {
    if (!is_input[i]) kids.push_back(i);
  }
  first[n + 1] = kids.size();
  const std::vector<int> order = WalkOrder(first, kids, n);
  std::vector<int> renumbered(n + 1);
  for (int j = 0; j <= n; ++j) renumbered[order[j]] = j;
  // The nodes in that order, their names copied as they come.
  s->nodes.resize(n + 1);
  s->child_store.reserve(kids.size());
  BigVector<char>& names = s->packed_names;
  names.reserve(name_bytes);  // (views of it are taken as it fills)
  std::vector<size_t> layout_first = {0};
  layout_first.reserve(n + 2);
  for (int j = 0; j <= n; ++j) {
    if (j + 8 <= n && order[j + 8] < n) {
      FetchAhead(by_name[order[j + 8]]->name.data());
    }
    const int old = order[j];
    VNode& v = s->nodes[j];
    v.name_rank = old;
    if (old == n) {
      v.name = kRootName;
      v.fixed_type = kGraphParentType;
      s->root = j;
    } else {
      const GraphNode* g = by_name[old];
      const size_t at = names.size();
      names.insert(names.end(), g->name.begin(), g->name.end());
      v.name = std::string_view(names.data() + at, g->name.size());
      v.graph_node = g;
      v.stats_index = static_cast<int64_t>(g->index);
    }
    for (size_t k = first[old]; k < first[old + 1]; ++k) {
      s->child_store.push_back(renumbered[kids[k]]);
    }
    layout_first.push_back(s->child_store.size());
  }
  s->SpanChildren(layout_first);
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
  FinishUnderRoot(index, s);
}

// The op view grouped by HLO category (-op_group hlo): nodes of XLA
// programs by their category attribute, other nodes by op type.
void BuildOpHlo(const Model& model, Structure* s) {
  s->Clear();
  std::map<std::string, int> index;
  for (const GraphNode* g : model.NodesByName()) {
    std::optional<tfcore::AttrValue> category;
    if (!g->attrs().empty()) category = g->FindAttr(kXlaCategoryAttr);
    const bool hlo =
        category.has_value() && category->value_case() == tfcore::AttrValue::kS;
    s->hlo_categorized += hlo ? 1 : 0;
    const std::string& key = hlo ? category->s() : g->op;
    auto [it, added] =
        index.try_emplace(key, static_cast<int>(s->nodes.size()));
    if (added) s->nodes.emplace_back().name = s->own_names.emplace_back(key);
    s->nodes[it->second].members.push_back(g);
  }
  FinishUnderRoot(index, s);
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
    auto [it, added] = leaf_of_stack[gradient].try_emplace(g.code(), -1);
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
    auto [it, added] = has_stack.try_emplace(g.code(), false);
    if (added) it->second = !model.CallStack(g).empty();
    return it->second;
  };
  std::map<std::string, std::vector<const GraphNode*>> gradients;
  absl::flat_hash_map<std::string_view, const GraphNode*> forwards;
  std::string forward;
  for (const GraphNode* g : model.NodesByName()) {
    if (g->code().empty()) continue;
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

}  // namespace view_internal
}  // namespace tfprof
