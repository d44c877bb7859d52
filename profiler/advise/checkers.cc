// The checkers beyond tfprof's own: host-device copies, ops left on the CPU,
// accelerator idle gaps, step-to-step variation, missing FLOP counts and
// memory. Each report says what was found, what it costs and what to try.
#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "profiler/advise/advisor.h"
#include "profiler/base/device.h"
#include "profiler/base/units.h"

namespace tfprof {
namespace {

std::string Pct(double part, double whole) {
  return absl::StrFormat("%.1f%%", whole > 0 ? 100.0 * part / whole : 0.0);
}

// `what` is lower case.
bool ContainsNoCase(std::string_view s, const char* what) {
  return absl::AsciiStrToLower(std::string(s)).find(what) != std::string::npos;
}

// Says so and returns false when the profile has no step stats.
bool NeedSteps(const CheckerContext& ctx, const std::string& checker) {
  if (!ctx.model().steps().empty()) return true;
  ctx.Note(absl::StrCat("no RunMetadata: ", checker,
                        " needs step stats (--run_meta_path or a profile "
                        "with steps)"));
  return false;
}

struct Span {
  int64_t start = 0, end = 0;
  int64_t length() const { return end > start ? end - start : 0; }
};

// The wall span of each step: the earliest start to the latest end of any
// node.
std::map<int64_t, Span> StepSpans(const Model& model) {
  std::map<int64_t, Span> spans;
  ExecDetail d;
  for (const auto& node : model.nodes()) {
    for (const StepExec& e : node->execs) {
      model.DetailInto(e, &d);
      if (d.all_start_micros <= 0) continue;
      Span& s = spans[e.step];
      if (s.start == 0 || d.all_start_micros < s.start) {
        s.start = d.all_start_micros;
      }
      s.end = std::max(s.end, d.latest_end_micros);
    }
  }
  return spans;
}

// ---------------------------------------------------------------------------

class HostDeviceCopyChecker : public Checker {
 public:
  std::string name() const override { return "HostDeviceCopyChecker"; }
  std::string help() const override {
    return "Time spent copying between host and device (memcpy), as a share "
           "of the step, and the largest copies.";
  }
  std::string needs() const override {
    return "RunMetadata step stats with GPU memcpy lanes";
  }
  std::vector<CheckerOption> options() const override {
    return {{"threshold", "0.1", 0, 1, false,
             "copies taking at least this share of the step are a problem"},
            {"top", "3", 1, 1000, true, "largest copies listed"}};
  }

  std::vector<std::string> Run(const CheckerContext& ctx) const override {
    if (!NeedSteps(ctx, name())) return {};
    const Model& model = ctx.model();
    struct Copy {
      const GraphNode* node;
      std::string device;
      int64_t step, start, duration;
    };
    std::vector<Copy> copies;
    ExecDetail d;
    for (const auto& node : model.nodes()) {
      const bool copy_node = ContainsNoCase(node->name, "memcpy") ||
                             ContainsNoCase(node->op, "memcpy");
      for (const StepExec& e : node->execs) {
        model.DetailInto(e, &d);
        for (const auto* list : {&d.other_execs, &d.accelerator_execs}) {
          for (const DeviceTimes& dt : *list) {
            if (!copy_node && KindOfDevice(dt.device) != DeviceKind::kMemcpy) {
              continue;
            }
            for (const TimeInterval& t : dt.times) {
              copies.push_back(Copy{node.get(), std::string(dt.device), e.step,
                                    t.start_micros, t.duration_micros});
            }
          }
        }
      }
    }
    if (copies.empty()) {
      ctx.Note(absl::StrCat(
          "no memcpy activity in the step stats: ", name(),
          " needs RunMetadata with GPU memcpy lanes (a ProfileProto does not "
          "keep them)"));
      return {};
    }
    const std::map<int64_t, Span> spans = StepSpans(model);
    const double steps = static_cast<double>(model.steps().size());
    int64_t wall = 0, total = 0;
    for (const auto& [step, s] : spans) SatInc(&wall, s.length());
    std::map<std::string, std::pair<int64_t, int64_t>> by_device;
    for (const Copy& c : copies) {
      SatInc(&total, c.duration);
      auto& dev = by_device[c.device];
      SatInc(&dev.first, c.duration);
      ++dev.second;
    }
    const double share =
        wall > 0 ? static_cast<double>(total) / static_cast<double>(wall) : 0;
    std::vector<std::string> reports;
    std::vector<std::string> lines = {absl::StrFormat(
        "memcpy: %s per step in %d copies, %s of the step wall time (%s)%s",
        FormatTime(static_cast<int64_t>(total / steps)),
        static_cast<int64_t>(copies.size() / steps), Pct(total, wall),
        FormatTime(static_cast<int64_t>(wall / steps)),
        share >= ctx.Option("threshold") ? "" : ", below the threshold")};
    for (const auto& [dev, t] : by_device) {
      lines.push_back(
          absl::StrFormat("  %s: %s per step in %d copies", dev,
                          FormatTime(static_cast<int64_t>(t.first / steps)),
                          static_cast<int64_t>(t.second / steps)));
    }
    reports.push_back(absl::StrJoin(lines, "\n"));
    std::stable_sort(
        copies.begin(), copies.end(),
        [](const Copy& a, const Copy& b) { return a.duration > b.duration; });
    lines = {"largest copies:"};
    for (size_t i = 0;
         i < copies.size() && i < static_cast<size_t>(ctx.IntOption("top"));
         ++i) {
      const Copy& c = copies[i];
      lines.push_back(absl::StrFormat("  %s on %s, step %d: %s", c.node->name,
                                      c.device, c.step,
                                      FormatTime(c.duration)));
    }
    reports.push_back(absl::StrJoin(lines, "\n"));
    if (share >= ctx.Option("threshold")) {
      reports.push_back(absl::StrCat(
          "Host-device copies take ", Pct(total, wall),
          " of the step. Try: keep tensors on the device between steps (no "
          "feed_dict or .numpy() round trips), prefetch input to the device "
          "(prefetch_to_device, pinned host memory) and merge small copies."));
    }
    return reports;
  }
};

// ---------------------------------------------------------------------------

// Ops that live on the host by design: runtime plumbing, constants,
// variables and the input pipeline.
bool HostByDesign(const std::string& op) {
  static const std::set<std::string>* const kOps =
      new std::set<std::string>{"_Send",
                                "_Recv",
                                "_HostSend",
                                "_HostRecv",
                                "_Arg",
                                "_Retval",
                                "_SOURCE",
                                "_SINK",
                                "NoOp",
                                "Const",
                                "Placeholder",
                                "PlaceholderWithDefault",
                                "VariableV2",
                                "Variable",
                                "VarHandleOp",
                                "VarIsInitializedOp",
                                "SaveV2",
                                "RestoreV2",
                                "MergeV2Checkpoints",
                                "ShardedFilename",
                                "StringJoin"};
  if (kOps->count(op) > 0 || absl::StrContains(op, "Dataset") ||
      absl::StrContains(op, "Iterator") || absl::StrContains(op, "Summary")) {
    return true;
  }
  // PyTorch traces: runtime calls, the step and data-loading ranges, the
  // optimizer's Python-level step.
  for (const char* prefix :
       {"cuda", "hip", "ProfilerStep", "enumerate(DataLoader)", "Optimizer."}) {
    if (absl::StartsWith(op, prefix)) return true;
  }
  return false;
}

// The names of the nodes that have accelerator time themselves or in a node
// below them in the name scopes (views of the model's node names).
absl::flat_hash_set<std::string_view> LaunchedAcceleratorWork(
    const Model& model) {
  absl::flat_hash_set<std::string_view> names;
  for (const auto& g : model.nodes()) {
    bool accel = false;
    for (const StepExec& e : g->execs) accel |= e.accelerator_micros > 0;
    if (!accel) continue;
    const std::string_view name = g->name;
    names.insert(name);
    for (size_t slash = name.rfind('/');
         slash != std::string_view::npos && slash > 0;
         slash = name.rfind('/', slash - 1)) {
      if (!names.insert(name.substr(0, slash)).second) break;
    }
  }
  return names;
}

class CpuFallbackChecker : public Checker {
 public:
  std::string name() const override { return "CpuFallbackChecker"; }
  std::string help() const override {
    return "Ops that ran on the CPU in a run that has an accelerator, ranked "
           "by time (placement problems).";
  }
  std::string needs() const override {
    return "step stats of a run with an accelerator";
  }
  std::vector<CheckerOption> options() const override {
    return {{"threshold", "0.05", 0, 1, false,
             "CPU ops taking at least this share of all op time are a "
             "problem"},
            {"top", "5", 1, 1000, true, "ops listed"}};
  }

  std::vector<std::string> Run(const CheckerContext& ctx) const override {
    if (!NeedSteps(ctx, name())) return {};
    const Model& model = ctx.model();
    bool accelerated = false;
    int64_t total = 0;
    struct Op {
      const GraphNode* node;
      int64_t micros;
    };
    std::vector<Op> on_cpu;
    // A host op that launched accelerator work, itself or through the ops
    // nested in it (PyTorch ops run on the host and launch kernels), is not
    // on the CPU in the sense that matters here.
    const absl::flat_hash_set<std::string_view> launched =
        LaunchedAcceleratorWork(model);
    for (const GraphNode* g : model.NodesByName()) {
      const NodeStats s = g->Stats(-1);
      SatInc(&total, s.exec_micros);
      if (IsPlacedOnAccelerator(g->canonical_device()) ||
          s.accelerator_exec_micros > 0) {
        accelerated = true;
      }
      if (s.exec_micros > 0 && IsPlacedOnCpu(g->canonical_device()) &&
          !IsPlacedOnAccelerator(g->canonical_device()) &&
          !HostByDesign(g->op) && !launched.contains(g->name)) {
        on_cpu.push_back(Op{g, s.exec_micros});
      }
    }
    if (!accelerated) {
      ctx.Note(absl::StrCat("no accelerator in this profile: ", name(),
                            " looks for CPU ops in accelerator runs"));
      return {};
    }
    // In PyTorch every op runs on the host and launches its kernels; where
    // its tensors live is not in the trace, so placement cannot be judged.
    for (const GraphNode* g : model.NodesByName()) {
      if (absl::StartsWith(g->op, "aten::")) {
        ctx.Note(absl::StrCat(
            name(),
            " judges TensorFlow placement; a PyTorch trace does not say "
            "which device an op's tensors were on"));
        return {};
      }
    }
    std::stable_sort(
        on_cpu.begin(), on_cpu.end(),
        [](const Op& a, const Op& b) { return a.micros > b.micros; });
    int64_t cpu = 0;
    for (const Op& o : on_cpu) SatInc(&cpu, o.micros);
    const double share =
        total > 0 ? static_cast<double>(cpu) / static_cast<double>(total) : 0;
    if (on_cpu.empty()) {
      return {
          "no op ran on the CPU in this accelerator run (besides "
          "host-side plumbing: sends, receives, constants, variables, "
          "input pipeline)"};
    }
    std::vector<std::string> lines = {absl::StrFormat(
        "%d ops ran on the CPU in a run with an accelerator: %s per step, %s "
        "of all op time%s",
        on_cpu.size(), FormatTime(cpu), Pct(cpu, total),
        share >= ctx.Option("threshold") ? "" : ", below the threshold")};
    for (size_t i = 0;
         i < on_cpu.size() && i < static_cast<size_t>(ctx.IntOption("top"));
         ++i) {
      const Op& o = on_cpu[i];
      lines.push_back(absl::StrFormat("  %s (%s) on %s: %s (%s)", o.node->name,
                                      o.node->op, o.node->canonical_device(),
                                      FormatTime(o.micros),
                                      Pct(o.micros, total)));
    }
    std::vector<std::string> reports = {absl::StrJoin(lines, "\n")};
    if (share >= ctx.Option("threshold")) {
      reports.push_back(
          "Check their placement: log_device_placement tells why an op stayed "
          "on the CPU (no GPU kernel for its dtype, e.g. int32 or string ops, "
          "an explicit tf.device, soft placement). Move them to the "
          "accelerator, or out of the step (preprocessing into the input "
          "pipeline).");
    }
    return reports;
  }
};

// ---------------------------------------------------------------------------

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

// Kernel intervals per (step, accelerator), and host ops per step.
struct KernelTimes {
  using Key = std::pair<int64_t, std::string>;
  struct HostOp {
    const GraphNode* node;
    int64_t start, end;
  };
  std::map<Key, std::vector<TimeInterval>> kernels;
  std::map<int64_t, std::vector<HostOp>> host;
};

// Kernel times from the stream:all pseudo device when the accelerator has
// it, else from its single streams.
KernelTimes CollectKernelTimes(const Model& model) {
  KernelTimes out;
  std::map<KernelTimes::Key, std::vector<TimeInterval>> streams;
  ExecDetail d;
  for (const auto& node : model.nodes()) {
    for (const StepExec& e : node->execs) {
      model.DetailInto(e, &d);
      for (const DeviceTimes& dt : d.accelerator_execs) {
        auto& v = out.kernels[{e.step, AcceleratorOf(dt.device)}];
        v.insert(v.end(), dt.times.begin(), dt.times.end());
      }
      for (const DeviceTimes& dt : d.other_execs) {
        if (KindOfDevice(dt.device) != DeviceKind::kStream) continue;
        auto& v = streams[{e.step, AcceleratorOf(dt.device)}];
        v.insert(v.end(), dt.times.begin(), dt.times.end());
      }
      for (const DeviceTimes& dt : d.cpu_execs) {
        for (const TimeInterval& t : dt.times) {
          out.host[e.step].push_back(KernelTimes::HostOp{
              node.get(), t.start_micros, t.start_micros + t.duration_micros});
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
  int64_t start, end;
};

// Per accelerator: its kernel span and idle time, summed over steps.
struct Busy {
  int64_t span = 0, idle = 0, gaps = 0, steps = 0;
};

// The gaps of at least `min_gap` between kernels, and each accelerator's
// busy figures.
void FindIdleGaps(KernelTimes* times, int64_t min_gap,
                  std::vector<IdleGap>* gaps,
                  std::map<std::string, Busy>* busy) {
  for (auto& [key, v] : times->kernels) {
    std::sort(v.begin(), v.end(),
              [](const TimeInterval& a, const TimeInterval& b) {
                return a.start_micros < b.start_micros;
              });
    Busy& b = (*busy)[key.second];
    ++b.steps;
    int64_t first = v.front().start_micros, covered_to = first;
    for (const TimeInterval& t : v) {
      const int64_t end = t.start_micros + t.duration_micros;
      if (t.start_micros > covered_to) {
        const int64_t gap = t.start_micros - covered_to;
        if (gap >= min_gap) {
          gaps->push_back(
              IdleGap{key.first, key.second, covered_to, t.start_micros});
          SatInc(&b.idle, gap);
          ++b.gaps;
        }
      }
      covered_to = std::max(covered_to, end);
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
  std::stable_sort(
      ranked.begin(), ranked.end(),
      [](const auto& a, const auto& b) { return a.second > b.second; });
  std::vector<std::string> ops;
  for (const auto& [node, o] : ranked) {
    (IsInputOp(*node) ? *input_overlap : *other_overlap) += o;
    if (ops.size() < 3) {
      ops.push_back(
          absl::StrFormat("%s (%s) %s", node->name, node->op, FormatTime(o)));
    }
  }
  const auto span = spans.find(g.step);
  const int64_t offset = span == spans.end() ? 0 : g.start - span->second.start;
  return absl::StrFormat(
      "  %s on %s, step %d at +%s: %s", FormatTime(g.end - g.start), g.device,
      g.step, FormatTime(offset),
      ops.empty() ? "nothing ran on the host"
                  : "on the host meanwhile: " + absl::StrJoin(ops, ", "));
}

class AcceleratorIdleChecker : public Checker {
 public:
  std::string name() const override { return "AcceleratorIdleChecker"; }
  std::string help() const override {
    return "Gaps inside a step when no kernel runs on an accelerator, the "
           "largest ones and the host ops that ran during them.";
  }
  std::string needs() const override {
    return "RunMetadata step stats with GPU stream activity";
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
                            " needs step stats with GPU stream activity"));
      return {};
    }
    const int64_t min_gap = ctx.IntOption("min_gap");
    std::vector<IdleGap> gaps;
    std::map<std::string, Busy> busy;
    FindIdleGaps(&times, min_gap, &gaps, &busy);
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
          "at least %s)%s",
          dev, Pct(b.idle, b.span), FormatTime(b.idle / b.steps),
          FormatTime(b.span / b.steps), b.gaps, FormatTime(min_gap),
          share >= ctx.Option("threshold") ? "" : ", below the threshold"));
    }
    reports.push_back(absl::StrJoin(lines, "\n"));
    if (gaps.empty()) return reports;

    std::stable_sort(gaps.begin(), gaps.end(),
                     [](const IdleGap& a, const IdleGap& b) {
                       return a.end - a.start > b.end - b.start;
                     });
    const std::map<int64_t, Span> spans = StepSpans(model);
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
      reports.push_back(
          "The accelerator waits for the host between kernels (launch-bound "
          "or host work in the step). Fuse small ops (XLA), use larger "
          "batches, and avoid host round trips inside the step.");
    }
    return reports;
  }
};

// ---------------------------------------------------------------------------

int64_t Median(std::vector<int64_t> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

class StepTimeChecker : public Checker {
 public:
  std::string name() const override { return "StepTimeChecker"; }
  std::string help() const override {
    return "Steps whose time is far from the median, and the nodes that "
           "explain the difference.";
  }
  std::string needs() const override { return "step stats of 3 or more steps"; }
  std::vector<CheckerOption> options() const override {
    return {{"threshold", "0.25", 0, 100, false,
             "steps this far from the median (a share of it) are reported"},
            {"top", "3", 1, 1000, true, "steps, and nodes per step, listed"}};
  }

  std::vector<std::string> Run(const CheckerContext& ctx) const override {
    if (!NeedSteps(ctx, name())) return {};
    const Model& model = ctx.model();
    const std::vector<int64_t> steps(model.steps().begin(),
                                     model.steps().end());
    if (steps.size() < 3) {
      ctx.Note(absl::StrCat(name(), " needs 3 or more steps (this profile has ",
                            steps.size(), ")"));
      return {};
    }
    // Step time: the wall span, or the summed op time when the profile has
    // no timestamps.
    const std::map<int64_t, Span> spans = StepSpans(model);
    std::map<int64_t, int64_t> time;
    bool wall = !spans.empty();
    for (int64_t s : steps) {
      auto it = spans.find(s);
      time[s] = it == spans.end() ? 0 : it->second.length();
    }
    if (!wall) {
      for (const auto& node : model.nodes()) {
        for (const StepExec& e : node->execs)
          SatInc(&time[e.step], e.exec_micros());
      }
    }
    std::vector<int64_t> values;
    for (int64_t s : steps) values.push_back(time[s]);
    const int64_t median = Median(values);
    auto [fast, slow] = std::minmax_element(
        steps.begin(), steps.end(),
        [&](int64_t a, int64_t b) { return time[a] < time[b]; });
    std::vector<std::string> reports = {absl::StrFormat(
        "%d steps (%s): median %s, fastest %s (step %d), slowest %s (step %d)",
        steps.size(), wall ? "wall time" : "summed op time", FormatTime(median),
        FormatTime(time[*fast]), *fast, FormatTime(time[*slow]), *slow)};
    const double threshold = ctx.Option("threshold");
    std::vector<int64_t> outliers;
    for (int64_t s : steps) {
      if (std::abs(static_cast<double>(time[s] - median)) >
          threshold * static_cast<double>(median)) {
        outliers.push_back(s);
      }
    }
    if (outliers.empty()) {
      reports.push_back(absl::StrFormat(
          "no step is more than %.0f%% away from the median", 100 * threshold));
      return reports;
    }
    std::stable_sort(
        outliers.begin(), outliers.end(), [&](int64_t a, int64_t b) {
          return std::abs(time[a] - median) > std::abs(time[b] - median);
        });
    const size_t top = static_cast<size_t>(ctx.IntOption("top"));
    if (outliers.size() > top) outliers.resize(top);
    // Each node's time per step (0 where it did not run) and its median.
    std::vector<std::string> lines;
    for (int64_t s : outliers) {
      struct Diff {
        const GraphNode* node;
        int64_t here, usual;
      };
      std::vector<Diff> diffs;
      for (const auto& node : model.nodes()) {
        if (node->execs.empty()) continue;
        std::vector<int64_t> per_step(steps.size(), 0);
        int64_t here = 0;
        for (const StepExec& e : node->execs) {
          auto it = std::lower_bound(steps.begin(), steps.end(), e.step);
          if (it == steps.end() || *it != e.step) continue;
          per_step[it - steps.begin()] = e.exec_micros();
          if (e.step == s) here = e.exec_micros();
        }
        const int64_t usual = Median(per_step);
        if (here != usual) diffs.push_back(Diff{node.get(), here, usual});
      }
      std::stable_sort(
          diffs.begin(), diffs.end(), [](const Diff& a, const Diff& b) {
            return std::abs(a.here - a.usual) > std::abs(b.here - b.usual);
          });
      std::vector<std::string> nodes;
      for (size_t i = 0; i < diffs.size() && i < top; ++i) {
        const Diff& d = diffs[i];
        nodes.push_back(
            absl::StrFormat("%s %s%s (%s here, %s usually)", d.node->name,
                            d.here >= d.usual ? "+" : "-",
                            FormatTime(std::abs(d.here - d.usual)),
                            FormatTime(d.here), FormatTime(d.usual)));
      }
      lines.push_back(absl::StrFormat(
          "step %d: %s, %s%s than the median%s%s", s, FormatTime(time[s]),
          Pct(std::abs(time[s] - median), median),
          time[s] > median ? " slower" : " faster",
          nodes.empty() ? "" : "; nodes that differ most: ",
          absl::StrJoin(nodes, ", ")));
    }
    reports.push_back(absl::StrJoin(lines, "\n"));
    reports.push_back(
        "Uneven steps: look for work that runs only in some steps (summaries, "
        "checkpoints, evaluation, host syncs), input stalls, or warm-up "
        "(first steps compile and allocate); profile steps past warm-up.");
    return reports;
  }
};

// ---------------------------------------------------------------------------

// Op types that do arithmetic, so they should have FLOP counts.
bool ComputeOp(const std::string& op) {
  static const std::set<std::string>* const kOps =
      new std::set<std::string>{"MatMul",
                                "BatchMatMul",
                                "BatchMatMulV2",
                                "BatchMatMulV3",
                                "Conv2D",
                                "Conv2DBackpropInput",
                                "Conv2DBackpropFilter",
                                "Conv3D",
                                "Conv3DBackpropInputV2",
                                "Conv3DBackpropFilterV2",
                                "DepthwiseConv2dNative",
                                "DepthwiseConv2dNativeBackpropInput",
                                "DepthwiseConv2dNativeBackpropFilter",
                                "BiasAdd",
                                "BiasAddGrad",
                                "Add",
                                "AddV2",
                                "AddN",
                                "Sub",
                                "Mul",
                                "RealDiv",
                                "Div",
                                "Maximum",
                                "Minimum",
                                "Pow",
                                "Square",
                                "Sqrt",
                                "Rsqrt",
                                "RsqrtGrad",
                                "Reciprocal",
                                "Exp",
                                "Log",
                                "Neg",
                                "Tanh",
                                "TanhGrad",
                                "Sigmoid",
                                "SigmoidGrad",
                                "Relu",
                                "ReluGrad",
                                "Relu6",
                                "Elu",
                                "Softmax",
                                "LogSoftmax",
                                "SoftmaxCrossEntropyWithLogits",
                                "SparseSoftmaxCrossEntropyWithLogits",
                                "Sum",
                                "Mean",
                                "Prod",
                                "Max",
                                "Min",
                                "ArgMax",
                                "ArgMin",
                                "AvgPool",
                                "AvgPoolGrad",
                                "MaxPool",
                                "MaxPoolGrad",
                                "FusedBatchNorm",
                                "FusedBatchNormV2",
                                "FusedBatchNormV3",
                                "FusedBatchNormGrad",
                                "FusedBatchNormGradV3",
                                "L2Loss",
                                "SquaredDifference",
                                "Einsum",
                                "Cumsum",
                                "Dilation2D",
                                "LRN"};
  if (kOps->count(op)) return true;
  // PyTorch's operators, as traces name them.
  static const char* const kTorch[] = {
      "aten::mm",     "aten::addmm", "aten::bmm",        "aten::matmul",
      "aten::linear", "aten::conv",  "aten::cudnn_conv", "aten::convolution"};
  for (const char* t : kTorch) {
    if (absl::StartsWith(op, t)) return true;
  }
  return false;
}

class FlopsCoverageChecker : public Checker {
 public:
  std::string name() const override { return "FlopsCoverageChecker"; }
  std::string help() const override {
    return "Arithmetic op types with substantial time but no float_ops, so "
           "FLOP totals are understated.";
  }
  std::string needs() const override {
    return "step stats; float_ops from an op log";
  }
  std::vector<CheckerOption> options() const override {
    return {{"threshold", "0.01", 0, 1, false,
             "op types with at least this share of all op time are checked"},
            {"top", "5", 1, 1000, true, "op types listed"}};
  }

  std::vector<std::string> Run(const CheckerContext& ctx) const override {
    if (!NeedSteps(ctx, name())) return {};
    struct Type {
      int64_t micros = 0, nodes = 0, without = 0, without_micros = 0;
    };
    std::map<std::string, Type> types;
    int64_t total = 0;
    bool any_flops = false;
    for (const GraphNode* g : ctx.model().NodesByName()) {
      const NodeStats s = g->Stats(-1);
      SatInc(&total, s.exec_micros);
      if (g->float_ops > 0) any_flops = true;
      if (!ComputeOp(g->op)) continue;
      Type& t = types[g->op];
      SatInc(&t.micros, s.exec_micros);
      ++t.nodes;
      if (g->float_ops == 0) {
        ++t.without;
        SatInc(&t.without_micros, s.exec_micros);
      }
    }
    std::vector<std::pair<std::string, Type>> missing;
    for (const auto& [op, t] : types) {
      if (t.without > 0 &&
          static_cast<double>(t.micros) >=
              ctx.Option("threshold") * static_cast<double>(total) &&
          t.without_micros > 0) {
        missing.emplace_back(op, t);
      }
    }
    std::stable_sort(missing.begin(), missing.end(),
                     [](const auto& a, const auto& b) {
                       return a.second.without_micros > b.second.without_micros;
                     });
    std::vector<std::string> reports;
    if (!any_flops) {
      reports.push_back(
          "no node has float_ops: FLOP totals are 0. TensorFlow: the op log "
          "(--op_log_path) carries them, written with tf.profiler's "
          "float_operation statistics from a graph with fully defined "
          "shapes; PyTorch: profile with with_flops=True.");
    }
    if (missing.empty()) {
      if (any_flops) {
        reports.push_back(absl::StrFormat(
            "every arithmetic op type with at least %.1f%% of the time has "
            "float_ops",
            100 * ctx.Option("threshold")));
      }
      return reports;
    }
    int64_t uncovered = 0;
    for (const auto& [op, t] : missing) SatInc(&uncovered, t.without_micros);
    std::vector<std::string> lines = {absl::StrFormat(
        "FLOP totals miss arithmetic ops taking %s of the op time (%s):",
        Pct(uncovered, total), FormatTime(uncovered))};
    for (size_t i = 0;
         i < missing.size() && i < static_cast<size_t>(ctx.IntOption("top"));
         ++i) {
      const auto& [op, t] = missing[i];
      lines.push_back(absl::StrFormat(
          "  %s: %d of %d nodes without float_ops, %s (%s)", op, t.without,
          t.nodes, FormatTime(t.without_micros), Pct(t.without_micros, total)));
    }
    reports.push_back(absl::StrJoin(lines, "\n"));
    if (any_flops) {
      reports.push_back(
          "Nodes without float_ops usually have shapes that were unknown when "
          "the op log was written (unknown batch size) or op types without a "
          "registered FLOP count: fix the shapes or register the statistics, "
          "then write the op log again.");
    }
    return reports;
  }
};

// ---------------------------------------------------------------------------

class MemoryChecker : public Checker {
 public:
  std::string name() const override { return "MemoryChecker"; }
  std::string help() const override {
    return "The nodes holding the most peak and residual memory, and each "
           "accelerator allocator's peak.";
  }
  std::string needs() const override {
    return "step stats with memory (RunMetadata memory, or a ProfileProto "
           "with memory records)";
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
    if (nodes.empty()) {
      ctx.Note(absl::StrCat("no memory stats: ", name(),
                            " needs RunMetadata with memory tracking"));
      return {};
    }
    const size_t top = static_cast<size_t>(ctx.IntOption("top"));
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
          "%s (%s over all nodes):", title, FormatMemory(total))};
      for (size_t i = 0; i < nodes.size() && i < top; ++i) {
        const Node& n = nodes[i];
        if (n.s.*field <= 0) break;
        lines.push_back(absl::StrFormat(
            "  %s (%s%s%s): %s (%s), peak %s, residual %s", n.node->name,
            n.node->op, n.node->canonical_device().empty() ? "" : ", ",
            n.node->canonical_device(), FormatMemory(n.s.*field),
            Pct(n.s.*field, total), FormatMemory(n.s.peak_bytes),
            FormatMemory(n.s.residual_bytes)));
      }
      return absl::StrJoin(lines, "\n");
    };
    std::vector<std::string> reports = {
        list("largest peak memory", &NodeStats::peak_bytes, peak_total),
        list("largest residual memory (still allocated after the op ran)",
             &NodeStats::residual_bytes, residual_total)};
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
      if (a.first <= 0) continue;
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

std::vector<const Checker*> ExtraCheckers() {
  static const std::vector<const Checker*>* const checkers =
      new std::vector<const Checker*>{
          new HostDeviceCopyChecker(),  new CpuFallbackChecker(),
          new AcceleratorIdleChecker(), new StepTimeChecker(),
          new FlopsCoverageChecker(),   new MemoryChecker()};
  return *checkers;
}

}  // namespace tfprof
