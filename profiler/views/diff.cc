#include "profiler/views/diff.h"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <map>
#include <memory>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "profiler/base/stats.h"
#include "re2/re2.h"

namespace tfprof {
namespace {

// Tests need this many steps on each side.
constexpr size_t kMinSteps = 3;

int64_t Delta(const DiffNode& n, const std::string& attribute) {
  int64_t b = 0, c = 0;
  DiffValue(n.base.total, attribute, &b);
  DiffValue(n.current.total, attribute, &c);
  return c - b;
}

// What a row counts: its totals in the tree views; in the flat views
// (whose totals run down the list) its own figures.
Totals RowTotals(const ResultTree& tree, const ResultNode& r) {
  if (!IsFlatView(tree.view)) return r.total;
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
    nodes_.emplace_back();
    nodes_[0].name = kRootName;
    Sized(&nodes_[0]);
  }

  // Adds a side's tree: its totals, and marks its rows present.
  void Add(const ResultTree& tree, bool base) {
    DiffSide& root = base ? nodes_[0].base : nodes_[0].current;
    root.present = true;
    root.total.Add(tree.root().total);
    Walk(tree, 0, 0, [&](const ResultNode& r, size_t d) {
      DiffSide& side = base ? nodes_[d].base : nodes_[d].current;
      side.present = true;
      side.total.Add(RowTotals(tree, r));
    });
  }

  // Adds a side's tree of one step: each row's value of `attribute`.
  void AddStep(const ResultTree& tree, bool base, size_t step,
               const std::string& attribute) {
    auto add = [&](const ResultNode& r, size_t d) {
      int64_t v = 0;
      DiffValue(&r == &tree.root() ? r.total : RowTotals(tree, r), attribute,
                &v);
      DiffSide& side = base ? nodes_[d].base : nodes_[d].current;
      side.per_step[step] += v;
    };
    add(tree.root(), 0);
    Walk(tree, 0, 0, add);
  }

  std::vector<DiffNode>& nodes() { return nodes_; }

 private:
  std::string Map(const std::string& name) const {
    std::string out = name;
    for (size_t i = 0; i < res_.size(); ++i) {
      RE2::GlobalReplace(&out, *res_[i], rewrites_[i]);
    }
    return out;
  }

  void Sized(DiffNode* n) const {
    n->base.per_step.assign(base_steps_, 0);
    n->current.per_step.assign(current_steps_, 0);
  }

  // Calls fn(row, diff index) for every row below tree node `t`, whose
  // diff node is `d`, making diff nodes as needed.
  template <typename Fn>
  void Walk(const ResultTree& tree, size_t t, size_t d, Fn&& fn) {
    for (size_t c : tree.nodes[t].children) {
      const ResultNode& r = tree.nodes[c];
      const std::string name = Map(r.name);
      auto [it, added] = index_.try_emplace({d, name}, nodes_.size());
      if (added) {
        DiffNode n;
        n.name = name;
        Sized(&n);
        nodes_.push_back(std::move(n));
        nodes_[d].children.push_back(it->second);
      }
      const size_t child = it->second;
      fn(r, child);
      Walk(tree, c, child, fn);
    }
  }

  size_t base_steps_, current_steps_;
  std::vector<std::unique_ptr<RE2>> res_;
  std::vector<std::string> rewrites_;
  std::vector<DiffNode> nodes_;
  std::map<std::pair<size_t, std::string>, size_t> index_;
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

// The kept rows, depth first from the root, children ordered; indices
// renumbered.
class Pruner {
 public:
  Pruner(std::vector<DiffNode>* in, const DiffTree& tree)
      : in_(*in), tree_(tree) {}

  std::vector<DiffNode> Run() {
    wanted_.assign(in_.size(), false);
    Mark(0);
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
                            n.significant || below);
    return wanted_[i] && (n.significant || below);
  }

  size_t Keep(size_t i, int64_t depth = 0) {
    const size_t at = out_.size();
    out_.push_back(in_[i]);
    out_[at].children.clear();
    const Options& o = tree_.options;
    // Trees show -max_depth levels below the root; flat views -max_depth+1
    // rows (as the op view does).
    const bool flat = IsFlatView(tree_.view);
    if (!flat && depth >= o.max_depth) return at;
    std::vector<size_t> kids;
    for (size_t c : in_[i].children) {
      if (wanted_[c]) kids.push_back(c);
    }
    const std::string& by = o.order_by;
    int64_t unused;
    const bool numeric = DiffValue(Totals(), by, &unused);
    std::stable_sort(kids.begin(), kids.end(), [&](size_t a, size_t b) {
      if (numeric) {
        const int64_t da = std::llabs(Delta(in_[a], by));
        const int64_t db = std::llabs(Delta(in_[b], by));
        if (da != db) return da > db;
        int64_t ca = 0, cb = 0;
        DiffValue(in_[a].current.total, by, &ca);
        DiffValue(in_[b].current.total, by, &cb);
        if (ca != cb) return ca > cb;
      }
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

// Per-step values of every row, by querying each step on each side.
absl::Status AddSteps(ViewKind view, const Options& opts,
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

void TestSignificance(DiffTree* tree) {
  std::vector<double> p;
  for (DiffNode& n : tree->nodes) {
    if (n.base.per_step.size() >= kMinSteps &&
        n.current.per_step.size() >= kMinSteps) {
      n.p_value = MannWhitneyP(n.base.per_step, n.current.per_step);
    }
    p.push_back(n.p_value);
  }
  const std::vector<double> q = BenjaminiHochberg(p);
  for (size_t i = 0; i < tree->nodes.size(); ++i) {
    DiffNode& n = tree->nodes[i];
    n.q_value = q[i];
    n.significant = n.q_value >= 0 && n.q_value <= tree->diff.alpha;
  }
}

}  // namespace

absl::StatusOr<DiffRule> ParseDiffRule(const std::string& text) {
  const size_t arrow = text.find("=>");
  if (arrow == std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("diff rule '", text, "': expected PATTERN=>REWRITE"));
  }
  DiffRule r{text.substr(0, arrow), text.substr(arrow + 2)};
  RE2 re(r.pattern, RE2::Quiet);
  std::string error;
  if (!re.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("diff rule '", text, "': invalid regex: ", re.error()));
  }
  if (!re.CheckRewriteString(r.rewrite, &error)) {
    return absl::InvalidArgumentError(
        absl::StrCat("diff rule '", text, "': ", error));
  }
  return r;
}

absl::Status SetDiffOption(const std::string& name, const std::string& value,
                           const std::string& prefix, DiffOptions* diff) {
  if (name == "map") {
    absl::StatusOr<DiffRule> rule = ParseDiffRule(value);
    if (!rule.ok()) return rule.status();
    diff->rules.push_back(*rule);
  } else if (name == "alpha") {
    double& alpha = diff->alpha;
    if (!absl::SimpleAtod(value, &alpha) || !(alpha > 0) || alpha >= 1) {
      return absl::InvalidArgumentError(
          absl::StrCat(prefix,
                       "alpha wants a false discovery rate in (0, 1), "
                       "not '",
                       value.substr(0, 40), "'"));
    }
  } else if (name == "significant_only" &&
             (value == "true" || value == "false")) {
    diff->significant_only = value == "true";
  } else if (name == "significant_only") {
    return absl::InvalidArgumentError(
        absl::StrCat(prefix, "significant_only wants true or false"));
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat(prefix, name, " is not a diff option"));
  }
  return absl::OkStatus();
}

bool DiffValue(const Totals& t, const std::string& attribute, int64_t* out) {
  if (attribute == "occurrence") {
    *out = t.run_count;
    return true;
  }
  int64_t Totals::*member = StatMember<Totals>(attribute);
  if (member == nullptr) return false;
  *out = t.*member;
  return true;
}

std::vector<std::string> DiffAttributes(const Options& opts) {
  std::vector<std::string> out;
  int64_t unused;
  for (const std::string& a : SelectValues()) {
    if (opts.Selected(a) && DiffValue(Totals(), a, &unused)) out.push_back(a);
  }
  return out;
}

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
  // Every row of both sides: -max_depth and -min_* apply after matching
  // (a row cut on one side only is not "only in" the other).
  Options all = opts;
  all.max_depth = INT64_MAX / 2;
  all.min_bytes = all.min_peak_bytes = all.min_residual_bytes =
      all.min_output_bytes = all.min_micros = all.min_accelerator_micros =
          all.min_cpu_micros = all.min_params = all.min_float_ops =
              all.min_occurrence = 0;
  absl::StatusOr<ResultTree> b = QuerySide(base, view, all);
  if (!b.ok()) {
    return absl::Status(b.status().code(),
                        absl::StrCat("base run: ", b.status().message()));
  }
  absl::StatusOr<ResultTree> c = QuerySide(current, view, all);
  if (!c.ok()) return c.status();
  const bool one_step = opts.step >= 0;
  Merger merger(diff.rules, one_step ? 0 : base_model.steps().size(),
                one_step ? 0 : current_model.steps().size());
  merger.Add(*b, true);
  merger.Add(*c, false);
  if (!one_step) {
    absl::Status s =
        AddSteps(view, all, tree.attribute, base, base_model, true, &merger);
    if (!s.ok()) return s;
    s = AddSteps(view, all, tree.attribute, current, current_model, false,
                 &merger);
    if (!s.ok()) return s;
  }
  tree.nodes = std::move(merger.nodes());
  TestSignificance(&tree);
  if (one_step || base_model.steps().size() < kMinSteps ||
      current_model.steps().size() < kMinSteps) {
    tree.notes.push_back(
        absl::StrCat("no significance test: it needs ", kMinSteps,
                     " or more steps on each side and -step -1 (base ",
                     base_model.steps().size(), ", current ",
                     current_model.steps().size(), ")"));
  }
  std::vector<DiffNode> nodes = std::move(tree.nodes);
  tree.nodes = Pruner(&nodes, tree).Run();
  return tree;
}

StepsDiff DiffSteps(const StepTable& base, const StepTable& current,
                    double alpha) {
  using Member = int64_t StepRow::*;
  const std::pair<const char*, Member> measures[] = {
      {"wall_ns", &StepRow::wall_ns},
      {"accelerator_ns", &StepRow::accelerator_ns},
      {"compute_ns", &StepRow::compute_ns},
      {"memcpy_ns", &StepRow::memcpy_ns},
      {"idle_ns", &StepRow::idle_ns},
      {"kernels", &StepRow::kernels},
      {"peak_bytes", &StepRow::peak_bytes}};
  StepsDiff out;
  out.alpha = alpha;
  std::vector<double> p;
  for (const auto& measure : measures) {
    const Member member = measure.second;
    StepsDiffRow row;
    row.measure = measure.first;
    // Only peak bytes can be missing (-1).
    auto take = [&](const StepTable& t, std::vector<int64_t>* v) {
      bool recorded = false;
      for (const StepRow& r : t.rows) {
        v->push_back(std::max<int64_t>(r.*member, 0));
        recorded |= r.*member >= 0;
      }
      return recorded;
    };
    row.base_recorded = take(base, &row.base);
    row.current_recorded = take(current, &row.current);
    row.base_median = Median(row.base);
    row.current_median = Median(row.current);
    if (row.base_recorded && row.current_recorded &&
        row.base.size() >= kMinSteps && row.current.size() >= kMinSteps) {
      row.p_value = MannWhitneyP(row.base, row.current);
    }
    p.push_back(row.p_value);
    out.rows.push_back(std::move(row));
  }
  const std::vector<double> q = BenjaminiHochberg(p);
  for (size_t i = 0; i < out.rows.size(); ++i) {
    out.rows[i].q_value = q[i];
    out.rows[i].significant = q[i] >= 0 && q[i] <= alpha;
  }
  return out;
}

}  // namespace tfprof
