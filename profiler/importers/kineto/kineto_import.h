// The Kineto importer's class, defined in kineto.cc: one file's events read,
// nested per thread and turned into executions. Internal to the package.
#ifndef TFPROF_PROFILER_IMPORTERS_KINETO_KINETO_IMPORT_H_
#define TFPROF_PROFILER_IMPORTERS_KINETO_KINETO_IMPORT_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/string_view.h"
#include "profiler/importers/common/steps.h"
#include "profiler/importers/kineto/kineto.h"
#include "profiler/importers/kineto/kineto_args.h"
#include "profiler/importers/kineto/kineto_collectives.h"
#include "profiler/importers/kineto/kineto_events.h"
#include "profiler/importers/kineto/torch_flops.h"
#include "profiler/importers/kineto/torch_structure.h"

namespace tfprof {
namespace trace_internal {

// One Kineto file's import: the events that matter are collected in one pass
// over the JSON, then nested per thread, then turned into executions.
class KinetoImport {
 public:
  KinetoImport(const std::string& file, int64_t file_index,
               TraceBuilder* builder)
      : file_(file),
        file_index_(file_index),
        builder_(builder),
        steps_(file_index),
        tags_(builder->activity()) {}

  absl::Status Run(JsonReader* reader) {
    if (!reader->ForEachEvent(
            [&](JsonReader::Value& ev) { return OnEvent(reader, ev); },
            /*last_pass=*/true,
            [&](absl::string_view key, JsonReader::Value& value) {
              return ReadHeaderField(reader, key, value, &header_);
            })) {
      return JsonReadError(file_);
    }
    // The rest needs no JSON: free the file and the parser's index.
    reader->Close();
    legacy_ = IsLegacyAutogradTrace();
    FindSteps();
    Nest();
    AccountBackwardWaits();
    CountNestedFlops();
    AddCpuExecs();
    AddGpuExecs();
    AddGpuAnnotations();
    AddHeader();
    NoteLegacyTrace();
    AddNotes();
    return absl::OkStatus();
  }

 private:
  // --- Collecting (one call per trace event, after the header's fields).
  bool OnEvent(JsonReader* reader, JsonReader::Value& ev);
  // The kind of an event from its phase and category; false (after counting
  // why) when it is not mapped.
  bool Classify(absl::string_view ph, absl::string_view category,
                absl::string_view name, Event* e);
  // Keeps what the later passes need of the event's args.
  void KeepArgs(int32_t index, Event* e);
  // Keeps a gpu_user_annotation range (a record_function or ProfilerStep
  // range as a GPU stream saw it) for AddGpuAnnotations().
  void KeepGpuAnnotation(absl::string_view name);
  // Records the kept ranges in the activity, each in the step of the CPU
  // range it mirrors (same External id), else the one its name says
  // (ProfilerStep#N), else the one its start falls in.
  void AddGpuAnnotations();
  // A ProfilerStep#N range's span, in nanoseconds.
  void KeepStepSpan(const Event& e, absl::string_view name);
  // The event's start and duration in nanoseconds (as read, not rounded to
  // microseconds); {start, 0} for an instant event.
  std::pair<int64_t, int64_t> NanoTimes(const Event& e) const;

  // --- Steps, nesting, executions.
  void FindSteps();
  void Nest();
  void MarkMergedRecords(const std::vector<int32_t>& order);
  void NestCpu(int32_t i);
  // The ProfilerStep range of the step thread whose span holds `t_ns`, or -1.
  int32_t StepSpanAt(int64_t t_ns) const;
  // A top-level range of an autograd thread inside ProfilerStep `step`: its
  // path goes on under "<step>/backward".
  void Adopt(int32_t i, int32_t step);
  // The step thread's wait in each ProfilerStep with adopted ranges: taken
  // out of the step's own time, given to its "backward" node.
  void AccountBackwardWaits();
  void NestMemory(int32_t i);
  // The extended rule: a computation recorded by nested records (autocast's
  // outer and inner aten::conv2d, conv2d over cudnn_convolution, linear over
  // addmm) counts once, on the innermost.
  void CountNestedFlops();
  void AddCpuExecs();
  // Float ops of the nodes whose records have any, with their costs.
  void AddFlops();
  void AddMemory(const Event& e, TraceBuilder::ExecRef exec);
  void AddGpuExecs();
  // Records GPU event `g` as accelerator work of `node` (-1: not known),
  // with the float ops `w` has, launched by runtime call `call` (-1: none
  // known).
  void AddWork(const Event& g, const std::string& stream, int32_t node,
               int64_t step, int32_t call, DeviceWork w);
  // The float ops a record counts (the extended rule), or null.
  const TorchOpFlops* CountedFlops(int32_t event) const;
  // The CPU event that launched GPU event `g` (`call`: its runtime call,
  // LaunchCall(g)), or -1.
  int32_t Launcher(const Event& g, int32_t call);
  // The runtime call GPU event `g`'s correlation id names, or -1.
  int32_t LaunchCall(const Event& g) const;
  void AddHeader();
  void AddNotes();

  // --- PyTorch's legacy autograd profiler (torch.autograd.profiler without
  // Kineto, e.g. Debian's torch 1.13), at the end of the file.
  // Whether the trace is its export: CPU ops without a category on its
  // "CPU functions" process (a bare array, no ProfilerStep ranges).
  bool IsLegacyAutogradTrace() const;
  // PyTorch's nesting rule (EventList's tree, what key_averages() counts,
  // for Kineto and legacy traces alike): an op that ends after an open one
  // is not nested in it; pops such open ops off `stack` before `e`,
  // counting them in *popped (may be null).
  void PopOverhangs(const Event& e, std::vector<int32_t>* stack,
                    int64_t* popped);
  // Pops the events of `stack` that ended by the start of `e` (to the
  // nanosecond: an op that ends in the microsecond its child starts in is
  // still open).
  void PopEndedBy(const Event& e, std::vector<int32_t>* stack);
  void NoteLegacyTrace();

  const std::string& file_;
  const int64_t file_index_;  // among the files of one load
  TraceBuilder* builder_;
  StringTable strings_;
  std::vector<Event> events_;
  std::vector<CpuArgs> cpu_args_;
  std::vector<MemoryArgs> memory_args_;
  std::vector<GpuArgs> gpu_args_;
  struct GpuAnnotation {
    int64_t start_ns = 0, duration_ns = 0, device = 0;
    int32_t name = 0, stream = 0;
    IdKey external_id;
  };
  std::vector<GpuAnnotation> annotations_;
  absl::flat_hash_map<std::string, int32_t> threads_;
  std::vector<std::string> thread_names_;  // "<pid>/<tid>" by index
  // The launching runtime call of a correlation id, the op of an External
  // id (the first CPU event that has it).
  absl::flat_hash_map<IdKey, int32_t> by_correlation_;
  absl::flat_hash_map<IdKey, int32_t> by_external_id_;
  EventFields f_;
  ShapeArgs shapes_;
  KinetoHeader header_;
  StepStarts steps_;
  KinetoCollectiveTags tags_;
  // The thread of the ProfilerStep ranges, its ProfilerStep events by start,
  // the autograd engine's threads (by thread index), the ranges adopted
  // under a step (step event, range event), and the waits found.
  int32_t step_thread_ = -1;
  std::vector<int32_t> step_spans_;
  std::vector<bool> autograd_thread_;
  std::vector<std::pair<int32_t, int32_t>> adopted_;
  struct Wait {
    int64_t step;
    int32_t node;
    int64_t start_ns, exclusive_ns;
  };
  std::vector<Wait> waits_;
  // The sweep's open CPU events and Python frames on the current thread.
  std::vector<int32_t> cpu_stack_, py_stack_;
  int64_t partial_ = 0, orphan_memory_ = 0, call_stacks_ = 0, too_deep_ = 0;
  int64_t merged_ = 0;  // records merged into their parent (kMerged)
  int64_t unlinked_ = 0, by_external_ = 0;
  // A trace of PyTorch's legacy autograd profiler (no Kineto): CPU ops on
  // its "CPU functions" process, nested by its own rule.
  bool legacy_ = false;
};

}  // namespace trace_internal
}  // namespace tfprof

#endif  // TFPROF_PROFILER_IMPORTERS_KINETO_KINETO_IMPORT_H_
