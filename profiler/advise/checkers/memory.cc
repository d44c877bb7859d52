// MemoryChecker: The nodes holding the most peak and residual memory, and
// each accelerator allocator's peak.
#include "profiler/views/memory.h"

#include <algorithm>
#include <cstdint>
#include <map>
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
#include "profiler/base/device.h"
#include "profiler/base/units.h"

namespace tfprof {
namespace {

class MemoryChecker : public Checker {
 public:
  std::string name() const override { return "MemoryChecker"; }
  bool by_default(ProfileSource source) const override {
    return source != ProfileSource::kTensorFlow;
  }
  std::string help() const override {
    return "The nodes holding the most peak and residual memory, and each "
           "accelerator allocator's peak.";
  }
  std::string needs() const override {
    return "step stats with memory (RunMetadata memory, or a ProfileProto "
           "with memory records), or a trace's memory events";
  }
  std::vector<CheckerOption> options() const override {
    return {{"top", "5", 1, 1000, true, "nodes listed per list"}};
  }

  std::vector<std::string> Run(const CheckerContext& ctx) const override {
    if (!NeedSteps(ctx, name())) return {};
    const Model& model = ctx.model();
    struct Node {
      const GraphNode* node;
      NodeStats s;
    };
    std::vector<Node> nodes;
    int64_t peak_total = 0, residual_total = 0;
    for (const GraphNode* g : model.NodesByName()) {
      const NodeStats s = g->Stats(-1);
      if (s.peak_bytes <= 0 && s.residual_bytes <= 0) continue;
      SatInc(&peak_total, s.peak_bytes);
      SatInc(&residual_total, s.residual_bytes);
      nodes.push_back(Node{g, s});
    }
    // A trace's memory events: each allocator's own peak, the run's memory
    // peak (the nodes' peaks below overlap in time and add up past it).
    const std::vector<AllocatorPeak> peaks = ComputeMemoryPeaks(model);
    if (nodes.empty() && peaks.empty()) {
      ctx.Note(absl::StrCat("no memory stats: ", name(),
                            " needs RunMetadata with memory tracking"));
      return {};
    }
    const size_t top = static_cast<size_t>(ctx.IntOption("top"));
    // A trace's op runs on the host while its memory is where the tensors
    // are: the device said there would mislead, so traces name the op type
    // alone (the allocator peaks above say where memory was).
    const bool trace = model.source() != ProfileSource::kTensorFlow;
    auto placed = [trace](const GraphNode& g) {
      if (trace || g.canonical_device().empty()) return g.op;
      return absl::StrCat(g.op, ", ", g.canonical_device());
    };
    auto list = [&](const char* title, int64_t NodeStats::*field,
                    int64_t total) {
      std::stable_sort(nodes.begin(), nodes.end(),
                       [&](const Node& a, const Node& b) {
                         return a.s.*field > b.s.*field;
                       });
      if (total <= 0) {
        return absl::StrFormat("%s: none", title);
      }
      std::vector<std::string> lines = {absl::StrFormat(
          "%s (%s summed over all nodes):", title, FormatMemory(total))};
      for (size_t i = 0; i < nodes.size() && i < top; ++i) {
        const Node& n = nodes[i];
        if (n.s.*field <= 0) break;
        lines.push_back(absl::StrFormat(
            "  %s (%s): %s (%s), peak %s, residual %s", n.node->name,
            placed(*n.node), FormatMemory(n.s.*field), Pct(n.s.*field, total),
            FormatMemory(n.s.peak_bytes), FormatMemory(n.s.residual_bytes)));
      }
      return absl::StrJoin(lines, "\n");
    };
    std::vector<std::string> reports;
    if (!peaks.empty()) {
      std::vector<std::string> lines = {
          "allocator peaks (memory events; 'memory' lists what was live):"};
      for (const AllocatorPeak& p : peaks) {
        lines.push_back(absl::StrFormat(
            "  %s: %s%s", p.allocator, FormatMemory(p.peak_bytes),
            p.peak_step >= 0 ? absl::StrCat(" in step ", p.peak_step) : ""));
      }
      reports.push_back(absl::StrJoin(lines, "\n"));
    }
    if (nodes.empty()) {
      // (An XSpace of a JAX program: its allocations are the program's,
      // made outside any host op.)
      ctx.Note(
          "no op holds memory of its own in this trace: the allocator "
          "peaks come from its memory events");
    } else {
      for (std::string& r : std::vector<std::string>{
               list("largest peak memory", &NodeStats::peak_bytes, peak_total),
               list("largest residual memory (still allocated after the op "
                    "ran)",
                    &NodeStats::residual_bytes, residual_total)}) {
        reports.push_back(std::move(r));
      }
    }
    // The allocators' peak bytes in use, per accelerator.
    std::map<std::string, std::pair<int64_t, const GraphNode*>> allocator;
    ExecDetail d;
    for (const auto& node : model.nodes()) {
      if (!IsPlacedOnAccelerator(node->canonical_device())) continue;
      for (const StepExec& e : node->execs) {
        model.DetailInto(e, &d);
        for (const MemoryExec& m : d.memory_execs) {
          auto& a = allocator[node->canonical_device()];
          if (m.allocator_bytes_in_use > a.first) {
            a = {m.allocator_bytes_in_use, node.get()};
          }
        }
      }
    }
    for (const auto& [dev, a] : allocator) {
      // (The bytes in use as ops ended are a sample of what memory events,
      // when the trace has them, give whole: the allocator peaks above.
      // Shown beside them it read as a second, smaller peak.)
      if (a.first <= 0 || !peaks.empty()) continue;
      reports.push_back(
          absl::StrFormat("%s: allocator peak in use %s, reached after %s", dev,
                          FormatMemory(a.first), a.second->name));
    }
    reports.push_back(
        "Residual memory stays allocated after an op: activations kept for "
        "the backward pass, variables, caches. To lower the peak: smaller "
        "batches, recomputing activations (gradient checkpointing), mixed "
        "precision, or releasing large intermediates earlier.");
    return reports;
  }
};

}  // namespace

std::unique_ptr<Checker> NewMemoryChecker() {
  return std::make_unique<MemoryChecker>();
}

}  // namespace tfprof
