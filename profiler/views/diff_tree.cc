// QueryDiff: both sides' results merged by name, their per-step figures,
// the verdicts, the cost shifts and the pruned, ordered rows.
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <memory>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "profiler/base/parallel.h"
#include "profiler/views/diff.h"
#include "profiler/views/diff_samples.h"
#include "re2/re2.h"

namespace tfprof {
namespace {

using Parents = ParentWeights;

double Delta(const DiffNode& n, const std::string& attribute) {
  int64_t b = 0, c = 0;
  DiffValue(n.base.total, attribute, &b);
  DiffValue(n.current.total, attribute, &c);
  return static_cast<double>(c) - static_cast<double>(b);
}

// What a row counts: its totals in the tree views; in the flat views
// (whose totals run down the list) its own figures.
Totals RowTotals(const ResultTree& tree, const ResultNode& r) {
  if (!IsFlatView(tree.view) || &r == &tree.root()) return r.total;
  Totals t;
  t.AddSelf(r.self);
  t.definition_count = r.total.definition_count;
  return t;
}

// Merges result trees into one by the path of rewritten names.
class Merger {
 public:
  Merger(const std::vector<DiffRule>& rules, size_t base_steps,
         size_t current_steps)
      : base_steps_(base_steps), current_steps_(current_steps) {
    for (const DiffRule& r : rules) {
      res_.push_back(std::make_unique<RE2>(r.pattern, RE2::Quiet));
      rewrites_.push_back(r.rewrite);
    }
    NewNode(kRootName);
  }

  // Adds a side's tree: its totals, and marks its rows present. Returns
  // the merged node of each of the tree's nodes.
  std::vector<size_t> Add(const ResultTree& tree, bool base) {
    std::vector<size_t> map(tree.nodes.size(), 0);
    Walk(tree, 0, 0, &map);
    for (size_t i = 0; i < tree.nodes.size(); ++i) {
      DiffSide& side = Side(map[i], base);
      side.present = true;
      side.total.Add(RowTotals(tree, tree.nodes[i]));
    }
    return map;
  }

  // Adds a side's per-step figures (rows mapped to one name add up).
  void AddSamples(const std::vector<size_t>& map,
                  const std::vector<RowSamples>& samples, bool base) {
    for (size_t i = 0; i < map.size(); ++i) {
      DiffSide& side = Side(map[i], base);
      const RowSamples& s = samples[i];
      for (size_t k = 0; k < s.per_step.size(); ++k) {
        side.per_step[k] += s.per_step[k];
        side.runs[k] += s.runs[k];
      }
      side.jitter += s.jitter;
      MergeParents(s.parents, &parents_[map[i]]);
    }
  }

  // Adds a side's tree of one step: each row's value of `attribute` and
  // runs (rows made on the way are present in neither side).
  void AddStep(const ResultTree& tree, bool base, size_t step,
               const std::string& attribute) {
    std::vector<size_t> map(tree.nodes.size(), 0);
    Walk(tree, 0, 0, &map);
    for (size_t i = 0; i < tree.nodes.size(); ++i) {
      const Totals t = RowTotals(tree, tree.nodes[i]);
      int64_t v = 0;
      DiffValue(t, attribute, &v);
      DiffSide& side = Side(map[i], base);
      side.per_step[step] += static_cast<double>(v);
      side.runs[step] += static_cast<double>(t.run_count);
    }
  }

  // A flat view's parents of its rows from the -step -1 result.
  void AddParents(const std::vector<size_t>& map, const ResultTree& tree,
                  const Model& model) {
    for (size_t i = 1; i < tree.nodes.size(); ++i) {
      MergeParents(FlatParents(tree, tree.nodes[i], model), &parents_[map[i]]);
    }
  }

  std::vector<DiffNode>& nodes() { return nodes_; }
  std::vector<Parents>& parents() { return parents_; }

 private:
  DiffSide& Side(size_t i, bool base) {
    return base ? nodes_[i].base : nodes_[i].current;
  }

  std::string Map(const std::string& name) const {
    std::string out = name;
    for (size_t i = 0; i < res_.size(); ++i) {
      RE2::GlobalReplace(&out, *res_[i], rewrites_[i]);
    }
    return out;
  }

  size_t NewNode(std::string name) {
    DiffNode& n = nodes_.emplace_back();
    n.name = std::move(name);
    n.base.per_step.assign(base_steps_, 0);
    n.base.runs.assign(base_steps_, 0);
    n.current.per_step.assign(current_steps_, 0);
    n.current.runs.assign(current_steps_, 0);
    parents_.emplace_back();
    return nodes_.size() - 1;
  }

  // Maps every node below tree node `t`, whose diff node is `d`, making
  // diff nodes as needed.
  void Walk(const ResultTree& tree, size_t t, size_t d,
            std::vector<size_t>* map) {
    for (size_t c : tree.nodes[t].children) {
      std::string name =
          res_.empty() ? tree.nodes[c].name : Map(tree.nodes[c].name);
      auto [it, added] = index_.try_emplace({d, name}, nodes_.size());
      if (added) {
        NewNode(std::move(name));
        nodes_[d].children.push_back(it->second);
      }
      (*map)[c] = it->second;
      Walk(tree, c, it->second, map);
    }
  }

  size_t base_steps_, current_steps_;
  std::vector<std::unique_ptr<RE2>> res_;
  std::vector<std::string> rewrites_;
  std::vector<DiffNode> nodes_;
  std::vector<Parents> parents_;
  absl::flat_hash_map<std::pair<size_t, std::string>, size_t> index_;
};

// Whether either side of a row reaches every -min_* threshold (on totals).
bool ReachesMinimums(const DiffNode& n, const Options& o) {
  auto reaches = [&](const Totals& t) {
    return t.requested_bytes >= o.min_bytes &&
           t.peak_bytes >= o.min_peak_bytes &&
           t.residual_bytes >= o.min_residual_bytes &&
           t.output_bytes >= o.min_output_bytes &&
           t.exec_micros >= o.min_micros &&
           t.accelerator_exec_micros >= o.min_accelerator_micros &&
           t.cpu_exec_micros >= o.min_cpu_micros &&
           t.parameters >= o.min_params && t.float_ops >= o.min_float_ops &&
           t.run_count >= o.min_occurrence;
  };
  return (n.base.present && reaches(n.base.total)) ||
         (n.current.present && reaches(n.current.total));
}

// The kept rows, depth first from the root, children ordered by the size
// of their change; indices renumbered.
class Pruner {
 public:
  Pruner(std::vector<DiffNode>* in, const DiffTree& tree)
      : in_(*in), tree_(tree) {}

  std::vector<DiffNode> Run() {
    wanted_.assign(in_.size(), false);
    Mark(0);
    out_.reserve(in_.size());
    Keep(0);
    return std::move(out_);
  }

 private:
  // Whether row i is kept: it reaches the minimums, and with
  // significant_only, it or a row below it changed significantly.
  bool Mark(size_t i) {
    const DiffNode& n = in_[i];
    bool below = false;
    for (size_t c : n.children) below |= Mark(c);
    const bool enough = i == 0 || ReachesMinimums(n, tree_.options);
    wanted_[i] = enough && (!tree_.diff.significant_only || i == 0 ||
                            n.judgement.significant || below);
    return wanted_[i] && (n.judgement.significant || below);
  }

  size_t Keep(size_t i, int64_t depth = 0) {
    const size_t at = out_.size();
    std::vector<size_t> children = std::move(in_[i].children);
    out_.push_back(std::move(in_[i]));
    const Options& o = tree_.options;
    // Trees show -max_depth levels below the root; flat views -max_depth+1
    // rows (as the op view does).
    const bool flat = IsFlatView(tree_.view);
    if (!flat && depth >= o.max_depth) return at;
    std::vector<size_t> kids;
    for (size_t c : children) {
      if (wanted_[c]) kids.push_back(c);
    }
    const std::string& by = tree_.attribute;
    std::stable_sort(kids.begin(), kids.end(), [&](size_t a, size_t b) {
      const double da = std::fabs(Delta(in_[a], by));
      const double db = std::fabs(Delta(in_[b], by));
      if (da != db) return da > db;
      int64_t ca = 0, cb = 0;
      DiffValue(in_[a].current.total, by, &ca);
      DiffValue(in_[b].current.total, by, &cb);
      if (ca != cb) return ca > cb;
      return in_[a].name < in_[b].name;
    });
    if (flat && o.max_depth >= 0 &&
        kids.size() > static_cast<size_t>(o.max_depth) + 1) {
      kids.resize(static_cast<size_t>(o.max_depth) + 1);
    }
    for (size_t c : kids) {
      const size_t k = Keep(c, depth + 1);
      out_[at].children.push_back(k);
    }
    return at;
  }

  std::vector<DiffNode>& in_;
  const DiffTree& tree_;
  std::vector<bool> wanted_;
  std::vector<DiffNode> out_;
};

// A side's query. A run without kernels has an empty kernel view here (its
// rows are all "only in" the other run) rather than an error.
absl::StatusOr<ResultTree> QuerySide(Views* views, ViewKind view,
                                     const Options& opts) {
  absl::StatusOr<ResultTree> r = views->Query(view, opts);
  if (r.ok() || view != ViewKind::kKernel ||
      r.status().code() != absl::StatusCode::kFailedPrecondition) {
    return r;
  }
  ResultTree empty;
  empty.view = view;
  empty.options = opts;
  empty.nodes.emplace_back().name = kRootName;
  return empty;
}

// Per-step values of every row by querying each step (when the one-pass
// figures cannot account for the rows' totals).
absl::Status AddStepsByQuery(ViewKind view, const Options& opts,
                             const std::string& attribute, Views* views,
                             const Model& model, bool base, Merger* merger) {
  size_t i = 0;
  for (int64_t step : model.steps()) {
    Options o = opts;
    o.step = step;
    absl::StatusOr<ResultTree> r = QuerySide(views, view, o);
    if (!r.ok()) return r.status();
    merger->AddStep(*r, base, i++, attribute);
  }
  return absl::OkStatus();
}

ChangeInput InputOf(const DiffNode& n) {
  ChangeInput in;
  in.base = n.base.per_step;
  in.current = n.current.per_step;
  in.base_jitter = n.base.jitter;
  in.current_jitter = n.current.jitter;
  return in;
}

void Judge(DiffTree* tree) {
  std::vector<ChangeInput> inputs;
  inputs.reserve(tree->nodes.size());
  const StatUnit unit = UnitOfStat(tree->attribute);
  for (const DiffNode& n : tree->nodes) {
    inputs.push_back(InputOf(n));
    SetFloor(tree->diff.min_change, unit, &inputs.back());
  }
  const std::vector<Judgement> j = JudgeChanges(inputs, tree->diff.alpha);
  for (size_t i = 0; i < tree->nodes.size(); ++i) {
    tree->nodes[i].judgement = j[i];
  }
}

// The parent a row is grouped under for cost shifts in a flat view: its
// heaviest parent op type.
std::string HeaviestParent(const Parents& p) {
  const std::pair<std::string, double>* best = nullptr;
  for (const auto& e : p) {
    if (best == nullptr || e.second > best->second ||
        (e.second == best->second && e.first < best->first)) {
      best = &e;
    }
  }
  return best == nullptr ? std::string() : best->first;
}

// Rows that fell or vanished together with rows that grew or appeared
// under one parent.
void FindShifts(DiffTree* tree, const std::vector<Parents>& parents) {
  std::vector<std::pair<std::string, std::vector<size_t>>> groups;
  const bool flat = IsFlatView(tree->view);
  if (flat) {
    std::map<std::string, std::vector<size_t>> by_parent;
    for (size_t c : tree->nodes[0].children) {
      by_parent[HeaviestParent(parents[c])].push_back(c);
    }
    for (auto& [name, rows] : by_parent) {
      groups.emplace_back(name.empty() ? "(no calling op)" : name,
                          std::move(rows));
    }
  } else {
    for (const DiffNode& n : tree->nodes) {
      if (n.children.size() >= 2) groups.emplace_back(n.name, n.children);
    }
  }
  std::vector<ChangeInput> inputs;
  const std::string& attr = tree->attribute;
  for (const auto& [parent, rows] : groups) {
    // A group moved when rows vanished (or, in a flat view, ran fewer
    // times) while others appeared (or ran more times): then its members
    // are those rows and, in a flat view, every clear change under the
    // parent (the same kernel now doing another layer's work).
    std::vector<int> sign(rows.size(), 0);
    bool down = false, up = false;
    for (size_t i = 0; i < rows.size(); ++i) {
      const DiffNode& n = tree->nodes[rows[i]];
      const bool both = n.base.present && n.current.present;
      const double runs = n.current.MeanRuns() - n.base.MeanRuns();
      const Verdict v = n.judgement.verdict;
      if (!both && v != Verdict::kUnchanged) {
        sign[i] = n.base.present ? -1 : 1;
      } else if (flat &&
                 (v == Verdict::kImproved || v == Verdict::kRegressed)) {
        sign[i] = v == Verdict::kImproved ? -2 : 2;  // 2: not structural
        if (runs <= -0.5 && v == Verdict::kImproved) sign[i] = -1;
        if (runs >= 0.5 && v == Verdict::kRegressed) sign[i] = 1;
      }
      down |= sign[i] == -1;
      up |= sign[i] == 1;
    }
    if (!down || !up) continue;
    DiffShift shift;
    shift.parent = parent;
    ChangeInput sum;
    for (size_t i = 0; i < rows.size(); ++i) {
      if (sign[i] == 0) continue;
      DiffNode& n = tree->nodes[rows[i]];
      DiffShift::Member m{
          n.name, 0, 0, n.judgement.verdict, n.base.present, n.current.present};
      DiffValue(n.base.total, attr, &m.base);
      DiffValue(n.current.total, attr, &m.current);
      (sign[i] < 0 ? shift.removed : shift.added).push_back(m);
      n.shift = static_cast<int>(tree->shifts.size());
      const ChangeInput one = InputOf(n);
      sum.base.resize(one.base.size());
      sum.current.resize(one.current.size());
      for (size_t k = 0; k < one.base.size(); ++k) sum.base[k] += one.base[k];
      for (size_t k = 0; k < one.current.size(); ++k) {
        sum.current[k] += one.current[k];
      }
      sum.base_jitter += one.base_jitter;
      sum.current_jitter += one.current_jitter;
    }
    for (const auto* list : {&shift.removed, &shift.added}) {
      for (const DiffShift::Member& m : *list) {
        shift.base += m.base;
        shift.current += m.current;
      }
    }
    SetFloor(tree->diff.min_change, UnitOfStat(attr), &sum);
    inputs.push_back(std::move(sum));
    tree->shifts.push_back(std::move(shift));
  }
  const std::vector<Judgement> j = JudgeChanges(inputs, tree->diff.alpha);
  for (size_t i = 0; i < j.size(); ++i) tree->shifts[i].combined = j[i];
}

// Every row of both sides: -max_depth and -min_* apply after matching (a
// row cut on one side only is not "only in" the other).
Options AllRows(const Options& opts) {
  Options all = opts;
  all.max_depth = INT64_MAX / 2;
  all.min_bytes = all.min_peak_bytes = all.min_residual_bytes =
      all.min_output_bytes = all.min_micros = all.min_accelerator_micros =
          all.min_cpu_micros = all.min_params = all.min_float_ops =
              all.min_occurrence = 0;
  return all;
}

}  // namespace

absl::StatusOr<DiffTree> QueryDiff(ViewKind view, const Options& opts,
                                   const DiffOptions& diff, Views* base,
                                   const Model& base_model, Views* current,
                                   const Model& current_model) {
  DiffTree tree;
  tree.view = view;
  tree.options = opts;
  tree.diff = diff;
  int64_t unused;
  const std::vector<std::string> attrs = DiffAttributes(opts);
  tree.attribute = DiffValue(Totals(), opts.order_by, &unused) ? opts.order_by
                   : attrs.empty()                             ? "micros"
                                                               : attrs[0];
  const Options all = AllRows(opts);
  // The two sides are independent: on large models, on two cores.
  const bool parallel =
      base != current && &base_model != &current_model &&
      base_model.size() + current_model.size() >= kParallelMinItems;
  absl::StatusOr<ResultTree> b, c;
  RunBoth(
      parallel, [&] { b = QuerySide(base, view, all); },
      [&] { c = QuerySide(current, view, all); });
  if (!b.ok()) {
    return absl::Status(b.status().code(),
                        absl::StrCat("base run: ", b.status().message()));
  }
  if (!c.ok()) return c.status();
  const bool one_step = opts.step >= 0;
  Merger merger(diff.rules, one_step ? 0 : base_model.steps().size(),
                one_step ? 0 : current_model.steps().size());
  const std::vector<size_t> map_b = merger.Add(*b, true);
  const std::vector<size_t> map_c = merger.Add(*c, false);
  if (!one_step) {
    std::vector<RowSamples> sb, sc;
    bool ok_b = false, ok_c = false;
    RunBoth(
        parallel,
        [&] { ok_b = StepSamples(*b, base_model, tree.attribute, &sb); },
        [&] { ok_c = StepSamples(*c, current_model, tree.attribute, &sc); });
    if (ok_b && ok_c) {
      merger.AddSamples(map_b, sb, true);
      merger.AddSamples(map_c, sc, false);
    } else {
      tree.notes.push_back(
          "per-step figures from one query per step: the view's options "
          "hide rows that still count in their parents' totals");
      absl::Status s = AddStepsByQuery(view, all, tree.attribute, base,
                                       base_model, true, &merger);
      if (!s.ok()) return s;
      s = AddStepsByQuery(view, all, tree.attribute, current, current_model,
                          false, &merger);
      if (!s.ok()) return s;
      if (IsFlatView(view)) {
        merger.AddParents(map_b, *b, base_model);
        merger.AddParents(map_c, *c, current_model);
      }
    }
  } else if (IsFlatView(view)) {
    merger.AddParents(map_b, *b, base_model);
    merger.AddParents(map_c, *c, current_model);
  }
  tree.nodes = std::move(merger.nodes());
  Judge(&tree);
  FindShifts(&tree, merger.parents());
  if (one_step || base_model.steps().size() < kDiffMinSteps ||
      current_model.steps().size() < kDiffMinSteps) {
    tree.notes.push_back(
        absl::StrCat("no verdicts: they need ", kDiffMinSteps,
                     " or more steps on each side and -step -1 (base ",
                     base_model.steps().size(), ", current ",
                     current_model.steps().size(), ")"));
  }
  std::vector<DiffNode> nodes = std::move(tree.nodes);
  tree.nodes = Pruner(&nodes, tree).Run();
  return tree;
}

}  // namespace tfprof
