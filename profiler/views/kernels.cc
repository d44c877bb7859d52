#include "profiler/views/kernels.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <iterator>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "profiler/base/saturate.h"
#include "profiler/views/flops.h"
#include "re2/re2.h"

namespace tfprof {
namespace {

// One kernel name's launches in the query's steps.
struct KernelSum {
  int64_t total_ns = 0, launches = 0;
  int64_t min_ns = INT64_MAX, max_ns = 0;
  std::set<int64_t> steps;
  std::map<uint32_t, std::pair<int64_t, int64_t>> ops;  // op -> launches, ns
  std::set<uint32_t> streams, launch;
  // Float ops recorded per launch (DeviceWork::float_ops), when known.
  bool per_launch = false, split = false;
  double flops = 0, bytes = 0;
  double by_dtype[8] = {};
};

// The kernels of `step` (-1: all) on streams matching `devices`.
absl::flat_hash_map<uint32_t, KernelSum> SumKernels(
    const Activity& a, int64_t step, const std::vector<std::string>& devices) {
  std::vector<std::unique_ptr<RE2>> res;
  for (const std::string& p : devices) {
    res.push_back(std::make_unique<RE2>(p, RE2::Quiet));
  }
  absl::flat_hash_map<uint32_t, bool> stream_kept;
  auto kept = [&](uint32_t stream) {
    auto [it, added] = stream_kept.emplace(stream, false);
    if (added) {
      for (const auto& re : res) {
        it->second = it->second || RE2::FullMatch(a.String(stream), *re);
      }
    }
    return it->second;
  };
  absl::flat_hash_map<uint32_t, KernelSum> sums;
  for (const DeviceWork& w : a.work()) {
    if (w.kind != WorkKind::kKernel || (step >= 0 && w.step != step) ||
        !kept(w.stream)) {
      continue;
    }
    KernelSum& k = sums[w.name];
    k.total_ns = SatAdd(k.total_ns, w.duration_ns);
    ++k.launches;
    k.min_ns = std::min(k.min_ns, w.duration_ns);
    k.max_ns = std::max(k.max_ns, w.duration_ns);
    k.steps.insert(w.step);
    auto& op = k.ops[w.op];
    ++op.first;
    op.second = SatAdd(op.second, w.duration_ns);
    k.streams.insert(w.stream);
    if (w.launch != 0) k.launch.insert(w.launch);
    if (w.float_ops >= 0) {
      k.per_launch = true;
      k.flops += w.float_ops;
      k.bytes += w.bytes;
      k.by_dtype[static_cast<size_t>(w.dtype) % 8] += w.float_ops;
      k.split = k.split || w.flops_split;
    }
  }
  return sums;
}

int64_t RoundedMicros(int64_t ns) { return ns / 1000 + (ns % 1000 >= 500); }

NodeStats KernelStats(int64_t launches, int64_t ns) {
  NodeStats s;
  s.run_count = launches;
  s.accelerator_exec_micros = RoundedMicros(ns);
  s.exec_micros = s.accelerator_exec_micros;
  return s;
}

std::vector<std::string> Strings(const Activity& a,
                                 const std::set<uint32_t>& ids) {
  std::vector<std::string> v;
  for (uint32_t id : ids) v.push_back(a.String(id));
  std::sort(v.begin(), v.end());
  return v;
}

// Every launching op's kernel time and number of kernel names in the
// query.
struct OpTotal {
  int64_t ns = 0, kernels = 0;
};
using OpTotals = absl::flat_hash_map<uint32_t, OpTotal>;

OpTotals SumOps(const absl::flat_hash_map<uint32_t, KernelSum>& sums) {
  OpTotals totals;
  for (const auto& [name, k] : sums) {
    for (const auto& [op, sum] : k.ops) {
      OpTotal& t = totals[op];
      t.ns = SatAdd(t.ns, sum.second);
      ++t.kernels;
    }
  }
  return totals;
}

// What a kernel's summed figures are divided by: for -step -1 the steps it
// ran in (tfprof's rule for nodes), or every step when the model's nodes
// are means over all steps (traces); times the ranks a multi-rank model
// holds (the mean per rank).
template <typename Steps>
int64_t Divisor(const Model& model, int64_t step, const Steps& steps) {
  const size_t over = model.means_over_all_steps()
                          ? std::max(steps.size(), model.steps().size())
                          : steps.size();
  const int64_t n =
      step >= 0 ? 1 : std::max<int64_t>(1, static_cast<int64_t>(over));
  return n * model.ranks();
}

// A kernel's float ops: those of each op that launched it (the extended
// rule), split over the op's kernels by their time; per launch where the
// importer recorded them (the launching record's share), else from the
// launching nodes' float ops in the query's step.
void KernelFlops(const Model& model, const KernelSum& k, const OpTotals& ops,
                 int64_t step, ResultNode* r) {
  const Activity& a = model.activity();
  double flops = 0, bytes = 0;
  double by_dtype[8] = {};
  auto facts = std::make_shared<FlopFacts>();
  if (k.per_launch) {
    const double div = static_cast<double>(Divisor(model, step, k.steps));
    flops = k.flops / div;
    bytes = k.bytes / div;
    std::copy(std::begin(k.by_dtype), std::end(k.by_dtype), by_dtype);
    facts->split = k.split;
  }
  for (const auto& [op, sum] : k.ops) {
    if (k.per_launch) break;
    const GraphNode* node = op == 0 ? nullptr : model.Find(a.String(op));
    auto total = ops.find(op);
    if (node == nullptr || node->float_ops <= 0 || total == ops.end() ||
        total->second.ns <= 0) {
      continue;
    }
    NodeStats st = node->Stats(step);
    st.DivideBy(model.ranks(), /*nearest=*/true);
    const double share =
        static_cast<double>(sum.second) / static_cast<double>(total->second.ns);
    const double f = static_cast<double>(st.float_ops) * share;
    flops += f;
    bytes += static_cast<double>(node->cost_bytes) *
             static_cast<double>(st.run_count) * share;
    by_dtype[static_cast<size_t>(node->dtype) % 8] += f;
    facts->split = facts->split || total->second.kernels > 1;
  }
  for (size_t d = 1; d < 8; ++d) {
    if (by_dtype[d] > by_dtype[static_cast<size_t>(facts->dtype)]) {
      facts->dtype = static_cast<Dtype>(d);
    }
  }
  facts->bytes = static_cast<int64_t>(std::llround(bytes));
  r->self.float_ops = static_cast<int64_t>(std::llround(flops));
  r->flops = std::move(facts);
}

// A row for one kernel name (its figures averaged for -step -1).
ResultNode KernelRow(const Model& model, const std::string& name,
                     const KernelSum& k, const OpTotals& ops, int64_t step) {
  const Activity& a = model.activity();
  const int64_t div = Divisor(model, step, k.steps);
  ResultNode r;
  r.name = name;
  r.account = true;
  r.self = KernelStats(k.launches / div, k.total_ns / div);
  auto facts = std::make_shared<KernelFacts>();
  facts->launches = k.launches;
  facts->ranks = std::max<int64_t>(1, model.ranks());
  facts->steps = std::max<int64_t>(1, div / facts->ranks);
  facts->total_ns = k.total_ns;
  facts->min_ns = k.min_ns;
  facts->max_ns = k.max_ns;
  facts->streams = Strings(a, k.streams);
  facts->launch = Strings(a, k.launch);
  for (const auto& [op, sum] : k.ops) {
    const GraphNode* node = op == 0 ? nullptr : model.Find(a.String(op));
    if (node == nullptr) {
      facts->unlinked_launches += sum.first;
      continue;
    }
    r.members.push_back(
        MemberNode{node, KernelStats(sum.first / div, sum.second / div)});
  }
  std::sort(r.members.begin(), r.members.end(),
            [](const MemberNode& x, const MemberNode& y) {
              return x.name() < y.name();
            });
  r.kernel = std::move(facts);
  KernelFlops(model, k, ops, step, &r);
  return r;
}

bool AnyMatch(const std::vector<std::unique_ptr<RE2>>& res,
              const std::string& s) {
  for (const auto& re : res) {
    if (RE2::FullMatch(s, *re)) return true;
  }
  return false;
}

std::vector<std::unique_ptr<RE2>> Compile(const std::vector<std::string>& v) {
  std::vector<std::unique_ptr<RE2>> res;
  for (const std::string& p : v) {
    res.push_back(std::make_unique<RE2>(p, RE2::Quiet));
  }
  return res;
}

bool Shown(const ResultNode& r, const Options& o,
           const std::vector<std::unique_ptr<RE2>>& show,
           const std::vector<std::unique_ptr<RE2>>& hide) {
  if (r.self.exec_micros < o.min_micros ||
      r.self.accelerator_exec_micros < o.min_accelerator_micros ||
      r.self.run_count < o.min_occurrence ||
      r.self.float_ops < o.min_float_ops) {
    return false;
  }
  return AnyMatch(show, r.name) && !AnyMatch(hide, r.name);
}

// The kernel view's orders (a kernel has no bytes, CPU time or parameters).
const std::vector<Attr>& KernelOrders() {
  static const std::vector<Attr> v = {Attr::kName, Attr::kMicros,
                                      Attr::kAcceleratorMicros,
                                      Attr::kOccurrence, Attr::kFloatOps};
  return v;
}

absl::Status CheckOrder(Attr by) {
  const std::vector<Attr>& orders = KernelOrders();
  if (std::find(orders.begin(), orders.end(), by) != orders.end()) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrCat("invalid value '", AttrName(by),
                   "' for option -order_by: the kernel view orders by ",
                   absl::StrJoin(AttrNames(orders), ", ")));
}

// The -min_* options of what a kernel does not have: refused, as their
// orders are, rather than passed by every row.
absl::Status CheckMinimums(const Options& o) {
  const std::pair<const char*, int64_t> unknown[] = {
      {"min_bytes", o.min_bytes},
      {"min_peak_bytes", o.min_peak_bytes},
      {"min_residual_bytes", o.min_residual_bytes},
      {"min_output_bytes", o.min_output_bytes},
      {"min_cpu_micros", o.min_cpu_micros},
      {"min_params", o.min_params}};
  for (const auto& [name, value] : unknown) {
    if (value == 0) continue;
    return absl::InvalidArgumentError(absl::StrCat(
        "option -", name,
        ": a kernel has no bytes, CPU time or parameters; the kernel view "
        "takes -min_micros, -min_accelerator_micros, -min_occurrence and "
        "-min_float_ops"));
  }
  return absl::OkStatus();
}

// By the order's figure, largest first (0 for names), then by name.
void SortRows(Attr by, std::vector<ResultNode>* rows) {
  std::stable_sort(rows->begin(), rows->end(),
                   [by](const ResultNode& x, const ResultNode& y) {
                     const int64_t kx = Value(x.self, by);
                     const int64_t ky = Value(y.self, by);
                     return kx != ky ? kx > ky : x.name < y.name;
                   });
}

// A kernel's launches and time for one op.
struct OpKernel {
  int64_t launches = 0, ns = 0;
  std::set<int64_t> steps;
};

}  // namespace

void AttachKernels(const Model& model, ResultTree* tree) {
  const Activity& a = model.activity();
  const Options& o = tree->options;
  // op -> kernel name -> sums, for the step and the kept streams.
  absl::flat_hash_map<uint32_t, std::map<std::string, OpKernel>> by_op;
  std::vector<std::unique_ptr<RE2>> res = Compile(o.device_regexes);
  absl::flat_hash_map<uint32_t, bool> kept;
  for (const DeviceWork& w : a.work()) {
    if (w.kind != WorkKind::kKernel || w.op == 0 ||
        (o.step >= 0 && w.step != o.step)) {
      continue;
    }
    auto [it, added] = kept.emplace(w.stream, false);
    if (added) it->second = AnyMatch(res, a.String(w.stream));
    if (!it->second) continue;
    OpKernel& k = by_op[w.op][a.String(w.name)];
    ++k.launches;
    k.ns = SatAdd(k.ns, w.duration_ns);
    k.steps.insert(w.step);
  }
  absl::flat_hash_map<std::string_view, uint32_t> op_ids;
  for (const auto& [op, kernels] : by_op) op_ids[a.String(op)] = op;
  const size_t n = tree->nodes.size();
  for (size_t i = 0; i < n; ++i) {
    std::vector<const GraphNode*> launchers;
    if (tree->nodes[i].graph_node != nullptr) {
      launchers.push_back(tree->nodes[i].graph_node);
    }
    for (const MemberNode& m : tree->nodes[i].members) {
      launchers.push_back(m.node);
    }
    std::map<std::string, OpKernel> kernels;
    for (const GraphNode* g : launchers) {
      auto id = op_ids.find(g->name);
      if (id == op_ids.end()) continue;
      for (const auto& [name, k] : by_op[id->second]) {
        OpKernel& sum = kernels[name];
        sum.launches += k.launches;
        sum.ns = SatAdd(sum.ns, k.ns);
        sum.steps.insert(k.steps.begin(), k.steps.end());
      }
    }
    for (const auto& [name, k] : kernels) {
      const int64_t div = Divisor(model, o.step, k.steps);
      ResultNode child;
      child.name = name;
      child.account = true;
      child.fixed_type = "_kernel";
      child.self = KernelStats(k.launches / div, k.ns / div);
      child.total.AddSelf(child.self);
      tree->nodes.push_back(std::move(child));
      tree->nodes[i].children.push_back(tree->nodes.size() - 1);
    }
  }
}

std::vector<std::string> KernelOrderByValues() {
  return AttrNames(KernelOrders());
}

bool HasKernels(const Model& model) {
  for (const DeviceWork& w : model.activity().work()) {
    if (w.kind == WorkKind::kKernel) return true;
  }
  return false;
}

absl::StatusOr<ResultTree> QueryKernelView(const Model& model,
                                           const Options& opts) {
  const Activity& a = model.activity();
  if (!HasKernels(model)) {
    return absl::FailedPreconditionError(
        "the kernel view needs accelerator kernels: GPU stream stats in "
        "RunMetadata, a PyTorch (Kineto) trace or an XSpace with GPU "
        "activity; this profile has none");
  }
  if (absl::Status order = CheckOrder(opts.order_by); !order.ok()) {
    return order;
  }
  if (absl::Status minimums = CheckMinimums(opts); !minimums.ok()) {
    return minimums;
  }
  std::vector<ResultNode> rows;
  const absl::flat_hash_map<uint32_t, KernelSum> sums =
      SumKernels(a, opts.step, opts.device_regexes);
  const OpTotals ops = SumOps(sums);
  bool split = false;
  double all_ns = 0;  // every row's nanoseconds per step, summed
  for (const auto& [name, sum] : sums) {
    rows.push_back(KernelRow(model, a.String(name), sum, ops, opts.step));
    split = split || rows.back().flops->split;
    all_ns += static_cast<double>(sum.total_ns) /
              static_cast<double>(Divisor(model, opts.step, sum.steps));
  }
  SortRows(opts.order_by, &rows);
  // The root's: every kernel, shown or not (percentages); its time summed
  // in nanoseconds and rounded once, not the sum of its rows' rounded
  // microseconds.
  NodeStats all_self;
  for (const ResultNode& r : rows) {
    all_self.run_count = SatAdd(all_self.run_count, r.self.run_count);
    all_self.float_ops = SatAdd(all_self.float_ops, r.self.float_ops);
  }
  all_self.accelerator_exec_micros =
      RoundedMicros(static_cast<int64_t>(std::llround(all_ns)));
  all_self.exec_micros = all_self.accelerator_exec_micros;
  Totals all;
  all.AddSelf(all_self);
  const auto show = Compile(opts.show_name_regexes);
  const auto hide = Compile(opts.hide_name_regexes);
  const auto start = Compile(opts.start_name_regexes);
  const auto trim = Compile(opts.trim_name_regexes);
  ResultTree out;
  out.view = ViewKind::kKernel;
  out.model = &model;
  out.options = opts;
  out.nodes.emplace_back().name = kRootName;
  size_t first = 0;
  while (first < rows.size() && !AnyMatch(start, rows[first].name)) ++first;
  int64_t depth = 0;
  for (size_t i = first; i < rows.size(); ++i, ++depth) {
    if (AnyMatch(trim, rows[i].name) || depth > opts.max_depth) break;
    if (!Shown(rows[i], opts, show, hide)) continue;
    out.nodes.push_back(std::move(rows[i]));
    out.nodes[0].children.push_back(out.nodes.size() - 1);
  }
  // Kernels do not nest: a row's total is its own figures.
  for (size_t c : out.nodes[0].children) {
    out.nodes[c].total.AddSelf(out.nodes[c].self);
  }
  out.nodes[0].total = all;
  if (opts.Selected(Attr::kFloatOps) || SelectsFlopFacts(opts)) {
    out.notes.push_back(absl::StrCat(
        "kernel float ops: those of the op that launched the kernel (the "
        "extended rule",
        opts.flops_rule == "pytorch" ? ", whatever -flops_rule says" : "", ")",
        split ? "; an op that launched several kernels has its float ops "
                "split over them by their time"
              : ""));
  }
  return out;
}

}  // namespace tfprof
