#include "profiler/views/diff_samples.h"

#include <algorithm>
#include <map>
#include <memory>

#include "absl/container/flat_hash_map.h"
#include "re2/re2.h"

namespace tfprof {
namespace {

bool IsTime(Attr attribute) { return UnitOf(attribute) == StatUnit::kTime; }

// What a node's per-step statistics (GraphNode::Stats) give for the
// attribute, read from its executions directly.
double ExecValue(const GraphNode& g, const StepExec& e, Attr a) {
  switch (a) {
    case Attr::kMicros:
      return static_cast<double>(e.exec_micros());
    case Attr::kAcceleratorMicros:
      return static_cast<double>(e.accelerator_micros);
    case Attr::kCpuMicros:
      return static_cast<double>(e.cpu_micros);
    case Attr::kBytes:
      return static_cast<double>(e.requested_bytes);
    case Attr::kPeakBytes:
      return static_cast<double>(e.peak_bytes);
    case Attr::kResidualBytes:
      return static_cast<double>(e.residual_bytes);
    case Attr::kOutputBytes:
      return static_cast<double>(e.output_bytes);
    case Attr::kOccurrence:
      return static_cast<double>(e.run_count);
    case Attr::kFloatOps:
      return static_cast<double>(SatMul(g.float_ops, e.run_count));
    default:
      break;
  }
  return 0;
}

// The figures of graph nodes over the model's steps; a node met in several
// rows (the op and code views) is computed once.
class NodeSampler {
 public:
  NodeSampler(const Model& model, Attr attribute,
              const std::vector<std::string>& devices, bool cache)
      : model_(model), attribute_(attribute), cache_(cache) {
    steps_.assign(model.steps().begin(), model.steps().end());
    all_devices_ = devices.size() == 1 && devices[0] == ".*";
    for (const std::string& d : devices) {
      res_.push_back(std::make_unique<RE2>(d, RE2::Quiet));
    }
  }

  size_t steps() const { return steps_.size(); }

  // Adds the node's figures to `values` and `runs` (steps() each); returns
  // its jitter.
  double AddTo(const GraphNode& g, double* values, double* runs) {
    const size_t n = steps_.size();
    if (!cache_) return Fill(g, values, runs);
    if (slot_.empty()) slot_.assign(model_.size(), -1);
    int32_t& slot = slot_[g.index];
    if (slot < 0) {
      slot = static_cast<int32_t>(jitter_.size());
      values_.resize(values_.size() + n, 0);
      runs_.resize(runs_.size() + n, 0);
      jitter_.push_back(
          Fill(g, values_.data() + slot * n, runs_.data() + slot * n));
    }
    for (size_t k = 0; k < n; ++k) {
      values[k] += values_[slot * n + k];
      runs[k] += runs_[slot * n + k];
    }
    return jitter_[slot];
  }

 private:
  // Adds the node's figures (GraphNode::Stats or Model::StatsOn of each
  // step) and returns its jitter.
  double Fill(const GraphNode& g, double* values, double* runs) {
    const size_t n = steps_.size();
    if (!all_devices_) {
      for (size_t k = 0; k < n; ++k) {
        const NodeStats st = model_.StatsOn(g, steps_[k], Keep());
        values[k] += static_cast<double>(Value(st, attribute_));
        runs[k] += static_cast<double>(st.run_count);
      }
      return 0;
    }
    if (attribute_ == Attr::kParams ||
        (attribute_ == Attr::kFloatOps && g.execs.empty())) {
      const double v = static_cast<double>(
          attribute_ == Attr::kParams ? g.Parameters() : g.float_ops);
      for (size_t k = 0; k < n; ++k) values[k] += v;
    }
    size_t k = 0;
    for (const StepExec& e : g.execs) {
      while (k < n && steps_[k] < e.step) ++k;
      if (k == n) break;
      if (steps_[k] != e.step) continue;
      values[k] += ExecValue(g, e, attribute_);
      runs[k] += static_cast<double>(e.run_count);
    }
    return IsTime(attribute_) ? Jitter(g) : 0;
  }

  DeviceFilter Keep() {
    return [this](std::string_view d) {
      auto [it, added] = kept_.emplace(d, false);
      if (added) {
        for (const auto& re : res_) {
          it->second = it->second || RE2::FullMatch(std::string(d), *re);
        }
      }
      return it->second;
    };
  }

  // The node's occurrences in each step (the intervals of its CPU runs,
  // its accelerator work, or both, as the attribute counts them), decoded
  // only for nodes that run more than once in a step.
  double Jitter(const GraphNode& g) {
    if (g.execs.size() < 2) return 0;
    // Occurrences are runs: a node that runs once a step has no
    // replicates within a step (its kernels are parts of one run).
    bool several = false;
    for (const StepExec& e : g.execs) several |= e.run_count >= 2;
    if (!several) return 0;
    const bool cpu = attribute_ != Attr::kAcceleratorMicros;
    const bool accelerator = attribute_ != Attr::kCpuMicros;
    std::vector<std::vector<double>> steps;
    size_t per_step = 0;  // the occurrences of the first step with any
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
      // Positions line up only when every step has as many, two or more:
      // stop decoding as soon as they cannot.
      if (v.empty()) continue;
      if (per_step == 0) per_step = v.size();
      if (per_step < 2 || v.size() != per_step) return 0;
    }
    return OccurrenceJitter(steps);
  }

  const Model& model_;
  const Attr attribute_;
  const bool cache_;
  std::vector<int64_t> steps_;
  bool all_devices_ = true;
  std::vector<std::unique_ptr<RE2>> res_;
  absl::flat_hash_map<std::string_view, bool> kept_;
  std::vector<int32_t> slot_;  // by GraphNode::index: its cached figures
  std::vector<double> values_, runs_, jitter_;
  ExecDetail detail_;
};

// The kernel view's rows: every kernel on the kept streams, by name, per
// step; the root gets them all.
bool KernelSamples(const ResultTree& tree, const Model& model, Attr attribute,
                   SampleTable* out) {
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
  const bool time = IsTime(attribute) && attribute != Attr::kCpuMicros;
  out->Resize(tree.nodes.size(), n);
  out->parents.assign(tree.nodes.size(), ParentWeights());
  auto fill = [&](const std::vector<std::vector<double>>& by_step, size_t row) {
    for (size_t i = 0; i < n && i < by_step.size(); ++i) {
      double us = 0;
      for (double d : by_step[i]) us += d;
      const double count = static_cast<double>(by_step[i].size());
      out->per_step[row * n + i] += attribute == Attr::kOccurrence ? count
                                    : time                         ? us
                                                                   : 0;
      out->runs[row * n + i] += count;
    }
    if (time) out->jitter[row] += OccurrenceJitter(by_step);
  };
  for (const auto& [name, by_step] : launches) fill(by_step, 0);
  for (size_t i = 1; i < tree.nodes.size(); ++i) {
    const ResultNode& r = tree.nodes[i];
    auto it = launches.find(r.name);
    if (it == launches.end()) return false;
    fill(it->second, i);
    out->parents[i] = FlatParents(tree, r, model);
  }
  return true;
}

// Whether every row's total is its own figures plus its children's (no
// hidden rows count in it), for `attribute`.
bool TreeAccountsForTotals(const ResultTree& tree, Attr attribute) {
  for (size_t i = 0; i < tree.nodes.size(); ++i) {
    const ResultNode& r = tree.nodes[i];
    if (i > 0 && r.fixed_type == std::string_view("_kernel")) return false;
    int64_t sum = Value(r.self, attribute);
    for (size_t c : r.children) {
      if (c <= i) return false;  // children after their parent
      sum += Value(tree.nodes[c].total, attribute);
    }
    if (sum != Value(r.total, attribute)) return false;
    if (!r.members.empty()) {
      int64_t members = 0;
      for (const MemberNode& m : r.members) {
        members += Value(m.stats, attribute);
      }
      if (members != Value(r.self, attribute)) return false;
    }
  }
  return true;
}

// The op view: rows are their members' own figures, the root all rows'.
bool OpAccountsForTotals(const ResultTree& tree, Attr attribute) {
  int64_t all = 0;
  for (size_t i = 1; i < tree.nodes.size(); ++i) {
    const ResultNode& r = tree.nodes[i];
    int64_t members = 0;
    for (const MemberNode& m : r.members) {
      members += Value(m.stats, attribute);
    }
    if (members != Value(r.self, attribute)) return false;
    all += Value(r.self, attribute);
  }
  return all == Value(tree.root().total, attribute);
}

// A model of several ranks' events holds their sums; the views show the
// mean per rank (Model::ranks()), and so do these figures: values and runs
// over the rank count, variances over its square.
void ToMeanPerRank(const Model& model, std::vector<double>* values,
                   std::vector<double>* runs, double* jitter, size_t rows) {
  const double r = static_cast<double>(model.ranks());
  if (r <= 1) return;
  for (double& v : *values) v /= r;
  for (double& v : *runs) v /= r;
  for (size_t i = 0; i < rows; ++i) jitter[i] /= r * r;
}

}  // namespace

void MergeParents(const ParentWeights& from, ParentWeights* to) {
  for (const auto& entry : from) {
    auto it = std::find_if(to->begin(), to->end(), [&](const auto& p) {
      return p.first == entry.first;
    });
    if (it == to->end()) {
      to->push_back(entry);
    } else {
      it->second += entry.second;
    }
  }
}

void SampleTable::Resize(size_t rows, size_t step_count) {
  steps = step_count;
  per_step.assign(rows * steps, 0);
  runs.assign(rows * steps, 0);
  jitter.assign(rows, 0);
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

std::vector<NodeSample> NodeSamples(const Model& model,
                                    const std::vector<const GraphNode*>& nodes,
                                    Attr attribute) {
  NodeSampler sampler(model, attribute, {".*"}, /*cache=*/false);
  std::vector<NodeSample> out(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    NodeSample& s = out[i];
    s.per_step.assign(sampler.steps(), 0);
    s.runs.assign(sampler.steps(), 0);
    if (nodes[i] != nullptr) {
      s.jitter = sampler.AddTo(*nodes[i], s.per_step.data(), s.runs.data());
    }
    ToMeanPerRank(model, &s.per_step, &s.runs, &s.jitter, 1);
  }
  return out;
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

namespace {

bool SummedStepSamples(const ResultTree& tree, const Model& model,
                       Attr attribute, SampleTable* out) {
  if (tree.view == ViewKind::kKernel) {
    return KernelSamples(tree, model, attribute, out);
  }
  const bool flat = tree.view == ViewKind::kOp;
  if (flat ? !OpAccountsForTotals(tree, attribute)
           : !TreeAccountsForTotals(tree, attribute)) {
    return false;
  }
  NodeSampler sampler(
      model, attribute, tree.options.device_regexes,
      /*cache=*/tree.view != ViewKind::kScope && tree.view != ViewKind::kGraph);
  const size_t n = sampler.steps();
  out->Resize(tree.nodes.size(), n);
  if (flat) out->parents.assign(tree.nodes.size(), ParentWeights());
  double* values = out->per_step.data();
  double* runs = out->runs.data();
  // Children come after their parents: a walk from the end sums them up.
  for (size_t i = tree.nodes.size(); i-- > 0;) {
    const ResultNode& r = tree.nodes[i];
    double* v = values + i * n;
    double* u = runs + i * n;
    if (r.graph_node != nullptr) {
      out->jitter[i] += sampler.AddTo(*r.graph_node, v, u);
    }
    // (The op view's root has its rows' figures, added below.)
    for (size_t k = 0; k < r.members.size() && !(flat && i == 0); ++k) {
      out->jitter[i] += sampler.AddTo(*r.members[k].node, v, u);
    }
    if (flat && i > 0) {
      out->parents[i] = FlatParents(tree, r, model);
      for (size_t k = 0; k < n; ++k) {
        values[k] += v[k];
        runs[k] += u[k];
      }
      out->jitter[0] += out->jitter[i];
    }
    if (!flat) {
      for (size_t c : r.children) {
        for (size_t k = 0; k < n; ++k) {
          v[k] += values[c * n + k];
          u[k] += runs[c * n + k];
        }
        out->jitter[i] += out->jitter[c];
      }
    }
  }
  return true;
}

}  // namespace

bool StepSamples(const ResultTree& tree, const Model& model, Attr attribute,
                 SampleTable* out) {
  if (!SummedStepSamples(tree, model, attribute, out)) return false;
  ToMeanPerRank(model, &out->per_step, &out->runs, out->jitter.data(),
                out->jitter.size());
  return true;
}

}  // namespace tfprof
