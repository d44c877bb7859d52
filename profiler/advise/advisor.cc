#include "profiler/advise/advisor.h"

#include <algorithm>
#include <map>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "profiler/base/device.h"
#include "profiler/base/units.h"
#include "profiler/render/render_proto.h"

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
    if (n->execs.empty() || !IsPlacedOnAccelerator(n->canonical_device())) {
      continue;
    }
    Span& s = devices[n->canonical_device()];
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
        IsPlacedOnAccelerator(n->canonical_device())) {
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

class AcceleratorUtilizationChecker : public Checker {
 public:
  std::string name() const override { return kAcceleratorUtilization; }
  std::string help() const override {
    return "How busy each accelerator is between its first and last kernel.";
  }
  std::string needs() const override {
    return "step stats with accelerator (stream:all) time";
  }
  bool by_default() const override { return true; }
  std::vector<CheckerOption> options() const override {
    return {{"threshold", "0.5", 0, 1, false,
             "devices busy less than this share are \"low utilization\""}};
  }
  std::vector<std::string> Run(const CheckerContext& ctx) const override {
    return CheckAcceleratorUtilization(ctx.model(), ctx.Option("threshold"));
  }
};

class OperationChecker : public Checker {
 public:
  std::string name() const override { return kOperation; }
  std::string help() const override {
    return "Known slow choices: BatchNorm without FusedBatchNorm, NHWC on "
           "GPU.";
  }
  std::string needs() const override { return "the graph"; }
  bool by_default() const override { return true; }
  std::vector<std::string> Run(const CheckerContext& ctx) const override {
    return CheckOperations(ctx.model());
  }
};

class ExpensiveOperationChecker : public Checker {
 public:
  std::string name() const override { return kExpensiveOperation; }
  std::string help() const override {
    return "The most expensive op types, top-level scopes and Python lines.";
  }
  std::string needs() const override {
    return "step stats (op types, scopes); Python call stacks (lines)";
  }
  bool by_default() const override { return true; }
  std::vector<CheckerOption> options() const override {
    return {{"top", "3", 1, 1000, true, "rows per list"}};
  }
  std::vector<std::string> Run(const CheckerContext& ctx) const override {
    std::vector<std::string> notes;
    std::vector<std::string> reports = CheckExpensiveOperations(
        ctx.model(), ctx.views(), static_cast<int>(ctx.IntOption("top")),
        &notes);
    for (const std::string& n : notes) ctx.Note(n);
    return reports;
  }
};

}  // namespace

const std::vector<const Checker*>& Checkers() {
  static const std::vector<const Checker*>* const checkers = [] {
    auto* v = new std::vector<const Checker*>{
        new AcceleratorUtilizationChecker(), new OperationChecker(),
        new ExpensiveOperationChecker()};
    for (const Checker* c : ExtraCheckers()) v->push_back(c);
    return v;
  }();
  return *checkers;
}

const Checker* FindChecker(const std::string& name) {
  for (const Checker* c : Checkers()) {
    if (c->name() == name) return c;
  }
  return nullptr;
}

tfpb::AdvisorOptionsProto DefaultAdvisorOptions() {
  tfpb::AdvisorOptionsProto options;
  for (const Checker* c : Checkers()) {
    if (c->by_default()) (*options.mutable_checkers())[c->name()];
  }
  return options;
}

tfpb::AdvisorOptionsProto AllAdvisorOptions() {
  tfpb::AdvisorOptionsProto options;
  for (const Checker* c : Checkers()) (*options.mutable_checkers())[c->name()];
  return options;
}

absl::StatusOr<tfpb::AdviceProto> Advise(
    const Model& model, Views* views, const tfpb::AdvisorOptionsProto& options,
    std::vector<std::string>* notes) {
  std::vector<std::string> ignored;
  if (notes == nullptr) notes = &ignored;
  // Validate everything before running anything.
  std::map<std::string, std::map<std::string, double>> values;
  for (const auto& [name, checker_options] : options.checkers()) {
    if (name == kJob) continue;  // TensorFlow-internal; reports nothing
    const Checker* c = FindChecker(name);
    if (c == nullptr) {
      std::vector<std::string> names;
      for (const Checker* k : Checkers()) names.push_back(k->name());
      return absl::InvalidArgumentError(
          absl::StrCat("unknown checker '", name,
                       "' (checkers: ", absl::StrJoin(names, ", "), ")"));
    }
    std::map<std::string, double>& v = values[name];
    const std::vector<CheckerOption> declared = c->options();
    for (const CheckerOption& o : declared) {
      double d = 0;
      (void)absl::SimpleAtod(o.default_value, &d);
      v[o.name] = d;
    }
    for (const auto& entry : checker_options.options()) {
      const std::string& key = entry.first;
      const std::string& text = entry.second;
      auto o =
          std::find_if(declared.begin(), declared.end(),
                       [&](const CheckerOption& x) { return x.name == key; });
      if (o == declared.end()) {
        std::vector<std::string> names;
        for (const CheckerOption& x : declared) names.push_back(x.name);
        return absl::InvalidArgumentError(absl::StrCat(
            "unknown option '", key, "' for ", name,
            names.empty() ? " (it takes none)"
                          : absl::StrCat(" (options: ",
                                         absl::StrJoin(names, ", "), ")")));
      }
      double d = 0;
      bool ok = false;
      if (o->integer) {
        int64_t i = 0;
        ok = absl::SimpleAtoi(text, &i);
        d = static_cast<double>(i);
      } else {
        ok = absl::SimpleAtod(text, &d);
      }
      if (!ok || d < o->min || d > o->max) {
        return absl::InvalidArgumentError(
            absl::StrCat(name, ": ", key, " must be ",
                         o->integer ? "a whole number" : "a number", " from ",
                         o->min, " to ", o->max, ", got '", text, "'"));
      }
      v[key] = d;
    }
  }
  tfpb::AdviceProto advice;
  for (const Checker* c : Checkers()) {
    auto it = values.find(c->name());
    if (it == values.end()) continue;
    CheckerContext ctx(model, views, it->second, notes);
    auto& out = (*advice.mutable_checkers())[c->name()];
    for (const std::string& r : c->Run(ctx)) out.add_reports(r);
  }
  return advice;
}

std::string RenderAdvice(const tfpb::AdviceProto& advice) {
  std::string out;
  // Fixed checker order (a protobuf map has none).
  for (const Checker* c : Checkers()) {
    auto it = advice.checkers().find(c->name());
    if (it == advice.checkers().end()) continue;
    absl::StrAppend(&out, "\n", c->name(), ":\n");
    for (const std::string& r : it->second.reports()) {
      absl::StrAppend(&out, r, "\n");
    }
  }
  return out;
}

}  // namespace tfprof
