#include "profiler/views/diff_samples.h"

#include <algorithm>
#include <map>
#include <memory>

#include "absl/container/flat_hash_map.h"
#include "re2/re2.h"

namespace tfprof {
namespace {

// The attribute's value in a node's stats for one step.
double Value(const NodeStats& s, const std::string& attribute) {
  if (attribute == "occurrence") return static_cast<double>(s.run_count);
  int64_t NodeStats::*member = StatMember<NodeStats>(attribute);
  return member == nullptr ? 0 : static_cast<double>(s.*member);
}

int64_t TotalValue(const Totals& t, const std::string& attribute) {
  if (attribute == "occurrence") return t.run_count;
  int64_t Totals::*member = StatMember<Totals>(attribute);
  return member == nullptr ? 0 : t.*member;
}

int64_t SelfValue(const NodeStats& s, const std::string& attribute) {
  Totals t;
  t.AddSelf(s);
  return TotalValue(t, attribute);
}

bool IsTime(const std::string& attribute) {
  return attribute == "micros" || attribute == "accelerator_micros" ||
         attribute == "cpu_micros";
}

// The samples of graph nodes, computed once each.
class NodeSampler {
 public:
  NodeSampler(const Model& model, const std::string& attribute,
              const std::vector<std::string>& devices)
      : model_(model), attribute_(attribute) {
    steps_.assign(model.steps().begin(), model.steps().end());
    all_devices_ = devices.size() == 1 && devices[0] == ".*";
    for (const std::string& d : devices) {
      res_.push_back(std::make_unique<RE2>(d, RE2::Quiet));
    }
  }

  size_t steps() const { return steps_.size(); }

  const RowSamples& Of(const GraphNode& g) {
    auto [it, added] = cache_.try_emplace(&g);
    if (added) Fill(g, &it->second);
    return it->second;
  }

 private:
  NodeStats StatsFor(const GraphNode& g, int64_t step) {
    if (all_devices_) return g.Stats(step);
    const DeviceFilter keep = [&](std::string_view d) {
      auto [it, added] = kept_.emplace(d, false);
      if (added) {
        for (const auto& re : res_) {
          it->second = it->second || RE2::FullMatch(std::string(d), *re);
        }
      }
      return it->second;
    };
    return model_.StatsOn(g, step, keep);
  }

  void Fill(const GraphNode& g, RowSamples* s) {
    s->per_step.assign(steps_.size(), 0);
    s->runs.assign(steps_.size(), 0);
    for (size_t i = 0; i < steps_.size(); ++i) {
      const NodeStats st = StatsFor(g, steps_[i]);
      s->per_step[i] = Value(st, attribute_);
      s->runs[i] = static_cast<double>(st.run_count);
    }
    if (IsTime(attribute_) && all_devices_) s->jitter = Jitter(g);
  }

  // The node's occurrences in each step (CPU runs, accelerator work, or
  // both, as the attribute counts them), decoded only where a step has
  // more than one.
  double Jitter(const GraphNode& g) {
    if (g.execs.size() < 2) return 0;
    bool several = false;
    for (const StepExec& e : g.execs) {
      several |= e.run_count >= 2 || e.accelerator_micros > 0;
    }
    if (!several) return 0;
    const bool cpu = attribute_ != "accelerator_micros";
    const bool accelerator = attribute_ != "cpu_micros";
    std::vector<std::vector<double>> steps;
    for (const StepExec& e : g.execs) {
      model_.DetailInto(e, &detail_);
      std::vector<double>& v = steps.emplace_back();
      auto take = [&](const std::vector<DeviceTimes>& list) {
        for (const DeviceTimes& d : list) {
          for (const TimeInterval& t : d.times) {
            v.push_back(static_cast<double>(t.duration_micros));
          }
        }
      };
      if (cpu) take(detail_.cpu_execs);
      if (accelerator) take(detail_.accelerator_execs);
    }
    return OccurrenceJitter(steps);
  }

  const Model& model_;
  const std::string& attribute_;
  std::vector<int64_t> steps_;
  bool all_devices_ = true;
  std::vector<std::unique_ptr<RE2>> res_;
  absl::flat_hash_map<std::string_view, bool> kept_;
  absl::flat_hash_map<const GraphNode*, RowSamples> cache_;
  ExecDetail detail_;
};

// The kernel view's rows: every kernel on the kept streams, by name, per
// step; the root gets them all.
bool KernelSamples(const ResultTree& tree, const Model& model,
                   const std::string& attribute, std::vector<RowSamples>* out) {
  const Activity& a = model.activity();
  const std::vector<int64_t> steps(model.steps().begin(), model.steps().end());
  const size_t n = steps.size();
  std::vector<std::unique_ptr<RE2>> res;
  for (const std::string& d : tree.options.device_regexes) {
    res.push_back(std::make_unique<RE2>(d, RE2::Quiet));
  }
  absl::flat_hash_map<uint32_t, bool> kept;
  // name -> step index -> durations (microseconds) in launch order.
  absl::flat_hash_map<std::string_view, std::vector<std::vector<double>>>
      launches;
  for (const DeviceWork& w : a.work()) {
    if (w.kind != WorkKind::kKernel) continue;
    auto [k, added] = kept.emplace(w.stream, false);
    if (added) {
      for (const auto& re : res) {
        k->second = k->second || RE2::FullMatch(a.String(w.stream), *re);
      }
    }
    auto step = std::lower_bound(steps.begin(), steps.end(), w.step);
    if (!k->second || step == steps.end() || *step != w.step) continue;
    auto& by_step = launches[a.String(w.name)];
    by_step.resize(n);
    by_step[static_cast<size_t>(step - steps.begin())].push_back(
        static_cast<double>(w.duration_ns) / 1000);
  }
  const bool time = IsTime(attribute) && attribute != "cpu_micros";
  auto fill = [&](const std::vector<std::vector<double>>& by_step,
                  RowSamples* s) {
    for (size_t i = 0; i < n && i < by_step.size(); ++i) {
      double ns = 0;
      for (double d : by_step[i]) ns += d;
      const double count = static_cast<double>(by_step[i].size());
      s->per_step[i] += attribute == "occurrence" ? count : time ? ns : 0;
      s->runs[i] += count;
    }
  };
  out->assign(tree.nodes.size(), RowSamples());
  for (size_t i = 0; i < tree.nodes.size(); ++i) {
    (*out)[i].per_step.assign(n, 0);
    (*out)[i].runs.assign(n, 0);
  }
  for (const auto& [name, by_step] : launches) {
    fill(by_step, &(*out)[0]);
    if (time) (*out)[0].jitter += OccurrenceJitter(by_step);
  }
  for (size_t i = 1; i < tree.nodes.size(); ++i) {
    const ResultNode& r = tree.nodes[i];
    auto it = launches.find(r.name);
    if (it == launches.end()) return false;
    fill(it->second, &(*out)[i]);
    if (time) (*out)[i].jitter = OccurrenceJitter(it->second);
    (*out)[i].parents = FlatParents(tree, r, model);
  }
  return true;
}

// Whether every row's total is its own figures plus its children's (no
// hidden rows count in it), for `attribute`.
bool TreeAccountsForTotals(const ResultTree& tree,
                           const std::string& attribute) {
  for (size_t i = 0; i < tree.nodes.size(); ++i) {
    const ResultNode& r = tree.nodes[i];
    if (i > 0 && r.fixed_type == std::string_view("_kernel")) return false;
    int64_t sum = SelfValue(r.self, attribute);
    for (size_t c : r.children) {
      if (c <= i) return false;  // children after their parent
      sum += TotalValue(tree.nodes[c].total, attribute);
    }
    if (sum != TotalValue(r.total, attribute)) return false;
    if (!r.members.empty()) {
      int64_t members = 0;
      for (const MemberNode& m : r.members) {
        members += SelfValue(m.stats, attribute);
      }
      if (members != SelfValue(r.self, attribute)) return false;
    }
  }
  return true;
}

// The op view: rows are their members' own figures, the root all rows'.
bool OpAccountsForTotals(const ResultTree& tree, const std::string& attribute) {
  int64_t all = 0;
  for (size_t i = 1; i < tree.nodes.size(); ++i) {
    const ResultNode& r = tree.nodes[i];
    int64_t members = 0;
    for (const MemberNode& m : r.members) {
      members += SelfValue(m.stats, attribute);
    }
    if (members != SelfValue(r.self, attribute)) return false;
    all += SelfValue(r.self, attribute);
  }
  return all == TotalValue(tree.root().total, attribute);
}

}  // namespace

void MergeParents(const ParentWeights& from, ParentWeights* to) {
  for (const auto& [name, weight] : from) {
    auto it = std::find_if(to->begin(), to->end(),
                           [&](const auto& p) { return p.first == name; });
    if (it == to->end()) {
      to->emplace_back(name, weight);
    } else {
      it->second += weight;
    }
  }
}

void RowSamples::Add(const RowSamples& o, bool with_parents) {
  if (per_step.size() < o.per_step.size()) per_step.resize(o.per_step.size());
  if (runs.size() < o.runs.size()) runs.resize(o.runs.size());
  for (size_t i = 0; i < o.per_step.size(); ++i) per_step[i] += o.per_step[i];
  for (size_t i = 0; i < o.runs.size(); ++i) runs[i] += o.runs[i];
  jitter += o.jitter;
  if (with_parents) MergeParents(o.parents, &parents);
}

double OccurrenceJitter(const std::vector<std::vector<double>>& steps) {
  std::vector<const std::vector<double>*> rows;
  for (const auto& s : steps) {
    if (!s.empty()) rows.push_back(&s);
  }
  if (rows.size() < 2) return 0;
  const size_t m = rows[0]->size();
  if (m < 2) return 0;
  for (const auto* r : rows) {
    if (r->size() != m) return 0;  // positions do not line up
  }
  const size_t n = rows.size();
  std::vector<double> step_mean(n, 0), position_mean(m, 0);
  double grand = 0;
  for (size_t s = 0; s < n; ++s) {
    for (size_t k = 0; k < m; ++k) {
      step_mean[s] += (*rows[s])[k];
      position_mean[k] += (*rows[s])[k];
    }
  }
  for (double& v : step_mean) {
    grand += v;
    v /= static_cast<double>(m);
  }
  for (double& v : position_mean) v /= static_cast<double>(n);
  grand /= static_cast<double>(n * m);
  double squares = 0;
  for (size_t s = 0; s < n; ++s) {
    for (size_t k = 0; k < m; ++k) {
      const double e = (*rows[s])[k] - step_mean[s] - position_mean[k] + grand;
      squares += e * e;
    }
  }
  const double residual =
      squares / (static_cast<double>(n - 1) * static_cast<double>(m - 1));
  return static_cast<double>(m) * residual;
}

RowSamples NodeSamples(const Model& model, const GraphNode& node,
                       const std::string& attribute) {
  NodeSampler sampler(model, attribute, {".*"});
  return sampler.Of(node);
}

ParentWeights FlatParents(const ResultTree& tree, const ResultNode& row,
                          const Model& model) {
  ParentWeights out;
  auto add = [&](const std::string& name, double weight) {
    MergeParents({{name, weight}}, &out);
  };
  for (const MemberNode& m : row.members) {
    // Counted by time, and by one for members without any.
    const double weight = 1 + static_cast<double>(m.stats.exec_micros);
    if (tree.view == ViewKind::kKernel) {
      add(m.node->op, weight);
      continue;
    }
    const std::string& name = m.node->name;
    const size_t slash = name.rfind('/');
    const GraphNode* caller = slash == std::string::npos
                                  ? nullptr
                                  : model.Find(name.substr(0, slash));
    add(caller == nullptr ? std::string() : caller->op, weight);
  }
  return out;
}

bool StepSamples(const ResultTree& tree, const Model& model,
                 const std::string& attribute, std::vector<RowSamples>* out) {
  if (tree.view == ViewKind::kKernel) {
    return KernelSamples(tree, model, attribute, out);
  }
  const bool flat = tree.view == ViewKind::kOp;
  if (flat ? !OpAccountsForTotals(tree, attribute)
           : !TreeAccountsForTotals(tree, attribute)) {
    return false;
  }
  NodeSampler sampler(model, attribute, tree.options.device_regexes);
  out->assign(tree.nodes.size(), RowSamples());
  for (RowSamples& s : *out) {
    s.per_step.assign(sampler.steps(), 0);
    s.runs.assign(sampler.steps(), 0);
  }
  // Children come after their parents: a walk from the end sums them up.
  for (size_t i = tree.nodes.size(); i-- > 0;) {
    const ResultNode& r = tree.nodes[i];
    RowSamples& s = (*out)[i];
    if (r.graph_node != nullptr) s.Add(sampler.Of(*r.graph_node));
    for (const MemberNode& m : r.members) s.Add(sampler.Of(*m.node));
    if (flat && i > 0) {
      s.parents = FlatParents(tree, r, model);
      (*out)[0].Add(s, /*parents=*/false);
    }
    if (!flat) {
      for (size_t c : r.children) {
        s.Add((*out)[c], /*parents=*/false);
      }
    }
  }
  return true;
}

}  // namespace tfprof
