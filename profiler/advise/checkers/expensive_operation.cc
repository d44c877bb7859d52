// ExpensiveOperationChecker: The most expensive op types, top-level scopes
// and Python lines.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "profiler/advise/advisor.h"
#include "profiler/advise/checkers/checker_util.h"
#include "profiler/advise/checkers/checkers.h"
#include "profiler/base/units.h"
#include "profiler/render/render_proto.h"
#include "profiler/views/views.h"

namespace tfprof {
namespace {

constexpr char kExpensiveOperation[] = "ExpensiveOperationChecker";

Options QueryOptions(int64_t max_depth, int64_t min_micros, AttrSet select) {
  Options o;
  o.max_depth = max_depth;
  o.min_micros = min_micros;
  o.order_by = Attr::kMicros;
  o.select = select;
  o.output_type = OutputKind::kNone;
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
    auto op =
        views->Query(ViewKind::kOp,
                     QueryOptions(top, 1, {Attr::kMicros, Attr::kOccurrence}));
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
      views->Query(ViewKind::kScope, QueryOptions(100, 100, {Attr::kMicros}));
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
  auto code =
      views->Query(ViewKind::kCode, QueryOptions(100, 1, {Attr::kMicros}));
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

class ExpensiveOperationChecker : public Checker {
 public:
  std::string name() const override { return kExpensiveOperation; }
  std::string help() const override {
    return "The most expensive op types, top-level scopes and Python lines.";
  }
  std::string needs() const override {
    return "step stats (op types, scopes); Python call stacks (lines)";
  }
  bool by_default(ProfileSource source) const override {
    return source == ProfileSource::kTensorFlow;
  }
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

std::unique_ptr<Checker> NewExpensiveOperationChecker() {
  return std::make_unique<ExpensiveOperationChecker>();
}

}  // namespace tfprof
