// QueryDiff: both sides' results merged by name, their per-step figures,
// the verdicts, the cost shifts and the pruned, ordered rows.
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <deque>
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

double Delta(const DiffNode& n, Attr attribute) {
  return static_cast<double>(Value(n.current.total, attribute)) -
         static_cast<double>(Value(n.base.total, attribute));
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

// Merges result trees into one by the path of rewritten names, with the
// sides' per-step figures.
class Merger {
 public:
  Merger(const std::vector<DiffRule>& rules, size_t base_steps,
         size_t current_steps)
      : data_(std::make_shared<DiffStepData>()) {
    data_->base_steps = base_steps;
    data_->current_steps = current_steps;
    for (const DiffRule& r : rules) {
      res_.push_back(std::make_unique<RE2>(r.pattern, RE2::Quiet));
      rewrites_.push_back(r.rewrite);
    }
    NewNode(kRootName);
  }

  // Whether two results have the same rows in the same shape (two runs of
  // one program, usually) and no rule renames: row i then matches row i.
  bool Alike(const ResultTree& a, const ResultTree& b) const {
    if (!res_.empty() || a.nodes.size() != b.nodes.size()) return false;
    const auto same = [&](size_t from, size_t to) {
      for (size_t i = from; i < to; ++i) {
        if (a.nodes[i].children != b.nodes[i].children ||
            a.nodes[i].name != b.nodes[i].name) {
          return false;
        }
      }
      return true;
    };
    const size_t rows = a.nodes.size();
    if (rows < kParallelMinItems) return same(0, rows);
    bool first = false, second = false;
    RunBoth(
        true, [&] { first = same(0, rows / 2); },
        [&] { second = same(rows / 2, rows); });
    return first && second;
  }

  // Adds both sides of results that are Alike(): row i is merged row i.
  // Takes the base's names and child lists.
  void AddAlike(ResultTree* b, const ResultTree& c) {
    const size_t rows = b->nodes.size();
    nodes_.resize(rows);
    parents_.resize(rows);
    alike_ = true;  // AddSamples takes the figures as they are
    const auto fill = [&](size_t from, size_t to) {
      for (size_t i = from; i < to; ++i) {
        DiffNode& n = nodes_[i];
        ResultNode& r = b->nodes[i];
        n.base.present = n.current.present = true;
        n.base.total = RowTotals(*b, r);
        n.current.total = RowTotals(c, c.nodes[i]);
        if (i > 0) n.name = std::move(r.name);
        n.children = std::move(r.children);
      }
    };
    RunBoth(
        rows >= kParallelMinItems, [&] { fill(0, rows / 2); },
        [&] { fill(rows / 2, rows); });
  }

  // Adds a side's tree: its totals, and marks its rows present. Returns
  // the merged node of each of the tree's nodes. The tree must outlive the
  // merger (its names are the index's keys).
  std::vector<size_t> Add(const ResultTree& tree, bool base) {
    nodes_.reserve(std::max(nodes_.capacity(), tree.nodes.size()));
    index_.reserve(index_.size() + tree.nodes.size());
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
  void AddSamples(const std::vector<size_t>& map, SampleTable* samples,
                  bool base) {
    std::vector<double>& values =
        base ? data_->base_values : data_->current_values;
    std::vector<double>& runs = base ? data_->base_runs : data_->current_runs;
    const size_t n = samples->steps;
    if (alike_) {  // row i is row i: take the figures as they are
      values = std::move(samples->per_step);
      runs = std::move(samples->runs);
    }
    for (size_t i = 0; i < map.size(); ++i) {
      const size_t at = map[i];
      if (!alike_) {
        for (size_t k = 0; k < n; ++k) {
          values[at * n + k] += samples->per_step[i * n + k];
          runs[at * n + k] += samples->runs[i * n + k];
        }
      }
      Side(at, base).jitter += samples->jitter[i];
      if (!samples->parents.empty()) {
        MergeParents(samples->parents[i], &parents_[at]);
      }
    }
  }

  // Adds a side's tree of one step: each row's value of `attribute` and
  // runs (rows made on the way are present in neither side).
  void AddStep(const ResultTree& tree, bool base, size_t step, Attr attribute) {
    std::vector<size_t> map(tree.nodes.size(), 0);
    Walk(tree, 0, 0, &map);
    std::vector<double>& values =
        base ? data_->base_values : data_->current_values;
    std::vector<double>& runs = base ? data_->base_runs : data_->current_runs;
    const size_t n = base ? data_->base_steps : data_->current_steps;
    for (size_t i = 0; i < tree.nodes.size(); ++i) {
      const Totals t = RowTotals(tree, tree.nodes[i]);
      values[map[i] * n + step] += static_cast<double>(Value(t, attribute));
      runs[map[i] * n + step] += static_cast<double>(t.run_count);
    }
  }

  // A flat view's parents of its rows from the -step -1 result.
  void AddParents(const std::vector<size_t>& map, const ResultTree& tree,
                  const Model& model) {
    for (size_t i = 1; i < tree.nodes.size(); ++i) {
      MergeParents(FlatParents(tree, tree.nodes[i], model), &parents_[map[i]]);
    }
  }

  // Points every row's sides at their per-step figures; returns them.
  std::shared_ptr<const DiffStepData> Finish() {
    Grow(nodes_.size());  // (rows no side gave figures for: zeros)
    const DiffStepData& d = *data_;
    const size_t nb = d.base_steps, nc = d.current_steps;
    for (size_t i = 0; i < nodes_.size(); ++i) {
      nodes_[i].base.per_step = {d.base_values.data() + i * nb, nb};
      nodes_[i].base.runs = {d.base_runs.data() + i * nb, nb};
      nodes_[i].current.per_step = {d.current_values.data() + i * nc, nc};
      nodes_[i].current.runs = {d.current_runs.data() + i * nc, nc};
    }
    return data_;
  }

  std::vector<DiffNode>& nodes() { return nodes_; }
  // The rows' parents (op types, callers), renamed by the rules as the rows
  // are: a cost shift says "under" a row's name.
  std::vector<Parents>& parents() {
    if (!res_.empty() && !parents_mapped_) {
      for (Parents& p : parents_) {
        Parents mapped;
        for (const auto& [name, weight] : p) {
          // ("": no parent, whatever the rules say.)
          MergeParents({{name.empty() ? name : Map(name), weight}}, &mapped);
        }
        p = std::move(mapped);
      }
      parents_mapped_ = true;
    }
    return parents_;
  }

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

  // Room for `rows` rows' figures (zeros).
  void Grow(size_t rows) {
    DiffStepData& d = *data_;
    for (auto* v : {&d.base_values, &d.base_runs})
      v->resize(rows * d.base_steps);
    for (auto* v : {&d.current_values, &d.current_runs}) {
      v->resize(rows * d.current_steps);
    }
  }

  size_t NewNode(std::string name) {
    DiffNode& n = nodes_.emplace_back();
    n.name = std::move(name);
    parents_.emplace_back();
    Grow(nodes_.size());
    return nodes_.size() - 1;
  }

  // Maps every node below tree node `t`, whose diff node is `d`, making
  // diff nodes as needed.
  void Walk(const ResultTree& tree, size_t t, size_t d,
            std::vector<size_t>* map) {
    for (size_t c : tree.nodes[t].children) {
      // The index keeps views of the names: the trees' own, or the
      // rewritten ones the merger keeps.
      std::string_view name = tree.nodes[c].name;
      if (!res_.empty()) name = mapped_.emplace_back(Map(tree.nodes[c].name));
      auto [it, added] = index_.try_emplace({d, name}, nodes_.size());
      if (added) {
        NewNode(std::string(name));
        nodes_[d].children.push_back(it->second);
      }
      (*map)[c] = it->second;
      Walk(tree, c, it->second, map);
    }
  }

  std::shared_ptr<DiffStepData> data_;
  bool alike_ = false;  // AddAlike: row i of each side is row i
  std::vector<std::unique_ptr<RE2>> res_;
  std::vector<std::string> rewrites_;
  std::vector<DiffNode> nodes_;
  std::vector<Parents> parents_;
  bool parents_mapped_ = false;
  std::deque<std::string> mapped_;  // names the rules rewrote (index keys)
  absl::flat_hash_map<std::pair<size_t, std::string_view>, size_t> index_;
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
// of their change; indices renumbered. In place: a large diff's rows are
// moved, not copied.
class Pruner {
 public:
  Pruner(std::vector<DiffNode>* nodes, const DiffTree& tree)
      : nodes_(*nodes), tree_(tree) {}

  void Run() {
    const size_t n = nodes_.size();
    wanted_.assign(n, false);
    delta_.resize(n);
    current_.resize(n);
    for (size_t i = 0; i < n; ++i) {
      delta_[i] = std::fabs(Delta(nodes_[i], tree_.attribute));
      current_[i] = Value(nodes_[i].current.total, tree_.attribute);
    }
    Mark(0);
    order_.reserve(n);
    Keep(0);
    const size_t kept = order_.size();
    // The rows left out go last; then row p takes the row at order_[p],
    // cycle by cycle.
    std::vector<bool> placed(n, false);
    for (size_t old : order_) placed[old] = true;
    for (size_t i = 0; i < n; ++i) {
      if (!placed[i]) order_.push_back(i);
    }
    std::vector<bool> done(n, false);
    for (size_t p = 0; p < n; ++p) {
      if (done[p]) continue;
      DiffNode first = std::move(nodes_[p]);
      size_t q = p;
      while (true) {
        done[q] = true;
        const size_t from = order_[q];
        if (from == p) {
          nodes_[q] = std::move(first);
          break;
        }
        nodes_[q] = std::move(nodes_[from]);
        q = from;
      }
    }
    nodes_.resize(kept);
  }

 private:
  // Whether row i is kept: it reaches the minimums, and with
  // significant_only, it or a row below it changed significantly.
  bool Mark(size_t i) {
    const DiffNode& n = nodes_[i];
    bool below = false;
    for (size_t c : n.children) below |= Mark(c);
    const bool enough = i == 0 || ReachesMinimums(n, tree_.options);
    wanted_[i] = enough && (!tree_.diff.significant_only || i == 0 ||
                            n.judgement.significant || below);
    return wanted_[i] && (n.judgement.significant || below);
  }

  // Places row i (old index) next; its children, kept and ordered, after
  // it. Returns its new index.
  size_t Keep(size_t i, int64_t depth = 0) {
    const size_t at = order_.size();
    order_.push_back(i);
    std::vector<size_t> kids;
    const Options& o = tree_.options;
    // Trees show -max_depth levels, the root being the first (as the
    // views do: tfprof's root is depth 1); flat views -max_depth+1 rows (as
    // the op view does).
    const bool flat = IsFlatView(tree_.view);
    if (flat || depth + 1 < o.max_depth) {
      for (size_t c : nodes_[i].children) {
        if (wanted_[c]) kids.push_back(c);
      }
    }
    std::stable_sort(kids.begin(), kids.end(), [&](size_t a, size_t b) {
      if (delta_[a] != delta_[b]) return delta_[a] > delta_[b];
      if (current_[a] != current_[b]) return current_[a] > current_[b];
      return nodes_[a].name < nodes_[b].name;
    });
    if (flat && o.max_depth >= 0 &&
        kids.size() > static_cast<size_t>(o.max_depth) + 1) {
      kids.resize(static_cast<size_t>(o.max_depth) + 1);
    }
    for (size_t& c : kids) c = Keep(c, depth + 1);
    nodes_[i].children = std::move(kids);
    return at;
  }

  std::vector<DiffNode>& nodes_;
  const DiffTree& tree_;
  std::vector<bool> wanted_;
  std::vector<double> delta_;     // |change| of each row
  std::vector<int64_t> current_;  // its current value
  std::vector<size_t> order_;     // new index -> old index
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
absl::Status AddStepsByQuery(ViewKind view, const Options& opts, Attr attribute,
                             Views* views, const Model& model, bool base,
                             Merger* merger) {
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
  const StatUnit unit = UnitOf(tree->attribute);
  std::vector<DiffNode>& nodes = tree->nodes;
  JudgeChangesInPlace(
      nodes.size(),
      [&](size_t i) {
        ChangeInput in = InputOf(nodes[i]);
        SetFloor(tree->diff.min_change, unit, &in);
        return in;
      },
      tree->diff.alpha, [&](size_t i) { return &nodes[i].judgement; });
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
  std::deque<std::vector<double>> sums;  // what the inputs point at
  const Attr attr = tree->attribute;
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
    std::vector<double>& base = sums.emplace_back();
    std::vector<double>& current = sums.emplace_back();
    for (size_t i = 0; i < rows.size(); ++i) {
      if (sign[i] == 0) continue;
      DiffNode& n = tree->nodes[rows[i]];
      DiffShift::Member m{
          n.name, 0, 0, n.judgement.verdict, n.base.present, n.current.present};
      m.base = Value(n.base.total, attr);
      m.current = Value(n.current.total, attr);
      (sign[i] < 0 ? shift.removed : shift.added).push_back(m);
      n.shift = static_cast<int>(tree->shifts.size());
      base.resize(n.base.per_step.size());
      current.resize(n.current.per_step.size());
      for (size_t k = 0; k < base.size(); ++k) base[k] += n.base.per_step[k];
      for (size_t k = 0; k < current.size(); ++k) {
        current[k] += n.current.per_step[k];
      }
      sum.base_jitter += n.base.jitter;
      sum.current_jitter += n.current.jitter;
    }
    sum.base = base;
    sum.current = current;
    for (const auto* list : {&shift.removed, &shift.added}) {
      for (const DiffShift::Member& m : *list) {
        shift.base += m.base;
        shift.current += m.current;
      }
    }
    SetFloor(tree->diff.min_change, UnitOf(attr), &sum);
    inputs.push_back(std::move(sum));
    tree->shifts.push_back(std::move(shift));
  }
  const std::vector<Judgement> j = JudgeChanges(inputs, tree->diff.alpha);
  for (size_t i = 0; i < j.size(); ++i) tree->shifts[i].combined = j[i];
}

// The accelerator time per step of a run's XLA command buffers (the nodes
// of type command_buffer, which hold the time of the kernels run in them).
int64_t CommandBufferMicros(const Model& model) {
  int64_t micros = 0;
  for (const auto& node : model.nodes()) {
    if (node->op == "command_buffer") {
      micros = SatAdd(micros, node->Stats(-1).accelerator_exec_micros);
    }
  }
  return micros;
}

// A note when one run ran kernels in command buffers and the other did not:
// those kernels' time then sits on the command buffer, not on their ops.
// `b` and `c`: each run's CommandBufferMicros().
void NoteCommandBuffers(int64_t b, int64_t c, std::vector<std::string>* notes) {
  if ((b > 0) == (c > 0)) return;
  notes->push_back(absl::StrCat(
      "the ", c > 0 ? "current" : "base",
      " run ran kernels in XLA command buffers and the ",
      c > 0 ? "base" : "current",
      " run did not: the kernels in them that match no HLO instruction keep "
      "their time on command_buffer nodes (",
      FormatTime(std::max(b, c)),
      " per step), not on their ops, so those ops seem ",
      c > 0 ? "faster" : "slower",
      " by as much; compare the steps (diff "
      "steps) or the kernel view for like with like"));
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
  const std::vector<Attr> attrs = DiffAttributes(opts);
  tree.attribute = IsCount(opts.order_by) ? opts.order_by
                   : attrs.empty()        ? Attr::kMicros
                                          : attrs[0];
  const Options all = AllRows(opts);
  const bool one_step = opts.step >= 0;
  // The two sides are independent: on large models, each side's query and
  // figures on a core of its own.
  const bool parallel =
      base != current && &base_model != &current_model &&
      base_model.size() + current_model.size() >= kParallelMinItems;
  absl::StatusOr<ResultTree> b, c;
  SampleTable sb, sc;
  bool ok_b = false, ok_c = false;
  int64_t buffers_b = 0, buffers_c = 0;  // CommandBufferMicros()
  RunBoth(
      parallel,
      [&] {
        b = QuerySide(base, view, all);
        ok_b = b.ok() && !one_step &&
               StepSamples(*b, base_model, tree.attribute, &sb);
        buffers_b = CommandBufferMicros(base_model);
      },
      [&] {
        c = QuerySide(current, view, all);
        ok_c = c.ok() && !one_step &&
               StepSamples(*c, current_model, tree.attribute, &sc);
        buffers_c = CommandBufferMicros(current_model);
      });
  if (!b.ok()) {
    return absl::Status(b.status().code(),
                        absl::StrCat("base run: ", b.status().message()));
  }
  if (!c.ok()) return c.status();
  Merger merger(diff.rules, one_step ? 0 : base_model.steps().size(),
                one_step ? 0 : current_model.steps().size());
  std::vector<size_t> map_b, map_c;
  if (ok_b && ok_c && merger.Alike(*b, *c)) {
    merger.AddAlike(&*b, *c);  // (b's names and children move)
    map_b.resize(b->nodes.size());
    for (size_t i = 0; i < map_b.size(); ++i) map_b[i] = i;
    map_c = map_b;
  } else {
    map_b = merger.Add(*b, true);
    map_c = merger.Add(*c, false);
  }
  if (!one_step && ok_b && ok_c) {
    merger.AddSamples(map_b, &sb, true);
    merger.AddSamples(map_c, &sc, false);
  } else if (!one_step) {
    tree.notes.push_back(
        "per-step figures from one query per step: the view's options "
        "hide rows that still count in their parents' totals");
    absl::Status s = AddStepsByQuery(view, all, tree.attribute, base,
                                     base_model, true, &merger);
    if (!s.ok()) return s;
    s = AddStepsByQuery(view, all, tree.attribute, current, current_model,
                        false, &merger);
    if (!s.ok()) return s;
  }
  if (IsFlatView(view) && !(ok_b && ok_c)) {
    merger.AddParents(map_b, *b, base_model);
    merger.AddParents(map_c, *c, current_model);
  }
  tree.step_data = merger.Finish();
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
  NoteCommandBuffers(buffers_b, buffers_c, &tree.notes);
  Pruner(&tree.nodes, tree).Run();
  return tree;
}

}  // namespace tfprof
