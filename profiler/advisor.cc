#include "profiler/advisor.h"

#include <algorithm>
#include <map>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "profiler/format.h"
#include "profiler/render_proto.h"

namespace tfprof {
namespace {

constexpr char kAcceleratorUtilization[] = "AcceleratorUtilizationChecker";
constexpr char kOperation[] = "OperationChecker";
constexpr char kExpensiveOperation[] = "ExpensiveOperationChecker";
constexpr char kJob[] = "JobChecker";

// Busy share of each accelerator: kernel time over the span from the first
// start to the last end, using each node's last step.
std::vector<std::string> CheckAcceleratorUtilization(const Model& model,
                                                     double threshold) {
  struct Span {
    int64_t start = 0, end = 0, exec = 0;
  };
  std::map<std::string, Span> devices;
  for (const GraphNode* n : model.NodesByName()) {
    if (n->execs.empty() || !IsPlacedOnAccelerator(n->canonical_device)) {
      continue;
    }
    Span& s = devices[n->canonical_device];
    const StepExec& e = n->execs.back();
    const ExecDetail d = model.Detail(e);
    if (s.start == 0) {
      s.start = d.all_start_micros;
    } else if (d.all_start_micros != 0) {
      s.start = std::min(s.start, d.all_start_micros);
    }
    s.end = std::max(s.end, d.latest_end_micros);
    s.exec += e.accelerator_micros;
  }
  std::vector<std::string> reports;
  for (const auto& [dev, s] : devices) {
    const int64_t span = s.end - s.start;
    if (span <= 0) continue;
    const double u =
        1.0 * static_cast<double>(s.exec) / static_cast<double>(span);
    reports.push_back(absl::StrFormat("device: %s %sutilization: %.2f", dev,
                                      u >= threshold ? "" : "low ", u));
  }
  return reports;
}

std::vector<std::string> CheckOperations(const Model& model) {
  bool batch_norm = false, fused_batch_norm = false, nhwc_on_gpu = false;
  for (const GraphNode* n : model.NodesByName()) {
    if (n->name.find("BatchNorm") != std::string::npos) batch_norm = true;
    if (n->op_types.count("FusedBatchNorm")) fused_batch_norm = true;
    auto attr = n->FindAttr("data_format");
    if (attr.has_value() && attr->s() == "NHWC" &&
        IsPlacedOnAccelerator(n->canonical_device)) {
      nhwc_on_gpu = true;
    }
  }
  std::vector<std::string> reports;
  if (batch_norm && !fused_batch_norm) {
    reports.push_back("Maybe use faster FusedBatchNorm instead of BatchNorm");
  }
  if (nhwc_on_gpu) {
    reports.push_back(
        "Found operation using NHWC data_format on GPU. Maybe NCHW is faster.");
  }
  return reports;
}

Options QueryOptions(int64_t max_depth, int64_t min_micros,
                     std::set<std::string> select) {
  Options o;
  o.max_depth = max_depth;
  o.min_micros = min_micros;
  o.order_by = "micros";
  o.select = std::move(select);
  o.output_type = "none";
  return o;
}

void CodeLines(const tfpb::MultiGraphNodeProto& node, int depth, int top,
               std::vector<std::string>* out) {
  if (node.children_size() <= 1 || depth > 3) return;
  for (int j = 0; j < top && j < node.children_size(); ++j) {
    const tfpb::MultiGraphNodeProto& c = node.children(j);
    if (c.total_exec_micros() < 1000) continue;
    out->push_back(
        absl::StrFormat("%s%s, cpu: %s, accelerator: %s, total: %s",
                        std::string(static_cast<size_t>(depth) * 2, ' '),
                        c.name(), FormatTime(c.total_cpu_exec_micros()),
                        FormatTime(c.total_accelerator_exec_micros()),
                        FormatTime(c.total_exec_micros())));
    CodeLines(c, depth + 1, top, out);
  }
}

std::vector<std::string> CheckExpensiveOperations(
    const Model& model, Views* views, int top,
    std::vector<std::string>* notes) {
  std::vector<std::string> reports;
  if (model.steps().empty()) {
    notes->push_back(absl::StrCat("no RunMetadata: ", kExpensiveOperation,
                                  " cannot rank operations by time"));
  } else {
    auto op = views->Query(ViewKind::kOp,
                           QueryOptions(top, 1, {"micros", "occurrence"}));
    if (op.ok()) {
      const tfpb::MultiGraphNodeProto root = ToMultiGraphNodeProto(*op);
      if (root.children_size() > 0) {
        std::vector<std::string> lines;
        const tfpb::MultiGraphNodeProto* n = &root;
        for (int i = 0; i < top && n->children_size() > 0; ++i) {
          n = &n->children(0);
          lines.push_back(absl::StrFormat(
              "top %d operation type: %s, cpu: %s, accelerator: %s, total: %s "
              "(%.2f%%)",
              i + 1, n->name(), FormatTime(n->cpu_exec_micros()),
              FormatTime(n->accelerator_exec_micros()),
              FormatTime(n->exec_micros()),
              100.0 * static_cast<double>(n->exec_micros()) /
                  (static_cast<double>(root.total_exec_micros()) + 1e-10)));
        }
        reports.push_back(absl::StrJoin(lines, "\n"));
      }
    }
  }
  auto scope =
      views->Query(ViewKind::kScope, QueryOptions(100, 100, {"micros"}));
  if (scope.ok()) {
    const tfpb::GraphNodeProto root = ToGraphNodeProto(*scope);
    if (root.children_size() > 0) {
      std::vector<std::string> lines;
      for (int i = 0; i < top && i < root.children_size(); ++i) {
        const tfpb::GraphNodeProto& c = root.children(i);
        lines.push_back(absl::StrFormat(
            "top %d graph node: %s, cpu: %s, accelerator: %s, total: %s", i + 1,
            c.name(), FormatTime(c.cpu_exec_micros()),
            FormatTime(c.accelerator_exec_micros()),
            FormatTime(c.exec_micros())));
      }
      reports.push_back(absl::StrJoin(lines, "\n"));
    }
  }
  if (!model.has_code_traces()) {
    notes->push_back(absl::StrCat("no Python call stacks: ",
                                  kExpensiveOperation, " skips the code view"));
    return reports;
  }
  auto code = views->Query(ViewKind::kCode, QueryOptions(100, 1, {"micros"}));
  if (code.ok()) {
    const tfpb::MultiGraphNodeProto root = ToMultiGraphNodeProto(*code);
    const tfpb::MultiGraphNodeProto* n = &root;
    // Library frames are usually reached once; descend to where the user's
    // code branches.
    while (n->children_size() == 1) n = &n->children(0);
    if (n->children_size() > 0) {
      std::vector<std::string> lines;
      CodeLines(*n, 0, top, &lines);
      reports.push_back(absl::StrJoin(lines, "\n"));
    }
  }
  return reports;
}

}  // namespace

const std::vector<CheckerInfo>& Checkers() {
  static const std::vector<CheckerInfo> checkers = {
      {kAcceleratorUtilization,
       "How busy each accelerator is between its first and last kernel."},
      {kOperation,
       "Known slow choices: BatchNorm without FusedBatchNorm, NHWC on GPU."},
      {kExpensiveOperation,
       "The most expensive op types, top-level scopes and Python lines."},
  };
  return checkers;
}

tfpb::AdvisorOptionsProto DefaultAdvisorOptions() {
  tfpb::AdvisorOptionsProto options;
  for (const CheckerInfo& c : Checkers()) (*options.mutable_checkers())[c.name];
  return options;
}

absl::StatusOr<tfpb::AdviceProto> Advise(
    const Model& model, Views* views, const tfpb::AdvisorOptionsProto& options,
    std::vector<std::string>* notes) {
  std::vector<std::string> ignored;
  if (notes == nullptr) notes = &ignored;
  for (const auto& entry : options.checkers()) {
    const std::string& name = entry.first;
    const bool known =
        name == kJob ||
        std::any_of(Checkers().begin(), Checkers().end(),
                    [&](const CheckerInfo& c) { return c.name == name; });
    if (!known) {
      std::vector<std::string> names;
      for (const CheckerInfo& c : Checkers()) names.push_back(c.name);
      return absl::InvalidArgumentError(
          absl::StrCat("unknown checker '", name,
                       "' (checkers: ", absl::StrJoin(names, ", "), ")"));
    }
  }
  // Checker options: ExpensiveOperationChecker "top" (rows per list,
  // default 3), AcceleratorUtilizationChecker "threshold" (below it a device
  // is reported as low, default 0.5).
  int top = 3;
  double threshold = 0.5;
  for (const auto& entry : options.checkers()) {
    for (const auto& [key, value] : entry.second.options()) {
      const bool expensive = entry.first == kExpensiveOperation && key == "top";
      const bool accel =
          entry.first == kAcceleratorUtilization && key == "threshold";
      if (expensive) {
        if (!absl::SimpleAtoi(value, &top) || top < 1 || top > 1000) {
          return absl::InvalidArgumentError(absl::StrCat(
              entry.first, ": top must be a number from 1 to 1000, got '",
              value, "'"));
        }
      } else if (accel) {
        if (!absl::SimpleAtod(value, &threshold) || threshold < 0 ||
            threshold > 1) {
          return absl::InvalidArgumentError(absl::StrCat(
              entry.first, ": threshold must be between 0 and 1, got '", value,
              "'"));
        }
      } else {
        return absl::InvalidArgumentError(
            absl::StrCat("unknown option '", key, "' for ", entry.first,
                         " (ExpensiveOperationChecker takes top, "
                         "AcceleratorUtilizationChecker takes threshold)"));
      }
    }
  }
  tfpb::AdviceProto advice;
  auto wanted = [&](const char* name) {
    return options.checkers().count(name) != 0;
  };
  auto add = [&](const char* name, const std::vector<std::string>& reports) {
    auto& checker = (*advice.mutable_checkers())[name];
    for (const std::string& r : reports) checker.add_reports(r);
  };
  if (wanted(kAcceleratorUtilization)) {
    add(kAcceleratorUtilization, CheckAcceleratorUtilization(model, threshold));
  }
  if (wanted(kOperation)) add(kOperation, CheckOperations(model));
  if (wanted(kExpensiveOperation)) {
    add(kExpensiveOperation,
        CheckExpensiveOperations(model, views, top, notes));
  }
  return advice;
}

std::string RenderAdvice(const tfpb::AdviceProto& advice) {
  std::string out;
  // Fixed checker order (a protobuf map has none).
  for (const CheckerInfo& c : Checkers()) {
    auto it = advice.checkers().find(c.name);
    if (it == advice.checkers().end()) continue;
    absl::StrAppend(&out, "\n", c.name, ":\n");
    for (const std::string& r : it->second.reports()) {
      absl::StrAppend(&out, r, "\n");
    }
  }
  return out;
}

}  // namespace tfprof
