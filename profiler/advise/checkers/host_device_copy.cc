// HostDeviceCopyChecker: Time spent copying between host and device (memcpy),
// as a share of the step, and the largest copies.
#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
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

// `what` is lower case.
bool ContainsNoCase(std::string_view s, const char* what) {
  return absl::AsciiStrToLower(std::string(s)).find(what) != std::string::npos;
}

// A copy or set between host and device, or on a device.
struct Copy {
  const GraphNode* node;  // null: a trace copy no node launched
  std::string name;
  std::string device;
  int64_t step, start_ns, duration_ns;
  bool set;  // a memset (traces keep them apart)
};

// A trace's copies and sets (its activity record), else the copies on
// the memcpy lanes of the step stats and those of nodes named like a copy;
// *trace says which.
std::vector<Copy> CollectCopies(const Model& model, bool* trace_out) {
  std::vector<Copy> copies;
  const Activity& activity = model.activity();
  // A trace (PyTorch, XSpace): its copies and sets are accelerator work of
  // their own kind (the steps table's memcpy column). TensorFlow's step
  // stats keep them on memcpy lanes, read below as tfprof reads them.
  const bool trace = ReadsTraceWork(model);
  if (trace) {
    for (const DeviceWork& w : activity.work()) {
      if (w.kind == WorkKind::kKernel) continue;
      const GraphNode* node =
          w.op != 0 ? model.Find(activity.String(w.op)) : nullptr;
      // Nanoseconds as recorded: most sets and many copies last under a
      // microsecond.
      copies.push_back(Copy{node, std::string(activity.String(w.name)),
                            std::string(activity.String(w.stream)), w.step,
                            w.start_ns, w.duration_ns,
                            w.kind == WorkKind::kMemset});
    }
  }
  ExecDetail d;
  // Step stats: memcpy lanes, and nodes named like a copy.
  for (const auto& node : model.nodes()) {
    if (trace) break;
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
            copies.push_back(Copy{node.get(), node->name,
                                  std::string(dt.device), e.step,
                                  SatMul(t.start_micros, 1000),
                                  SatMul(t.duration_micros, 1000), false});
          }
        }
      }
    }
  }
  *trace_out = trace;
  return copies;
}

class HostDeviceCopyChecker : public Checker {
 public:
  std::string name() const override { return "HostDeviceCopyChecker"; }
  bool by_default(ProfileSource source) const override {
    return source != ProfileSource::kTensorFlow;
  }
  std::string help() const override {
    return "Time spent copying between host and device (memcpy), as a share "
           "of the step, and the largest copies.";
  }
  std::string needs() const override {
    return "RunMetadata step stats with GPU memcpy lanes, or a trace's "
           "memcpy and memset activity";
  }
  std::vector<CheckerOption> options() const override {
    return {{"threshold", "0.1", 0, 1, false,
             "copies taking at least this share of the step are a problem"},
            {"top", "3", 1, 1000, true, "largest copies listed"}};
  }

  std::vector<std::string> Run(const CheckerContext& ctx) const override {
    if (!NeedSteps(ctx, name())) return {};
    const Model& model = ctx.model();
    bool trace = false;
    std::vector<Copy> copies = CollectCopies(model, &trace);
    if (copies.empty()) {
      ctx.Note(absl::StrCat(
          "no memcpy activity in the step stats or trace: ", name(),
          " needs RunMetadata with GPU memcpy lanes (a ProfileProto does not "
          "keep them) or a trace with copies"));
      return {};
    }
    // Step stats are in microseconds, traces in nanoseconds: each shown in
    // its own unit.
    auto time = [trace](double ns) {
      const int64_t n = static_cast<int64_t>(ns);
      return trace ? FormatNanos(n) : FormatTime(n / 1000);
    };
    const std::map<int64_t, Span> spans = StepSpans(ctx);
    const double steps = static_cast<double>(model.steps().size());
    int64_t wall = 0;
    for (const auto& [step, s] : spans) SatInc(&wall, s.length());
    struct Sum {
      int64_t ns = 0, copies = 0, sets = 0;
    };
    // "N copies", "N sets" or "N copies and sets (C copies, S sets)", per
    // step.
    auto count = [steps](const Sum& s) {
      const auto per_step = [steps](int64_t n) {
        return static_cast<int64_t>(static_cast<double>(n) / steps);
      };
      if (s.sets == 0) return absl::StrCat(per_step(s.copies), " copies");
      if (s.copies == 0) return absl::StrCat(per_step(s.sets), " sets");
      return absl::StrCat(per_step(s.copies + s.sets), " copies and sets (",
                          per_step(s.copies), " copies, ", per_step(s.sets),
                          " sets)");
    };
    Sum all;
    std::map<std::string, Sum> by_device;
    for (const Copy& c : copies) {
      for (Sum* s : {&all, &by_device[c.device]}) {
        SatInc(&s->ns, c.duration_ns);
        ++(c.set ? s->sets : s->copies);
      }
    }
    const int64_t total = all.ns;
    const double share =
        wall > 0 ? static_cast<double>(total) / static_cast<double>(wall) : 0;
    std::vector<std::string> reports;
    std::vector<std::string> lines = {absl::StrFormat(
        "memcpy: %s per step in %s, %s of the step wall time (%s)%s",
        time(total / steps), count(all), Pct(total, wall), time(wall / steps),
        share >= ctx.Option("threshold") ? "" : ", below the threshold")};
    for (const auto& [dev, t] : by_device) {
      lines.push_back(absl::StrFormat("  %s: %s per step in %s", dev,
                                      time(t.ns / steps), count(t)));
    }
    reports.push_back(absl::StrJoin(lines, "\n"));
    std::stable_sort(copies.begin(), copies.end(),
                     [](const Copy& a, const Copy& b) {
                       return a.duration_ns > b.duration_ns;
                     });
    lines = {all.sets > 0 ? "largest copies and sets:" : "largest copies:"};
    for (size_t i = 0;
         i < copies.size() && i < static_cast<size_t>(ctx.IntOption("top"));
         ++i) {
      const Copy& c = copies[i];
      const std::string by = c.node != nullptr && c.node->name != c.name
                                 ? absl::StrCat(" (", c.node->name, ")")
                                 : std::string();
      lines.push_back(absl::StrFormat("  %s%s on %s, step %d: %s", c.name, by,
                                      c.device, c.step, time(c.duration_ns)));
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

}  // namespace

std::unique_ptr<Checker> NewHostDeviceCopyChecker() {
  return std::make_unique<HostDeviceCopyChecker>();
}

}  // namespace tfprof
