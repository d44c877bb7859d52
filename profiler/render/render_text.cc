#include "profiler/render/render_text.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "profiler/base/large_stack.h"
#include "profiler/base/units.h"

namespace tfprof {
namespace {

// "self/total", or "--/total" for nodes that are not accounted.
template <typename F>
std::string Pair(bool account, int64_t self, int64_t total, F fmt) {
  return absl::StrCat(account ? fmt(self) : std::string("--"), "/", fmt(total));
}

std::string ShapeList(const std::map<int32_t, std::vector<int64_t>>& shapes) {
  std::vector<std::string> parts;
  for (const auto& [idx, dims] : shapes) {
    parts.push_back(dims.empty()
                        ? absl::StrFormat("%d:unknown", idx)
                        : absl::StrFormat("%d:%s", idx, FormatShape(dims)));
  }
  return absl::StrJoin(parts, "|");
}

// Legend of the scope, graph (and, in another order, op/code) views.
std::string Legend(const Options& o, bool multi) {
  std::vector<std::string> l;
  const bool micros = o.Selected(Attr::kMicros);
  if (!multi && o.Selected(Attr::kParams)) l.push_back("# parameters");
  if (!multi && o.Selected(Attr::kFloatOps)) l.push_back("# float_ops");
  if (o.Selected(Attr::kBytes)) l.push_back("requested bytes");
  if (o.Selected(Attr::kPeakBytes)) l.push_back("peak bytes");
  if (o.Selected(Attr::kResidualBytes)) l.push_back("residual bytes");
  if (o.Selected(Attr::kOutputBytes)) l.push_back("output bytes");
  if (micros) {
    l.push_back("total execution time");
    l.push_back("accelerator execution time");
    l.push_back("cpu execution time");
  }
  if (o.Selected(Attr::kAcceleratorMicros) && !micros) {
    l.push_back("accelerator execution time");
  }
  if (o.Selected(Attr::kCpuMicros) && !micros)
    l.push_back("cpu execution time");
  if (multi && o.Selected(Attr::kParams)) l.push_back("# parameters");
  if (multi && o.Selected(Attr::kFloatOps)) l.push_back("# float_ops");
  if (o.Selected(Attr::kDevice)) l.push_back("assigned devices");
  if (o.Selected(Attr::kOpTypes)) l.push_back("op types");
  if (o.Selected(Attr::kOccurrence)) {
    l.push_back(multi ? "op occurrence (run|defined)"
                      : "op count (run|defined)");
  }
  if (o.Selected(Attr::kInputShapes)) l.push_back("input shapes");
  if (o.Selected(Attr::kAcceleratorFlopRate)) {
    l.push_back("float ops per second of accelerator time");
  }
  if (o.Selected(Attr::kArithmeticIntensity)) {
    l.push_back("float ops per byte moved");
  }
  if (o.Selected(Attr::kRoofline)) l.push_back("roofline");
  return absl::StrCat("node name | ", absl::StrJoin(l, " | "), "\n");
}

std::vector<std::string> TimeAttrs(const ResultNode& n, const Options& o) {
  std::vector<std::string> a;
  const bool micros = o.Selected(Attr::kMicros);
  if (micros) {
    a.push_back(
        Pair(n.account, n.self.exec_micros, n.total.exec_micros, FormatTime));
  }
  if (micros || o.Selected(Attr::kAcceleratorMicros)) {
    a.push_back(Pair(n.account, n.self.accelerator_exec_micros,
                     n.total.accelerator_exec_micros, FormatTime));
  }
  if (micros || o.Selected(Attr::kCpuMicros)) {
    a.push_back(Pair(n.account, n.self.cpu_exec_micros, n.total.cpu_exec_micros,
                     FormatTime));
  }
  return a;
}

std::vector<std::string> MemoryAttrs(const ResultNode& n, const Options& o) {
  std::vector<std::string> a;
  if (o.Selected(Attr::kBytes)) {
    a.push_back(Pair(n.account, n.self.requested_bytes, n.total.requested_bytes,
                     FormatMemory));
  }
  if (o.Selected(Attr::kPeakBytes)) {
    a.push_back(
        Pair(n.account, n.self.peak_bytes, n.total.peak_bytes, FormatMemory));
  }
  if (o.Selected(Attr::kResidualBytes)) {
    a.push_back(Pair(n.account, n.self.residual_bytes, n.total.residual_bytes,
                     FormatMemory));
  }
  if (o.Selected(Attr::kOutputBytes)) {
    a.push_back(Pair(n.account, n.self.output_bytes, n.total.output_bytes,
                     FormatMemory));
  }
  return a;
}

// One line of the scope or graph view.
std::string FormatScopeNode(const ResultTree& r, const ResultNode& n,
                            const Options& o) {
  std::vector<std::string> a;
  if (o.Selected(Attr::kParams)) {
    const std::string shape = FormatShape(NodeShape(n));
    if (!shape.empty()) a.push_back(shape);
    a.push_back(
        Pair(n.account, n.self.parameters, n.total.parameters, FormatNumber) +
        " params");
  }
  if (o.Selected(Attr::kFloatOps)) {
    a.push_back(
        Pair(n.account, n.self.float_ops, n.total.float_ops, FormatNumber) +
        " flops");
  }
  for (std::string& s : MemoryAttrs(n, o)) a.push_back(std::move(s));
  for (std::string& s : TimeAttrs(n, o)) a.push_back(std::move(s));
  if (o.Selected(Attr::kDevice)) {
    const std::vector<std::string> devices = NodeDevices(r, n);
    if (!devices.empty()) a.push_back(absl::StrJoin(devices, "|"));
  }
  if (o.Selected(Attr::kOpTypes)) {
    a.push_back(absl::StrJoin(NodeOpTypes(r, n), "|"));
  }
  if (o.Selected(Attr::kOccurrence)) {
    const std::string run =
        Pair(n.account, n.self.run_count, n.total.run_count, FormatNumber);
    const std::string defined = absl::StrCat(
        n.account ? "1" : "--", "/", FormatNumber(n.total.definition_count));
    a.push_back(run + "|" + defined);
  }
  if (o.Selected(Attr::kInputShapes)) {
    a.push_back(ShapeList(NodeInputShapes(r, n)));
  }
  return absl::StrCat(n.name, " (", absl::StrJoin(a, ", "), ")");
}

std::string FormatCodeNode(const ResultTree& r, const ResultNode& n,
                           const Options& o) {
  std::vector<std::string> a = MemoryAttrs(n, o);
  for (std::string& s : TimeAttrs(n, o)) a.push_back(std::move(s));
  if (o.Selected(Attr::kParams)) {
    a.push_back(
        Pair(n.account, n.self.parameters, n.total.parameters, FormatNumber) +
        " params");
  }
  if (o.Selected(Attr::kFloatOps)) {
    a.push_back(
        Pair(n.account, n.self.float_ops, n.total.float_ops, FormatNumber) +
        " flops");
  }
  if (o.Selected(Attr::kDevice)) {
    const std::vector<std::string> devices = NodeDevices(r, n);
    if (!devices.empty()) a.push_back(absl::StrJoin(devices, "|"));
  }
  if (o.Selected(Attr::kOpTypes)) {
    a.push_back(absl::StrJoin(NodeOpTypes(r, n), "|"));
  }
  if (o.Selected(Attr::kOccurrence)) a.push_back("occurrence N/A in code view");
  if (o.Selected(Attr::kInputShapes))
    a.push_back("input_shapes N/A in code view");
  return absl::StrCat(n.name, " (", absl::StrJoin(a, ", "), ")");
}

// "<value> (<cumulative %>, <own %>)", right-aligned in 30 columns.
std::string OpCell(const std::string& value, int64_t total, int64_t self,
                   int64_t root_total, bool pct_if) {
  double accum = 0.0, own = 0.0;
  if (pct_if) {
    accum =
        100.0 * static_cast<double>(total) / static_cast<double>(root_total);
    own = 100.0 * static_cast<double>(self) / static_cast<double>(root_total);
  }
  return absl::StrFormat(
      "%30s", absl::StrFormat("%s (%.2f%%, %.2f%%)", value, accum, own));
}

std::string OpInputShapes(const ResultTree& r, const ResultNode& n) {
  // shape string -> (defined count, run count, exec micros)
  std::map<std::string, std::tuple<int64_t, int64_t, int64_t>> groups;
  for (const MemberNode& m : n.members) {
    std::vector<std::string> parts;
    for (const auto& [idx, dims] : NodeInputShapes(r, m)) {
      parts.push_back(dims.empty() ? absl::StrFormat("%d:unknown", idx)
                                   : absl::StrFormat("%d:%s", idx,
                                                     absl::StrJoin(dims, "x")));
    }
    auto& g = groups[absl::StrCat("input_type: ", absl::StrJoin(parts, ",\t"))];
    std::get<0>(g) += 1;
    std::get<1>(g) += m.stats.run_count;
    std::get<2>(g) += m.stats.exec_micros;
  }
  if (groups.empty()) return "";
  std::vector<std::pair<std::string, std::tuple<int64_t, int64_t, int64_t>>>
      sorted(groups.begin(), groups.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) {
                     return std::get<1>(a.second) > std::get<1>(b.second);
                   });
  std::vector<std::string> lines;
  for (const auto& [shape, t] : sorted) {
    lines.push_back(absl::StrFormat("%s\t(run*%d|defined*%d)\texec_time: %s",
                                    shape, std::get<1>(t), std::get<0>(t),
                                    FormatTime(std::get<2>(t))));
  }
  return absl::StrJoin(lines, "\n");
}

// A kernel row's launches, min/avg/max duration and launch dimensions.
std::string KernelCell(const KernelFacts& k) {
  // (The row's time is per step and rank; its launches are all of them.)
  std::string over;
  if (k.steps > 1) absl::StrAppend(&over, " over ", k.steps, " steps");
  if (k.ranks > 1) {
    absl::StrAppend(&over, k.steps > 1 ? " of " : " over ", k.ranks, " ranks");
  }
  std::string cell =
      absl::StrFormat("%d launches%s, min/avg/max %s/%s/%s", k.launches, over,
                      FormatNanos(k.min_ns), FormatNanos(KernelMeanNanos(k)),
                      FormatNanos(k.max_ns));
  // The text row names a few launch shapes; -output json lists them all.
  constexpr size_t kShown = 3;
  const size_t shown = std::min(k.launch.size(), kShown);
  if (shown > 0) {
    absl::StrAppend(
        &cell, ", ",
        absl::StrJoin(k.launch.begin(), k.launch.begin() + shown, " | "));
  }
  if (k.launch.size() > shown) {
    absl::StrAppend(&cell, " (+", k.launch.size() - shown, " more)");
  }
  return cell;
}

// An op or kernel row's float-op figures, as selected.
std::vector<std::string> FlopCells(const FlopFacts& f, const Options& o) {
  std::vector<std::string> cells;
  if (o.Selected(Attr::kAcceleratorFlopRate)) {
    cells.push_back(f.flop_rate < 0 ? "-- FLOP/s"
                                    : FormatFlopRate(f.flop_rate));
  }
  if (o.Selected(Attr::kArithmeticIntensity)) {
    cells.push_back(f.intensity < 0
                        ? "-- FLOP/B"
                        : absl::StrFormat("%.4g FLOP/B", f.intensity));
  }
  if (o.Selected(Attr::kRoofline)) {
    if (f.roof <= 0) {
      cells.push_back("roofline n/a");
    } else {
      cells.push_back(absl::StrFormat(
          "%s-bound, %s of %s (%s)", f.memory_bound ? "memory" : "compute",
          f.roof_fraction < 0
              ? "--%"
              : absl::StrFormat("%.1f%%", 100 * f.roof_fraction),
          FormatFlopRate(f.roof),
          f.dtype == Dtype::kUnknown ? "bf16 assumed" : DtypeName(f.dtype)));
    }
  }
  return cells;
}

std::string FormatOpRow(const ResultTree& tree, const ResultNode& n,
                        const ResultNode& root, const Options& o) {
  std::vector<std::string> a;
  const Totals& t = n.total;
  const Totals& r = root.total;
  const NodeStats& s = n.self;
  if (o.Selected(Attr::kBytes)) {
    a.push_back(OpCell(FormatMemory(s.requested_bytes), t.requested_bytes,
                       s.requested_bytes, r.requested_bytes,
                       s.requested_bytes > 0));
  }
  if (o.Selected(Attr::kPeakBytes)) {
    a.push_back(OpCell(FormatMemory(s.peak_bytes), t.peak_bytes, s.peak_bytes,
                       r.peak_bytes, s.peak_bytes > 0));
  }
  if (o.Selected(Attr::kResidualBytes)) {
    a.push_back(OpCell(FormatMemory(s.residual_bytes), t.residual_bytes,
                       s.residual_bytes, r.residual_bytes,
                       s.residual_bytes > 0));
  }
  if (o.Selected(Attr::kOutputBytes)) {
    a.push_back(OpCell(FormatMemory(s.output_bytes), t.output_bytes,
                       s.output_bytes, r.output_bytes, s.output_bytes > 0));
  }
  const bool micros = o.Selected(Attr::kMicros);
  if (micros) {
    a.push_back(OpCell(FormatTime(s.exec_micros), t.exec_micros, s.exec_micros,
                       r.exec_micros, t.exec_micros > 0));
  }
  if (micros || o.Selected(Attr::kAcceleratorMicros)) {
    a.push_back(OpCell(FormatTime(s.accelerator_exec_micros),
                       t.accelerator_exec_micros, s.accelerator_exec_micros,
                       r.accelerator_exec_micros,
                       t.accelerator_exec_micros > 0));
  }
  if (micros || o.Selected(Attr::kCpuMicros)) {
    a.push_back(OpCell(FormatTime(s.cpu_exec_micros), t.cpu_exec_micros,
                       s.cpu_exec_micros, r.cpu_exec_micros,
                       t.cpu_exec_micros > 0));
  }
  if (o.Selected(Attr::kParams)) {
    a.push_back(OpCell(FormatNumber(s.parameters) + " params", t.parameters,
                       s.parameters, r.parameters, t.parameters > 0));
  }
  if (o.Selected(Attr::kFloatOps)) {
    a.push_back(OpCell(FormatNumber(s.float_ops) + " float_ops", t.float_ops,
                       s.float_ops, r.float_ops, t.float_ops > 0));
  }
  if (o.Selected(Attr::kDevice)) {
    a.push_back(absl::StrJoin(NodeDevices(tree, n), "|"));
  }
  if (o.Selected(Attr::kOpTypes)) {
    a.push_back(absl::StrJoin(NodeOpTypes(tree, n), "|"));
  }
  if (o.Selected(Attr::kOccurrence)) {
    a.push_back(absl::StrFormat(
        "%10s", absl::StrFormat("%d|%d", FlatRowRuns(n), n.members.size())));
  }
  if (n.flops != nullptr) {
    for (std::string& cell : FlopCells(*n.flops, o))
      a.push_back(std::move(cell));
  }
  if (n.kernel != nullptr) a.push_back(KernelCell(*n.kernel));
  std::string row =
      absl::StrFormat("%-25s%s\n", n.name, absl::StrJoin(a, ", "));
  if (o.Selected(Attr::kInputShapes)) {
    const std::string shapes = OpInputShapes(tree, n);
    if (!shapes.empty()) row = absl::StrCat(row, "\n", shapes, "\n\n");
  }
  return row;
}

void RenderTree(const ResultTree& r, size_t id, int indent, std::string* out) {
  const ResultNode& n = r.nodes[id];
  out->append(static_cast<size_t>(indent), ' ');
  if (r.view == ViewKind::kCode) {
    out->append(FormatCodeNode(r, n, r.options));
  } else {
    out->append(FormatScopeNode(r, n, r.options));
  }
  out->push_back('\n');
  if (n.tensor != nullptr) out->append(n.tensor->text);
  for (size_t c : n.children) RenderTree(r, c, indent + 2, out);
}

std::string ViewDoc(ViewKind v) {
  switch (v) {
    case ViewKind::kScope:
      return "scope: nodes form a tree by their names; each '/' opens a "
             "level, like directories.";
    case ViewKind::kGraph:
      return "graph: nodes form a tree along the dataflow, from the graph's "
             "outputs back to their inputs; a shared input is counted once.";
    case ViewKind::kOp:
      return "op: graph nodes are grouped by operation type (MatMul, "
             "Conv2D, ...); totals are cumulative down the list.";
    case ViewKind::kCode:
      return "code: nodes are the Python source lines that created the "
             "graph, organised by call stack.";
    case ViewKind::kKernel:
      return "kernel: accelerator kernels by name, with the ops that "
             "launched them; each row's total is its own.";
  }
  return "";
}

std::string SelectDoc(const std::string& s) {
  if (s == "bytes") return "requested bytes: memory allocated by the op.";
  if (s == "peak_bytes") {
    return "peak bytes: most memory the op held at any one time.";
  }
  if (s == "residual_bytes") {
    return "residual bytes: memory still allocated when the op finished.";
  }
  if (s == "output_bytes") return "output bytes: size of the op's outputs.";
  if (s == "micros") {
    return "total execution time: accelerator time plus cpu time.\n"
           "cpu execution time: wall time of the op on its host thread, "
           "including waits for work it launched.\n"
           "accelerator execution time: kernel time measured on the "
           "accelerator.";
  }
  if (s == "accelerator_micros") {
    return "accelerator execution time: kernel time measured on the "
           "accelerator.";
  }
  if (s == "cpu_micros") {
    return "cpu execution time: wall time of the op on its host thread, "
           "including waits for work it launched.";
  }
  if (s == "params") return "param: number of parameters (variable sizes).";
  if (s == "float_ops") {
    return "flops: floating point operations, from the op log's estimates.";
  }
  if (s == "tensor_value") return "tensor_value: values from the checkpoint.";
  if (s == "device") return "device: the device the op was placed on.";
  if (s == "op_types") {
    return "op_types: the op's type, device and user-defined types.";
  }
  if (s == "occurrence") return "occurrence: how many times the op ran.";
  if (s == "input_shapes") return "input shape: shapes of the op's inputs.";
  if (s == "accelerator_flop_rate") {
    return "accelerator flop rate: float ops per second of accelerator "
           "time (op and kernel views).";
  }
  if (s == "arithmetic_intensity") {
    return "arithmetic intensity: float ops per byte of the inputs and "
           "outputs of the counted computations (op and kernel views).";
  }
  if (s == "roofline") {
    return "roofline: compute- or memory-bound (intensity x bandwidth below "
           "the dtype's peak) and the share of that roof achieved (op and "
           "kernel views; one device's peaks).";
  }
  return "unknown select: " + s;
}

}  // namespace

std::string RenderText(const ResultTree& r) {
  const bool multi = IsFlatView(r.view) || r.view == ViewKind::kCode;
  std::string out = Legend(r.options, multi);
  if (r.nodes.empty()) return out;
  if (IsFlatView(r.view)) {
    for (size_t c : r.nodes[0].children) {
      out += FormatOpRow(r, r.nodes[c], r.nodes[0], r.options);
    }
    return out;
  }
  // Deep trees recurse deeply: on a stack of its own, whoever calls.
  RunWithLargeStack([&] { RenderTree(r, 0, 0, &out); });
  return out;
}

std::string RenderPreamble(const ResultTree& r, const Model& model) {
  std::string out;
  if (model.miss_accelerator_stream()) {
    out +=
        "\n\nFound accelerator ops without accelerator stream timing "
        "(no .../stream:all device in the RunMetadata): their accelerator "
        "time is missing. This is usually a tracing problem of the run, "
        "not of this profile.\n\n";
  }
  // (A line several attributes share, as micros and cpu_micros share the
  // cpu time's, is said once.)
  std::vector<std::string> helps;
  std::set<std::string, std::less<>> said;
  for (const std::string& s : r.options.select.names()) {
    for (absl::string_view line : absl::StrSplit(SelectDoc(s), '\n')) {
      if (said.insert(std::string(line)).second) helps.emplace_back(line);
    }
  }
  absl::StrAppend(&out, "\nDoc:\n", ViewDoc(r.view), "\n",
                  absl::StrJoin(helps, "\n"), "\n\nProfile:\n");
  return out;
}

std::string RenderReport(const ResultTree& r, const Model& model) {
  return RenderPreamble(r, model) + RenderText(r);
}

}  // namespace tfprof
