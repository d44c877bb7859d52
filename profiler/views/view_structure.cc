#include "profiler/views/view_structure.h"

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

// Renumbers a structure's nodes in the order a query first reaches them
// (depth first from the root, children in order; nodes the walk does not
// reach last, in their order): the walks then read its arrays and names
// front to back instead of all over memory. Names, ranks and child order
// are kept, so results do not change.
void LayOutAsWalked(Structure* s) {
  const size_t n = s->nodes.size();
  std::vector<int> order;  // new index -> old
  order.reserve(n);
  std::vector<int> renumbered(n, -1);         // old index -> new
  std::vector<std::pair<int, size_t>> stack;  // node, next child
  auto reach = [&](int v) {
    renumbered[v] = static_cast<int>(order.size());
    order.push_back(v);
    stack.emplace_back(v, 0);
  };
  reach(s->root);
  while (!stack.empty()) {
    auto& [v, next] = stack.back();
    const absl::Span<const int> kids = s->nodes[v].children;
    if (next == kids.size()) {
      stack.pop_back();
      continue;
    }
    const int c = kids[next++];
    if (renumbered[c] < 0) reach(c);
  }
  for (size_t v = 0; v < n; ++v) {
    if (renumbered[v] < 0) {
      renumbered[v] = static_cast<int>(order.size());
      order.push_back(static_cast<int>(v));
    }
  }
  std::vector<VNode> nodes(n);
  std::vector<int> store;
  store.reserve(s->child_store.size());
  std::vector<size_t> first = {0};
  for (size_t i = 0; i < n; ++i) {
    nodes[i] = std::move(s->nodes[order[i]]);
    for (int c : nodes[i].children) store.push_back(renumbered[c]);
    first.push_back(store.size());
  }
  s->nodes = std::move(nodes);
  s->child_store = std::move(store);
  s->root = renumbered[s->root];
  s->SpanChildren(first);
  std::vector<int> in_order(n);
  for (size_t i = 0; i < n; ++i) in_order[i] = static_cast<int>(i);
  s->PackNames(in_order);
}

}  // namespace

// ---------------------------------------------------------------------------
// Building the structures.

void BuildScope(const Model& model, Structure* s) {
  s->Clear();
  // Scopes are prefixes of graph node names (up to a '/'). The names that
  // start with "scope/" are one run of the model's names in name order, so
  // walking them in that order finds each scope at its first descendant,
  // and the scopes a name shares with the name before it are the ones it
  // does not create: no name is hashed or looked up.
  const std::vector<const GraphNode*>& by_name = model.NodesByName();
  struct Scope {
    std::string_view name;
    int parent;  // a scope, or -1 for the root
    int vnode = -1;
  };
  std::vector<Scope> scopes;
  std::vector<int> node_parent(by_name.size());
  std::vector<int> chain;  // the previous name's scopes, shortest first
  std::string_view prev;
  for (size_t i = 0; i < by_name.size(); ++i) {
    const std::string_view name = by_name[i]->name;
    size_t common = 0;
    const size_t most = std::min(name.size(), prev.size());
    while (common < most && name[common] == prev[common]) ++common;
    // A scope of the previous name is one of this name's if it is shorter
    // than their common prefix (the '/' after it is then common too).
    while (!chain.empty() && scopes[chain.back()].name.size() >= common) {
      chain.pop_back();
    }
    size_t from = chain.empty() ? 0 : scopes[chain.back()].name.size() + 1;
    for (size_t slash = name.find('/', from); slash != std::string_view::npos;
         slash = name.find('/', slash + 1)) {
      scopes.push_back(
          {name.substr(0, slash), chain.empty() ? -1 : chain.back()});
      chain.push_back(static_cast<int>(scopes.size() - 1));
    }
    node_parent[i] = chain.empty() ? -1 : chain.back();
    prev = name;
  }
  // Scopes in name order, merged with the nodes: the structure's nodes are
  // then in name order (a scope named as a node is that node).
  std::vector<int> scope_order(scopes.size());
  for (size_t k = 0; k < scope_order.size(); ++k) {
    scope_order[k] = static_cast<int>(k);
  }
  std::sort(scope_order.begin(), scope_order.end(),
            [&](int a, int b) { return scopes[a].name < scopes[b].name; });
  s->nodes.reserve(by_name.size() + scopes.size() + 1);
  std::vector<int> node_vnode(by_name.size());
  for (size_t i = 0, k = 0; i < by_name.size() || k < scope_order.size();) {
    const int v = static_cast<int>(s->nodes.size());
    VNode& node = s->nodes.emplace_back();
    node.name_rank = v;
    const bool take_node =
        i < by_name.size() &&
        (k == scope_order.size() ||
         std::string_view(by_name[i]->name) <= scopes[scope_order[k]].name);
    if (k < scope_order.size() &&
        (!take_node || by_name[i]->name == scopes[scope_order[k]].name)) {
      node.name = scopes[scope_order[k]].name;
      node.fixed_type = kScopeParentType;
      scopes[scope_order[k++]].vnode = v;
    }
    if (take_node) {
      const GraphNode* g = by_name[i];
      node.name = g->name;
      node.graph_node = g;
      node.stats_index = static_cast<int64_t>(g->index);
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
  for (const Scope& sc : scopes) parent[sc.vnode] = vnode_of(sc.parent);
  for (size_t i = 0; i < by_name.size(); ++i) {
    parent[node_vnode[i]] = vnode_of(node_parent[i]);
  }
  std::vector<size_t> first(s->nodes.size() + 1, 0);
  for (int p : parent) ++first[p + 1];
  for (size_t i = 1; i < first.size(); ++i) first[i] += first[i - 1];
  s->child_store.resize(parent.size());
  std::vector<size_t> next(first.begin(), first.end() - 1);
  for (size_t v = 0; v < parent.size(); ++v) {
    s->child_store[next[parent[v]]++] = static_cast<int>(v);
  }
  std::vector<int> in_order(parent.size());
  for (size_t v = 0; v < in_order.size(); ++v)
    in_order[v] = static_cast<int>(v);
  s->PackNames(in_order);
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
      const GraphNode* src = model.InputNode(in);
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
  LayOutAsWalked(s);
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

}  // namespace view_internal
}  // namespace tfprof
