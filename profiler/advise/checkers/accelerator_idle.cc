// AcceleratorIdleChecker: Gaps inside a step when no kernel runs on an
// accelerator, the largest ones and the host ops that ran during them.
#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "profiler/advise/advisor.h"
#include "profiler/advise/checkers/checker_util.h"
#include "profiler/advise/checkers/checkers.h"
#include "profiler/base/device.h"
#include "profiler/base/saturate.h"
#include "profiler/base/units.h"

namespace tfprof {
namespace {

// The accelerator a stream lane belongs to, lower-cased.
std::string AcceleratorOf(std::string_view device) {
  return absl::AsciiStrToLower(std::string(LaneOwner(device)));
}

bool IsInputOp(const GraphNode& g) {
  return absl::StrContains(g.op, "Iterator") ||
         absl::StrContains(g.op, "Dataset") ||
         absl::StrContains(g.op, "Placeholder") ||
         absl::StrContains(g.op, "Recv") ||
         absl::StrContains(g.name, "DataLoader") ||
         absl::StrContains(g.name, "dataloader");
}

// Kernel intervals per (step, accelerator), and host ops per step, in
// nanoseconds.
struct KernelTimes {
  using Key = std::pair<int64_t, std::string>;
  struct Interval {
    int64_t start, end;
  };
  struct HostOp {
    const GraphNode* node;
    int64_t start, end;
  };
  std::map<Key, std::vector<Interval>> kernels;
  std::map<int64_t, std::vector<HostOp>> host;
};

// A trace's kernels, copies and sets as recorded, to the nanosecond (a gap
// of 49.6us is under a 50us minimum).
void CollectTraceWork(const Model& model, KernelTimes* out) {
  const Activity& a = model.activity();
  for (const DeviceWork& w : a.work()) {
    if (model.steps().count(w.step) == 0) continue;
    out->kernels[{w.step, AcceleratorOf(a.String(w.stream))}].push_back(
        KernelTimes::Interval{w.start_ns, SatAdd(w.start_ns, w.duration_ns)});
  }
}

// Kernel times from a trace's record, else from the stream:all pseudo
// device of the step stats when the accelerator has it, else from its
// single streams (microseconds).
KernelTimes CollectKernelTimes(const Model& model) {
  KernelTimes out;
  const bool trace = ReadsTraceWork(model);
  if (trace) CollectTraceWork(model, &out);
  std::map<KernelTimes::Key, std::vector<KernelTimes::Interval>> streams;
  const auto add = [](const std::vector<TimeInterval>& from,
                      std::vector<KernelTimes::Interval>* to) {
    for (const TimeInterval& t : from) {
      const int64_t start = SatMul(t.start_micros, 1000);
      to->push_back({start, SatAdd(start, SatMul(t.duration_micros, 1000))});
    }
  };
  ExecDetail d;
  for (const auto& node : model.nodes()) {
    for (const StepExec& e : node->execs) {
      model.DetailInto(e, &d);
      for (const DeviceTimes& dt : d.accelerator_execs) {
        if (!trace)
          add(dt.times, &out.kernels[{e.step, AcceleratorOf(dt.device)}]);
      }
      for (const DeviceTimes& dt : d.other_execs) {
        if (trace || KindOfDevice(dt.device) != DeviceKind::kStream) continue;
        add(dt.times, &streams[{e.step, AcceleratorOf(dt.device)}]);
      }
      for (const DeviceTimes& dt : d.cpu_execs) {
        for (const TimeInterval& t : dt.times) {
          const int64_t start = SatMul(t.start_micros, 1000);
          out.host[e.step].push_back(KernelTimes::HostOp{
              node.get(), start,
              SatAdd(start, SatMul(t.duration_micros, 1000))});
        }
      }
    }
  }
  for (auto& [key, v] : streams) {
    if (!out.kernels.count(key)) out.kernels[key] = std::move(v);
  }
  return out;
}

struct IdleGap {
  int64_t step;
  std::string device;
  int64_t start, end;  // nanoseconds
};

// Nanoseconds shown in microseconds, rounded to the nearest.
std::string Time(int64_t ns) { return FormatTime((ns + 500) / 1000); }

// Per accelerator: its kernel span and idle time, summed over steps.
struct Busy {
  int64_t span = 0, idle = 0, gaps = 0, steps = 0;
};

// The gaps of at least `min_gap` nanoseconds between kernels, and each
// accelerator's busy figures (nanoseconds).
void FindIdleGaps(KernelTimes* times, int64_t min_gap,
                  std::vector<IdleGap>* gaps,
                  std::map<std::string, Busy>* busy) {
  for (auto& [key, v] : times->kernels) {
    std::sort(v.begin(), v.end(),
              [](const KernelTimes::Interval& a,
                 const KernelTimes::Interval& b) { return a.start < b.start; });
    Busy& b = (*busy)[key.second];
    ++b.steps;
    int64_t first = v.front().start, covered_to = first;
    for (const KernelTimes::Interval& t : v) {
      if (t.start > covered_to) {
        const int64_t gap = t.start - covered_to;
        if (gap >= min_gap) {
          gaps->push_back(IdleGap{key.first, key.second, covered_to, t.start});
          SatInc(&b.idle, gap);
          ++b.gaps;
        }
      }
      covered_to = std::max(covered_to, t.end);
    }
    SatInc(&b.span, covered_to - first);
  }
}

// One line about a gap: its length, where, and the host ops that ran
// meanwhile (their overlap added to *input_overlap or *other_overlap).
std::string DescribeGap(const IdleGap& g,
                        const std::vector<KernelTimes::HostOp>& host,
                        const std::map<int64_t, Span>& spans,
                        int64_t* input_overlap, int64_t* other_overlap) {
  // The host ops that overlap the gap, by overlap.
  std::map<const GraphNode*, int64_t> overlap;
  for (const KernelTimes::HostOp& h : host) {
    const int64_t o = std::min(h.end, g.end) - std::max(h.start, g.start);
    if (o > 0) overlap[h.node] += o;
  }
  std::vector<std::pair<const GraphNode*, int64_t>> ranked(overlap.begin(),
                                                           overlap.end());
  // Ties by name: the map's order is the nodes' addresses, which differ
  // from run to run.
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second
                                : a.first->name < b.first->name;
  });
  std::vector<std::string> ops;
  for (const auto& [node, o] : ranked) {
    (IsInputOp(*node) ? *input_overlap : *other_overlap) += o;
    if (ops.size() < 3) {
      ops.push_back(
          absl::StrFormat("%s (%s) %s", node->name, node->op, Time(o)));
    }
  }
  const auto span = spans.find(g.step);
  const int64_t offset = span == spans.end() ? 0 : g.start - span->second.start;
  return absl::StrFormat(
      "  %s on %s, step %d at +%s: %s", Time(g.end - g.start), g.device, g.step,
      Time(offset),
      ops.empty() ? "nothing ran on the host"
                  : "on the host meanwhile: " + absl::StrJoin(ops, ", "));
}

// How an XSpace's run used XLA: its programs' instructions carry an HLO
// category; kernels replayed in CUDA-graph command buffers sit on
// "command_buffer" nodes.
struct XlaUse {
  bool xla = false;
  bool command_buffers = false;
};
XlaUse XlaUseOf(const Model& model) {
  XlaUse u;
  for (const auto& node : model.nodes()) {
    u.command_buffers = u.command_buffers || node->op == "command_buffer";
    u.xla = u.xla || (!node->attrs().empty() &&
                      node->FindAttr(kXlaCategoryAttr).has_value());
    if (u.xla && u.command_buffers) break;
  }
  return u;
}

// How to fuse small ops and launch fewer kernels, in the framework that
// recorded the trace.
const char* FuseAdvice(const Model& model) {
  if (model.source() == ProfileSource::kPyTorch) {
    return "Fuse small ops (torch.compile) or replay them as CUDA graphs "
           "(torch.compile mode=\"reduce-overhead\")";
  }
  if (model.source() != ProfileSource::kXSpace) {
    return "Fuse small ops (XLA: jit_compile)";
  }
  const XlaUse u = XlaUseOf(model);
  if (!u.xla) {
    return "Fuse small ops (tf.function(jit_compile=True), or jax.jit)";
  }
  return u.command_buffers
             ? "Fuse small ops (jit); this run replayed kernels in XLA's "
               "CUDA-graph command buffers: where their updates on the host "
               "fill the gaps, compare a run with them off "
               "(XLA_FLAGS=--xla_gpu_enable_command_buffer=)"
             : "Fuse small ops (jit), and try XLA's CUDA-graph command "
               "buffers (--xla_gpu_enable_command_buffer), which replay "
               "kernels without launching each one";
}

class AcceleratorIdleChecker : public Checker {
 public:
  std::string name() const override { return "AcceleratorIdleChecker"; }
  bool by_default(ProfileSource source) const override {
    return source != ProfileSource::kTensorFlow;
  }
  std::string help() const override {
    return "Gaps inside a step when no kernel runs on an accelerator, the "
           "largest ones and the host ops that ran during them.";
  }
  std::string needs() const override {
    return "a trace's kernels, copies and sets, or RunMetadata step stats "
           "with GPU stream activity";
  }
  std::vector<CheckerOption> options() const override {
    return {{"threshold", "0.2", 0, 1, false,
             "an accelerator idle for at least this share of its kernel "
             "span is a problem"},
            {"top", "3", 1, 1000, true, "largest gaps listed"},
            {"min_gap", "50", 0, 1e12, true,
             "gaps shorter than this many microseconds are ignored"}};
  }

  std::vector<std::string> Run(const CheckerContext& ctx) const override {
    if (!NeedSteps(ctx, name())) return {};
    const Model& model = ctx.model();
    KernelTimes times = CollectKernelTimes(model);
    if (times.kernels.empty()) {
      ctx.Note(absl::StrCat("no kernel times: ", name(),
                            " needs a trace's GPU work or step stats with "
                            "GPU stream activity"));
      return {};
    }
    const int64_t min_gap = ctx.IntOption("min_gap");
    std::vector<IdleGap> gaps;
    std::map<std::string, Busy> busy;
    FindIdleGaps(&times, SatMul(min_gap, 1000), &gaps, &busy);
    std::vector<std::string> reports;
    std::vector<std::string> lines;
    bool problem = false;
    for (const auto& [dev, b] : busy) {
      const double share =
          b.span > 0 ? static_cast<double>(b.idle) / static_cast<double>(b.span)
                     : 0;
      if (share >= ctx.Option("threshold")) problem = true;
      lines.push_back(absl::StrFormat(
          "%s: idle %s of its kernel span (%s of %s per step, in %d gaps of "
          "at least %s over %d step%s)%s",
          dev, Pct(b.idle, b.span), Time(b.idle / b.steps),
          Time(b.span / b.steps), b.gaps, FormatTime(min_gap), b.steps,
          b.steps == 1 ? "" : "s",
          share >= ctx.Option("threshold") ? "" : ", below the threshold"));
    }
    reports.push_back(absl::StrJoin(lines, "\n"));
    if (gaps.empty()) return reports;

    std::stable_sort(gaps.begin(), gaps.end(),
                     [](const IdleGap& a, const IdleGap& b) {
                       return a.end - a.start > b.end - b.start;
                     });
    const std::map<int64_t, Span> spans = StepSpans(ctx);
    lines = {"largest gaps:"};
    int64_t input_overlap = 0, other_overlap = 0;
    for (size_t i = 0;
         i < gaps.size() && i < static_cast<size_t>(ctx.IntOption("top"));
         ++i) {
      lines.push_back(DescribeGap(gaps[i], times.host[gaps[i].step], spans,
                                  &input_overlap, &other_overlap));
    }
    reports.push_back(absl::StrJoin(lines, "\n"));
    if (!problem) return reports;
    if (input_overlap > other_overlap) {
      reports.push_back(
          "The accelerator waits for input: the host reads or receives data "
          "during its largest gaps. Prefetch and parallelize the input "
          "pipeline, or move preprocessing off the critical path.");
    } else {
      const char* fuse = FuseAdvice(ctx.model());
      reports.push_back(absl::StrCat(
          "The accelerator waits for the host between kernels (launch-bound "
          "or host work in the step). ",
          fuse,
          ", use larger batches, and avoid host round trips inside the "
          "step."));
    }
    return reports;
  }
};

}  // namespace

std::unique_ptr<Checker> NewAcceleratorIdleChecker() {
  return std::make_unique<AcceleratorIdleChecker>();
}

}  // namespace tfprof
